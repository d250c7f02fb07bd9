"""`stormbound diff LEFT RIGHT -d SPEC`: are two run outputs equivalent up to a dependence relation (DiffStream)?

Exits 0 when the outputs are equivalent, 1 when they are not, 2 on bad input
(one line on stderr naming the file/field), 3 on an internal error. Large
`same_key` inputs go to the Spark job when Spark is at hand.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from app.cli.common import UsageError, examples, print_result
from app.cli.options import add_limit_option, apply_limits, number
from app.core.words import more

if TYPE_CHECKING:
    from app.diff import DiffResult

SPARK_THRESHOLD_MB = 256  # same_key inputs bigger than this (both files together) go to Spark


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `diff` to the `stormbound` command line."""
    p = sub.add_parser(
        "diff", help="are two run outputs equivalent up to a dependence relation? (DiffStream)",
        description="Compare two streams (JSON Lines, JSON arrays, or event logs) and report the first "
                    "certain difference and the unmatched items. Exit 0 equivalent, 1 not equivalent.",
        epilog=examples("stormbound diff left.jsonl right.jsonl --dependence same_key:key --equality ignore:ts"))
    p.add_argument("left", nargs="?", help="left stream file (or the connected stream with --connected)")
    p.add_argument("right", nargs="?", help="right stream file")
    p.add_argument("--dependence", "-d", required=True, metavar="SPEC",
                   help="all | none | same_key:FIELD[,FIELD] | pairs:a-b,c-d | predicate:EXPR | JSON | @file.json")
    p.add_argument("--equality", "-e", metavar="SPEC", default=None,
                   help="structural (default) | ignore:F,.. | only:F,.. | set_of_split:SEP | predicate:EXPR | JSON")
    p.add_argument("--connected", action="store_true",
                   help="LEFT is one connected stream of {\"side\": \"left\"|\"right\", \"item\": ...} records")
    p.add_argument("--order", choices=["alternate", "left-first"], default="alternate",
                   help="how two files are connected into one stream (default: alternate)")
    p.add_argument("--spark", action="store_true", help="use the Spark job (same_key dependence only)")
    p.add_argument("--spark-threshold", type=number(float, 0, unit="MB"), default=SPARK_THRESHOLD_MB, metavar="MB",
                   help="use Spark for same_key when the files together exceed this many megabytes "
                        f"(default {SPARK_THRESHOLD_MB}; 0 = never automatically)")
    p.add_argument("--show", type=number(int, 0), default=10, metavar="N",
                   help="unmatched items shown per side (text output)")
    p.add_argument("--json", action="store_true", help="machine-readable output (one JSON document on stdout)")
    add_limit_option(p)
    p.set_defaults(func=cmd_diff, file_args=("left",))


def _is_json_lines(path: str) -> bool:
    from app.diff import looks_like_json_lines

    return os.path.isfile(path) and looks_like_json_lines(Path(path))


def _use_spark(args: argparse.Namespace, matcher_mode: str) -> bool:
    """Spark for same_key on JSON Lines files: asked for with --spark, or when the files are large."""
    if args.spark:
        if matcher_mode != "same_key":
            raise UsageError("diff: --spark needs same_key dependence (with a structural or set_of_split equality)")
        if args.connected:
            raise UsageError("diff: --spark reads two files, not a --connected stream")
        for path in (args.left, args.right):
            if not _is_json_lines(path):
                raise UsageError(f"{path}: --spark reads JSON Lines files (.jsonl, one item per line)", file=path)
        return True
    if matcher_mode != "same_key" or args.spark_threshold <= 0 or args.connected:
        return False
    if not (_is_json_lines(args.left) and _is_json_lines(args.right)):
        return False
    size = sum(os.path.getsize(f) for f in (args.left, args.right) if os.path.isfile(f))
    return bool(size > args.spark_threshold * 1024 * 1024)


def _run_spark_host(args: argparse.Namespace, master: str) -> DiffResult:
    """The Spark job in the Spark host process (the frozen app has no pyspark of its own)."""
    from app.diff import DiffResult
    from app.expr.limits import overrides
    from app.spark.client import HostError, SparkHost

    with SparkHost(master=master) as host:  # starting raises SparkUnavailable with the fix in one line
        try:  # the --limit values go along: the host process and its workers know only the defaults
            data = host.request("diff", left=str(Path(args.left).resolve()), right=str(Path(args.right).resolve()),
                                dependence=args.dependence, equality=args.equality, order=args.order,
                                limits=overrides())
        except HostError as err:
            raise UsageError(f"diff: {err}") from None
    return DiffResult.model_validate(data)


def _run_spark(args: argparse.Namespace) -> DiffResult:
    """The Spark job in this process (reusing an active session, never stopping one it did not start)."""
    import importlib.util

    from app.spark.diff_job import spark_same_key_diff
    from app.spark.session import SparkUnavailable, build_session, check_environment, is_connect_url

    master = os.environ.get("STORMBOUND_SPARK_MASTER", "local[*]")
    if is_connect_url(master):
        raise SparkUnavailable(f"the per-key diff job uses Spark's RDD API, which Spark Connect ({master}) "
                               f"does not offer; set STORMBOUND_SPARK_MASTER to a classic master such as local[*]")
    if importlib.util.find_spec("pyspark") is None:
        return _run_spark_host(args, master)
    check_environment(master)  # raises SparkUnavailable with the fix in one line
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    spark = active or build_session(master, "stormbound-diff")
    try:
        return spark_same_key_diff(spark, args.left, args.right, args.dependence, args.equality, args.order)
    finally:
        if active is None:
            spark.stop()


def cmd_diff(args: argparse.Namespace) -> int:
    """Compare LEFT and RIGHT (or one connected stream) and print the verdict."""
    from app.diff import DiffError, Matcher, interleave, read_connected, read_stream

    apply_limits(args)
    if not args.left:
        raise UsageError("diff: give LEFT and RIGHT files (or one file with --connected)")
    if args.connected and args.right:
        raise UsageError("diff: --connected takes a single file")
    if not args.connected and not args.right:
        raise UsageError("diff: missing RIGHT file (or use --connected for one interleaved file)")
    try:
        matcher = Matcher(args.dependence, args.equality)
        result = None
        if _use_spark(args, matcher.mode):
            from app.spark.session import SparkUnavailable

            try:
                result = _run_spark(args)
            except SparkUnavailable as err:
                if args.spark:
                    raise UsageError(f"diff: {err}") from None
                print(f"stormbound: Spark unavailable ({err}); comparing in this process", file=sys.stderr)
        if result is None:
            if args.connected:
                events = read_connected(args.left)
            else:
                events = interleave(read_stream(args.left), read_stream(args.right), args.order)
            matcher.feed(events)
            result = matcher.finish()
    except DiffError as err:
        raise UsageError(str(err)) from None
    if args.json:
        print_result("diff", result.model_dump(mode="json"))
    else:
        print(format_result(result, args.show))
    return 0 if result.equivalent else 1


def format_result(result: DiffResult, show: int = 10) -> str:
    """The human report: verdict, first difference, then up to `show` unmatched items per side."""
    from app.diff import short_json

    lines = [result.summary()]
    for name, items, total in (("left", result.unmatched_left, result.unmatched_left_count),
                               ("right", result.unmatched_right, result.unmatched_right_count)):
        if not total:
            continue
        when = "at the first difference" if result.stopped_early else "at the end"
        lines.append(f"unmatched {name} items {when}: {total}")
        for entry in items[:max(show, 0)]:
            lines.append(f"  {name} #{entry.index} (position {entry.position}): {short_json(entry.item)}")
        if total > min(show, len(items)):
            lines.append(f"  {more(total - min(show, len(items)))} (use --json for all)")
    return "\n".join(lines)

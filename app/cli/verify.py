"""`stormbound verify FILE`: decide whether a checked bolt's queue can grow without bound.

Answers for every checked bolt (bounded with its queue bound, no repeating run grows, a certified
lasso, none up to k, unknown).
Exit codes: 0 no counterexample up to k, no repeating growth or bounded, 1 certified counterexample for some bolt
(or, with --fail-on timeout, some spout not proven free of timeouts: docs/latency.md; with --fail-on grows, some
bolt with a certified lasso with worker deaths: docs/model.md 9.5),
2 bad input, 3 internal error, 4 unknown (time limit, or the solver gave up). On a terminal,
stderr shows a live status line while searching (-q silences it, --progress prints each bound).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from typing import TYPE_CHECKING

from app.cli.common import EXIT_BAD_INPUT, EXIT_FOUND, EXIT_OK, EXIT_UNKNOWN, UsageError, examples, print_result
from app.cli.console import StatusLine
from app.cli.options import add_failures_option, add_latency_options, add_storm_version_option, positive_seconds
from app.core.formats import limits
from app.core.storm.words import duration
from app.core.words import listed

if TYPE_CHECKING:
    from app.core.headroom import Headroom
    from app.core.results import Progress, VerifyResult
    from app.core.topology import Topology

log = logging.getLogger("stormbound.verify")
EXIT_BY_VERDICT = {"counterexample": EXIT_FOUND, "unbounded": EXIT_FOUND, "none-up-to-k": EXIT_OK,
                   "no-repeating-growth": EXIT_OK, "bounded": EXIT_OK, "unknown": EXIT_UNKNOWN}


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got '{text}'") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


LARGE_TRACE_BYTES = 5_000_000  # beyond this, the hint to write it gzipped (StormCrawler: 11 MB, 97 kB gzipped)


def trace_paths(path: str, count: int) -> list[str]:
    """Where the lassos go: PATH for the first, then PATH.2.json, ... (before a final .json: lasso.2.json;
    a gzipped PATH.json.gz: lasso.2.json.gz)."""
    gz = ".gz" if path.endswith(".gz") else ""
    base = path[:-3] if gz else path
    stem = base[:-5] if base.endswith(".json") else base
    return [path] + [f"{stem}.{i}.json{gz}" for i in range(2, count + 1)]


SHOWN_NAMES = 5  # names in a headline; the rest are counted


def _names(names: list[str]) -> str:
    return listed(names, SHOWN_NAMES)


def format_bolts(result: VerifyResult, verbose: bool = False) -> list[str]:
    """One line per growing or undecided bolt; bounded bolts only with `verbose`."""
    from app.core.tcn.failing import failure_summary

    lines = []
    for name, v in result.bolts.items():
        if v.verdict == "counterexample" and v.trace_index is not None and result.property == "growth":
            trace = result.traces[v.trace_index]
            failing = failure_summary(trace) if v.failures else None  # docs/model.md section 7
            lines.append(f"{name}: grows (lasso {v.trace_index + 1}: k = {v.k}, positions "
                         f"{v.loop_start}..{v.k} repeat every {duration(trace.loop_duration())}; "
                         f"+{v.growth_per_loop} per pass" + (f"; with failures: {failing}" if failing else "") + ")")
        elif v.verdict == "counterexample" and v.growth_certificate is not None:
            lines.append(f"{name}: grows (proven by rates; certificate in --json / --certificate-out) "
                         f"({v.text(exact=False)})")
        elif v.verdict == "counterexample":
            lines.append(f"{name}: counterexample (run {(v.trace_index or 0) + 1}: {v.message})")
        elif v.verdict == "unbounded":
            lines.append(f"{name}: {v.text(exact=False)} (certificate in --json / --certificate-out)")
        elif v.verdict == "bounded" and verbose:
            lines.append(f"{name}: bounded, queue below {v.queue_bound:.4g}" + (f" ({v.text(exact=False)})"
                                                                              if v.message else ""))
        elif v.verdict == "no-repeating-growth":
            how = " (linear program, certificate in --json / --certificate-out)" if v.certificate else ""
            lines.append(f"{name}: no repeating run grows, not proven bounded{how}"
                         + (f" ({v.text(exact=False)})" if v.message else ""))
        elif v.verdict != "bounded":
            lines.append(f"{name}: {v.verdict}" + (f" ({v.text(exact=False)})" if v.message else ""))
    return lines


def _threshold_runs(result: VerifyResult) -> set[int]:
    """The indices of `result.traces` that are threshold runs (`verify --flood-run`), not lassos."""
    certs = [c for v in result.bolts.values()
             for c in (v.flood_certificate, v.storm_certificate, v.spill_certificate) if c is not None]
    return {c.run.trace_index for c in certs if c.run is not None and c.run.trace_index is not None}


def headline(result: VerifyResult) -> str:
    """The first line: the verdict and how many checked bolts grow, are undecided or are bounded."""
    by: dict[str, list[str]] = {}
    for name, v in result.bolts.items():
        by.setdefault(v.verdict, []).append(name)
    total = len(result.bolts)
    bounded = by.get("bounded", [])
    steady = by.get("no-repeating-growth", [])
    undecided = by.get("unknown", []) + by.get("none-up-to-k", [])
    flooded = by.get("unbounded", [])
    stormed = [n for n in flooded if result.bolts[n].storm_certificate is not None]
    spilled = [n for n in flooded if result.bolts[n].spill_certificate is not None]
    flooded = [n for n in flooded if n not in stormed and n not in spilled]
    tail = [f"{len(flooded)} unbounded, flooded by a bolt that backs up ({_names(flooded)})"] if flooded else []
    paced = [n for n in stormed if (c := result.bolts[n].storm_certificate) is not None and c.replay == "paced"]
    stormed = [n for n in stormed if n not in paced]
    tail += [f"{len(stormed)} unbounded by a replay storm ({_names(stormed)})"] if stormed else []
    joint = [n for n in paced if (c := result.bolts[n].storm_certificate) is not None and c.others]
    paced = [n for n in paced if n not in joint]
    tail += [f"{len(paced)} unbounded by a paced replay backlog ({_names(paced)})"] if paced else []
    tail += [f"{len(joint)} unbounded by the paced backlog of several failing bolts ({_names(joint)})"] if joint else []
    tail += [f"{len(spilled)} unbounded by a backlog replayed at once ({_names(spilled)})"] if spilled else []
    proven = len(tail)  # the unbounded ones, first
    if undecided:
        tail.append(f"{len(undecided)} undecided")
    if steady and result.verdict != "no-repeating-growth":
        tail.append(f"{len(steady)} with no repeating growth")
    if bounded and result.verdict != "bounded":
        tail.append(f"{len(bounded)} proven bounded")
    rest = f"; {', '.join(tail)}" if tail else ""
    if result.verdict == "counterexample" and result.property == "growth":
        growing = by.get("counterexample", [])
        lassos = len(result.traces) - len(_threshold_runs(result))
        by_rates = sum(1 for n in growing if result.bolts[n].method == "rate proof")
        how = [f"in {lassos} certified lasso{'s' if lassos != 1 else ''}"] if lassos else []
        how += [f"{by_rates} proven by rates"] if by_rates else []
        return (f"counterexample: {len(growing)} of {total} checked bolt{'s' if total != 1 else ''} "
                f"{'grows' if len(growing) == 1 else 'grow'} without bound ({_names(growing)}), "
                f"{', '.join(how)}{rest}")
    if result.verdict == "bounded":
        return (f"bounded: {'the checked bolt is' if total == 1 else f'all {total} checked bolts are'} proven "
                "bounded by the rate check; in every run each queue stays below its bound (docs/boundedness.md)")
    if result.verdict == "no-repeating-growth":
        return (f"no repeating run grows: no lasso makes a queue of {_names(steady)} grow, but "
                f"{'it is' if len(steady) == 1 else 'they are'} not proven bounded in every run "
                f"(docs/boundedness.md){rest}")
    if result.verdict == "unbounded":
        others = f"; {', '.join(tail[proven:])}" if tail[proven:] else ""
        return f"unbounded: {', '.join(tail[:proven])}: for every N a legal run takes each past N{others}"
    if result.verdict == "unknown":
        return result.summary(exact=False) + rest
    if result.verdict == "none-up-to-k":
        return (f"no counterexample up to k = {result.k} for {_names(undecided)} (not a proof of boundedness: "
                f"longer runs were not examined){rest}")
    return result.text(exact=False)


# notes that repeat, per bolt, what -v shows: left out of the plain text
_VERBOSE_NOTES = ("cone of influence of ", "not searched, decided by the rate check")


def format_result(result: VerifyResult, verbose: bool = False, capacity: list[str] | None = None) -> str:
    """The human report: a headline, one line per growing or undecided bolt (every bolt with `verbose`),
    bounded bolts summarised, capacity in Storm's terms, notes."""
    lines = [headline(result)]
    lines += ["  " + line for line in format_bolts(result, verbose)]
    bounded = {n: v for n, v in result.bolts.items() if v.verdict == "bounded"}
    bounds = listed((f"{n} < {v.queue_bound:.4g}" for n, v in bounded.items() if v.queue_bound is not None),
                    SHOWN_NAMES)
    if bounded and not verbose and result.verdict != "bounded":
        lines.append(f"  proven bounded by the rate check (queue bounds): {bounds} (-v lists each)")
    elif bounded and not verbose:
        lines.append(f"  proven bounded (queue bounds): {bounds}")
    for line in capacity or []:
        lines.append(f"- {line}")
    for note in result.notes:
        if verbose or not note.startswith(_VERBOSE_NOTES):
            lines.append(f"- {note}")
    lines.append(f"({result.elapsed_s:.2f} s)")
    return "\n".join(lines)


def _check_writable(args: argparse.Namespace, path: str) -> None:
    """Refuse a --trace-out that cannot be written before spending minutes on the search: the one
    writer's checks (app/core/fileio.check_output), and a folder that does not exist."""
    import os

    from app.cli.outputs import check_output_file
    from app.core.topology import one_line

    target = os.path.abspath(path)
    if os.path.isdir(target):
        example = os.path.join(path, "lasso.json")
        raise UsageError(f"--trace-out {one_line(path)}: is a folder; give a file name such as {one_line(example)}")
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        # name the part of the path that is in the way: a missing folder, or a file where a folder should be
        above = folder
        while above and not os.path.exists(above) and os.path.dirname(above) != above:
            above = os.path.dirname(above)
        if os.path.exists(above) and not os.path.isdir(above):
            raise UsageError(f"--trace-out {one_line(path)}: {one_line(above)} is a file, not a folder")
        raise UsageError(f"--trace-out {one_line(path)}: the folder {one_line(folder)} does not exist")
    check_output_file(args, "--trace-out", path)


def cmd_verify(args: argparse.Namespace) -> int:
    from app.cli.check import latency_block
    from app.cli.inputs import read_topology
    from app.cli.options import latency_of, with_failures, with_storm_version
    from app.cli.outputs import check_output_file, write_output_file
    from app.core.formats.trace import gzip_name, trace_bytes
    from app.core.headroom import headroom
    from app.core.rates import RateAnalysis
    from app.core.storm.lines import capacity_lines
    from app.core.tcn.search import SearchOptions, verify
    from app.core.topology import one_line

    if args.k is not None and args.k < 2:
        raise UsageError("--k must be at least 2")
    if args.k_max is not None and args.k_max < 2:
        raise UsageError("--k-max must be at least 2")
    for option, value in (("--k", args.k), ("--k-max", args.k_max)):
        if value is not None and value > args.max_k:
            raise UsageError(f"{option} {value} is over the limit of {args.max_k} positions "
                             "(raise it with --max-k N or STORMBOUND_MAX_K; docs/limits.md)")
    topo = with_storm_version(with_failures(read_topology(args.file), args.failures, args.file), args.storm_version)
    if args.trace_out:
        _check_writable(args, args.trace_out)
    if args.certificate_out:
        check_output_file(args, "--certificate-out", args.certificate_out)
    if not topo.bolts:
        raise UsageError(f"{args.file}: the topology has no bolt to verify", field="bolts", file=args.file)

    verbose = getattr(args, "verbose", 0) > 0  # -v: the log lines show each bound already
    on_tty = sys.stderr.isatty() and not getattr(args, "quiet", False)
    status = StatusLine(on_tty and not args.progress and not verbose).start()

    def show(progress: Progress) -> None:
        if not progress.message:  # what the search does next and the verdicts so far: the app's, not a line here
            return
        log.info("%s (%.1f s)", progress.message, progress.elapsed_s)
        if args.progress and not verbose:
            print(f"  {progress.message} ({progress.elapsed_s:.1f} s)", file=sys.stderr, flush=True)
        status.update(progress.message)

    status.update(f"verifying {topo.name}: rate check, then the search")
    options = SearchOptions(k=args.k, k_max=args.k_max, timeout_s=args.timeout, force_search=args.force_search,
                            threshold=args.threshold, widen_s=args.widen,
                            loop_clocks="region" if args.region_clocks else "equal",
                            simulate=not args.no_simulation, max_k=args.max_k, flood_run=args.flood_run)
    rates = RateAnalysis(topo)  # the one analysis of this document: the search's rate phase, the headroom
    try:
        result = verify(topo, options, progress=show, rates=rates)
    finally:
        status.stop()
    log.info("verdict %s in %.2f s", result.verdict, result.elapsed_s)
    written: list[str] | None = None
    if args.trace_out:
        lassos = [*result.traces, *result.worker_death_traces]  # those with worker deaths last (model.md 9.5)
        if not lassos:
            print(f"stormbound: no trace written to {one_line(args.trace_out)}: the verdict is {result.verdict}",
                  file=sys.stderr)
        written = trace_paths(args.trace_out, len(lassos)) if lassos else []
        for trace, path in zip(lassos, written, strict=True):
            written_bytes = trace_bytes(trace, gzipped=gzip_name(path))
            write_output_file(args, "--trace-out", path, written_bytes)
            if not gzip_name(path) and len(written_bytes) > LARGE_TRACE_BYTES:
                print(f"stormbound: {one_line(path)} is {len(written_bytes) / 1e6:.1f} MB; a name ending in .gz "
                      f"(--trace-out {one_line(args.trace_out)}.gz) writes it gzipped, often 100 times smaller, and "
                      "every stormbound command reads it", file=sys.stderr)
    if args.certificate_out:
        from app.core.tcn.certificates import certificate_file

        certs = certificate_file(topo, result.bolts, result.traces, result.worker_death_certificates)
        if certs is None:
            print(f"stormbound: no certificate written to {one_line(args.certificate_out)}: no bolt was decided by "
                  "a certificate (linear program, rate proof or flood proof)", file=sys.stderr)
        else:
            text = json.dumps(certs, indent=2, ensure_ascii=False) + "\n"
            write_output_file(args, "--certificate-out", args.certificate_out, text.encode("utf-8"))
            if not args.json:
                log.info("certificates written to %s", args.certificate_out)
    latency = latency_of(topo, args, rates=rates)
    room = None if args.threshold is not None else headroom(topo, rates).within_sojourns(latency.sojourn_exact)
    timeouts = latency.not_proven() if args.fail_on == "timeout" else []
    grows = _growing(result) if args.fail_on == "grows" else []
    if args.json:
        data = {**result.to_public_json(written), **({} if room is None else {"headroom": room.to_json()})}
        if (why := _no_worker_deaths(topo, room)) is not None:
            data["worker_deaths"] = {"decided": False, "reason": why}
        data["latency"] = latency.model_dump()
        if args.fail_on:
            data["fail_on"] = {"status": args.fail_on, **({"spouts": timeouts} if timeouts or args.fail_on == "timeout"
                                                          else {"bolts": grows})}
        print_result("verify", data)
    else:
        print(format_result(result, verbose, [] if room is None else capacity_lines(room)))
        if (why := _no_worker_deaths(topo, room)) is not None:
            print(f"note: {why}")
        print(latency_block(latency))
        _print_traces(result, written or [], args.flood_run)
        if timeouts or grows:
            print(one_line(f"--fail-on {args.fail_on}: {', '.join(timeouts or grows)}"))
    code = EXIT_BY_VERDICT[result.verdict]
    return EXIT_FOUND if (timeouts or grows) and code == EXIT_OK else code


def _growing(result: VerifyResult) -> list[str]:
    """The bolts `--fail-on grows` counts: a certified lasso (or an unbounded proof) without worker deaths, or a
    certified lasso with them (docs/model.md 9.5)."""
    return [n for n, v in result.bolts.items()
            if v.verdict in ("counterexample", "unbounded") or n in result.worker_death_lassos]


def _no_worker_deaths(topo: Topology, room: Headroom | None) -> str | None:
    """What a threshold run, which has no capacity block (`room` None), says of worker deaths (docs/model.md
    section 9); None when the capacity block says it or the document has no workers."""
    if room is not None or topo.storm.workers is None:
        return None
    return ("the threshold search plays no worker's death: the runs it finds or rules out are runs in which no "
            "worker dies (docs/model.md section 9)")


def _print_traces(result: VerifyResult, written: list[str], flood_run: int | None) -> None:
    """A line per trace written: which bolts' lassos or flood runs it holds."""
    from app.core.topology import one_line

    for i, path in enumerate(written):
        bolts = [n for n, v in result.bolts.items() if v.trace_index == i]
        runs = [n for n, v in result.bolts.items() if v.flood_certificate is not None
                and v.flood_certificate.run is not None and v.flood_certificate.run.trace_index == i]
        bolts += [f"a run taking {n}'s queue past {flood_run}" for n in runs]
        print(f"trace {i + 1} written to {one_line(path)}" + (f" ({', '.join(bolts)})" if bolts else ""))


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `verify` to the `stormbound` command line."""
    p = sub.add_parser(
        "verify", help="search for a lasso in which a checked queue grows without bound",
        description="Decide for every checked bolt whether its queue can grow without bound: a proof from the rate "
                    "check, a certified lasso (a prefix plus a loop that repeats forever), none up to the bound k, "
                    "no repeating growth, or unknown. Exit 0 bounded / no repeating growth / none up to k, "
                    "1 a counterexample, 2 bad input, 3 internal error, 4 unknown. On a terminal stderr shows a "
                    "status line while searching (-q: none).",
        epilog=examples("stormbound verify models/getting-started.storm.json --k-max 8 --timeout 60 "
                        "--trace-out lasso.json"))
    p.add_argument("file", help="a .storm.json document or a D-VerT JSON configuration")
    bound = p.add_mutually_exclusive_group()
    bound.add_argument("--k", type=_positive_int, help="search exactly this bound (positions of the lasso, at least 2)")
    bound.add_argument("--k-max", type=_positive_int, dest="k_max",
                       help="deepen the bound up to this many positions (default: the document's "
                            "verification.k, else its k_max)")
    p.add_argument("--timeout", type=positive_seconds, metavar="S",
                   help="give up after this much wall-clock time (seconds, or with a unit: 90s, 2min), building the "
                        "encoding included (verdict unknown, exit 4)")
    p.add_argument("--max-k", type=_positive_int, dest="max_k", default=limits.MAX_K, metavar="N",
                   help=f"refuse bounds k above N positions (default {limits.MAX_K}, or STORMBOUND_MAX_K; the "
                        "encoding grows linearly in k; docs/limits.md)")
    p.add_argument("--json", action="store_true", help="print the result as one JSON document on stdout")
    p.add_argument("--fail-on", choices=["timeout", "grows"], dest="fail_on",
                   help="timeout: exit 1 when some spout's tuple trees are not proven to complete within the message "
                        "timeout (docs/latency.md), even if no queue grows; grows: exit 1 when some bolt grows, "
                        "with a certified lasso or an unbounded proof, or with a certified lasso with worker deaths "
                        "(docs/model.md 9.5) beside a verdict that says bounded")
    add_latency_options(p)
    p.add_argument("--trace-out", dest="trace_out", metavar="PATH",
                   help="write each distinct certified lasso as a trace file: the first to PATH, the next to "
                        "PATH.2.json, PATH.3.json, ... (a final .json of PATH is replaced: lasso.json, lasso.2.json); "
                        "the JSON result's 'traces' lists the files and each bolt's 'trace_index' points into it")
    p.add_argument("--force", action="store_true",
                   help="replace trace files that exist (never one of the command's inputs)")
    p.add_argument("--force-search", action="store_true", dest="force_search",
                   help="search every checked bolt without anything derived from the rate check (no bolt skipped "
                        "as bounded, no queue assumed level): slower, a cross-check of the rate proof")
    p.add_argument("--threshold", type=_positive_int, metavar="N",
                   help="check instead: can some queue reach this size (tuples)")
    p.add_argument("--flood-run", type=_positive_int, dest="flood_run", metavar="N",
                   help="for every bolt answered unbounded, also build a finite legal run in which its queue passes N "
                        "(the upstream bolt slow long enough, then draining), certified as a threshold witness and "
                        "written with --trace-out and --certificate-out (docs/boundedness.md, 'The threshold run'); "
                        "with --timeout the search then ends a quarter of the limit early, leaving the runs time")
    p.add_argument("--no-simulation", action="store_true", dest="no_simulation",
                   help="search with the solver only (by default a lasso built by simulation is tried first for "
                        "bolts the rate check says may grow; docs/simulation.md)")
    p.add_argument("--widen", type=positive_seconds, metavar="S",
                   help="after a lasso, spend up to S seconds looking for one where more checked queues grow together")
    p.add_argument("--progress", action="store_true",
                   help="print a line per bound on stderr, terminal or not (instead of the live status line)")
    p.add_argument("--region-clocks", action="store_true", dest="region_clocks",
                   help="let clocks repeat up to regions at the loop (finds more lassos, may be slower)")
    p.add_argument("--certificate-out", dest="certificate_out", metavar="FILE",
                   help="write the certificates of the bolts the linear program proves free of repeating growth "
                        "and of those proven to grow by rates or proven unbounded by a flood "
                        "(stormbound-certificates/1: each with the document of its cone; check them with stormbound "
                        "check-certificate FILE)")
    add_failures_option(p)
    add_storm_version_option(p, "for this run")
    p.set_defaults(func=cmd_verify, file_args=("file",))
    c = sub.add_parser(
        "check-certificate",
        help="check the verifier's certificates (linear program, growth by rates, flood) independently",
        description="From each certificate's embedded topology document: for the linear program, re-derive every "
                    "row of one loop pass and check that the weighted sum of the rows is a contradiction "
                    "(docs/verifier.md, 'Linear program'); for growth proven by rates, re-derive every rate of the "
                    "schedule and check its strict inequalities (docs/verifier.md, 'Growth proven by rates'); for a "
                    "flood, re-derive the drain inequality and check the source's evidence (docs/boundedness.md, "
                    "'Unbounded: a backlog that floods'). "
                    "Exit 0 every certificate accepted, 1 some rejected, 2 bad input.",
        epilog=examples("stormbound verify cfg5.json --failures on --certificate-out cfg5.cert.json",
                        "stormbound check-certificate cfg5.cert.json"))
    c.add_argument("file", help="a certificate file written by verify --certificate-out")
    c.set_defaults(func=cmd_check_certificate, file_args=("file",))


def cmd_check_certificate(args: argparse.Namespace) -> int:
    """Check every certificate of a certificate file (app/core/tcn/check/files.py) with its independent checker."""
    from app.core.formats.jsonfile import FormatError, read_json
    from app.core.tcn.check.files import check_file
    from app.core.topology import one_line

    try:
        checked = check_file(read_json(args.file))
    except (FormatError, ValueError) as exc:
        raise UsageError(f"{args.file}: {exc}", file=args.file) from None
    rejected = [(target, problems) for target, _, problems in checked if problems]
    for target, kind, problems in checked:
        if problems:
            print(f"{one_line(target)}: rejected ({kind}): " + "; ".join(problems))
        elif kind == "rate proof":
            print(f"{one_line(target)}: accepted (rate proof): a lasso in which its queue grows exists")
        elif kind in ("flood proof", "storm proof"):
            print(f"{one_line(target)}: accepted ({kind}): unbounded, for every N a run takes its queue past N")
        else:
            print(f"{one_line(target)}: accepted (linear program): no lasso of any length makes its queue grow")
    return 1 if rejected else EXIT_OK


__all__ = ["register", "EXIT_BAD_INPUT"]

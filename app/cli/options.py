"""Argument types and the options several subcommands share: numbers and times, --failures,
--storm-version, --parallelism items and --limit."""

from __future__ import annotations

import argparse
import logging
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from app.cli.common import UsageError
from app.core.topology import one_line

if TYPE_CHECKING:
    from app.core.topology import Topology

log = logging.getLogger("stormbound.cli")


def number(kind: type, low: float | None = None, high: float | None = None, *, above: bool = False,
           unit: str = "") -> Callable[[str], Any]:
    """An argparse `type` for a finite number of `kind` (int or float) in [low, high] (low excluded when
    `above`), `unit` named in the message: `--timeout nan`, `--ackers -1` or `--max-pending 0` is one line.
    A float option in seconds (`unit="s"`) also takes a time with a unit (2ms, 0.5s, 2min; app/core/units.py)."""
    units = f" ({unit})" if unit else ""

    def read(text: str, shown: str) -> Any:
        import math

        if kind is float and unit == "s":
            from app.core.units import UnitError, parse_duration

            try:
                return parse_duration(text)
            except (UnitError, ValueError, OverflowError) as err:
                raise argparse.ArgumentTypeError(one_line(str(err))) from None
        try:
            value = int(text) if kind is int else float(text)
        except (ValueError, OverflowError):
            what = "a whole number" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"expected {what}{units}, got '{shown}'") from None
        if kind is float and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"expected a finite number{units}, got '{shown}'")
        return value

    def parse(text: str) -> Any:
        shown = one_line(text)[:40]
        value = read(text, shown)
        if low is not None and (value <= low if above else value < low):
            bound = f"above {low:g}" if above else f"at least {low:g}"
            raise argparse.ArgumentTypeError(f"must be {bound}{units}, got {shown}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"must be at most {high:g}{units}, got {shown}")
        return value
    parse.__name__ = "whole number" if kind is int else "number"  # argparse names the type on errors
    return parse


#: the largest number of seconds an option takes (a year): a longer timeout or duration is a typo
MAX_SECONDS = 365 * 24 * 3600.0


def positive_seconds(text: str) -> float:
    """argparse type of every time option: seconds, or a time with a unit (2ms, 0.5s, 2min), above 0, up to a year."""
    return float(number(float, 0, MAX_SECONDS, above=True, unit="s")(text))

def add_failures_option(p: argparse.ArgumentParser) -> None:
    """`--failures on|off`: override the document's settings.failures for this run (docs/model.md 7.1)."""
    p.add_argument("--failures", choices=["on", "off"],
                   help="switch the failure model on or off for this run, whatever settings.failures says "
                        "(on: the bolts with a min_ttf may fail; docs/model.md section 7)")


def with_failures(topo: Topology, choice: str | None, file: str) -> Topology:
    """`topo` with settings.failures set by `--failures` (None: as the document says). `on` on a
    document in which no bolt has a min_ttf is bad input (exit 2): nothing could fail."""
    if choice is None:
        return topo
    if choice == "on" and not any(b.min_ttf is not None for b in topo.bolts):
        raise UsageError(f"--failures on: no bolt of {file} can fail: set bolts[].min_ttf on the bolts that may fail",
                         field="bolts[].min_ttf", file=file)
    from app.core import failures

    log.info("--failures %s: settings.failures overridden for this run", choice)
    return failures.with_failures(topo, choice == "on")  # failures on need the reboot bounds


STORM_VERSION_PATTERN = re.compile(r"^[0-9]+(\.[0-9A-Za-z-]+)*$")


def storm_version_arg(text: str) -> str:
    """A Storm version as `--storm-version` takes it: 2.6.1, 1.2, 2.x."""
    if not STORM_VERSION_PATTERN.match(text) or len(text) > 40:
        raise argparse.ArgumentTypeError(f"not a Storm version: {text!r} (e.g. 2.6.1, 1.2.3 or 2.x)")
    return text


def add_storm_version_option(p: argparse.ArgumentParser, what: str) -> None:
    """`--storm-version V`: the Storm release whose defaults the capacity estimates assume (docs/storm.md)."""
    p.add_argument("--storm-version", dest="storm_version", type=storm_version_arg, metavar="VERSION",
                   help=f"the cluster's Storm version (e.g. 2.6.1 or 1.2.3) {what}; it sets the defaults the "
                        "capacity estimates assume (receive queue size, backpressure); unset: the document's, "
                        "else 2.x")


def with_storm_version(topo: Topology, version: str | None) -> Topology:
    """`topo` with storm.storm_version set by `--storm-version` (None: as the document says)."""
    if version is None:
        return topo
    return topo.model_copy(update={"storm": topo.storm.model_copy(update={"storm_version": version})})

#: Storm's largest parallelism and task count (a Java int): larger values are refused, not clamped.
STORM_MAX_INT = 2**31 - 1


def bolt_count(item: str, expected: str) -> tuple[str, int]:
    """A `--parallelism BOLT=N` item (1 <= N <= 2^31-1) as (BOLT, N); anything else is a UsageError naming
    `expected`."""
    from app.core.topology import one_line

    name, sep, number = item.partition("=")
    number = number.strip()
    if not sep or not number.isascii() or not number.isdigit() or not number.lstrip("0"):
        raise UsageError(f"--parallelism {one_line(item)}: expected {expected}")
    if len(number.lstrip("0")) > 10 or int(number) > STORM_MAX_INT:
        raise UsageError(f"--parallelism {one_line(item)}: {one_line(number)[:30]} is over Storm's largest "
                         f"parallelism {STORM_MAX_INT} (2^31-1)")
    return name, int(number)


def add_limit_option(p: argparse.ArgumentParser) -> None:
    """`--limit NAME=N` (repeatable): raise a limit of the pattern/expression/stream readers (docs/limits.md)."""
    from app.expr.limits import LIMITS

    p.add_argument("--limit", action="append", default=[], metavar="NAME=N",
                   help="raise a reader limit for this run (repeatable; docs/limits.md): " + ", ".join(LIMITS))


def apply_limits(args: argparse.Namespace) -> None:
    """Check STORMBOUND_LIMITS and apply `--limit` values; a bad one is a UsageError naming it."""
    from app.expr.limits import LimitSettingError, check_env, parse_settings, set_limits

    values: dict[str, int] = {}
    try:
        check_env()
        for entry in getattr(args, "limit", None) or []:
            values.update(parse_settings(entry, "--limit"))
    except LimitSettingError as err:
        raise UsageError(str(err)) from None
    set_limits(values)


def add_target_option(p: argparse.ArgumentParser) -> None:
    """`--target-capacity` of `check` and `repair`."""
    from app.core.rates import TARGET_CAPACITY

    p.add_argument("--target-capacity", type=number(float, 0, 1, above=True), default=TARGET_CAPACITY,
                   dest="target_capacity", metavar="C",
                   help="the Storm UI capacity (executed × latency / time, per executor) the suggested executors "
                        f"plan each bolt to at nominal rates (default {TARGET_CAPACITY}); never fewer than the "
                        "smallest parallelism proven bounded")


def add_latency_options(p: argparse.ArgumentParser) -> None:
    """`--latency-target S` and `--witness-out PATH`: the latency answers against the message timeout
    (docs/latency.md)."""
    p.add_argument("--latency-target", type=positive_seconds, dest="latency_target", metavar="S",
                   help="with acking: the largest max.spout.pending that keeps every tuple tree's proven latency "
                        "bound within S (default: topology.message.timeout.secs, 30 s when unset; docs/latency.md)")
    p.add_argument("--witness-out", dest="witness_out", metavar="PATH",
                   help="write the certified timeout witnesses (a lasso, the bolt, the loop pass and position of a "
                        "tuple that waits longer than the message timeout) as JSON, for an independent check")


def latency_of(topo: Topology, args: argparse.Namespace, witnesses: bool = True, rates: Any = None) -> Any:
    """The latency report of `topo` for `check` and `verify` (app/core/latency/report.py), with --witness-out
    written; `rates`: the topology's rate analysis when already made."""
    from fractions import Fraction

    from app.core.latency.report import latency_report

    target = getattr(args, "latency_target", None)
    report = latency_report(topo, target=None if target is None else Fraction(str(target)), witnesses=witnesses,
                            rates=rates)
    path = getattr(args, "witness_out", None)
    if path:
        import json

        from app.cli.outputs import write_output_file
        from app.core.latency.witness import WITNESS_FORMAT

        # (a witness of another spout's tree, shown beside a spout not proven, is written under that spout)
        found = [dict(s.witness, spout=name, trace=report.witness_traces[s.witness["bolt"]])
                 for name, s in report.spouts.items()
                 if s.witness is not None and s.witness.get("root") in (None, name)]
        data = {"format": WITNESS_FORMAT, "timeout": report.timeout, "witnesses": found}
        write_output_file(args, "--witness-out", path, (json.dumps(data, indent=2) + "\n").encode("utf-8"))
    return report


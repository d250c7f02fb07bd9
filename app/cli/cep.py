"""`stormbound cep PATTERNS LOG [--json]`: every match of complex event patterns in a run's event log.

PATTERNS is a pattern file (compact text form or JSON) or the word `monitors` for
the shipped Storm monitor patterns. Exit 0, or 1 with --fail-on-match when some pattern matched.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from app.cli.common import EXIT_FOUND, EXIT_OK, examples, print_result
from app.cli.options import add_limit_option, apply_limits
from app.expr.limits import one_line

if TYPE_CHECKING:
    from app.cep import Match


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `cep` to the `stormbound` command line."""
    p = sub.add_parser("cep", help="find complex event patterns in a run's event log",
                       description="Report every match of the patterns in the event log (times in the log's "
                                   "seconds). Exit 0, or 1 with --fail-on-match when some pattern matched.",
                       epilog=examples("stormbound cep monitors runs/cfg1 --fail-on-match   # exit 1 on any match"))
    p.add_argument("patterns",
                   help="pattern file (compact text form or JSON), or `monitors` for the shipped Storm monitors")
    p.add_argument("log", help="event log of a run (file or run folder)")
    p.add_argument("--json", action="store_true", help="machine-readable output (one JSON document on stdout)")
    p.add_argument("--fail-on-match", action="store_true", dest="fail_on_match",
                   help="exit 1 when some pattern matched (e.g. a monitor in a CI job)")
    add_limit_option(p)
    p.set_defaults(func=cmd_cep, file_args=("patterns", "log"))


def format_match(m: Match) -> str:
    """One human line per match: pattern, time span, parameters, then the events taken."""
    binds = " ".join(f"{k}={v}" for k, v in m.bindings.items())
    parts = []
    for ev in m.events:
        attrs = " ".join(f"{k}={v}" for k, v in ev.items() if k not in ("type", "t") and v is not None)
        parts.append(f"{ev.get('type')}@{ev.get('t', 0)}" + (f"({attrs})" if attrs else ""))
    kind = "" if m.kind == "match" else f" [{m.kind}]"
    span = f"t={m.t_start:g}..{m.t_end:g}"
    line = f"{m.pattern}{kind} {span}" + (f" {binds}" if binds else "") + ": " + " -> ".join(parts)
    return one_line(line, len(line))  # one line per match, whatever the events' strings hold


def cmd_cep(args: argparse.Namespace) -> int:
    """`stormbound cep PATTERNS LOG [--json]`: every match of every pattern with its events.
    PATTERNS may be the word `monitors` for the shipped Storm monitor patterns."""
    from app.cep import compile_pattern, find_matches, load_events, load_patterns
    from app.cep.monitors import load_monitors

    apply_limits(args)
    if args.patterns in ("monitors", "storm-monitors") and not Path(args.patterns).exists():
        patterns = load_monitors()
    else:
        patterns = load_patterns(args.patterns)
    for p in patterns:
        compile_pattern(p)  # report a bad pattern before reading the log
    events = load_events(args.log)
    matches = find_matches(patterns, events)
    from app.cep.events import impossible_types, log_kind_types

    kind = log_kind_types(args.log)
    impossible = {p.id: impossible_types(p, kind[0]) for p in patterns} if kind is not None else {}
    impossible = {k: v for k, v in impossible.items() if v}
    code = EXIT_FOUND if matches and getattr(args, "fail_on_match", False) else EXIT_OK
    if getattr(args, "json", False):
        counts = {p.id: 0 for p in patterns}
        for m in matches:
            counts[m.pattern] += 1
        doc = {"patterns": [{"id": p.id, "text": p.text, "context": p.context} for p in patterns],
               "events": len(events), "counts": counts, "matches": [m.to_json() for m in matches],
               "cannot_occur": impossible}
        print_result("cep", doc)
        return code
    for m in matches:
        print(format_match(m))
    summary = ", ".join(f"{p.id} {sum(1 for m in matches if m.pattern == p.id)}" for p in patterns)
    print(f"{len(matches)} matches over {len(events)} events ({summary})")
    for pid, types in impossible.items():
        print(f"note: {pid} cannot match this log: {', '.join(types)} cannot occur in {kind[1] if kind else 'it'}")
    return code

"""Complex event patterns over run logs: parse (text or JSON), compile to automata, match.

`stormbound cep PATTERNS LOG [--json]` lands in :func:`run_cep_command`. Events are
plain dicts with `type` and `t` plus attributes; :func:`events_from_log` turns a
measured-run event log (app.measure.eventlog) into that form: an event's `ev` becomes
its `type`, a queue sample becomes type `queue` with its `queue` length.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Iterable, Sequence

from app.cep.compiler import Automaton, compile_ast, compile_pattern
from app.cep.engine import CepEngine, Match, PatternMatcher
from app.cep.syntax import (
    CONTEXTS, Pattern, PatternError, load_patterns, parse_ast, parse_pattern_json, parse_pattern_text, parse_text,
    read_text, to_ast, to_text,
)

__all__ = [
    "CONTEXTS", "Automaton", "CepEngine", "Match", "Pattern", "PatternError", "PatternMatcher",
    "compile_ast", "compile_pattern", "events_from_log", "find_matches", "load_events", "load_patterns",
    "parse_ast", "parse_pattern_json", "parse_pattern_text", "parse_text", "run_cep_command", "to_ast", "to_text",
]


def find_matches(patterns: Sequence[Pattern], events: Iterable[dict[str, Any]]) -> list[Match]:
    """Every match of every pattern over the events, in the order they complete."""
    return CepEngine(patterns).run(events)


def _record_to_event(rec: Any) -> dict[str, Any]:
    data = rec.model_dump(exclude_none=True) if hasattr(rec, "model_dump") else dict(rec)
    if "ev" in data:
        data["type"] = data.pop("ev")
    elif "queue" in data and "type" not in data:
        data["type"] = "queue"
    return data


def events_from_log(log: Any) -> list[dict[str, Any]]:
    """A measured-run EventLog (or any iterable of records/dicts) as pattern events sorted by time."""
    if hasattr(log, "events") and hasattr(log, "queues"):
        records: Iterable[Any] = [*log.events, *log.queues]
    else:
        records = log
    events = [_record_to_event(r) for r in records]
    events.sort(key=lambda e: float(e.get("t", 0.0)))  # stable: equal times keep their order
    return events


def _plain_events(path: Path) -> list[dict[str, Any]]:
    """A JSON array or JSON Lines file of event objects that already carry `type`."""
    text = read_text(path)
    items: list[Any]
    if text.lstrip().startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as err:
            raise PatternError(f"{path.name} line {err.lineno}", f"not valid JSON: {err.msg}") from None
    else:
        items = []
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    items.append(json.loads(line))
                except json.JSONDecodeError as err:
                    raise PatternError(f"{path.name} line {number}", f"not valid JSON: {err.msg}") from None
    for k, item in enumerate(items):
        if not isinstance(item, dict):
            raise PatternError(f"{path.name} event {k}", f"expected an object, got {type(item).__name__}")
        if "type" not in item and "ev" not in item and "queue" not in item:
            raise PatternError(f"{path.name} event {k}.type", "missing (every event needs a 'type')")
        t = item.get("t", 0.0)
        if isinstance(t, bool) or not isinstance(t, (int, float)):
            raise PatternError(f"{path.name} event {k}.t", f"not a number: {t!r}")
    return events_from_log(items)


def load_events(path: str | Path) -> list[dict[str, Any]]:
    """Events of a log file or run folder: the measured-run formats when they apply, plain JSON otherwise."""
    p = Path(path)
    if not p.exists():
        raise PatternError(str(p), "no such file or folder")
    if p.is_file() and p.suffix in (".json", ".jsonl"):
        head = p.read_text(encoding="utf-8", errors="replace")[:4096]
        if '"type"' in head and '"ev"' not in head:
            return _plain_events(p)
    try:
        from app.measure import eventlog
    except ImportError:  # the measured-runs reader is not there: plain JSON only
        return _plain_events(p)
    return events_from_log(eventlog.read_log(p))


def format_match(m: Match) -> str:
    """One human line per match: pattern, time span, parameters, then the events taken."""
    binds = " ".join(f"{k}={v}" for k, v in m.bindings.items())
    parts = []
    for ev in m.events:
        attrs = " ".join(f"{k}={v}" for k, v in ev.items() if k not in ("type", "t") and v is not None)
        parts.append(f"{ev.get('type')}@{ev.get('t', 0)}" + (f"({attrs})" if attrs else ""))
    kind = "" if m.kind == "match" else f" [{m.kind}]"
    span = f"t={m.t_start:g}..{m.t_end:g}"
    return f"{m.pattern}{kind} {span}" + (f" {binds}" if binds else "") + ": " + " -> ".join(parts)


def run_cep_command(args: argparse.Namespace) -> int:
    """`stormbound cep PATTERNS LOG [--json]`: every match of every pattern with its events.
    PATTERNS may be the word `monitors` for the shipped Storm monitor patterns."""
    if args.patterns in ("monitors", "storm-monitors") and not Path(args.patterns).exists():
        from app.cep.monitors import load_monitors

        patterns = load_monitors()
    else:
        patterns = load_patterns(args.patterns)
    for p in patterns:
        compile_pattern(p)  # report a bad pattern before reading the log
    events = load_events(args.log)
    matches = find_matches(patterns, events)
    if getattr(args, "json", False):
        counts = {p.id: 0 for p in patterns}
        for m in matches:
            counts[m.pattern] += 1
        doc = {"patterns": [{"id": p.id, "text": p.text, "context": p.context} for p in patterns],
               "events": len(events), "counts": counts, "matches": [m.to_json() for m in matches]}
        sys.stdout.write(json.dumps(doc, indent=2, default=str) + "\n")
        return 0
    for m in matches:
        print(format_match(m))
    summary = ", ".join(f"{p.id} {sum(1 for m in matches if m.pattern == p.id)}" for p in patterns)
    print(f"{len(matches)} matches over {len(events)} events ({summary})")
    return 0

"""Pattern events: plain dicts with `type` and `t` plus attributes, from run logs or plain JSON files.

:func:`events_from_log` turns a measured-run event log (:mod:`app.measure.eventlog`)
into that form: an event's `ev` becomes its `type`, a queue sample becomes type
`queue` with its `queue` length.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from functools import partial
from pathlib import Path
from typing import Any

from app.cep.nodes import And, Atom, Follows, Not, Or, PatternError, PatternNode, Star, iter_atoms
from app.cep.syntax import read_text
from app.core import fileio
from app.expr.limits import loads, one_line


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
            items = loads(text, lambda problem: PatternError(path.name, problem), strict_numbers=False)
        except json.JSONDecodeError as err:
            raise PatternError(f"{path.name} line {err.lineno}", f"not valid JSON: {err.msg}") from None
        if not isinstance(items, list):
            raise PatternError(path.name, "expected a JSON array of events")
    else:
        items = []
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    items.append(loads(line, partial(PatternError, f"{path.name} line {number}"),
                                       strict_numbers=False))
                except json.JSONDecodeError as err:
                    raise PatternError(f"{path.name} line {number}", f"not valid JSON: {err.msg}") from None
    for k, item in enumerate(items):
        if not isinstance(item, dict):
            raise PatternError(f"{path.name} event {k}", f"expected an object, got {type(item).__name__}")
        if "type" not in item and "ev" not in item and "queue" not in item:
            raise PatternError(f"{path.name} event {k}.type", "missing (every event needs a 'type')")
        for key in ("type", "ev"):
            if key in item and not isinstance(item[key], str):
                raise PatternError(f"{path.name} event {k}.{key}",
                                   f"expected an event type name (a string), got {type(item[key]).__name__}")
        t = item.get("t", 0.0)
        if isinstance(t, bool) or not isinstance(t, (int, float)):
            raise PatternError(f"{path.name} event {k}.t", f"not a number: {one_line(repr(t), 40)}")
        if not math.isfinite(t):
            raise PatternError(f"{path.name} event {k}.t", f"not a finite number: {t}")
    return events_from_log(items)


def load_events(path: str | Path) -> list[dict[str, Any]]:
    """Events of a log file or run folder: the measured-run formats when they apply, plain JSON otherwise."""
    p = Path(path)
    if not p.exists():
        raise PatternError(str(p), "no such file or folder")
    if p.is_file() and p.suffix in (".json", ".jsonl"):
        with fileio.open_checked(p, lambda reason: PatternError(str(p), reason)) as fh:
            head = fh.read(4096).decode("utf-8", errors="replace")
        if '"type"' in head and '"ev"' not in head:
            return _plain_events(p)
    from app.measure import eventlog  # only for run logs: keeps plain pattern work light

    return events_from_log(eventlog.read_log(p))


def log_kind_types(path: str | Path) -> tuple[frozenset[str], str] | None:
    """The event types a kind of log can hold at all, and what that kind is; None when any type can occur."""
    p = Path(path)
    if not p.exists():
        return None
    from app.measure import eventlog

    try:
        kind = eventlog.log_format(p)
    except ValueError:
        return None
    if kind == "storm-events":
        from app.measure.storm_events import EVENT_TYPES

        return frozenset(EVENT_TYPES), "a Storm events.log (sampled emits only)"
    return None


def _can_match(node: PatternNode, possible: frozenset[str]) -> bool:
    if isinstance(node, Atom):
        return node.type in possible
    if isinstance(node, (Follows, And)):
        return all(_can_match(a, possible) for a in node.args)
    if isinstance(node, Or):
        return any(_can_match(a, possible) for a in node.args)
    if isinstance(node, (Star, Not)):
        return True  # zero occurrences, or an absence, needs no event
    return _can_match(node.arg, possible)  # Times, Plus, Within, HoldsFor


def impossible_types(pattern: Any, possible: frozenset[str]) -> list[str]:
    """The event types of `pattern` that cannot occur, when without them it cannot match; else []."""
    if _can_match(pattern.ast, possible):
        return []
    return sorted({a.type for a in iter_atoms(pattern.ast) if a.type not in possible})

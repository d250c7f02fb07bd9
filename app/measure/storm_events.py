"""Storm's own event log: the `events.log` that the event inspector's FileBasedEventLogger writes.

One line per sampled tuple a spout or bolt emitted:
`java.util.Date.toString() + "," + component + "," + task + "," + messageId + "," + values`,
for instance `Mon Nov 23 11:33:18 UTC 2026,split,5,,[the, cow]`. The values are a Java
list's `toString()` (commas inside), the message id is empty for bolts and for spouts
that emit unanchored, and the date has one-second resolution in the worker's time zone.

Each line becomes an emit event: `spout_emit` when it carries a message id (only spouts
have one), else `bolt_emit` (unanchored). Tuple ids are made up from the line number.
What such a log cannot give is said by :data:`LIMITS`: there are no takes and no acks,
so no α, σ, input rates, queue sizes or reliability; timestamps of one second give
rates but no burst sizes; and the counts are the sampled tuples only.
"""

from __future__ import annotations

import calendar
import os
import re
from pathlib import Path

from app.core.fileio import read_text
from app.core.formats.limits import escape
from app.measure.records import Event, EventLog, EventLogError

FORMAT = "storm-events"
LIMITS = (
    "Storm events.log: emits only; no takes and no acks, so α, σ, input rates, queue growth and reliability "
    "cannot be measured from it",
    "Storm events.log: one-second timestamps: rates are counted per whole second, burst sizes cannot be measured",
    "Storm events.log: it holds the tuples the event inspector sampled; rates assume 100 % sampling",
)

_MONTHS = {m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct",
                                       "Nov", "Dec"), start=1)}
_LINE = re.compile(
    r"^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?P<mon>[A-Z][a-z]{2}) (?P<day>\d{1,2}) "
    r"(?P<h>\d{2}):(?P<m>\d{2}):(?P<s>\d{2}) (?P<tz>\S+) (?P<year>\d{4}),(?P<rest>.*)$")


def looks_like_events_log(path: str | os.PathLike[str]) -> bool:
    """True for `events.log`, or a `.log` whose first non-blank line is an event inspector line."""
    p = Path(path)
    if p.name == "events.log":
        return True
    if not p.is_file():  # a named pipe would block the peek; its reader refuses it by name
        return False
    try:
        with open(p, encoding="utf-8", errors="replace") as fh:
            for number, line in enumerate(fh):
                if line.strip():
                    return _LINE.match(line.rstrip("\n")) is not None
                if number > 1000:
                    return False
    except OSError:
        return False
    return False


def _seconds(m: re.Match[str]) -> int:
    """Seconds since the epoch as if the worker's zone were UTC (only differences are used)."""
    return calendar.timegm((int(m["year"]), _MONTHS[m["mon"]], int(m["day"]), int(m["h"]), int(m["m"]),
                            int(m["s"]), 0, 0, 0))


def _fields(rest: str, where: str) -> tuple[str, int, str, str]:
    comp, sep, after = rest.partition(",")
    task, sep2, tail = after.partition(",")
    if not sep or not sep2 or not comp:
        raise EventLogError(where, "expected DATE,COMPONENT,TASK,MESSAGE_ID,[VALUES]")
    digits = task.strip().lstrip("-")
    if not digits.isascii() or not digits.isdigit() or len(digits) > 18:
        raise EventLogError(f"{where}.task", f"not a task number: '{escape(task)}'")
    if tail.startswith(","):
        return comp, int(task), "", tail[1:]
    cut = tail.find(",[")  # the message id may itself hold commas; the values are the bracketed rest
    if cut < 0:
        raise EventLogError(f"{where}.values", "no [values] list after the message id")
    return comp, int(task), tail[:cut], tail[cut + 1:]


def read_storm_events(path: str | os.PathLike[str]) -> EventLog:
    """An `events.log` as an EventLog of emits (times in seconds from its first line)."""
    p = Path(path)
    text = read_text(p, lambda reason: EventLogError(str(p), reason))
    records: list[tuple[int, str, int, str, int]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        m = _LINE.match(line)
        if m is None:
            if records:
                continue  # a value with a line break: the rest of the previous tuple
            raise EventLogError(f"{p.name} line {number}",
                                "not an event inspector line (expected "
                                "'Mon Nov 23 11:33:18 UTC 2026,COMPONENT,TASK,MSGID,[VALUES]')")
        if m["mon"] not in _MONTHS:
            raise EventLogError(f"{p.name} line {number}.date", f"unknown month '{m['mon']}'")
        comp, task, msg, _values = _fields(m["rest"], f"{p.name} line {number}")
        records.append((_seconds(m), comp, max(0, task), msg.strip(), number))
    if not records:
        raise EventLogError(p.name, "no event inspector lines found")
    start = min(r[0] for r in records)
    events: list[Event] = []
    for stamp, comp, task, msg, number in records:
        ident = f"{comp}:{task}:{number}"
        if msg:
            events.append(Event(t=float(stamp - start), ev="spout_emit", comp=comp, task=task, tuple=ident, msg=msg))
        else:
            events.append(Event(t=float(stamp - start), ev="bolt_emit", comp=comp, task=task, tuple=ident, anchors=[]))
    events.sort(key=lambda e: e.t)
    return EventLog(events=events, source=str(p))


def apply_storm_events(analysis, log: EventLog):  # noqa: ANN001, ANN201 - an app.measure.analysis.Analysis
    """Keep only what an events.log can say: emit rates over whole seconds; notes for the rest."""
    span = max((e.t for e in log.events), default=0.0) - min((e.t for e in log.events), default=0.0) + 1.0
    for stats in analysis.components.values():
        stats.rate_out = stats.emitted / span
        stats.bursts, stats.burst_mean, stats.burst_max = 0, None, None
        stats.alpha_mean = stats.alpha_min = stats.alpha_max = stats.alpha_std = None
        stats.sigma = None
    notes = list(getattr(analysis, "notes", []) or [])
    analysis.notes = notes + [n for n in LIMITS if n not in notes]
    return analysis

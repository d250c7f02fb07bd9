"""Storm's own event log: the `events.log` that the event inspector's FileBasedEventLogger writes.

One line per sampled tuple a spout or bolt emitted:
`java.util.Date.toString() + "," + component + "," + task + "," + messageId + "," + values`,
for instance `Mon Nov 23 11:33:18 UTC 2026,split,5,,[the, cow]`. The values are a Java
list's `toString()` (commas inside), the message id is empty for bolts and for spouts
that emit unanchored, and the date has one-second resolution in the worker's time zone.

Storm's log4j rolls the file (`events.log.1`, `events.log.2.gz`, ...) and a worker keeps
it under `workers-artifacts/TOPOLOGY-ID/PORT/`: a rolled file (gzip or not), a folder of
them, or a worker-artifacts folder (every `TOPOLOGY-ID/PORT/events.log*` below it, one
topology) reads as one log. A gzip file is decompressed up to MAX_BYTES.

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
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.formats.limits import escape
from app.measure.records import Event, EventLog, EventLogError

if TYPE_CHECKING:
    from app.measure.analysis_model import Analysis

FORMAT = "storm-events"
EVENT_TYPES = ("spout_emit", "bolt_emit")  # all that an events.log line can become
MAX_BYTES = 512 * 1024 * 1024  # decompressed, per file: a gzip bomb stops here
MAX_LINES = 20_000_000  # per file, blank ones included
MAX_LINE_BYTES = 1024 * 1024
_ROLLED = re.compile(r"events\.log(?:\.\d+)?(?:\.gz)?")
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


def is_rolled_name(name: str) -> bool:
    """`events.log`, `events.log.3`, `events.log.gz`, `events.log.2.gz`: the names Storm's rolling gives."""
    return _ROLLED.fullmatch(name) is not None


def events_files(folder: str | os.PathLike[str]) -> list[Path]:
    """The events.log files of a folder: its own rolled files, else those of `PORT/` or
    `TOPOLOGY-ID/PORT/` folders below it (a worker-artifacts folder); oldest roll first."""
    d = Path(folder)
    for pattern in ("*", "*/*", "*/*/*"):
        found = [f for f in d.glob(pattern) if f.is_file() and is_rolled_name(f.name)]
        if found:
            return sorted(_once_each(found), key=_roll_order)
    return []


def _once_each(files: list[Path]) -> list[Path]:
    """Each file once: a port folder linked under a second name (or a linked file) is not read twice."""
    seen: set[tuple[int, int]] = set()
    kept: list[Path] = []
    for f in sorted(files, key=lambda f: (f.is_symlink() or f.parent.is_symlink(), str(f))):
        try:
            st = f.stat()
        except OSError:
            kept.append(f)  # its reader names the problem
            continue
        if (st.st_dev, st.st_ino) not in seen:
            seen.add((st.st_dev, st.st_ino))
            kept.append(f)
    return kept


def _roll_order(path: Path) -> tuple[str, int]:
    """Per folder, the highest roll number (the oldest) first and the live `events.log` last."""
    digits = re.findall(r"\.(\d+)", path.name)
    return (str(path.parent), -int(digits[0]) if digits else 0)


def looks_like_events_log(path: str | os.PathLike[str]) -> bool:
    """True for `events.log` (and its rolled files), or a `.log` whose first non-blank line is an event
    inspector line."""
    p = Path(path)
    if is_rolled_name(p.name):
        return True
    from app.core.fileio import iter_lines

    try:  # the first non-blank line of the first 1,000 (a named pipe is refused, not waited on)
        first = next(iter_lines(p, OSError, max_line_bytes=MAX_LINE_BYTES, max_lines=1000), None)
    except OSError:
        return False
    return first is not None and _LINE.match(first[1].rstrip("\n")) is not None


def _seconds(m: re.Match[str], where: str) -> int:
    """Seconds since the epoch as if the worker's zone were UTC (only differences are used); a date Java
    never prints (day 99, 99:99:99, year 0) is refused rather than rolled over."""
    year, month, day = int(m["year"]), _MONTHS[m["mon"]], int(m["day"])
    if not 1970 <= year <= 9999:
        raise EventLogError(f"{where}.date", f"year {m['year']} is not a year Storm ran in (1970 to 9999)")
    if not 1 <= day <= calendar.monthrange(year, month)[1]:
        raise EventLogError(f"{where}.date", f"{m['mon']} {m['day']} {m['year']} is not a day of the calendar")
    if int(m["h"]) > 23 or int(m["m"]) > 59 or int(m["s"]) > 60:
        raise EventLogError(f"{where}.date", f"{m['h']}:{m['m']}:{m['s']} is not a time of day")
    return calendar.timegm((year, month, day, int(m["h"]), int(m["m"]), int(m["s"]), 0, 0, 0))


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


def max_events() -> int:
    """The most events one events.log (its rolled files together) may hold when read in this process:
    each takes about 1.2 kB, so the default 300,000 stays well under 1 GB (STORMBOUND_MAX_EVENTS=N raises it)."""
    text = os.environ.get("STORMBOUND_MAX_EVENTS", "")
    return int(text) if text.isascii() and text.isdigit() and 0 < int(text) < 10**12 else 300_000


def _lines(p: Path, name: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of every non-blank line of a file through the read boundary (app/core/fileio.py), a
    `.gz` file decompressed, read a chunk at a time: at most MAX_BYTES decompressed, MAX_LINES lines and
    MAX_LINE_BYTES per line, so that neither a gzip bomb nor a file of newlines fills the memory."""
    from app.core.fileio import iter_lines

    for number, text in iter_lines(p, lambda reason: EventLogError(name, reason), max_line_bytes=MAX_LINE_BYTES,
                                   max_bytes=MAX_BYTES, max_lines=MAX_LINES, gunzip=p.name.endswith(".gz"),
                                   at_line=lambda n, reason: EventLogError(f"{name} line {n}", reason)):
        yield number, text.rstrip("\n").rstrip("\r")


def read_storm_events(path: str | os.PathLike[str]) -> EventLog:
    """An `events.log` (or its rolled files, or a folder of them: see `events_files`) as one EventLog of
    emits (times in seconds from its first line)."""
    p = Path(path)
    files = events_files(p) if p.is_dir() else [p]
    if not files:
        raise EventLogError(str(p), "no events.log files in this folder (nor in PORT/ or TOPOLOGY-ID/PORT/ below it)")
    topologies = sorted({f.relative_to(p).parts[0] for f in files if len(f.relative_to(p).parts) == 3}) \
        if p.is_dir() else []
    if len(topologies) > 1:
        raise EventLogError(str(p), f"holds the events.log files of {len(topologies)} topologies "
                                    f"({', '.join(topologies[:3])}{', ...' if len(topologies) > 3 else ''}): "
                                    "give one TOPOLOGY-ID folder")
    records: list[tuple[int, str, int, str, int, int]] = []
    limit = max_events()
    for index, f in enumerate(files):
        _records(f, index, len(files) > 1, records, limit)
    if not records:
        raise EventLogError(p.name, "no event inspector lines found")
    start = min(r[0] for r in records)
    events: list[Event] = []
    for stamp, comp, task, msg, number, index in records:
        ident = f"{comp}:{task}:{number}" if len(files) == 1 else f"{comp}:{task}:{index}.{number}"
        if msg:
            events.append(Event(t=float(stamp - start), ev="spout_emit", comp=comp, task=task, tuple=ident, msg=msg))
        else:
            events.append(Event(t=float(stamp - start), ev="bolt_emit", comp=comp, task=task, tuple=ident, anchors=[]))
    events.sort(key=lambda e: e.t)
    return EventLog(events=events, source=str(p))


def _records(p: Path, index: int, several: bool, records: list[tuple[int, str, int, str, int, int]],
             limit: int) -> None:
    """Add (seconds, component, task, message id, line number, file index) of one file's event inspector
    lines to `records`, refusing the log once it holds more than `limit` (before the memory is spent)."""
    name = f"{p.parent.name}/{p.name}" if several else p.name
    names: dict[str, str] = {}  # one string per component and message id prefix, not one per line
    first = len(records)
    for number, line in _lines(p, name):
        m = _LINE.match(line)
        if m is None:
            if len(records) > first:
                continue  # a value with a line break: the rest of the previous tuple
            raise EventLogError(f"{name} line {number}",
                                "not an event inspector line (expected "
                                "'Mon Nov 23 11:33:18 UTC 2026,COMPONENT,TASK,MSGID,[VALUES]')")
        if m["mon"] not in _MONTHS:
            raise EventLogError(f"{name} line {number}.date", f"unknown month '{escape(m['mon'])}'")
        comp, task, msg, _values = _fields(m["rest"], f"{name} line {number}")
        if len(records) >= limit:
            raise EventLogError(name, f"holds over {limit} events, more than this process reads at once "
                                      "(raise it with STORMBOUND_MAX_EVENTS=N, about 1.2 kB each; docs/limits.md)")
        comp = names.setdefault(comp, comp)
        records.append((_seconds(m, f"{name} line {number}"), comp, max(0, task), msg.strip(), number, index))


def apply_storm_events(analysis: Analysis, log: EventLog) -> Analysis:
    """Keep only what an events.log can say: emit rates over whole seconds; notes for the rest."""
    span = max((e.t for e in log.events), default=0.0) - min((e.t for e in log.events), default=0.0) + 1.0
    for stats in analysis.components.values():
        stats.rate_out = stats.emitted / span
        stats.rate_in = None  # no takes in an events.log: unknown, not 0
        stats.taken = stats.acked = stats.failed = None
        stats.bursts, stats.burst_mean, stats.burst_max = 0, None, None
        stats.alpha_mean = stats.alpha_min = stats.alpha_max = stats.alpha_std = None
        stats.sigma = None
    notes = list(getattr(analysis, "notes", []) or [])
    analysis.notes = notes + [n for n in LIMITS if n not in notes]
    return analysis

"""The REST replies one Storm UI import reads (StormUISnapshot) and the figures read from them: names, executor
counts, per-stream emitted counts, the window's seconds, the lag endpoint's readings, and `check_figures`, the
check of every count and latency before the import maps them (app/core/storm/ui/reader.py).
"""

from __future__ import annotations

import math
import re
from typing import Any

from pydantic import BaseModel, Field

from app.core.formats.limits import escape
from app.core.storm.ui.client import StormUIError
from app.core.topology import one_line


class StormUISnapshot(BaseModel):
    """The REST replies one import reads."""

    url: str
    topology_id: str
    window: str
    topology: dict[str, Any]
    components: dict[str, dict[str, Any]] = Field(default_factory=dict)
    all_time_inputs: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    # readings of /api/v1/topology/<id>/lag: (seconds since the first, reply); none when it could not be read
    lag: list[tuple[float, Any]] = Field(default_factory=list)
    lag_error: str | None = None


def is_system(name: Any) -> bool:
    return not isinstance(name, str) or name.startswith("__")


#: characters no component name may hold: controls, line breaks and bidirectional overrides, which
#: would print as something else than the name (a reply is checked as a document's text is shown)
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
#: Storm's largest executor or task count (a Java int)
STORM_MAX_INT = 2**31 - 1


def checked_name(name: str, where: str, what: str) -> str:
    """A component or topology name from the Storm UI, refused (one line) when it holds a control
    character or a bidirectional override, or is longer than 200 characters."""
    if _UNPRINTABLE.search(name) or not name.strip() or len(name) > 200:
        raise StormUIError(where, f"{what} {one_line(repr(name))[:80]}: a name with control characters, line "
                                  "breaks or direction overrides (or blank, or over 200 characters) is refused")
    return name


def executor_count(value: Any, where: str, path: str) -> int:
    """An executor count from the Storm UI: a whole number 1..2^31-1 (missing: 1)."""
    if isinstance(value, int) and not isinstance(value, bool) and value > STORM_MAX_INT:  # float() overflows
        raise StormUIError(where, f"{path}: executors {value!r:.40} is not a whole number up to Storm's largest "
                                  f"{STORM_MAX_INT} (2^31-1)")
    number = as_number(value)
    if number is not None and number < 0:
        raise StormUIError(where, f"{path}: executors {value!r:.40} is negative")
    if number is None or number < 1:
        return 1
    if number > STORM_MAX_INT or number != int(number):
        raise StormUIError(where, f"{path}: executors {value!r:.40} is not a whole number up to Storm's largest "
                                  f"{STORM_MAX_INT} (2^31-1)")
    return int(number)


def as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if number == number and abs(number) != float("inf") else None


def inputs_of(component: dict[str, Any]) -> list[dict[str, Any]]:
    items = component.get("inputStats")
    if not isinstance(items, list):
        return []
    return [i for i in items if isinstance(i, dict) and not is_system(i.get("component"))
            and not is_system(i.get("stream", "default"))]


def emitted_total(component: dict[str, Any]) -> float | None:
    items = component.get("outputStats")
    if not isinstance(items, list):
        return None
    total = 0.0
    for item in items:
        if isinstance(item, dict) and not is_system(item.get("stream", "default")):
            total += as_number(item.get("emitted")) or 0.0
    return total


def emitted_by_stream(component: dict[str, Any]) -> dict[str, float]:
    """Tuples emitted per output stream (`outputStats`, one row per stream), system streams left out."""
    counts: dict[str, float] = {}
    for item in component.get("outputStats") or []:
        if isinstance(item, dict) and not is_system(item.get("stream", "default")):
            stream = str(item.get("stream") or "default")
            counts[stream] = counts.get(stream, 0.0) + (as_number(item.get("emitted")) or 0.0)
    return counts


def streams_read(page: dict[str, Any], snapshot: StormUISnapshot) -> dict[str, set[str]]:
    """Per component, the non-default streams some bolt of the topology reads from it (`inputStats`)."""
    read: dict[str, set[str]] = {}
    for row in page.get("bolts") or []:
        name = row.get("boltId") if isinstance(row, dict) else None
        if not isinstance(name, str) or is_system(name):
            continue
        comp = snapshot.components.get(name, {})
        for item in inputs_of(comp) or snapshot.all_time_inputs.get(name, []):
            stream = item.get("stream")
            if stream not in (None, "default"):
                read.setdefault(str(item.get("component")), set()).add(checked_name(str(stream), snapshot.url,
                                                                                     "stream"))
    return read


def window_seconds(snapshot: StormUISnapshot) -> tuple[float, str]:
    uptime = as_number(snapshot.topology.get("uptimeSeconds"))
    if snapshot.window == "all":
        if not uptime:
            raise StormUIError(snapshot.url, "the topology reports no uptimeSeconds, so all-time counts have no "
                                             "duration: use --window 600")
        return uptime, f"all time ({uptime:g} s of uptime)"
    seconds = float(snapshot.window)
    if uptime and uptime < seconds:
        return uptime, f"the last {uptime:g} s (uptime, shorter than the {seconds:g} s window)"
    return seconds, f"the last {seconds:g} s"


def lag_total(value: Any, depth: int = 0) -> int | None:
    """The sum of every `lag` number in a spout's entry of the lag endpoint (per topic and partition; the shape
    differs between Storm's Kafka spouts), None when it has none."""
    if depth > 8:
        return None
    total: int | None = None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for key, item in items:
        if key == "lag":
            number = as_number(item)
            if number is not None and 0 <= number <= MAX_FIGURE:  # a lag of 10^300 is no reading
                total = (total or 0) + int(number)
        elif isinstance(item, (dict, list)):
            inner = lag_total(item, depth + 1)
            if inner is not None:
                total = (total or 0) + inner
    return total


def lags(reply: Any) -> dict[str, int]:
    """Spout -> its total lag, from one reply of the lag endpoint ({spout: entry} or a list of entries)."""
    entries = reply.items() if isinstance(reply, dict) else \
        ((e.get("spoutId"), e) for e in reply if isinstance(e, dict)) if isinstance(reply, list) else []
    out: dict[str, int] = {}
    for key, entry in entries:
        name = entry.get("spoutId", key) if isinstance(entry, dict) else key
        total = lag_total(entry)
        if isinstance(name, str) and total is not None:
            out[name] = total
    return out


def lag_growth(snapshot: StormUISnapshot) -> tuple[dict[str, int], dict[str, float], float | None]:
    """(each spout's last lag, its growth in tuples/s between the two readings, the seconds between them)."""
    if not snapshot.lag:
        return {}, {}, None
    last = lags(snapshot.lag[-1][1])
    if len(snapshot.lag) < 2:
        return last, {}, None
    first = lags(snapshot.lag[0][1])
    elapsed = snapshot.lag[-1][0] - snapshot.lag[0][0]
    if elapsed <= 0:
        return last, {}, None
    return last, {n: (last[n] - first[n]) / elapsed for n in last if n in first}, elapsed


# the figures of the replies the import reads: each a count or a time, so a number >= 0 (a numeric string for
# the latencies, as the Storm UI sends them), or null when the UI has none (executors: executor_count)
_FIGURES = frozenset({"emitted", "executed", "transferred", "acked", "failed", "tasks",
                      "uptimeSeconds", "workersTotal", "msgTimeout", "executeLatency", "processLatency",
                      "completeLatency", "capacity"})
_LISTS = frozenset({"spouts", "bolts", "inputStats", "outputStats"})
#: the largest figure a reply may hold (10^15 tuples, or ms): beyond it a reply is garbage, not a measurement
MAX_FIGURE = 1e15


def _figure_problem(value: Any) -> str | None:
    """Why `value` is no count or time of the Storm UI, or None."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "is true or false, not a number"
    if isinstance(value, str):
        text = value.strip()
        if len(text) > 40:
            return "is not a number of at most 40 characters"
        try:
            number = float(text)
        except ValueError:
            return "is not a number"
    elif isinstance(value, int):
        if abs(value) > MAX_FIGURE:
            return f"is over {MAX_FIGURE:g}: not a measurement"
        number = float(value)
    elif isinstance(value, float):
        number = value
    else:
        return f"is {type(value).__name__}, not a number"
    if not math.isfinite(number):
        return "is not a finite number"
    if number < 0:
        return "is negative: a count or a latency is at least 0"
    if number > MAX_FIGURE:
        return f"is over {MAX_FIGURE:g}: not a measurement"
    return None


def check_figures(snapshot: StormUISnapshot) -> None:
    """Every count and latency of the replies is null or a number from 0 to 10^15, and the lists the
    import walks are lists: one line naming the reply's field otherwise (-3 ms is no latency: it made
    α 0.0005 ms and σ -7/-1 = 7, then 'bounded')."""
    roots: list[tuple[str, Any]] = [("topology", snapshot.topology)]
    roots += [(f"components.{one_line(str(k))[:60]}", v) for k, v in snapshot.components.items()]
    roots += [(f"components.{one_line(str(k))[:60]}.inputStats (all time)", v)
              for k, v in snapshot.all_time_inputs.items()]
    problem = figures_problem(roots)
    if problem:
        raise StormUIError(snapshot.url, problem)


def figures_problem(roots: list[tuple[str, Any]], with_executors: bool = False) -> str | None:
    """The first count, latency or executor count of the replies (`roots`: (name, reply)) that is not null or a
    number from 0 to 10^15 (executors: a whole number up to 2^31-1), or a list the import walks that is not a
    list, as `field: value problem` (the value cut to 60 characters); None when every one is (executor counts
    only `with_executors`: the import names them in its own words, app/core/storm/ui/reader.py). Used on every
    poll of `record`, `watch` and Live Mode and on every poll a recording holds, not only on the first.
    Iterative: a reply's nesting is already bounded."""
    # a node's path is built only for the message: (parent's path, key or index), joined on failure
    stack: list[tuple[Any, Any]] = [((None, name), node) for name, node in reversed(roots)]
    figures = _FIGURES | {"executors"} if with_executors else _FIGURES
    while stack:
        path, node = stack.pop()
        if type(node) is dict:
            for key, value in node.items():
                kind = type(value)
                if kind is dict or kind is list:
                    if key in figures:
                        return f"{_path_text((path, key))}: {escape(repr(value))} {_figure_problem(value)}"
                    if kind is dict and key in _LISTS:
                        return f"{_path_text((path, key))}: must be a list, not dict"
                    stack.append(((path, key), value))
                    continue
                if key in figures:
                    # the common cases without a call (NaN fails the comparison); a numeric string seen before
                    if value is None or ((kind is int or kind is float) and 0 <= value <= MAX_FIGURE
                                         and (key != "executors" or value == int(value) <= STORM_MAX_INT)) \
                            or (kind is str and value in _FINE_TEXT and key != "executors"):
                        continue
                    problem = _figure_problem(value)
                    if problem is None and key == "executors":
                        number = float(value) if not isinstance(value, str) else float(value.strip())
                        problem = None if number == int(number) and number <= STORM_MAX_INT else \
                            f"is not a whole number up to Storm's largest {STORM_MAX_INT} (2^31-1)"
                    if problem:
                        return f"{_path_text((path, key))}: {escape(repr(value))} {problem}"
                    if kind is str and len(_FINE_TEXT) < 10_000:
                        _FINE_TEXT.add(value)
                elif key in _LISTS and value is not None:
                    return f"{_path_text((path, key))}: must be a list, not {type(value).__name__}"
        elif type(node) is list:
            stack.extend(((path, i), item) for i, item in enumerate(node) if type(item) is dict or type(item) is list)
    return None


#: numeric strings already found to be figures (latencies such as "1.000" recur in every poll)
_FINE_TEXT: set[str] = set()


def _path_text(path: tuple[Any, Any]) -> str:
    """`topology.bolts[1].executed` from the linked (parent, key) pairs of figures_problem."""
    parts: list[str] = []
    node: Any = path
    while node is not None:
        node, key = node
        parts.append(f"[{key}]" if isinstance(key, int) else (f".{one_line(str(key))[:60]}" if node is not None
                                                              else str(key)))
    return "".join(reversed(parts))

"""A running topology from Storm UI's REST API: structure, parallelism and measured timing.

`fetch_storm_ui` reads `/api/v1/topology/summary` (to find the topology by id or name),
`/api/v1/topology/<id>?window=W` and `/api/v1/topology/<id>/component/<c>?window=W` for
every spout and bolt through :class:`StormUIClient` (app/core/formats/storm_ui_client.py:
one deadline per request, same-origin redirects, basic auth or a bearer token, TLS
verification on). `from_storm_ui` maps the replies onto a Topology
(see docs/storm.md for the mapping and its assumptions):

* executors -> a bolt's parallelism (a spout's `executors`);
* α = the executed-weighted mean of the bolt's per-input `executeLatency` (ms -> s);
* σ = tuples emitted on the bolt's own streams / tuples it executed;
* a spout's rate = tuples emitted on its own streams / the window's seconds (the uptime
  when shorter, or for all-time);
* subscriptions = each bolt's `inputStats` (component and stream); the UI does not say
  the grouping, so shuffle is assumed unless a document supplies it (`annotate`);
* `topology.workers`, `topology.acker.executors`, `topology.max.spout.pending` and
  `topology.message.timeout.secs` from the topology's configuration.

System components and streams (`__acker`, `__metrics`, ...) are left out. Each derived
value is returned with the figures it came from. Every failure is a
:class:`StormUIError`: one line naming the URL and what went wrong.
"""

from __future__ import annotations

import math
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from app.core.formats import FormatError
from app.core.formats.storm_ui_client import DEFAULT_TIMEOUT_S, Credentials, StormUIClient, StormUIError
from app.core.topology import Problem, Topology, new_settings, one_line, parse_topology

WINDOWS: dict[str, str] = {"600": "600", "10800": "10800", "86400": "86400", "all": ":all-time"}
LATENCY_RESOLUTION_MS = 0.0005  # the UI prints latencies with three decimals: "0.000" means below this
STORM_CONFIG = {
    "topology.workers": "workers",
    "topology.acker.executors": "acker_executors",
    "topology.max.spout.pending": "max_spout_pending",
    "topology.message.timeout.secs": "message_timeout_secs",
}


# ---- reading a topology -------------------------------------------------------------


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


class DerivedValue(BaseModel):
    """One imported value and the figures it came from."""

    path: str
    value: float
    source: str


class StormUIImport(BaseModel):
    """A topology read from the Storm UI, each derived value with its source, and notes."""

    topology: Topology
    derived: list[DerivedValue] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    url: str = ""
    topology_id: str = ""
    window: str = "600"


STORM_VERSION = re.compile(r"^[0-9]+(\.[0-9A-Za-z-]+)*$")
CAPACITY_CONFIG = ("topology.executor.receive.buffer.size", "topology.backpressure.enable",
                   "topology.tick.tuple.freq.secs")


def _system(name: Any) -> bool:
    return not isinstance(name, str) or name.startswith("__")


#: characters no component name may hold: controls, line breaks and bidirectional overrides, which
#: would print as something else than the name (a reply is checked as a document's text is shown)
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
#: Storm's largest executor or task count (a Java int)
STORM_MAX_INT = 2**31 - 1


def _checked_name(name: str, where: str, what: str) -> str:
    """A component or topology name from the Storm UI, refused (one line) when it holds a control
    character or a bidirectional override, or is longer than 200 characters."""
    if _UNPRINTABLE.search(name) or not name.strip() or len(name) > 200:
        raise StormUIError(where, f"{what} {one_line(repr(name))[:80]}: a name with control characters, line "
                                  "breaks or direction overrides (or blank, or over 200 characters) is refused")
    return name


def _executors(value: Any, where: str, path: str) -> int:
    """An executor count from the Storm UI: a whole number 1..2^31-1 (missing: 1)."""
    if isinstance(value, int) and not isinstance(value, bool) and value > STORM_MAX_INT:  # float() overflows
        raise StormUIError(where, f"{path}: executors {value!r:.40} is not a whole number up to Storm's largest "
                                  f"{STORM_MAX_INT} (2^31-1)")
    number = _number(value)
    if number is not None and number < 0:
        raise StormUIError(where, f"{path}: executors {value!r:.40} is negative")
    if number is None or number < 1:
        return 1
    if number > STORM_MAX_INT or number != int(number):
        raise StormUIError(where, f"{path}: executors {value!r:.40} is not a whole number up to Storm's largest "
                                  f"{STORM_MAX_INT} (2^31-1)")
    return int(number)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if number == number and abs(number) != float("inf") else None


def _quote(part: str) -> str:
    return urllib.parse.quote(part, safe="")


def find_topology(client: StormUIClient, wanted: str) -> str:
    """The id of the running topology with this id or name."""
    return str(_find_entry(client, wanted).get("id"))


def _find_entry(client: StormUIClient, wanted: str) -> dict[str, Any]:
    """The summary entry (`/api/v1/topology/summary`) of the running topology with this id or name."""
    path = "/api/v1/topology/summary"
    summary = client.get(path)
    items = summary.get("topologies") if isinstance(summary, dict) else None
    if not isinstance(items, list):
        raise StormUIError(client.url(path), "the reply has no 'topologies' list: is this a Storm UI?")
    entries = [t for t in items if isinstance(t, dict)]
    for t in entries:
        if t.get("id") == wanted:
            return t
    named = [str(t.get("id")) for t in entries if t.get("name") == wanted]
    if len(named) == 1:
        return next(t for t in entries if t.get("name") == wanted)
    if len(named) > 1:
        raise StormUIError(client.base, f"several topologies are named '{wanted}': give one id ({', '.join(named)})")
    running = ", ".join(f"{t.get('name')} ({t.get('id')})" for t in entries) or "none"
    raise StormUIError(client.base, f"no topology '{wanted}' is running (running: {running})")


def fetch_storm_ui(client: StormUIClient, topology: str, window: str = "600",
                   progress: Callable[[str], None] | None = None, lag_interval: float = 0.0) -> StormUISnapshot:
    """Every reply `from_storm_ui` needs, for the topology with this id or name. The lag endpoint is read once,
    or twice `lag_interval` seconds apart (its growth: what the spouts were offered beyond what they emitted)."""
    if window not in WINDOWS:
        raise StormUIError(client.base, f"--window {window}: expected one of {', '.join(WINDOWS)}")
    params = {"window": WINDOWS[window]}
    entry = _find_entry(client, topology)
    ident = str(entry.get("id"))
    path = f"/api/v1/topology/{_quote(ident)}"
    page = client.get(path, params)
    if not (isinstance(page, dict) and isinstance(page.get("spouts"), list) and isinstance(page.get("bolts"), list)):
        raise StormUIError(client.url(path, params), "the reply has no 'spouts' and 'bolts' lists")
    if "stormVersion" not in page and entry.get("stormVersion") is not None:  # the summary has it since 1.x
        page = {**page, "stormVersion": entry.get("stormVersion")}
    snapshot = StormUISnapshot(url=client.base, topology_id=ident, window=window, topology=page)
    names = [_checked_name(str(c.get("spoutId")), client.base, "spout") for c in page["spouts"]
             if isinstance(c, dict) and not _system(c.get("spoutId"))]
    names += [_checked_name(str(c.get("boltId")), client.base, "bolt") for c in page["bolts"]
              if isinstance(c, dict) and not _system(c.get("boltId"))]
    for name in names:
        if progress is not None:
            progress(f"reading component {name}")
        comp_path = f"{path}/component/{_quote(name)}"
        reply = client.get(comp_path, params)
        if not isinstance(reply, dict):
            raise StormUIError(client.url(comp_path, params), "expected a JSON object")
        snapshot.components[name] = reply
        is_bolt = "boltStats" in reply or str(reply.get("componentType") or "").lower() == "bolt" or \
            any(name == b.get("boltId") for b in page["bolts"] if isinstance(b, dict))
        if is_bolt and not _inputs(reply) and window != "all":  # nothing executed in the window: inputs not listed
            again = client.get(comp_path, {"window": WINDOWS["all"]})
            snapshot.all_time_inputs[name] = _inputs(again) if isinstance(again, dict) else []
    _read_lag(client, f"{path}/lag", snapshot, lag_interval, progress)
    return snapshot


def _read_lag(client: StormUIClient, path: str, snapshot: StormUISnapshot, interval: float,
              progress: Callable[[str], None] | None) -> None:
    """One reading of the lag endpoint, or two `interval` seconds apart; a UI without it (before 1.1, or spouts
    that are not Kafka's) is noted, not an error."""
    import time

    start = time.monotonic()
    for reading in range(2 if interval > 0 else 1):
        if reading:
            if progress is not None:
                progress(f"waiting {interval:g} s to read the lag again")
            time.sleep(interval)
        try:
            reply = client.get(path)
        except StormUIError as err:
            snapshot.lag_error = str(err)
            snapshot.lag = []
            return
        snapshot.lag.append((time.monotonic() - start, reply))


def _inputs(component: dict[str, Any]) -> list[dict[str, Any]]:
    items = component.get("inputStats")
    if not isinstance(items, list):
        return []
    return [i for i in items if isinstance(i, dict) and not _system(i.get("component"))
            and not _system(i.get("stream", "default"))]


def _emitted(component: dict[str, Any]) -> float | None:
    items = component.get("outputStats")
    if not isinstance(items, list):
        return None
    total = 0.0
    for item in items:
        if isinstance(item, dict) and not _system(item.get("stream", "default")):
            total += _number(item.get("emitted")) or 0.0
    return total


def _emitted_by_stream(component: dict[str, Any]) -> dict[str, float]:
    """Tuples emitted per output stream (`outputStats`, one row per stream), system streams left out."""
    counts: dict[str, float] = {}
    for item in component.get("outputStats") or []:
        if isinstance(item, dict) and not _system(item.get("stream", "default")):
            stream = str(item.get("stream") or "default")
            counts[stream] = counts.get(stream, 0.0) + (_number(item.get("emitted")) or 0.0)
    return counts


def _streams_read(page: dict[str, Any], snapshot: StormUISnapshot) -> dict[str, set[str]]:
    """Per component, the non-default streams some bolt of the topology reads from it (`inputStats`)."""
    read: dict[str, set[str]] = {}
    for row in page.get("bolts") or []:
        name = row.get("boltId") if isinstance(row, dict) else None
        if _system(name):
            continue
        comp = snapshot.components.get(name, {})
        for item in _inputs(comp) or snapshot.all_time_inputs.get(name, []):
            stream = item.get("stream")
            if stream not in (None, "default"):
                read.setdefault(str(item.get("component")), set()).add(_checked_name(str(stream), snapshot.url,
                                                                                     "stream"))
    return read


def _window_seconds(snapshot: StormUISnapshot) -> tuple[float, str]:
    uptime = _number(snapshot.topology.get("uptimeSeconds"))
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
            number = _number(item)
            if number is not None and number >= 0:
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


def _lag_growth(snapshot: StormUISnapshot) -> tuple[dict[str, int], dict[str, float], float | None]:
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


GROUPINGS_NOTE = ("groupings: the Storm UI does not report them; shuffle assumed (annotate a Flux import to keep the "
                  "real ones)")


def _saturation_notes(observed: dict[str, Any], span: str, timeout: int | None, lag_error: str | None) -> list[str]:
    """What says the measured rates are throttled (app/core/storm/forecast.py, `saturation_signs`), as import notes."""
    from app.core.storm.forecast import saturation_signs
    from app.core.topology import StormObserved

    signs = saturation_signs(StormObserved.model_validate(observed), timeout, span)
    notes = []
    if signs:
        notes.append("saturated: " + "; ".join(signs) + ": under backpressure the Storm UI shows throttled rates, "
                     "so the measured spout rates are what the topology passed, not what was offered")
    if lag_error is not None and signs:
        notes.append(f"lag: not read ({lag_error})")
    elif signs and not observed["lag_growth"]:
        notes.append("lag: give --lag-interval S to read the lag endpoint twice and add its growth to the spout "
                     "rates (the offered load)")
    return notes


def _summary_row(page: dict[str, Any], key: str, name: str) -> dict[str, Any]:
    for row in page.get(key) or []:
        if isinstance(row, dict) and row.get("spoutId" if key == "spouts" else "boltId") == name:
            return row
    return {}


# the figures of the replies the import reads: each a count or a time, so a number >= 0 (a numeric string for
# the latencies, as the Storm UI sends them), or null when the UI has none (executors: _executors)
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
    α 0.0005 ms and σ -7/-1 = 7, then 'bounded'). Iterative: a reply's nesting is already bounded."""
    roots: list[tuple[str, Any]] = [("topology", snapshot.topology)]
    roots += [(f"components.{one_line(str(k))[:60]}", v) for k, v in snapshot.components.items()]
    roots += [(f"components.{one_line(str(k))[:60]}.inputStats (all time)", v)
              for k, v in snapshot.all_time_inputs.items()]
    stack = list(reversed(roots))
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                where = f"{path}.{one_line(str(key))[:60]}"
                if key in _FIGURES:
                    problem = _figure_problem(value)
                    if problem:
                        raise StormUIError(snapshot.url, f"{where}: {one_line(repr(value))[:60]} {problem}")
                elif key in _LISTS and value is not None and not isinstance(value, list):
                    raise StormUIError(snapshot.url, f"{where}: must be a list, not {type(value).__name__}")
                if isinstance(value, (dict, list)):
                    stack.append((where, value))
        elif isinstance(node, list):
            stack.extend((f"{path}[{i}]", item) for i, item in enumerate(node) if isinstance(item, (dict, list)))


def from_storm_ui(snapshot: StormUISnapshot) -> StormUIImport:
    """The topology as the cluster runs it, with rates, α and σ measured over the window."""
    check_figures(snapshot)
    page = snapshot.topology
    seconds, span = _window_seconds(snapshot)
    derived: list[DerivedValue] = []
    notes: list[str] = []

    def record(path: str, value: float, source: str) -> None:
        derived.append(DerivedValue(path=path, value=value, source=source))

    spouts: list[dict[str, Any]] = []
    bolts: list[dict[str, Any]] = []
    edges: dict[tuple[str, str, str | None], dict[str, Any]] = {}
    read = _streams_read(page, snapshot)
    lags, growths, elapsed = _lag_growth(snapshot)
    running: dict[str, int] = {}
    failed, acked, latency_weighted = 0, 0.0, 0.0
    busiest: tuple[float, str] | None = None

    def declare(entry: dict[str, Any], key: str, counts: dict[str, float], per: float | None, what: str) -> None:
        """The component's non-default streams (those it emits on and those read from it), each with
        its σ (ratio): tuples on the stream per `per` tuples; unannotated without a count."""
        name = entry["name"]
        streams = sorted((set(counts) | read.get(name, set())) - {"default"})
        entry["streams"], entry[key] = streams, {}
        for stream in streams:
            path = f"{'spouts' if key == 'stream_ratio' else 'bolts'}.{name}.{key}.{stream}"
            if per:
                entry[key][stream] = round(counts.get(stream, 0.0) / per, 6)
                record(path, entry[key][stream], f"{counts.get(stream, 0.0):g} emitted on stream {stream} / "
                                                 f"{per:g} {what} over {span}")
            else:
                notes.append(f"{path}: no {what} counts over {span}: not annotated")

    for row in page.get("spouts") or []:
        name = row.get("spoutId") if isinstance(row, dict) else None
        if _system(name):
            continue
        _checked_name(name, snapshot.url, "spout")
        comp = snapshot.components.get(name, {})
        executors = _executors(comp.get("executors", row.get("executors")), snapshot.url, f"spouts.{one_line(name)}")
        by_stream = _emitted_by_stream(comp)
        emitted = _emitted(comp)
        where = "emitted on its own streams (component page)"
        if len(set(by_stream) - {"default"}) and by_stream.get("default"):
            emitted, where = by_stream["default"], "emitted on its default stream (component page)"
        if emitted is None:
            emitted, where = _number(row.get("emitted")) or 0.0, "emitted (topology page, all streams)"
        spout: dict[str, Any] = {"name": name, "executors": max(1, executors), "burst": 1, "rate": 1.0,
                                 "class_name": None, "unannotated": []}
        record(f"spouts.{name}.executors", spout["executors"], f"executors = {executors}")
        running[name] = spout["executors"]
        failed += int(_number(row.get("failed")) or 0)
        row_acked = _number(row.get("acked")) or 0.0
        acked += row_acked
        latency_weighted += row_acked * (_number(row.get("completeLatency")) or 0.0)
        growth = growths.get(name, 0.0)
        if growth > 0:  # the source offered more than the spout emitted: backpressure held the rest back
            spout["rate"] = round(emitted / seconds + growth, 6)
            record(f"spouts.{name}.rate", spout["rate"],
                   f"{emitted:g} tuples {where} over {span}, plus the lag's growth of {growth:.4g} tuples/s (lag "
                   f"endpoint, two readings {elapsed or 0:.3g} s apart): the offered load, at least")
        elif emitted > 0:
            spout["rate"] = round(emitted / seconds, 6)
            record(f"spouts.{name}.rate", spout["rate"], f"{emitted:g} tuples {where} over {span}")
        else:
            spout["unannotated"].append("rate")
            notes.append(f"spouts.{name}.rate: emitted nothing over {span}: not annotated")
        record(f"spouts.{name}.burst", 1, "assumed: the Storm UI reports no burst size (one tuple per nextTuple)")
        declare(spout, "stream_ratio", by_stream, emitted if emitted > 0 else None,
                "tuples emitted on its default stream")
        spouts.append(spout)
    for row in page.get("bolts") or []:
        name = row.get("boltId") if isinstance(row, dict) else None
        if _system(name):
            continue
        _checked_name(name, snapshot.url, "bolt")
        comp = snapshot.components.get(name, {})
        executors = _executors(comp.get("executors", row.get("executors")), snapshot.url, f"bolts.{one_line(name)}")
        inputs = _inputs(comp) or snapshot.all_time_inputs.get(name, [])
        executed = sum(_number(i.get("executed")) or 0.0 for i in _inputs(comp))
        weighted = sum((_number(i.get("executed")) or 0.0) * (_number(i.get("executeLatency")) or 0.0)
                       for i in _inputs(comp))
        latency_ms: float | None = weighted / executed if executed else None
        latency_from = "executeLatency per input, weighted by executed (component page)"
        if latency_ms is None and _number(row.get("executed")):
            executed = _number(row.get("executed")) or 0.0
            latency_ms = _number(row.get("executeLatency"))
            latency_from = "executeLatency (topology page)"
        bolt: dict[str, Any] = {"name": name, "parallelism": max(1, executors), "alpha": 1.0, "sigma": 1.0,
                                "class_name": None, "unannotated": []}
        tasks = _number(comp.get("tasks", row.get("tasks")))
        if tasks is not None and tasks >= 1:
            bolt["tasks"] = int(tasks)  # what `storm rebalance` can reach
        record(f"bolts.{name}.parallelism", bolt["parallelism"], f"executors = {executors}")
        running[name] = bolt["parallelism"]
        capacity = _number(row.get("capacity", comp.get("capacity")))
        if capacity is not None and (busiest is None or capacity > busiest[0]):
            busiest = (capacity, name)
        if latency_ms is None or not executed:
            bolt["unannotated"].append("alpha")
            notes.append(f"bolts.{name}.alpha: executed nothing over {span}: not annotated")
        else:
            shown = f"{latency_ms:.4g} ms {latency_from} over {executed:g} executed tuples"
            if latency_ms <= 0:
                latency_ms = LATENCY_RESOLUTION_MS
                shown = f"execute latency below the UI's 0.001 ms resolution: {LATENCY_RESOLUTION_MS} ms assumed " \
                        "(an upper bound, so capacity is not overestimated)"
            bolt["alpha"] = round(latency_ms / 1000.0, 12)
            record(f"bolts.{name}.alpha", bolt["alpha"], shown)
        by_stream = _emitted_by_stream(comp)
        emitted = _emitted(comp)
        on = ""
        if set(by_stream) - {"default"}:  # streams of its own: the default stream's σ from its own count
            emitted, on = by_stream.get("default", 0.0), " on its default stream"
        if emitted is None:
            emitted = _number(row.get("emitted"))
        if executed and emitted is not None:
            bolt["sigma"] = round(emitted / executed, 6)
            record(f"bolts.{name}.sigma", bolt["sigma"], f"{emitted:g} emitted{on} / {executed:g} executed over {span}")
        else:
            bolt["unannotated"].append("sigma")
            notes.append(f"bolts.{name}.sigma: no executed or emitted counts over {span}: not annotated")
        declare(bolt, "stream_sigma", by_stream, executed or None, "executed tuples")
        bolts.append(bolt)
        for item in inputs:
            source = str(item.get("component"))
            stream = item.get("stream")
            stream = None if stream in (None, "default") else str(stream)
            edges.setdefault((source, name, stream), {"source": source, "target": name, "grouping": "shuffle",
                                                      "stream": stream})
    names = {s["name"] for s in spouts} | {b["name"] for b in bolts}
    subscriptions = []
    for (source, target, _stream), edge in edges.items():
        if source not in names:
            notes.append(f"bolts.{target}: input from unknown component '{source}' left out")
            continue
        subscriptions.append(edge)
    if subscriptions:
        notes.append(GROUPINGS_NOTE)
    config = page.get("configuration") if isinstance(page.get("configuration"), dict) else {}
    storm: dict[str, Any] = {"sources": {}}
    for key, attr in STORM_CONFIG.items():
        value = config.get(key)
        if attr == "message_timeout_secs" and value is None:
            value = page.get("msgTimeout")
        least = 0 if attr == "acker_executors" else 1
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= least:
            if value > STORM_MAX_INT:
                raise StormUIError(snapshot.url, f"configuration.{key}: {one_line(repr(value))[:60]} is over Storm's "
                                                 f"largest {STORM_MAX_INT} (2^31-1)")
            storm[attr] = int(value)
            record(f"storm.{attr}", int(value), f"{key} in the topology configuration")
    # the settings the capacity figures read (app/core/headroom.py): kept in the document's Storm config
    kept = {key: config[key] for key in CAPACITY_CONFIG if config.get(key) is not None}
    if kept:
        storm["config"] = kept
    version = page.get("stormVersion")
    if isinstance(version, str) and STORM_VERSION.match(version.strip()) and len(version.strip()) <= 40:
        storm["storm_version"] = version.strip()
        notes.append(f"Storm {one_line(version.strip())} (stormVersion): the capacity estimates assume its defaults")
    elif version is not None:
        notes.append(f"stormVersion {one_line(str(version))[:60]} is not a version: Storm 2.x's defaults assumed")
    storm["running_executors"] = running
    observed: dict[str, Any] = {"window_seconds": seconds, "failed": max(0, failed), "lag": lags,
                                "lag_growth": {n: round(g, 6) for n, g in growths.items()}}
    if acked > 0:
        observed["complete_latency_ms"] = round(latency_weighted / acked, 3)
    if busiest is not None:
        observed["busiest_capacity"], observed["busiest_bolt"] = busiest
    storm["observed"] = observed
    notes += _saturation_notes(observed, span, storm.get("message_timeout_secs"), snapshot.lag_error)
    workers = _number(page.get("workersTotal"))
    if "workers" not in storm and workers:
        storm["workers"] = int(workers)
        record("storm.workers", int(workers), "workersTotal on the topology page")
    storm["sources"] = {d.path: d.source for d in derived if not d.path.startswith("storm.")}
    name = _checked_name(str(page.get("name") or snapshot.topology_id), snapshot.url, "topology")
    # Storm's executors take the next tuple as soon as they finish one: the model idles for no time
    data = {"name": name, "spouts": spouts, "bolts": bolts,
            "subscriptions": subscriptions, "storm": storm, "settings": {"max_idle_time": new_settings().max_idle_time},
            "description": f"Read from {snapshot.url} (topology {snapshot.topology_id}, {span})."}
    try:
        topo = parse_topology(data)
    except FormatError:
        raise
    except Exception as err:  # noqa: BLE001 - a reply that makes no topology: one line
        problems = getattr(err, "problems", None)
        first = problems[0] if problems else Problem("", str(err))
        raise StormUIError(snapshot.url, f"the replies do not make a topology: {first}") from None
    from app.core.layout import layered_layout

    topo = topo.model_copy(update={"layout": layered_layout(topo)})
    return StormUIImport(topology=topo, derived=derived, notes=notes, url=snapshot.url,
                         topology_id=snapshot.topology_id, window=snapshot.window)


def read_storm_ui(url: str, topology: str, window: str = "600", credentials: Credentials | None = None,
                  timeout_s: float = DEFAULT_TIMEOUT_S, cafile: str | None = None,
                  progress: Callable[[str], None] | None = None, lag_interval: float = 0.0) -> StormUIImport:
    """Fetch and map in one call (the CLI and the GUI's worker both use it)."""
    client = StormUIClient(url, credentials, timeout_s=timeout_s, cafile=cafile)
    return from_storm_ui(fetch_storm_ui(client, topology, window, progress=progress, lag_interval=lag_interval))


def onto_notes(measured: StormUIImport) -> list[str]:
    """The import's notes that still hold when it annotates a document: the document keeps its groupings."""
    return [n for n in measured.notes if n != GROUPINGS_NOTE]


def annotate(document: Topology, measured: StormUIImport) -> tuple[Topology, list[str]]:
    """`document` (say a Flux import) with the cluster's rates, bursts, α and σ, matched by name.

    The document keeps its structure, groupings, class names and parallelism (a
    different executor count on the cluster is reported, and kept as what runs); the cluster fills the Storm
    settings the document lacks. What does not match is reported, not guessed. Give the caller's notes
    with `onto_notes(measured)`.
    """
    ui = measured.topology
    notes: list[str] = []
    ui_spouts = {s.name: s for s in ui.spouts}
    ui_bolts = {b.name: b for b in ui.bolts}
    sources = dict(document.storm.sources)
    spouts = []
    for s in document.spouts:
        m = ui_spouts.get(s.name)
        if m is None:
            notes.append(f"spouts.{s.name}: not on the cluster: left as it was")
            spouts.append(s)
            continue
        update: dict[str, Any] = {}
        for field in ("rate", "burst"):
            if field not in m.unannotated:
                update[field] = getattr(m, field)
                sources[f"spouts.{s.name}.{field}"] = ui.storm.sources.get(f"spouts.{s.name}.{field}", "Storm UI")
        update["unannotated"] = [f for f in s.unannotated if f not in update]
        spouts.append(s.model_copy(update=update))
    bolts = []
    for b in document.bolts:
        m = ui_bolts.get(b.name)
        if m is None:
            notes.append(f"bolts.{b.name}: not on the cluster: left as it was")
            bolts.append(b)
            continue
        update = {"tasks": m.tasks} if m.tasks is not None else {}
        if m.parallelism != b.parallelism:
            notes.append(f"bolts.{b.name}.parallelism: {b.parallelism} in the document, {m.parallelism} executors on "
                         "the cluster: the document's kept (it is what a repair changes; α does not depend on it); "
                         "storm rebalance lines start from the cluster's")
        for field in ("alpha", "sigma"):
            if field not in m.unannotated:
                update[field] = getattr(m, field)
                sources[f"bolts.{b.name}.{field}"] = ui.storm.sources.get(f"bolts.{b.name}.{field}", "Storm UI")
        update["unannotated"] = [f for f in b.unannotated if f not in update]
        measured_streams = {n: v for n, v in m.stream_sigma.items() if n in b.streams}
        if measured_streams:  # the document's declared streams, with the cluster's σ where it has one
            update["stream_sigma"] = {**b.stream_sigma, **measured_streams}
            for n in measured_streams:
                path = f"bolts.{b.name}.stream_sigma.{n}"
                sources[path] = ui.storm.sources.get(path, "Storm UI")
        bolts.append(b.model_copy(update=update))
    known = {c.name for c in document.components}
    for c in ui.components:
        if c.name not in known:
            notes.append(f"{c.kind}s.{c.name}: runs on the cluster but is not in the document: ignored")
    names = {c.id: c.name for c in document.components}
    ui_names = {c.id: c.name for c in ui.components}
    mine = {(names[s.source], names[s.target]) for s in document.subscriptions}
    theirs = {(ui_names[s.source], ui_names[s.target]) for s in ui.subscriptions}
    for a, b in sorted(theirs - mine):
        notes.append(f"subscriptions.{a}->{b}: seen on the cluster but not in the document")
    storm_update = {attr: getattr(ui.storm, attr) for attr in (*STORM_CONFIG.values(), "storm_version")
                    if getattr(document.storm, attr) is None and getattr(ui.storm, attr) is not None}
    config = {**{k: v for k, v in ui.storm.config.items() if k not in document.storm.config}, **document.storm.config}
    # what runs now and what the UI showed are the cluster's, whatever the document says
    storm = document.storm.model_copy(update={**storm_update, "sources": sources, "config": config,
                                              "running_executors": dict(ui.storm.running_executors),
                                              "observed": ui.storm.observed})
    return document.model_copy(update={"spouts": spouts, "bolts": bolts, "storm": storm}), notes

"""Storm constructs of a Flux bolt that change how it holds tuples (docs/model.md section 10): windows
(`BaseWindowedBolt`, configured through `configMethods` such as `withWindow` and `withTumblingWindow`) and joins
(Storm's `JoinBolt`, Metron's enrichment and threat-intelligence join bolts). A window on arrival time of Count
or Duration components, of one kind or mixed (docs/model.md section 10.4), becomes the document's `window`
(`window_field`); anything else the import describes in
one phrase (`unmodelled`), which the document keeps in the bolt's `unmodelled` field so that every answer about
the bolt says its verdict reads it as an ordinary bolt."""

from __future__ import annotations

from typing import Any

from app.core.formats.limits import escape

#: BaseWindowedBolt's configuration methods (Storm 1.x and 2.x) that make a bolt windowed
WINDOW_METHODS = ("withWindow", "withTumblingWindow", "withTimestampField", "withTimestampExtractor", "withLag",
                  "withWatermarkInterval", "withLateTupleStream")
#: bolts that join streams: a tuple waits for its partners before anything is emitted
JOIN_CLASSES = {
    "org.apache.storm.bolt.JoinBolt": "Storm's JoinBolt",
    "org.apache.metron.enrichment.bolt.EnrichmentJoinBolt": "Metron's enrichment join",
    "org.apache.metron.enrichment.bolt.ThreatIntelJoinBolt": "Metron's threat intelligence join",
}
#: a Metron join's cache: the messages it holds while it waits for their other branches, and for how long (minutes)
JOIN_METHODS = ("withMaxCacheSize", "withMaxTimeRetain")
STORM_JOIN = "org.apache.storm.bolt.JoinBolt"  # joins what its window holds and waits for nothing (model.md 11)
_WINDOW_TYPES = ("BaseWindowedBolt$Count", "BaseWindowedBolt$Duration", "BaseWindowedBolt.Count",
                 "BaseWindowedBolt.Duration")


def _argument(arg: Any, components: dict[str, dict[str, Any]]) -> str:
    """One configMethods argument as written: a value, or a referenced component as Class(args)."""
    if isinstance(arg, dict) and isinstance(arg.get("ref"), str):
        comp = components.get(arg["ref"])
        if comp is None:
            return escape(arg["ref"])
        short = str(comp.get("className", "")).rsplit(".", 1)[-1]
        if short.endswith(_WINDOW_TYPES) or "$" in short:
            short = short.rsplit("$", 1)[-1]
        args = comp.get("constructorArgs")
        inner = ", ".join(escape(str(a)) for a in args) if isinstance(args, list) else ""
        return f"{short}({inner})"
    return escape(repr(arg) if isinstance(arg, str) else str(arg))


def unmodelled(item: dict[str, Any], class_name: str | None, components: dict[str, dict[str, Any]]) -> str | None:
    """The phrase naming the constructs of a Flux bolt definition the model lacks (None: an ordinary bolt), e.g.
    `a windowed bolt (withWindow(Count(5), Count(3)))` or `a join (Storm's JoinBolt, withTumblingWindow(...))`."""
    methods = item.get("configMethods")
    window = []
    join = JOIN_CLASSES.get(class_name or "")
    for m in methods if isinstance(methods, list) else []:
        if isinstance(m, dict) and (m.get("name") in WINDOW_METHODS or (join and m.get("name") in JOIN_METHODS)):
            args = m.get("args")
            shown = ", ".join(_argument(a, components) for a in args) if isinstance(args, list) else ""
            window.append(f"{m['name']}({shown})")
    if join is not None:
        return f"a join ({', '.join([join, *window])})"
    if window:
        phrase, why = f"a windowed bolt ({', '.join(window)})", _why_not(item, components)
        return f"{phrase}: {why}" if why and len(phrase) + len(why) < 990 else phrase  # (`unmodelled`: 1,000 at most)
    return None


#: the event-time methods of a window: windows on the tuples' own time stamps and watermarks (docs/model.md 10.1)
_EVENT_TIME = ("withTimestampField", "withTimestampExtractor", "withLag", "withWatermarkInterval",
               "withLateTupleStream")


def _why_not(item: dict[str, Any], components: dict[str, dict[str, Any]]) -> str:
    """What of a window the model does not have, in a phrase (empty: nothing more precise than its methods): a window
    on event time, or one sliding further than its length (a mixed window is modelled: docs/model.md section 10.4)."""
    methods = item.get("configMethods")
    names = [m.get("name") for m in methods if isinstance(m, dict)] if isinstance(methods, list) else []
    if any(n in _EVENT_TIME for n in names):
        return "a window on event time"
    lengths = window_lengths(item, components)
    if lengths is None:
        return ""
    (kind, length), (slide_kind, slide) = lengths
    if kind == slide_kind and slide > length:
        return "a window sliding further than its length"
    return ""


#: the window methods of a window on arrival time, the windows the document's `window` holds
_ARRIVAL_WINDOWS = ("withWindow", "withTumblingWindow")


def window_field(item: dict[str, Any], class_name: str | None,
                 components: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The document's `window` of a Flux bolt (docs/model.md section 10): one `withWindow(length[, sliding])` or
    `withTumblingWindow(length)` of Count or Duration components, the interval at most the length when both are of
    one kind, and no event-time method; None otherwise (a join, event time, an unreadable window: `unmodelled` says
    it). `withWindow(Count(n))` and `withWindow(Duration(d))` slide by one tuple, as Storm's do (the second a mixed
    window: a time eviction on a count trigger of 1). A mixed window (`withWindow(Count(4),
    Duration(2, SECONDS))`, docs/model.md section 10.4) gives its slide's kind as `slide_kind`."""
    methods = item.get("configMethods")
    used = [m for m in methods if isinstance(m, dict) and m.get("name") in WINDOW_METHODS] \
        if isinstance(methods, list) else []
    if (class_name in JOIN_CLASSES and class_name != STORM_JOIN) or len(used) != 1 \
            or used[0].get("name") not in _ARRIVAL_WINDOWS:
        return None
    args = used[0].get("args")
    lengths = [_length(a, components) for a in args] if isinstance(args, list) else []
    if used[0]["name"] == "withWindow" and len(lengths) == 1 and lengths[0]:
        lengths.append(("count", 1))  # withWindow(Count(n)) or withWindow(Duration(d)): sliding by every tuple
    if not lengths or None in lengths or len(lengths) != (2 if used[0]["name"] == "withWindow" else 1):
        return None
    (kind, length), (slide_kind, slide) = lengths[0], lengths[-1]  # type: ignore[misc]
    if (kind == slide_kind and slide > length) or length < 1 or slide < 1:
        return None
    def size(value: int, unit: str) -> int | float:
        return value if unit == "count" else (value // 1000 if value % 1000 == 0 else value / 1000)
    field: dict[str, Any] = {"kind": "count" if kind == "count" else "duration", "length": size(length, kind)}
    if used[0]["name"] == "withWindow":
        field["slide"] = size(slide, slide_kind)
    if slide_kind != kind:
        field["slide_kind"] = "count" if slide_kind == "count" else "duration"
    return field


def join_field(item: dict[str, Any], class_name: str | None, window: dict[str, Any] | None) -> dict[str, Any] | None:
    """The document's `join` of a Flux bolt (docs/model.md section 11): Metron's join bolts wait for every branch,
    with the cache size and retention their `withMaxCacheSize` and `withMaxTimeRetain` give (minutes); Storm's
    JoinBolt with a window it reads (count, duration or mixed, on arrival time) is its window's rule (`kind`
    window); None otherwise (a JoinBolt over an event-time or unreadable window keeps the `unmodelled` mark)."""
    if class_name == STORM_JOIN:
        return {"kind": "window"} if window is not None else None
    if class_name not in JOIN_CLASSES:
        return None
    field: dict[str, Any] = {"kind": "all"}
    methods = item.get("configMethods")
    for m in methods if isinstance(methods, list) else []:
        args = m.get("args") if isinstance(m, dict) else None
        value = args[0] if isinstance(args, list) and len(args) == 1 else None
        if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
            continue
        if m.get("name") == "withMaxCacheSize" and isinstance(value, int):
            field["max_cache"] = value
        elif m.get("name") == "withMaxTimeRetain":
            field["max_time"] = value
    return field


def flux_components(root: Any) -> dict[str, dict[str, Any]]:
    """A Flux file's `components` by id (those a configMethods argument may reference)."""
    items = root.get("components") if isinstance(root, dict) else None
    return {c["id"]: c for c in items if isinstance(c, dict) and isinstance(c.get("id"), str)} \
        if isinstance(items, list) else {}


#: TimeUnit names a Flux file gives BaseWindowedBolt.Duration, in milliseconds
_UNIT_MS = {"MILLISECONDS": 1, "SECONDS": 1000, "MINUTES": 60_000, "HOURS": 3_600_000, "DAYS": 86_400_000}
Length = tuple[str, int]  # ("count", tuples) or ("ms", milliseconds)


def _length(arg: Any, components: dict[str, dict[str, Any]]) -> Length | None:
    """A window length or sliding interval: a referenced Count(n) or Duration(value, UNIT) component."""
    comp = components.get(arg["ref"]) if isinstance(arg, dict) and isinstance(arg.get("ref"), str) else None
    args = comp.get("constructorArgs") if comp is not None else None
    if comp is None or not isinstance(args, list) or not args or not isinstance(args[0], int) \
            or isinstance(args[0], bool):
        return None
    kind = str(comp.get("className", "")).rsplit("$", 1)[-1].rsplit(".", 1)[-1]
    if kind == "Count" and len(args) == 1:
        return ("count", args[0])
    if kind == "Duration" and len(args) == 2 and args[1] in _UNIT_MS:
        return ("ms", args[0] * _UNIT_MS[args[1]])
    return None


def window_lengths(item: dict[str, Any], components: dict[str, dict[str, Any]]) -> tuple[Length, Length] | None:
    """(window length, sliding interval) of `withWindow(length, sliding)` or `withTumblingWindow(length)` with
    Count or Duration components; None when the file sets them otherwise (the check below then says nothing)."""
    methods = item.get("configMethods")
    for m in methods if isinstance(methods, list) else []:
        args = m.get("args") if isinstance(m, dict) else None
        if not isinstance(args, list):
            continue
        lengths = [_length(a, components) for a in args]
        if m.get("name") == "withWindow" and len(lengths) == 2 and lengths[0] and lengths[1]:
            return lengths[0], lengths[1]
        if m.get("name") == "withWindow" and len(lengths) == 1 and lengths[0]:
            return lengths[0], ("count", 1)  # (Storm's withWindow(length) slides by Count(1))
        if m.get("name") == "withTumblingWindow" and len(lengths) == 1 and lengths[0]:
            return lengths[0], lengths[0]
    return None


def window_refusal(lengths: tuple[Length, Length], config: dict[str, Any]) -> str | None:
    """What Storm's WindowedBoltExecutor refuses when the bolt starts (IllegalArgumentException in prepare): the
    durations among (length, sliding), summed when both are, above topology.message.timeout.secs (unless
    topology.enable.message.timeouts is false); the counts likewise above topology.max.spout.pending."""
    durations = [v for kind, v in lengths if kind == "ms"]
    counts = [v for kind, v in lengths if kind == "count"]
    def which(kind: str) -> str:  # (a mixed window, docs/model.md section 10.4: each kind checked alone)
        return "length + sliding interval" if lengths[0][0] == lengths[1][0] else \
            "length" if lengths[0][0] == kind else "sliding interval"
    timeout = config.get("topology.message.timeout.secs", 30)
    if durations and config.get("topology.enable.message.timeouts") is not False and isinstance(timeout, int) \
            and sum(durations) > timeout * 1000:
        return (f"Storm refuses this window when the bolt starts: its duration ({which('ms')}) "
                f"{sum(durations) / 1000:g} s is more than topology.message.timeout.secs {timeout} s")
    pending = config.get("topology.max.spout.pending")
    if counts and isinstance(pending, int) and not isinstance(pending, bool) and sum(counts) > pending:
        return (f"Storm refuses this window when the bolt starts: its count ({which('count')}) "
                f"{sum(counts)} is more than topology.max.spout.pending {pending}")
    return None

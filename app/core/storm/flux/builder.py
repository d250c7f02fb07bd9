"""Building our Topology from a Flux definition, as Flux's FluxBuilder builds Storm's: each spout and bolt with the
values annotated in its config (else placeholders listed as not annotated: Flux has no timing), the tick tuples'
timer sources (app/core/storm/flux/ticks.py), the subscriptions and the Storm settings.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from app.core.formats import FormatError
from app.core.formats.limits import escape
from app.core.storm.flux.constructs import JOIN_CLASSES, window_refusal
from app.core.storm.flux.model import (
    ANNOTATION_PREFIX,
    ASYNC_BOLTS,
    FLUX_GROUPING,
    IMPORT_SETTINGS,
    PLACEHOLDER_VALUE,
    SETTINGS_KEYS,
    STORM_SETTINGS,
    STORM_VERSION_KEY,
    STREAM_ANNOTATIONS,
    THREADS_KEY,
    UNKNOWN_BOLT_CLASS,
    UNKNOWN_GROUPING_CLASS,
    UNKNOWN_SPOUT_CLASS,
    FluxDocument,
    Vertex,
)
from app.core.storm.flux.parser import read_flux
from app.core.storm.flux.ticks import is_tick, tick_name, tick_spouts
from app.core.storm.flux.yaml_text import FluxError, FluxOptions
from app.core.topology import SCHEMA_VERSION, Problem, Topology, Window, parse_topology


@dataclass
class FluxImport:
    """The imported topology, what the import noticed, and the merged Flux document."""

    topology: Topology
    notes: list[str]
    document: FluxDocument


def _annotation(vertex: Vertex, key: str, kind: type) -> Any:
    if key not in vertex.annotations:
        return None
    value, line = vertex.annotations[key]
    label = f"{vertex.kind}s.{vertex.id}.config.{ANNOTATION_PREFIX}{key}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise FluxError(vertex.file, line or vertex.line, label, f"must be a number, not {escape(repr(value))}")
    if not math.isfinite(value):
        raise FluxError(vertex.file, line or vertex.line, label, f"must be a finite number, not {value}")
    try:
        return kind(value)
    except OverflowError:
        raise FluxError(vertex.file, line or vertex.line, label, "number is too large") from None


def _stream_values(vertex: Vertex) -> dict[str, float]:
    """The `stormbound.stream_sigma` (bolt) or `stormbound.stream_ratio` (spout) mapping of a component."""
    key = STREAM_ANNOTATIONS[vertex.kind]
    if key not in vertex.annotations:
        return {}
    value, line = vertex.annotations[key]
    label = f"{vertex.kind}s.{vertex.id}.config.{ANNOTATION_PREFIX}{key}"
    if not isinstance(value, dict):
        raise FluxError(vertex.file, line or vertex.line, label, "must be a mapping of stream names to numbers")
    out: dict[str, float] = {}
    for stream, number in value.items():
        if isinstance(number, bool) or not isinstance(number, (int, float)) or not math.isfinite(number) \
                or number < 0:
            raise FluxError(vertex.file, line or vertex.line, f"{label}.{stream}",
                            f"must be a finite number of at least 0, not {escape(repr(number))}")
        out[str(stream)] = float(number)
    return out


def _declared_streams(doc: FluxDocument, vertex: Vertex) -> tuple[list[str], dict[str, float]]:
    """Every `streamId` the file's streams read from `vertex` (and every stream its annotation names),
    besides 'default', with the σ (ratio) annotated for it; the others stay unannotated."""
    values = _stream_values(vertex)
    names = {s.stream_id for s in doc.streams if s.source == vertex.id and s.stream_id not in (None, "default")}
    names |= set(values) - {"default"}
    return sorted(n for n in names if n is not None), {k: v for k, v in values.items() if k != "default"}


def _window_note(bolt: str, window: dict[str, Any]) -> str:
    """What the import says of a bolt whose window became its `window` (docs/model.md section 10)."""
    parsed = Window.model_validate(window)
    phrase = parsed.phrase()
    if parsed.mixed:
        trigger, acks = (("whole slides of tuples, as a count window's (10.2)",
                          "at the first trigger at least its length in time after it arrived")
                         if parsed.trigger == "count" else
                         ("a timer, as a duration window's (10.3)", "once its length in tuples came after it"))
        return (f"bolts.{bolt}: a windowed bolt ({phrase}): a mixed window, its trigger {trigger}, a tuple acked "
                f"{acks}; the rate check, the simulation, the solver, the linear program and the certifier have it; no "
                "bound on a tuple's hold holds in every run (docs/model.md section 10.4)")
    if window["kind"] == "count":
        return (f"bolts.{bolt}: a windowed bolt ({phrase}): its count window is its window; the rate check has it (α "
                "is one execute(TupleWindow), σ per tuple received), and so do the simulation, the solver, the linear "
                "program and the certifier (docs/model.md section 10)")
    return (f"bolts.{bolt}: a windowed bolt ({phrase}): its duration window, a timer on arrival time, is its window; "
            "the rate check (with failures and worker deaths too), the latency bounds, growth by rates, the flood "
            "proofs, the simulation, the solver, the linear program and the certifier have it (α is one "
            "execute(TupleWindow), σ per tuple received; docs/model.md section 10.3)")


def _join(doc: FluxDocument, vertex: Vertex, bolt: dict[str, Any], notes: list[str]) -> None:
    """A join the model has (docs/model.md section 11), said; a join waiting for every branch that has fewer than two
    input streams in the file keeps the import's mark instead (the model has no join of one branch)."""
    join = vertex.join_field
    if join is None:
        return
    if join["kind"] == "window":
        notes.append(f"bolts.{vertex.id}: Storm's JoinBolt joins what its window holds and waits for nothing: it is "
                     "its window's rule (count, duration or mixed), over the sum of its inputs, its σ the joined "
                     "tuples per tuple received (docs/model.md section 11)")
        return
    branches = {(s.source, s.stream_id or "default") for s in doc.streams if s.target == vertex.id}
    if len(branches) < 2:
        bolt["join"], bolt["unmodelled"] = None, f"a join ({JOIN_CLASSES[vertex.class_name or '']}) of one branch"
        notes.append(f"bolts.{vertex.id}: {bolt['unmodelled']}: the model has no join of fewer than two input streams, "
                     "so it reads this bolt as an ordinary one and every answer about it says so")
        return
    notes.append(f"bolts.{vertex.id}: a join waiting for every branch ({JOIN_CLASSES[vertex.class_name or '']}): it "
                 f"completes a message when each of its {len(branches)} input streams delivered its part; its α is one "
                 f"message's work ({len(branches)} × the execute latency), its σ per message (docs/model.md "
                 "section 11)")


def _threads(doc: FluxDocument, vertex: Vertex, notes: list[str]) -> int | None:
    """An asynchronous bolt's threads per executor (docs/model.md section 8): its `stormbound.threads`, else, for a
    class known to be asynchronous (StormCrawler's FetcherBolt), its config key's value per task times the tasks
    of an executor; None for an ordinary bolt."""
    given = _annotation(vertex, THREADS_KEY, float)
    if given is not None and not given.is_integer():
        value, line = vertex.annotations[THREADS_KEY]
        raise FluxError(vertex.file, line or vertex.line, f"bolts.{vertex.id}.config.{ANNOTATION_PREFIX}{THREADS_KEY}",
                        f"must be a whole number of threads, not {escape(repr(value))}")
    if given is not None or vertex.class_name not in ASYNC_BOLTS:
        return int(given) if given is not None else None
    key, default = ASYNC_BOLTS[vertex.class_name]
    value = doc.config.get(key)
    where = f"{key} {value}"
    if value is None:
        value, where = default, f"{key} not set: the class's default {default}"
    elif isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise FluxError(doc.path, None, f"config.{key}", f"must be a whole number of threads of at least 1, not "
                        f"{escape(repr(value))} (the threads of {vertex.id}, an asynchronous bolt)")
    executors = vertex.parallelism or 1
    tasks = max(vertex.num_tasks or executors, executors)
    per_executor = value * (tasks // executors)
    spread = ""
    if tasks != executors:
        spread = f", {tasks} tasks on {executors} executors"
        if tasks % executors:
            spread += ": every executor counted with the fewest tasks' threads (a lower capacity than Storm's)"
        spread += "; its threads follow its tasks, so a rebalance of its executors alone adds none"
    short = vertex.class_name.rsplit(".", 1)[-1]
    notes.append(f"bolts.{vertex.id}: {short} is asynchronous (execute only enqueues; internal threads fetch): "
                 f"{per_executor} threads per executor ({where}{spread}); its alpha is one tuple's time on a thread, "
                 "the Storm UI's process latency, not its execute latency (docs/model.md section 8)")
    return per_executor


def to_topology(doc: FluxDocument) -> FluxImport:
    """The Stormbound topology Flux would deploy; timing Flux lacks stays unannotated."""
    from app.core.layout import layered_layout

    notes = list(doc.notes)
    fed = {s.target for s in doc.streams}
    feeding = {s.source for s in doc.streams if s.stream_id in (None, "default")}  # its default stream is read
    spouts: list[dict[str, Any]] = []
    for v in doc.spouts.values():
        rate, burst = _annotation(v, "rate", float), _annotation(v, "burst", int)
        spouts.append({"name": v.id, "rate": rate if rate is not None else PLACEHOLDER_VALUE,
                       "burst": burst if burst is not None else 1,
                       "class_name": None if v.class_name == UNKNOWN_SPOUT_CLASS else v.class_name,
                       "executors": v.parallelism if v.parallelism is not None else 1,
                       "unannotated": [k for k, x in (("rate", rate), ("burst", burst)) if x is None]})
        spouts[-1]["streams"], spouts[-1]["stream_ratio"] = _declared_streams(doc, v)
    bolts: list[dict[str, Any]] = []
    checked: list[str] = []
    for v in doc.bolts.values():
        if v.id not in fed:
            notes.append(f"bolts.{v.id}: no stream goes into it, so Flux does not add it to the topology: left out")
            continue
        alpha, sigma = _annotation(v, "alpha", float), _annotation(v, "sigma", float)
        missing = [] if alpha is not None else ["alpha"]
        if sigma is None and v.id in feeding:
            missing.append("sigma")
        bolts.append({"name": v.id, "alpha": alpha if alpha is not None else PLACEHOLDER_VALUE,
                      "sigma": sigma if sigma is not None else (PLACEHOLDER_VALUE if v.id in feeding else 0.0),
                      "parallelism": v.parallelism if v.parallelism is not None else 1,
                      "class_name": None if v.class_name == UNKNOWN_BOLT_CLASS else v.class_name,
                      "tasks": v.num_tasks, "unannotated": missing, "threads": _threads(doc, v, notes),
                      "unmodelled": v.unmodelled, "window": v.window_field, "join": v.join_field})
        _join(doc, v, bolts[-1], notes)
        if v.window_field is not None:
            notes.append(_window_note(v.id, v.window_field))
        if v.unmodelled is not None:
            notes.append(f"bolts.{v.id}: {v.unmodelled}: the model has no windows or joins yet, so it reads this bolt "
                         "as an ordinary one (a FIFO queue, α per batch) and every answer about it says so "
                         "(docs/model.md section 10)")
        refused = window_refusal(v.window, doc.config) if v.window is not None else None
        if refused is not None:
            notes.append(f"bolts.{v.id}: {refused}")
        bolts[-1]["streams"], bolts[-1]["stream_sigma"] = _declared_streams(doc, v)
        if v.annotations.get("checked", (False, None))[0] is True:
            checked.append(v.id)
    ticks = tick_spouts(doc, notes, PLACEHOLDER_VALUE)
    spouts += ticks
    subscriptions = _subscriptions(doc, notes)
    storm, settings = _storm_and_settings(doc)
    data = {
        "schema_version": SCHEMA_VERSION,
        "name": doc.name or doc.path.stem,
        "spouts": spouts,
        "bolts": bolts,
        "subscriptions": subscriptions,
        "settings": settings,
        "verification": {"checked": checked},
        "storm": storm,
    }
    try:
        topo = parse_topology(data)
    except FormatError:
        raise
    except Exception as err:  # a value the model refuses (say a negative annotation): name the file
        problems = getattr(err, "problems", None)
        first = problems[0] if problems else Problem("", str(err))
        raise FluxError(doc.path, None, first.path, first.message) from None
    return FluxImport(topo.model_copy(update={"layout": layered_layout(topo)}), notes, doc)


def _subscriptions(doc: FluxDocument, notes: list[str]) -> list[dict[str, Any]]:
    """The streams as subscriptions (tick tuples from the bolt's timer source); a stream declared again replaces the
    earlier one, as in Storm, and is noted, as is a grouping the model spreads evenly."""
    subscriptions: dict[tuple[str, str, str | None], dict[str, Any]] = {}
    for s in doc.streams:
        if is_tick(s.source, s.stream_id):
            s = replace(s, source=tick_name(s.target))
        key = (s.source, s.target, s.stream_id)
        if key in subscriptions:
            notes.append(f"{s.label}: {s.source} -> {s.target} is declared again; Storm keeps only the last grouping")
        subscriptions[key] = {"source": s.source, "target": s.target, "grouping": s.grouping, "fields": s.fields,
                              "stream": s.stream_id,
                              "custom_class": None if s.custom_class == UNKNOWN_GROUPING_CLASS else s.custom_class}
        if s.grouping in ("all", "global", "direct", "custom"):
            notes.append(f"{s.label}: {FLUX_GROUPING[s.grouping]} grouping into {s.target}: the model spreads "
                         "tuples evenly over its tasks (see docs/storm.md)")
    return list(subscriptions.values())


def _storm_and_settings(doc: FluxDocument) -> tuple[dict[str, Any], dict[str, Any]]:
    """The document's `storm` (the four Storm settings, the Storm version, the rest of the config kept) and its
    settings (an import's, with those the file's `stormbound.*` config gives)."""
    storm: dict[str, Any] = {attr: doc.config[key] for key, attr in STORM_SETTINGS.items()
                             if doc.config.get(key) is not None}
    settings: dict[str, Any] = dict(IMPORT_SETTINGS)
    rest: dict[str, Any] = {}
    for key, value in doc.config.items():
        if key in STORM_SETTINGS:
            continue
        short = key.removeprefix(ANNOTATION_PREFIX)
        if key == STORM_VERSION_KEY and value is not None:
            storm["storm_version"] = str(value)
        elif key.startswith(ANNOTATION_PREFIX) and short in SETTINGS_KEYS:
            settings[short] = value
        else:
            rest[key] = value
    storm["config"] = rest
    return storm, settings


def import_flux(path: str | os.PathLike[str], options: FluxOptions | None = None) -> FluxImport:
    """Read a Flux file (with includes and substitutions) into a Topology; remembers where it came from."""
    options = options or FluxOptions()
    doc = read_flux(path, options)
    result = to_topology(doc)
    storm = result.topology.storm.model_copy(update={
        "flux_file": str(Path(path).resolve()),
        "flux_filter": str(options.filter.resolve()) if options.filter is not None else None,
        "flux_env": options.env,
        "flux_resources": [str(Path(r).resolve()) for r in options.resources],
    })
    result.topology = result.topology.model_copy(update={"storm": storm})
    return result

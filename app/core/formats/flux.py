"""Flux YAML, Apache Storm's topology files: read as Flux reads them and mapped to a Topology.

What is read (docs/storm.md has the whole mapping): `name`, `config` (the four Storm
settings Stormbound uses are taken out, the rest is kept), `spouts` and `bolts` (`id`,
`className`, `parallelism`, `numTasks`), `streams` (`from`, `to`, `grouping` with `type`,
`args`, `streamId`, `customClass`; every `streamId` becomes a declared stream of its source,
tick tuples from `__system` a timer source: app/core/formats/flux_ticks.py); `includes`,
merged with Flux's rules. `${...}` substitution, the safe YAML and the tree checks are
app/core/formats/flux_yaml.py (an unresolved `${...}` is left as it is and noted, as Flux
does); the skeleton export is app/core/formats/flux_export.py, the export that rewrites the
document's own Flux file app/core/formats/flux_repair.py.

Flux has no timing: rates, bursts, α and each stream's σ are placeholders listed as not
annotated (a bolt nobody subscribes to gets σ = 0). A problem is one FluxError line.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from app.core.formats import FormatError
from app.core.formats.flux_ticks import (
    SYSTEM_COMPONENT,
    TICK_FREQ,
    is_tick,
    tick_name,
    tick_spouts,
)
from app.core.formats.flux_yaml import (
    PLACEHOLDER,
    Unresolved,
    check_tree,
    line_of,
    parse_yaml,
    placeholder_problem,
    plain,
    read_flux_text,
    read_properties,
    substitute,
    unresolved_notes,
)
from app.core.formats.flux_yaml import FluxError as FluxError  # the reader's error and options, part of its API
from app.core.formats.flux_yaml import FluxOptions as FluxOptions
from app.core.formats.limits import escape
from app.core.topology import Problem, Topology, new_settings, parse_topology

GROUPINGS: dict[str, str] = {
    "SHUFFLE": "shuffle", "FIELDS": "fields", "ALL": "all", "GLOBAL": "global", "NONE": "none",
    "LOCAL_OR_SHUFFLE": "local_or_shuffle", "DIRECT": "direct", "CUSTOM": "custom",
}
FLUX_GROUPING = {model: flux for flux, model in GROUPINGS.items()}
TOP_LEVEL = ("name", "config", "components", "spouts", "bolts", "streams", "includes", "workerHooks",
             "topologySource")
STORM_SETTINGS: dict[str, str] = {
    "topology.workers": "workers",
    "topology.acker.executors": "acker_executors",
    "topology.max.spout.pending": "max_spout_pending",
    "topology.message.timeout.secs": "message_timeout_secs",
}
# the model's values, kept in each component's `config` by an export
ANNOTATION_KEYS = {"spout": ("rate", "burst"), "bolt": ("alpha", "sigma")}
ANNOTATION_PREFIX = "stormbound."
# per declared stream: a bolt's σ, a spout's ratio (a mapping {stream: number} in the component's config)
STREAM_ANNOTATIONS = {"spout": "stream_ratio", "bolt": "stream_sigma"}
# Storm's executors take the next tuple as soon as they finish one: an import idles for no time
IMPORT_SETTINGS: dict[str, Any] = {"max_idle_time": new_settings().max_idle_time}
# the cluster's Storm version (sets the defaults the capacity estimates assume: docs/storm.md, "Storm versions")
STORM_VERSION_KEY = "stormbound.storm_version"
SETTINGS_KEYS = ("tolerance", "max_idle_time", "init_queues", "emission")
UNKNOWN_SPOUT_CLASS = "stormbound.placeholder.SpoutClass"
UNKNOWN_BOLT_CLASS = "stormbound.placeholder.BoltClass"
UNKNOWN_GROUPING_CLASS = "stormbound.placeholder.GroupingClass"
PLACEHOLDER_VALUE = 1.0


#: Storm takes parallelism and task counts as a Java int: larger values are refused
STORM_MAX_INT = 2**31 - 1


@dataclass
class Vertex:
    """One spout or bolt definition and the file it was read from."""

    kind: str
    id: str
    class_name: str | None
    parallelism: int | None  # None: not given (Flux uses 1)
    file: Path
    line: int
    annotations: dict[str, Any] = field(default_factory=dict)
    num_tasks: int | None = None  # numTasks: None when not given (Storm makes one task per executor)
    tick_secs: Any = None  # its own config's topology.tick.tuple.freq.secs, if any


@dataclass
class Stream:
    """One `streams` entry."""

    source: str
    target: str
    grouping: str
    fields: list[str]
    stream_id: str | None
    custom_class: str | None
    file: Path
    line: int
    label: str


@dataclass
class FluxDocument:
    """A Flux file with its includes merged, as Flux would build it."""

    path: Path
    name: str | None
    config: dict[str, Any]
    spouts: dict[str, Vertex]
    bolts: dict[str, Vertex]
    streams: list[Stream]
    files: list[Path]
    notes: list[str]


@dataclass
class FluxImport:
    """The imported topology, what the import noticed, and the merged Flux document."""

    topology: Topology
    notes: list[str]
    document: FluxDocument


@dataclass
class _Parsed:
    path: Path
    text: str
    root: Any
    unresolved: list[Unresolved] = field(default_factory=list)
    unsubstituted_env: Any = None  # the tree with ${ENV-...} kept as written (None: no ${ENV-...} was substituted)


def load_tree(path: Path, options: FluxOptions, props: dict[str, str] | None) -> _Parsed:
    """Read, substitute, parse and check one Flux file (no includes)."""
    raw = read_flux_text(path)
    text = substitute(raw, props, options, path)
    root = parse_yaml(text, path, options)
    if root is None:
        raise FluxError(path, None, "", "is empty")
    if not isinstance(root, dict):
        raise FluxError(path, 1, "", f"not a Flux file: expected a mapping of {', '.join(TOP_LEVEL[:6])}, ..., "
                                     f"found a {type(plain(root)).__name__}")
    unresolved = check_tree(root, path, options)
    kept = None
    if options.env and "${ENV-" in raw:  # the references themselves, for the config the document keeps
        try:
            kept = parse_yaml(substitute(raw, props, replace(options, env=False), path), path, options)
        except FluxError:
            kept = None
    return _Parsed(path, text, root, unresolved, kept)


def _require_flux(parsed: _Parsed, included: bool = False) -> None:
    root, path = parsed.root, parsed.path
    if "topologySource" in root and not included:
        source = root.get("topologySource")
        cls = source.get("className") if isinstance(source, dict) else None
        raise FluxError(path, line_of(root, "topologySource"), "topologySource",
                        f"the topology is built by Java code{f' ({cls})' if cls else ''}, which Stormbound "
                        "cannot read: import it from the Storm UI while it runs, or describe it with spouts, bolts "
                        "and streams")
    wanted = TOP_LEVEL if included else ("spouts", "bolts", "streams", "includes")  # an include may hold config only
    if not any(k in root for k in wanted):
        raise FluxError(path, 1, "", f"not a Flux file: no {', '.join(wanted[:-1])} or {wanted[-1]}")
    for key in root:
        if key not in TOP_LEVEL:
            raise FluxError(path, line_of(root, key), str(key),
                            f"unknown field (Flux reads {', '.join(TOP_LEVEL)}; it would refuse this file)")


def _resolve_include(include: Any, including: Path, options: FluxOptions, line: int | None,
                     label: str) -> Path:
    if not isinstance(include, dict):
        raise FluxError(including, line, label, "expected a mapping with `file` (and `resource`, `override`)")
    name = include.get("file")
    if not isinstance(name, str) or not name.strip():
        raise FluxError(including, line_of(include, "file") or line, f"{label}.file", "missing or not a string")
    resource = include.get("resource", False)
    if not isinstance(resource, bool):
        raise FluxError(including, line_of(include, "resource") or line, f"{label}.resource", "must be true or false")
    if resource:
        rel = name.lstrip("/")
        candidates = [Path(d) / rel for d in options.resources]
        candidates += [including.parent / rel, including.parent / Path(rel).name]
        for candidate in candidates:
            if candidate.is_file():
                return candidate.resolve()
        looked = ", ".join(dict.fromkeys(str(c.parent) for c in candidates))
        raise FluxError(including, line_of(include, "file") or line, f"{label}.file",
                        f"resource {name} not found (looked in {looked}; give --resources DIR)")
    candidate = Path(name)
    tries = [candidate] if candidate.is_absolute() else [including.parent / candidate, Path.cwd() / candidate]
    for c in tries:
        if c.is_file():
            return c.resolve()
    raise FluxError(including, line_of(include, "file") or line, f"{label}.file",
                    f"included file {name} not found (looked beside {including.name} and in the working folder)")


def _includes(parsed: _Parsed) -> list[tuple[Any, int | None, str]]:
    items = parsed.root.get("includes")
    if items is None:
        return []
    if not isinstance(items, list):
        raise FluxError(parsed.path, line_of(parsed.root, "includes"), "includes", "must be a list")
    return [(inc, line_of(items, i), f"includes[{i}]") for i, inc in enumerate(items)]


def _string(value: Any, path: Path, line: int | None, label: str, required: bool = True) -> str | None:
    if value is not None and not isinstance(value, (str, int)) and isinstance(plain(value), str):
        value = plain(value)  # an explicitly tagged scalar (`!!str s`) is a string all the same
    if value is None:
        if required:
            raise FluxError(path, line, label, "missing")
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise FluxError(path, line, label, f"must be a string, not {type(plain(value)).__name__}")
    text = str(value)
    if required and not text.strip():
        raise FluxError(path, line, label, "must not be empty")
    return text


def _vertices(parsed: _Parsed, key: str) -> list[Vertex]:
    root, path = parsed.root, parsed.path
    items = root.get(key)
    if items is None:
        return []
    if not isinstance(items, list):
        raise FluxError(path, line_of(root, key), key, "must be a list of definitions")
    kind = key[:-1]
    out: list[Vertex] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(items):
        line = line_of(items, i)
        if not isinstance(item, dict):
            raise FluxError(path, line, f"{key}[{i}]", "expected a mapping with id and className")
        ident = _string(item.get("id"), path, line_of(item, "id") or line, f"{key}[{i}].id")
        assert ident is not None
        label = f"{key}.{ident}"
        if ident in seen:
            raise FluxError(path, line, f"{label}.id",
                            f"duplicate id '{ident}' (also line {seen[ident]}; Flux would keep only the last)")
        seen[ident] = line or 0
        class_name = _string(item.get("className"), path, line_of(item, "className") or line, f"{label}.className")
        parallelism, num_tasks = item.get("parallelism"), item.get("numTasks")
        for key, value in (("parallelism", parallelism), ("numTasks", num_tasks)):
            if value is not None:
                if isinstance(value, str) and (var := PLACEHOLDER.search(value)):
                    raise FluxError(path, line_of(item, key), f"{label}.{key}",
                                    placeholder_problem(var.group(1), FluxOptions()))
                if isinstance(value, bool) or not isinstance(value, int):
                    raise FluxError(path, line_of(item, key), f"{label}.{key}",
                                    f"must be a whole number, not {plain(value)!r}")
                if value < 1:
                    raise FluxError(path, line_of(item, key), f"{label}.{key}",
                                    f"must be at least 1 (Storm refuses {value})")
                if value > STORM_MAX_INT:
                    raise FluxError(path, line_of(item, key), f"{label}.{key}",
                                    f"{value:.3g} is over Storm's largest {key} {STORM_MAX_INT} (2^31-1)")
        annotations: dict[str, Any] = {}
        config = item.get("config")
        tick_secs = plain(config.get(TICK_FREQ)) if isinstance(config, dict) else None
        if isinstance(config, dict):
            for name in (*ANNOTATION_KEYS[kind], "checked", STREAM_ANNOTATIONS[kind]):
                if f"{ANNOTATION_PREFIX}{name}" in config:
                    annotations[name] = (plain(config[f"{ANNOTATION_PREFIX}{name}"]),
                                         line_of(config, f"{ANNOTATION_PREFIX}{name}"))
        elif config is not None:
            raise FluxError(path, line_of(item, "config"), f"{label}.config", "must be a mapping")
        out.append(Vertex(kind, ident, class_name, int(parallelism) if parallelism is not None else None,
                          path, line or 0, annotations, int(num_tasks) if num_tasks is not None else None,
                          tick_secs))
    return out


def _streams(parsed: _Parsed) -> list[Stream]:
    root, path = parsed.root, parsed.path
    items = root.get("streams")
    if items is None:
        return []
    if not isinstance(items, list):
        raise FluxError(path, line_of(root, "streams"), "streams", "must be a list")
    out: list[Stream] = []
    for i, item in enumerate(items):
        line = line_of(items, i)
        label = f"streams[{i}]"
        if not isinstance(item, dict):
            raise FluxError(path, line, label, "expected a mapping with from, to and grouping")
        source = _string(item.get("from"), path, line_of(item, "from") or line, f"{label}.from")
        target = _string(item.get("to"), path, line_of(item, "to") or line, f"{label}.to")
        if "streamId" in item:
            raise FluxError(path, line_of(item, "streamId"), f"{label}.streamId",
                            "belongs under grouping (grouping.streamId), where Flux reads it")
        grouping = item.get("grouping")
        gline = line_of(item, "grouping") or line
        if not isinstance(grouping, dict):
            raise FluxError(path, gline, f"{label}.grouping", "missing (a mapping with type)")
        kind = grouping.get("type")
        if kind is not None and not isinstance(kind, str) and isinstance(plain(kind), str):
            kind = plain(kind)  # `type: !!str SHUFFLE`
        tline = line_of(grouping, "type") or gline
        if kind is None:
            raise FluxError(path, tline, f"{label}.grouping.type", f"missing (one of {', '.join(GROUPINGS)})")
        if not isinstance(kind, str) or kind not in GROUPINGS:
            hint = f"; Flux reads it in capitals: {str(kind).upper()}" if str(kind).upper() in GROUPINGS else ""
            raise FluxError(path, tline, f"{label}.grouping.type",
                            f"unknown grouping '{plain(kind)}' (expected one of {', '.join(GROUPINGS)}){hint}")
        args = plain(grouping.get("args"))  # plain strings, also when tagged (`!!str`)
        fields: list[str] = []
        if kind == "FIELDS":
            if not isinstance(args, list) or not args or not all(isinstance(a, str) and a for a in args):
                raise FluxError(path, line_of(grouping, "args") or tline, f"{label}.grouping.args",
                                "a FIELDS grouping needs a list of field names")
            fields = [str(a) for a in args]
        stream_id = _string(grouping.get("streamId"), path, line_of(grouping, "streamId") or tline,
                            f"{label}.grouping.streamId", required=False)
        custom_class = None
        if kind == "CUSTOM":
            custom = grouping.get("customClass")
            cline = line_of(grouping, "customClass") or tline
            if not isinstance(custom, dict):
                raise FluxError(path, cline, f"{label}.grouping.customClass",
                                "a CUSTOM grouping needs customClass with its className")
            custom_class = _string(custom.get("className"), path, line_of(custom, "className") or cline,
                                   f"{label}.grouping.customClass.className")
        assert source is not None and target is not None
        out.append(Stream(source, target, GROUPINGS[kind], fields, stream_id, custom_class, path, line or 0, label))
    return out


def _config(parsed: _Parsed) -> dict[str, Any]:
    config = parsed.root.get("config")
    if config is None:
        return {}
    if not isinstance(config, dict):
        raise FluxError(parsed.path, line_of(parsed.root, "config"), "config", "must be a mapping")
    out = {str(k): (v, line_of(config, k)) for k, v in config.items()}
    written = parsed.unsubstituted_env.get("config") if isinstance(parsed.unsubstituted_env, dict) else None
    if isinstance(written, dict):
        for key, value in written.items():  # ${ENV-...} stays a reference: never a secret or a broker list
            if str(key) in out and str(key) not in STORM_SETTINGS and "${ENV-" in str(plain(value)):
                out[str(key)] = (value, out[str(key)][1])
    return out


def read_flux(path: str | os.PathLike[str], options: FluxOptions | None = None) -> FluxDocument:
    """A Flux file with its includes merged the way Flux merges them."""
    options = options or FluxOptions()
    main_path = Path(path)
    props = read_properties(options.filter) if options.filter is not None else None
    main = load_tree(main_path, options, props)
    _require_flux(main)
    notes: list[str] = []
    files = [main_path.resolve()]
    name = main.root.get("name")
    name_line = line_of(main.root, "name")
    config = _config(main)
    spouts = {v.id: v for v in _vertices(main, "spouts")}
    bolts = {v.id: v for v in _vertices(main, "bolts")}
    streams = _streams(main)
    unresolved = list(main.unresolved)
    for include, line, label in _includes(main):
        target = _resolve_include(include, main_path, options, line, label)
        if target == files[0]:
            raise FluxError(main_path, line, f"{label}.file", f"cyclic include: {target.name} includes itself")
        if target in files:
            earlier = files.index(target) - 1
            raise FluxError(main_path, line, f"{label}.file", f"{target.name} is included twice (also "
                                                              f"includes[{earlier}]): include each file once")
        override = include.get("override", False)
        if not isinstance(override, bool):
            raise FluxError(main_path, line_of(include, "override") or line, f"{label}.override",
                            "must be true or false")
        inc = load_tree(target, options, props)
        _require_flux(inc, included=True)
        files.append(target)
        unresolved += inc.unresolved
        if "topologySource" in inc.root:
            notes.append(f"{target.name}: its topologySource is not merged, as Flux does not merge it")
        for nested, nline, nlabel in _includes(inc):
            try:
                again = _resolve_include(nested, target, options, nline, nlabel)
            except FluxError:
                continue  # Flux does not follow it, so a missing one does not matter
            if again in (files[0], target):
                raise FluxError(target, nline, f"{nlabel}.file",
                                f"cyclic include: {again.name} includes {target.name}, which includes it again")
            notes.append(f"{target.name}: its own includes are not followed, as Flux does not follow them")
        inc_name = inc.root.get("name")
        if inc_name is not None and (name is None or override):
            name, name_line = inc_name, line_of(inc.root, "name")
        for key, value in _config(inc).items():
            if override or key not in config:
                config[key] = value
        for table, found in ((spouts, _vertices(inc, "spouts")), (bolts, _vertices(inc, "bolts"))):
            for vertex in found:
                if vertex.id not in table or override:
                    table[vertex.id] = vertex
                else:
                    notes.append(f"{target.name}: {vertex.kind} '{vertex.id}' is already defined and the include "
                                 "does not override: ignored, as Flux ignores it")
        streams.extend(_streams(inc))
    notes += unresolved_notes(unresolved, options)
    topo_name = _string(name, main_path, name_line, "name", required=False) if name is not None else None
    plain_config = {key: plain(value) for key, (value, _line) in config.items()}
    doc = FluxDocument(main_path, topo_name, plain_config, spouts, bolts, streams, files, notes)
    _check_graph(doc, {key: line for key, (_value, line) in config.items()})
    return doc


def _check_graph(doc: FluxDocument, config_lines: dict[str, int | None]) -> None:
    for ident in doc.spouts:
        if ident in doc.bolts:
            bolt = doc.bolts[ident]
            raise FluxError(bolt.file, bolt.line, f"bolts.{ident}.id", f"'{ident}' is both a spout and a bolt")
    components = ", ".join([*doc.spouts, *doc.bolts])
    fed = {s.target for s in doc.streams}
    for s in doc.streams:
        if is_tick(s.source, s.stream_id):
            if s.target not in doc.bolts:
                raise FluxError(s.file, s.line, f"{s.label}.to", f"unknown bolt '{s.target}' (known: {components})")
            continue
        if s.source not in doc.spouts and s.source not in doc.bolts:
            hint = ("; tick tuples come from __system on the stream __tick" if s.source == SYSTEM_COMPONENT else "")
            raise FluxError(s.file, s.line, f"{s.label}.from",
                            f"unknown component '{s.source}' (known: {components}){hint}")
        if s.target in doc.spouts:
            raise FluxError(s.file, s.line, f"{s.label}.to", f"'{s.target}' is a spout: streams go into bolts")
        if s.target not in doc.bolts:
            raise FluxError(s.file, s.line, f"{s.label}.to", f"unknown bolt '{s.target}' (known: {components})")
        if s.source in doc.bolts and s.source not in fed:
            raise FluxError(s.file, s.line, f"{s.label}.from",
                            f"bolt '{s.source}' receives no stream, so Flux never declares it and Storm refuses "
                            "a subscription to it")
    for key, attr in STORM_SETTINGS.items():
        value = doc.config.get(key)
        if value is None:
            continue
        least = 0 if attr == "acker_executors" else 1
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise FluxError(doc.path, config_lines.get(key), f"config.{key}",
                            f"must be a whole number of at least {least}, not {value!r}")


# ---- Flux -> Topology ----------------------------------------------------------

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
                      "tasks": v.num_tasks, "unannotated": missing})
        bolts[-1]["streams"], bolts[-1]["stream_sigma"] = _declared_streams(doc, v)
        if v.annotations.get("checked", (False, None))[0] is True:
            checked.append(v.id)
    ticks = tick_spouts(doc, notes, PLACEHOLDER_VALUE)
    spouts += ticks
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
    data = {
        "name": doc.name or doc.path.stem,
        "spouts": spouts,
        "bolts": bolts,
        "subscriptions": list(subscriptions.values()),
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


def _absolute(stored: str, folder: Path) -> Path:
    path = Path(stored)
    return path if path.is_absolute() else folder / path


def resolved_paths(topo: Topology, document: str | os.PathLike[str] | None) -> Topology:
    """`topo` with its Flux file, properties filter and resource folders as absolute paths: a relative one is
    relative to the folder of the document it was read from (`import flux -o` writes them so, so that a folder
    moved with its document and Flux file keeps them), else to the working folder."""
    s = topo.storm
    if not (s.flux_file or s.flux_filter or s.flux_resources):
        return topo
    folder = Path(document).resolve().parent if document is not None else Path.cwd()
    update: dict[str, Any] = {
        "flux_file": str(_absolute(s.flux_file, folder)) if s.flux_file else None,
        "flux_filter": str(_absolute(s.flux_filter, folder)) if s.flux_filter else None,
        "flux_resources": [str(_absolute(r, folder)) for r in s.flux_resources],
    }
    return topo.model_copy(update={"storm": s.model_copy(update=update)})


def relative_paths(topo: Topology, document: str | os.PathLike[str]) -> Topology:
    """`topo` (its paths absolute, or relative to the working folder) as written to `document`: the Flux file,
    filter and resources relative to the document's folder where they can be (else absolute)."""
    s = resolved_paths(topo, None).storm
    folder = Path(document).resolve().parent

    def rel(path: str) -> str:
        try:
            return os.path.relpath(path, folder)
        except ValueError:  # another drive (Windows): keep it absolute
            return path

    update: dict[str, Any] = {"flux_file": rel(s.flux_file) if s.flux_file else None,
                              "flux_filter": rel(s.flux_filter) if s.flux_filter else None,
                              "flux_resources": [rel(r) for r in s.flux_resources]}
    return topo.model_copy(update={"storm": s.model_copy(update=update)})


def missing_flux_files(topo: Topology) -> list[tuple[str, str]]:
    """(field, path) of each file or folder the document was imported with that is not there (paths resolved)."""
    s = topo.storm

    def there(path: str, folder: bool) -> bool:
        try:
            return Path(path).is_dir() if folder else Path(path).is_file()
        except (OSError, ValueError):  # a name the system cannot take (too long, a NUL): not there
            return False

    out = []
    if s.flux_file and not there(s.flux_file, False):
        out.append(("storm.flux_file", s.flux_file))
    if s.flux_filter and not there(s.flux_filter, False):
        out.append(("storm.flux_filter", s.flux_filter))
    out += [("storm.flux_resources", r) for r in s.flux_resources if not there(r, True)]
    return out


_HINT_WALK_LIMIT = 5000  # folders looked at when searching a project for a resource the file includes


def find_resource_folder(flux: Path, rel: str) -> Path | None:
    """A folder under the Flux file's folder or its parent that holds the classpath resource `rel` (as a Maven
    project's src/main/resources does), searched breadth-first within a bound."""
    seen = 0
    for top in (flux.parent, flux.parent.parent):
        queue = [top]
        while queue and seen < _HINT_WALK_LIMIT:
            folder = queue.pop(0)
            seen += 1
            if (folder / rel).is_file() and folder != flux.parent:
                return folder
            try:
                queue += sorted(c for c in folder.iterdir() if c.is_dir() and not c.name.startswith("."))
            except OSError:
                continue
    return None


def import_command(path: str | os.PathLike[str]) -> str:
    """The `stormbound import flux` command a Flux file needs (the hint of `check FILE.flux`): `--resources DIR`
    for a classpath resource it includes that is not beside it (with the folder found in the project, else
    DIR), `--filter`/`--env` when a number in it comes from ${...}."""
    flux = Path(path)
    stem = flux.name.split(".")[0] or "topology"
    options = FluxOptions()
    extra: list[str] = []
    for _ in range(5):  # one missing resource folder at a time
        try:
            result = import_flux(flux, options)
        except FluxError as err:
            match = re.search(r"resource (\S+) not found", err.message)
            if match is None:  # a number from ${...} needs its properties file or the environment
                extra += ["--filter FILE.properties"] if "--filter" in err.message else []
                extra += ["--env"] if "--env" in err.message else []
                break
            rel = match.group(1).lstrip("/")
            found = find_resource_folder(flux.resolve(), rel)
            if found is None:
                extra.append(f"--resources DIR  # DIR: the folder holding the classpath resource /{rel}")
                break
            options = replace(options, resources=[*options.resources, found])
            extra.insert(len(options.resources) - 1, f"--resources {found}")
            continue
        del result  # it imports: a ${...} left in a config string is left as Flux leaves it (the import notes it)
        break
    options_text = "".join(f" {e}" for e in extra if "#" not in e)
    command = f"stormbound import flux {os.fspath(path)}{options_text} -o {stem}.storm.json"
    comments = [e.split("#", 1)[1].strip() for e in extra if "#" in e]
    if comments:
        command = f"stormbound import flux {os.fspath(path)}{options_text} --resources DIR -o {stem}.storm.json " \
                  f"({'; '.join(comments)})"
    return command


def options_of(topo: Topology) -> FluxOptions:
    """The options a document was imported with (to read its Flux file again)."""
    s = topo.storm
    return FluxOptions(filter=Path(s.flux_filter) if s.flux_filter else None, env=s.flux_env,
                       resources=[Path(r) for r in s.flux_resources])


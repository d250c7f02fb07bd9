"""Reading a Flux file as Flux's FluxParser reads it: the file and its includes (merged with Flux's rules), the
properties and `${...}` substitution (app/core/storm/flux/yaml_text.py), each spout, bolt and stream checked into
the definition of app/core/storm/flux/model.py. A problem is one FluxError line naming the file, line and field.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from app.core.formats.limits import escape
from app.core.storm.flux.constructs import (
    flux_components,
    join_field,
    unmodelled,
    window_field,
    window_lengths,
)
from app.core.storm.flux.model import (
    ANNOTATION_KEYS,
    ANNOTATION_PREFIX,
    GROUPINGS,
    STORM_MAX_INT,
    STORM_SETTINGS,
    STREAM_ANNOTATIONS,
    THREADS_KEY,
    TOP_LEVEL,
    FluxDocument,
    Stream,
    Vertex,
)
from app.core.storm.flux.ticks import SYSTEM_COMPONENT, TICK_FREQ, is_tick
from app.core.storm.flux.yaml_text import (
    PLACEHOLDER,
    FluxError,
    FluxOptions,
    Unresolved,
    line_of,
    load_yaml,
    parse_yaml,
    placeholder_problem,
    plain,
    read_flux_text,
    read_properties,
    substitute,
    unresolved_notes,
)


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
    root, unresolved = load_yaml(text, path, options)
    if root is None:
        raise FluxError(path, None, "", "is empty")
    if not isinstance(root, dict):
        raise FluxError(path, 1, "", f"not a Flux file: expected a mapping of {', '.join(TOP_LEVEL[:6])}, ..., "
                                     f"found a {type(plain(root)).__name__}")
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
        if ".." in Path(rel).parts or "\\" in rel:  # a class path resource is a name inside the class path
            raise FluxError(including, line_of(include, "file") or line, f"{label}.file",
                            f"resource {escape(name)} leaves the class path ('..'): name a resource inside "
                            "--resources or beside the file")
        candidates = [Path(d) / rel for d in options.resources]
        candidates += [including.parent / rel, including.parent / Path(rel).name]
        for candidate in candidates:
            if candidate.is_file():
                return candidate.resolve()
        looked = ", ".join(dict.fromkeys(escape(str(c.parent)) for c in candidates))
        raise FluxError(including, line_of(include, "file") or line, f"{label}.file",
                        f"resource {escape(name)} not found (looked in {looked}; give --resources DIR)")
    candidate = Path(name)
    tries = [candidate] if candidate.is_absolute() else [including.parent / candidate, Path.cwd() / candidate]
    for c in tries:
        if c.is_file():
            return c.resolve()
    raise FluxError(including, line_of(include, "file") or line, f"{label}.file",
                    f"included file {escape(name)} not found (looked beside {escape(including.name)} and in the "
                    "working folder)")


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
    components = flux_components(root)  # what a windowed bolt's configMethods reference
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
            for name in (*ANNOTATION_KEYS[kind], "checked", STREAM_ANNOTATIONS[kind],
                         *((THREADS_KEY,) if kind == "bolt" else ())):
                if f"{ANNOTATION_PREFIX}{name}" in config:
                    annotations[name] = (plain(config[f"{ANNOTATION_PREFIX}{name}"]),
                                         line_of(config, f"{ANNOTATION_PREFIX}{name}"))
        elif config is not None:
            raise FluxError(path, line_of(item, "config"), f"{label}.config", "must be a mapping")
        window = window_field(item, class_name, components) if kind == "bolt" else None  # a window the model has
        join = join_field(item, class_name, window) if kind == "bolt" else None  # a join the model has
        out.append(Vertex(kind, ident, class_name, int(parallelism) if parallelism is not None else None,
                          path, line or 0, annotations, int(num_tasks) if num_tasks is not None else None,
                          tick_secs, unmodelled(item, class_name, components)
                          if kind == "bolt" and not window and not join else None,
                          window_lengths(item, components) if kind == "bolt" else None, window, join))
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

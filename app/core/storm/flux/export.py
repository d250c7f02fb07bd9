"""A Topology as a Flux file: the skeleton export (when the document has no Flux file of its own).

An imported document's export writes its own Flux file with only the changed values replaced
(app/core/storm/flux/repair.py); without one, this module writes a complete Flux file whose
classes and arguments Stormbound cannot know are named placeholders, with the model's values
kept in each component's `config` under `stormbound.*` (Storm ignores keys it does not know),
so that import -> export -> import returns the same topology.
"""

from __future__ import annotations

import io
from typing import Any

from app.core.storm.flux.constructs import STORM_JOIN
from app.core.storm.flux.model import (
    ANNOTATION_KEYS,
    ANNOTATION_PREFIX,
    FLUX_GROUPING,
    IMPORT_SETTINGS,
    SETTINGS_KEYS,
    STORM_SETTINGS,
    STORM_VERSION_KEY,
    STREAM_ANNOTATIONS,
    THREADS_KEY,
    UNKNOWN_BOLT_CLASS,
    UNKNOWN_GROUPING_CLASS,
    UNKNOWN_SPOUT_CLASS,
)
from app.core.storm.flux.ticks import SYSTEM_COMPONENT, TICK_PREFIX, TICK_STREAM
from app.core.storm.flux.yaml_text import yaml_parser
from app.core.topology import Topology, Window
from app.core.words import listed

WINDOWED_BOLT = "org.apache.storm.topology.base.BaseWindowedBolt"  # its Count and Duration: a window's sizes
METRON_JOIN = "org.apache.metron.enrichment.bolt.EnrichmentJoinBolt"  # a join waiting for every branch

# ---- Topology -> Flux ------------------------------------------------------------


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() and abs(value) < 1e15 else float(value)


def to_flux_data(topo: Topology) -> dict[str, Any]:
    """The Flux document (plain data) for a topology, with the model's values under `stormbound.*`."""
    names = {c.id: c.name for c in topo.components}
    config: dict[str, Any] = {}
    for key, attr in STORM_SETTINGS.items():
        value = getattr(topo.storm, attr)
        if value is not None:
            config[key] = value
    config.update(topo.storm.config)
    if topo.storm.storm_version is not None:
        config[STORM_VERSION_KEY] = topo.storm.storm_version
    defaults = type(topo.settings)(**IMPORT_SETTINGS)  # what an import of the file would assume
    for key in SETTINGS_KEYS:
        value = getattr(topo.settings, key)
        if value != getattr(defaults, key):
            config[f"{ANNOTATION_PREFIX}{key}"] = value if isinstance(value, str) else _number(value)
    checked = set(topo.verification.checked)

    def annotations(c: Any, keys: tuple[str, ...]) -> dict[str, Any]:
        out: dict[str, Any] = {f"{ANNOTATION_PREFIX}{k}": _number(getattr(c, k)) for k in keys
                               if k not in c.unannotated}
        values = c.stream_sigma if c.kind == "bolt" else c.stream_ratio
        if values:
            out[f"{ANNOTATION_PREFIX}{STREAM_ANNOTATIONS[c.kind]}"] = {n: _number(x) for n, x in values.items()}
        if c.id in checked:
            out[f"{ANNOTATION_PREFIX}checked"] = True
        return out

    spouts = []
    for s in topo.spouts:
        if s.name.startswith(TICK_PREFIX):  # a timer: written as the stream from __system below
            continue
        entry: dict[str, Any] = {"id": s.name, "className": s.class_name or UNKNOWN_SPOUT_CLASS,
                                 "parallelism": s.executors or 1}
        extra = annotations(s, ANNOTATION_KEYS["spout"])
        if extra:
            entry["config"] = extra
        spouts.append(entry)
    bolts = []
    components: list[dict[str, Any]] = []
    for b in topo.bolts:
        entry = {"id": b.name, "className": b.class_name or UNKNOWN_BOLT_CLASS, "parallelism": b.parallelism}
        if b.tasks is not None:  # never fewer tasks than executors: Storm would cap the executors there
            entry["numTasks"] = max(b.tasks, b.parallelism)
        extra = annotations(b, ANNOTATION_KEYS["bolt"])
        if b.threads is not None:  # an asynchronous bolt (docs/model.md section 8)
            extra[f"{ANNOTATION_PREFIX}{THREADS_KEY}"] = b.threads
        if extra:
            entry["config"] = extra
        if b.window is not None:  # a windowed bolt (docs/model.md section 10): its configMethods and components
            entry["configMethods"] = [_window_method(b.name, b.window, components)]
        if b.join is not None and b.join.kind == "all":  # Metron's join (docs/model.md section 11): its cache
            entry["className"] = b.class_name or METRON_JOIN
            entry["configMethods"] = [{"name": name, "args": [_number(value)]} for name, value in (
                ("withMaxCacheSize", b.join.max_cache), ("withMaxTimeRetain", b.join.max_time)) if value is not None]
        elif b.join is not None:
            entry["className"] = b.class_name or STORM_JOIN
        bolts.append(entry)
    streams = []
    for sub in topo.subscriptions:
        grouping: dict[str, Any] = {"type": FLUX_GROUPING[sub.grouping]}
        if sub.grouping == "fields":
            grouping["args"] = list(sub.fields)
        if sub.stream is not None:
            grouping["streamId"] = sub.stream
        if sub.grouping == "custom":
            grouping["customClass"] = {"className": sub.custom_class or UNKNOWN_GROUPING_CLASS}
        source = names[sub.source]
        if source.startswith(TICK_PREFIX) and sub.stream == TICK_STREAM:
            source = SYSTEM_COMPONENT
        streams.append({"name": f"{source} --> {names[sub.target]}", "from": source,
                        "to": names[sub.target], "grouping": grouping})
    data: dict[str, Any] = {"name": topo.name}
    if components:
        data["components"] = components
    if config:
        data["config"] = config
    data["spouts"] = spouts
    data["bolts"] = bolts
    data["streams"] = streams
    return data


def _window_method(bolt: str, window: Window, components: list[dict[str, Any]]) -> dict[str, Any]:
    """A window as Flux writes it: `withWindow(length, sliding)` or `withTumblingWindow(length)` of Count or
    Duration components (milliseconds), which are added to `components`; the import reads them back. A mixed window
    (docs/model.md section 10.4) writes its slide in the slide's kind: `withWindow(Count(4), Duration(2000 ms))`."""
    def size(what: str, value: float) -> dict[str, str]:
        ident = f"{bolt}-window-{what}"
        if (window.kind if what == "length" else window.trigger) == "count":
            components.append({"id": ident, "className": f"{WINDOWED_BOLT}$Count", "constructorArgs": [int(value)]})
        else:
            components.append({"id": ident, "className": f"{WINDOWED_BOLT}$Duration",
                               "constructorArgs": [_number(round(value * 1000, 6)), "MILLISECONDS"]})
        return {"ref": ident}
    if window.slide is None:
        return {"name": "withTumblingWindow", "args": [size("length", window.length)]}
    return {"name": "withWindow", "args": [size("length", window.length), size("slide", window.slide)]}


def placeholder_classes(topo: Topology) -> list[str]:
    """The fields of a skeleton export that hold a stormbound.placeholder.* class."""
    names = {c.id: c.name for c in topo.components}
    found = [f"spouts.{s.name}.className" for s in topo.spouts
             if not s.class_name and not s.name.startswith(TICK_PREFIX)]
    found += [f"bolts.{b.name}.className" for b in topo.bolts if not b.class_name]
    found += [f"streams.{names[s.source]}->{names[s.target]}.grouping.customClass.className"
              for s in topo.subscriptions if s.grouping == "custom" and not s.custom_class]
    return found


def skeleton_header(topo: Topology) -> list[str]:
    """The comment lines above a skeleton export: what it holds, and what to fill in before deploying."""
    lines = [f"{topo.name}: written by Stormbound from the document alone.",
             "Flux has no timing: each component's config keeps the model's values under stormbound.*",
             "(Storm ignores them).",
             "Not in the document, so not here: constructorArgs, configMethods (but a window's), properties,",
             "components (but a window's) and includes: add what your classes need before deploying."]
    placeholders = placeholder_classes(topo)
    if placeholders:
        shown = listed(placeholders, 8)
        lines.append(f"Placeholder classes (stormbound.placeholder.*) to replace: {shown}.")
    return lines


def to_flux_bytes(topo: Topology) -> bytes:
    """A Flux YAML file for the topology (className placeholders where the document has none)."""
    yaml = yaml_parser()
    yaml.version = None
    yaml.explicit_start = True
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 4096
    buf = io.StringIO()
    buf.write("".join(f"# {line}\n" for line in skeleton_header(topo)))
    yaml.dump(to_flux_data(topo), buf)
    return buf.getvalue().encode("utf-8")

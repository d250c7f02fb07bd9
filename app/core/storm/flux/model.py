"""The definition Flux reads from a file (Storm Flux's TopologyDef): the spouts, bolts and streams of a Flux
document with its includes merged, and the names Flux and Stormbound give their fields.

Read by app/core/storm/flux/parser.py, built into a Topology by app/core/storm/flux/builder.py, written back by
app/core/storm/flux/export.py (docs/storm.md has the mapping).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.topology import ASYNC_CLASSES, new_settings

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
# an asynchronous bolt's threads per executor (docs/model.md section 8), kept in its config by an export
THREADS_KEY = "threads"
# the asynchronous bolts an import knows by class (the one list: app/core/topology/components.py)
ASYNC_BOLTS = ASYNC_CLASSES
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
    unmodelled: str | None = None  # a window or a join the model lacks (app/core/storm/flux/constructs.py)
    window: Any = None  # (length, sliding) as constructs.window_lengths reads them, if it can
    window_field: dict[str, Any] | None = None  # the document's `window` (constructs.window_field), if it is one
    join_field: dict[str, Any] | None = None  # the document's `join` (constructs.join_field), if it is one


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

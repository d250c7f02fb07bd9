"""A running topology from Storm UI's REST API: structure, parallelism and measured timing.

`fetch_storm_ui` (app/core/storm/ui/fetch.py) reads `/api/v1/topology/summary` (to find the topology by id or name),
`/api/v1/topology/<id>?window=W` and `/api/v1/topology/<id>/component/<c>?window=W` for
every spout and bolt through :class:`StormUIClient` (app/core/storm/ui/client.py:
one deadline per request, same-origin redirects, basic auth or a bearer token, TLS
verification on). `from_storm_ui` (this module) maps the replies onto a Topology
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

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from app.core.formats import FormatError
from app.core.storm.ui.client import DEFAULT_TIMEOUT_S, Credentials, StormUIClient, StormUIError
from app.core.storm.ui.fetch import fetch_storm_ui
from app.core.storm.ui.replies import (
    STORM_MAX_INT,
    StormUISnapshot,
    as_number,
    check_figures,
    checked_name,
    emitted_by_stream,
    emitted_total,
    executor_count,
    inputs_of,
    is_system,
    lag_growth,
    streams_read,
    window_seconds,
)
from app.core.topology import Bolt, Problem, Topology, new_settings, one_line, parse_topology

LATENCY_RESOLUTION_MS = 0.0005  # the UI prints latencies with three decimals: "0.000" means below this
#: a bolt whose process latency is this many times its execute latency looks asynchronous (docs/model.md section 8)
ASYNC_SIGNATURE = 10
STORM_CONFIG = {
    "topology.workers": "workers",
    "topology.acker.executors": "acker_executors",
    "topology.max.spout.pending": "max_spout_pending",
    "topology.message.timeout.secs": "message_timeout_secs",
}


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
    process_alpha: dict[str, float] = Field(default_factory=dict, description=(
        "per bolt, the executed-weighted mean processLatency (s): an asynchronous bolt's α (docs/model.md section 8)"))


STORM_VERSION = re.compile(r"^[0-9]+(\.[0-9A-Za-z-]+)*$")
CAPACITY_CONFIG = ("topology.executor.receive.buffer.size", "topology.backpressure.enable",
                   "topology.tick.tuple.freq.secs")


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


@dataclass
class _Mapping:
    """One `from_storm_ui`: the replies, the window they cover, and what the mapping has derived and noticed."""

    snapshot: StormUISnapshot
    seconds: float
    span: str
    read: dict[str, set[str]]  # per component, the non-default streams some bolt reads from it
    lags: dict[str, int]
    growths: dict[str, float]
    elapsed: float | None
    derived: list[DerivedValue] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)
    spouts: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    bolts: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    edges: dict[tuple[str, str, str | None], dict[str, Any]] = dataclasses.field(default_factory=dict)
    running: dict[str, int] = dataclasses.field(default_factory=dict)
    failed: int = 0
    acked: float = 0.0
    latency_weighted: float = 0.0
    busiest: tuple[float, str] | None = None
    process: dict[str, float] = dataclasses.field(default_factory=dict)  # per bolt: its process latency (s)

    @classmethod
    def of(cls, snapshot: StormUISnapshot) -> _Mapping:
        seconds, span = window_seconds(snapshot)
        read = streams_read(snapshot.topology, snapshot)
        lags, growths, elapsed = lag_growth(snapshot)
        return cls(snapshot, seconds, span, read, lags, growths, elapsed)

    def record(self, path: str, value: float, source: str) -> None:
        self.derived.append(DerivedValue(path=path, value=value, source=source))

    def declare(self, entry: dict[str, Any], key: str, counts: dict[str, float], per: float | None,
                what: str) -> None:
        """The component's non-default streams (those it emits on and those read from it), each with
        its σ (ratio): tuples on the stream per `per` tuples; unannotated without a count."""
        name = entry["name"]
        streams = sorted((set(counts) | self.read.get(name, set())) - {"default"})
        entry["streams"], entry[key] = streams, {}
        for stream in streams:
            path = f"{'spouts' if key == 'stream_ratio' else 'bolts'}.{name}.{key}.{stream}"
            if per:
                entry[key][stream] = round(counts.get(stream, 0.0) / per, 6)
                self.record(path, entry[key][stream], f"{counts.get(stream, 0.0):g} emitted on stream {stream} / "
                                                      f"{per:g} {what} over {self.span}")
            else:
                self.notes.append(f"{path}: no {what} counts over {self.span}: not annotated")

    def add_spout(self, row: dict[str, Any], name: str) -> None:
        """A spout: its executors, its rate (emitted over the window, plus the lag's growth) and its streams."""
        snapshot, span = self.snapshot, self.span
        checked_name(name, snapshot.url, "spout")
        comp = snapshot.components.get(name, {})
        executors = executor_count(comp.get("executors", row.get("executors")), snapshot.url,
                                   f"spouts.{one_line(name)}")
        by_stream = emitted_by_stream(comp)
        emitted = emitted_total(comp)
        where = "emitted on its own streams (component page)"
        if len(set(by_stream) - {"default"}) and by_stream.get("default"):
            emitted, where = by_stream["default"], "emitted on its default stream (component page)"
        if emitted is None:
            emitted, where = as_number(row.get("emitted")) or 0.0, "emitted (topology page, all streams)"
        spout: dict[str, Any] = {"name": name, "executors": max(1, executors), "burst": 1, "rate": 1.0,
                                 "class_name": None, "unannotated": []}
        self.record(f"spouts.{name}.executors", spout["executors"], f"executors = {executors}")
        self.running[name] = spout["executors"]
        self.failed += int(as_number(row.get("failed")) or 0)
        row_acked = as_number(row.get("acked")) or 0.0
        self.acked += row_acked
        self.latency_weighted += row_acked * (as_number(row.get("completeLatency")) or 0.0)
        growth = self.growths.get(name, 0.0)
        if growth > 0:  # the source offered more than the spout emitted: backpressure held the rest back
            spout["rate"] = round(emitted / self.seconds + growth, 6)
            self.record(f"spouts.{name}.rate", spout["rate"],
                        f"{emitted:g} tuples {where} over {span}, plus the lag's growth of {growth:.4g} tuples/s "
                        f"(lag endpoint, two readings {self.elapsed or 0:.3g} s apart): the offered load, at least")
        elif emitted > 0:
            spout["rate"] = round(emitted / self.seconds, 6)
            self.record(f"spouts.{name}.rate", spout["rate"], f"{emitted:g} tuples {where} over {span}")
        else:
            spout["unannotated"].append("rate")
            self.notes.append(f"spouts.{name}.rate: emitted nothing over {span}: not annotated")
        self.record(f"spouts.{name}.burst", 1, "assumed: the Storm UI reports no burst size (one tuple per nextTuple)")
        self.declare(spout, "stream_ratio", by_stream, emitted if emitted > 0 else None,
                     "tuples emitted on its default stream")
        self.spouts.append(spout)

    def add_bolt(self, row: dict[str, Any], name: str) -> None:
        """A bolt: its executors and tasks, α, σ, its streams and the inputs it subscribes to."""
        snapshot, span = self.snapshot, self.span
        checked_name(name, snapshot.url, "bolt")
        comp = snapshot.components.get(name, {})
        executors = executor_count(comp.get("executors", row.get("executors")), snapshot.url,
                                   f"bolts.{one_line(name)}")
        inputs = inputs_of(comp) or snapshot.all_time_inputs.get(name, [])
        executed = sum(as_number(i.get("executed")) or 0.0 for i in inputs_of(comp))
        weighted = sum((as_number(i.get("executed")) or 0.0) * (as_number(i.get("executeLatency")) or 0.0)
                       for i in inputs_of(comp))
        latency_ms: float | None = weighted / executed if executed else None
        latency_from = "executeLatency per input, weighted by executed (component page)"
        if latency_ms is None and as_number(row.get("executed")):
            executed = as_number(row.get("executed")) or 0.0
            latency_ms = as_number(row.get("executeLatency"))
            latency_from = "executeLatency (topology page)"
        bolt: dict[str, Any] = {"name": name, "parallelism": max(1, executors), "alpha": 1.0, "sigma": 1.0,
                                "class_name": None, "unannotated": []}
        tasks = as_number(comp.get("tasks", row.get("tasks")))
        if tasks is not None and tasks >= 1:
            bolt["tasks"] = int(tasks)  # what `storm rebalance` can reach
        self.record(f"bolts.{name}.parallelism", bolt["parallelism"], f"executors = {executors}")
        self.running[name] = bolt["parallelism"]
        capacity = as_number(row.get("capacity", comp.get("capacity")))
        if capacity is not None and (self.busiest is None or capacity > self.busiest[0]):
            self.busiest = (capacity, name)
        if latency_ms is None or not executed:
            bolt["unannotated"].append("alpha")
            self.notes.append(f"bolts.{name}.alpha: executed nothing over {span}: not annotated")
        else:
            shown = f"{latency_ms:.4g} ms {latency_from} over {executed:g} executed tuples"
            if latency_ms <= 0:
                latency_ms = LATENCY_RESOLUTION_MS
                shown = f"execute latency below the UI's 0.001 ms resolution: {LATENCY_RESOLUTION_MS} ms assumed " \
                        "(an upper bound, so capacity is not overestimated)"
            bolt["alpha"] = round(latency_ms / 1000.0, 12)
            self.record(f"bolts.{name}.alpha", bolt["alpha"], shown)
        self.add_process_latency(name, comp, latency_ms if executed else None)
        self.add_sigma(bolt, comp, row, executed)
        self.bolts.append(bolt)
        for item in inputs:
            source = str(item.get("component"))
            stream = item.get("stream")
            stream = None if stream in (None, "default") else str(stream)
            self.edges.setdefault((source, name, stream), {"source": source, "target": name, "grouping": "shuffle",
                                                           "stream": stream})

    def add_process_latency(self, name: str, comp: dict[str, Any], execute_ms: float | None) -> None:
        """A bolt's process latency (receipt to ack), the executed-weighted mean over its inputs: an asynchronous
        bolt's α (docs/model.md section 8); a bolt whose process latency is many times its execute latency is
        said to look asynchronous, since the Storm UI cannot say which bolts are."""
        inputs = inputs_of(comp)
        executed = sum(as_number(i.get("executed")) or 0.0 for i in inputs)
        weighted = sum((as_number(i.get("executed")) or 0.0) * (as_number(i.get("processLatency")) or 0.0)
                       for i in inputs)
        if not executed or weighted <= 0:
            return
        process_ms = weighted / executed
        self.process[name] = round(process_ms / 1000.0, 12)  # not a document value: kept beside the derived ones
        if execute_ms is not None and process_ms >= ASYNC_SIGNATURE * max(execute_ms, LATENCY_RESOLUTION_MS):
            self.notes.append(f"bolts.{name}.alpha: its process latency ({process_ms:.4g} ms) is "
                              f"{process_ms / max(execute_ms, LATENCY_RESOLUTION_MS):.0f} times its execute latency "
                              f"({execute_ms:.4g} ms): if it is asynchronous (execute only enqueues, internal threads "
                              "work: StormCrawler's FetcherBolt), give it its threads in a document and annotate that "
                              "document from the cluster, which then takes the process latency as its α "
                              "(docs/model.md section 8); as imported it is an ordinary bolt with the execute latency")

    def add_sigma(self, bolt: dict[str, Any], comp: dict[str, Any], row: dict[str, Any], executed: float) -> None:
        """A bolt's σ (emitted on its default stream per executed tuple) and its streams' σ."""
        name, span = bolt["name"], self.span
        by_stream = emitted_by_stream(comp)
        emitted = emitted_total(comp)
        on = ""
        if set(by_stream) - {"default"}:  # streams of its own: the default stream's σ from its own count
            emitted, on = by_stream.get("default", 0.0), " on its default stream"
        if emitted is None:
            emitted = as_number(row.get("emitted"))
        if executed and emitted is not None:
            bolt["sigma"] = round(emitted / executed, 6)
            self.record(f"bolts.{name}.sigma", bolt["sigma"],
                        f"{emitted:g} emitted{on} / {executed:g} executed over {span}")
        else:
            bolt["unannotated"].append("sigma")
            self.notes.append(f"bolts.{name}.sigma: no executed or emitted counts over {span}: not annotated")
        self.declare(bolt, "stream_sigma", by_stream, executed or None, "executed tuples")

    def subscriptions(self) -> list[dict[str, Any]]:
        """Each bolt's inputs from a known component (the grouping assumed shuffle)."""
        names = {s["name"] for s in self.spouts} | {b["name"] for b in self.bolts}
        subscriptions = []
        for (source, target, _stream), edge in self.edges.items():
            if source not in names:
                self.notes.append(f"bolts.{target}: input from unknown component '{source}' left out")
                continue
            subscriptions.append(edge)
        if subscriptions:
            self.notes.append(GROUPINGS_NOTE)
        return subscriptions

    def storm_settings(self) -> dict[str, Any]:
        """The document's `storm`: the settings of the topology's configuration, its Storm version, what runs and
        what the UI showed (with the saturation notes), the workers, and the source of every derived value."""
        page, snapshot = self.snapshot.topology, self.snapshot
        configuration = page.get("configuration")
        config: dict[str, Any] = configuration if isinstance(configuration, dict) else {}
        storm: dict[str, Any] = {"sources": {}}
        for key, attr in STORM_CONFIG.items():
            value = config.get(key)
            if attr == "message_timeout_secs" and value is None:
                value = page.get("msgTimeout")
            least = 0 if attr == "acker_executors" else 1
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= least:
                if value > STORM_MAX_INT:
                    raise StormUIError(snapshot.url, f"configuration.{key}: {one_line(repr(value))[:60]} is over "
                                                     f"Storm's largest {STORM_MAX_INT} (2^31-1)")
                storm[attr] = int(value)
                self.record(f"storm.{attr}", int(value), f"{key} in the topology configuration")
        # the settings the capacity figures read (app/core/headroom.py): kept in the document's Storm config
        kept = {key: config[key] for key in CAPACITY_CONFIG if config.get(key) is not None}
        if kept:
            storm["config"] = kept
        version = page.get("stormVersion")
        if isinstance(version, str) and STORM_VERSION.match(version.strip()) and len(version.strip()) <= 40:
            storm["storm_version"] = version.strip()
            self.notes.append(f"Storm {one_line(version.strip())} (stormVersion): the capacity estimates assume its "
                              "defaults")
        elif version is not None:
            self.notes.append(f"stormVersion {one_line(str(version))[:60]} is not a version: Storm 2.x's defaults "
                              "assumed")
        storm["running_executors"] = self.running
        observed: dict[str, Any] = {"window_seconds": self.seconds, "failed": max(0, self.failed),
                                    "acked": max(0, int(self.acked)), "lag": self.lags,
                                    "lag_growth": {n: round(g, 6) for n, g in self.growths.items()}}
        if self.acked > 0:
            observed["complete_latency_ms"] = round(self.latency_weighted / self.acked, 3)
        if self.busiest is not None:
            observed["busiest_capacity"], observed["busiest_bolt"] = self.busiest
        storm["observed"] = observed
        self.notes += _saturation_notes(observed, self.span, storm.get("message_timeout_secs"), snapshot.lag_error)
        workers = as_number(page.get("workersTotal"))
        if "workers" not in storm and workers:
            storm["workers"] = int(workers)
            self.record("storm.workers", int(workers), "workersTotal on the topology page")
        storm["sources"] = {d.path: d.source for d in self.derived if not d.path.startswith("storm.")}
        return storm

    def topology(self, subscriptions: list[dict[str, Any]], storm: dict[str, Any]) -> Topology:
        """The mapped document as a Topology (laid out); a reply that makes none is one StormUIError line."""
        snapshot = self.snapshot
        name = checked_name(str(snapshot.topology.get("name") or snapshot.topology_id), snapshot.url, "topology")
        # Storm's executors take the next tuple as soon as they finish one: the model idles for no time
        data = {"name": name, "spouts": self.spouts, "bolts": self.bolts, "subscriptions": subscriptions,
                "storm": storm, "settings": {"max_idle_time": new_settings().max_idle_time},
                "description": f"Read from {snapshot.url} (topology {snapshot.topology_id}, {self.span})."}
        try:
            topo = parse_topology(data)
        except FormatError:
            raise
        except Exception as err:  # noqa: BLE001 - a reply that makes no topology: one line
            problems = getattr(err, "problems", None)
            first = problems[0] if problems else Problem("", str(err))
            raise StormUIError(snapshot.url, f"the replies do not make a topology: {first}") from None
        from app.core.layout import layered_layout

        return topo.model_copy(update={"layout": layered_layout(topo)})


def from_storm_ui(snapshot: StormUISnapshot) -> StormUIImport:
    """The topology as the cluster runs it, with rates, α and σ measured over the window."""
    check_figures(snapshot)
    page = snapshot.topology
    mapping = _Mapping.of(snapshot)
    for row in page.get("spouts") or []:
        name = row.get("spoutId") if isinstance(row, dict) else None
        if isinstance(name, str) and not is_system(name):
            mapping.add_spout(row, name)
    for row in page.get("bolts") or []:
        name = row.get("boltId") if isinstance(row, dict) else None
        if isinstance(name, str) and not is_system(name):
            mapping.add_bolt(row, name)
    subscriptions = mapping.subscriptions()
    storm = mapping.storm_settings()
    topo = mapping.topology(subscriptions, storm)
    return StormUIImport(topology=topo, derived=mapping.derived, notes=mapping.notes, url=snapshot.url,
                         topology_id=snapshot.topology_id, window=snapshot.window, process_alpha=mapping.process)


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
        mb = ui_bolts.get(b.name)
        if mb is None:
            notes.append(f"bolts.{b.name}: not on the cluster: left as it was")
            bolts.append(b)
            continue
        update = {"tasks": mb.tasks} if mb.tasks is not None else {}
        if mb.parallelism != b.parallelism:
            notes.append(f"bolts.{b.name}.parallelism: {b.parallelism} in the document, {mb.parallelism} executors on "
                         "the cluster: the document's kept (it is what a repair changes; α does not depend on it); "
                         "storm rebalance lines start from the cluster's")
        for field in ("alpha", "sigma"):
            if field == "alpha" and b.threads is not None:  # asynchronous: α is a thread's time, the process latency
                _async_alpha(b, measured, update, sources, notes)
            elif field == "alpha" and b.window is not None and "alpha" not in mb.unannotated:
                _window_alpha(b, mb.alpha, update, sources, notes)
            elif field == "alpha" and b.waits_for_all and "alpha" not in mb.unannotated:
                # a join (docs/model.md section 11): α is one message's work, one execute per branch's part
                branches = len(document.inputs_of(b.id))
                update["alpha"] = mb.alpha * branches
                sources[f"bolts.{b.name}.alpha"] = (f"executeLatency {mb.alpha * 1000:.4g} ms × its {branches} "
                                                    "branches (a join: one execute per part of a message)")
            elif field not in mb.unannotated:
                update[field] = getattr(mb, field)
                sources[f"bolts.{b.name}.{field}"] = ui.storm.sources.get(f"bolts.{b.name}.{field}", "Storm UI")
        update["unannotated"] = [f for f in b.unannotated if f not in update]
        measured_streams = {n: v for n, v in mb.stream_sigma.items() if n in b.streams}
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
    for source, target in sorted(theirs - mine):
        notes.append(f"subscriptions.{source}->{target}: seen on the cluster but not in the document")
    storm_update = {attr: getattr(ui.storm, attr) for attr in (*STORM_CONFIG.values(), "storm_version")
                    if getattr(document.storm, attr) is None and getattr(ui.storm, attr) is not None}
    config = {**{k: v for k, v in ui.storm.config.items() if k not in document.storm.config}, **document.storm.config}
    # what runs now and what the UI showed are the cluster's, whatever the document says
    storm = document.storm.model_copy(update={**storm_update, "sources": sources, "config": config,
                                              "running_executors": dict(ui.storm.running_executors),
                                              "observed": ui.storm.observed})
    return document.model_copy(update={"spouts": spouts, "bolts": bolts, "storm": storm}), notes


def _window_alpha(bolt: Bolt, execute: float, update: dict[str, Any], sources: dict[str, str],
                  notes: list[str]) -> None:
    """A count-windowed bolt's α from the cluster (docs/model.md section 10): one execute(TupleWindow) runs inside
    every S-th execute(tuple), the others only add the tuple, so the execute latency, their mean, is α / S and
    α = S × it (a duration length on a count slide too: its trigger is the count, docs/model.md section 10.4). A
    timer's evaluation (a duration slide, whatever the length) runs on its own thread, outside the execute latency:
    the document's α is kept, said in a note."""
    window = bolt.count_window
    if window is None:
        kind = "a mixed window on a duration slide" if bolt.window and bolt.window.mixed else "a duration window"
        notes.append(f"bolts.{bolt.name}.alpha: {kind} evaluates on its own timer thread, which the execute latency "
                     "does not count: the document's α is kept (docs/model.md section 10)")
        return
    slide = int(window.interval)
    update["alpha"] = execute * slide
    sources[f"bolts.{bolt.name}.alpha"] = (f"executeLatency {execute * 1000:.4g} ms × its slide of {slide} (a "
                                           "windowed bolt: one execute(TupleWindow) per slide)")


def _async_alpha(bolt: Bolt, measured: StormUIImport, update: dict[str, Any], sources: dict[str, str],
                 notes: list[str]) -> None:
    """An asynchronous bolt's α from the cluster (docs/model.md section 8): its process latency, never its execute
    latency (the enqueue); without one it keeps the document's α, said in a note."""
    alpha = measured.process_alpha.get(bolt.name)
    if alpha is None:
        notes.append(f"bolts.{bolt.name}.alpha: asynchronous ({bolt.threads} threads per executor), and the cluster "
                     "reports no process latency for it: the document's α is kept (its execute latency is only the "
                     "enqueue, docs/model.md section 8)")
        return
    update["alpha"] = alpha
    sources[f"bolts.{bolt.name}.alpha"] = (f"processLatency {alpha * 1000:.4g} ms (an asynchronous bolt: one tuple's "
                                           f"time on one of its {bolt.threads} threads per executor)")

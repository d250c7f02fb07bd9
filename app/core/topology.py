"""The Storm topology document: spouts, bolts, subscriptions, settings and layout.

Pydantic v2 models at the boundary of every file, CLI call and worker. Semantic
fields (what the verifier reads) are kept apart from the canvas layout, and every
element carries a stable uuid4 id; subscriptions and checked bolts refer to ids.
Hand-written files may use component *names* where ids are expected; the loader
resolves them (see :func:`parse_topology`).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated, Any, Final, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_serializer,
    model_validator,
)

from app.core.emission import Emission
from app.core.errors import StormboundError
from app.core.units import magnitude_problem

SCHEMA_VERSION: Final = 1

# Storm's groupings; the rate check and the verifier treat every one alike (see docs/storm.md)
#: what a reliable spout does with the tuples lost at a failed bolt (docs/model.md section 7)
Replay = Literal["paced", "at-once", "none"]

Grouping = Literal["shuffle", "fields", "all", "global", "none", "local_or_shuffle", "direct", "custom"]


def new_id() -> str:
    """A fresh uuid4 string for a document element."""
    return str(uuid.uuid4())


#: Storm takes parallelism, executor and task counts as a Java int: larger values are refused
STORM_MAX_INT = 2**31 - 1

def _plain_number(value: Any) -> Any:
    """A number field takes a JSON number: `"0.005"` or `true` is a typo, not a value (pydantic would convert)."""
    if isinstance(value, bool):
        raise ValueError("input should be a valid number, not true or false")
    if isinstance(value, str):
        raise ValueError("input should be a valid number, not a string")
    return value


def _magnitude(unit: str) -> Any:
    def check(value: float) -> float:
        problem = magnitude_problem(value, unit)
        if problem:
            raise ValueError(problem)
        return value
    return AfterValidator(check)


#: the number fields of the model: JSON numbers only; times, rates and ratios within the magnitudes
#: the model takes (0, or 1e-9 to 1e12: app/core/units.py), the one guard before the rate check and the encoding
Number = Annotated[float, BeforeValidator(_plain_number)]
Whole = Annotated[int, BeforeValidator(_plain_number)]
Seconds = Annotated[float, BeforeValidator(_plain_number), _magnitude("s")]
PerSecond = Annotated[float, BeforeValidator(_plain_number), _magnitude("/s")]
Ratio = Annotated[float, BeforeValidator(_plain_number), _magnitude("")]
# (the bounds come first where the type is optional or a dict's value, so that the schema shows them)
PositiveSeconds = Annotated[float, Field(gt=0), BeforeValidator(_plain_number), _magnitude("s")]
NonNegativeSeconds = Annotated[float, Field(ge=0), BeforeValidator(_plain_number), _magnitude("s")]
Count = Annotated[int, Field(ge=1, le=STORM_MAX_INT), BeforeValidator(_plain_number)]


class _Model(BaseModel):
    # NaN and ±inf are refused in every number field (a rate of 1e400 decodes to inf)
    model_config = ConfigDict(extra="forbid", validate_assignment=False, allow_inf_nan=False)


# Fields that Storm imports fill in; left out of a saved file while unset, so older files stay byte-identical.
_SPARSE_FIELDS = ("class_name", "executors", "unannotated", "stream", "custom_class", "streams", "stream_sigma",
                  "stream_ratio", "tasks", "min_ttf")

DEFAULT_STREAM = "default"
#: the stream of a timer spout standing for Storm's tick tuples (app/core/formats/flux_ticks.py)
TICK_STREAM = "__tick"
StreamName = Annotated[str, Field(min_length=1, max_length=200)]
StreamValue = Annotated[float, Field(ge=0), BeforeValidator(_plain_number), _magnitude("")]


class _StormFields(_Model):
    @model_serializer(mode="wrap")
    def _drop_unset(self, handler: Any) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            for key in _SPARSE_FIELDS:
                if key in data and data[key] in (None, [], {}):
                    del data[key]
        return data


class Spout(_StormFields):
    """A source of tuples: emits bursts of up to `burst` tuples, `rate` tuples/s on average."""

    kind: Literal["spout"] = "spout"
    id: str = Field(default_factory=new_id)
    name: str = Field(min_length=1)
    rate: PerSecond = Field(gt=0, description="average tuples emitted per second (λ)")
    burst: Whole = Field(default=1, ge=1, le=STORM_MAX_INT, description="max tuples in one emission (C_EMIT)")
    class_name: str | None = Field(default=None, description="Storm's Java class (kept from Flux or the Storm UI)")
    executors: Count | None = Field(default=None,
                                    description="Storm's parallelism hint; not used by the model")
    unannotated: list[Literal["rate", "burst"]] = Field(
        default_factory=list, description="parameters still holding a placeholder (an import had no value)")
    streams: list[StreamName] = Field(
        default_factory=list, description="declared output streams besides 'default' (which carries the emissions)")
    stream_ratio: dict[str, StreamValue] = Field(
        default_factory=dict, description="tuples on each declared stream per tuple emitted; unset = not annotated")

    def output_streams(self) -> dict[str, float | None]:
        """Every output stream and its ratio ('default': 1; None: declared, not annotated yet)."""
        return {DEFAULT_STREAM: 1.0, **{s: self.stream_ratio.get(s) for s in self.streams}}


class Bolt(_StormFields):
    """A worker: takes up to `parallelism` tuples per batch, works `alpha` s, emits σ per input."""

    kind: Literal["bolt"] = "bolt"
    id: str = Field(default_factory=new_id)
    name: str = Field(min_length=1)
    alpha: Seconds = Field(gt=0, description="duration of one processing batch in seconds (α)")
    sigma: Ratio = Field(ge=0, description="output tuples per input tuple (σ); 0 = sink")
    parallelism: Whole = Field(ge=1, le=STORM_MAX_INT, description="max tuples taken into one batch (C_TAKE)")
    class_name: str | None = Field(default=None, description="Storm's Java class (kept from Flux or the Storm UI)")
    tasks: Count | None = Field(default=None, description=(
        "Storm's task count (the Storm UI's tasks, Flux's numTasks): `storm rebalance` cannot raise the executors "
        "above it; not used by the model"))
    unannotated: list[Literal["alpha", "sigma"]] = Field(
        default_factory=list, description="parameters still holding a placeholder (an import had no value)")
    streams: list[StreamName] = Field(
        default_factory=list, description="declared output streams besides 'default' (whose σ is `sigma`)")
    stream_sigma: dict[str, StreamValue] = Field(
        default_factory=dict, description="σ of each declared stream (output tuples on it per input tuple); "
                                          "unset = not annotated")
    min_ttf: NonNegativeSeconds | None = Field(default=None, description=(
        "minimum time to failure (s): the bolt may fail once this long has passed since its last failure "
        "ended (since time 0 for the first); unset = it never fails (docs/model.md section 7)"))

    def output_streams(self) -> dict[str, float | None]:
        """Every output stream and its σ ('default': `sigma`; None: declared, not annotated yet)."""
        return {DEFAULT_STREAM: self.sigma, **{s: self.stream_sigma.get(s) for s in self.streams}}


Component = Spout | Bolt


class Subscription(_StormFields):
    """An edge: `target` bolt subscribes to the stream of `source`."""

    id: str = Field(default_factory=new_id)
    source: str = Field(description="id of the emitting spout or bolt")
    target: str = Field(description="id of the subscribing bolt")
    grouping: Grouping = "shuffle"
    fields: list[str] = Field(default_factory=list, description="grouping fields (fields grouping)")
    stream: str | None = Field(default=None, description="Storm stream id; none = the default stream")
    custom_class: str | None = Field(default=None, description="the grouping class of a custom grouping")


class TopologySettings(_Model):
    """Timing constants shared by every component (section 1 of the TCN semantics)."""

    tolerance: Number = Field(default=0.1, ge=0, lt=1, description="relative jitter τ of every duration")
    max_idle_time: Seconds = Field(default=0.01, ge=0,
                                   description="a bolt with waiting tuples takes within this delay (s)")
    init_queues: Whole = Field(default=0, ge=0, le=2**53, description="every queue's size at time 0")
    emission: Emission = Field(
        default="exact",
        description=("how a bolt's carry of processed tuples is kept after an emit: 'exact' (an exact rational, "
                     "so the long-run output ratio is σ) or 'dvert' (rounded up to an integer, as the D-VerT "
                     "prototype modelled it; the ratio can exceed σ); docs/model.md section 2"))
    failures: bool = Field(default=True, description=(
        "bolts with a min_ttf may fail (docs/model.md section 7); false switches every failure off, as the "
        "published D-VerT runs did"))
    min_reboot_time: PositiveSeconds | None = Field(default=None, description="shortest failure (s)")
    max_reboot_time: PositiveSeconds | None = Field(default=None, description="longest failure (s)")
    replay: Replay = Field(default="paced", description=(
        "what a spout does with the spout tuples whose trees lost a tuple at a failed bolt: 'paced' (re-emits "
        "them with its own emissions, at most as many as it emits fresh: Storm's nextTuple), 'at-once' (all "
        "with its next emission) or 'none' (an unreliable topology: lost is lost)"))

    @model_serializer(mode="wrap")
    def _drop_failure_defaults(self, handler: Any) -> Any:
        # files without failures stay byte-identical: the failure fields are written only when set
        data = handler(self)
        if isinstance(data, dict):
            for key, default in _FAILURE_DEFAULTS.items():
                if key in data and data[key] == default:
                    del data[key]
        return data

    @model_validator(mode="after")
    def _reboot_range(self) -> TopologySettings:
        lo, hi = self.min_reboot_time, self.max_reboot_time
        if lo is not None and hi is not None and lo > hi:
            raise ValueError(f"min_reboot_time ({lo:g} s) is above max_reboot_time ({hi:g} s)")
        return self

    def failure_semantics(self) -> dict[str, Any]:
        """The failure settings that differ from the defaults (what `semantics()` adds for them)."""
        data = {"failures": self.failures, "min_reboot_time": self.min_reboot_time,
                "max_reboot_time": self.max_reboot_time, "replay": self.replay}
        return {k: v for k, v in data.items() if v != _FAILURE_DEFAULTS[k]}


_FAILURE_DEFAULTS: dict[str, Any] = {"failures": True, "min_reboot_time": None, "max_reboot_time": None,
                                     "replay": "paced"}


def new_settings() -> TopologySettings:
    """The settings of a new document (the app's New, an import from Flux or the Storm UI): no idle time,
    as a Storm executor takes the next tuple as soon as it finishes one. A file without the field keeps
    the older default, 0.01 s (docs/model.md, "Choosing max_idle_time")."""
    return TopologySettings(max_idle_time=0.0)


def new_topology(name: str = "untitled") -> Topology:
    """An empty new document (not validated: it has no component yet)."""
    return Topology.model_construct(name=name, settings=new_settings())


class VerificationSettings(_Model):
    """What to verify and how far to search."""

    k: int | None = Field(default=None, ge=2, description="a single bound (positions of the lasso)")
    k_min: int = Field(default=4, ge=2)
    k_max: int = Field(default=40, ge=2)
    checked: list[str] = Field(default_factory=list, description="ids of checked bolts; empty = all bolts")
    queue_threshold: int | None = Field(default=None, ge=1, description="also check: some queue can reach N")
    timeout_s: PositiveSeconds | None = None

    @model_validator(mode="after")
    def _range(self) -> VerificationSettings:
        if self.k_min > self.k_max:
            raise ValueError(f"k_min ({self.k_min}) is larger than k_max ({self.k_max})")
        return self


class Position(_Model):
    x: Number = 0.0
    y: Number = 0.0


class StormObserved(_Model):
    """What the Storm UI showed of a running topology over the import's window, beyond the rates (docs/storm.md,
    "A saturated topology"): the signs that its measured rates are throttled."""

    window_seconds: float = Field(gt=0, description="the seconds the counts cover")
    failed: int = Field(default=0, ge=0, description="spout tuples failed in the window (timeouts included)")
    complete_latency_ms: float | None = Field(default=None, ge=0, description="the spouts' complete latency (ms)")
    busiest_bolt: str | None = Field(default=None, description="the bolt with the highest Storm UI capacity")
    busiest_capacity: float | None = Field(default=None, ge=0, description=(
        "its Storm UI capacity: the fraction of the window its executors were executing (the model's ρ)"))
    lag: dict[str, int] = Field(default_factory=dict, description="each spout's source lag (the lag endpoint)")
    lag_growth: dict[str, float] = Field(default_factory=dict, description=(
        "each spout's lag growth (tuples/s) between two readings of the lag endpoint: offered beyond what it emitted"))


class StormSettings(_Model):
    """Storm's own settings and where the document came from (a Flux file, the Storm UI).

    `run` and `reliability` take the four Storm settings as their defaults; the rest of
    the topology config is kept so that an export to Flux writes it back.
    """

    workers: int | None = Field(default=None, ge=1, le=STORM_MAX_INT, description="topology.workers")
    acker_executors: int | None = Field(default=None, ge=0, le=STORM_MAX_INT, description="topology.acker.executors")
    max_spout_pending: int | None = Field(default=None, ge=1, le=STORM_MAX_INT,
                                          description="topology.max.spout.pending")
    message_timeout_secs: int | None = Field(default=None, ge=1, description="topology.message.timeout.secs")
    storm_version: str | None = Field(default=None, max_length=40, pattern=r"^[0-9]+(\.[0-9A-Za-z-]+)*$",
                                      description=("the cluster's Storm version (e.g. 2.6.1, 1.2.3 or 2.x): it sets "
                                                   "the defaults the capacity estimates assume; unset: 2.x"))
    config: dict[str, Any] = Field(default_factory=dict, description="the rest of the topology config")
    flux_file: str | None = Field(default=None, max_length=4096,
                                  description="the Flux file this document was imported from")
    flux_filter: str | None = Field(default=None, max_length=4096, description="the properties file used for ${...}")
    flux_env: bool = Field(default=False, description="${ENV-NAME} substituted from the environment")
    flux_resources: list[str] = Field(default_factory=list, description="folders searched for resource includes")
    sources: dict[str, str] = Field(default_factory=dict,
                                    description="where an imported value came from, e.g. 'bolts.split.alpha'")
    running_executors: dict[str, int] = Field(default_factory=dict, description=(
        "executors per component on the cluster (the Storm UI), where `storm rebalance` starts from"))
    observed: StormObserved | None = Field(default=None, description="what the Storm UI showed beyond the rates")


class Topology(_Model):
    """The whole document. `layout` maps component ids to canvas positions and has no semantics."""

    schema_version: Literal[1] = SCHEMA_VERSION
    name: str = "untitled"
    description: str = ""
    spouts: list[Spout] = Field(default_factory=list)
    bolts: list[Bolt] = Field(default_factory=list)
    subscriptions: list[Subscription] = Field(default_factory=list)
    settings: TopologySettings = Field(default_factory=TopologySettings)
    verification: VerificationSettings = Field(default_factory=VerificationSettings)
    layout: dict[str, Position] = Field(default_factory=dict)
    storm: StormSettings = Field(default_factory=StormSettings)

    @model_serializer(mode="wrap")
    def _drop_empty_storm(self, handler: Any) -> Any:
        data = handler(self)
        if isinstance(data, dict) and self.storm == StormSettings():
            data.pop("storm", None)
        return data

    @model_validator(mode="before")
    @classmethod
    def _resolve_names(cls, data: Any) -> Any:
        """Let hand-written files name components where ids are expected."""
        if not isinstance(data, dict):
            return data
        def items(key: str) -> list[Any]:
            value = data.get(key)
            return value if isinstance(value, list) else []

        comps = [c for key in ("spouts", "bolts") for c in items(key) if isinstance(c, dict)]
        ids = {c["id"] for c in comps if isinstance(c.get("id"), str) and c["id"]}  # a wrong type: pydantic names it
        by_name: dict[str, str] = {}
        for c in comps:
            if "id" not in c or not c["id"]:
                c["id"] = new_id()
                ids.add(c["id"])
            if isinstance(c.get("name"), str):
                by_name.setdefault(c["name"], c["id"])

        def resolve(ref: Any) -> Any:
            if isinstance(ref, str) and ref not in ids and ref in by_name:
                return by_name[ref]
            return ref

        for sub in items("subscriptions"):
            if isinstance(sub, dict):
                for key in ("source", "target"):
                    sub[key] = resolve(sub.get(key))
        ver = data.get("verification")
        if isinstance(ver, dict) and isinstance(ver.get("checked"), list):
            ver["checked"] = [resolve(r) for r in ver["checked"]]
        layout = data.get("layout")
        if isinstance(layout, dict):
            data["layout"] = {resolve(k): v for k, v in layout.items()}
        return data

    @model_validator(mode="after")
    def _graph_rules(self) -> Topology:
        problems = graph_problems(self)
        if problems:
            # one problem a line (parse_topology splits them again): newlines inside names are escaped
            raise ValueError("\n".join(one_line(f"{p.path}: {p.message}") for p in problems))
        return self

    # ---- queries -------------------------------------------------------
    @property
    def components(self) -> list[Component]:
        return [*self.spouts, *self.bolts]

    def component(self, ident: str) -> Component:
        """The spout or bolt with this id (or, failing that, this name)."""
        for c in self.components:
            if c.id == ident:
                return c
        for c in self.components:
            if c.name == ident:
                return c
        raise KeyError(ident)

    def name_of(self, ident: str) -> str:
        return self.component(ident).name

    def bolt_by_name(self, name: str) -> Bolt:
        for b in self.bolts:
            if b.name == name:
                return b
        raise KeyError(name)

    def subscribers(self, ident: str) -> list[Bolt]:
        """Bolts that subscribe to the component `ident`."""
        targets = [s.target for s in self.subscriptions if s.source == ident]
        return [b for b in self.bolts if b.id in targets]

    def inputs(self) -> dict[str, list[tuple[str, str]]]:
        """What each bolt receives: per bolt id, its input streams (source id, stream name), each once.

        The one definition the rate check and the network both use (section 1 of docs/model.md):
        a repeated subscription to one stream of one component counts once (Storm keeps one
        grouping per input stream); two streams of one component are two inputs. One pass over
        the subscriptions, for every bolt at once."""
        seen: dict[str, dict[tuple[str, str], None]] = {b.id: {} for b in self.bolts}
        for s in self.subscriptions:
            seen.setdefault(s.target, {}).setdefault((s.source, s.stream or DEFAULT_STREAM), None)
        return {target: list(streams) for target, streams in seen.items()}

    def inputs_of(self, ident: str) -> list[tuple[str, str]]:
        """What bolt `ident` receives (:meth:`inputs` for one bolt)."""
        return self.inputs().get(ident, [])

    def sources_of(self, ident: str) -> list[Component]:
        """Components bolt `ident` subscribes to (subs(j))."""
        sources = [s.source for s in self.subscriptions if s.target == ident]
        return [c for c in self.components if c.id in sources]

    def checked_bolts(self) -> list[Bolt]:
        """The bolts whose queues the growth property is about (all when none chosen)."""
        if not self.verification.checked:
            return list(self.bolts)
        return [b for b in self.bolts if b.id in self.verification.checked]

    def semantics(self) -> dict[str, Any]:
        """Everything the verifier reads, keyed by names: no ids, no layout, no description.

        Two documents with equal semantics have the same verdicts; this is what round
        trips preserve and what the content hash of an exported configuration covers.
        """
        names = {c.id: c.name for c in self.components}
        # the failure fields only count when some bolt can fail (docs/model.md section 7)
        fails = self.settings.failures and any(b.min_ttf is not None for b in self.bolts)
        return {
            "spouts": sorted((s.name, s.rate, s.burst) + _stream_semantics(s) for s in self.spouts),
            "bolts": sorted((b.name, b.alpha, b.sigma, b.parallelism) + _stream_semantics(b)
                            + ((("min_ttf", b.min_ttf),) if fails and b.min_ttf is not None else ())
                            for b in self.bolts),
            "subscriptions": sorted(
                (names[s.source], names[s.target], s.grouping, tuple(s.fields))
                + ((s.stream,) if (s.stream or DEFAULT_STREAM) != DEFAULT_STREAM else ())
                for s in self.subscriptions
            ),
            "settings": {**{k: v for k, v in self.settings.model_dump().items() if k not in _FAILURE_DEFAULTS},
                         **(self.settings.failure_semantics() if fails else {})},
            "checked": sorted(names[r] for r in self.verification.checked),
        }

    def to_json_bytes(self) -> bytes:
        return (self.model_dump_json(indent=2) + "\n").encode("utf-8")


def _stream_semantics(c: Component) -> tuple[Any, ...]:
    """A component's declared streams and their σ / ratio, for `semantics()` (empty without streams,
    so documents without streams keep the semantics they had)."""
    streams = c.output_streams()
    del streams[DEFAULT_STREAM]
    return (tuple(sorted(streams.items(), key=lambda kv: kv[0])),) if streams else ()


@dataclass(frozen=True)
class Problem:
    """One validation problem: `path` names the element and field (e.g. `bolts.B2.alpha`)."""

    path: str
    message: str

    def __str__(self) -> str:
        text = f"{self.path}: {self.message}" if self.path else self.message
        return one_line(text)


# control characters, line separators and bidirectional marks and overrides (which would make a
# printed name read as something else): escaped wherever a name or key is echoed
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def one_line(text: str) -> str:
    """`text` on one printable line: control characters and bidi overrides escaped repr-style, lone
    surrogates as \\udXXX."""
    text = _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


class TopologyError(StormboundError, ValueError):
    """Raised when a document is invalid; carries every problem found."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems))


def graph_problems(topo: Topology) -> list[Problem]:
    """Rules across elements: names, references, edge directions, non-empty."""
    problems: list[Problem] = []
    if not topo.spouts and not topo.bolts:
        problems.append(Problem("topology", "is empty: add at least one spout and one bolt"))
        return problems
    if not topo.spouts:
        problems.append(Problem("spouts", "the topology has no spout, so no tuple ever enters it"))
    seen: dict[str, str] = {}
    for key, items in (("spouts", topo.spouts), ("bolts", topo.bolts)):
        for c in items:
            if c.name in seen:
                problems.append(Problem(f"{key}.{c.name}.name", f"duplicate name '{c.name}' (also a {seen[c.name]})"))
            seen[c.name] = c.kind
    ids: dict[str, Component] = {}
    for c in topo.components:
        if c.id in ids:
            problems.append(Problem(f"{c.kind}s.{c.name}.id", f"duplicate id '{c.id}'"))
        ids[c.id] = c
        problems += _stream_problems(c)
    pairs: set[tuple[str, str, str | None]] = set()
    declared_of: dict[str, dict[str, float | None]] = {}  # each component's streams once (not once per edge)
    for i, s in enumerate(topo.subscriptions):
        label = f"subscriptions[{i}]"
        src, tgt = ids.get(s.source), ids.get(s.target)
        if src is None:
            problems.append(Problem(f"{label}.source", f"unknown component '{s.source}'"))
        if tgt is None:
            problems.append(Problem(f"{label}.target", f"unknown component '{s.target}'"))
        elif tgt.kind == "spout":
            problems.append(Problem(f"{label}.target", f"'{tgt.name}' is a spout; spouts cannot subscribe to streams"))
        if src is not None and tgt is not None:
            label = f"subscriptions.{src.name}->{tgt.name}"
            if (s.source, s.target, s.stream) in pairs:
                problems.append(Problem(label, "duplicate subscription"))
            pairs.add((s.source, s.target, s.stream))
            declared = declared_of.get(src.id)
            if declared is None:
                declared = declared_of[src.id] = src.output_streams()
            if s.stream is not None and s.stream not in declared:
                problems.append(Problem(f"{label}.stream", f"'{s.stream}' is not a declared stream of {src.name} "
                                        f"(declared: {_listed(declared)}; add it to {src.kind}s.{src.name}.streams)"))
            if s.grouping == "fields" and not s.fields:
                problems.append(Problem(f"{label}.fields", "fields grouping needs at least one field name"))
    for ref in topo.verification.checked:
        checked = ids.get(ref)
        if checked is None:
            problems.append(Problem("verification.checked", f"unknown bolt '{ref}'"))
        elif checked.kind != "bolt":
            problems.append(Problem("verification.checked", f"'{checked.name}' is a spout; only bolts have queues"))
    for ref in topo.layout:
        if ref not in ids:
            problems.append(Problem("layout", f"position for unknown component '{ref}'"))
    problems += failure_problems(topo)
    return problems


def still_unannotated(unannotated: Iterable[str], set_fields: Iterable[str]) -> list[str]:
    """What stays "not annotated" after values are set for `set_fields`: a value typed, imported or
    annotated is a value (the one rule `annotate`, timings files and the inspector follow)."""
    done = set(set_fields)
    return [f for f in unannotated if f not in done]


def _listed(names: Iterable[str], most: int = 10) -> str:
    """Names for a message: the first `most`, then how many more."""
    names = list(names)
    more = f" and {len(names) - most} more" if len(names) > most else ""
    return ", ".join(names[:most]) + more


def failure_problems(topo: Topology) -> list[Problem]:
    """A bolt that may fail needs the reboot bounds (how long a failure lasts)."""
    failing = [b.name for b in topo.bolts if b.min_ttf is not None]
    if not failing or not topo.settings.failures:
        return []
    missing = [f"settings.{key}" for key in ("min_reboot_time", "max_reboot_time")
               if getattr(topo.settings, key) is None]
    if not missing:
        return []
    return [Problem(", ".join(missing), f"not set: bolts.{failing[0]}.min_ttf makes {failing[0]} fail, and a "
                                        "failure lasts between settings.min_reboot_time and max_reboot_time (s)")]


def _stream_problems(c: Component) -> list[Problem]:
    """Declared streams: unique and not 'default'; a σ (a spout's ratio) only for a declared stream."""
    problems: list[Problem] = []
    where = f"{c.kind}s.{c.name}"
    if isinstance(c, Bolt):
        values, field, own = c.stream_sigma, "stream_sigma", "its σ is the bolt's sigma"
    else:
        values, field, own = c.stream_ratio, "stream_ratio", "it carries the spout's emissions"
    seen: set[str] = set()
    for name in c.streams:
        if name.startswith("__") and name != TICK_STREAM:
            problems.append(Problem(f"{where}.streams", f"'{name[:60]}': a name starting with __ is one of Storm's "
                                                        "own streams (__ack_init, __metrics...): Storm refuses it"))
        elif _CONTROL.search(name):
            problems.append(Problem(f"{where}.streams", f"'{name[:60]}' holds a control character or a bidirectional "
                                                        "mark: Storm's stream ids are printable names"))
        elif name == DEFAULT_STREAM:
            problems.append(Problem(f"{where}.streams", f"'{DEFAULT_STREAM}' is always declared ({own})"))
        elif name in seen:
            problems.append(Problem(f"{where}.streams", f"stream '{name}' is declared twice"))
        seen.add(name)
    declared = _listed(sorted(seen - {DEFAULT_STREAM})) or "none"
    for name in values:
        if name == DEFAULT_STREAM:
            problems.append(Problem(f"{where}.{field}.{name}",
                                    f"the '{DEFAULT_STREAM}' stream has no entry here ({own})"))
        elif name not in seen:
            problems.append(Problem(f"{where}.{field}.{name}",
                                    f"names an undeclared stream '{name}' (declared: {declared}; "
                                    f"add it to {where}.streams)"))
    return problems


class NotAnnotated(TopologyError):
    """The document still has placeholder values (an import found no rate, burst, α or σ)."""


def unannotated_problems(topo: Topology) -> list[Problem]:
    """One `spouts.S.rate: not annotated` per placeholder value, in document order."""
    problems = [Problem(f"{key}.{c.name}.{field}", "not annotated")
                for key, items in (("spouts", topo.spouts), ("bolts", topo.bolts))
                for c in items for field in c.unannotated]
    for c in topo.components:
        field = "stream_sigma" if isinstance(c, Bolt) else "stream_ratio"
        problems += [Problem(f"{c.kind}s.{c.name}.{field}.{name}", "not annotated")
                     for name, value in c.output_streams().items() if value is None]
    return problems


def require_annotated(topo: Topology) -> None:
    """Refuse a document with placeholder values: the rate check and the verifier would compute with them."""
    problems = unannotated_problems(topo)
    if problems:
        raise NotAnnotated(problems)


def _element_label(raw: Any, loc: tuple[Any, ...]) -> str:
    """Turn a pydantic location like ('bolts', 1, 'alpha') into 'bolts.B2.alpha'."""
    parts: list[str] = []
    node = raw
    for item in loc:
        if isinstance(item, int) and isinstance(node, list):
            elem = node[item] if 0 <= item < len(node) else None
            name = elem.get("name") if isinstance(elem, dict) else None
            if isinstance(name, str) and name:
                parts.append(name)
            else:
                parts[-1:] = [f"{parts[-1]}[{item}]"] if parts else [f"[{item}]"]
            node = elem
        else:
            parts.append(str(item))
            node = node.get(item) if isinstance(node, dict) else None
    return ".".join(parts)


def _friendly(msg: str) -> str:
    msg = msg.removeprefix("Value error, ")
    return msg[0].lower() + msg[1:] if msg else msg


def parse_topology(data: Any) -> Topology:
    """Validate a decoded JSON document; raise :class:`TopologyError` naming each problem."""
    import copy

    if not isinstance(data, dict):
        raise TopologyError([Problem("document", f"expected a JSON object, got {type(data).__name__}")])
    raw = copy.deepcopy(data)
    try:
        return Topology.model_validate(copy.deepcopy(data))
    except ValidationError as err:
        problems: list[Problem] = []
        for e in err.errors():
            loc = tuple(e.get("loc", ()))
            msg = str(e.get("msg", "invalid"))
            if not loc:
                for line in _friendly(msg).split("\n"):
                    path, _, text = line.partition(": ")
                    problems.append(Problem(path, text))
                continue
            if e.get("type") == "extra_forbidden":
                msg = "unknown field"
                if len(loc) == 3 and loc[0] == "spouts" and loc[2] == "min_ttf":
                    msg = "a spout never fails in the model: only bolts take min_ttf (docs/model.md section 7)"
            path = _element_label(raw, loc) if loc else "topology"
            problems.append(Problem(path, _friendly(msg)))
        raise TopologyError(_one_per_field(problems)) from None


_ITEM = re.compile(r"\[\d+\]$")
_UNKNOWN = re.compile(r"unknown component '([^']*)'")


def _family(index: int, problem: Problem) -> tuple[Any, ...]:
    """What a problem is a consequence of: one bad list (its elements), one element (the fields it lacks),
    one component that is gone (every reference to it); otherwise itself."""
    gone = _UNKNOWN.search(problem.message)
    if gone:
        return ("gone", gone.group(1))
    listed = _ITEM.sub("", problem.path)
    if listed != problem.path:
        return ("list", listed, problem.message)
    if problem.message == "field required":
        return ("element", problem.path.rpartition(".")[0])
    return ("own", index)


def _one_per_field(problems: list[Problem]) -> list[Problem]:
    """One line per bad input, not per consequence (`_family`): the first place, then the others (up to
    three, then how many more)."""
    families: dict[tuple[Any, ...], list[Problem]] = {}
    for index, problem in enumerate(problems):
        families.setdefault(_family(index, problem), []).append(problem)
    merged: list[Problem] = []
    for same in families.values():
        others = [p.path for p in same[1:]]
        also = ""
        if others:
            more = f" and {len(others) - 3} more" if len(others) > 3 else ""
            also = f" (also {', '.join(others[:3])}{more})"
        merged.append(Problem(same[0].path, same[0].message + also))
    return merged


def topology_json_schema() -> dict[str, Any]:
    """The JSON Schema of the `.storm.json` document."""
    return Topology.model_json_schema()

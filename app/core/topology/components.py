"""The elements of the topology graph: spouts, bolts, the subscriptions between them (the edges, each
on a stream) and a component's canvas position."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_serializer, model_validator

from app.core.topology.fields import (
    STORM_MAX_INT,
    Count,
    NonNegativeSeconds,
    Number,
    PerSecond,
    Ratio,
    Seconds,
    StreamName,
    StreamValue,
    StrictModel,
    Whole,
    new_id,
)
from app.core.units import magnitude_problem

#: a window's length or sliding interval: whole tuples (count) or seconds (duration), > 0 (Window checks which)
WindowSize = Annotated[Whole | Number, Field(gt=0)]

# Storm's groupings; the rate check and the verifier treat every one alike (see docs/storm.md)
Grouping = Literal["shuffle", "fields", "all", "global", "none", "local_or_shuffle", "direct", "custom"]

#: Storm bolts known to be asynchronous (docs/model.md section 8), by class: the config key of their threads per
#: task and its default. Flux import reads it (app/core/storm/flux/builder.py); the rate check names a bolt of
#: such a class that a document models as an ordinary one.
ASYNC_CLASSES: dict[str, tuple[str, int]] = {
    "com.digitalpebble.stormcrawler.bolt.FetcherBolt": ("fetcher.threads.number", 10),
    "org.apache.stormcrawler.bolt.FetcherBolt": ("fetcher.threads.number", 10),
}

DEFAULT_STREAM = "default"
#: the stream of a timer spout standing for Storm's tick tuples (app/core/storm/flux/ticks.py)
TICK_STREAM = "__tick"

# Fields that Storm imports fill in; left out of a saved file while unset, so older files stay byte-identical.
_SPARSE_FIELDS = ("class_name", "executors", "unannotated", "stream", "custom_class", "streams", "stream_sigma",
                  "stream_ratio", "tasks", "min_ttf", "threads", "unmodelled", "window", "slide", "slide_kind", "join",
                  "max_cache", "max_time")


class _StormFields(StrictModel):
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


class Window(_StormFields):
    """A windowed bolt's window (Storm's `BaseWindowedBolt`, docs/model.md section 10): a count window in tuples, a
    duration window in seconds; the sliding interval unset = a tumbling window (it slides by its length). A mixed
    window (section 10.4) gives its sliding interval a kind of its own, `slide_kind`: `withWindow(Count L,
    Duration S)` is kind count, slide_kind duration."""

    kind: Literal["count", "duration"] = Field(description=(
        "the window length's kind, which decides eviction (when Storm acks a tuple): count in tuples (Storm's Count), "
        "duration in seconds (Storm's Duration); also the slide's unless `slide_kind` says otherwise"))
    length: WindowSize = Field(description="the window's length: tuples (count) or seconds (duration)")
    slide: WindowSize | None = Field(default=None, description=(
        "the sliding interval, at most the length: tuples (count) or seconds (duration), by `slide_kind`; "
        "unset = tumbling"))
    slide_kind: Literal["count", "duration"] | None = Field(default=None, description=(
        "the sliding interval's kind, which decides the trigger (the queue and the evaluations) when it differs "
        "from `kind`: a mixed window (`withWindow(Count(L), Duration(S))`: count, duration); unset = `kind`; "
        "from schema_version 6"))

    @model_validator(mode="after")
    def _sizes_fit(self) -> Window:
        if self.mixed and self.slide is None:
            raise ValueError(f"slide: a mixed window (a {self.kind} length, a {self.slide_kind} slide) needs its "
                             "sliding interval: a tumbling window slides by its own length")
        for name, value, kind in (("length", self.length, self.kind), ("slide", self.slide, self.trigger)):
            if value is None:
                continue
            if kind == "count" and (value != int(value) or value > STORM_MAX_INT):
                raise ValueError(f"{name}: a count window's {name} is a whole number of tuples, 1 to "
                                 f"{STORM_MAX_INT} (Storm's Count), not {value:g}")
            problem = magnitude_problem(float(value), "s") if kind == "duration" else None
            if problem:
                raise ValueError(f"{name}: {problem}")
        if not self.mixed and self.slide is not None and self.slide > self.length:
            raise ValueError(f"slide: a sliding interval ({self.slide:g}) above the window's length "
                             f"({self.length:g}) leaves tuples out of every window, which the model does not have")
        return self

    @property
    def trigger(self) -> Literal["count", "duration"]:
        """The sliding interval's kind, which decides when Storm evaluates (docs/model.md section 10.4): count = whole
        slides of tuples (10.2), duration = a timer (10.3)."""
        return self.kind if self.slide_kind is None else self.slide_kind

    @property
    def mixed(self) -> bool:
        """A count length on a duration slide, or the other way round (docs/model.md section 10.4)."""
        return self.trigger != self.kind

    @property
    def interval(self) -> float:
        """The sliding interval: the slide, or the length for a tumbling window (in the trigger's unit)."""
        return self.length if self.slide is None else self.slide

    def phrase(self) -> str:
        """The window in Storm's words: `withWindow(Count(5), Count(3))`, `withTumblingWindow(Duration(10 s))`,
        `withWindow(Count(4), Duration(2 s))`."""
        def size(value: float, kind: str) -> str:
            return f"Count({value:g})" if kind == "count" else f"Duration({value:g} s)"
        if not self.mixed and (self.slide is None or self.slide == self.length):
            return f"withTumblingWindow({size(self.length, self.kind)})"
        return f"withWindow({size(self.length, self.kind)}, {size(self.interval, self.trigger)})"


class Join(_StormFields):
    """A join bolt (docs/model.md section 11). `all`: Metron's enrichment join, which holds each message's parts in
    a cache until every input stream (a branch) has delivered its part, then processes and emits the message once;
    `window`: Storm's `JoinBolt`, which joins by key what its window holds and waits for nothing (the bolt's
    `window` is its rule)."""

    kind: Literal["all", "window"] = Field(description=(
        "all: waits for one part from every input stream per message (Metron's enrichment join); window: joins by "
        "key what its window holds (Storm's JoinBolt; needs `window`)"))
    max_cache: Count | None = Field(default=None, description=(
        "the most messages the cache holds (Metron's maxCacheSize); a full cache evicts, and the evicted "
        "messages' trees fail; unset = not said (the model's cache has no limit)"))
    max_time: Number | None = Field(default=None, gt=0, description=(
        "how long the cache keeps a message's parts, in minutes (Metron's maxTimeRetain); unset = not said"))

    def phrase(self) -> str:
        """The join in Storm's words: `waits for all branches (maxCacheSize 100000)`, `JoinBolt over its window`."""
        if self.kind == "window":
            return "Storm's JoinBolt over its window"
        extra = [f"maxCacheSize {self.max_cache}" if self.max_cache is not None else "",
                 f"maxTimeRetain {float(self.max_time):g} min" if self.max_time is not None else ""]
        said = ", ".join(e for e in extra if e)
        return "a join waiting for every branch" + (f" ({said})" if said else "")


class Bolt(_StormFields):
    """A worker: takes up to `parallelism` tuples per batch (× `threads` when asynchronous), works `alpha` s, emits σ
    per input."""

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
    threads: Count | None = Field(default=None, description=(
        "an asynchronous bolt: `execute` only enqueues, and this many internal threads per executor (StormCrawler's "
        "fetcher.threads.number) each work `alpha` s on one tuple; the batch is parallelism × threads "
        "(docs/model.md section 8); unset = an ordinary bolt"))
    unmodelled: str | None = Field(default=None, max_length=1000, description=(
        "a Storm construct the bolt uses that the model does not have yet (a window, a join), as an import found it: "
        "the model reads the bolt as an ordinary one and every answer about it says so (docs/model.md section 10)"))
    window: Window | None = Field(default=None, description=(
        "a windowed bolt (Storm's BaseWindowedBolt): its tuples are held in windows of this kind, length and "
        "sliding interval and processed per window (docs/model.md section 10); unset = an ordinary bolt"))
    join: Join | None = Field(default=None, description=(
        "a join bolt (docs/model.md section 11): `all` waits for a part from every input stream per message and "
        "processes the complete message (α per message, σ per message); `window` is Storm's JoinBolt over its "
        "`window`; unset = an ordinary bolt"))

    @model_validator(mode="after")
    def _threads_fit(self) -> Bolt:
        if self.threads is not None and self.take_max > STORM_MAX_INT:
            raise ValueError(f"parallelism × threads is {self.take_max}, more tuples at once than Storm counts "
                             f"(at most {STORM_MAX_INT})")
        if self.count_window is not None and self.take_max > STORM_MAX_INT:
            raise ValueError(f"window: parallelism × sliding interval is {self.take_max}, more tuples at once than "
                             f"Storm counts (at most {STORM_MAX_INT})")
        if self.window is not None and self.min_ttf is not None:
            raise ValueError("min_ttf: the model has no failures of a windowed bolt (what it loses is its windows' "
                             "tuples too): leave min_ttf out of a bolt with a window")
        if self.window is not None and self.threads is not None:
            raise ValueError("window: a windowed bolt processes its windows in its executor's thread and has no "
                             "internal threads: give it `window` or `threads`, not both")
        if self.join is not None:
            self._join_fits(self.join)
        if self.window is not None and self.unmodelled is not None:
            raise ValueError(f"window: the bolt is also {self.unmodelled}, which the model does not have: give it "
                             "`window` or `unmodelled`, not both")
        return self

    def _join_fits(self, join: Join) -> None:
        if join.kind == "window" and self.window is None:
            raise ValueError("join: Storm's JoinBolt joins what its window holds: give the bolt its `window`")
        if join.kind == "all" and (self.window is not None or self.threads is not None):
            raise ValueError("join: a join waiting for every branch has no window and no internal threads: leave "
                             "`window` and `threads` out of it")
        if join.kind == "all" and self.min_ttf is not None:
            raise ValueError("min_ttf: the model has no failures of a join (what it loses is its cache too): leave "
                             "min_ttf out of a join")
        if self.unmodelled is not None:
            raise ValueError(f"join: the bolt is also {self.unmodelled}, which the model does not have: give it "
                             "`join` or `unmodelled`, not both")

    @property
    def waits_for_all(self) -> bool:
        """A join that waits for a part from every branch (docs/model.md section 11): its arrivals are the
        messages its branches have all delivered."""
        return self.join is not None and self.join.kind == "all"

    @property
    def not_modelled(self) -> str | None:
        """What the bolt is that the model does not decide, in one phrase (docs/model.md section 10): the import's
        `unmodelled` mark; None for a bolt the model has (a count or a duration window is modelled)."""
        return self.unmodelled

    @property
    def duration_window(self) -> Window | None:
        """The bolt's window when a timer triggers it (a run every sliding interval: docs/model.md section 10.3): a
        duration window, or a count length on a duration slide (10.4); None otherwise. Its `interval` is S in
        seconds; its `length` is in the eviction's unit (`kind`)."""
        return self.window if self.window is not None and self.window.trigger == "duration" else None

    @property
    def count_window(self) -> Window | None:
        """The bolt's window when whole slides of tuples trigger it (docs/model.md section 10.2): a count window, or a
        duration length on a count slide (10.4); None otherwise. Its `interval` is S in tuples; its `length` is in
        the eviction's unit (`kind`)."""
        return self.window if self.window is not None and self.window.trigger == "count" else None

    @property
    def per_executor(self) -> int:
        """Tuples one executor takes into one batch: an asynchronous bolt's threads, a count window's sliding
        interval (one execute(TupleWindow) per slide), else 1."""
        if self.threads is not None:
            return self.threads
        window = self.count_window
        return int(window.interval) if window is not None else 1

    @property
    def take_max(self) -> int:
        """C_TAKE: the executors (`parallelism`), times an asynchronous bolt's threads per executor or a count
        window's sliding interval."""
        return self.parallelism * self.per_executor

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


class Position(StrictModel):
    x: Number = 0.0
    y: Number = 0.0

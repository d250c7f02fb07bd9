"""What a lasso trace looks like as plots, without Qt: the shown positions and one series per bolt.

The trace view (app/gui/panels/trace_view.py) and `stormbound plot` draw the same
series: each bolt's queue after each position's actions (a step line), the tuples in
process, the tuples arriving from each component it subscribes to, and the loop
passes as shaded time spans. With failures (docs/model.md section 7) each bolt's
failure intervals, its lost tuples, and each spout's replays and backlog. Unrolling
repeats the loop: times shift by the loop's duration, queues and replay backlogs by their
growth per loop (docs/trace-view.md).

A long trace (10^4..10^5 positions: a lasso with failures) has more positions than a plot
has pixels: `step_band` and `peaks` reduce a time range to one bucket per pixel (the least
and the greatest value of each step series, the largest count of each stem or mark series),
so a plot draws envelopes there and the exact values when few enough positions are shown.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from app.core.formats.trace import BoltStep, Trace, TracePosition, format_time
from app.core.topology import TopologyError, parse_topology
from app.core.units import format_duration


@dataclass(frozen=True)
class ShownPosition:
    """One position as displayed: where it comes from in the trace and which loop pass it is in."""

    source: int  # index into trace.positions
    loop_pass: int  # 0 before the loop; 1, 2, ... for the passes of the loop
    time: Fraction
    position: TracePosition  # queues already raised by the passes before this one


def _shifted(position: TracePosition, passes: int, growth: dict[str, int], duration: Fraction) -> TracePosition:
    """The position `passes` loop passes later: same actions, later time, larger queues."""
    if passes == 0:
        return position
    bolts = {name: step.model_copy(update={"queue": step.queue + passes * growth.get(name, 0)})
             for name, step in position.bolts.items()}
    spouts = {name: step.model_copy(update={"backlog": step.backlog + passes * growth.get(name, 0)})
              if growth.get(name) else step for name, step in position.spouts.items()}
    return position.model_copy(update={"time": format_time(position.exact_time + passes * duration), "bolts": bolts,
                                       "spouts": spouts})


def has_loop(trace: Trace) -> bool:
    """A lasso has a loop; a finite run (the threshold property's witness) has loop_start = k+1."""
    return trace.loop_start <= trace.k


def unroll(trace: Trace, extra_passes: int = 0) -> list[ShownPosition]:
    """Positions 0..k, the loop repeated `extra_passes` more times, then the closing position.

    With 0 extra passes this is the trace as found (0..k+1, the last repeating loop_start).
    A trace without a loop (a run reaching a queue threshold: loop_start = k+1) is shown as is.
    """
    if extra_passes < 0:
        raise ValueError("extra_passes: must be 0 or more")
    k, start = trace.k, trace.loop_start
    if not has_loop(trace):
        return [ShownPosition(i, 0, p.exact_time, p) for i, p in enumerate(trace.positions)]
    growth, duration = {**trace.growth_per_loop(), **backlog_growth(trace)}, trace.loop_duration()
    shown: list[ShownPosition] = []
    for i in range(k + 1):
        p = trace.positions[i]
        shown.append(ShownPosition(i, 1 if i >= start else 0, p.exact_time, p))
    for r in range(1, extra_passes + 1):
        for i in range(start, k + 1):
            p = _shifted(trace.positions[i], r, growth, duration)
            shown.append(ShownPosition(i, r + 1, p.exact_time, p))
    closing = _shifted(trace.positions[k + 1], extra_passes, growth, duration)
    shown.append(ShownPosition(k + 1, extra_passes + 2, closing.exact_time, closing))
    return shown


#: most positions shown once unrolled (each is a copy of a trace position; a long lasso's loop may be 10^4 of them)
MAX_SHOWN_POSITIONS = 200_000


def max_unroll(trace: Trace, wanted: int) -> int:
    """At most `wanted` extra loop passes, fewer when they would show more than MAX_SHOWN_POSITIONS positions."""
    if not has_loop(trace):
        return wanted
    room = MAX_SHOWN_POSITIONS - len(trace.positions)
    return max(0, min(wanted, room // (trace.k + 1 - trace.loop_start)))


def backlog_growth(trace: Trace) -> dict[str, int]:
    """Each spout's growth of its replay backlog per loop pass (docs/model.md section 7.4), 0 without a loop."""
    if not has_loop(trace):
        return {}
    last, start = trace.positions[trace.k + 1], trace.positions[trace.loop_start]
    return {name: last.spouts[name].backlog - start.spouts[name].backlog for name in start.spouts}


def has_failures(trace: Trace) -> bool:
    """Whether some bolt fails or loses tuples, or some spout replays, in the trace."""
    return any(b.fail or b.phase == "failed" or b.lost for p in trace.positions for b in p.bolts.values()) or any(
        s.replayed or s.backlog for p in trace.positions for s in p.spouts.values())


def queue_after(step: BoltStep) -> int:
    """The queue after the position's actions: arrivals join it, a take removes the batch; a failed bolt
    loses them (docs/model.md section 7.2), so its queue is 0."""
    if step.fail or step.phase == "failed":
        return 0
    return step.queue + step.arrivals - (step.batch if step.take else 0)


def acting_components(position: TracePosition) -> set[str]:
    """Names of the components that act at a position: emitting spouts, taking or emitting bolts."""
    names = {name for name, s in position.spouts.items() if s.emit}
    names |= {name for name, b in position.bolts.items() if b.take or b.emit}
    return names


def subscriptions_by_bolt(trace: Trace) -> dict[str, list[str]]:
    """For each bolt of the trace, the names of the components it subscribes to (empty if unknown)."""
    try:
        topo = parse_topology(trace.topology)
    except TopologyError:
        return {}
    return {b.name: [c.name for c in topo.sources_of(b.id)] for b in topo.bolts}


def inputs_by_bolt(trace: Trace) -> dict[str, list[tuple[str, str]]]:
    """For each bolt of the trace, its input streams (component name, stream), each once (empty if unknown)."""
    try:
        topo = parse_topology(trace.topology)
    except TopologyError:
        return {}
    received = topo.inputs()
    return {b.name: [(topo.name_of(u), stream) for u, stream in received.get(b.id, [])] for b in topo.bolts}


def emitted_at(position: TracePosition, name: str, stream: str | None = None) -> int:
    """Tuples component `name` emits at this position (on `stream` when given; 0 when it does not emit)."""
    step = position.spouts.get(name) or position.bolts.get(name)
    if step is None or not step.emit:
        return 0
    return step.emitted if stream is None else step.stream_emitted(stream)


# ---- the series the plots draw ----------------------------------------------------------------
@dataclass(frozen=True)
class Arrivals:
    """Tuples arriving at a bolt from one source (`source` None: the trace's own arrival counts)."""

    label: str
    source: str | None
    times: list[float]  # only the positions where some arrive
    counts: list[int]


@dataclass(frozen=True)
class Marks:
    """Counts at some positions (lost tuples, replays): only where the count is not 0."""

    times: list[float]
    counts: list[int]


@dataclass(frozen=True)
class BoltSeries:
    """One bolt's plot: queue and tuples in process as steps over `TraceSeries.step_times`, arrivals as stems;
    with failures its failure intervals (from the failure to the recovery, or to the end of the plot) and the
    tuples it loses (docs/model.md section 7)."""

    bolt: str
    growth_per_loop: int
    queue: list[int]
    in_process: list[int]
    arrivals: list[Arrivals]
    failed: list[tuple[float, float]] = field(default_factory=list)
    lost: Marks = field(default_factory=lambda: Marks([], []))


@dataclass(frozen=True)
class SpoutSeries:
    """A spout that replays: its backlog of replays (a step over `TraceSeries.step_times`, after each
    position's actions) and the replays it emits (counts at their positions)."""

    spout: str
    backlog: list[int]
    replayed: Marks


@dataclass(frozen=True)
class TraceSeries:
    """Everything a plot of the (unrolled) trace needs, in seconds as floats."""

    shown: list[ShownPosition]
    times: list[float]  # one per shown position
    step_times: list[float]  # the edges of the steps: `times` and one more, 3 % of the span later
    bolts: list[BoltSeries]
    loop_passes: list[tuple[float, float]]  # shaded spans; empty for a run without a loop
    senders: list[str]  # components whose tuples arrive somewhere (the key's colours)
    spouts: list[SpoutSeries] = field(default_factory=list)  # the spouts that replay (none without failures)
    deaths: list[tuple[float, float, str]] = field(default_factory=list)  # worker deaths: (death, back, worker)

    @property
    def failures(self) -> bool:
        """Whether some bolt fails or loses tuples, or some spout replays, in the shown positions."""
        return bool(self.spouts) or any(b.failed or b.lost.times for b in self.bolts)


def loop_passes(trace: Trace, extra_passes: int = 0) -> list[tuple[float, float]]:
    """The time spans of the loop's passes (the first and `extra_passes` more), empty without a loop."""
    if not has_loop(trace):
        return []
    start = trace.positions[trace.loop_start].exact_time
    duration = trace.loop_duration()
    return [(float(start + r * duration), float(start + (r + 1) * duration)) for r in range(extra_passes + 1)]


def trace_series(trace: Trace, extra_passes: int = 0) -> TraceSeries:
    """The series of every bolt of `trace` with the loop repeated `extra_passes` more times."""
    shown = unroll(trace, extra_passes)
    times = [float(sp.time) for sp in shown]
    span = (times[-1] - times[0]) or 1.0
    step_times = [*times, times[-1] + span * 0.03]
    sources = subscriptions_by_bolt(trace)
    inputs = inputs_by_bolt(trace)
    growth = trace.growth_per_loop()
    bolts: list[BoltSeries] = []
    for bolt in shown[0].position.bolts:
        steps = [sp.position.bolts[bolt] for sp in shown]
        arrivals: list[Arrivals] = []
        if not sources.get(bolt):
            arrivals.append(_arrivals("arrivals", None, times, [s.arrivals for s in steps]))
        for source, stream in inputs.get(bolt, []):  # each input stream once, as the bolt receives it
            label = f"from {source}" if stream == "default" else f"from {source} ({stream})"
            arrivals.append(_arrivals(label, source, times,
                                      [emitted_at(sp.position, source, stream) for sp in shown]))
        bolts.append(BoltSeries(bolt=bolt, growth_per_loop=growth.get(bolt, 0), queue=[queue_after(s) for s in steps],
                                in_process=[s.batch for s in steps], arrivals=arrivals,
                                failed=failure_intervals(steps, times, step_times[-1]),
                                lost=_marks(times, [s.lost for s in steps])))
    spouts: list[SpoutSeries] = []
    for spout in shown[0].position.spouts:
        steps_s = [sp.position.spouts[spout] for sp in shown]
        # the backlog after each position: what was waiting, less the replays emitted, plus the new ones (the bolts'
        # losses' and those a worker's death releases at its timeout, docs/model.md 9.5)
        added = [sum((b.replays or {}).get(spout, 0) for b in sp.position.bolts.values())
                 + sum((w.released or {}).get(spout, 0) for w in (sp.position.workers or {}).values()) for sp in shown]
        if any(s.backlog or s.replayed for s in steps_s) or any(added):
            spouts.append(SpoutSeries(spout, [s.backlog - s.replayed + a for s, a in zip(steps_s, added, strict=True)],
                                      _marks(times, [s.replayed for s in steps_s])))
    names = [*trace.positions[0].spouts, *trace.positions[0].bolts]
    senders = [n for n in names if any(n in found for found in sources.values())]
    return TraceSeries(shown=shown, times=times, step_times=step_times, bolts=bolts,
                       loop_passes=loop_passes(trace, extra_passes), senders=senders, spouts=spouts,
                       deaths=worker_deaths(shown, times, step_times[-1]))


def worker_deaths(shown: list[ShownPosition], times: list[float], end: float) -> list[tuple[float, float, str]]:
    """The workers' deaths (docs/model.md 9.5) as (death, back, worker): back at its restart, or `end`."""
    out: list[tuple[float, float, str]] = []
    down: dict[str, float] = {}
    for sp, t in zip(shown, times, strict=True):
        for name, w in (sp.position.workers or {}).items():
            if w.restart and name in down:
                out.append((down.pop(name), t, name))
            if w.death:
                down[name] = t
    return sorted(out + [(t, end, name) for name, t in down.items()])


def failure_intervals(steps: list[BoltStep], times: list[float], end: float) -> list[tuple[float, float]]:
    """A bolt's failures as time spans: from its `fail` to its `recover`, or to `end` while still failed."""
    spans: list[tuple[float, float]] = []
    since: float | None = None
    for step, t in zip(steps, times, strict=True):
        if step.recover and since is not None:
            spans.append((since, t))
            since = None
        if step.fail or (since is None and step.phase == "failed"):
            since = t if since is None else since
    if since is not None:
        spans.append((since, end))
    return spans


def _marks(times: list[float], counts: list[int]) -> Marks:
    kept = [(t, c) for t, c in zip(times, counts, strict=True) if c]
    return Marks([t for t, _ in kept], [c for _, c in kept])


def _arrivals(label: str, source: str | None, times: list[float], counts: list[int]) -> Arrivals:
    kept = [(t, c) for t, c in zip(times, counts, strict=True) if c]
    return Arrivals(label=label, source=source, times=[t for t, _ in kept], counts=[c for _, c in kept])


def describe_trace(trace: Trace) -> str:
    """One sentence on what the trace shows: the lasso's k, its loop and the queues' growth per loop."""
    return describe_lasso(trace.k, trace.loop_start, trace.growth_per_loop(),
                          float(trace.loop_duration()) if has_loop(trace) else 0.0)


def describe_lasso(k: int, loop_start: int, growth_per_loop: dict[str, int], loop_duration_s: float) -> str:
    """`describe_trace` from a lasso's figures (a long trace is plotted without its positions)."""
    if loop_start > k:
        return f"a run of {k + 2} positions (no loop: the witness is a finite run)."
    growth = {n: d for n, d in growth_per_loop.items() if d}
    grows = ", ".join(f"{n} +{d}" for n, d in growth.items()) or "no queue"
    return (f"lasso with k = {k}: positions {loop_start}..{k} repeat forever "
            f"(every {format_duration(loop_duration_s)}; per loop: {grows}).")


# ---- long traces: one bucket per pixel ------------------------------------------------------------
def visible(times: Sequence[float], t0: float, t1: float) -> tuple[int, int]:
    """The positions to draw for the time range [t0, t1]: indices lo..hi-1, those inside and one either side
    (a step that starts before t0 still shows at t0)."""
    return max(0, bisect_left(times, t0) - 1), min(len(times), bisect_right(times, t1) + 1)


@dataclass(frozen=True)
class Band:
    """A step series reduced to buckets of time: over bucket i, [edges[i], edges[i+1]), the series takes values
    from low[i] to high[i] (both reached)."""

    edges: list[float]
    low: list[float]
    high: list[float]


def step_band(step_times: Sequence[float], values: Sequence[float], t0: float, t1: float, buckets: int) -> Band:
    """The least and greatest value of the step series (values[i] on [step_times[i], step_times[i+1])) in each of
    `buckets` equal buckets of [t0, t1] clipped to the series' span: exact extremes, every step counted in every
    bucket it overlaps. Linear in the steps in range plus the buckets (numpy: a 311,558-position lasso's
    series reduce in milliseconds)."""
    if not len(values):
        return Band([], [], [])
    t0, t1 = max(t0, step_times[0]), min(t1, step_times[-1])
    if t1 <= t0 or buckets < 1:
        return Band([], [], [])
    width = (t1 - t0) / buckets
    edges_at = np.asarray(step_times, dtype=np.float64)
    first_i = max(0, bisect_right(step_times, t0) - 1)
    last_i = min(len(values), bisect_left(step_times, t1))  # the steps that start before t1
    begin = np.maximum(edges_at[first_i:last_i], t0)
    end = np.minimum(edges_at[first_i + 1:last_i + 1], t1)
    inside = end > begin
    begin, end = begin[inside], end[inside]
    v = np.asarray(values[first_i:last_i], dtype=np.float64)[inside]
    first = np.minimum(buckets - 1, ((begin - t0) / width).astype(np.int64))
    last = np.minimum(buckets - 1, np.maximum(first, np.ceil((end - t0) / width).astype(np.int64) - 1))
    spans = last - first + 1  # a step longer than a bucket counts in every bucket it overlaps
    at = np.repeat(first, spans) + (np.arange(spans.sum()) - np.repeat(np.cumsum(spans) - spans, spans))
    low = np.full(buckets, np.inf)
    high = np.full(buckets, -np.inf)
    np.minimum.at(low, at, np.repeat(v, spans))
    np.maximum.at(high, at, np.repeat(v, spans))
    low_list, high_list = low.tolist(), high.tolist()
    edges = [t0 + b * width for b in range(buckets)] + [t1]
    # a bucket no step reaches (cannot happen inside the span, kept safe): the previous bucket's values
    for b in range(buckets):
        if low_list[b] == math.inf:
            low_list[b], high_list[b] = (low_list[b - 1], high_list[b - 1]) if b else (0, 0)
    return Band(edges, low_list, high_list)


def peaks(times: Sequence[float], counts: Sequence[int], t0: float, t1: float, buckets: int) -> tuple[
        list[float], list[int]]:
    """The largest count of each of `buckets` equal buckets of [t0, t1], at its own time (the first position
    with it): a stem or mark series with at most one point per bucket, each a real one."""
    if t1 <= t0 or buckets < 1:
        return [], []
    width = (t1 - t0) / buckets
    a, b = bisect_left(times, t0), bisect_right(times, t1)
    if a >= b:
        return [], []
    at = np.asarray(times[a:b], dtype=np.float64)
    count = np.asarray(counts[a:b], dtype=np.int64)
    bucket = np.minimum(buckets - 1, ((at - t0) / width).astype(np.int64))
    order = np.lexsort((np.arange(len(count)), -count, bucket))  # per bucket: the largest count, first first
    heads = order[np.r_[True, bucket[order][1:] != bucket[order][:-1]]]
    return at[heads].tolist(), count[heads].tolist()

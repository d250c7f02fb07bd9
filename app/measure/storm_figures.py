"""The measured figures of a Storm run folder (app/measure/storm_run.py), beside the model.

The Storm UI serves counts since the topology started (all-time); a recording keeps one set per poll, so
every figure is a difference between polls over their time apart (docs/storm-runs.md):

* a spout's rate: tuples emitted on its own streams per second; *replayed* ≈ failed per second (a
  reliable spout emits each failed tuple again: an upper bound), *fresh* = emitted − replayed; its
  *offered* rate adds the growth of its Kafka lag (what backpressure held back in the source);
* a bolt's α: the change of Σ executed × executeLatency over the change of executed, per input
  (the interval's own mean latency, not the all-time average the UI shows);
* σ per stream: tuples emitted on the stream / tuples executed;
* queue growth per bolt: from the receive-queue populations of a metrics-v2 reporter (`queues.jsonl`,
  summed over executors, the embedded engine's queue series) when there are any, else from the counts:
  what its inputs emitted on the streams it reads minus what it executed (tuples that arrived and were
  not executed: in its queues or in flight), both fitted with the robust growth test (app.measure.growth).

A counter that goes down (a worker restarted and its counts started again) is taken as a restart: the
new value is what was counted since. Figures a recording cannot give are listed in `cannot`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from app.core.storm.ui.replies import lags
from app.core.topology import Topology
from app.measure.analysis_model import Analysis, ComponentStats, QueueTrend, fit_trend
from app.measure.growth import fit_slope
from app.measure.storm_run import (
    Poll,
    StormRunHeader,
    queue_states,
    read_executor_metrics,
    read_header,
    read_polls,
    read_queue_samples,
)

Key = tuple[str, ...]


def _num(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):  # the readers refuse these first (storm_run.poll_problem)
        return None
    return number if math.isfinite(number) else None


def _system(name: Any) -> bool:
    return not isinstance(name, str) or name.startswith("__")


class PollCounts(BaseModel):
    """What one poll says, flattened: cumulative counters, and the levels (capacity, lag) as they were."""

    t: float
    counters: dict[str, float] = Field(default_factory=dict)  # "|".join(key) -> count
    spouts: dict[str, int] = Field(default_factory=dict)  # name -> executors
    bolts: dict[str, int] = Field(default_factory=dict)
    inputs: dict[str, list[tuple[str, str]]] = Field(default_factory=dict)  # bolt -> (component, stream)
    streams: dict[str, list[str]] = Field(default_factory=dict)  # component -> its own output streams
    capacity: dict[str, float] = Field(default_factory=dict)
    lag: dict[str, int] = Field(default_factory=dict)
    complete_ms: dict[str, float] = Field(default_factory=dict)
    page_t: dict[str, float] = Field(default_factory=dict)  # when each component's page was read (else t)


def _k(*parts: str) -> str:
    return "|".join(parts)


def executed_keys(counts: PollCounts, bolt: str) -> list[str]:
    """The counters of what `bolt` executed, one per input it reads (found from its inputs: a scan of every
    counter per bolt was quadratic in the bolts, 3,000 of them a poll)."""
    return [_k("exec", bolt, source, stream) for source, stream in counts.inputs.get(bolt, [])]


def poll_counts(poll: Poll) -> PollCounts:
    """The counters of one successful poll (component pages read with window=:all-time)."""
    page = poll.topology
    out = PollCounts(t=poll.t, page_t=dict(poll.page_t))
    for key, kinds in (("spouts", out.spouts), ("bolts", out.bolts)):
        for row in page.get(key) or []:
            found = row.get("spoutId" if key == "spouts" else "boltId") if isinstance(row, dict) else None
            if _system(found):
                continue
            name = str(found)
            comp = poll.components.get(name, {})
            kinds[name] = int(_num(comp.get("executors", row.get("executors"))) or 1)
            streams = []
            acked = failed = 0.0
            for item in comp.get("outputStats") or []:
                stream = item.get("stream", "default") if isinstance(item, dict) else None
                if _system(stream):
                    continue
                stream = str(stream)
                streams.append(stream)
                out.counters[_k("out", name, stream)] = _num(item.get("emitted")) or 0.0
                acked += _num(item.get("acked")) or 0.0
                failed += _num(item.get("failed")) or 0.0
            out.streams[name] = sorted(set(streams))
            if key == "spouts":
                if not comp.get("outputStats"):
                    acked, failed = _num(row.get("acked")) or 0.0, _num(row.get("failed")) or 0.0
                    out.counters[_k("out", name, "default")] = _num(row.get("emitted")) or 0.0
                    out.streams[name] = ["default"]
                out.counters[_k("acked", name)] = acked
                out.counters[_k("failed", name)] = failed
                latency = _num(row.get("completeLatency"))
                if latency is not None:
                    out.complete_ms[name] = latency
                continue
            capacity = _num(row.get("capacity"))
            if capacity is not None:
                out.capacity[name] = capacity
            inputs = []
            for item in comp.get("inputStats") or []:
                if not isinstance(item, dict) or _system(item.get("component")) or _system(item.get("stream", "x")):
                    continue
                source, stream = str(item.get("component")), str(item.get("stream") or "default")
                executed = _num(item.get("executed")) or 0.0
                inputs.append((source, stream))
                out.counters[_k("exec", name, source, stream)] = executed
                out.counters[_k("busy", name, source, stream)] = executed * (_num(item.get("executeLatency")) or 0.0)
                out.counters[_k("proc", name, source, stream)] = executed * (_num(item.get("processLatency")) or 0.0)
            out.inputs[name] = inputs
    if poll.lag is not None:
        out.lag = lags(poll.lag)
    return out


def unwrap(series: Sequence[float | None]) -> tuple[list[float], int]:
    """A cumulative counter made monotone across restarts (a drop: counting started again), and the
    number of restarts seen. A missing value repeats the last one."""
    out: list[float] = []
    restarts = 0
    total = 0.0
    last: float | None = None
    for value in series:
        if value is None:
            out.append(total)
            continue
        if last is None:
            total = 0.0
        elif value >= last:
            total += value - last
        else:
            total += value
            restarts += 1
        last = value
        out.append(total)
    return out, restarts


class SpoutFigures(BaseModel):
    name: str
    executors: int = 1
    emitted_rate: float | None = None
    replayed_rate: float | None = None  # failed/s: what a reliable spout emits again, at most
    fresh_rate: float | None = None
    acked_rate: float | None = None
    failed_rate: float | None = None
    complete_latency_ms: float | None = None
    lag_last: int | None = None
    lag_growth: float | None = None  # tuples/s
    offered_rate: float | None = None  # emitted + lag growth (when it grows)


class BoltFigures(BaseModel):
    name: str
    executors: int = 1
    executed_rate: float | None = None
    arrival_rate: float | None = None  # what its inputs emitted on the streams it reads, per second
    alpha_s: float | None = None
    process_s: float | None = None  # the process latency: an asynchronous bolt's α (docs/model.md section 8)
    sigma: float | None = None
    stream_sigma: dict[str, float] = Field(default_factory=dict)
    capacity_last: float | None = None
    capacity_max: float | None = None
    growth_from: str = "none"  # "metrics" (receive-queue populations), "ui-counts" or "none"
    queue: QueueTrend | None = None
    recent_growth: float | None = None  # slope over the later half of the polls: the state it is in now
    full: str | None = None  # its receive queues at their capacity at the last metrics-v2 report: what says so


def measured_topology(model: Topology, spouts: dict[str, Any], bolts: dict[str, Any]) -> Topology:
    """The model with the measured figures where there are some: spout rates (offered: emitted plus the lag's
    growth), bolt α and σ (and the declared streams' σ)."""
    new_spouts = []
    for s in model.spouts:
        f = spouts.get(s.name)
        rate = f.offered_rate if f is not None else None
        update: dict[str, Any] = {}
        if rate:
            update = {"rate": round(rate, 6), "unannotated": [u for u in s.unannotated if u != "rate"]}
        new_spouts.append(s.model_copy(update=update))
    new_bolts = []
    for b in model.bolts:
        f = bolts.get(b.name)
        update = {}
        # an asynchronous bolt's α is its process latency, never the enqueue's execute latency (model.md section 8)
        alpha = (f.process_s if b.threads is not None else f.alpha_s) if f is not None else None
        if alpha:
            update["alpha"] = round(alpha, 9)
        if f is not None and f.sigma is not None:
            update["sigma"] = round(f.sigma, 6)
            measured_streams = {n: round(v, 6) for n, v in f.stream_sigma.items() if n in b.streams}
            if measured_streams:
                update["stream_sigma"] = {**b.stream_sigma, **measured_streams}
        if update:
            update["unannotated"] = [u for u in b.unannotated if u not in update]
        new_bolts.append(b.model_copy(update=update))
    return model.model_copy(update={"spouts": new_spouts, "bolts": new_bolts})


class ModelNow(BaseModel):
    """The rate check with the figures of the later half of the recording: the state the topology is in now."""

    status: str
    utilisation: float
    growth: float
    queue_bound: float | None = None  # bounded: the queue never exceeds this (tuples), in any run


def model_now(model: Topology, figures: StormRunFigures) -> dict[str, ModelNow]:
    """Per bolt, the rate check's verdict with the later half's measured figures (empty when it cannot run)."""
    from app.core.rates import rate_check

    if not figures.recent_bolts:
        return {}
    measured = measured_topology(model, {s.name: s for s in figures.recent_spouts},
                                 {b.name: b for b in figures.recent_bolts})
    try:
        report = rate_check(measured, suggest=False)
    except Exception:  # noqa: BLE001 - a topology still not annotated: no verdict, the rest of the report stands
        return {}
    return {name: ModelNow(status=r.status, utilisation=r.utilisation, growth=r.growth_nominal,
                           queue_bound=r.queue_bound) for name, r in report.bolts.items()}


class StormRunFigures(BaseModel):
    """A Storm run folder's figures: the poll-by-poll series reduced to rates, α, σ and growth."""

    folder: str
    header: StormRunHeader
    polls: int
    gaps: int
    gap_lines: list[str] = Field(default_factory=list)
    span_s: float = 0.0
    restarts: int = 0
    spouts: list[SpoutFigures] = Field(default_factory=list)
    bolts: list[BoltFigures] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    cannot: list[str] = Field(default_factory=list)
    recent_from_s: float | None = None  # the later half of the polls starts here (seconds since the first)
    compared_from_s: float | None = None  # a bolt started to grow here: the comparison's figures are from then on
    recent_spouts: list[SpoutFigures] = Field(default_factory=list)
    recent_bolts: list[BoltFigures] = Field(default_factory=list)


def _series(counts: list[PollCounts], key: str) -> tuple[list[float], int]:
    return unwrap([c.counters.get(key) for c in counts])


def _delta(counts: list[PollCounts], key: str, i: int, j: int) -> float:
    values, _ = _series(counts, key)
    return values[j] - values[i]


def figures_between(counts: list[PollCounts], i: int, j: int) -> tuple[dict[str, SpoutFigures],
                                                                      dict[str, BoltFigures]]:
    """Rates, α and σ between poll i and poll j (indexes into the successful polls)."""
    dt = counts[j].t - counts[i].t
    spouts: dict[str, SpoutFigures] = {}
    bolts: dict[str, BoltFigures] = {}
    last = counts[j]
    names_s = {n for c in counts for n in c.spouts}
    names_b = {n for c in counts for n in c.bolts}
    streams: dict[str, set[str]] = {}
    for c in counts:
        for n, ss in c.streams.items():
            streams.setdefault(n, set()).update(ss)

    def own(name: str) -> list[str]:
        ss = streams.get(name, set())
        return ["default"] if "default" in ss and len(ss) > 1 else sorted(ss)

    def span(name: str) -> float:
        """The time between the two readings of this component's page (each page is read at its own moment)."""
        a, b = counts[i].page_t.get(name), counts[j].page_t.get(name)
        return b - a if a is not None and b is not None and math.isfinite(b - a) and b > a else dt

    for name in sorted(names_s):
        sf = SpoutFigures(name=name, executors=last.spouts.get(name, 1), complete_latency_ms=last.complete_ms.get(name),
                          lag_last=last.lag.get(name))
        spouts[name] = sf
        if dt > 0:
            emitted = sum(_delta(counts, _k("out", name, s), i, j) for s in own(name))
            failed = _delta(counts, _k("failed", name), i, j)
            own_dt = span(name)
            sf.emitted_rate = emitted / own_dt
            sf.failed_rate = failed / own_dt
            sf.acked_rate = _delta(counts, _k("acked", name), i, j) / own_dt
            sf.replayed_rate = min(sf.failed_rate, sf.emitted_rate)
            sf.fresh_rate = sf.emitted_rate - sf.replayed_rate
            lag_points = [(c.t, float(c.lag[name])) for c in counts[i:j + 1] if name in c.lag]
            if len(lag_points) >= 2 and lag_points[-1][0] > lag_points[0][0]:
                fit = fit_slope(lag_points) if len(lag_points) >= 3 else None
                sf.lag_growth = fit.slope if fit is not None else \
                    (lag_points[-1][1] - lag_points[0][1]) / (lag_points[-1][0] - lag_points[0][0])
            sf.offered_rate = sf.emitted_rate + max(0.0, sf.lag_growth or 0.0)
    for name in sorted(names_b):
        inputs = sorted({tuple(x) for c in counts for x in c.inputs.get(name, [])})
        f = BoltFigures(name=name, executors=last.bolts.get(name, 1), capacity_last=last.capacity.get(name))
        caps = [c.capacity[name] for c in counts[i:j + 1] if name in c.capacity]
        f.capacity_max = max(caps) if caps else None
        if dt > 0:
            executed = sum(_delta(counts, _k("exec", name, s, st), i, j) for s, st in inputs)
            busy = sum(_delta(counts, _k("busy", name, s, st), i, j) for s, st in inputs)
            f.executed_rate = executed / span(name)
            f.arrival_rate = sum(_delta(counts, _k("out", s, st), i, j) / span(s) for s, st in inputs)
            if executed > 0:
                f.alpha_s = max(busy / executed, 0.0005) / 1000.0
                proc = sum(_delta(counts, _k("proc", name, s, st), i, j) for s, st in inputs)
                f.process_s = proc / executed / 1000.0 if proc > 0 else None
                by_stream = {s: _delta(counts, _k("out", name, s), i, j) for s in streams.get(name, set())}
                f.sigma = sum(by_stream.get(s, 0.0) for s in own(name)) / executed
                f.stream_sigma = {s: v / executed for s, v in by_stream.items() if s != "default"}
        bolts[name] = f
    return spouts, bolts


def backlog_series(counts: list[PollCounts], bolt: str) -> list[tuple[float, float]]:
    """(seconds since the first poll, tuples its inputs emitted on the streams it reads − tuples it executed),
    from 0 at the first poll: its queue's change, tuples in flight included."""
    inputs = sorted({tuple(x) for c in counts for x in c.inputs.get(bolt, [])})
    if not inputs or not counts:
        return []
    arrived = [0.0] * len(counts)
    executed = [0.0] * len(counts)
    for source, stream in inputs:
        a, _ = _series(counts, _k("out", source, stream))
        e, _ = _series(counts, _k("exec", bolt, source, stream))
        arrived = [x + y for x, y in zip(arrived, a, strict=True)]
        executed = [x + y for x, y in zip(executed, e, strict=True)]
    t0 = counts[0].t
    return [(c.t - t0, a - e) for c, a, e in zip(counts, arrived, executed, strict=True)]


def _split_errors(points: list[tuple[float, float]]) -> list[float | None]:
    """For each k, the least-squares error of a line through points[:k + 1] plus that of a line through
    points[k:] (None where a part has no spread in x), in one pass each way: running means and co-moments
    (Welford's updates, stable for times of a week or more) give every prefix's and suffix's error, so the
    search over k is linear, not one O(n) fit per k."""

    def running(seq: Sequence[tuple[float, float]]) -> list[float | None]:
        out: list[float | None] = []
        mx = my = mxx = myy = cxy = 0.0
        for n, (x, y) in enumerate(seq, 1):
            dx = x - mx
            mx += dx / n
            dy = y - my
            my += dy / n
            mxx += dx * (x - mx)
            myy += dy * (y - my)
            cxy += dx * (y - my)
            out.append(max(myy - cxy * cxy / mxx, 0.0) if mxx > 0.0 else None)
        return out

    prefix = running(points)  # prefix[k]: points[:k + 1]
    suffix = running(points[::-1])[::-1]  # suffix[k]: points[k:]
    return [None if a is None or b is None else a + b for a, b in zip(prefix, suffix, strict=True)]


def growth_onset(points: list[tuple[float, float]]) -> int | None:
    """Where a series that was flat (or slower) starts to grow faster: the split into two lines with the least
    squared error, kept only when the later line's 95 % interval lies above the earlier one's (a topology
    drifting into overload during the recording). None: no such change. Linear in the points (`_split_errors`)."""
    n = len(points)
    if n < 8:
        return None
    errors = _split_errors(points)
    best: tuple[float, int] | None = None
    for k in range(3, n - 3):
        sse = errors[k]
        if sse is not None and (best is None or sse < best[0]):
            best = (sse, k)
    if best is None:
        return None
    k = best[1]
    a, b = fit_slope(points[:k + 1]), fit_slope(points[k:])
    if a is None or b is None or not (b.low > a.high and b.low > 0):
        return None
    return k


def growth_trend(points: list[tuple[float, float]], growth_floor: float, step: float,
                 onset: int | None = -1) -> QueueTrend | None:
    """The robust growth test (app.measure.growth) of the whole series, or of the part after it started to
    grow faster (`growth_onset`, or `onset` when the caller found it already), which then decides the verdict."""
    k = growth_onset(points) if onset == -1 else onset
    if k is None:
        return fit_trend(points, growth_floor, step)
    trend = fit_trend(points[k:], growth_floor, step)
    whole = fit_slope(points)
    if trend is None:
        return fit_trend(points, growth_floor, step)
    before = fit_slope(points[:k + 1])
    earlier = 0.0 if before is None else before.slope
    trend.note = (f"grows faster from t={points[k][0]:.4g} s ({trend.slope:+.4g}/s since, {earlier:+.4g}/s before)"
                  + (f"; {trend.note}" if trend.note else ""))
    trend.run_slope = whole.slope if whole is not None else None
    return trend


def _recent(points: list[tuple[float, float]]) -> float | None:
    later = points[len(points) // 2:]
    fit = fit_slope(later) if len(later) >= 3 else None
    return fit.slope if fit is not None else None


def storm_run_figures(folder: str, bin_s: float | None = None,
                      growth_floor: float = 0.05) -> tuple[StormRunFigures, Analysis]:
    """The figures of a Storm run folder, and the same as an `Analysis` (what `analyze` prints and
    `compare` sets beside the model)."""
    header = read_header(folder)
    polls, notes = read_polls(folder)
    ok = [p for p in polls if p.ok]
    gap_polls = [p for p in polls if not p.ok]
    counts = [poll_counts(p) for p in ok]
    samples = read_queue_samples(folder)
    figures = StormRunFigures(folder=folder, header=header, polls=len(polls), gaps=len(gap_polls), notes=notes,
                              gap_lines=[f"poll {p.poll} (t={p.t - polls[0].t:.4g} s): {p.gap}" for p in gap_polls])
    spouts: dict[str, SpoutFigures] = {}
    bolts: dict[str, BoltFigures] = {}
    if len(counts) >= 2:
        spouts, bolts = figures_between(counts, 0, len(counts) - 1)
        figures.span_s = counts[-1].t - counts[0].t
        if len(counts) >= 4:
            half = len(counts) // 2
            recent_s, recent_b = figures_between(counts, half, len(counts) - 1)
            figures.recent_from_s = counts[half].t - counts[0].t
            figures.recent_spouts, figures.recent_bolts = list(recent_s.values()), list(recent_b.values())
        figures.restarts = sum(_series(counts, key)[1] for key in {k for c in counts for k in c.counters})
        if figures.restarts:
            figures.notes.append(f"{figures.restarts} counter(s) went down between polls (a worker restarted): "
                                 "counted again from there")
    elif counts:
        figures.notes.append("one successful poll: rates, α, σ and growth need two")
    intervals = sorted(b.t - a.t for a, b in zip(counts, counts[1:], strict=False) if b.t > a.t)
    step = bin_s or (intervals[len(intervals) // 2] if intervals else 1.0)
    queue_trends: dict[str, ComponentStats] = {}
    series: dict[str, list[tuple[float, float]]] = {}
    onsets: list[int] = []
    if samples:
        from app.measure.analysis import analyze_local

        rows = [(s["t"], s["comp"], s["task"], int(s["queue"])) for s in samples]  # the engine's queue rows
        # plain rows, as analyze_local takes them
        measured_q = analyze_local([], rows, bin_s=bin_s or max(step, 1e-3),  # type: ignore[arg-type]
                                   growth_floor=growth_floor, source=folder)
        queue_trends = measured_q.components
    for name in sorted({s["comp"] for s in samples} - set(bolts) - set(spouts)):
        bolts[name] = BoltFigures(name=name)
    for name, f in bolts.items():
        q = queue_trends.get(name)
        if q is not None and q.queue is not None:
            f.growth_from, f.queue = "metrics", growth_trend(q.series, growth_floor, step) or q.queue
            f.recent_growth = _recent(q.series)
            series[name] = q.series
        elif len(counts) >= 3:
            points = backlog_series(counts, name)
            if points:
                onset = growth_onset(points)
                f.growth_from, f.queue = "ui-counts", growth_trend(points, growth_floor, step, onset)
                f.recent_growth = _recent(points)
                series[name] = points
                if onset is not None:
                    onsets.append(onset)
    _full_queues(folder, bolts, figures.notes)
    figures.spouts = list(spouts.values())
    figures.bolts = list(bolts.values())
    figures.cannot = cannot_measure(figures, bool(counts), bool(samples))
    compared = figures
    if onsets and len(counts) - max(onsets) >= 3:
        # a bolt started to grow during the recording: the model is compared with the figures from then on
        start = max(onsets)
        after_s, after_b = figures_between(counts, start, len(counts) - 1)
        for name, f in after_b.items():
            f.queue, f.growth_from, f.recent_growth = bolts[name].queue, bolts[name].growth_from, \
                bolts[name].recent_growth
        figures.compared_from_s = counts[start].t - counts[0].t
        compared = figures.model_copy(update={"spouts": list(after_s.values()), "bolts": list(after_b.values()),
                                              "span_s": counts[-1].t - counts[start].t})
        figures.notes.append(f"a bolt started to grow at t={figures.compared_from_s:.4g} s: rates, α and σ compared "
                             "with the model are those measured from then on")
    analysis = as_analysis(compared, counts, samples, step, growth_floor)
    for name, points in series.items():
        analysis.components[name].series = points
    return figures, analysis


def _full_queues(folder: str, bolts: dict[str, BoltFigures], notes: list[str]) -> None:
    """A bolt whose receive queues were at their capacity at the last metrics-v2 report (app/measure/storm_run.py,
    `queue_states`) is overloaded whatever its population's slope (a full queue cannot grow): its verdict is
    `grows`, and it is named `full`."""
    states = queue_states(read_executor_metrics(folder))
    for name, state in states.items():
        f = bolts.get(name)
        if f is None or not state.is_full():
            continue
        f.full = state.full_text()
        if f.queue is not None:
            f.queue = f.queue.model_copy(update={"verdict": "grows",
                                                 "note": f"full: {f.full}" + (f"; {f.queue.note}" if f.queue.note
                                                                               else "")})
        notes.append(f"{name}: full: {f.full} at the last metrics report: overloaded (a queue at its capacity "
                     "cannot grow, so its population's slope says nothing)")


def cannot_measure(figures: StormRunFigures, ui: bool, metrics: bool) -> list[str]:
    """What this recording cannot give, in the user's words."""
    out = ["bursts: the Storm UI and the queue metrics have no burst sizes (the model's burst is kept)"]
    if ui:
        out.append("fresh and replayed spout tuples are told apart only by the failed count: replayed ≈ failed "
                   "(every failed tuple emitted again), an upper bound; the UI counts both as emitted")
        out.append("α is the execute latency: time in execute() only, not the queueing before it")
        if not metrics:
            out.append("queue populations: not recorded (import a metrics-v2 reporter's receive-queue.population "
                       "with `import metrics DIR --out RUNDIR`); growth is what arrived minus what was executed, "
                       "tuples in flight included")
        if not any(s.lag_last is not None for s in figures.spouts):
            out.append("Kafka lag: the UI served none (before Storm 1.1, or spouts that are not Kafka's): the "
                       "offered load is the emitted rate, throttled under backpressure")
    elif metrics:
        out.append("rates, α and σ: a metrics folder alone has only queue populations (record the Storm UI "
                   "with `record` into the same folder)")
    else:
        out.append("nothing: no poll succeeded and no queue metrics were imported")
    return out


def as_analysis(figures: StormRunFigures, counts: list[PollCounts], samples: list[dict[str, Any]], step: float,
                growth_floor: float) -> Analysis:
    """The figures in the shape `analyze` prints and `compare` reads (rate_out of a spout: its offered rate)."""
    components: dict[str, ComponentStats] = {}
    span = figures.span_s
    for s in figures.spouts:
        components[s.name] = ComponentStats(
            name=s.name, kind="spout", tasks=s.executors,
            emitted=int(round((s.emitted_rate or 0.0) * span)), taken=None,
            acked=int(round((s.acked_rate or 0.0) * span)), failed=int(round((s.failed_rate or 0.0) * span)),
            rate_in=None, rate_out=s.offered_rate or s.emitted_rate or 0.0)
    for b in figures.bolts:
        components[b.name] = ComponentStats(
            name=b.name, kind="bolt", tasks=b.executors,
            emitted=int(round((b.sigma or 0.0) * (b.executed_rate or 0.0) * span)),
            taken=None if b.executed_rate is None else int(round(b.executed_rate * span)), acked=None, failed=None,
            rate_in=b.executed_rate, rate_out=(b.sigma or 0.0) * (b.executed_rate or 0.0),
            alpha_mean=b.alpha_s, alpha_is_execute=True, alpha_process=b.process_s, sigma=b.sigma, queue=b.queue)
    start = counts[0].t if counts else 0.0
    end = counts[-1].t if counts else 0.0
    if samples and not counts:
        start, end = min(s["t"] for s in samples), max(s["t"] for s in samples)
    return Analysis(source=figures.folder, start=start, end=end, events=0, queue_samples=len(samples), bin_s=step,
                    growth_floor=growth_floor, components=components, notes=list(figures.cannot))


def model_of_run(folder: str) -> Topology | None:
    """The topology as the first successful poll showed it (the Storm UI import's mapping over all-time counts),
    None when no poll succeeded or its pages make no topology."""
    from app.core.formats import FormatError
    from app.core.storm.ui.reader import from_storm_ui
    from app.core.storm.ui.replies import StormUISnapshot

    header = read_header(folder)
    polls, _ = read_polls(folder)
    for p in polls:
        if not p.ok:
            continue
        page = {**p.topology, "configuration": header.configuration}
        snapshot = StormUISnapshot(url=header.url, topology_id=header.topology_id, window="all", topology=page,
                                   components=p.components, lag=[(0.0, p.lag)] if p.lag is not None else [])
        try:
            return from_storm_ui(snapshot).topology
        except (FormatError, ValueError):
            return None
    return None

"""Measured figures of a run, computed in one process (the Spark twin: app/spark/analysis_job.py).

Per component: throughput in (takes/s) and out (emits/s), measured α (from a take to
the first emit anchored to that tuple, else to its ack: the end of its batch), σ
(emitted per taken), spout rates and burst sizes (emits of one task less than
`burst_gap` apart form a burst; a spout's rate is the tuples of all but its last burst
over the time from its first to its last burst, so the idle tail of a log is not
counted), and per queue the series (mean of the samples in each `bin_s` bin, summed over
tasks) with a least-squares slope, its 95 % confidence interval robust to autocorrelation
and a verdict (app.measure.growth): `grows` when the interval lies above zero and reaches
`growth_floor` tuples/s and the growth persists past any warm-up, `stable` when it lies
below the floor, `uncertain` otherwise (with the run length that would tell).

`analyze_local` and `analyze_path_local` compute it in this process; the Spark job with the
same definition is `app.spark.analysis_job.analyze` (app/spark/analysis_job.py), which the
tests cross-check against these.
"""

from __future__ import annotations

import math
from array import array
from collections import defaultdict
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, Field

from app.measure.eventlog import Event, QueueSample
from app.measure.growth import assess, t_quantile

Verdict = Literal["grows", "stable", "uncertain"]


class QueueTrend(BaseModel):
    """A queue's growth: the slope the verdict rests on, its autocorrelation-robust 95 % interval
    (app.measure.growth), and the verdict. After a warm-up (`warmup_until`), slope and interval are
    those of the settled part of the run; `run_slope` is the whole run's."""

    slope: float
    ci_low: float
    ci_high: float
    intercept: float
    points: int
    verdict: Verdict
    first: float = 0.0
    last: float = 0.0
    run_slope: float | None = None
    lag: int = Field(default=0, description="Bartlett lags of the HAC interval")
    rho: float = Field(default=0.0, description="AR(1) prewhitening coefficient of the residuals")
    warmup_until: float | None = Field(default=None,
                                       description="time (s) a warm-up ended; the verdict uses what follows")
    needed_s: float | None = Field(default=None, description="uncertain: about how long a run would tell")
    note: str = ""


class ComponentStats(BaseModel):
    """What one component did during the run (rates in tuples per second)."""

    name: str
    kind: Literal["spout", "bolt"]
    tasks: int = 1
    emitted: int = 0
    taken: int = 0
    acked: int = 0
    failed: int = 0
    rate_in: float = 0.0
    rate_out: float = 0.0
    alpha_mean: float | None = None
    alpha_min: float | None = None
    alpha_max: float | None = None
    alpha_std: float | None = None
    sigma: float | None = None
    bursts: int = 0
    burst_mean: float | None = None
    burst_max: int | None = None
    queue: QueueTrend | None = None
    series: list[tuple[float, float]] = Field(default_factory=list, description="(bin start s, queue) points")


class Analysis(BaseModel):
    """The measured figures of one log."""

    source: str = ""
    start: float
    end: float
    events: int
    queue_samples: int
    bin_s: float
    growth_floor: float
    components: dict[str, ComponentStats]
    notes: list[str] = Field(default_factory=list, description="figures this kind of log cannot give")

    @property
    def duration_s(self) -> float:
        return max(0.0, self.end - self.start)


def t_quantile_975(dof: int) -> float:
    """The 97.5 % quantile of Student's t."""
    return t_quantile(0.975, dof)


def fit_trend(points: list[tuple[float, float]], growth_floor: float, bin_s: float = 1.0) -> QueueTrend | None:
    """The slope of a (time, queue) series with its robust interval and verdict (app.measure.growth.assess)."""
    found = assess(points, growth_floor, bin_s)
    if found is None:
        return None
    basis = found.late if found.warmup and found.late is not None else found.fit
    pts = sorted(points)
    return QueueTrend(slope=basis.slope, ci_low=basis.low, ci_high=basis.high, intercept=basis.intercept,
                      points=len(pts), verdict=found.verdict, first=pts[0][1], last=pts[-1][1],
                      run_slope=found.fit.slope, lag=basis.lag, rho=basis.rho,
                      warmup_until=pts[len(pts) - basis.points][0] if found.warmup else None,
                      needed_s=found.needed_s, note=found.note)


def finish_queues(components: dict[str, ComponentStats], bins: dict[str, list[tuple[float, float]]],
            growth_floor: float, bin_s: float = 1.0) -> None:
    for name, pts in bins.items():
        pts.sort()
        stats = components.setdefault(name, ComponentStats(name=name, kind="bolt"))
        stats.series = pts
        stats.queue = fit_trend(pts, growth_floor, bin_s)


class LocalAnalysis:
    """The analysis in one process, one pass over batches of plain event and queue rows
    (app.measure.logstream). It keeps the state the figures need, not the events: per taken
    tuple its first take, first anchored emit and first ack/fail (tuple ids shared between
    the three maps), the spout emit times per task, and the queue samples."""

    def __init__(self, bin_s: float = 1.0, growth_floor: float = 0.05, burst_gap: float = 0.005):
        self.bin_s, self.growth_floor, self.burst_gap = bin_s, growth_floor, burst_gap
        self.start, self.end = math.inf, -math.inf
        self.events = 0
        self.queue_samples = 0
        self.counts: dict[tuple[str, str], int] = {}
        self.tasks: dict[str, set[int]] = defaultdict(set)
        self.ids: dict[str, str] = {}  # one string object per tuple id, shared by the maps below
        self.take_t: dict[str, dict[str, float]] = defaultdict(dict)
        self.emit_t: dict[str, dict[str, float]] = defaultdict(dict)
        self.ack_t: dict[str, dict[str, float]] = defaultdict(dict)
        self.emit_times: dict[tuple[str, int], array] = {}
        self.samples: dict[tuple[str, int], list[tuple[float, int]]] = defaultdict(list)

    def add_events(self, rows: Iterable[tuple]) -> None:
        """Rows (t, ev, comp, task, tuple, msg, anchors, reason)."""
        counts, tasks, ids = self.counts, self.tasks, self.ids
        start, end, n = self.start, self.end, 0
        for t, ev, comp, task, tup, _msg, anchors, _reason in rows:
            n += 1
            if t < start:
                start = t
            if t > end:
                end = t
            key = (comp, ev)
            counts[key] = counts.get(key, 0) + 1
            tasks[comp].add(task)
            if ev == "take":
                tup = ids.setdefault(tup, tup)
                d = self.take_t[comp]
                old = d.get(tup)
                if old is None or t < old:
                    d[tup] = t
            elif ev == "bolt_emit":
                if anchors:
                    d = self.emit_t[comp]
                    for a in anchors:
                        a = ids.setdefault(a, a)
                        old = d.get(a)
                        if old is None or t < old:
                            d[a] = t
            elif ev == "bolt_ack" or ev == "bolt_fail":
                tup = ids.setdefault(tup, tup)
                d = self.ack_t[comp]
                old = d.get(tup)
                if old is None or t < old:
                    d[tup] = t
            elif ev == "spout_emit":
                times = self.emit_times.get((comp, task))
                if times is None:
                    times = self.emit_times[(comp, task)] = array("d")
                times.append(t)
        self.start, self.end = start, end
        self.events += n

    def add_queues(self, rows: Iterable[tuple]) -> None:
        """Rows (t, comp, task, queue)."""
        for t, comp, task, q in rows:
            self.queue_samples += 1
            if t < self.start:
                self.start = t
            if t > self.end:
                self.end = t
            self.samples[(comp, task)].append((t, q))

    def result(self, source: str = "") -> Analysis:
        start, end = (self.start, self.end) if self.events or self.queue_samples else (0.0, 0.0)
        duration = max(end - start, 1e-9)
        per_comp: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        for (comp, ev), k in self.counts.items():
            per_comp[comp][ev] += k
        components: dict[str, ComponentStats] = {}
        for comp, n in per_comp.items():
            kind = "spout" if n["spout_emit"] else "bolt"
            components[comp] = ComponentStats(
                name=comp, kind=kind, tasks=len(self.tasks[comp]), emitted=n["spout_emit"] + n["bolt_emit"],
                taken=n["take"], acked=n["bolt_ack"] + n["spout_ack"], failed=n["bolt_fail"] + n["spout_fail"],
                rate_in=n["take"] / duration, rate_out=(n["spout_emit"] + n["bolt_emit"]) / duration,
                sigma=(n["bolt_emit"] / n["take"]) if kind == "bolt" and n["take"] else None)
        for comp, takes in self.take_t.items():
            emits, acks = self.emit_t.get(comp, {}), self.ack_t.get(comp, {})
            count, mean, m2, lo, hi = 0, 0.0, 0.0, math.inf, -math.inf
            for tup, t0 in takes.items():
                t1 = emits.get(tup)
                if t1 is None:
                    t1 = acks.get(tup)
                if t1 is None or t1 < t0:
                    continue
                x = t1 - t0
                count += 1
                delta = x - mean  # Welford: a stable running variance
                mean += delta / count
                m2 += delta * (x - mean)
                if x < lo:
                    lo = x
                if x > hi:
                    hi = x
            if count:
                c = components[comp]
                c.alpha_mean, c.alpha_min, c.alpha_max = mean, lo, hi
                c.alpha_std = math.sqrt(max(0.0, m2 / count))
        burst_sizes: dict[str, list[int]] = defaultdict(list)
        spout_rate: dict[str, float] = {}
        for (comp, _task), ts in self.emit_times.items():
            ordered = sorted(ts)
            sizes: list[int] = []
            starts: list[float] = []
            last = None
            for t in ordered:
                if last is None or t - last > self.burst_gap:
                    sizes.append(0)
                    starts.append(t)
                sizes[-1] += 1
                last = t
            burst_sizes[comp] += sizes
            if starts[-1] > starts[0]:
                spout_rate[comp] = spout_rate.get(comp, 0.0) + (sum(sizes) - sizes[-1]) / (starts[-1] - starts[0])
        for comp, sizes in burst_sizes.items():
            c = components[comp]
            c.bursts, c.burst_mean, c.burst_max = len(sizes), sum(sizes) / len(sizes), max(sizes)
            if comp in spout_rate:
                c.rate_out = spout_rate[comp]
        per_bin: dict[tuple[str, int, int], list[float]] = {}
        for (comp, task), samples in self.samples.items():
            for t, q in samples:
                slot = per_bin.setdefault((comp, task, math.floor((t - start) / self.bin_s)), [0.0, 0])
                slot[0] += q
                slot[1] += 1
        summed: dict[tuple[str, int], float] = defaultdict(float)
        for (comp, _task, slot_no), (total, n_samples) in per_bin.items():
            summed[(comp, slot_no)] += total / n_samples
        bins: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for (comp, slot_no), level in summed.items():
            bins[comp].append((start + (slot_no + 0.5) * self.bin_s, level))
        finish_queues(components, bins, self.growth_floor, self.bin_s)
        return Analysis(source=source, start=start, end=end, events=self.events, queue_samples=self.queue_samples,
                        bin_s=self.bin_s, growth_floor=self.growth_floor, components=components)


def analyze_local(events: Iterable[Event], queues: Iterable[QueueSample], bin_s: float = 1.0,
                  growth_floor: float = 0.05, burst_gap: float = 0.005, source: str = "") -> Analysis:
    """The same analysis in one process, over Event and QueueSample records (or their plain rows)."""
    from app.measure.logstream import event_row, queue_row

    acc = LocalAnalysis(bin_s, growth_floor, burst_gap)
    acc.add_events(event_row(e) if isinstance(e, Event) else e for e in events)
    acc.add_queues(queue_row(q) if isinstance(q, QueueSample) else q for q in queues)
    return acc.result(source)


def analyze_path_local(path, time_unit: str = "s", bin_s: float = 1.0, growth_floor: float = 0.05,
                       burst_gap: float = 0.005, source: str | None = None) -> Analysis:
    """The analysis of a log file or run folder in this process, streamed in batches (no Spark)."""
    from app.measure.eventlog import log_format, read_storm_metrics
    from app.measure.logstream import batches

    acc = LocalAnalysis(bin_s, growth_floor, burst_gap)
    for events, queues in batches(path, time_unit):  # type: ignore[arg-type]  # a str time unit, checked by the reader
        acc.add_events(events)
        acc.add_queues(queues)
    result = acc.result(str(path) if source is None else source)
    fmt = log_format(path)
    if fmt == "storm-metrics":  # rates and latencies come from the metrics
        result = apply_storm_metrics(result, read_storm_metrics(path).metrics)
    elif fmt == "storm-events":  # emits only: say what such a log cannot give (as the Spark engine does)
        from app.measure.storm_events import apply_storm_events, read_storm_events

        result = apply_storm_events(result, read_storm_events(path))
    return result


# ---- Storm metrics logs ----------------------------------------------------


def apply_storm_metrics(analysis: Analysis, metrics: Iterable) -> Analysis:
    """Fill throughput and α from LoggingMetricsConsumer data points (a metrics log has no per-tuple events).

    `__execute-count` counts executed tuples per reporting bucket, so a task's rate is its
    total count over (reports x bucket length, the median gap between its reports);
    α is the count-weighted mean `__execute-latency` (ms -> s).
    """
    counts: dict[tuple[str, int], dict[float, float]] = defaultdict(lambda: defaultdict(float))
    latency: dict[str, list[tuple[float, float]]] = defaultdict(list)
    per_time: dict[tuple[str, int, float], float] = defaultdict(float)
    for m in metrics:
        if m.name == "__execute-count":
            counts[(m.comp, m.task)][m.t] += m.value
            per_time[(m.comp, m.task, m.t)] += m.value
        elif m.name == "__execute-latency":
            latency[m.comp].append((m.value, per_time.get((m.comp, m.task, m.t), 1.0)))
    rates: dict[str, float] = defaultdict(float)
    totals: dict[str, float] = defaultdict(float)
    for (comp, _task), by_time in counts.items():
        times = sorted(by_time)
        gaps = sorted(b - a for a, b in zip(times, times[1:], strict=False) if b > a)
        bucket = gaps[len(gaps) // 2] if gaps else 60.0
        rates[comp] += sum(by_time.values()) / (len(times) * bucket)
        totals[comp] += sum(by_time.values())
    for comp in set(rates) | set(latency):
        stats = analysis.components.setdefault(comp, ComponentStats(name=comp, kind="bolt"))
        if comp in rates:
            stats.rate_in = rates[comp]
            stats.taken = int(totals[comp])
        if latency.get(comp):
            weight = sum(w for _, w in latency[comp]) or 1.0
            values = [v / 1000.0 for v, _ in latency[comp]]
            stats.alpha_mean = sum(v / 1000.0 * w for v, w in latency[comp]) / weight
            stats.alpha_min, stats.alpha_max = min(values), max(values)
    return analysis

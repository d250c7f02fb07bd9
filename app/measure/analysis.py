"""Measured figures of a run: `analyze` in this process, on the embedded engine (DuckDB).

The figures are defined once, as SQL, in app/measure/sql/analysis.py (counts, rates, α,
σ, bursts, queue series; the docstring there says how each is computed); the models they
fill and the queue-trend fit are in app/measure/analysis_model.py. Spark runs the same
queries (app/spark/analysis_job.py). Storm metrics logs add their rates and latencies
(`apply_storm_metrics`), Storm events logs say what they cannot give (app.measure.storm_events).
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable

from app.measure.analysis_model import (
    Analysis,
    ComponentStats,
    QueueTrend,
    Verdict,
    finish_queues,
    fit_trend,
    t_quantile_975,
)
from app.measure.eventlog import Event, QueueSample
from app.measure.records import MetricSample

__all__ = ["Analysis", "ComponentStats", "QueueTrend", "Verdict", "finish_queues", "fit_trend", "t_quantile_975",
           "analyze_local", "analyze_path_local", "apply_storm_metrics"]


def analyze_local(events: Iterable[Event], queues: Iterable[QueueSample], bin_s: float = 1.0,
                  growth_floor: float = 0.05, burst_gap: float = 0.005, source: str = "") -> Analysis:
    """The analysis on the embedded engine, over Event and QueueSample records (or their plain rows)."""
    from app.measure.logstream import event_row, queue_row
    from app.measure.sql.analysis import analyze_sql
    from app.measure.sql.embedded import Embedded

    with Embedded() as engine:
        engine.load_rows((event_row(e) if isinstance(e, Event) else e for e in events),
                         (queue_row(q) if isinstance(q, QueueSample) else q for q in queues))
        return analyze_sql(engine.run, engine.dialect, engine.events, engine.queues, bin_s, growth_floor,
                           burst_gap, source)


def analyze_path_local(path: str | os.PathLike[str], time_unit: str = "s", bin_s: float = 1.0,
                       growth_floor: float = 0.05, burst_gap: float = 0.005, source: str | None = None) -> Analysis:
    """The analysis of a log file or run folder on the embedded engine (no Spark, no JVM)."""
    from app.measure.eventlog import log_format, read_storm_metrics
    from app.measure.sql.analysis import analyze_sql
    from app.measure.sql.embedded import embedded_log

    with embedded_log(path, time_unit) as engine:  # type: ignore[arg-type]  # a str time unit, checked by the reader
        result = analyze_sql(engine.run, engine.dialect, engine.events, engine.queues, bin_s, growth_floor,
                             burst_gap, str(path) if source is None else source)
    fmt = log_format(path)
    if fmt == "storm-metrics":  # rates and latencies come from the metrics
        result = apply_storm_metrics(result, read_storm_metrics(path).metrics)
    elif fmt == "storm-events":  # emits only: say what such a log cannot give (as the Spark engine does)
        from app.measure.storm_events import apply_storm_events, read_storm_events

        result = apply_storm_events(result, read_storm_events(path))
    return result


# ---- Storm metrics logs ----------------------------------------------------


def apply_storm_metrics(analysis: Analysis, metrics: Iterable[MetricSample]) -> Analysis:
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

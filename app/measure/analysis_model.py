"""The figures of a run's log as a report: the models `analyze` fills (both engines) and the queue-trend fit.

The figures themselves are defined once, as SQL, in app/measure/sql/analysis.py; the
trend of each queue series is fitted here (app.measure.growth), after either engine
has computed the series.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

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


class SegmentTrend(BaseModel):
    """A queue's trend over one stretch of a run with failures: before the first failure, or after one failure
    or recovery until the next (`label` says which); None: too few points to fit."""

    start: float
    end: float
    label: str
    trend: QueueTrend | None


class ComponentStats(BaseModel):
    """What one component did during the run (rates in tuples per second)."""

    name: str
    kind: Literal["spout", "bolt"]
    tasks: int = 1
    emitted: int = 0
    taken: int | None = Field(default=0, description="None: this kind of log cannot say (a Storm events.log)")
    acked: int | None = Field(default=0, description="None: this kind of log cannot say")
    failed: int | None = Field(default=0, description="None: this kind of log cannot say")
    rate_in: float | None = Field(default=0.0, description="takes/s; None: this kind of log cannot say")
    rate_out: float = 0.0
    rate_fresh: float | None = Field(default=None, description="spout: new messages per second (rate_out less replays)")
    rate_replayed: float | None = Field(default=None, description="spout: failed messages emitted again per second")
    alpha_mean: float | None = None
    alpha_min: float | None = None
    alpha_max: float | None = None
    alpha_std: float | None = None
    alpha_is_execute: bool = Field(default=False, description=(
        "a Storm run's alpha_mean is its execute latency: an asynchronous bolt's α is then alpha_process"))
    alpha_process: float | None = Field(default=None, description="a Storm run's process latency (s)")
    sigma: float | None = None
    bursts: int = 0
    burst_mean: float | None = None
    burst_max: int | None = None
    queue: QueueTrend | None = None
    series: list[tuple[float, float]] = Field(default_factory=list, description="(bin start s, queue) points")
    failures: int = Field(default=0, description="times a task of this bolt went down (bolt_down events)")
    down: list[tuple[float, float]] = Field(default_factory=list,
                                            description="(down, up) times of each failure; up = log end if never up")
    down_s: float = Field(default=0.0, description="seconds its tasks were down, summed")
    lost: int = Field(default=0, description="tuples lost by this bolt: queue, batch and arrivals while down")
    trees_failed: int = Field(default=0, description="spout: its messages' trees that failed (spout_fail)")
    replays: int = Field(default=0, description="spout: failed messages it emitted again (spout_emit REPLAY)")
    completed: int = Field(default=0, description="spout: trees acked (spout_ack after a spout_emit of the same msg)")
    complete_max: float | None = Field(default=None, description=(
        "spout: the longest complete latency (s), from a message's last emission (a replay starts anew) to its ack"))
    complete_mean: float | None = Field(default=None, description="spout: the mean complete latency (s)")
    segments: list[SegmentTrend] = Field(
        default_factory=list, description="a run with failures: the queue's trend between failures and recoveries")


    def alpha_for(self, threads: int | None) -> float | None:
        """The α this run measured for a model bolt with these `threads`: an asynchronous bolt's, from a Storm run,
        is its process latency, never the execute latency of its enqueue (docs/model.md section 8)."""
        return self.alpha_process if threads is not None and self.alpha_is_execute else self.alpha_mean


class LossRow(BaseModel):
    """Tuples a bolt lost (its task killed) from the trees of one spout, and what the spout did about them."""

    bolt: str
    spout: str
    lost: int = Field(description="tuples the bolt lost from this spout's trees")
    trees: int = Field(description="the distinct trees (spout attempts) those tuples belonged to")
    replayed: int = Field(description="of those trees, the messages the spout emitted again afterwards")


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
    losses: list[LossRow] = Field(default_factory=list, description="lost tuples per (bolt, spout of their tree)")

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


SEGMENT_MIN_POINTS = 6  # a stretch between failures needs this many queue bins to be fitted on its own


def finish_queues(components: dict[str, ComponentStats], bins: dict[str, list[tuple[float, float]]],
                  growth_floor: float, bin_s: float = 1.0) -> None:
    """Fit every queue series. With failures (some component has `down` intervals) each series is also fitted
    per stretch between failures and recoveries, and the verdict is the last stretch's, after the last
    failure or recovery, when it has the points: a queue that settled after a restart is not called growing
    for the backlog the failure left, and one that grows after it is not hidden by the quiet stretch before."""
    cuts = sorted({(t, f"{c.name} {what}") for c in components.values() for down, up in c.down
                   for t, what in ((down, "failed"), (up, "recovered"))})
    for name, pts in bins.items():
        pts.sort()
        stats = components.setdefault(name, ComponentStats(name=name, kind="bolt"))
        stats.series = pts
        stats.queue = fit_trend(pts, growth_floor, bin_s)
        if not cuts or not pts:
            continue
        edges = [(pts[0][0], "")] + [c for c in cuts if pts[0][0] < c[0] < pts[-1][0]] + [(pts[-1][0] + bin_s, "")]
        for (start, label), (end, _) in zip(edges, edges[1:], strict=False):
            part = [p for p in pts if start <= p[0] < end]
            trend = fit_trend(part, growth_floor, bin_s) if len(part) >= SEGMENT_MIN_POINTS else None
            stats.segments.append(SegmentTrend(start=start, end=end, trend=trend,
                                               label=f"after {label}" if label else f"before {edges[1][1]}"))
        last = stats.segments[-1] if stats.segments else None
        if last is not None and last.trend is not None and len(stats.segments) > 1:
            stats.queue = last.trend.model_copy(update={
                "run_slope": stats.queue.run_slope if stats.queue else None,
                "note": f"judged {last.label} at {last.start:.3g} s (the stretch after the last failure or "
                        f"recovery); " + (last.trend.note or "")})

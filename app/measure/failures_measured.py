"""Failures and replays measured in a run with killed tasks, and the model's range beside them.

The measured side comes from `analyze` (app/measure/sql/analysis.py: per component its down
intervals, lost tuples, failed trees and replays). `around_failures` adds, for `compare`, what
happened around each failure: the queues of the bolts downstream of the killed one in a
window around it, how long each took to drain back to its level before the failure, and per
spout the measured replays beside the range the model allows for the tuples lost
(docs/spark-runs.md, "Killing a task").
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, Field, computed_field

from app.core.failures import UNBOUNDED, Impact, replay_range
from app.measure.analysis_model import Analysis

FAILURE_HEADER = ["component", "failures", "down s", "lost", "failed trees", "replays"]


def failure_table(analysis: Analysis) -> list[list[str]]:
    """The failures table (header first) of the components with something to show; [] when none has."""
    rows = [[c.name, str(c.failures) if c.failures else "-", f"{c.down_s:.3g}" if c.failures else "-",
             str(c.lost) if c.lost else "-", str(c.trees_failed) if c.trees_failed else "-",
             str(c.replays) if c.replays else "-"]
            for c in analysis.components.values() if c.failures or c.lost or c.trees_failed or c.replays]
    return [FAILURE_HEADER, *rows] if rows else []


def segment_table(analysis: Analysis) -> list[list[str]]:
    """Each queue's trend per stretch between failures and recoveries (header first); [] without failures."""
    rows = [[c.name, f"{s.start:.3g}..{s.end:.3g}", s.label,
             "-" if s.trend is None else f"{s.trend.slope:+.3f} ({s.trend.ci_low:+.3f}..{s.trend.ci_high:+.3f})",
             "too short" if s.trend is None else s.trend.verdict]
            for c in analysis.components.values() for s in c.segments]
    return [["queue of", "stretch (s)", "", "slope/s (95% robust CI)", "verdict"], *rows] if rows else []


class SpoutReplays(BaseModel):
    """Per killed bolt and spout: the tuples lost from the spout's trees, the trees that failed (the replays Storm
    owes), the replays seen, and the model's range for the replays of that loss."""

    bolt: str
    spout: str
    lost: int
    trees: int = Field(description="distinct trees the lost tuples belonged to: the messages to replay")
    replayed: int = Field(description="of those, the messages the spout emitted again before the log ended")
    impact: str | None = Field(default=None, description="the model's Imp(bolt, spout), exactly, or 'unbounded' "
                                                         "(a path through a cycle); None: no model")
    model_low: int | None = None
    model_high: int | None = None

    @computed_field  # type: ignore[prop-decorator]  # in --json too
    @property
    def within(self) -> bool | None:
        """The trees to replay lie in the model's range (None without a model)."""
        if self.model_low is None or self.model_high is None:
            return None
        return self.model_low <= self.trees <= self.model_high


class QueueWindow(BaseModel):
    """A bolt's measured queue around one failure of a (possibly other, upstream) bolt."""

    bolt: str
    baseline: float | None = Field(description="mean queue in the bins before the failure")
    peak: float | None = Field(description="the highest queue after the killed bolt came up")
    drained_s: float | None = Field(description="seconds from the restart until the queue was back at its baseline; "
                                                "None: not within the log")
    forecast_s: float | None = Field(default=None, description="the rate check's forecast: the backlog above the "
                                                               "baseline over the spare capacity (capacity - inflow)")
    series: list[tuple[float, float]] = Field(default_factory=list, description="(time s, queue) in the window")


class FailureWindow(BaseModel):
    """One failure of a killed bolt: when, what was lost, and the queues downstream around it."""

    bolt: str
    down: float
    up: float
    queues: list[QueueWindow]


class FailureComparison(BaseModel):
    """Model and measurement around the failures of a run with killed tasks."""

    windows: list[FailureWindow] = Field(default_factory=list)
    replays: list[SpoutReplays] = Field(default_factory=list)


def downstream(subscribers: dict[str, list[str]], bolt: str) -> list[str]:
    """`bolt` and every bolt reachable from it through the subscriptions, in breadth-first order."""
    seen = [bolt]
    for name in seen:
        seen += [t for t in subscribers.get(name, []) if t not in seen]
    return seen


def _window(name: str, series: list[tuple[float, float]], down: float, up: float, window_s: float,
            bin_s: float, spare: float | None) -> QueueWindow:
    before = [q for t, q in series if down - window_s <= t < down]
    baseline = sum(before) / len(before) if before else None
    after = [(t, q) for t, q in series if t >= up]
    peak = max((q for _, q in after), default=None)
    drained = None
    if baseline is not None and after:
        tolerance = max(1.0, 0.1 * baseline)  # a tuple, or a tenth of the level
        top = max(range(len(after)), key=lambda i: after[i][1])
        if after[top][1] <= baseline + tolerance:
            drained = 0.0  # no backlog beyond the baseline's noise
        else:
            back = next((t for t, q in after[top:] if q <= baseline + tolerance), None)
            drained = None if back is None else max(0.0, back - up)
    forecast = None
    if spare is not None and baseline is not None and peak is not None:
        backlog = peak - baseline
        if backlog <= max(1.0, 0.1 * baseline):
            forecast = 0.0  # as the measured drain: no backlog beyond the baseline's noise
        elif spare > 0:
            forecast = backlog / spare
    shown = [(t, q) for t, q in series if down - window_s <= t <= up + window_s + bin_s]
    return QueueWindow(bolt=name, baseline=baseline, peak=peak, drained_s=drained, forecast_s=forecast, series=shown)


def around_failures(analysis: Analysis, subscribers: dict[str, list[str]],
                    impact: Callable[[str, str], Impact | None] | None = None,
                    spare: dict[str, float] | None = None, window_s: float = 5.0) -> FailureComparison:
    """Per failure the queues of the killed bolt and those downstream in [down - window_s, up + window_s] with
    their drain times (and the rate check's forecast when `spare`, tuples/s per bolt, is given); per (bolt,
    spout) the replays against the model's range [ceil(L_s / Imp(j, s)), L_s] (app.core.failures.replay_range)
    when `impact` gives Imp(j, s)."""
    windows = []
    for c in analysis.components.values():
        for down, up in c.down:
            queues = [_window(name, analysis.components[name].series, down, up, window_s, analysis.bin_s,
                              (spare or {}).get(name))
                      for name in downstream(subscribers, c.name) if name in analysis.components]
            windows.append(FailureWindow(bolt=c.name, down=down, up=up, queues=queues))
    windows.sort(key=lambda w: (w.down, w.bolt))
    replays = []
    for row in analysis.losses:
        imp = impact(row.bolt, row.spout) if impact is not None else None
        low = high = None
        if imp is not None:
            low, high = replay_range(row.lost, imp)
        replays.append(SpoutReplays(bolt=row.bolt, spout=row.spout, lost=row.lost, trees=row.trees,
                                    replayed=row.replayed,
                                    impact=None if imp is None else "unbounded" if imp == UNBOUNDED else str(imp),
                                    model_low=low, model_high=high))
    return FailureComparison(windows=windows, replays=replays)


def _s(value: float | None, fmt: str = ".3g", none: str = "-") -> str:
    return none if value is None else format(value, fmt)


def window_table(failures: FailureComparison) -> list[list[str]]:
    """Per failure and bolt at or below the killed one: baseline, peak, drain time and forecast (header first)."""
    rows = [["killed", "down..up (s)", "queue of", "before", "peak after", "drained after (s)", "forecast (s)"]]
    for w in failures.windows:
        for q in w.queues:
            rows.append([w.bolt, f"{w.down:.3g}..{w.up:.3g}", q.bolt, _s(q.baseline), _s(q.peak),
                         _s(q.drained_s, none="not in the log"), _s(q.forecast_s)])
    return rows


def replay_table(failures: FailureComparison) -> list[list[str]]:
    """Per killed bolt and spout: lost, trees to replay, replayed, Imp and the model's range (header first)."""
    rows = [["bolt", "spout", "lost", "trees failed", "replayed", "Imp(bolt, spout)", "model range", "within"]]
    for r in failures.replays:
        rows.append([r.bolt, r.spout, str(r.lost), str(r.trees), str(r.replayed), r.impact or "-",
                     "-" if r.model_low is None else f"{r.model_low}..{r.model_high}",
                     {True: "yes", False: "NO", None: "-"}[r.within]])
    return rows

"""Model versus measurement per bolt, and calibration of the topology with measured values (no Spark).

The model side is the rate check (`app.core.rates.rate_check`): its status and nominal
growth for the annotated topology, and its nominal growth once the *measured* spout
rates, α and σ are put in (`calibrated`), which is what the run's queue slope should
match. The measured side is the queue's growth verdict (app.measure.growth: an interval
robust to autocorrelation, warm-ups set aside); an `uncertain` verdict leaves `agrees` open.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from app.core.failures import Impact
from app.core.rates import rate_check
from app.core.topology import Topology
from app.measure.analysis import Analysis
from app.measure.failures_measured import FailureComparison, around_failures


class ParameterRow(BaseModel):
    """One annotated parameter beside its measured value."""

    component: str
    parameter: str
    annotated: float
    measured: float | None

    @property
    def relative_error(self) -> float | None:
        if self.measured is None or self.annotated == 0:
            return None
        return (self.measured - self.annotated) / self.annotated


class BoltComparison(BaseModel):
    """Predicted and measured queue behaviour of one bolt."""

    bolt: str
    model_status: str
    model_growth: float
    predicted_growth: float | None
    predicted_status: str | None
    measured_slope: float | None
    measured_ci: tuple[float, float] | None
    measured_verdict: str | None
    agrees: bool | None
    measured_note: str = ""  # warm-up found, or how long a run would tell (app.measure.growth)

    @property
    def slope_error(self) -> float | None:
        """(measured − predicted) / predicted, when growth is predicted."""
        if self.measured_slope is None or not self.predicted_growth:
            return None
        return (self.measured_slope - self.predicted_growth) / self.predicted_growth


class SpoutLatencyComparison(BaseModel):
    """A spout's proven complete-latency bound (docs/latency.md) against the longest one measured: a measured tree
    above the bound is a disagreement (the model's timings are wrong for the run, or the run is outside it)."""

    spout: str
    bound: float | None  # every tree completes within this (s), in every run of the model (None: not proven)
    measured_max: float | None  # the longest acked tree measured (s)
    completed: int = 0
    agrees: bool | None = None  # None: no bound, or nothing measured


class Comparison(BaseModel):
    bolts: list[BoltComparison]
    latency: list[SpoutLatencyComparison] = []
    parameters: list[ParameterRow]
    calibrated: Topology
    failures: FailureComparison | None = None  # a run with killed tasks: model and measurement around them


def calibrate(topo: Topology, analysis: Analysis) -> Topology:
    """The topology with measured spout rates and bursts, bolt α and σ; parameters not measured stay."""
    spouts = []
    for s in topo.spouts:
        m = analysis.components.get(s.name)
        update: dict[str, Any] = {}
        fresh = None if m is None else (m.rate_fresh if m.rate_fresh is not None else m.rate_out)
        if fresh:  # the new messages: replays are the failure model's, not the spout's rate
            update["rate"] = round(fresh, 6)
        if m is not None and m.burst_max:
            update["burst"] = int(m.burst_max)
        update["unannotated"] = [f for f in s.unannotated if f not in update]  # measured now
        spouts.append(s.model_copy(update=update))
    bolts = []
    for b in topo.bolts:
        m = analysis.components.get(b.name)
        update = {}
        alpha = m.alpha_for(b.threads) if m is not None else None
        if alpha:
            update["alpha"] = round(alpha, 6)
        if m is not None and m.sigma is not None:
            update["sigma"] = round(m.sigma, 6)
        update["unannotated"] = [f for f in b.unannotated if f not in update]
        bolts.append(b.model_copy(update=update))
    return topo.model_copy(update={"spouts": spouts, "bolts": bolts})


def parameter_rows(topo: Topology, analysis: Analysis) -> list[ParameterRow]:
    """Annotated versus measured rate, burst, α and σ."""
    rows: list[ParameterRow] = []
    for s in topo.spouts:
        m = analysis.components.get(s.name)
        replayed = m.rate_replayed if m is not None else None
        rows.append(ParameterRow(component=s.name, parameter="rate (fresh)" if replayed else "rate", annotated=s.rate,
                                 measured=(m.rate_fresh if m.rate_fresh is not None else m.rate_out) if m else None))
        rows.append(ParameterRow(component=s.name, parameter="burst", annotated=s.burst,
                                 measured=float(m.burst_max) if m and m.burst_max else None))
    for b in topo.bolts:
        m = analysis.components.get(b.name)
        rows.append(ParameterRow(component=b.name, parameter="alpha", annotated=b.alpha,
                                 measured=m.alpha_for(b.threads) if m else None))
        rows.append(ParameterRow(component=b.name, parameter="sigma", annotated=b.sigma,
                                 measured=m.sigma if m else None))
    return rows


def compare(topo: Topology, analysis: Analysis) -> Comparison:
    """Per bolt: the model's status and growth, the growth predicted at measured rates, the measured slope."""
    model = rate_check(topo, suggest=False)
    calibrated = calibrate(topo, analysis)
    try:
        predicted = rate_check(calibrated, suggest=False)
    except Exception:  # noqa: BLE001 - a degenerate measurement must not hide the rest of the report
        predicted = None
    bolts = []
    for b in topo.bolts:
        m = analysis.components.get(b.name)
        trend = m.queue if m else None
        p = predicted.bolts.get(b.name) if predicted else None
        agrees = None
        if trend is not None and p is not None and trend.verdict != "uncertain":
            agrees = (trend.verdict == "grows") == (p.growth_nominal > analysis.growth_floor)
        bolts.append(BoltComparison(
            bolt=b.name, model_status=model.bolts[b.name].status, model_growth=model.bolts[b.name].growth_nominal,
            predicted_growth=p.growth_nominal if p else None, predicted_status=p.status if p else None,
            measured_slope=trend.slope if trend else None,
            measured_ci=(trend.ci_low, trend.ci_high) if trend else None,
            measured_verdict=trend.verdict if trend else None, agrees=agrees,
            measured_note=trend.note if trend else ""))
    latency = _latency(topo, analysis)
    failures = None
    if any(c.down for c in analysis.components.values()) or analysis.losses:
        subscribers: dict[str, list[str]] = {}
        for s in topo.subscriptions:
            subscribers.setdefault(topo.name_of(s.source), []).append(topo.name_of(s.target))
        spare = {name: r.capacity_nominal - r.inflow_nominal for name, r in predicted.bolts.items()} \
            if predicted is not None else None
        failures = around_failures(analysis, subscribers, impact_of(topo), spare)
    return Comparison(bolts=bolts, parameters=parameter_rows(topo, analysis), calibrated=calibrated,
                      failures=failures, latency=latency)


def _latency(topo: Topology, analysis: Analysis) -> list[SpoutLatencyComparison]:
    """Per spout whose trees were acked in the run: the proven bound against the longest measured tree."""
    from app.core.latency.bounds import LatencyAnalysis

    try:
        bounds = {s.name: s.bound for s in LatencyAnalysis(topo).spouts().values()}
    except Exception:  # noqa: BLE001 - a model the rate check refuses has no bound to compare
        return []
    out = []
    for name, bound in bounds.items():
        m = analysis.components.get(name)
        if m is None or not m.completed:
            continue
        agrees = None if bound is None or m.complete_max is None else m.complete_max <= bound
        out.append(SpoutLatencyComparison(spout=name, bound=None if bound is None else float(bound),
                                          measured_max=m.complete_max, completed=m.completed, agrees=agrees))
    return out


def impact_of(topo: Topology) -> Callable[[str, str], Impact | None] | None:
    """Imp(j, s) of the model (app/core/failures.py) by the bolt's and the spout's names; None when the
    model cannot say (a stream without a ratio)."""
    from app.core.failures import impacts

    try:
        table = impacts(topo)
    except ValueError:
        return None
    ids = {c.name: c.id for c in topo.components}

    def impact(bolt: str, spout: str) -> Impact | None:
        return table.get(ids.get(bolt, ""), {}).get(ids.get(spout, ""))

    return impact

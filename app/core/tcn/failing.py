"""What the search says about failures (docs/model.md section 7): which rate proofs still hold
when bolts may fail, and how a lasso's failures and replays read in words.

No z3 here: the search (`search.py`) calls these between its phases.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

from app.core.failures import failure_model
from app.core.formats.trace import Trace, format_time
from app.core.rates import RateReport
from app.core.tcn.network import cone_of_influence
from app.core.topology import Topology


def rates_under_failures(topo: Topology, report: RateReport) -> RateReport:
    """The rate check's report as the search may trust it when bolts may fail.

    A `bounded` of the failure-free rate check is no proof once replays add load: unless the
    report says it covers failures (`RateReport.failures`, docs/boundedness.md "Failures"), every
    bounded bolt whose cone of influence holds a bolt that may fail is downgraded to `may-grow`
    (searched, never proven). Without failures, or with a failure-aware report, the report is
    returned unchanged."""
    if failure_model(topo) is None or report.failures:
        return report
    bolts = dict(report.bolts)
    for bolt in topo.bolts:
        rates = bolts.get(bolt.name)
        if rates is None or rates.status != "bounded":
            continue
        cone = cone_of_influence(topo, [bolt.id])
        failing = sorted(b.name for b in cone.bolts if b.min_ttf is not None)
        if failing:
            bolts[bolt.name] = rates.model_copy(update={
                "status": "may-grow",
                "explanation": (f"{rates.explanation}, without failures; {', '.join(failing)} may fail and "
                                "the replays add load this rate check does not cover, so it is searched")})
    return report.model_copy(update={"bolts": bolts})


def has_failures(trace: Trace) -> bool:
    """Whether some bolt fails somewhere in the trace."""
    return any(b.fail for p in trace.positions for b in p.bolts.values())


def failure_summary(trace: Trace) -> str | None:
    """The failures and replays of a lasso's loop in words ("C fails every 4 s; S replays 2
    tuples per failure"), or None when nothing fails in the loop."""
    loop = trace.positions[trace.loop_start:trace.k + 1]
    fails: Counter[str] = Counter()
    replays: dict[str, Counter[str]] = {}
    for p in loop:
        for name, b in p.bolts.items():
            fails[name] += b.fail
            for spout, n in (b.replays or {}).items():
                replays.setdefault(name, Counter())[spout] += n
    failing = [n for n in fails if fails[n] > 0]
    if not failing:
        return None
    duration = trace.loop_duration()
    parts = []
    for name in failing:
        count = fails[name]
        every = format_time(Fraction(duration) / count)
        part = f"{name} fails every {every} s"
        for spout, n in sorted(replays.get(name, Counter()).items()):
            per = Fraction(n, count)
            part += f"; {spout} replays {format_time(per)} tuple{'s' if per != 1 else ''} per failure"
        parts.append(part)
    return "; ".join(parts)

"""Unbounded by a replay storm: a failing bolt whose at-once replays it cannot keep up with.

docs/boundedness.md, "Unbounded: a replay storm", proves it. With `settings.replay` "at-once", a failing bolt F
fed by a spout s's default stream, failing as soon as `min_ttf` allows and down for a chosen reboot r, while s
emits one tuple every g = (min_ttf + r)/m seconds (m per cycle) and F processes at its slowest: the tuples of F's
trees still pending (s's backlog, F's queue and batch) grow by at least

    δ = m − C_F·k   per failure cycle,   k = ⌊(min_ttf − g)/(max_idle + α_F(1+τ))⌋ when every input of F is s's
                                          (its first tuple after a recovery comes a gap later), else
                                          ⌈min_ttf/(max_idle + α_F(1+τ))⌉ − 1

(k bounds the batches F completes while up), since every loss is replayed once and no other bolt fails. When
δ ≥ 1, F's queue just before its n-th failure holds at least (n − 1)·δ minus a constant, and every bolt J that
receives s's default stream receives each cycle's whole loss again (quadratic growth against J's linear
capacity): F and each such J (not a join, not a duration window) are `unbounded`. Such runs never repeat, so no
lasso shows them. The plan (r, m, g, k, δ) is the certificate (`StormCertificate`); `app/core/tcn/check/storm.py`
re-derives it without this module.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction

from app.core.results import BoltVerdict, SpillCertificate, StormCertificate
from app.core.tcn.check.content import content_hash
from app.core.tcn.check.storm import check_storm_certificate
from app.core.tcn.network import BoltParams, Network, build_network
from app.core.tcn.recorded import before_that, record_checked
from app.core.topology import Topology

__all__ = ["STORMABLE", "StormPlan", "instant_storms", "prove_storm", "spill_message", "storm_cycles",
           "storm_message", "storm_plan", "storm_verdicts"]

#: the verdicts a storm proof may answer (a lasso in which the bolt grows, or a bound, already says more)
STORMABLE = ("no-repeating-growth", "none-up-to-k", "unknown")
MAX_EMISSIONS = 100_000  # emissions per failure cycle tried at most (min_ttf of hours on a fast spout)


@dataclass(frozen=True)
class StormPlan:
    """One failure cycle of a storm: reboot r, m emissions of the spout a gap g apart, at most k batches completed
    by the failing bolt while up (`waits`: it waits a gap for its first tuple), growth δ = m − C·k per cycle."""

    failing: str
    spout: str
    reboot: Fraction
    emissions: int
    gap: Fraction
    waits: bool
    completions: int
    growth: int


def _text(x: Fraction) -> str:
    return f"{x.numerator}/{x.denominator}"


def storm_cycles(net: Network, failing: BoltParams, spout: str) -> Iterator[StormPlan]:
    """Every failure cycle that grows (δ ≥ 1) for `failing` fed by `spout`'s default stream, the longest one per
    count m of emissions, whatever the replay mode (a paced backlog grows by the same δ: app/core/tcn/paced.py);
    none when the storm's rules do not hold (an ordinary bolt that may fail, fed by the spout)."""
    fm = net.failures
    if (fm is None or failing.name not in fm.min_ttf or failing.timer is not None
            or failing.join or failing.slide != 1 or (spout, "default") not in failing.sources):
        return
    period = next(s.period for s in net.spouts if s.name == spout)
    tau, up = net.tolerance, fm.min_ttf[failing.name]
    lo, hi = period * (1 - tau), period * (1 + tau)
    cycle = net.max_idle + failing.alpha * (1 + tau)  # the failing bolt's slowest take-to-emit, idle included
    waits = all(name == spout for name, _ in failing.sources)
    first = max(1, math.ceil((up + fm.min_reboot) / hi))
    last = min(math.floor((up + fm.max_reboot) / lo), first + MAX_EMISSIONS)
    for m in range(first, last + 1):
        length = min(m * hi, up + fm.max_reboot)  # the longest cycle of m gaps: the longest wait after a recovery
        if length < max(m * lo, up + fm.min_reboot):
            continue
        gap = length / m
        if gap > up:  # the spout must emit while the bolt is up, or its queue never holds the backlog
            continue
        k = math.floor((up - gap) / cycle) if waits else math.ceil(up / cycle) - 1
        growth = m - failing.take_max * k
        if growth >= 1:
            yield StormPlan(failing.name, spout, length - up, m, gap, waits, k, growth)


def storm_plan(net: Network, failing: BoltParams, spout: str) -> StormPlan | None:
    """The cycle with the largest growth per cycle for `failing` fed by `spout`'s default stream, or None when no
    cycle grows (δ < 1) or the storm's rules do not hold (at-once replays, an ordinary bolt that may fail)."""
    if net.failures is None or net.failures.replay != "at-once":
        return None
    return max(storm_cycles(net, failing, spout), key=lambda plan: plan.growth, default=None)


def prove_storm(cone: Topology, target: str) -> StormCertificate | None:
    """A storm certificate for `target` on its cone of influence `cone` (the best cycle of any failing bolt that
    makes it unbounded), or None."""
    net = build_network(cone, [target])
    bolts = {b.name: b for b in net.bolts}
    if target not in bolts or net.failures is None or net.failures.replay != "at-once":
        return None
    j = bolts[target]
    best: StormPlan | None = None
    for f in net.bolts:
        if f.name not in net.failures.min_ttf or cone.bolt_by_name(f.name).window is not None:
            continue  # (the storm's rule is an ordinary bolt's: a window takes by its own rule)
        for spout, stream in f.sources:
            if stream != "default" or spout not in {s.name for s in net.spouts}:
                continue
            if f.name != target and ((spout, "default") not in j.sources or j.timer is not None or j.join):
                continue
            plan = storm_plan(net, f, spout)
            if plan is not None and (best is None or plan.growth > best.growth):
                best = plan
    if best is None:
        return None
    return StormCertificate(target=target, content_hash=content_hash(net.topology), failing=best.failing,
                            spout=best.spout, reboot=_text(best.reboot), emissions=best.emissions,
                            gap=_text(best.gap), waits=best.waits, completions=best.completions, growth=best.growth)


def storm_message(cert: StormCertificate) -> str:
    """The verdict in words: what grows, in which cycle, and by how much."""
    gap, reboot = Fraction(cert.gap), Fraction(cert.reboot)
    cycle = cert.emissions * gap
    where = (f"its queue just before each failure grows by {cert.growth} tuples per cycle"
             if cert.target == cert.failing else
             f"{cert.spout} replays {cert.failing}'s losses to it too, and they grow by {cert.growth} tuples per "
             f"cycle: what {cert.target} receives per cycle grows without end, past what it can process at any pace")
    return (f"unbounded (storm proof, certified): with at-once replays, {cert.failing} failing as soon as min_ttf "
            f"allows and down {float(reboot):.4g} s (every {float(cycle):.4g} s) while {cert.spout} emits one tuple "
            f"every {float(gap):.4g} s completes at most {cert.completions} batch"
            f"{'es' if cert.completions != 1 else ''} per cycle at its slowest, fewer than the {cert.emissions} "
            f"fresh tuples: {where}; for every N a legal run takes its queue past N (docs/boundedness.md, "
            "\"Unbounded: a replay storm\"; such runs never repeat, so no lasso shows them)")


def storm_verdicts(topo: Topology, verdicts: dict[str, BoltVerdict], names: list[str], notes: list[str]) -> None:
    """Every bolt of `names` without an answer (absent from `verdicts`, or one of STORMABLE) that a replay storm
    makes unbounded gets that verdict (in place), once the independent checker accepts its certificate; a
    rejected one is noted as a defect."""
    if not topo.settings.failures or topo.settings.replay != "at-once":
        return
    for name in names:
        before = verdicts.get(name)
        if before is not None and before.verdict not in STORMABLE:
            continue
        cone = build_network(topo, [name]).topology
        cert = prove_storm(cone, name)
        if cert is None:
            continue
        message = before_that(storm_message(cert), before.message if before is not None else None)
        record_checked(verdicts, name, BoltVerdict(verdict="unbounded", method="storm proof", certified=True,
                                                   storm_certificate=cert, message=message),
                       check_storm_certificate(cone, cert), notes, "a storm proof")


def instant_storms(topo: Topology, statuses: dict[str, str]) -> dict[str, StormCertificate]:
    """Without any search (`stormbound check`): every bolt whose rate-check status leaves room (`may-grow`,
    `no-repeating-growth`) that a replay storm makes unbounded, with its certificate, accepted by the checker.
    Milliseconds a bolt: a walk over the emissions per failure cycle of each failing bolt fed by a spout."""
    if not topo.settings.failures or topo.settings.replay != "at-once":
        return {}
    found: dict[str, StormCertificate] = {}
    for name, status in statuses.items():
        if status not in ("may-grow", "no-repeating-growth"):
            continue
        cone = build_network(topo, [name]).topology
        cert = prove_storm(cone, name)
        if cert is not None and not check_storm_certificate(cone, cert):
            found[name] = cert
    return found


def spill_message(cert: SpillCertificate, before: str = "") -> str:
    """A spill's verdict in words (app/core/tcn/spill.py): who backs up, fails once, and what the spout then replays
    at once."""
    ev = cert.evidence
    how = ("its growth is proven by rates" if ev.growth_certificate is not None
           else "it is flooded by a bolt that backs up" if ev.flood_certificate is not None
           else "a replay storm makes it unbounded" if ev.storm_certificate is not None
           else "a certified lasso makes it grow")
    text = (f"unbounded (storm proof, certified): with at-once replays, {cert.failing} can hold any backlog ({how}); "
            f"once it holds N tuples it fails (a failure is allowed whenever min_ttf has passed) and {cert.spout} "
            f"replays all of them at once with its next emission, which {cert.target} receives at one position: for "
            f"every N a legal run takes {cert.target}'s queue past N (docs/boundedness.md, \"Unbounded: a backlog "
            "replayed at once\"; its queue empties again after each such burst, so no lasso shows it)")
    return before_that(text, before)

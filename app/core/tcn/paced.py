"""Unbounded by a paced replay backlog: a failing bolt whose paced replays pile up, then flood a bolt.

docs/boundedness.md, "Unbounded: a paced replay backlog", proves it. With `settings.replay` "paced", a failing
bolt F fed by a spout s's default stream, failing as soon as `min_ttf` allows under a storm cycle (reboot r, m
emissions of s a gap g apart per cycle, F at its slowest completing at most C_F·k tuples while up:
`storm.storm_cycles`), leaves δ = m − C_F·k ≥ 1 more tuples pending in its trees every cycle; at F's failures
they all go to s's replay backlog, which therefore passes any B. Then F stops failing and s, one tuple a gap g,
sends a fresh tuple and a replay at every emission for at least B·g seconds: a target T (F itself, or an ordinary
bolt that receives a stream of s) receiving

    Σ over T's input streams from s: ratio · 2/g  +  Σ over T's input streams from another spout: ratio/(a(1+τ))

tuples per second, strictly more than its smallest capacity C_T/(α_T(1+τ) + max_idle), has its queue past every N:
T is `unbounded`. The cycle and these figures are the certificate (`StormCertificate` with `replay` "paced");
`app/core/tcn/check/storm.py` re-derives them without this module.
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction

from app.core.results import BoltVerdict, FloodTerm, StormCertificate
from app.core.tcn.check.content import content_hash
from app.core.tcn.check.storm import check_storm_certificate
from app.core.tcn.joint import JointPlan, joint_cycles
from app.core.tcn.network import BoltParams, Network, build_network
from app.core.tcn.recorded import before_that, record_checked
from app.core.tcn.storm import STORMABLE, StormPlan, storm_cycles
from app.core.topology import Topology

__all__ = ["instant_paced", "paced_message", "paced_verdicts", "prove_paced"]


def _text(x: Fraction) -> str:
    return f"{x.numerator}/{x.denominator}"


def _terms(net: Network, target: BoltParams, spout: str, gap: Fraction) -> list[FloodTerm]:
    """The target's input streams from spouts while `spout` replays one tuple per fresh one, a gap apart: that
    spout's streams at 2/gap, any other spout's at its least rate 1/(a(1+τ)), each with its ratio (positive)."""
    ratios = {(s.name, "default"): Fraction(1) for s in net.spouts}
    ratios |= {(s.name, st.name): st.sigma for s in net.spouts for st in s.streams}
    least = {s.name: 1 / (s.period * (1 + net.tolerance)) for s in net.spouts}
    return [FloodTerm(sender=u, stream=st, rate=_text(2 / gap if u == spout else least[u]),
                      ratio=_text(ratios[(u, st)]))
            for u, st in target.sources if (u, st) in ratios and ratios[(u, st)] > 0]


def _inflow(terms: list[FloodTerm]) -> Fraction:
    return sum((Fraction(t.rate) * Fraction(t.ratio) for t in terms), Fraction(0))


def _storms(net: Network, cone: Topology) -> Iterator[tuple[BoltParams, str]]:
    """Every failing ordinary bolt of the cone with each spout whose default stream it receives (the storm's rule is
    an ordinary bolt's: a window takes by its own rule)."""
    spouts = {s.name for s in net.spouts}
    for f in net.bolts:
        if net.failures is not None and f.name in net.failures.min_ttf and cone.bolt_by_name(f.name).window is None:
            for spout in sorted({u for u, st in f.sources if st == "default" and u in spouts}):
                yield f, spout


def prove_paced(cone: Topology, target: str) -> StormCertificate | None:
    """A paced certificate for `target` on its cone of influence `cone`: the growing cycle of a failing bolt whose
    drain beats the target by the widest margin (then the largest growth), or None."""
    net = build_network(cone, [target])
    bolts = {b.name: b for b in net.bolts}
    if target not in bolts or net.failures is None or net.failures.replay != "paced":
        return None
    j = bolts[target]
    if j.timer is not None or j.join:
        return None  # (a duration window takes all it holds at each run; a join waits for its slowest branch)
    capacity = j.take_max / (j.alpha * (1 + net.tolerance) + net.max_idle)
    best: tuple[tuple[Fraction, int], StormPlan, list[FloodTerm]] | None = None
    for f, spout in _storms(net, cone):
        for plan in storm_cycles(net, f, spout):
            terms = _terms(net, j, spout, plan.gap)
            if not any(t.sender == spout for t in terms):
                break  # the target must receive the spout's replays
            key = (_inflow(terms) - capacity, plan.growth)
            if key[0] > 0 and (best is None or key > best[0]):
                best = (key, plan, terms)
    if best is None:
        return _prove_joint(net, cone, j, capacity)
    _, plan, terms = best
    return StormCertificate(target=target, content_hash=content_hash(net.topology), failing=plan.failing,
                            spout=plan.spout, reboot=_text(plan.reboot), emissions=plan.emissions,
                            gap=_text(plan.gap), waits=plan.waits, completions=plan.completions, growth=plan.growth,
                            replay="paced", terms=terms, capacity=_text(capacity))


def _prove_joint(net: Network, cone: Topology, j: BoltParams, capacity: Fraction) -> StormCertificate | None:
    """When no one failing bolt's backlog grows: the joint cycle of a failing bolt and the other failing bolts on its
    spout (app/core/tcn/joint.py) whose drain beats the target by the widest margin, then grows fastest per second."""
    best: tuple[tuple[Fraction, Fraction], JointPlan, list[FloodTerm]] | None = None
    for f, spout in _storms(net, cone):
        drains: dict[Fraction, tuple[list[FloodTerm], Fraction]] = {}
        for joint in joint_cycles(net, cone, f, spout):
            if joint.plan.gap not in drains:
                terms = _terms(net, j, spout, joint.plan.gap)
                drains[joint.plan.gap] = (terms, _inflow(terms) - capacity)
            terms, margin = drains[joint.plan.gap]
            key = (margin, joint.per_cycle / (joint.plan.emissions * joint.plan.gap))
            if any(t.sender == spout for t in terms) and key[0] > 0 and (best is None or key > best[0]):
                best = (key, joint, terms)
    if best is None:
        return None
    _, joint, terms = best
    plan = joint.plan
    return StormCertificate(target=j.name, content_hash=content_hash(net.topology), failing=plan.failing,
                            spout=plan.spout, reboot=_text(plan.reboot), emissions=plan.emissions,
                            gap=_text(plan.gap), waits=plan.waits, completions=plan.completions, growth=plan.growth,
                            replay="paced", terms=terms, capacity=_text(capacity), up=_text(joint.up),
                            others=joint.failures())


def paced_message(cert: StormCertificate) -> str:
    """The verdict in words: what grows, in which cycle, and what then floods the target."""
    gap, reboot = Fraction(cert.gap), Fraction(cert.reboot)
    inflow, capacity = _inflow(cert.terms), Fraction(cert.capacity or 0)
    drain = (f"Once it holds any B, {cert.failing}{' and the others stop' if cert.others else ' stops'} failing and "
             f"{cert.spout} sends a fresh tuple and a replay every {float(gap):.4g} s for B·{float(gap):.4g} s: "
             f"{cert.target} receives {float(inflow):.4g} tuples/s or more against the {float(capacity):.4g} it "
             "processes at its slowest, so for every N a legal run takes its queue past N (docs/boundedness.md, ")
    if cert.others:
        return _joint_message(cert) + drain + ("\"Unbounded: several failing bolts on one paced spout\"; such runs "
                                               "never repeat, so no lasso shows them)")
    return (f"unbounded (paced replay backlog, certified): with paced replays, {cert.failing} failing as soon as "
            f"min_ttf allows and down {float(reboot):.4g} s (every {float(cert.emissions * gap):.4g} s) while "
            f"{cert.spout} emits one tuple every {float(gap):.4g} s completes at most {cert.completions} batch"
            f"{'es' if cert.completions != 1 else ''} per cycle at its slowest, fewer than the {cert.emissions} fresh "
            f"tuples: {cert.spout}'s replay backlog grows by {cert.growth} tuples per cycle. " + drain
            + "\"Unbounded: a paced replay backlog\"; such runs never repeat, so no lasso shows them)")


def _joint_message(cert: StormCertificate) -> str:
    """A joint cycle's growth in words (app/core/tcn/joint.py)."""
    gap, reboot = Fraction(cert.gap), Fraction(cert.reboot)
    cycle = cert.emissions * gap
    net = cert.growth + sum((Fraction(o.loss, o.every) for o in cert.others), Fraction(0))
    others = "; ".join(f"{o.bolt}, failing once every {o.every} of those cycles ({float(o.every * cycle):.4g} s) "
                       f"just after {cert.spout}'s {_nth(o.emission)} after {cert.failing}'s recovery and "
                       f"down {float(Fraction(o.reboot)):.4g} s, loses at least {o.loss} tuples, which {cert.spout} "
                       "replays" for o in cert.others)
    return (f"unbounded (several failing bolts on one paced spout, certified): with paced replays, {cert.failing} "
            f"failing every {float(cycle):.4g} s (down {float(reboot):.4g} s) while {cert.spout} emits one tuple every "
            f"{float(gap):.4g} s completes at most {cert.completions} batch{'es' if cert.completions != 1 else ''} "
            f"per cycle at its slowest against {cert.emissions} fresh tuples ({cert.growth:+d} per cycle); {others}: "
            f"the tuples pending in {cert.failing}'s trees, and {cert.spout}'s replay backlog at its failures, grow "
            f"by {float(net):.3g} tuples per cycle ({net}). ")


def _nth(n: int) -> str:
    return "first emission" if n == 1 else f"emission number {n}"


def _proven(topo: Topology, name: str) -> tuple[Topology, StormCertificate | None, list[str]]:
    """`name`'s cone, its paced certificate (None: none) and its checker's objections."""
    cone = build_network(topo, [name]).topology
    cert = prove_paced(cone, name)
    return cone, cert, (check_storm_certificate(cone, cert) if cert is not None else [])


def paced_verdicts(topo: Topology, verdicts: dict[str, BoltVerdict], names: list[str], notes: list[str]) -> None:
    """Every bolt of `names` without an answer (absent from `verdicts`, or one of STORMABLE) that a paced replay
    backlog makes unbounded gets that verdict (in place, method "storm proof"), once the independent checker
    accepts its certificate; a rejected one is noted as a defect."""
    if not topo.settings.failures or topo.settings.replay != "paced":
        return
    for name in names:
        before = verdicts.get(name)
        if before is not None and before.verdict not in STORMABLE:
            continue
        _, cert, problems = _proven(topo, name)
        if cert is None:
            continue
        message = before_that(paced_message(cert), before.message if before is not None else None)
        record_checked(verdicts, name, BoltVerdict(verdict="unbounded", method="storm proof", certified=True,
                                                   storm_certificate=cert, message=message),
                       problems, notes, "a paced backlog proof")


def instant_paced(topo: Topology, statuses: dict[str, str]) -> dict[str, StormCertificate]:
    """Without any search (`stormbound check`): every bolt whose rate-check status leaves room (`may-grow`,
    `no-repeating-growth`) that a paced replay backlog makes unbounded, with its certificate, accepted by the
    checker. Milliseconds a bolt."""
    if not topo.settings.failures or topo.settings.replay != "paced":
        return {}
    found: dict[str, StormCertificate] = {}
    for name, status in statuses.items():
        if status in ("may-grow", "no-repeating-growth"):
            _, cert, problems = _proven(topo, name)
            if cert is not None and not problems:
                found[name] = cert
    return found

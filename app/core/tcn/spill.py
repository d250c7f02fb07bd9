"""Unbounded by a backlog replayed at once: a failing bolt that can hold any backlog fails once, and its spout
replays all of it with its next emission into a bolt it feeds directly.

docs/boundedness.md, "Unbounded: a backlog replayed at once", proves it. With `settings.replay` "at-once", let G be
a bolt that may fail (an ordinary bolt with `min_ttf`) and can hold any backlog (the evidence of a flood's source: a
rate proof, a certified lasso, a flood or a replay storm), s a spout whose trees reach G, and J another bolt that
receives s's default stream. For every N a legal run lets G's queue pass N at a position where G may fail (its
evidence's run, long enough), G fails there and loses all it holds, the run puts the whole loss on s (one replay per
lost tuple), and s's next emission sends all of it at once to J, which takes at most C_J of it: J's queue passes
N − C_J. Nothing repeats (J's queue empties again), so no lasso shows it: J gets `unbounded`, method `storm proof`,
with a `SpillCertificate` that `app/core/tcn/check/spill.py` re-derives without this module.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from app.core.formats.trace import AnyTrace
from app.core.results import BoltVerdict, SpillCertificate
from app.core.tcn.check.content import content_hash
from app.core.tcn.check.spill import check_spill_certificate
from app.core.tcn.flood import GROWS, growth_evidence
from app.core.tcn.network import build_network
from app.core.tcn.rate_growth import prove_growth
from app.core.tcn.recorded import record_checked
from app.core.tcn.storm import STORMABLE, spill_message
from app.core.topology import Topology

__all__ = ["instant_spills", "prove_spill", "spill_verdicts"]

SPILL_BUDGET_S = 2.0  # `check`: at most this long proving the growth of failing bolts by rates for spills


def prove_spill(cone: Topology, target: str, verdicts: dict[str, BoltVerdict], traces: list[AnyTrace],
                proven_on: Callable[[str], Topology], cone_of: Callable[[str], Topology] | None = None
                ) -> SpillCertificate | None:
    """A spill certificate for `target` on its cone `cone`, from a failing bolt of the cone with evidence of growth
    in `verdicts` (as for a flood's source: `flood.growth_evidence`), or None."""
    net = build_network(cone, [target])
    fm = net.failures
    if fm is None or fm.replay != "at-once":
        return None
    bolts = {b.name: b for b in net.bolts}
    j = bolts.get(target)
    if j is None or j.join or j.timer is not None:
        return None
    spouts = {s.name for s in net.spouts}
    feeds = sorted(u for u, st in j.sources if st == "default" and u in spouts)
    for g in sorted(fm.min_ttf):
        b = bolts.get(g)
        if g == target or b is None or b.join or b.timer is not None or b.slide != 1 or g not in verdicts:
            continue
        if cone.bolt_by_name(g).window is not None:
            continue
        reaching = [s for s in feeds if s in fm.impact.get(g, {})]
        evidence = growth_evidence(g, verdicts[g], traces, proven_on, cone_of) if reaching else None
        if evidence is not None and verdicts[g].verdict in GROWS:
            return SpillCertificate(target=target, content_hash=content_hash(net.topology), failing=g,
                                    spout=reaching[0], evidence=evidence)
    return None


def spill_verdicts(topo: Topology, verdicts: dict[str, BoltVerdict], traces: list[AnyTrace],
                   proven_on: Callable[[str], Topology], notes: list[str],
                   stop: Callable[[], bool] = lambda: False) -> None:
    """Every bolt of `verdicts` answered one of STORMABLE that a failing bolt with evidence of growth spills into
    becomes `unbounded` (in place), once the independent checker accepts its certificate; a rejected one is noted
    as a defect and the earlier answer kept. `stop()` ends the pass early (time limit, cancel)."""
    if not topo.settings.failures or topo.settings.replay != "at-once":
        return
    for name, before in list(verdicts.items()):
        if before.verdict not in STORMABLE or stop():
            continue
        cone = build_network(topo, [name]).topology
        cert = prove_spill(cone, name, verdicts, traces, proven_on, lambda n: build_network(topo, [n]).topology)
        if cert is None:
            continue
        index = cert.evidence.trace_index
        record_checked(verdicts, name, BoltVerdict(verdict="unbounded", method="storm proof", certified=True,
                                                   k=before.k, spill_certificate=cert,
                                                   message=spill_message(cert, before.message)),
                       check_spill_certificate(cone, cert, traces[index] if index is not None else None), notes,
                       "a spill proof")


def instant_spills(topo: Topology, statuses: dict[str, str],
                   budget_s: float = SPILL_BUDGET_S) -> dict[str, SpillCertificate]:
    """Without any search (`stormbound check`): every bolt whose rate-check status leaves room (`may-grow`,
    `no-repeating-growth`) into which a failing bolt whose growth is proven by rates spills, with its certificate,
    accepted by the checker."""
    if not topo.settings.failures or topo.settings.replay != "at-once":
        return {}
    deadline = time.monotonic() + budget_s
    failing = [b.name for b in topo.bolts if b.min_ttf is not None and statuses.get(b.name) in ("grows", "may-grow")]
    growth: dict[str, BoltVerdict] = {}
    for g in failing:
        if time.monotonic() > deadline:
            break
        proof = prove_growth(build_network(topo, [g]).topology, g)
        if proof is not None:
            growth[g] = BoltVerdict(verdict="counterexample", method="rate proof", certified=True,
                                    growth_certificate=proof)
    found: dict[str, SpillCertificate] = {}
    if not growth:
        return found
    for name, status in statuses.items():
        if status not in ("may-grow", "no-repeating-growth"):
            continue
        cone = build_network(topo, [name]).topology
        cert = prove_spill(cone, name, growth, [], lambda n: build_network(topo, [n]).topology)
        if cert is not None and not check_spill_certificate(cone, cert):
            found[name] = cert
    return found

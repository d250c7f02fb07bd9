"""Unbounded by a flood: an upstream bolt that can back up without bound, then drains into the bolt below.

docs/boundedness.md, "Unbounded: a backlog that floods", proves it: when a bolt U that J receives from can hold
any backlog (U grows in a certified lasso, or its growth is proven by rates), and while U drains a backlog at
full speed (one full batch per α_U(1−τ)) J receives at least

    Σ over J's input streams from U: σ_lo(stream) · C_U/(α_U(1−τ))  +  Σ over J's input streams from a spout:
    σ_lo(stream) · 1/(a(1+τ))  +  Σ over J's input streams from another bolt X: σ_lo(stream) · λ(X)

(λ(X): the least rate X processes while U drains and every bolt but J runs at its fastest, `least_through`)

tuples per second (a join J: the least of those terms, one per branch; a join among the other senders: its
slowest branch's least rate; a join is never U: docs/boundedness.md, "Through a join"), strictly more than J's
smallest capacity C_J/(α_J(1+τ) + max_idle), then for every N a legal run takes J's queue past N: J is
`unbounded`. The figures and U's evidence are the certificate
(`FloodCertificate`); `app/core/tcn/check/flood.py` re-derives them without this module.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from fractions import Fraction

from app.core.formats.trace import AnyTrace, trace_data
from app.core.rates.flows import RateFigures
from app.core.results import (
    BoltVerdict,
    FloodCertificate,
    FloodEvidence,
    FloodTerm,
    SpillCertificate,
    StormCertificate,
)
from app.core.tcn.check.content import content_hash
from app.core.tcn.check.flood import check_flood_certificate
from app.core.tcn.cones import on_or_below_cycles
from app.core.tcn.network import build_network
from app.core.tcn.paced import paced_message
from app.core.tcn.rate_growth import prove_growth
from app.core.tcn.recorded import record_checked
from app.core.tcn.storm import spill_message, storm_message
from app.core.topology import Topology
from app.core.words import Exactly, Figure, Words

__all__ = ["FLOODABLE", "flood_message", "flood_verdicts", "floods_by_rates", "growth_evidence", "prove_flood"]

#: the verdicts a flood proof may answer (a lasso in which the bolt grows, or a bound, already says more)
FLOODABLE = ("no-repeating-growth", "none-up-to-k", "unknown")
NO_FLOOD = "No flood proof: "  # the start of what a bolt's message says is missing for the flood proof
#: the verdicts of a source that can hold any backlog: it grows, or it is itself flooded (a chain)
GROWS = ("counterexample", "unbounded")


def _text(x: Fraction) -> str:
    return f"{x.numerator}/{x.denominator}"


def growth_evidence(source: str, verdict: BoltVerdict, traces: list[AnyTrace], proven_on: Callable[[str], Topology],
              cone_of: Callable[[str], Topology] | None) -> FloodEvidence | None:
    """What shows that `source` can hold any backlog: its rate proof with the document it is proven on, the
    certified lasso in which it grows, its own flood certificate (a chain), with the trace of that
    certificate's evidence embedded and the source's cone as its document, or its replay storm's certificate
    (docs/boundedness.md, "Unbounded: a replay storm"), with the source's cone."""
    flood = verdict.flood_certificate
    if verdict.verdict == "unbounded" and verdict.storm_certificate is not None and cone_of is not None:
        return FloodEvidence(topology=cone_of(source).model_dump(mode="json"),  # a replay storm fills its queue
                             storm_certificate=verdict.storm_certificate.model_copy(update={"run": None}))
    if verdict.verdict == "unbounded" and flood is not None and cone_of is not None:
        nested = flood.model_copy(update={"run": None})
        index = flood.evidence.trace_index
        if index is not None:
            if not 0 <= index < len(traces):
                return None
            nested = nested.model_copy(update={"evidence": flood.evidence.model_copy(update={
                "trace_index": None, "trace": trace_data(traces[index])})})
        return FloodEvidence(topology=cone_of(source).model_dump(mode="json"), flood_certificate=nested)
    if verdict.verdict != "counterexample":
        return None
    if verdict.growth_certificate is not None:
        return FloodEvidence(topology=proven_on(source).model_dump(mode="json"),
                             growth_certificate=verdict.growth_certificate)
    if verdict.trace_index is not None and verdict.certified and 0 <= verdict.trace_index < len(traces):
        return FloodEvidence(trace_index=verdict.trace_index)
    return None


def prove_flood(cone: Topology, target: str, verdicts: dict[str, BoltVerdict], traces: list[AnyTrace],
                proven_on: Callable[[str], Topology],
                cone_of: Callable[[str], Topology] | None = None,
                shortfall: list[str] | None = None) -> FloodCertificate | None:
    """The flood certificate for `target` on `cone` (its cone of influence) from the bolt it receives from that
    floods it hardest, or None when no bolt with evidence of growth floods it. `verdicts` are the bolts' answers so
    far (a source's evidence is its `counterexample`, or with `cone_of(name)`, its cone's document, its own flood:
    a chain), `proven_on(name)` the document its rate proof is about. `shortfall`, when given, gets one sentence
    per source with evidence whose drain is not strictly above the target's smallest capacity."""
    ident = {c.name: c.id for c in cone.components}
    name_of = {c.id: c.name for c in cone.components}
    spouts = {s.id for s in cone.spouts}
    j = ident.get(target)
    senders = {name_of[u] for u, _ in cone.inputs().get(j, [])} if j is not None else set()
    if j is None or j in spouts:
        return None
    if not any(verdicts.get(n, BoltVerdict(verdict="unknown")).verdict in GROWS for n in senders - {target}):
        return _lost_flood(cone, target, verdicts, traces, proven_on, cone_of)  # no sender with evidence of growth
    figures = RateFigures(cone)
    if j in figures.timed:  # a duration window is never flooded: each run of its timer takes all it holds
        return None
    inputs = figures.inputs[j]
    # a spout's stream: its ratio itself, the least any run sustains (replays may exceed the burst, so no σ_lo
    # over the burst's batch sizes)
    spout_terms = [FloodTerm(sender=name_of[u], stream=st, rate=_text(figures.spout_min[u]),
                             ratio=_text(figures.streams[u][st][0]))
                   for u, st in inputs if u in spouts and figures.streams[u].get(st, (0, 0, 0))[0] > 0]
    best: tuple[Fraction, FloodCertificate] | None = None
    for source in sorted({name_of[u] for u, _ in inputs if u not in spouts and name_of[u] != target}):
        if source not in verdicts or ident[source] in figures.joins:  # a join's growth may be its cache's: no backlog
            continue
        if ident[source] in figures.timed:  # a timer's runs empty its queue: it never holds a backlog to drain
            continue
        evidence = growth_evidence(source, verdicts[source], traces, proven_on, cone_of)
        if evidence is None:
            continue
        u = ident[source]
        terms = [FloodTerm(sender=source, stream=st, rate=_text(figures.cap_max[u]),
                           ratio=_text(figures.streams[u][st][1]))
                 for uu, st in inputs if uu == u and figures.streams[u].get(st, (0, 0, 0))[1] > 0]
        if not terms:
            continue
        terms += spout_terms + _other_terms(figures, j, u)
        join = j in figures.joins
        # a join: a term for every branch, or its slowest branch delivers nothing it can be shown to
        whole = not join or {(t.sender, t.stream) for t in terms} == {(name_of[x], st) for x, st in inputs}
        inflow = drain_of(terms, join) if whole else Fraction(0)
        if inflow <= figures.cap_min[j] and shortfall is not None:
            shortfall.append(f"{source} can hold any backlog, but its fastest drain with the least inflow of "
                             f"{target}'s other inputs{' (a join: its slowest branch)' if j in figures.joins else ''}, "
                             f"{float(inflow):.4g} tuples/s, is not above the {float(figures.cap_min[j]):.4g} "
                             f"{target} processes at its slowest")
        if inflow > figures.cap_min[j] and (best is None or inflow > best[0]):
            best = (inflow, FloodCertificate(target=target, content_hash=content_hash(cone), source=source,
                                             terms=terms, capacity=_text(figures.cap_min[j]), evidence=evidence,
                                             join=join))
    return None if best is None else best[1]


def _upstream_spouts(cone: Topology, ident: str) -> set[str]:
    """The ids of the spouts whose trees reach component `ident` of `cone`."""
    inputs, spouts = cone.inputs(), {s.id for s in cone.spouts}
    seen, todo = {ident}, [ident]
    while todo:
        for u, _ in inputs.get(todo.pop(), []):
            if u not in seen:
                seen.add(u)
                todo.append(u)
    return seen & spouts


def _lost_flood(cone: Topology, target: str, verdicts: dict[str, BoltVerdict], traces: list[AnyTrace],
                proven_on: Callable[[str], Topology], cone_of: Callable[[str], Topology] | None
                ) -> FloodCertificate | None:
    """A backlog lost into a paced spout (docs/boundedness.md, "Unbounded: a backlog lost into a paced spout"): a
    failing bolt U of the target's cone with evidence that it can hold any backlog fails once it holds B; a spout s
    whose trees reach U replays the whole loss, paced, one replay per fresh tuple at its fastest emission; the
    target, which receives s's streams (at 2/(a(1−τ)) each with its ratio, its other spouts' at their least rates),
    takes in more than it processes at its slowest for B·a(1−τ) seconds. The source with the widest margin."""
    if not cone.settings.failures or cone.settings.replay != "paced":
        return None
    ident = {c.name: c.id for c in cone.components}
    name_of = {c.id: c.name for c in cone.components}
    figures = RateFigures(cone)
    j = ident[target]
    if j in figures.timed or j in figures.joins:  # (a timer takes all it holds; a join waits for its slowest)
        return None
    inputs = [(u, st) for u, st in figures.inputs[j] if u in figures.spout_min
              and figures.streams[u].get(st, (0, 0, 0))[0] > 0]
    best: tuple[Fraction, FloodCertificate] | None = None
    for b in cone.bolts:
        if (b.name == target or b.min_ttf is None or b.name not in verdicts or b.id in figures.joins
                or b.id in figures.timed):
            continue
        evidence = growth_evidence(b.name, verdicts[b.name], traces, proven_on, cone_of)
        if evidence is None:
            continue
        for s in sorted(_upstream_spouts(cone, b.id) & {u for u, _ in inputs}):
            terms = [FloodTerm(sender=name_of[u], stream=st,
                               rate=_text(2 * figures.spout_max[u] if u == s else figures.spout_min[u]),
                               ratio=_text(figures.streams[u][st][0])) for u, st in inputs]
            inflow = drain_of(terms)
            if inflow > figures.cap_min[j] and (best is None or inflow > best[0]):
                best = (inflow, FloodCertificate(target=target, content_hash=content_hash(cone), source=b.name,
                                                 terms=terms, capacity=_text(figures.cap_min[j]), evidence=evidence,
                                                 via=name_of[s]))
    return None if best is None else best[1]


def least_through(figures: RateFigures, j: str, u: str) -> dict[str, Fraction]:
    """Per bolt id of the cone, the least rate it processes while U (`u`) drains into J (`j`) (docs/boundedness.md,
    "Unbounded: a backlog that floods", J's other inputs): U its largest capacity, every bolt but J taking the
    moment tuples wait and processing at its fastest, so at least min(its least inflow, capacity_max), its least
    inflow being σ_lo times what its senders process (a spout's stream: its ratio times its least rate); a duration
    window, whose runs take all it holds, its least inflow itself (its σ_lo is over batches of any size). J, and
    every bolt on or below a cycle of the others (not ordered by this one pass), count 0."""
    bolts = set(figures.cap_max)
    waits = {m: {src for src, st in figures.inputs[m] if src in bolts - {u, j} and figures.carries(src, st)}
             for m in bolts - {u, j}}
    below: dict[str, list[str]] = {m: [] for m in bolts}
    for m, srcs in waits.items():
        for src in srcs:
            below[src].append(m)
    ready = sorted(m for m, srcs in waits.items() if not srcs)
    through = {u: figures.cap_max[u]}
    while ready:  # Kahn's walk: a bolt once every bolt it waits for has its figure
        m = ready.pop()
        parts: list[Fraction] = []
        for src, st in figures.inputs[m]:
            ratios = figures.streams[src].get(st)
            if ratios is None:
                continue
            if src in figures.spout_min:
                parts.append(ratios[0] * figures.spout_min[src])
            elif src in through:
                parts.append(ratios[1] * through[src])
        # a join completes at least what its slowest branch delivers (a branch not reached counts 0), any other
        # bolt receives the sum of its streams
        if m in figures.joins:
            inflow = min(parts) if len(parts) == len(figures.inputs[m]) else Fraction(0)
        else:
            inflow = sum(parts, Fraction(0))
        through[m] = inflow if m in figures.timed else min(inflow, figures.cap_max[m])
        for n in below[m]:
            waits[n].discard(m)
            if not waits[n]:
                ready.append(n)
    return through


def drain_of(terms: list[FloodTerm], join: bool = False) -> Fraction:
    """What the terms bring the target per second: their sum, or for a join (one term per branch) the least of
    them: it completes what its slowest branch delivers (docs/boundedness.md, "Through a join")."""
    values = [Fraction(t.rate) * Fraction(t.ratio) for t in terms]
    return (min(values, default=Fraction(0)) if join else sum(values, Fraction(0)))


def _other_terms(figures: RateFigures, j: str, u: str) -> list[FloodTerm]:
    """J's input streams from bolts other than U and J, each at its sender's least rate while U drains
    (`least_through`) times the stream's least ratio σ_lo (none for a sender that counts 0)."""
    through = least_through(figures, j, u)
    return [FloodTerm(sender=figures.names[x], stream=st, rate=_text(through[x]), ratio=_text(ratios[1]))
            for x, st in figures.inputs[j] if x not in (u, j) and x in through and through[x] > 0
            and (ratios := figures.streams[x].get(st)) is not None and ratios[1] > 0]


_JOIN_DRAIN = " on its slowest branch (a join completes no more than its slowest branch delivers),"


def flood_message(cert: FloodCertificate, before: Words | None = None) -> Words:
    """The verdict's words: who backs up and floods the target, at what rate against what capacity, and how;
    `before` is what was known before (kept as the detail under the answer)."""
    inflow = drain_of(cert.terms, cert.join)
    capacity = Fraction(cert.capacity)
    chain = cert.evidence.flood_certificate
    storm = cert.evidence.storm_certificate
    whose = (", ".join([storm.failing, *(o.bolt for o in storm.others)]) if storm is not None else "")
    how = ("its growth is proven by rates" if cert.evidence.growth_certificate is not None
           else f"it is itself unbounded: {chain.source} backs up, then floods it" if chain is not None
           else f"it is itself unbounded by a replay storm: {storm.failing}'s at-once replays outgrow it"
           if storm is not None and storm.replay == "at-once"
           else f"it is itself unbounded by a paced replay backlog: {storm.spout}'s replays of {whose}'s losses "
                "pile up, then come out one per fresh tuple" if storm is not None
           else "a certified lasso makes it grow")
    if cert.via is not None:  # a lost backlog: docs/boundedness.md, "Unbounded: a backlog lost into a paced spout"
        text = Words.of(
            f"unbounded: {cert.source} backs up ({how}), then fails and {cert.via} replays its loss, paced, into "
            f"{cert.target} at ", Figure(inflow), " tuples/s or more", Exactly(inflow), " against the ",
            Figure(capacity), " it processes at its slowest", Exactly(capacity),
            f". Once {cert.source} holds any B it fails (no earlier failure for min_ttf), {cert.via} takes its whole "
            f"loss as replays and, at its fastest, sends a fresh tuple and a replay at every emission for as long as "
            f"they last, while {cert.target} processes as slowly as it may, so for every N a legal run takes "
            f"{cert.target}'s queue past N (a flood proof with a checked certificate; docs/boundedness.md)")
        return Words.of(text, ". Before that: ", before) if before is not None and before.text() else text
    text = Words.of(
        f"unbounded: {cert.source} backs up, then floods {cert.target} at ", Figure(inflow), " tuples/s or more",
        Exactly(inflow), _JOIN_DRAIN if cert.join else "",
        " against the ", Figure(capacity), " it processes at its slowest", Exactly(capacity),
        f". {cert.source} can hold any backlog ({how}); after a long enough slow stretch it drains that backlog at "
        f"full speed, one full batch every α(1−τ), while {cert.target} processes as slowly as it may, so for every "
        f"N a legal run takes {cert.target}'s queue past N (a flood proof with a checked certificate; "
        "docs/boundedness.md)")
    return Words.of(text, ". Before that: ", before) if before is not None and before.text() else text


def flood_verdicts(topo: Topology, verdicts: dict[str, BoltVerdict], traces: list[AnyTrace],
                   proven_on: Callable[[str], Topology], notes: list[str],
                   stop: Callable[[], bool] = lambda: False) -> None:
    """Every bolt of `verdicts` whose answer is one of FLOODABLE and that a bolt with evidence of growth floods
    becomes `unbounded` (in place), once the independent checker accepts its certificate; a rejected one is noted
    as a defect and the earlier answer kept. `stop()` ends the pass early (time limit, cancel)."""
    senders = topo.senders()
    tried: dict[str, frozenset[str]] = {}  # per bolt, the sources it was last tried with
    while True:  # a bolt flooded in one round may flood another in the next (a chain): until nothing changes
        growing = frozenset(n for n, v in verdicts.items() if v.verdict in GROWS)
        lost = topo.settings.failures and topo.settings.replay == "paced" and any(  # a lost backlog's source
            b.min_ttf is not None for b in topo.bolts if b.name in growing)
        todo = [n for n, v in verdicts.items() if v.verdict in FLOODABLE
                and ((senders.get(n, set()) - {n}) & growing or lost) and tried.get(n) != growing]
        if not todo or stop():
            return
        for name in todo:
            if stop():
                return
            tried[name] = growing
            _flood_one(topo, name, verdicts, traces, proven_on, notes)


def _flood_one(topo: Topology, name: str, verdicts: dict[str, BoltVerdict], traces: list[AnyTrace],
               proven_on: Callable[[str], Topology], notes: list[str]) -> None:
    """`name` becomes `unbounded` when a flood certificate for it is built and accepted by its checker."""
    before = verdicts[name]
    cone = build_network(topo, [name]).topology
    if cone.bolt_by_name(name).duration_window is not None:  # a timer takes all it holds at each run: never flooded
        return  # (docs/boundedness.md, "Duration windows" under "Unbounded: a backlog that floods")
    short: list[str] = []
    cert = prove_flood(cone, name, verdicts, traces, proven_on, lambda n: build_network(topo, [n]).topology, short)
    if cert is None:
        if short:  # what is missing for an answer, in its message
            verdicts[name] = before.reworded(Words.of(*_before_no_flood(before.words()), (
                f" {NO_FLOOD}{'; '.join(short)} (a tie or less proves neither a flood nor a bound: "
                "docs/boundedness.md, \"Unbounded: a backlog that floods\")")))
        return
    index = cert.evidence.trace_index
    record_checked(verdicts, name, BoltVerdict.said(flood_message(cert, before.words()), verdict="unbounded",
                                                    method="flood proof", certified=True, k=before.k,
                                                    flood_certificate=cert),
                   check_flood_certificate(cone, cert, traces[index] if index is not None else None), notes,
                   "a flood proof")


def _before_no_flood(words: Words) -> tuple[str | Figure | Exactly, ...]:
    """The parts of a bolt's message before what an earlier pass said is missing for the flood proof."""
    for i, part in enumerate(words.parts):
        if isinstance(part, str) and NO_FLOOD in part:
            return (*words.parts[:i], part.split(NO_FLOOD)[0].rstrip())
    return words.parts


#: a cycle of more members than this is not tried by `floods_by_rates`: growth by rates through a cycle takes rounds
#: of the whole cone (`rate_growth.MAX_ROUND_WORK`), and `check` must stay instant (a 3,000-bolt cycle: no cone built)
LARGE_CYCLE = 100


def floods_by_rates(topo: Topology, statuses: dict[str, str],
                    stop: Callable[[], bool] = lambda: False) -> dict[str, FloodCertificate]:
    """Without any search (`stormbound check`): every bolt whose rate-check status leaves room (`may-grow`,
    `no-repeating-growth`) and that a bolt it receives from floods, that bolt's growth proven by rates
    (`rate_growth.py`): its flood certificate, accepted by the checker. `stop()` ends the pass early (what was found
    so far is kept; every certificate given is checked)."""
    senders = topo.senders()
    cones: dict[str, Topology] = {}
    growth: dict[str, BoltVerdict | None] = {}

    def cone_of(name: str) -> Topology:
        if name not in cones:
            cones[name] = build_network(topo, [name]).topology
        return cones[name]

    found: dict[str, FloodCertificate] = {}
    too_large = on_or_below_cycles(topo, LARGE_CYCLE)
    paced = topo.settings.failures and topo.settings.replay == "paced"
    failing = {b.name for b in topo.bolts if b.min_ttf is not None} if paced else set()
    for name, status in statuses.items():
        if status not in ("may-grow", "no-repeating-growth"):
            continue
        candidates = (senders.get(name, set()) | failing) - {name}  # (a failing bolt: a lost backlog's source)
        for u in sorted(candidates):
            if u not in growth and statuses.get(u) in ("grows", "may-grow") and u not in too_large and not stop():
                cert = prove_growth(cone_of(u), u)
                growth[u] = None if cert is None else BoltVerdict(verdict="counterexample", method="rate proof",
                                                                  certified=True, growth_certificate=cert)
        verdicts = {u: v for u in candidates if (v := growth.get(u)) is not None}
        if not verdicts or stop():
            continue
        flood = prove_flood(cone_of(name), name, verdicts, [], cone_of)
        if flood is not None and not check_flood_certificate(cone_of(name), flood):
            found[name] = flood
    return found


#: at most this long proving floods by rates after the instant rate check (`check`, the app's canvas and
#: Verification panel): it must stay instant on large topologies
FLOOD_BUDGET_S = 5.0


def instant_floods(topo: Topology, statuses: dict[str, str],
                   budget_s: float = FLOOD_BUDGET_S) -> dict[str, FloodCertificate]:
    """The bolts the instant rate check proves unbounded without a search (`floods_by_rates` within `budget_s`):
    what `check` prints under "Unbounded" and the app shows on the canvas and in its Verification panel."""
    deadline = time.monotonic() + budget_s
    return floods_by_rates(topo, statuses, lambda: time.monotonic() > deadline)


def unbounded_words(cert: FloodCertificate | StormCertificate | SpillCertificate) -> str:
    """`check`'s words for a bolt `unbounded.instant_unbounded` answers."""
    if isinstance(cert, SpillCertificate):
        return spill_message(cert)
    if isinstance(cert, StormCertificate):
        return paced_message(cert) if cert.replay == "paced" else storm_message(cert)
    return flood_message(cert).text()


def instant_flood_verdict(cert: FloodCertificate | StormCertificate | SpillCertificate) -> BoltVerdict:
    """A flood, replay storm or spill the instant rate check proved, as a checked bolt's verdict: `unbounded`, in
    verify's words."""
    if isinstance(cert, SpillCertificate):
        return BoltVerdict(verdict="unbounded", method="storm proof", certified=True, spill_certificate=cert,
                           message=spill_message(cert))
    if isinstance(cert, StormCertificate):
        return BoltVerdict(verdict="unbounded", method="storm proof", certified=True, storm_certificate=cert,
                           message=unbounded_words(cert))
    return BoltVerdict.said(flood_message(cert), verdict="unbounded", method="flood proof", certified=True,
                            flood_certificate=cert)


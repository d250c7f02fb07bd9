"""An independent checker for flood certificates ("unbounded": an upstream bolt backs up, then floods the target).

It shares no code with the builder (`app/core/tcn/flood.py`, which reads the rate check's figures): from the
target's cone document alone it recomputes, for every input stream of the target from the source, a spout or
another bolt, the sender's rate (the source's largest capacity C/(α(1−τ)); a spout's least emission rate
1/(a(1+τ)); another bolt's least rate while the source drains, `_least_rates`, by its own walk) and the stream's
least output ratio (the room's own `ratios.py` for a bolt's stream with batches of C_TAKE; for a spout, its
stream's ratio itself, the least any run of either emission rule sustains), and the target's smallest
capacity C/(α(1+τ) + max_idle). It accepts (docs/boundedness.md, "Unbounded: a backlog that floods") when

* the content hash is the document's, the target and the source are two bolts and the target receives from the
  source (a stream with a positive ratio);
* every stated term is one of those streams, none twice, at least one from the source, each rate and ratio no
  higher than derived; the capacity is the derived one; Σ rate × ratio is strictly above it (a join: `join`
  says so, every branch has its term and the least rate × ratio is strictly above it; a join among the other
  senders adds its slowest branch's least rate, `join_branches`; a join is never the source: docs/boundedness.md,
  "Through a join");
* the source's evidence holds: its growth certificate is accepted by `rate_growth.py` (or its lasso by the trace
  certifier, `certify.py`, with the source growing in it; or, in a chain, its own flood certificate by this
  checker, recursively, on the source's cone; or its replay storm's certificate by `storm.py`, on its cone),
  for the source; and the evidence's document is part of this one: every component that influences the source
  there (its upstream and, with failures, the failing bolts its spouts feed, with theirs) is here with the same
  parameters and the same input streams, under the same settings, so the run that makes the source grow is a
  run here too;
* a lost backlog (`via`, docs/boundedness.md "Unbounded: a backlog lost into a paced spout", `_lost_problems`):
  failures on and paced replays, a min_ttf for the source, `via` a spout whose trees reach the source (its own walk
  of the subscriptions), every term an input stream of the target from a spout (`via`'s at most 2/(a(1−τ)), another
  spout's at most 1/(a(1+τ)), each ratio at most the stream's), none twice, one from `via`, the capacity the
  smallest and Σ rate × ratio strictly above it; the source's evidence as above;
* with a threshold run (`run`, docs/boundedness.md "The threshold run"): the trace certifier accepts its trace as
  a threshold witness for the target and the run's threshold (a finite legal run in which the target's queue
  reaches it), and the trace's document is part of this one for the target, as the evidence's is for the source.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

from app.core.formats.trace import CompressedTrace, Trace
from app.core.numbers import exact
from app.core.results import FloodCertificate, FloodEvidence
from app.core.tcn.check.lassos import certified
from app.core.tcn.check.parts import part_of, received, threshold_run_problems
from app.core.tcn.check.rate_growth import check_growth_certificate
from app.core.tcn.check.ratios import ratio_bounds
from app.core.tcn.check.reading import (
    fraction_of,
    join_branches,
    read_certificate,
    stated_terms,
    take_bound,
    timer_bound,
)
from app.core.tcn.check.storm import check_storm_certificate
from app.core.topology import Bolt, Topology, TopologyError, parse_topology

__all__ = ["check_flood_certificate", "evidence_problems"]


def _nested(kind: str, target: str, source: str, document: dict[str, Any] | None, topo: Topology,
            check: Callable[[Topology], list[str]]) -> list[str]:
    """Why a certificate nested as evidence (of `kind`, about `target`, on `document`) does not show that
    `source` can hold any backlog in `topo`; [] when it does."""
    if target != source:
        return [f"evidence: the {kind} certificate is about {target}, not {source}"]
    if document is None:
        return [f"evidence: the {kind} certificate comes without the document it is about"]
    try:
        proven_on = parse_topology(document)
    except (TopologyError, ValueError, TypeError) as exc:
        return [f"evidence: its document is not valid: {exc}"]
    problems = [f"evidence: {p}" for p in check(proven_on)]
    return problems or part_of(proven_on, source, topo)


def evidence_problems(ev: FloodEvidence, source: str, topo: Topology,
                      trace: Trace | CompressedTrace | None) -> list[str]:
    """Why `ev` does not show that `source` can hold any backlog in `topo`; [] when it does (also the evidence of a
    spill certificate's failing bolt, `spill.py`)."""
    if ev.storm_certificate is not None:  # the source is unbounded by a replay storm: any backlog, then a drain
        storm = ev.storm_certificate
        return _nested("storm", storm.target, source, ev.topology, topo,
                       lambda on: check_storm_certificate(on, storm))
    if ev.flood_certificate is not None:  # a chain: the source is itself unbounded
        flood = ev.flood_certificate
        return _nested("flood", flood.target, source, ev.topology, topo,
                       lambda on: check_flood_certificate(on, flood))
    if ev.growth_certificate is not None:
        growth = ev.growth_certificate
        return _nested("growth", growth.target, source, ev.topology, topo,
                       lambda on: check_growth_certificate(on, growth))
    lasso = trace if trace is not None else ev.trace
    if lasso is None:
        return ["evidence: neither a growth certificate nor a lasso of the source"]
    found = certified(lasso, [source])  # (within one verification, a lasso certified before is not replayed)
    if not found.ok:
        return [f"evidence: the lasso is not certified: {'; '.join(found.problems[:3])}"]
    if found.growth_per_loop.get(source, 0) <= 0:
        return [f"evidence: {source} does not grow in the lasso"]
    lasso_topology = lasso.topology if isinstance(lasso, Trace | CompressedTrace) else lasso.get("topology")
    return part_of(parse_topology(lasso_topology), source, topo)


def _lost_problems(topo: Topology, cert: FloodCertificate, join: bool) -> list[str]:
    """Why a lost backlog (docs/boundedness.md, "Unbounded: a backlog lost into a paced spout") does not flood the
    target: the source must be able to fail under paced replays, `via` a spout whose trees reach the source, every
    term an input stream of the target from a spout (`via`'s at most 2/(a(1−τ)), a fresh tuple and a replay per
    least gap; another spout's at most its least rate 1/(a(1+τ))), with at most the stream's ratio, and their sum
    strictly above the target's smallest capacity."""
    settings, tau = topo.settings, exact(topo.settings.tolerance)
    bolts, spouts = {b.name: b for b in topo.bolts}, {s.name: s for s in topo.spouts}
    if not settings.failures or settings.replay != "paced" or bolts[cert.source].min_ttf is None:
        return [f"a lost backlog needs failures on, paced replays and a min_ttf for {cert.source}"]
    if join:
        return [f"{cert.target} is a join: a lost backlog's drain is an ordinary bolt's"]
    feeds = received(topo)
    reach, todo = {cert.source}, [cert.source]
    while todo:
        for sender, _ in feeds.get(todo.pop(), []):
            if sender not in reach:
                reach.add(sender)
                todo.append(sender)
    if cert.via not in spouts or cert.via not in reach:
        return [f"{cert.via} is not a spout whose trees reach {cert.source}: it replays none of its losses"]
    ceilings = {(u, st): (2 * exact(spouts[u].rate) / (1 - tau) if u == cert.via else exact(spouts[u].rate) / (1 + tau),
                          exact(spouts[u].output_streams()[st] or 0))
                for u, st in feeds.get(cert.target, []) if u in spouts}
    values, seen, problems = stated_terms(cert.terms, ceilings, cert.target, "a spout")
    total = sum(values, Fraction(0))
    if not any(u == cert.via for u, _ in seen):
        problems.append(f"no term from {cert.via}: {cert.target} must receive its replays")
    j = bolts[cert.target]
    capacity = take_bound(j) / (exact(j.alpha) * (1 + tau) + exact(settings.max_idle_time))
    if fraction_of(cert.capacity) != capacity:
        problems.append(f"capacity {cert.capacity} is not {cert.target}'s smallest, {capacity}")
    elif not problems and not total > capacity:
        problems.append(f"the drain brings {total} tuples/s, not strictly more than the capacity {capacity}")
    return problems


def _least_ratio(bolt: Bolt, stream: str, tau: Fraction, rule: str) -> Fraction:
    """σ_lo of a bolt's stream: over batches of 1..C_TAKE, or of any size for a duration window (docs/model.md
    10.3: a run takes all it holds), which is σ itself (a batch of den(σ) from carry 0 is exact)."""
    sigma = exact(bolt.output_streams()[stream] or 0)
    batches = take_bound(bolt) if timer_bound(bolt, tau) is None else max(1, sigma.denominator)
    return ratio_bounds(sigma, batches, rule)[0]


def _least_rates(topo: Topology, target: str, source: str) -> dict[str, Fraction]:
    """Per bolt name, the least rate it processes while the source drains into the target: the source its largest
    capacity; every other bolt but the target at its fastest, taking at once, so at least min(its least inflow,
    its largest capacity), the least inflow summing over its input streams the stream's least ratio times what the
    sender processes (a spout: its stream's ratio times its least rate 1/(a(1+τ))); a duration window processes
    its least inflow itself, taking all it holds at once and each run α(1−τ) long, so everything that arrived up to
    2α(1−τ) ago (docs/boundedness.md, "Duration windows" under the flood). Bolts are taken in an order
    where each follows the bolts it receives from (the source and the target wait for nobody: the source's figure
    is given, the target's is never used); the target, and any bolt that order never reaches (on or below a
    cycle), are left out: they count 0."""
    tau, rule = exact(topo.settings.tolerance), topo.settings.emission
    spouts = {s.name: s for s in topo.spouts}
    bolts = {b.name: b for b in topo.bolts}
    sigma = {(c.name, st): exact(r or 0) for c in topo.components for st, r in c.output_streams().items()}
    inputs_of = received(topo)
    least: dict[str, Fraction] = {source: take_bound(bolts[source]) / (exact(bolts[source].alpha) * (1 - tau))}
    waits = {b: {u for u, st in inputs_of.get(b, []) if u in bolts and u not in (source, target)
                 and sigma.get((u, st), Fraction(0)) > 0} for b in bolts if b not in (source, target)}
    followers: dict[str, list[str]] = {b: [] for b in bolts}
    for b, us in waits.items():
        for u in us:
            followers[u].append(b)
    ready = sorted(b for b, us in waits.items() if not us)
    while ready:  # Kahn's walk, with a queue
        b = ready.pop()
        parts: list[Fraction] = []  # per input stream, the least it carries (a sender not reached: none)
        for u, st in inputs_of.get(b, []):
            if u in spouts:
                parts.append(sigma.get((u, st), Fraction(0)) * exact(spouts[u].rate) / (1 + tau))
            elif u in least:
                parts.append(_least_ratio(bolts[u], st, tau, rule) * least[u])
        # a join completes the messages every branch delivered: at least its slowest branch's (0 when a branch has
        # no figure); any other bolt receives the sum of its streams
        if join_branches(topo, bolts[b]) is not None:
            inflow = min(parts) if len(parts) == len(inputs_of.get(b, [])) else Fraction(0)
        else:
            inflow = sum(parts, Fraction(0))
        timed = timer_bound(bolts[b], tau) is not None  # no capacity limits a timer: it takes all it holds
        least[b] = inflow if timed else min(inflow, take_bound(bolts[b]) / (exact(bolts[b].alpha) * (1 - tau)))
        for f in followers[b]:
            waits[f].discard(b)
            if not waits[f]:
                ready.append(f)
    return least


def _derived_terms(topo: Topology, target: str, source: str) -> dict[tuple[str, str], tuple[Fraction, Fraction]]:
    """(sender, stream) -> (rate, least ratio) for the target's input streams from the source, from spouts and from
    other bolts (at their least rates while the source drains: `_least_rates`)."""
    tau, rule = exact(topo.settings.tolerance), topo.settings.emission
    spouts = {s.name: s for s in topo.spouts}
    bolts = {b.name: b for b in topo.bolts}
    least = _least_rates(topo, target, source)
    out: dict[tuple[str, str], tuple[Fraction, Fraction]] = {}
    for sender, stream in received(topo).get(target, []):
        if sender in spouts:
            ratio = exact(spouts[sender].output_streams()[stream] or 0)
            out[(sender, stream)] = (exact(spouts[sender].rate) / (1 + tau), ratio)
        elif sender in least:  # the source at its largest capacity, or another bolt at its least rate
            out[(sender, stream)] = (least[sender], _least_ratio(bolts[sender], stream, tau, rule))
    return out


def check_flood_certificate(document: Any, certificate: Any, trace: Trace | CompressedTrace | None = None,
                            run_trace: Trace | None = None) -> list[str]:
    """Why `certificate` does not prove that its target's queue passes every bound in some run of `document`;
    [] = accepted. `trace`, when given, is the source's lasso, `run_trace` the threshold run's trace (a certificate
    in memory refers to them by index)."""
    read = read_certificate(document, certificate, FloodCertificate, "a flood certificate", count_windows=True,
                            duration_windows=True, joins=True)  # (whole slides, timers: docs/boundedness.md)
    if isinstance(read, list):
        return read
    topo, cert, problems = read
    bolts = {b.name: b for b in topo.bolts}
    if cert.target not in bolts or cert.source not in bolts or cert.target == cert.source:
        return problems + [f"target {cert.target!r} and source {cert.source!r} must be two bolts of the topology"]
    if join_branches(topo, bolts[cert.source]) is not None:
        return problems + [f"the source {cert.source} is a join: its growth may be its cache's, which leaves no "
                           "backlog in its queue to drain"]
    tau = exact(topo.settings.tolerance)
    timed = [n for n in (cert.source, cert.target) if timer_bound(bolts[n], tau) is not None]
    if timed:
        return problems + [f"{timed[0]} has a duration window, whose timer takes all it holds at each run: it never "
                           "holds a backlog, as a source or as the target (docs/model.md section 10.3)"]
    branches = join_branches(topo, bolts[cert.target])
    if cert.join != (branches is not None):
        return problems + [f"join {cert.join}, but {cert.target} {'is' if branches else 'is not'} a join waiting for "
                           "every branch"]
    if cert.via is not None:  # a lost backlog: the source fails, the spout replays its loss into the target
        return (problems + _lost_problems(topo, cert, branches is not None)
                or evidence_problems(cert.evidence, cert.source, topo, trace)
                or threshold_run_problems(cert.target, cert.run, topo, run_trace))
    derived = _derived_terms(topo, cert.target, cert.source)
    if not any(s == cert.source and ratio > 0 for (s, _), (_, ratio) in derived.items()):
        return problems + [f"{cert.target} receives nothing from {cert.source}"]
    values, seen, stated = stated_terms(cert.terms, derived, cert.target,
                                        "the source, a spout or a bolt with a least rate")
    problems += stated
    total = sum(values, Fraction(0))
    if not any(s == cert.source for s, _ in seen):
        problems.append(f"no term from the source {cert.source}")
    if branches is not None:  # a join completes what its slowest branch delivers: every branch needs its term
        missing = [f"{u}/{st}" for u, st in branches if (u, st) not in seen]
        if missing:
            problems.append(f"{cert.target} is a join and its branch{'es' if len(missing) > 1 else ''} "
                            f"{', '.join(missing)} {'have' if len(missing) > 1 else 'has'} no term")
        total = min(values, default=Fraction(0))
    j = bolts[cert.target]
    capacity = take_bound(j) / (exact(j.alpha) * (1 + exact(topo.settings.tolerance))
                                + exact(topo.settings.max_idle_time))
    if fraction_of(cert.capacity) != capacity:
        problems.append(f"capacity {cert.capacity} is not {cert.target}'s smallest, {capacity}")
    elif not total > capacity:
        problems.append(f"the drain brings {total} tuples/s, not strictly more than the capacity {capacity}")
    return (problems or evidence_problems(cert.evidence, cert.source, topo, trace)
            or threshold_run_problems(cert.target, cert.run, topo, run_trace))

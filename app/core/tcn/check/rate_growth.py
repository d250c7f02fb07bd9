"""An independent checker for growth proven by rates: plain Python, exact fractions, no rate-check code.

It shares no code with the builder (`app/core/tcn/rate_growth.py`, which reads the rate check's figures):
from the topology document alone it orders the bolts again (its own walk), checks that no cycle runs
through the network, and recomputes under the certificate's schedule (docs/verifier.md, "Growth proven by
rates") every spout's emission rate a⁻¹/(1−τ), every bolt's smallest and largest long-run inflow
(σ_lo, σ_hi per stream from the room's own `ratios.py`; a bolt passes on what it processes: min(inflow, its
largest capacity C/(α(1−τ))), the target min(inflow, its smallest C/(α(1+τ) + max_idle))) and each
capacity. A certificate is accepted when its content hash is the document's, it names exactly the
network's bolts, every figure it states is one the checker derives or a weaker one (an inflow_low no
higher, an inflow_high no lower, the capacity itself), and with its figures: the target receives strictly
more than its capacity, and every other bolt is `saturated` (it receives strictly more than its
capacity) or `keeps up` (strictly less). A join (`join_branches`) receives the least of its branches' figures; a
target join whose cache grows (`cache grows`) states its branches, and some branch's least rate must be strictly
above another's most (docs/verifier.md, "Growth proven by rates", through a join).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from app.core.numbers import exact
from app.core.results import RateGrowthCertificate
from app.core.tcn.check.ratios import ratio_bounds
from app.core.tcn.check.reading import fraction_of, join_branches, read_certificate, take_bound, timer_bound
from app.core.topology import STORM_MAX_INT

Flows = dict[tuple[str, str], tuple[Fraction, Fraction]]  # (component name, stream) -> (least, most) tuples/s
#: a duration window's stated capacity: its timer takes whatever arrived (docs/model.md section 10.3); the certificate
#: states this figure, and the bolt is accepted only as keeping up, strictly below it (restated, not imported)
TIMER_CAPACITY = Fraction(2**62)



def _ordered(received: dict[str, list[tuple[str, str]]], carries: set[tuple[str, str]]) -> list[str] | None:
    """The bolts in an order where every bolt follows the bolts that send it tuples (None: a cycle). Kahn's
    walk with a queue, not a recursion: a chain of any length is ordered."""
    senders = {b: {u for u, st in pairs if (u, st) in carries and u in received} for b, pairs in received.items()}
    waiting = {b: len(us) for b, us in senders.items()}
    followers: dict[str, list[str]] = {b: [] for b in received}
    for b, us in senders.items():
        for u in us:
            followers[u].append(b)
    ready = sorted(b for b, n in waiting.items() if n == 0)
    order: list[str] = []
    while ready:
        b = ready.pop()
        order.append(b)
        for f in followers[b]:
            waiting[f] -= 1
            if waiting[f] == 0:
                ready.append(f)
    return order if len(order) == len(received) else None



def _claims(cert: RateGrowthCertificate, name: str, low: Fraction, high: Fraction, capacity: Fraction,
            problems: list[str]) -> tuple[Fraction, Fraction] | None:
    """The certificate's (inflow_low, inflow_high) for bolt `name` when each is at least as weak as derived."""
    line = cert.bolts[name]
    claimed = [fraction_of(line.inflow_low), fraction_of(line.inflow_high), fraction_of(line.capacity)]
    if any(x is None for x in claimed):
        problems.append(f"{name}: a figure is not a fraction p/q")
        return None
    c_low, c_high, c_cap = (x for x in claimed if x is not None)
    if c_low > low:
        problems.append(f"{name}: inflow_low {line.inflow_low} is above the derived least inflow {low}")
    if c_high < high:
        problems.append(f"{name}: inflow_high {line.inflow_high} is below the derived most inflow {high}")
    if c_cap != capacity:
        problems.append(f"{name}: capacity {line.capacity} is not the derived {capacity}")
    return c_low, c_high


#: the most rounds of the iteration a certificate may ask for (a cone with a cycle): the checker's own limit
ROUND_LIMIT = 5_000


def _rounds(received: dict[str, list[tuple[str, str]]], ratios: dict[tuple[str, str], tuple[Fraction, Fraction]],
            rate: dict[str, Fraction], capacity: dict[str, Fraction], rounds: int) -> dict[str, tuple[Fraction,
                                                                                                     Fraction]]:
    """Per bolt, (least, most) inflow after `rounds` rounds of the iteration from below and from above: each
    bolt's round-r inflows from its senders' round-(r−1) throughputs, a bolt's throughput min(inflow, capacity),
    from 0 below and the capacity above; a spout sends its ratios times its rate every round."""
    low_through = {b: Fraction(0) for b in received}
    high_through = dict(capacity)
    found: dict[str, tuple[Fraction, Fraction]] = {}
    for _ in range(rounds):
        for b, pairs in received.items():
            low = high = Fraction(0)
            for sender, stream in pairs:
                lo, hi = ratios[(sender, stream)]
                if sender in rate:  # a spout
                    low, high = low + lo * rate[sender], high + hi * rate[sender]
                else:
                    low, high = low + lo * low_through[sender], high + hi * high_through[sender]
            found[b] = (low, high)
        low_through = {b: min(found[b][0], capacity[b]) for b in received}
        high_through = {b: min(found[b][1], capacity[b]) for b in received}
    return found


def _topological(received: dict[str, list[tuple[str, str]]], ratios: dict[tuple[str, str], tuple[Fraction,
                                                                                                   Fraction]],
                 rate: dict[str, Fraction], capacity: dict[str, Fraction], order: list[str],
                 joins: dict[str, list[tuple[str, str]]]) -> tuple[dict[str, tuple[Fraction, Fraction]], Flows]:
    """Per bolt, (least, most) inflow in one pass along `order` (no cycle): each bolt passes on what it processes,
    min(inflow, capacity), times its ratios; a join (`joins`: its branches, each stream once, those that carry
    nothing too) receives the messages every branch delivered: the least of its branches' figures, both ways.
    Also every stream's (least, most) flow."""
    sent: dict[str, list[tuple[tuple[str, str], Fraction, Fraction]]] = {}  # per sender, its streams and ratios
    for key, (lo, hi) in ratios.items():
        sent.setdefault(key[0], []).append((key, lo, hi))
    flows: Flows = {key: (lo * r, hi * r) for s, r in rate.items() for key, lo, hi in sent.get(s, [])}
    found: dict[str, tuple[Fraction, Fraction]] = {}
    for name in order:
        if name in joins:
            low = min(flows.get(key, (Fraction(0), Fraction(0)))[0] for key in joins[name])
            high = min(flows.get(key, (Fraction(0), Fraction(0)))[1] for key in joins[name])
        else:
            low = sum((flows[key][0] for key in received[name]), Fraction(0))
            high = sum((flows[key][1] for key in received[name]), Fraction(0))
        found[name] = (low, high)
        for key, lo, hi in sent.get(name, []):
            flows[key] = (lo * min(low, capacity[name]), hi * min(high, capacity[name]))
    return found, flows


def check_growth_certificate(document: Any, certificate: Any) -> list[str]:
    """Why `certificate` does not prove that a lasso of `document` makes its target grow; [] = accepted."""
    read = read_certificate(document, certificate, RateGrowthCertificate, "a growth certificate",
                            count_windows=True, duration_windows=True, joins=True)  # (docs/verifier.md)
    if isinstance(read, list):
        return read
    topo, cert, problems = read
    bolts = {b.name: b for b in topo.bolts}
    if cert.target not in bolts:
        return problems + [f"target {cert.target!r} is not a bolt of the topology"]
    tau, idle = exact(topo.settings.tolerance), exact(topo.settings.max_idle_time)
    rule = topo.settings.emission
    name_of = {c.id: c.name for c in topo.components}
    ratios: dict[tuple[str, str], tuple[Fraction, Fraction]] = {}
    for sp in topo.spouts:
        for stream, r in sp.output_streams().items():
            ratios[(sp.name, stream)] = ratio_bounds(exact(r or 0), sp.burst, rule)
    timers = {b.name for b in topo.bolts if timer_bound(b, Fraction(0)) is not None}  # (the slide's kind: 10.4)
    for b in topo.bolts:
        batch = STORM_MAX_INT if b.name in timers else take_bound(b)  # (a timer's runs take batches of any size)
        for stream, sigma in b.output_streams().items():
            ratios[(b.name, stream)] = ratio_bounds(exact(sigma or 0), batch, rule)
    carries = {key for key, (_, hi) in ratios.items() if hi > 0}
    received = {name_of[b]: [(name_of[u], st) for u, st in pairs if (name_of[u], st) in carries]
                for b, pairs in topo.inputs().items()}
    received.update({name: [] for name in bolts if name not in received})
    if set(cert.bolts) != set(bolts):
        return problems + [f"the certificate names bolts {sorted(cert.bolts)}, the network has {sorted(bolts)}"]
    rate: dict[str, Fraction] = {}
    for sp in topo.spouts:
        rate[sp.name] = exact(sp.rate) / (1 - tau)  # one tuple every a(1−τ)
        if fraction_of(cert.spouts.get(sp.name, "")) != rate[sp.name]:
            problems.append(f"spout {sp.name}: rate {cert.spouts.get(sp.name)} is not the derived {rate[sp.name]}")
    capacity: dict[str, Fraction] = {}
    for name, b in bolts.items():  # the target at its slowest, every other bolt at its fastest
        alpha = exact(b.alpha)
        capacity[name] = (take_bound(b) / (alpha * (1 + tau) + idle) if name == cert.target
                          else take_bound(b) / (alpha * (1 - tau)))
        if name in timers:  # a duration window's timer takes whatever arrived: it only keeps up (section 10.3)
            capacity[name] = TIMER_CAPACITY
    if timers and _ordered(received, carries) is None:
        return problems + [f"a cycle runs through the network with the duration window{'s' if len(timers) > 1 else ''} "
                           f"{', '.join(sorted(timers))}: the timer's proof holds on acyclic networks only"]
    joins = {name: branches for name, b in bolts.items() if (branches := join_branches(topo, b)) is not None}
    flows: Flows = {}
    if cert.rounds is not None:  # rounds of the iteration: sound with or without a cycle
        if joins:
            return problems + [f"the certificate states rounds, and the rounds have no join rule ({', '.join(joins)}"
                               " waits for every branch: docs/verifier.md, \"Growth proven by rates\")"]
        if not 1 <= cert.rounds <= ROUND_LIMIT:
            return problems + [f"rounds {cert.rounds} is not between 1 and {ROUND_LIMIT}"]
        derived = _rounds(received, ratios, rate, capacity, cert.rounds)
    else:
        order = _ordered(received, carries)
        if order is None:
            return problems + ["a cycle runs through the network and the certificate states no rounds: the "
                               "schedule's rates are not derived in one pass"]
        derived, flows = _topological(received, ratios, rate, capacity, order, joins)
    for name in sorted(bolts):
        low, high = derived[name]
        claimed = _claims(cert, name, low, high, capacity[name], problems)
        role = cert.bolts[name].role
        if claimed is None:
            continue
        c_low, c_high = claimed
        if role != "cache grows" and cert.bolts[name].branches:
            problems.append(f"{name}: states branches, which only a target join whose cache grows has")
        if name in timers and role != "keeps up":
            problems.append(f"{name}: {role}, but a duration window's timer takes whatever arrived: it keeps up")
        elif (role in ("target", "cache grows")) != (name == cert.target):
            problems.append(f"{name}: role {role!r}, but the target is {cert.target}")
        elif role == "cache grows":
            problems += _cache_problems(cert, name, joins.get(name), flows, c_low, c_high, capacity[name])
        elif role in ("target", "saturated") and not c_low > capacity[name]:
            problems.append(f"{name}: {role}, yet its least inflow {c_low} is not above its capacity "
                            f"{capacity[name]}")
        elif role == "keeps up" and not c_high < capacity[name]:
            problems.append(f"{name}: keeps up, yet its most inflow {c_high} is not below its capacity "
                            f"{capacity[name]}")
    return problems


def _cache_problems(cert: RateGrowthCertificate, name: str, branches: list[tuple[str, str]] | None, flows: Flows,
                    c_low: Fraction, c_high: Fraction, capacity: Fraction) -> list[str]:
    """Why the target `name` is not shown to be a join whose cache grows (docs/verifier.md, "Growth proven by
    rates", joins): it waits for every branch, its queue is strictly on one side of its capacity (no tie), the
    certificate states exactly its branches with figures the derived ones or weaker, and with them some branch
    delivers at least strictly more than another at most."""
    if branches is None:
        return [f"{name}: role 'cache grows', but it is not a join waiting for every branch"]
    if not (c_high < capacity or c_low > capacity):
        return [f"{name}: its queue's inflow {c_low}..{c_high} is not strictly on one side of its capacity {capacity}"]
    stated = {(b.sender, b.stream): (fraction_of(b.rate_low), fraction_of(b.rate_high))
              for b in cert.bolts[name].branches}
    if sorted(stated) != branches or len(stated) != len(cert.bolts[name].branches):
        return [f"{name}: the certificate states the branches {sorted(stated)}, the join has {branches}"]
    problems: list[str] = []
    lows: list[Fraction] = []
    highs: list[Fraction] = []
    for key in branches:
        low, high = stated[key]
        derived = flows.get(key, (Fraction(0), Fraction(0)))
        if low is None or high is None:
            problems.append(f"{name}: branch {key[0]}/{key[1]}: a figure is not a fraction p/q")
            continue
        if low > derived[0]:
            problems.append(f"{name}: branch {key[0]}/{key[1]}: rate_low {low} is above the derived {derived[0]}")
        if high < derived[1]:
            problems.append(f"{name}: branch {key[0]}/{key[1]}: rate_high {high} is below the derived {derived[1]}")
        lows.append(low)
        highs.append(high)
    if not problems and not max(lows) > min(highs):
        problems.append(f"{name}: no branch delivers at least strictly more ({max(lows)}) than another at most "
                        f"({min(highs)}): its cache is not shown to grow")
    return problems

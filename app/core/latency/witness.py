"""A certified run in which a tuple waits longer than the message timeout (docs/latency.md, "Against the timeout").

For a bolt the rate check does not prove bounded, the simulation of docs/simulation.md builds a lasso in
which its queue grows (`build_lasso`, the verifier's builder). Repeating the loop, the queue gains Δ > 0 per
pass, so the tuples arriving in later passes wait longer and longer; this module finds a pass and a loop
position at which the last tuple arriving waits longer than the timeout.
`app/core/tcn/check/latency_witness.check_witness` confirms it without any of this code.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from app.core.formats.trace import Trace, expanded_trace
from app.core.tcn.network import build_network, cone_ids, cone_of_influence
from app.core.tcn.simulate import build_lasso
from app.core.topology import Topology

# positions × (bolts + subscriptions) simulated by one witness search per bolt tried: the published configurations
# and models/ need at most ~3,000; a budget of work, not of time, keeps answers the same under any load
WITNESS_CELLS = 100_000
MIN_POSITIONS = 64  # a search the budget allows fewer positions than this is not started
MAX_PASSES = 10**12  # passes of the loop tried before giving up
WITNESS_FORMAT = "stormbound-latency-witness/1"  # `check --witness-out`: {timeout, witnesses: [{..., trace}]}


@dataclass(frozen=True)
class LatencyWitness:
    """A lasso and, in its loop repeated `loop_pass` times, a tuple of `bolt` that waits `wait` > timeout."""

    bolt: str  # name
    trace: Trace
    loop_pass: int  # 1 = the loop as the trace has it
    position: int  # the loop position (loop_start..k) at which the tuple arrives
    tuple_number: int  # its number in the bolt's FIFO order (initial tuples first)
    arrived: Fraction  # its arrival time
    taken_pass: int
    taken_position: int
    taken: Fraction  # the time of the take that takes it
    wait: Fraction
    root: str | None = None  # the spout whose tree the tuple belongs to (None: not attributed)
    # from that spout's emit to the tuple: (component name, unrolled position of its emit) per hop; an unrolled
    # position counts on through the loop: loop position i of pass r is i + (r − 1)·(k − loop_start + 1)
    chain: tuple[tuple[str, int], ...] = ()
    # at a join whose cache grows (docs/model.md section 11): the branch (source name, stream) whose part waits in
    # the cache; the tuple is then that branch's part number `tuple_number` (its message's number past the join's
    # initial queue), `arrived` its send, `taken` its message's completion (its last part's arrival)
    branch: tuple[str, str] | None = None

    @property
    def tree_pending(self) -> Fraction | None:
        """From the emit of the chain's spout to the take (its tree is pending that long at least, every window on
        the chain holding it meanwhile); None without a chain."""
        if not self.chain:
            return None
        trace, u = self.trace, self.chain[0][1]
        span = trace.k - trace.loop_start + 1
        i, extra = (u, 0) if u <= trace.k else (trace.loop_start + (u - trace.loop_start) % span,
                                                (u - trace.loop_start) // span)
        return self.taken - (trace.positions[i].exact_time + extra * trace.loop_duration())

    def to_json(self) -> dict[str, Any]:
        tree = self.tree_pending
        return {"bolt": self.bolt, "loop_pass": self.loop_pass, "position": self.position,
                "tuple": self.tuple_number, "arrived": str(self.arrived), "taken_pass": self.taken_pass,
                "taken_position": self.taken_position, "taken": str(self.taken), "wait": str(self.wait),
                "wait_s": float(self.wait), "root": self.root, "chain": [list(hop) for hop in self.chain],
                **({"tree_pending": str(tree), "tree_pending_s": float(tree)} if tree is not None else {}),
                **({"branch": list(self.branch)} if self.branch is not None else {})}


class _Counts:
    """Cumulative arrivals and takes of one bolt along a lasso repeated any number of times."""

    def __init__(self, trace: Trace, bolt: str):
        self.trace = trace
        self.l, self.k = trace.loop_start, trace.k
        steps = [p.bolts[bolt] for p in trace.positions[:self.k + 1]]
        self.times = [p.exact_time for p in trace.positions[:self.k + 1]]
        self.duration = trace.loop_duration()
        self.arrivals = [s.arrivals for s in steps]
        self.arrived: list[int] = []
        self.taken: list[int] = []
        total, took = steps[0].queue, 0
        for s in steps:
            total += s.arrivals
            took += s.batch if s.take else 0
            self.arrived.append(total)
            self.taken.append(took)
        before = self.l - 1
        self.arrived_pre = self.arrived[before] if before >= 0 else steps[0].queue
        self.taken_pre = self.taken[before] if before >= 0 else 0
        self.arrived_loop = self.arrived[self.k] - self.arrived_pre
        self.taken_loop = self.taken[self.k] - self.taken_pre

    def at(self, u: int) -> tuple[int, int]:
        """(position index, passes beyond it) of unrolled position u."""
        if u <= self.k:
            return u, 0
        span = self.k - self.l + 1
        return self.l + (u - self.l) % span, (u - self.l) // span

    def arrived_by(self, u: int) -> int:
        """Tuples arrived by unrolled position u (its arrivals included; the initial queue first)."""
        i, extra = self.at(u)
        return self.arrived[i] + extra * self.arrived_loop

    def taken_by(self, u: int) -> int:
        i, extra = self.at(u)
        return self.taken[i] + extra * self.taken_loop

    def first_arrival(self, n: int) -> int | None:
        """The unrolled position at which tuple n arrives (None: an initial tuple, or none in the loop)."""
        if n <= self.arrived[0] - self.arrivals[0]:
            return None
        return _first_reaching(self.arrived, self.arrived_loop, self.l, n)

    def number(self, loop_pass: int, i: int) -> int:
        """The FIFO number of the last tuple arriving at loop position i of pass `loop_pass` (1, 2, ...)."""
        return self.arrived[i] + (loop_pass - 1) * self.arrived_loop

    def take_of(self, n: int) -> tuple[int, int] | None:
        """(pass, loop position) of the first take whose cumulative count reaches n (None: none in the loop)."""
        if self.taken_loop <= 0:
            return None
        extra = max(0, -(-(n - self.taken[self.k]) // self.taken_loop))  # passes beyond the first
        local = n - extra * self.taken_loop
        x = bisect_left(self.taken, local, lo=self.l, hi=self.k + 1)
        return (extra + 1, x) if x <= self.k else None

    def time(self, loop_pass: int, i: int) -> Fraction:
        return self.times[i] + (loop_pass - 1) * self.duration

    def worst(self, loop_pass: int) -> tuple[Fraction, int, int, tuple[int, int]] | None:
        """The longest wait among the last tuples arriving at the loop's positions in this pass."""
        best: tuple[Fraction, int, int, tuple[int, int]] | None = None
        for i in range(self.l, self.k + 1):
            if not self.arrivals[i]:
                continue
            n = self.number(loop_pass, i)
            take = self.take_of(n)
            if take is None:
                continue
            wait = self.time(*take) - self.time(loop_pass, i)
            if best is None or wait > best[0]:
                best = (wait, i, n, take)
        return best


def _first_pass_over(worst: Callable[[int], tuple[Any, ...] | None], timeout: Fraction) -> int | None:
    """The first pass r (by doubling, then bisection) whose `worst(r)` wait (its first figure) is longer than
    `timeout` (None: none within MAX_PASSES; the waits grow with the passes)."""
    def over(r: int) -> bool:
        got = worst(r)
        return got is not None and got[0] > timeout

    high = 1
    while not over(high):
        high *= 2
        if high > MAX_PASSES:
            return None
    low = high // 2 + 1 if high > 1 else 1
    while low < high:
        mid = (low + high) // 2
        if over(mid):
            high = mid
        else:
            low = mid + 1
    return high


def witness_from_lasso(trace: Trace, bolt: str, timeout: Fraction) -> LatencyWitness | None:
    """The first pass (by doubling, then bisection) in which a tuple of `bolt` waits longer than `timeout`."""
    counts = _Counts(trace, bolt)
    if counts.arrived_loop <= counts.taken_loop:
        return None
    high = _first_pass_over(counts.worst, timeout)
    got = None if high is None else counts.worst(high)
    if high is None or got is None:
        return None
    wait, i, n, (taken_pass, x) = got
    return LatencyWitness(bolt, trace, high, i, n, counts.time(high, i), taken_pass, x,
                          counts.time(taken_pass, x), wait)


def cache_witness(trace: Trace, join: str, timeout: Fraction) -> LatencyWitness | None:
    """At a join that waits for every branch (docs/model.md section 11) whose cache grows in the lasso: the first pass
    in which a part of the fastest-growing branch waits in the cache longer than `timeout` before its message
    completes (the n-th part of a branch is the n-th message's; the caches are empty at position 0). None when no
    cache grows, or when the join completes no message in the loop (a part would wait for ever: not claimed here)."""
    counts = _Counts(trace, join)
    q0 = trace.positions[0].bolts[join].queue
    if counts.arrived_loop <= 0:
        return None
    branches = dict.fromkeys(_emitters(trace, trace.topology).get(join, []))
    grown = [(s.loop, b, s) for b in branches if (s := _Sent(trace, *b)).loop > counts.arrived_loop]
    if not grown:
        return None
    _, branch, sent = max(grown, key=lambda g: (g[0], g[1]))

    def worst(r: int) -> tuple[Fraction, int, int, int] | None:
        """The longest wait in the cache among the last parts sent at the loop's positions in pass r."""
        best = None
        for i in range(trace.loop_start, trace.k + 1):
            if sent.sent[i] == (sent.sent[i - 1] if i > 0 else 0):
                continue  # nothing sent on the branch here
            n = sent.sent[i] + (r - 1) * sent.loop
            done = counts.first_arrival(q0 + n)
            if done is None:
                continue
            at, extra = counts.at(done)
            wait = counts.time(extra + 1, at) - counts.time(r, i)
            if best is None or wait > best[0]:
                best = (wait, i, n, done)
        return best

    high = _first_pass_over(worst, timeout)
    got = None if high is None else worst(high)
    if high is None or got is None:
        return None
    wait, i, n, done = got
    at, extra = counts.at(done)
    return LatencyWitness(join, trace, high, i, n, counts.time(high, i), extra + 1, at, counts.time(extra + 1, at),
                          wait, branch=branch)


def _emitters(trace: Trace, topology: dict[str, Any]) -> dict[str, list[tuple[str, str]]]:
    """Per component name: the (source name, stream) pairs it receives."""
    names = {c["id"]: c["name"] for c in [*topology.get("spouts", []), *topology.get("bolts", [])]}
    out: dict[str, list[tuple[str, str]]] = {}
    for sub in topology.get("subscriptions", []):
        if sub["source"] in names and sub["target"] in names:
            out.setdefault(names[sub["target"]], []).append((names[sub["source"]], sub.get("stream") or "default"))
    return out


class _Sent:
    """Cumulative tuples one component sends on one stream along a lasso repeated any number of times: a join's
    branch, whose n-th part is its n-th message's (docs/model.md section 11)."""

    def __init__(self, trace: Trace, source: str, stream: str):
        self.l, self.k = trace.loop_start, trace.k
        self.sent: list[int] = []
        total = 0
        for p in trace.positions[:self.k + 1]:
            row = p.spouts[source] if source in p.spouts else p.bolts[source]
            total += row.stream_emitted(stream)
            self.sent.append(total)
        self.loop = self.sent[self.k] - (self.sent[self.l - 1] if self.l > 0 else 0)

    def first(self, n: int) -> int | None:
        """The unrolled position at which its n-th tuple is sent (None: never)."""
        return _first_reaching(self.sent, self.loop, self.l, n)


def _first_reaching(cumulative: list[int], per_loop: int, start: int, n: int) -> int | None:
    """The first unrolled position at which a count along a lasso reaches n (None: never): `cumulative` over
    positions 0..k, growing by `per_loop` each further pass of the loop start..k."""
    k = len(cumulative) - 1
    if n <= cumulative[k]:
        return bisect_left(cumulative, n)
    if per_loop <= 0:
        return None
    extra = -(-(n - cumulative[k]) // per_loop)
    x = bisect_left(cumulative, n - extra * per_loop, lo=start, hi=k + 1)
    return x + extra * (k - start + 1)


def attribute(trace: Trace, witness: LatencyWitness, want: str | None = None, limit: int = 256) -> LatencyWitness:
    """The witness with the spout whose tree its tuple belongs to (`want`, or any), and the chain of emits that
    shows it: back from the tuple's arrival, a source that emits to the bolt at that position (the run orders the
    tuples arriving at one position as it likes, so the tuple may be that source's), and for a bolt source the last
    tuple of the batch whose emit sent it (the emit anchors its output to every tuple of the batch), the first for a
    windowed bolt (the oldest its window held: its hold shows in the tree's age); at a join, the message's part on
    one of its branches, sent where that branch's count reaches the message's number; until a
    spout's emit. Depth first over the sources, `limit` steps in all; unchanged when no walk reaches a spout
    (initial tuples belong to no tree)."""
    sources = _emitters(trace, trace.topology)
    windowed = {b["name"] for b in trace.topology.get("bolts", []) if b.get("window")}
    joins = {b["name"] for b in trace.topology.get("bolts", []) if (b.get("join") or {}).get("kind") == "all"}
    spouts = set(trace.positions[0].spouts)
    counts: dict[str, _Counts] = {}
    sent: dict[tuple[str, str], _Sent] = {}
    span = trace.k - trace.loop_start + 1
    steps = 0

    def spent() -> bool:
        nonlocal steps
        steps += 1
        return steps > limit

    def via(src: str, u: int) -> list[tuple[str, int]] | None:
        """The chain to a tuple `src` sends at unrolled position u (None: none found)."""
        if src in spouts:
            return [(src, u)] if want is None or src == want else None
        c = counts.setdefault(src, _Counts(trace, src))
        take = u - 1  # the take that began the phase this emit ends: the last one before it
        while take >= max(0, u - 2 * (trace.k + 1)) and not trace.positions[c.at(take)[0]].bolts[src].take:
            take -= 1
        if take < 0 or not trace.positions[c.at(take)[0]].bolts[src].take:
            return None
        # a window's emit is anchored on every tuple it holds: the batch's first (oldest) one shows its hold
        oldest = (c.taken_by(take - 1) if take > 0 else 0) + 1 if src in windowed else c.taken_by(take)
        if src in joins:
            chain = into_join(src, oldest)
        else:
            arrived = c.first_arrival(oldest)
            chain = None if arrived is None else back(src, arrived)
        return None if chain is None else [*chain, (src, u)]

    def into_join(j: str, n: int) -> list[tuple[str, int]] | None:
        """The chain to the n-th message (FIFO number) of join j: to its part on one of its branches."""
        if spent():
            return None
        m = n - trace.positions[0].bolts[j].queue  # (initial complete messages belong to no tree)
        for src, st in sorted(dict.fromkeys(sources.get(j, [])), key=lambda x: (x[0] not in spouts, x)):
            at = sent.setdefault((src, st), _Sent(trace, src, st)).first(m) if m > 0 else None
            chain = None if at is None else via(src, at)
            if chain is not None:
                return chain
        return None

    def back(bolt: str, u: int) -> list[tuple[str, int]] | None:
        """The chain from a spout's emit to the arrival at `bolt` (no join) at unrolled position u (None: none)."""
        if spent():
            return None
        pos = trace.positions[counts.setdefault(bolt, _Counts(trace, bolt)).at(u)[0]]
        live = {src for src, st in sources.get(bolt, [])
                if src in pos.spouts and pos.spouts[src].stream_emitted(st) > 0
                or src in pos.bolts and pos.bolts[src].stream_emitted(st) > 0}
        for src in sorted(live, key=lambda x: (x not in pos.spouts, x)):
            chain = via(src, u)
            if chain is not None:
                return chain
        return None

    u = witness.position + (witness.loop_pass - 1) * span
    if witness.branch is not None:  # a part in a join's cache: the chain to its send on that branch
        found = via(witness.branch[0], u)
    else:
        found = into_join(witness.bolt, witness.tuple_number) if witness.bolt in joins else back(witness.bolt, u)
    if found is None:
        return witness
    return replace(witness, root=found[0][0], chain=tuple(found))


MAX_ROOT_TRIES = 2000  # tuples of one lasso followed back to their spout when looking for other spouts' trees


def by_root(trace: Trace, witness: LatencyWitness, timeout: Fraction) -> list[LatencyWitness]:
    """The witness attributed, then (when several spouts reach its bolt) one more per other spout whose tree some
    tuple waiting longer than `timeout` in the same lasso belongs to: the last tuples of the loop positions of the
    witness's pass and the next two, followed back to their spouts."""
    first = attribute(trace, witness)
    out = [first]
    spouts = {c["name"] for c in trace.topology.get("spouts", [])}
    reach, todo = set(), [witness.bolt]  # the spouts whose trees reach the bolt (in the lasso's topology)
    sources = _emitters(trace, trace.topology)
    while todo:
        for src, _ in sources.get(todo.pop(), []):
            if src not in reach:
                reach.add(src)
                todo.append(src)
    wanted = sorted((reach & spouts) - {first.root})
    counts = _Counts(trace, witness.bolt)
    tries = 0
    for r in range(witness.loop_pass, witness.loop_pass + 3):
        for i in range(counts.l, counts.k + 1):
            if not wanted or tries >= MAX_ROOT_TRIES:
                return out
            if not counts.arrivals[i]:
                continue
            n = counts.number(r, i)
            take = counts.take_of(n)
            if take is None or counts.time(*take) - counts.time(r, i) <= timeout:
                continue
            tries += 1
            late = LatencyWitness(witness.bolt, trace, r, i, n, counts.time(r, i), take[0], take[1],
                                  counts.time(*take), counts.time(*take) - counts.time(r, i))
            for root in list(wanted):
                got = attribute(trace, late, want=root)
                if got.root == root:
                    wanted.remove(root)
                    out.append(got)
    return out


def timeout_witnesses(topo: Topology, bolts: list[str], timeout: Fraction, cells: int = WITNESS_CELLS
                      ) -> dict[str, list[LatencyWitness]]:
    """Per bolt name of `bolts` (most promising first) the witnesses of a lasso in which it grows, repeated until
    a tuple waits longer than `timeout`, one per spout whose tree such a tuple belongs to (`by_root`); bolts
    without one are left out (no lasso within the budget, or only lassos with failures: a loss breaks the FIFO
    count). One network for all of them and one budget in all: each lasso built is tried for every bolt still
    without a witness (a bolt that grows often makes the bolts below it grow in the same lasso), and a bolt's
    own lasso is searched for only while budget is left. The budget counts work (`cells`: positions
    simulated over every schedule tried and steps of choosing the schedules, times the bolts and
    subscriptions each carries), not time,
    so a document gets the same answer on a quiet and on a loaded machine. Not certified here: the caller
    has `app/core/tcn/check/latency_witness.check_witness` confirm each."""
    found: dict[str, list[LatencyWitness]] = {}
    # a windowed bolt's own tuples wait in its windows, which is no FIFO wait before a take (docs/model.md section
    # 10): none is measured there; a window above the bolt is a rule of the lasso like any other (its certifier's)
    windowed = {b.name for b in topo.windowed_bolts()}
    bolts = [n for n in bolts if n not in windowed]
    joins = {b.name for b in topo.bolts if b.waits_for_all}
    checked = [topo.bolt_by_name(n).id for n in bolts]
    keep = cone_ids(topo, checked)
    if not bolts:
        return found
    # a position costs in proportion to the cone's bolts and subscriptions (one count per declared stream), and
    # so does each step of choosing the schedules (one fluid estimate per period tried: `cancelled` is asked
    # once per step, and charged for it)
    width = max(1, sum(b.id in keep for b in topo.bolts))
    weight = width + sum(s.source in keep and s.target in keep for s in topo.subscriptions)
    if cells < MIN_POSITIONS * weight:
        return found  # too wide for the budget: not even the cone's document or the network is built
    cone = cone_of_influence(topo, checked, keep)
    net = build_network(cone, bolts, reduce=False)  # the cone is the network's topology already
    left = cells

    def spent() -> bool:
        nonlocal left
        left -= weight
        return left < 0

    for bolt in bolts:
        if bolt in found:
            continue
        if left < MIN_POSITIONS * weight:  # too little for a lasso of this width: none is looked for
            break
        lasso = build_lasso(net, bolt, total_cells=left // weight * width, cancelled=spent)
        left -= lasso.positions * weight
        trace = None if lasso.trace is None else expanded_trace(lasso.trace)  # its positions are read
        if trace is None or any(s.fail or s.lost or s.phase == "failed" for p in trace.positions
                                for s in p.bolts.values()):
            continue
        for other in bolts:
            if other not in found and other in trace.positions[0].bolts:
                got = witness_from_lasso(trace, other, timeout)
                if got is not None:
                    found[other] = by_root(trace, got, timeout)
                elif other in joins and (got := cache_witness(trace, other, timeout)) is not None:
                    found[other] = [attribute(trace, got)]  # (the part's tree; other spouts' are not looked for)
    return found


def timeout_witness(topo: Topology, bolt: str, timeout: Fraction, cells: int = WITNESS_CELLS
                    ) -> LatencyWitness | None:
    """The first of `timeout_witnesses` for one bolt (a name)."""
    return next(iter(timeout_witnesses(topo, [bolt], timeout, cells).get(bolt, [])), None)

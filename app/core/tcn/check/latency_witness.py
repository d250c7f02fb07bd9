"""The independent checker of a latency witness (docs/latency.md, "Against the timeout").

Shares no code with the builder (app/core/latency/witness.py) nor with the rate check: it reads the lasso
as JSON-like data, has the product's certifier confirm it is a legal infinite run, then recomputes from the
positions alone, in FIFO order, when the claimed tuple arrives and when it is taken, with the loop repeated
the claimed number of times, and accepts only a wait longer than the timeout. Given the chain of emits that
attributes the tuple to a spout's tree, it recomputes every hop; given the witness's own stated figures, it
refuses any that disagrees with what it recomputed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from app.core.numbers import exact
from app.core.tcn.check.certify import certify

STORM_DEFAULT_TIMEOUT = 30  # topology.message.timeout.secs when a topology leaves it unset (Storm's default)


@dataclass
class WitnessCheck:
    ok: bool
    problems: list[str] = field(default_factory=list)
    wait: Fraction | None = None
    figures: dict[str, Any] = field(default_factory=dict)  # what was recomputed (tuple, arrived, taken, ...)
    root: str | None = None  # the spout whose tree the tuple belongs to, when a chain shows it


class _Lasso:
    """Positions 0..k, the loop loop_start..k repeated; an unrolled position counts on through the passes."""

    def __init__(self, data: Any):
        self.k, self.start = int(data["k"]), int(data["loop_start"])
        self.positions = data["positions"]
        self.span = self.k - self.start + 1

    def index(self, u: int) -> tuple[int, int]:
        return (u, 0) if u <= self.k else (self.start + (u - self.start) % self.span, (u - self.start) // self.span)

    def row(self, name: str, u: int) -> Any:
        p = self.positions[self.index(u)[0]]
        return p["bolts"].get(name, p["spouts"].get(name))

    def cumulative(self, name: str, key: str, u: int) -> int:
        """Arrivals (initial queue first) or tuples taken by bolt `name` up to and including unrolled position u."""
        def count(j: int) -> int:
            r = self.positions[j]["bolts"][name]
            return int(r["arrivals"]) if key == "arrivals" else int(r["batch"]) if r["take"] else 0

        i, passes = self.index(u)
        total = sum(count(j) for j in range(i + 1)) + passes * sum(count(j) for j in range(self.start, self.k + 1))
        return total + (int(self.positions[0]["bolts"][name]["queue"]) if key == "arrivals" else 0)


def _parts(lasso: _Lasso, source: str, streams: set[str], u: int) -> list[tuple[int, int]]:
    """A join's message numbers (1, 2, ...) whose part `source` sends on one of `streams` (each its own branch) at
    unrolled position u: the n-th part of a branch is the n-th message's (docs/model.md section 11; the caches are
    empty at position 0)."""
    i, passes = lasso.index(u)

    def sent(st: str, upto: int) -> int:
        return sum(_sent(lasso.row(source, j), st) for j in range(upto + 1))

    out = []
    for st in sorted(streams):
        loop = sum(_sent(lasso.row(source, j), st) for j in range(lasso.start, lasso.k + 1))
        last = sent(st, i) + passes * loop
        here = _sent(lasso.row(source, i), st)
        if here:
            out.append((last - here + 1, last))
    return out


def _sent(row: Any, stream: str) -> int:
    by = row.get("emitted_by_stream")
    if by is None:
        return int(row.get("emitted", 0)) if stream == "default" else 0
    return int(by.get(stream, 0))


def check_root(data: Any, bolt: str, arrival: int, chain: Sequence[Sequence[Any]], part: str | None = None
               ) -> list[str]:
    """Problems with the claim that the tuple arriving at `bolt` at unrolled position `arrival` (the last one there)
    belongs to the tree of the chain's first component, a spout: each hop (component, unrolled emit position) emits
    at least one tuple on a stream the next subscribes to; for each bolt hop, the phase its emit ends was taken at
    its last take before the emit and that batch holds a tuple that arrived at the previous hop's emit (the run
    orders tuples arriving at one position as it likes, so the one followed may be any of them). Into a join
    (docs/model.md section 11) the previous hop sends a part, whose message is the one of the same number: the
    join's batch (or, for `bolt` a join, the tuple itself) must be one of the messages whose parts it sent there.
    `part`: the tuple is instead a part the join's branch from this source sends at `arrival` (a part in its cache),
    so the chain's last emit is that send."""
    lasso = _Lasso(data)
    topo = data["topology"]
    names = {c["id"]: c["name"] for c in [*topo["spouts"], *topo["bolts"]]}
    joins = {c["name"] for c in topo["bolts"] if (c.get("join") or {}).get("kind") == "all"}
    spouts = {c["name"] for c in topo["spouts"]}
    streams: dict[tuple[str, str], set[str]] = {}
    for sub in topo["subscriptions"]:
        streams.setdefault((names[sub["source"]], names[sub["target"]]), set()).add(sub.get("stream") or "default")
    if any(r.get("fail") or r.get("lost") or r.get("phase") == "failed" for p in lasso.positions[:lasso.k + 1]
           for r in p["bolts"].values()):
        return ["the lasso loses tuples: the FIFO count does not apply"]
    try:
        hops = [(str(h[0]), int(h[1])) for h in chain]
    except (TypeError, ValueError, IndexError):
        return ["the chain is not a list of [component, position] pairs"]
    if not hops or hops[0][0] not in spouts:
        return ["the chain does not start at a spout"]
    if part is not None:  # a part in the join's cache: the last hop is its send
        if hops[-1] != (part, arrival):
            return [f"the chain's last emit is {list(hops[-1])}, not the part's send by {part} at {arrival}"]
    elif bolt in joins:  # the last hop sends a part of the tuple's message, at or before its arrival
        number = lasso.cumulative(bolt, "arrivals", arrival) - int(lasso.positions[0]["bolts"][bolt]["queue"])
        name, at = hops[-1]
        if at > arrival or not any(lo <= number <= hi for lo, hi in _parts(lasso, name, streams.get((name, bolt),
                                                                                                       set()), at)):
            return [f"the chain's last emit at {at} sends no part of message {number} of the join {bolt}"]
    elif hops[-1][1] != arrival:
        return [f"the chain's last emit is at {hops[-1][1]}, not at the tuple's arrival {arrival}"]
    bolts = set(lasso.positions[0]["bolts"])
    if any(name not in bolts for name, _ in hops[1:]):
        return ["a hop after the first is not a bolt of the lasso"]
    targets = [name for name, _ in hops[1:]] + [bolt]
    for (name, at), target in zip(hops, targets, strict=True):
        if at < 0 or not any(_sent(lasso.row(name, at), st) > 0 for st in streams.get((name, target), ())):
            return [f"{name} sends nothing to {target} at position {at}"]
    for (prev, came), (name, at) in zip(hops, hops[1:], strict=False):
        # a phase that ends began at most k + 1 positions earlier (a whole loop without a take or an emit of the
        # bolt would repeat for ever), so the scan back is bounded whatever the claim
        take = at - 1
        while take >= max(came, at - lasso.k - 1) and not lasso.row(name, take)["take"]:
            take -= 1
        if take < max(came, at - lasso.k - 1) or any(lasso.row(name, x)["emit"] for x in range(take + 1, at)):
            return [f"{name}'s emit at {at} does not end a phase taken after {prev}'s emit at {came}"]
        low, high = lasso.cumulative(name, "taken", take - 1) + 1, lasso.cumulative(name, "taken", take)
        if name in joins:  # the messages (FIFO numbers past the initial queue) whose parts prev sent at came
            q0 = int(lasso.positions[0]["bolts"][name]["queue"])
            ranges = [(q0 + lo, q0 + hi) for lo, hi in _parts(lasso, prev, streams.get((prev, name), set()), came)]
        else:
            ranges = [(lasso.cumulative(name, "arrivals", came - 1) + 1 if came > 0 else int(
                lasso.positions[0]["bolts"][name]["queue"]) + 1, lasso.cumulative(name, "arrivals", came))]
        if all(max(first, low) > min(last, high) for first, last in ranges):
            return [f"the batch {name} takes at {take} holds no tuple arriving at {came}"]
    return []


def _timeout_of(data: Any) -> Fraction:
    storm = data["topology"].get("storm") or {}
    value = storm.get("message_timeout_secs")
    return exact(value) if value is not None else Fraction(STORM_DEFAULT_TIMEOUT)


def check_witness(trace: Any, bolt: str, loop_pass: int, position: int, timeout: Fraction, *,
                  chain: Sequence[Sequence[Any]] | None = None, stated: Mapping[str, Any] | None = None,
                  branch: Sequence[Any] | None = None) -> WitnessCheck:
    """Whether the last tuple of `bolt` arriving at loop `position` in pass `loop_pass` of `trace` waits longer
    than `timeout` before its take, in a run the certifier accepts. `chain`: the emits that attribute it to a spout
    (`check_root`; when they do, the figures add `tree_pending`, from that spout's emit to the take). `stated`: the
    witness's own figures (`tuple`, `arrived`, `taken`, `wait`, `taken_pass`, `taken_position`, `root`,
    `tree_pending`; `timeout` checked against the topology's message timeout): any that disagrees with the
    recomputed one is a problem. `branch` ([source, stream]): the claim is about a part that branch of the join
    `bolt` sends at that position, waiting in its cache until its message completes (`_cache_wait`)."""
    data = trace.model_dump() if hasattr(trace, "model_dump") else trace
    bolts = data.get("topology", {}).get("bolts") if isinstance(data, dict) else None
    windowed = [b.get("name") for b in bolts if isinstance(b, dict) and b.get("window") and b.get("name") == bolt] \
        if isinstance(bolts, list) else []
    if windowed:  # a tuple's wait in a window is not a FIFO wait before a take (docs/model.md section 10); a window
        # above the bolt is a rule of the lasso, which the certifier has
        return WitnessCheck(False, [f"{bolt} is a windowed bolt, whose tuples wait in its windows, not in a FIFO "
                                    "queue before a take: this checker has no window rule for the bolt it counts"])
    joins = [b.get("name") for b in bolts if isinstance(b, dict) and b.get("join")
             and (b.get("join") or {}).get("kind") != "all"] if isinstance(bolts, list) else []
    if joins:  # (Storm's JoinBolt is its window's rule, refused above at the bolt; a join waiting for every branch:
        # its queue of complete messages is FIFO, and `check_root` has its rule, docs/model.md section 11)
        return WitnessCheck(False, [f"the lasso's topology has the join {', '.join(map(str, joins))}, and this checker "
                                    "has no rule for it"])
    cert = certify(trace, checked=[bolt])
    if not cert.ok:
        return WitnessCheck(False, ["the lasso is not a legal run: " + "; ".join(cert.problems[:3])])
    k, start = int(data["k"]), int(data["loop_start"])
    positions = data["positions"]
    if not start <= position <= k or loop_pass < 1:
        return WitnessCheck(False, [f"position {position} of pass {loop_pass} is not in the loop {start}..{k}"])
    if branch is not None:
        got = _cache_wait(data, bolt, branch, position + (loop_pass - 1) * (k - start + 1))
        if isinstance(got, str):
            return WitnessCheck(False, [got])
        return _judged(data, bolt, got, position + (loop_pass - 1) * (k - start + 1), timeout, chain, stated,
                       part=str(branch[0]))
    rows = [p["bolts"].get(bolt) for p in positions[:k + 1]]
    if any(r is None for r in rows):
        return WitnessCheck(False, [f"{bolt} is not in every position"])
    if any(r.get("fail") or r.get("lost") or r.get("phase") == "failed" for r in rows):
        return WitnessCheck(False, ["the lasso loses tuples: the FIFO count does not apply"])
    times = [exact(p["time"]) for p in positions[:k + 2]]
    duration = times[k + 1] - times[start]

    def arrived_up_to(r: int, i: int) -> int:  # tuples arrived by position i of pass r, initial ones included
        before = sum(int(rows[j]["arrivals"]) for j in range(start))
        loop = [int(rows[j]["arrivals"]) for j in range(start, k + 1)]
        return int(rows[0]["queue"]) + before + (r - 1) * sum(loop) + sum(loop[:i - start + 1])

    number = arrived_up_to(loop_pass, position)
    if rows[position]["arrivals"] == 0:
        return WitnessCheck(False, [f"no tuple arrives at position {position}"])
    took = sum(rows[j]["batch"] for j in range(start) if rows[j]["take"])
    per_pass = [rows[j]["batch"] if rows[j]["take"] else 0 for j in range(start, k + 1)]
    if sum(per_pass) == 0:
        return WitnessCheck(False, [f"{bolt} takes nothing in the loop"])
    if took >= number:
        return WitnessCheck(False, ["the tuple is taken before the loop"])
    passes = max(0, (number - took - 1) // sum(per_pass))  # whole passes whose takes all come before its take
    took += passes * sum(per_pass)
    taken_at: Fraction | None = None
    taken_position = -1
    for j, batch in enumerate(per_pass):
        took += batch
        if took >= number:
            taken_at, taken_position = times[start + j] + passes * duration, start + j
            break
    if taken_at is None:  # (not reached: the passes were counted so that this one takes it)
        return WitnessCheck(False, ["the tuple is never taken"])
    arrived_at = times[position] + (loop_pass - 1) * duration
    figures = {"tuple": number, "arrived": arrived_at, "taken": taken_at, "wait": taken_at - arrived_at,
               "taken_pass": passes + 1, "taken_position": taken_position}
    return _judged(data, bolt, figures, position + (loop_pass - 1) * (k - start + 1), timeout, chain, stated)


def _judged(data: Any, bolt: str, figures: dict[str, Any], arrival: int, timeout: Fraction,
            chain: Sequence[Sequence[Any]] | None, stated: Mapping[str, Any] | None, part: str | None = None
            ) -> WitnessCheck:
    """The verdict on recomputed figures: a wait longer than the timeout, the chain's hops (`check_root`) and the
    tree's pending time from its spout's emit to the take, the stated figures the recomputed ones."""
    wait, taken_at = figures["wait"], figures["taken"]
    problems: list[str] = []
    if wait <= timeout:
        problems.append(f"the tuple waits {wait} s, not more than the timeout {timeout} s")
    root = None
    if chain is not None:
        wrong = check_root(data, bolt, arrival, chain, part)
        problems += wrong
        root = None if wrong or not chain else str(chain[0][0])
        if root is not None:  # the tree is pending from its spout's emit until this take at least (its hold in
            # every window on the chain included: docs/latency.md, "Windowed bolts")
            lasso = _Lasso(data)
            first, extra = lasso.index(int(chain[0][1]))
            times = [exact(p["time"]) for p in lasso.positions[:lasso.k + 2]]
            figures["tree_pending"] = taken_at - (times[first] + extra * (times[lasso.k + 1] - times[lasso.start]))
    if stated is not None:
        problems += _disagreements(stated, {**figures, "root": root}, timeout, _timeout_of(data))
    return WitnessCheck(not problems, problems, wait, figures, root)


def _cache_wait(data: Any, join: str, branch: Sequence[Any], u: int) -> dict[str, Any] | str:
    """The figures of the last part the join's `branch` ([source, stream]) sends at unrolled position u: its number
    n on the branch (the n-th part of a branch is the n-th message's, the caches empty at position 0: docs/model.md
    section 11), its send, and its wait in the cache until the join's n-th message past its initial queue arrives
    (its last part's arrival); a problem's text instead when it cannot be counted."""
    topo = data["topology"]
    names = {c["id"]: c["name"] for c in [*topo["spouts"], *topo["bolts"]]}
    if not any(c["name"] == join and (c.get("join") or {}).get("kind") == "all" for c in topo["bolts"]):
        return f"{join} is not a join that waits for every branch: it has no cache"
    try:
        source, stream = str(branch[0]), str(branch[1])
    except (TypeError, IndexError):
        return "the branch is not a [source, stream] pair"
    if not any(names.get(s["source"]) == source and names.get(s["target"]) == join
               and (s.get("stream") or "default") == stream for s in topo["subscriptions"]):
        return f"{source} on stream {stream} is not a branch of the join {join}"
    lasso = _Lasso(data)
    times = [exact(p["time"]) for p in lasso.positions[:lasso.k + 2]]
    duration = times[lasso.k + 1] - times[lasso.start]

    def time(x: int) -> Fraction:
        i, passes = lasso.index(x)
        return times[i] + passes * duration

    if _sent(lasso.row(source, u), stream) == 0:
        return f"{source} sends no part on stream {stream} at position {u}"
    sent_pre = [_sent(lasso.row(source, j), stream) for j in range(lasso.k + 1)]
    number = sum(sent_pre[:lasso.index(u)[0] + 1]) + lasso.index(u)[1] * sum(sent_pre[lasso.start:])
    done = [int(lasso.positions[j]["bolts"][join]["arrivals"]) for j in range(lasso.k + 1)]
    per_loop = sum(done[lasso.start:])
    if sum(done) < number and per_loop == 0:
        return f"the join {join} completes no message in the loop: part {number} waits for ever (not claimed)"
    # whole passes beyond the first before the pass in which the n-th message completes
    passes = 0 if sum(done) >= number else (number - sum(done) - 1) // per_loop + 1
    total, x = passes * per_loop, None
    for j in range(lasso.k + 1):  # (the positions before the loop count once, in every pass)
        total += done[j]
        if total >= number and (j >= lasso.start or passes == 0):
            x = j + passes * lasso.span
            break
    if x is None:  # (not reached: the passes were counted so that this one completes it)
        return f"message {number} of the join {join} never completes"
    i, extra = lasso.index(x)
    return {"tuple": number, "arrived": time(u), "taken": time(x), "wait": time(x) - time(u),
            "taken_pass": extra + 1, "taken_position": i}


def _disagreements(stated: Mapping[str, Any], recomputed: Mapping[str, Any], timeout: Fraction,
                   topology_timeout: Fraction) -> list[str]:
    """The stated figures that are not the recomputed ones (a stated figure left out is not compared)."""
    out = []
    if timeout != topology_timeout:
        out.append(f"the stated timeout {timeout} s is not the topology's message timeout {topology_timeout} s")
    for key, value in recomputed.items():
        if key not in stated or (key == "root" and stated[key] is None):
            continue
        try:
            same = exact(stated[key]) == value if isinstance(value, Fraction) else str(stated[key]) == str(value)
        except (TypeError, ValueError, ZeroDivisionError):
            same = False
        if not same:
            out.append(f"the stated {key} {stated[key]} is not the recomputed {value}")
    if "wait_s" in stated and "wait" in recomputed:
        try:
            wait = float(recomputed["wait"])
            close = abs(float(stated["wait_s"]) - wait) <= 1e-6 * max(1.0, wait)
        except (TypeError, ValueError):
            close = False
        if not close:
            out.append(f"the stated wait_s {stated['wait_s']} is not the recomputed {float(recomputed['wait'])}")
    return out

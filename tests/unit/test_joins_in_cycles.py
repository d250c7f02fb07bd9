"""A join inside a cycle in the rate check's every-run bounds (docs/boundedness.md, "Cycles", a join inside a cycle):
the join is read as the sum of its branches, above the largest branch that its every-run curve is, so the cycle's
other bolts get their bounds; against an independent event-by-event simulation of the cycle, whose queues stay below
them. The proofs by rates still refuse a cone with a cycle and a join (docs/verifier.md says which step is missing)."""

from __future__ import annotations

import heapq
from fractions import Fraction
from typing import Any

from app.core.rates import rate_check
from app.core.tcn.rate_growth import prove_growth
from app.core.topology import parse_topology


def cycle(back: float = 0.5, join_alpha: float = 0.01) -> dict[str, Any]:
    """a → u → join → v, v's stream `back` (σ `back`) → u, and a → join: the join waits for a's tuple and u's; a
    emits up to 5 tuples at once (10/s in the long run)."""
    return {"schema_version": 5, "name": "cycle", "settings": {"tolerance": 0, "max_idle_time": 0},
            "spouts": [{"name": "a", "rate": 10, "burst": 5}],
            "bolts": [{"name": "u", "alpha": 0.01, "sigma": 1, "parallelism": 1},
                      {"name": "join", "alpha": join_alpha, "sigma": 1, "parallelism": 1, "join": {"kind": "all"}},
                      {"name": "v", "alpha": 0.01, "sigma": 1, "parallelism": 1, "streams": ["back"],
                       "stream_sigma": {"back": back}}],
            "subscriptions": [{"source": "a", "target": "u"}, {"source": "u", "target": "join"},
                              {"source": "a", "target": "join"}, {"source": "join", "target": "v"},
                              {"source": "v", "target": "u", "stream": "back"}]}


def most_queued(data: dict[str, Any], seconds: int) -> dict[str, int]:
    """An independent simulation: a emits 5 tuples at once every 0.5 s; one executor per bolt, FIFO, α a tuple; the
    join pairs the n-th tuple of each branch and queues the message; v sends `back` on every second tuple (σ ½) or
    on none (σ 0). The most tuples each bolt's queue held (waiting, not in service)."""
    alpha = {b["name"]: Fraction(str(b["alpha"])) for b in data["bolts"]}
    every = {Fraction(1, 2): 2, Fraction(0): 0}[Fraction(str(data["bolts"][2]["stream_sigma"]["back"]))]
    events: list[tuple[Fraction, int, str]] = []
    order = 0

    def at(t: Fraction, what: str) -> None:
        nonlocal order
        order += 1
        heapq.heappush(events, (t, order, what))

    for n in range(2 * seconds):
        for _ in range(5):
            at(Fraction(n, 2), "spout")
    queue = {name: 0 for name in alpha}
    busy = {name: False for name in alpha}
    parts = {"a": 0, "u": 0}
    most = dict(queue)
    done_v = 0

    def arrive(t: Fraction, name: str) -> None:
        queue[name] += 1
        most[name] = max(most[name], queue[name])
        start(t, name)

    def start(t: Fraction, name: str) -> None:
        if not busy[name] and queue[name]:
            queue[name] -= 1
            busy[name] = True
            at(t + alpha[name], f"done:{name}")

    def part(t: Fraction, branch: str) -> None:
        parts[branch] += 1
        if min(parts.values()) > 0:
            parts["a"], parts["u"] = parts["a"] - 1, parts["u"] - 1
            arrive(t, "join")

    while events:
        t, _, what = heapq.heappop(events)
        if what == "spout":
            arrive(t, "u")
            part(t, "a")
            continue
        name = what.split(":")[1]
        busy[name] = False
        if name == "u":
            part(t, "u")
        elif name == "join":
            arrive(t, "v")
        else:
            done_v += 1
            if every and done_v % every == 0:
                arrive(t, "u")
        start(t, name)
    return most


def test_the_bolts_of_a_cycle_through_a_join_get_bounds_that_the_simulation_stays_below() -> None:
    """u receives a's 10 tuples/s and half of v's; with the join read as the sum of its branches u and v are
    bounded (before, every member of a cycle with a join was pinned: no bound); the join's cache grows (u's branch
    carries the feedback too), and it stays `grows`. The simulation's queues stay below the bounds."""
    for back, join_alpha in ((0.5, 0.01), (0.5, 0.2), (0, 0.01)):
        data = cycle(back, join_alpha)
        report = rate_check(parse_topology(data))
        u, v = report.bolts["u"], report.bolts["v"]
        assert u.status == "bounded" and v.status == "bounded", (back, join_alpha)
        assert u.queue_bound is not None and v.queue_bound is not None
        seen = most_queued(data, 60)
        assert seen["u"] <= u.queue_bound and seen["v"] <= v.queue_bound, (seen, u.queue_bound, v.queue_bound)
        if back:
            assert report.bolts["join"].status == "grows"
    assert prove_growth(parse_topology(cycle()), "join") is None  # (docs/verifier.md: the step the rounds lack)

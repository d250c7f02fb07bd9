"""Headroom and Storm's response, checked against figures computed by hand (docs/storm.md, "Headroom")."""

from __future__ import annotations

from fractions import Fraction

import pytest

from app.core.headroom import headroom
from app.core.rates import margins, nominal_margins, rate_check
from app.core.storm.forecast import DEFAULT_RECEIVE_BUFFER, scaled
from app.core.storm.lines import headline, storm_lines
from app.core.topology import parse_topology


def chain():
    """S (10/s) -> A (α 0.1, p 2, σ 3) -> B (α 0.01, p 1, σ 0); τ 0.1, idle 0.01, exact emission."""
    return parse_topology({
        "name": "chain",
        "spouts": [{"name": "S", "rate": 10}],
        "bolts": [{"name": "A", "alpha": 0.1, "sigma": 3, "parallelism": 2},
                  {"name": "B", "alpha": 0.01, "sigma": 0, "parallelism": 1}],
        "subscriptions": [{"source": "S", "target": "A"}, {"source": "A", "target": "B"}],
    })


def overloaded():
    """S1 (4/s) -> X (α 0.25, p 1, σ 2) -> Y (α 0.125, p 1, σ 0) <- S2 (2/s), with Storm settings."""
    return parse_topology({
        "name": "overloaded",
        "spouts": [{"name": "S1", "rate": 4, "executors": 1}, {"name": "S2", "rate": 2}],
        "bolts": [{"name": "X", "alpha": 0.25, "sigma": 2, "parallelism": 1},
                  {"name": "Y", "alpha": 0.125, "sigma": 0, "parallelism": 1}],
        "subscriptions": [{"source": "S1", "target": "X"}, {"source": "X", "target": "Y"},
                          {"source": "S2", "target": "Y"}],
        "storm": {"max_spout_pending": 40, "message_timeout_secs": 20,
                  "config": {"topology.executor.receive.buffer.size": 500}},
    })


def test_chain_by_hand():
    # largest spout rate 10/0.9 = 100/9. A: smallest capacity 2/(0.1·1.1 + 0.01) = 50/3, so A's proof
    # ends at (50/3)/(100/9) = 3/2. B receives 3·100/9 = 100/3 and can take 1/(0.011 + 0.01) = 1000/21:
    # (1000/21)/(100/3) = 10/7 < 3/2, so B limits. Nominal: A takes 20/s of 10f -> grows above 2;
    # B takes 100/s of 30f -> above 10/3. Not overloaded.
    h = headroom(chain())
    assert h.headroom == Fraction(10, 7) and h.headroom_exact
    assert h.limiting_bolts == ["B"]
    assert h.grows_at == Fraction(2) and h.first_to_saturate == ["A"]
    assert not h.overloaded and h.storm is None
    assert headline(h) == ("headroom ×1.43: every bolt is proven bounded while the spouts' rates are multiplied by "
                           "less than 1.43 (B limits it); A saturates first: surely growing above ×2 at nominal timing")


def test_overloaded_by_hand():
    # nominal: X takes 4/s of 4f (grows above 1), Y takes 8/s of 2·4f + 2f = 10f (grows above 4/5)
    # largest: S1 40/9, S2 20/9; X: 1/(0.275 + 0.01) = 200/57 over 40/9 -> 15/19; Y: 1/(0.1375 + 0.01)
    # = 400/59 over 100/9 -> 36/59, the smaller.
    h = headroom(overloaded())
    assert h.headroom == Fraction(36, 59) and h.limiting_bolts == ["Y"]
    assert h.grows_at == Fraction(4, 5) and h.first_to_saturate == ["Y"]
    f = h.storm
    assert f is not None and h.overloaded
    assert f.backpressure and f.backpressure_source == "always"  # no version: Storm 2.x
    assert f.defaults.version == "2.x" and not f.defaults.given and f.acking
    # 6 tuples/s offered, 4/5 of it sustained: 24/5; the backlog grows by 6/5 tuples/s
    assert f.offered_rate == 6 and f.sustainable_rate == Fraction(24, 5) and f.backlog_growth == Fraction(6, 5)
    assert f.sustainable_rates == {"S1": Fraction(16, 5), "S2": Fraction(8, 5)}
    # at the offered rates Y gets 10/s and takes 8: +2/s into 1 × 500 slots -> 250 s
    assert f.receive_buffer == 500 and f.receive_buffer_source == "config"
    assert [(q.bolt, q.growth, q.seconds_to_full) for q in f.queues] == [("Y", 2, 250)]
    # but max.spout.pending 40 per spout task lets at most 40 S1 trees × 2 tuples (X's σ) + 40 S2 trees × 1 = 120
    # tuples reach Y, below its 500: Y's queue never fills and max.spout.pending, not backpressure, throttles
    (y,) = f.queues
    assert y.per_tree == {"S1": (40, 2), "S2": (40, 1)} and y.pending_bound == 120 and y.never_fills
    assert f.throttle == "max.spout.pending"
    assert y.wait_when_full == Fraction(120, 8) and not y.times_out  # 120 tuples at 8/s: 15 s < 20 s
    # Little's law: 40 in flight at 16/5 per s -> 12.5 s (under 20); at 8/5 per s -> 25 s (over 20)
    waits = {p.spout: (p.in_flight, p.wait, p.times_out) for p in f.pending}
    assert waits == {"S1": (40, Fraction(25, 2), False), "S2": (40, Fraction(25), True)}
    text = "\n".join(storm_lines(h))
    assert "throttles the spouts to 4.8 tuples/s of the 6 offered" in text
    assert "grows by 1.2 tuples/s" in text
    assert ("Y's receive queues (1 executor × 500 tuples) never fill: max.spout.pending lets at most 120 tuples "
            "ever reach them (40 S1 trees × 2 + 40 S2 trees × 1 tuples per tree") in text
    assert "max.spout.pending binds first" in text and "with backpressure" not in text
    assert text.startswith("assuming Storm 2.x (no version given")
    assert "S2 keeps 40 tuples in flight at 1.6 tuples/s, so each waits about 25 s" in text
    assert "tuples fail and are replayed" in text
    data = h.to_json()
    assert data["headroom"] == {"exact": "36/59", "value": 36 / 59}
    assert data["storm"]["estimate"] is True and data["exact"] == ["headroom", "grows_at"]


def test_factors_agree_with_the_exact_rate_check():
    """Just below the headroom every bolt is proven bounded, at it not; just above grows_at some bolt grows."""
    for topo in (chain(), overloaded()):
        h = headroom(topo)
        assert h.headroom is not None and h.grows_at is not None
        below = h.headroom * (1 - Fraction(1, 10**9))
        assert all(i < c for i, c in margins(scaled(topo, below)).values())
        assert not all(i < c for i, c in margins(scaled(topo, h.headroom)).values())
        assert all(i <= c for i, c in nominal_margins(scaled(topo, h.grows_at)).values())
        above = h.grows_at * (1 + Fraction(1, 10**9))
        assert any(i > c for i, c in nominal_margins(scaled(topo, above)).values())
        statuses = rate_check(scaled(topo, above)).bolts
        assert any(b.status == "grows" for b in statuses.values())


def test_defaults_and_backpressure_off():
    topo = overloaded()
    topo.storm.config = {"topology.backpressure.enable": False}
    topo.storm.max_spout_pending = None
    topo.storm.message_timeout_secs = None
    h = headroom(topo)
    # Storm 2.x (no version given) ignores topology.backpressure.enable: always on; receive queues of 32768 tuples
    assert h.storm is not None and h.storm.backpressure and h.storm.backpressure_source == "always"
    assert h.storm.receive_buffer == DEFAULT_RECEIVE_BUFFER == 32768 and h.storm.pending == []
    assert h.storm.queues[0].seconds_to_full == Fraction(DEFAULT_RECEIVE_BUFFER, 2)
    lines = storm_lines(h)
    assert "backpressure always on (Storm 2.x, topology.backpressure.enable: False ignored)" in lines[0]
    # Storm 1.2: off by default since 1.1 and here off by the config; 1024 batched slots per executor
    topo.storm.storm_version = "1.2.3"
    h = headroom(topo)
    assert h.storm is not None and not h.storm.backpressure and h.storm.receive_buffer == 1024
    lines = storm_lines(h)
    assert lines[0].startswith("assuming Storm 1.2.3: receive queues of 1024 slots per executor (Storm 1.2's default")
    assert "backpressure is off" in lines[1]
    assert ("Y's receive queues (1 executor × 1024 slots, Storm 1.2's default) fill in at least about 8.53 min"
            in lines[2])
    topo.storm.config = {}
    h = headroom(topo)
    assert h.storm is not None and not h.storm.backpressure and "backpressure off (Storm 1.2's default)" in \
        storm_lines(h)[0]
    topo.storm.storm_version = "1.0.6"  # Storm 1.0 had it on by default
    h = headroom(topo)
    assert h.storm is not None and h.storm.backpressure and h.storm.backpressure_source == "default"


def _loop():
    """S -> A <-> B: A passes on every tuple to B, B half of them back to A."""
    return parse_topology({
        "name": "loop",
        "spouts": [{"name": "S", "rate": 1}],
        "bolts": [{"name": "A", "alpha": 0.1, "sigma": 1, "parallelism": 1},
                  {"name": "B", "alpha": 0.1, "sigma": 0.5, "parallelism": 1}],
        "subscriptions": [{"source": "S", "target": "A"}, {"source": "A", "target": "B"},
                          {"source": "B", "target": "A"}],
    })


def test_a_solved_cycle_has_an_exact_headroom_by_hand():
    """A cycle whose flows the rate check solves exactly is linear below the caps, as a chain is.

    By hand (τ = 0.1, max_idle 0.01 s): the spout emits at most 10/9·f; A receives that and half of B's
    batches, B all of A's: in_A = 10/9 f + in_A / 2, so both receive 20/9 f against a smallest capacity of
    1 / (0.1 · 1.1 + 0.01) = 25/3: H = (25/3) / (20/9) = 15/4. Nominal: A gets f + A/2 -> 2f, capacity 10:
    G = 5."""
    topo = _loop()
    h = headroom(topo)
    assert h.headroom == Fraction(15, 4) and h.headroom_exact and h.limiting_bolts == ["A", "B"]
    assert all(i < c for i, c in margins(scaled(topo, h.headroom * Fraction(999, 1000))).values())
    assert not all(i < c for i, c in margins(scaled(topo, h.headroom)).values())
    assert h.grows_at == 5 and h.grows_at_exact and h.first_to_saturate == ["A", "B"]
    assert h.to_json()["exact"] == ["headroom", "grows_at"] and "at least" not in headline(h)


def test_an_iterated_cycle_gives_a_proven_lower_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where a cycle's flows are only iterated (no exact solve), the headroom is found by bisection on the
    exact check: a proven factor, marked not exact."""
    from app.core.rates import flows

    monkeypatch.setattr(flows, "cycle_fixpoint", lambda *args, **kwargs: None)  # the iteration alone
    topo = _loop()
    h = headroom(topo)
    assert not h.headroom_exact and h.headroom is not None and 0 < h.headroom <= Fraction(15, 4)
    assert all(i < c for i, c in margins(scaled(topo, h.headroom)).values())
    assert h.grows_at is not None and abs(h.grows_at - 5) < Fraction(1, 10**9) and not h.grows_at_exact
    assert "at least" in headline(h)


def test_no_inflow_is_unlimited():
    topo = parse_topology({"spouts": [{"name": "S", "rate": 1}],
                           "bolts": [{"name": "A", "alpha": 0.1, "sigma": 0, "parallelism": 1}],
                           "subscriptions": []})
    h = headroom(topo)
    assert h.headroom is None and h.grows_at is None and "unlimited" in headline(h)


def test_an_amplifying_cycle_grows_at_any_load() -> None:
    """A → B → A with σ 1 and 2: the loop passes on twice what it takes, so no load is sustainable (the rate
    check suggests no parallelism), whatever the finite iteration of the flows says."""
    topo = parse_topology({
        "name": "amplifier",
        "spouts": [{"name": "S", "rate": 1}],
        "bolts": [{"name": "A", "alpha": 0.001, "sigma": 1, "parallelism": 1},
                  {"name": "B", "alpha": 0.001, "sigma": 2, "parallelism": 1}],
        "subscriptions": [{"source": "S", "target": "A"}, {"source": "A", "target": "B"},
                          {"source": "B", "target": "A"}],
        "storm": {"max_spout_pending": 10},
    })
    h = headroom(topo)
    assert h.grows_at == 0 and set(h.first_to_saturate) == {"A", "B"} and h.overloaded
    assert "grow at any load" in headline(h)
    f = h.storm
    assert f is not None and f.sustainable_rate == 0 and f.backlog_growth == 1 and f.queues == []
    assert f.pending[0].wait is None and f.pending[0].times_out
    assert "never complete" in "\n".join(storm_lines(h))


def test_a_long_chain_with_a_back_edge_is_read_in_closed_form_not_bisected(monkeypatch: pytest.MonkeyPatch) -> None:
    """`check` on thousands of bolts in a cycle stays a few exact rate checks: the solved cycle is linear, so
    the headroom is the closed form (no bisection, which costs dozens of rate checks), and exact."""
    import sys
    from pathlib import Path

    from app.core import headroom as module

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from rate_cycles import chain  # bench/rate_cycles.py: the bench's own topology

    checks: list[int] = []
    original = module.load_margins

    def counted(topo):  # noqa: ANN001, ANN202 - load_margins' own signature
        checks.append(1)
        return original(topo)

    monkeypatch.setattr(module, "load_margins", counted)
    monkeypatch.setattr(module, "_all_bounded", lambda *a: pytest.fail("bisected"))  # noqa: ARG005
    h = headroom(chain(300, True))
    assert h.headroom_exact and h.grows_at_exact and len(checks) <= 2
    assert "and 295 more" in headline(h)

"""Timeout witnesses through a join that waits for every branch (docs/latency.md, "Against the timeout"; docs/model.md
section 11): a message's tree followed back through one of its parts, the n-th part of a branch being the n-th
message's; the checker's own copy of that rule accepts the builder's chains and rejects a chain whose hop into the
join sends no part of the message followed. The waits agree with an independent FIFO simulation."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.core.latency.witness import timeout_witnesses
from app.core.tcn.check.latency_witness import check_witness
from app.core.topology import parse_topology
from tests.unit.test_joins import enrichment


def _doc(**changes: Any) -> dict[str, Any]:
    data = enrichment(geo=0.005)
    data["storm"] = {"message_timeout_secs": 1}
    for name, alpha in changes.items():
        if name == "sink":
            data["bolts"].append({"name": "sink", "alpha": alpha, "sigma": 0, "parallelism": 1})
            data["subscriptions"].append({"source": "join", "target": "sink"})
        else:
            next(b for b in data["bolts"] if b["name"] == name)["alpha"] = alpha
    return data


def _fifo_wait(arrived: Fraction, first: Fraction, gap: Fraction, alpha: Fraction) -> Fraction:
    """An independent FIFO: messages arriving every `gap` from `first`, served α each; the wait of the one arriving
    at `arrived`."""
    free, n = Fraction(0), 0
    while True:
        at = first + n * gap
        start = max(at, free)
        if at >= arrived:
            return start - at
        free, n = start + alpha, n + 1


def test_a_tree_through_the_join_times_out_in_a_sink_below_it() -> None:
    """The sink serves 50 messages/s of the 100 the join completes: a certified witness whose chain goes kafka →
    split → a branch → join → sink, accepted with its stated figures; its wait is the independent FIFO's."""
    found = timeout_witnesses(parse_topology(_doc(sink=0.02)), ["sink"], Fraction(1))
    (w, *_) = found["sink"]
    assert w.root == "kafka" and [h[0] for h in w.chain][0] == "kafka" and w.chain[-1][0] == "join"
    ok = check_witness(w.trace, "sink", w.loop_pass, w.position, Fraction(1), chain=w.chain, stated=w.to_json())
    assert ok.ok, ok.problems
    assert ok.figures["tree_pending"] > 1
    # the same message through its part on the splitter's own branch (sent with geo's input, completed only when
    # geo's part came): accepted, although no message completes at the splitter's emit
    split = next(i for i, h in enumerate(w.chain) if h[0] == "split")
    direct = [*w.chain[:split + 1], *(h for h in w.chain if h[0] in ("join", "sink"))]
    assert direct != list(w.chain) and w.chain[split + 1][0] in ("geo", "host")
    ok = check_witness(w.trace, "sink", w.loop_pass, w.position, Fraction(1), chain=direct)
    assert ok.ok, ok.problems
    arrivals = [p.exact_time for p in w.trace.positions[: w.trace.k + 1] if p.bolts["sink"].arrivals]
    independent = _fifo_wait(w.arrived, arrivals[0], Fraction(1, 100), Fraction(2, 100))
    assert abs(independent - w.wait) <= Fraction(2, 100)


def test_a_message_waiting_in_the_join_is_followed_through_a_part_and_a_forged_hop_is_rejected() -> None:
    """The join itself serves 50 messages/s of 100: a witness in its queue of complete messages, its chain ending
    at the branch that sent a part of that message; the same chain with its last emit one position later (no part
    of that message), or with a hop into the join from a branch emit of another message, is rejected."""
    found = timeout_witnesses(parse_topology(_doc(join=0.02)), ["join"], Fraction(1))
    (w, *_) = found["join"]
    assert w.root == "kafka" and w.chain[-1][0] in ("split", "geo", "host")
    ok = check_witness(w.trace, "join", w.loop_pass, w.position, Fraction(1), chain=w.chain, stated=w.to_json())
    assert ok.ok, ok.problems
    late = [list(h) for h in w.chain]
    late[-1][1] += 1
    problems = check_witness(w.trace, "join", w.loop_pass, w.position, Fraction(1), chain=late).problems
    assert problems and "sends no part of message" in problems[0]
    span = w.trace.k - w.trace.loop_start + 1  # the whole chain a loop earlier: each hop holds, but not the message
    problems = check_witness(w.trace, "join", w.loop_pass, w.position, Fraction(1),
                             chain=[[name, at - span] for name, at in w.chain]).problems
    assert problems and "sends no part of message" in problems[0]
    below = timeout_witnesses(parse_topology(_doc(sink=0.02)), ["sink"], Fraction(1))["sink"][0]
    hops = [list(h) for h in below.chain]
    span = below.trace.k - below.trace.loop_start + 1
    into = next(i for i, h in enumerate(hops) if h[0] == "join") - 1  # the branch hop into the join
    earlier = [[name, at - span if n <= into else at] for n, (name, at) in enumerate(hops)]
    problems = check_witness(below.trace, "sink", below.loop_pass, below.position, Fraction(1),
                             chain=earlier).problems
    assert problems and "holds no tuple arriving at" in problems[0]


def _filtered() -> dict[str, Any]:
    """The splitter sends only every other message to geo (σ 0.5 on its stream): the join completes 50 messages/s of
    the 100 its other branches deliver, its cache grows while no queue does (not even the join's)."""
    data = _doc()
    next(b for b in data["bolts"] if b["name"] == "split")["stream_sigma"]["geo"] = 0.5
    return data


def test_a_part_waiting_in_a_growing_cache_is_a_certified_witness_and_forged_ones_are_rejected() -> None:
    """geo at 20 ms completes 50 messages/s of 100: the join's queue keeps up but its cache grows; the witness is a
    part of a faster branch that waits longer than the timeout for its message's geo part, accepted with its chain
    and its stated figures, its wait the independent estimate (part n sent at n/100 s, its message complete when geo
    has served n tuples at 20 ms each). Forged claims are rejected: another branch (geo's parts complete their
    message at once), a position where the branch sends nothing, a chain to another send, a shifted completion, no
    branch (the join's queue, where the part never waits), a component that is not a branch."""
    (w, *_) = timeout_witnesses(parse_topology(_doc(geo=0.02)), ["join"], Fraction(1))["join"]
    assert w.branch is not None and w.branch[0] in ("split", "host") and w.root == "kafka"
    assert w.chain[-1][0] == w.branch[0]
    ok = check_witness(w.trace, "join", w.loop_pass, w.position, Fraction(1), chain=w.chain, stated=w.to_json(),
                       branch=w.branch)
    assert ok.ok, ok.problems
    assert ok.figures["tree_pending"] > 1 and ok.wait == w.wait
    assert abs(w.wait - Fraction(w.tuple_number, 100)) <= Fraction(4, 100)
    args = (w.trace, "join", w.loop_pass, w.position, Fraction(1))
    span = w.trace.k - w.trace.loop_start + 1

    def problems(**kw: Any) -> list[str]:
        got = check_witness(*args, **{"branch": w.branch, **kw})
        assert not got.ok
        return got.problems

    slow = next(i for i in range(w.trace.loop_start, w.trace.k + 1) if w.trace.positions[i].bolts["geo"].emitted)
    assert "not more than the timeout" in check_witness(w.trace, "join", w.loop_pass, slow, Fraction(1),
                                                        branch=["geo", "default"]).problems[0]
    idle = next(i for i in range(w.trace.loop_start, w.trace.k + 1)
                if w.trace.positions[i].bolts[w.branch[0]].stream_emitted(w.branch[1]) == 0)
    assert "sends no part" in check_witness(w.trace, "join", w.loop_pass, idle, Fraction(1),
                                            branch=w.branch).problems[0]
    assert "not the part's send" in problems(chain=[[name, at - span] for name, at in w.chain])[0]
    assert any("stated taken" in p for p in problems(stated={**w.to_json(), "taken": str(w.taken - Fraction(1, 100))}))
    assert problems(branch=None)
    assert "not a branch" in problems(branch=["kafka", "default"])[0]


def test_the_answer_says_the_trees_time_out_in_the_cache(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Only the join's cache grows: the spout's answer is `times-out` with the cache's witness (before, no witness
    counted a wait in a cache and the answer stayed `may-time-out`); `check-witness` accepts the written file, and
    rejects it with the branch changed to the slow one."""
    doc = tmp_path / "filtered.storm.json"
    doc.write_text(json.dumps(_filtered()))
    out = tmp_path / "w.json"
    assert main(["check", str(doc), "--witness-out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "kafka: tuples time out: a certified run in which a part" in text and "in its cache" in text, text
    data = json.loads(out.read_text())
    (w,) = data["witnesses"]
    assert w["bolt"] == "join" and w["branch"][0] in ("split", "host")
    assert main(["check-witness", str(out)]) == 0
    assert "kafka at join: accepted: a part in its cache of a tree of kafka waits" in capsys.readouterr().out
    w["branch"] = ["geo", "default"]
    out.write_text(json.dumps(data))
    assert main(["check-witness", str(out)]) == 1
    assert "rejected" in capsys.readouterr().out

"""The certifier's failure rules (docs/model.md section 7): hand-written traces with failures that pass,
one mutation per rule that must fail, and random legal runs of a tiny reference stepper (written here,
independent of the certifier, the simulation and the encoder) that must pass, with random single-field
mutations that must fail unless the rules allow them."""

from __future__ import annotations

import copy
import math
import random
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.failures import impacts, replay_problem, replay_range
from app.core.formats.trace import Trace, format_time
from app.core.tcn.check.certify import certify
from app.core.tcn.check.certify_failures import impacts as own_impacts
from app.core.topology import parse_topology


def topology(replay: str = "paced", reboot: tuple[float, float] = (1, 2), c_ttf: float | None = 1,
             **settings: Any) -> dict[str, Any]:
    """S feeds A (checked, a sink as fast as S) and C (a sink that may fail); everything on a 1 s grid."""
    c: dict[str, Any] = {"name": "C", "alpha": 1, "sigma": 0, "parallelism": 1}
    if c_ttf is not None:
        c["min_ttf"] = c_ttf
    return {
        "spouts": [{"name": "S", "rate": 1, "burst": 1}],
        "bolts": [{"name": "A", "alpha": 1, "sigma": 0, "parallelism": 1}, c],
        "subscriptions": [{"source": "S", "target": "A"}, {"source": "S", "target": "C"}],
        "settings": {"tolerance": 0, "max_idle_time": 0, "init_queues": 0, "emission": "exact",
                     "min_reboot_time": reboot[0], "max_reboot_time": reboot[1], "replay": replay, **settings},
        "verification": {"checked": ["A"]},
    }


def spout(emitted: int, backlog: int = 0, replayed: int = 0) -> dict[str, Any]:
    return {"emit": emitted > 0, "emitted": emitted, "backlog": backlog, "replayed": replayed}


def busy(queue: int, arrivals: int, emit: bool = True, **failure: Any) -> dict[str, Any]:
    """A sink bolt of α 1 on the 1 s grid that takes one tuple at this position (emitting its last batch)."""
    return {"queue": queue, "arrivals": arrivals, "take": True, "batch": 1, "emit": emit, "emitted": 0,
            "buffer": 0, "phase": "processing", **failure}


def down(arrivals: int, lost: int, fail: bool = False, replays: dict[str, int] | None = None,
         queue: int = 0) -> dict[str, Any]:
    return {"queue": queue, "arrivals": arrivals, "take": False, "batch": 0, "emit": False, "emitted": 0,
            "buffer": 0, "phase": "failed", "fail": fail, "lost": lost, "replays": replays}


def paced_lasso() -> dict[str, Any]:
    """C fails every 2 s (min_ttf 1, back after 1 s), loses 4 tuples each time and S replays all 4, one per
    fresh tuple: S's backlog grows by 2 per pass, A receives 2 tuples/s, takes 1/s and grows by 2 per pass."""
    rows = [
        (0, spout(1), busy(0, 1, emit=False), busy(0, 1, emit=False)),
        (1, spout(1), busy(0, 1), down(1, 2, fail=True, replays={"S": 2})),
        (2, spout(2, 2, 1), busy(0, 2), busy(0, 2, emit=False, recover=True)),
        (3, spout(2, 1, 1), busy(1, 2), down(2, 4, fail=True, replays={"S": 4}, queue=1)),
        (4, spout(2, 4, 1), busy(2, 2), busy(0, 2, emit=False, recover=True)),
        (5, spout(2, 3, 1), busy(3, 2), down(2, 4, fail=True, replays={"S": 4}, queue=1)),
    ]
    positions = [{"time": str(t), "spouts": {"S": s}, "bolts": {"A": a, "C": c}} for t, s, a, c in rows]
    return {"topology": topology(), "k": 4, "loop_start": 3, "positions": positions}


def at_once_run() -> dict[str, Any]:
    """A threshold witness (no loop): C fails at 1, stays failed at 2 (losing what arrives), recovers at 3;
    S replays its whole backlog with its next emission ("at-once"), A's queue reaches 5."""
    rows = [
        (0, spout(1), busy(0, 1, emit=False), busy(0, 1, emit=False)),
        (1, spout(1), busy(0, 1), down(1, 2, fail=True, replays={"S": 2})),
        (2, spout(3, 2, 2), busy(0, 3), down(3, 3, replays={"S": 3})),
        (3, spout(4, 3, 3), busy(2, 4), busy(0, 4, emit=False, recover=True)),
        (4, spout(1), busy(5, 1), busy(3, 1)),
    ]
    positions = [{"time": str(t), "spouts": {"S": s}, "bolts": {"A": a, "C": c}} for t, s, a, c in rows]
    return {"topology": topology("at-once"), "k": 3, "loop_start": 4, "positions": positions}


def problems_of(data: dict[str, Any], threshold: int | None = None) -> list[str]:
    cert = certify(Trace.model_validate(data), threshold=threshold)
    return cert.problems


def rejected(data: dict[str, Any], rule: str, threshold: int | None = None) -> None:
    found = problems_of(data, threshold)
    assert found, f"accepted, but it breaks: {rule}"
    assert any(rule in p for p in found), found


def test_a_lasso_with_failures_and_a_growing_backlog_certifies() -> None:
    cert = certify(Trace.model_validate(paced_lasso()))
    assert cert.ok, cert.problems
    assert cert.growth_per_loop == {"A": 2, "C": 0}


def test_a_run_with_a_long_failure_and_at_once_replays_certifies() -> None:
    assert problems_of(at_once_run(), threshold=5) == []


def test_the_hand_traces_survive_a_round_trip_through_the_trace_file() -> None:
    trace = Trace.model_validate(paced_lasso())
    assert certify(Trace.model_validate(trace.model_dump(mode="json"))).ok


def pos(data: dict[str, Any], i: int, who: str) -> dict[str, Any]:
    p = data["positions"][i]
    return p["spouts"][who] if who in p["spouts"] else p["bolts"][who]


def mutated(make: Any, change: Any) -> dict[str, Any]:
    data = copy.deepcopy(make())
    change(data)
    return data


# ---- one mutation per rule of section 7 (each names its rule) ----

def test_rule_when_a_bolt_may_fail_min_ttf() -> None:
    data = mutated(paced_lasso, lambda d: d["topology"]["bolts"][1].update(min_ttf=1.5))
    rejected(data, "position 1: bolt C: fails 1 s after it was last up, before its min_ttf 3/2")


def test_rule_failure_position_no_take_no_emit() -> None:
    rejected(mutated(paced_lasso, lambda d: pos(d, 1, "C").update(take=True, batch=1)),
             "position 1: bolt C: a failed bolt neither takes nor emits")


def test_rule_failure_position_lost_is_queue_arrivals_batch() -> None:
    rejected(mutated(paced_lasso, lambda d: pos(d, 3, "C").update(lost=3, replays={"S": 3})),
             "position 3: bolt C: lost 3 but queue + arrivals + batch at a failure is 4")


def test_rule_failure_position_queue_and_carry_to_zero() -> None:
    rejected(mutated(paced_lasso, lambda d: pos(d, 2, "C").update(queue=1)), "position 2: bolt C: queue 1")
    rejected(mutated(paced_lasso, lambda d: pos(d, 1, "C").update(phase="idle")),
             "position 1: bolt C: a failed bolt neither takes nor emits and keeps no batch or carry")


def test_rule_failed_positions_lose_their_arrivals() -> None:
    rejected(mutated(at_once_run, lambda d: pos(d, 2, "C").update(lost=2, replays={"S": 2})),
             "position 2: bolt C: lost 2 but its arrivals while failed is 3", threshold=5)


def test_rule_failed_positions_keep_the_queue_at_zero() -> None:
    rejected(mutated(at_once_run, lambda d: pos(d, 2, "C").update(queue=1)),
             "position 2: bolt C: queue 1 but the previous position leaves 0", threshold=5)


def test_rule_recovery_timing_within_the_reboot_bounds() -> None:
    data = mutated(at_once_run, lambda d: d["topology"]["settings"].update(min_reboot_time=2.5,
                                                                           max_reboot_time=3))
    rejected(data, "position 3: bolt C: recovers 2 s after its failure, outside", threshold=5)


def test_rule_no_position_at_or_beyond_max_reboot_while_failed() -> None:
    data = mutated(at_once_run, lambda d: d["topology"]["settings"].update(max_reboot_time=1))
    rejected(data, "position 2: bolt C: still failed 1 s after its failure, at or beyond max_reboot_time 1",
             threshold=5)


def test_rule_recover_only_when_failed_and_never_at_the_failure() -> None:
    rejected(mutated(paced_lasso, lambda d: pos(d, 0, "C").update(recover=True)),
             "position 0: bolt C: recovers but is not failed")
    rejected(mutated(paced_lasso, lambda d: pos(d, 3, "C").update(recover=True)),
             "position 3: bolt C: fails and recovers at one position")


def test_rule_a_failure_meets_a_deadline_only_at_or_before_it() -> None:
    # C takes at 0 and fails at 1: exactly at its emit deadline α(1+τ) = 1 (accepted above); with α = 0.5
    # the deadline is 0.5 and the failure at 1 comes too late
    data = mutated(paced_lasso, lambda d: d["topology"]["bolts"][1].update(alpha=0.5))
    rejected(data, "position 1: bolt C: fails 1 s after its take, beyond its emit deadline 1/2")


def test_rule_replays_per_loss_within_the_split_range() -> None:
    rejected(mutated(paced_lasso, lambda d: pos(d, 3, "C").update(replays={"S": 3})),
             "position 3: bolt C: loses 4 and replays {'S': 3}: 3 replays for 4 lost tuples: too few")
    rejected(mutated(paced_lasso, lambda d: pos(d, 3, "C").update(replays={"S": 5})),
             "5 replays for 4 lost tuples: at most one spout tuple per lost tuple")
    rejected(mutated(paced_lasso, lambda d: pos(d, 3, "C").update(replays={"T": 4})),
             "spout T replays but its trees never reach this bolt")


def test_rule_only_a_failure_loses_tuples() -> None:
    rejected(mutated(paced_lasso, lambda d: pos(d, 2, "C").update(lost=1)),
             "position 2: bolt C: loses 1 tuples and replays {} while up")


def test_rule_spout_backlog_recurrence() -> None:
    rejected(mutated(paced_lasso, lambda d: pos(d, 4, "S").update(backlog=5)),
             "position 4: spout S: backlog 5 but the replays so far leave 4 (backlog recurrence")


def test_rule_replayed_per_mode() -> None:
    rejected(mutated(paced_lasso, lambda d: pos(d, 2, "S").update(replayed=0, emitted=1)),
             "position 2: spout S: replays 0 tuples, but settings.replay 'paced' with backlog 2 and 1 fresh tuples "
             "gives 1")
    data = mutated(paced_lasso, lambda d: d["topology"]["settings"].update(replay="at-once"))
    rejected(data, "position 2: spout S: replays 1 tuples, but settings.replay 'at-once' with backlog 2")
    data = mutated(paced_lasso, lambda d: d["topology"]["settings"].update(replay="none"))
    rejected(data, "settings.replay is 'none'")


def test_rule_the_spout_timing_reads_the_fresh_tuples() -> None:
    # at 2 S emits 3 = 1 fresh + 2 replays and emits again 1 s later: legal (the at-once run certifies);
    # counted as 3 fresh tuples it would break both its burst and its timing
    rejected(mutated(at_once_run, lambda d: pos(d, 2, "S").update(replayed=0)),
             "position 2: spout S: emits 3 tuples, more than its burst 1", threshold=5)


def test_rule_declared_stream_ratio_applies_to_the_replays_too() -> None:
    def side(d: dict[str, Any]) -> None:
        d["topology"]["spouts"][0].update(streams=["side"], stream_ratio={"side": 1})
        d["topology"]["bolts"].append({"name": "D", "alpha": 1, "sigma": 0, "parallelism": 1})
        d["topology"]["subscriptions"].append({"source": "S", "target": "D", "stream": "side"})
        for p in d["positions"]:
            s = p["spouts"]["S"]
            s.update(emitted=2 * s["emitted"], emitted_by_stream={"default": s["emitted"], "side": s["emitted"]},
                     buffer_by_stream={"side": 0})
            n = s["emitted_by_stream"]["side"]
            p["bolts"]["D"] = {"queue": 0, "arrivals": n, "take": False, "batch": 0, "emit": False, "emitted": 0,
                               "buffer": 0, "phase": "idle"}

    data = mutated(at_once_run, side)
    found = problems_of(data, threshold=5)
    assert not any("spout S" in p for p in found), found  # the side stream carries fresh tuples and replays
    pos(data, 2, "S")["emitted_by_stream"]["side"] = 1  # the fresh tuple only
    pos(data, 2, "S")["emitted"] = 4
    rejected(data, "position 2: spout S: stream side: emits 1 keeping 0, but the rule gives 3", threshold=5)


def test_rule_failure_fields_need_a_failure_model() -> None:
    data = mutated(paced_lasso, lambda d: d["topology"]["settings"].update(failures=False))
    rejected(data, "position 1: bolt C: records a failure (fail, recover, lost, replays or phase 'failed') but the "
                   "topology has no failure model")
    rejected(data, "position 2: spout S: records backlog 2 and replayed 1, but the topology has no failure model")
    data = mutated(paced_lasso, lambda d: d["topology"]["bolts"][1].pop("min_ttf"))
    rejected(data, "position 1: bolt C: records a failure")

    def on_a(d: dict[str, Any]) -> None:
        d["topology"]["bolts"][1].pop("min_ttf")
        d["topology"]["bolts"][0]["min_ttf"] = 100

    rejected(mutated(paced_lasso, on_a), "position 1: bolt C: records a failure (fail, recover, lost, replays or "
                                         "phase 'failed') but C has no min_ttf")


# ---- section 7.4: the loop ----

def test_loop_rule_the_failure_state_repeats() -> None:
    rejected(mutated(paced_lasso, lambda d: pos(d, 5, "C").update(fail=False)), "bolt C: fail differs at 3 and 5")


def test_loop_rule_a_bolt_that_fails_in_the_loop_does_not_grow() -> None:
    data = mutated(paced_lasso, lambda d: d["topology"]["verification"].update(checked=["A", "C"]))
    assert certify(Trace.model_validate(data)).ok
    rejected(mutated(paced_lasso, lambda d: pos(d, 5, "C").update(queue=2)),
             "bolt C grows by 1 per pass but fails or loses tuples inside the loop (Δ = 0")


def test_loop_rule_a_growing_paced_backlog_replays_n_at_every_emission() -> None:
    rejected(mutated(paced_lasso, lambda d: pos(d, 4, "S").update(replayed=0, emitted=1)),
             "spout S: its backlog grows by 2 per pass but position 4 replays fewer than its fresh tuples")


def test_loop_rule_an_at_once_backlog_cannot_grow() -> None:
    data = mutated(paced_lasso, lambda d: d["topology"]["settings"].update(replay="at-once"))
    rejected(data, "spout S: its backlog grows by 2 per pass under settings.replay 'at-once'")


def test_loop_rule_a_backlog_cannot_shrink() -> None:
    def shrink(d: dict[str, Any]) -> None:
        pos(d, 5, "S")["backlog"] = 0

    rejected(mutated(paced_lasso, shrink), "spout S: its backlog shrinks by 1 per pass")


# ---- the independent impact agrees with app/core/failures.py ----

def test_the_certifier_computes_its_own_impact_like_the_failure_model() -> None:
    for emission in ("exact", "dvert"):
        doc = {
            "spouts": [{"name": "S", "rate": 1, "burst": 2, "streams": ["x"], "stream_ratio": {"x": 0.5}},
                       {"name": "T", "rate": 1}],
            "bolts": [{"name": "A", "alpha": 0.5, "sigma": 2, "parallelism": 1},
                      {"name": "B", "alpha": 0.5, "sigma": 0.75, "parallelism": 3},
                      {"name": "C", "alpha": 0.5, "sigma": 1, "parallelism": 1, "min_ttf": 5},
                      {"name": "L1", "alpha": 0.5, "sigma": 1, "parallelism": 1},
                      {"name": "L2", "alpha": 0.5, "sigma": 0.5, "parallelism": 1},
                      {"name": "E", "alpha": 0.5, "sigma": 0, "parallelism": 1}],
            "subscriptions": [{"source": "S", "target": "A"}, {"source": "A", "target": "B"},
                              {"source": "A", "target": "C"}, {"source": "B", "target": "C"},
                              {"source": "S", "target": "C", "stream": "x"}, {"source": "T", "target": "L1"},
                              {"source": "L1", "target": "L2"}, {"source": "L2", "target": "L1"},
                              {"source": "L2", "target": "E"}, {"source": "S", "target": "E"}],
            "settings": {"min_reboot_time": 1, "max_reboot_time": 2, "emission": emission},
        }
        topo = parse_topology(doc)
        names = {c.id: c.name for c in topo.components}
        reference = {names[j]: {names[s]: (None if v == math.inf else v) for s, v in row.items()}
                     for j, row in impacts(topo).items()}
        assert own_impacts(topo) == reference
    assert own_impacts(topo)["E"] == {"S": 1, "T": None}


# ---- random legal runs of a tiny reference stepper ----

H = Fraction(1, 2)  # the grid: every constant below is a multiple of it, τ = 0 and max_idle 0


def random_topology(rnd: random.Random) -> dict[str, Any]:
    """One or two spouts, a chain or a diamond of up to four bolts (a DAG), some of which may fail."""
    spouts = [{"name": f"S{n}", "rate": rnd.choice([2, 1, 0.5]), "burst": rnd.randint(1, 2)}
              for n in range(rnd.randint(1, 2))]
    bolts: list[dict[str, Any]] = []
    subs: list[dict[str, str]] = []
    for n in range(rnd.randint(1, 4)):
        b: dict[str, Any] = {"name": f"B{n}", "alpha": rnd.choice([0.5, 1, 1.5, 2]),
                             "sigma": rnd.choice([0, 0.5, 1, 2]) if n < 3 else 0, "parallelism": rnd.randint(1, 3)}
        if rnd.random() < 0.6:
            b["min_ttf"] = rnd.choice([0, 0.5, 1, 2])
        upstream = [s["name"] for s in spouts] + [x["name"] for x in bolts]
        for source in rnd.sample(upstream, rnd.randint(1, min(2, len(upstream)))):
            subs.append({"source": source, "target": b["name"]})
        bolts.append(b)
    if not any("min_ttf" in b for b in bolts):
        bolts[0]["min_ttf"] = 0.5
    lo = rnd.choice([0.5, 1, 1.5])
    return {"spouts": spouts, "bolts": bolts, "subscriptions": subs,
            "settings": {"tolerance": 0, "max_idle_time": 0, "init_queues": rnd.randint(0, 2),
                         "emission": rnd.choice(["exact", "dvert"]), "min_reboot_time": lo,
                         "max_reboot_time": lo + rnd.choice([0, 0.5, 1]),
                         "replay": rnd.choice(["paced", "at-once", "none"])},
            "verification": {"checked": []}}


def step_run(doc: dict[str, Any], rnd: random.Random, length: int) -> dict[str, Any]:
    """Positions 0, h, 2h, …: the rules of docs/model.md sections 2 and 7 stepped forward, every free choice
    (burst sizes, failures, recoveries, the replay split) random."""
    topo = parse_topology(doc)
    names = {c.id: c.name for c in topo.components}
    imp = {names[j]: {names[s]: v for s, v in row.items()} for j, row in impacts(topo).items()}
    st_ = doc["settings"]
    fr = lambda x: Fraction(str(x))  # noqa: E731
    lo, hi, mode = fr(st_["min_reboot_time"]), fr(st_["max_reboot_time"]), st_["replay"]
    period = {s["name"]: 1 / fr(s["rate"]) for s in doc["spouts"]}
    next_emit = {s: Fraction(0) for s in period}
    backlog = {s: 0 for s in period}
    bolts = {b["name"]: b for b in doc["bolts"]}
    sources = {b: [x["source"] for x in doc["subscriptions"] if x["target"] == b] for b in bolts}
    q = {b: st_["init_queues"] for b in bolts}
    proc: dict[str, Fraction | None] = {b: None for b in bolts}  # take time while processing
    batch = {b: 0 for b in bolts}
    carry = {b: Fraction(0) for b in bolts}
    failed_at: dict[str, Fraction | None] = {b: None for b in bolts}
    up_since = {b: Fraction(0) for b in bolts}
    positions = []
    for i in range(length):
        t = i * H
        out: dict[str, int] = {}
        spouts = {}
        for s, a in period.items():
            rec: dict[str, Any] = {"emit": False, "emitted": 0, "backlog": backlog[s], "replayed": 0}
            if t == next_emit[s]:
                burst = next(x["burst"] for x in doc["spouts"] if x["name"] == s)
                n = rnd.randint(1, burst)
                rep = min(backlog[s], n) if mode == "paced" else backlog[s] if mode == "at-once" else 0
                rec.update(emit=True, emitted=n + rep, replayed=rep)
                backlog[s] -= rep
                next_emit[s] = t + n * a
            out[s] = rec["emitted"]
            spouts[s] = rec
        rows = {}
        for b, spec in bolts.items():  # in declaration order: every bolt's sources come first
            arrivals = sum(out[u] for u in dict.fromkeys(sources[b]))
            row: dict[str, Any] = {"queue": q[b], "arrivals": arrivals, "take": False, "batch": 0, "emit": False,
                                   "emitted": 0, "buffer": 0, "phase": "idle"}
            sigma, alpha = fr(spec["sigma"]), fr(spec["alpha"])
            lost = 0
            if failed_at[b] is not None:
                gone = t - failed_at[b]
                if gone == hi or (gone >= lo and rnd.random() < 0.5):
                    failed_at[b], up_since[b] = None, t
                    row["recover"] = True
                else:
                    lost = arrivals
            elif ("min_ttf" in spec and t - up_since[b] >= fr(spec["min_ttf"]) and rnd.random() < 0.3
                  and not (proc[b] is not None and t - proc[b] > alpha)):
                lost = q[b] + arrivals + batch[b]
                failed_at[b] = t
                row["fail"] = True
            if failed_at[b] is not None:  # failing here or still failed
                q[b], batch[b], carry[b], proc[b] = 0, 0, Fraction(0), None
                row.update(phase="failed", lost=lost)
                if lost and mode != "none" and imp[b]:
                    row["replays"] = split(rnd, lost, imp[b])
                    for s, r in row["replays"].items():
                        backlog[s] += r
                out[b] = 0
                rows[b] = row
                continue
            emitted = 0
            take_time = proc[b]
            if take_time is not None and t - take_time == alpha:
                total = carry[b] + batch[b]
                if sigma == 0 or not any(b in sources[x] for x in bolts):
                    emitted, kept = 0, Fraction(0)
                else:
                    emitted = math.floor(sigma * total)
                    kept = total - emitted / sigma
                    if st_["emission"] == "dvert":
                        kept = Fraction(math.ceil(kept))
                carry[b], batch[b], proc[b] = kept, 0, None
                row.update(emit=True, emitted=emitted)
            if proc[b] is None and q[b] + arrivals > 0:  # max_idle 0: an idle bolt takes at once
                batch[b] = min(spec["parallelism"], q[b] + arrivals)
                proc[b] = t
                row.update(take=True)
            q[b] = q[b] + arrivals - (batch[b] if row["take"] else 0)
            row.update(batch=batch[b], buffer=carry[b].numerator if carry[b].denominator == 1 else
                       f"{carry[b].numerator}/{carry[b].denominator}",
                       phase="processing" if proc[b] is not None else "idle")
            out[b] = emitted
            rows[b] = row
        positions.append({"time": format_time(t), "spouts": spouts, "bolts": rows})
    return {"topology": doc, "k": length - 2, "loop_start": length - 1, "positions": positions}


def split(rnd: random.Random, lost: int, impact: dict[str, Any]) -> dict[str, int]:
    """A random legal replay split of a loss (docs/model.md section 7.3): L = Σ L_s, r_s in its range."""
    spouts = sorted(impact)
    shares = dict.fromkeys(spouts, 0)
    for _ in range(lost):
        shares[rnd.choice(spouts)] += 1
    out = {}
    for s, share in shares.items():
        low, high = replay_range(share, impact[s])
        if high:
            out[s] = rnd.randint(low, high)
    return out


def legal_run(seed: int) -> dict[str, Any]:
    rnd = random.Random(seed)
    return step_run(random_topology(rnd), rnd, rnd.randint(4, 30))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**9))
def test_random_legal_runs_with_failures_certify(seed: int) -> None:
    data = legal_run(seed)
    assert problems_of(data, threshold=0) == []


def _mutations(data: dict[str, Any], rnd: random.Random) -> tuple[str, Any]:
    """One random single-field change of a failure field (or of what a failure fixes)."""
    i = rnd.randrange(len(data["positions"]))
    p = data["positions"][i]
    if rnd.random() < 0.3:
        s = rnd.choice(sorted(p["spouts"]))
        key = rnd.choice(["backlog", "replayed"])
        delta = rnd.choice([-1, 1]) if p["spouts"][s][key] else 1
        p["spouts"][s][key] += delta
        if key == "replayed":
            p["spouts"][s]["emitted"] += delta
        return f"{i} spout {s} {key} {delta:+d}", None
    b = rnd.choice(sorted(p["bolts"]))
    row = p["bolts"][b]
    key = rnd.choice(["fail", "recover", "lost", "replays", "phase"])
    if key in ("fail", "recover"):
        row[key] = not row.get(key, False)
    elif key == "lost":
        row["lost"] = row.get("lost", 0) + (rnd.choice([-1, 1]) if row.get("lost") else 1)
    elif key == "phase":
        row["phase"] = "idle" if row["phase"] == "failed" else "failed"
    else:
        spouts = sorted(p["spouts"])
        s = rnd.choice(spouts)
        reps = dict(row.get("replays") or {})
        reps[s] = max(reps.get(s, 0) + rnd.choice([-1, 1]), 0) if reps.get(s) else 1
        row["replays"] = reps
        return f"{i} bolt {b} replays {reps}", (i, b)
    return f"{i} bolt {b} {key}", None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**9), st.integers(0, 10**9))
def test_random_single_field_mutations_are_rejected_unless_legal(seed: int, which: int) -> None:
    data = legal_run(seed)
    before = copy.deepcopy(data)
    what, replays_at = _mutations(data, random.Random(which))
    if data == before:
        return
    found = problems_of(data, threshold=0)
    if replays_at is not None and replays_at[0] == len(data["positions"]) - 1:
        # the last position's replays reach no later backlog: legal exactly when the split rule allows them
        # (and the bolt lost something under a replaying mode)
        i, b = replays_at
        row = data["positions"][i]["bolts"][b]
        topo = parse_topology(data["topology"])
        names = {c.id: c.name for c in topo.components}
        ids = {v: k for k, v in names.items()}
        impact = {names[s]: v for s, v in impacts(topo)[ids[b]].items()}
        legal = (row.get("phase") == "failed" and "min_ttf" in next(x for x in data["topology"]["bolts"]
                                                                      if x["name"] == b)
                 and replay_problem(row.get("lost", 0), row["replays"], impact,
                                    data["topology"]["settings"]["replay"]) is None)
        assert (found == []) == legal, (what, found)
        return
    assert found, f"mutation {what} was accepted"


def test_the_stepper_makes_failures_and_replays() -> None:
    """The random runs are not vacuous: across seeds they fail, recover, stay failed, lose and replay."""
    seen = {"fail": 0, "recover": 0, "failed": 0, "replays": 0, "replayed": 0}
    for seed in range(60):
        for p in legal_run(seed)["positions"]:
            for row in p["bolts"].values():
                seen["fail"] += bool(row.get("fail"))
                seen["recover"] += bool(row.get("recover"))
                seen["failed"] += row["phase"] == "failed" and not row.get("fail")
                seen["replays"] += bool(row.get("replays"))
            seen["replayed"] += sum(bool(s["replayed"]) for s in p["spouts"].values())
    assert all(v > 5 for v in seen.values()), seen


@pytest.mark.parametrize("seed", range(5))
def test_a_legal_run_as_a_trace_file_certifies(seed: int) -> None:
    trace = Trace.model_validate(legal_run(seed))
    assert certify(Trace.model_validate(trace.model_dump(mode="json")), threshold=0).ok


def test_the_shipped_failure_trace_is_the_hand_lasso_and_certifies() -> None:
    """tests/data/traces/failure-paced.trace.json (the trace view's tests and docs/images use it)."""
    from pathlib import Path

    from app.core.formats.trace import load_trace

    trace = load_trace(Path(__file__).resolve().parents[1] / "data" / "traces" / "failure-paced.trace.json")
    assert certify(trace).ok
    assert trace.positions == Trace.model_validate(paced_lasso()).positions


def test_the_loop_reads_the_two_failure_clocks() -> None:
    """Section 7.4: the time since the last recovery (while up, below min_ttf) and since the failure (while
    failed) are clocks of the loop; a loop whose time since a failure differs is not a run."""
    from app.core.tcn.check.certify import _clocks
    from app.core.tcn.check.certify_clocks import region_problems
    from app.core.tcn.check.certify_replay import replay
    from app.core.tcn.check.certify_rules import Rules
    from app.core.tcn.check.certify_source import source_of

    trace = Trace.model_validate(at_once_run())
    rules = Rules(parse_topology(trace.topology))
    problems: list[str] = []
    befores = replay(rules, list(source_of(trace).steps(0)), problems)
    assert problems == []
    clocks = [_clocks(b) for b in befores if b is not None]
    assert [c["bolt C: its time since failure"] for c in clocks] == [None, None, 1, 2, None]
    assert [c["bolt C: its time since recovery"] for c in clocks] == [0, None, None, None, None]
    assert [c["bolt A: its time since recovery"] for c in clocks] == [None] * 5  # A never fails
    # min_ttf 1: at 4 the clock since the recovery at 3 is 1, read as "may fail", like any larger value
    moved = {**clocks[2], "bolt C: its time since failure": Fraction(3, 2)}
    found = region_problems(rules, clocks[2], moved, 2, 3)
    assert any("bolt C: its time since failure does not repeat up to regions" in p for p in found), found


def test_the_checker_rooms_own_sigma_bounds_match_the_rate_checks() -> None:
    """σ_lo and σ_hi under "dvert" (section 5), computed twice independently: by app/core/emission.py for the
    builders and by the checker room's ratios.py; fine σ (the [σ, 2σ] fallback) included."""
    from app.core.rates import sigma_bounds
    from app.core.tcn.check.ratios import ratio_bounds

    for den in range(2, 9):
        for num in range(1, 3 * den):
            sigma = Fraction(num, den)
            for size in (1, 2, 3, 5, 9):
                for rule in ("dvert", "exact"):
                    assert ratio_bounds(sigma, size, rule) == sigma_bounds(sigma, size, rule), (sigma, size, rule)
    for sigma in (Fraction(2, 1999), Fraction(3, 1000), Fraction(1, 997)):
        for size in (1, 2, 4):
            assert ratio_bounds(sigma, size, "dvert") == sigma_bounds(sigma, size, "dvert"), (sigma, size)

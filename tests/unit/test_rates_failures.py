"""The rate check under failures (docs/boundedness.md, "Failures"; docs/model.md section 7).

The bounds are checked against exact random runs: a small stepper below plays legal runs of
docs/model.md sections 2 and 7 (random timings within the tolerance and max_idle, random
failures as soon as min_ttf allows or later, random reboot times, replays at the upper end:
one spout tuple per lost tuple) and no run's queue, loss per failure, backlog of replays or
count of tuples in any window may exceed what the rate check computed."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from app.core.failures import FailureModel, failure_model
from app.core.rates import RateFigures, failure_margins, rate_check
from app.core.rates.arrival import Curve
from app.core.rates.failures_check import FailureCheck, failure_check
from app.core.topology import Topology, parse_topology

# The shared topology of the failure model: A keeps up with S without failures (capacity 1/0.9 against
# 1 tuple/s, tolerance 0); C, fed by S too, fails every min_ttf and S replays what C loses, which A
# receives again. min_ttf 100 s: the replays (at most 7 tuples per failure, 0.069/s) fit A's spare
# 0.111/s, bounded; min_ttf 2 s: they do not.
BOUNDED_TTF = 100
GROWING_TTF = 2


def shared(min_ttf: float, **settings: Any) -> dict[str, Any]:
    return {
        "name": "replays",
        "spouts": [{"name": "S", "rate": 1, "burst": 1}],
        "bolts": [{"name": "A", "alpha": 0.9, "sigma": 1, "parallelism": 1},
                  {"name": "C", "alpha": 0.1, "sigma": 0, "parallelism": 1, "min_ttf": min_ttf}],
        "subscriptions": [{"source": "S", "target": "A"}, {"source": "S", "target": "C"}],
        "settings": {"tolerance": 0, "max_idle_time": 0, "min_reboot_time": 1, "max_reboot_time": 2,
                     "replay": "paced", **settings},
    }


def chain(replay: str = "paced", emission: str = "exact") -> dict[str, Any]:
    """Jitter, idling, bursts, a batch of two, a failing bolt that feeds another, initial queues."""
    return {
        "name": "chain",
        "spouts": [{"name": "S", "rate": 2, "burst": 2}, {"name": "T", "rate": 0.5, "burst": 1}],
        "bolts": [{"name": "A", "alpha": 0.5, "sigma": 1, "parallelism": 3},
                  {"name": "C", "alpha": 0.1, "sigma": 0.5, "parallelism": 2, "min_ttf": 40},
                  {"name": "D", "alpha": 0.1, "sigma": 0, "parallelism": 1}],
        "subscriptions": [{"source": "S", "target": "A"}, {"source": "S", "target": "C"},
                          {"source": "T", "target": "C"}, {"source": "C", "target": "D"},
                          {"source": "A", "target": "D"}],
        "settings": {"tolerance": 0.1, "max_idle_time": 0.05, "init_queues": 2, "min_reboot_time": 0.5,
                     "max_reboot_time": 1.5, "replay": replay, "emission": emission},
    }


def test_shared_topology_is_bounded_with_rare_failures_and_not_with_frequent_ones() -> None:
    calm = rate_check(parse_topology(shared(BOUNDED_TTF)))
    assert calm.failures
    assert calm.bolts["A"].status == "bounded"
    assert calm.bolts["A"].inflow_failures is not None and calm.bolts["A"].inflow_failures < 10 / 9
    # C holds at most 3 when it fails (its batch of one, taken within 0.1 s of two arriving), and S emits at most
    # twice, two tuples each (paced), while C is down (docs/boundedness.md, "Loss per failure, by emissions")
    assert calm.bolts["C"].lost_per_failure == 7
    assert calm.replay_rate["S"] == pytest.approx(7 / 101)
    note = calm.bolts["A"].failures_note
    assert "0.111 tuples/s spare" in note and "S replays up to 0.0693 tuples/s" in note
    busy = rate_check(parse_topology(shared(GROWING_TTF)))
    assert busy.bolts["A"].status == "grows"  # nominal replays: 2 tuples/s against 1/0.9
    assert "C's failures" in busy.bolts["A"].failures_note
    assert busy.bolts["C"].status == "bounded"  # C's queue empties at each failure and it keeps up anyway
    exact = failure_margins(parse_topology(shared(BOUNDED_TTF)))
    assert exact is not None and exact["A"][0] == 1 + Fraction(7, 101) and exact["A"][1] == Fraction(10, 9)
    assert failure_margins(parse_topology(shared(BOUNDED_TTF, failures=False))) is None
    off = rate_check(parse_topology(shared(GROWING_TTF, failures=False)))
    assert not off.failures and off.bolts["A"].status == "bounded" and off.bolts["A"].inflow_failures is None


def test_check_prints_a_line_per_bolt_about_failures_and_json_has_the_figures(tmp_path: Path) -> None:
    path = tmp_path / "t.storm.json"
    path.write_text(json.dumps(shared(BOUNDED_TTF)))
    cmd = [sys.executable, "-m", "app", "check", str(path)]
    text = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    # one line per bolt (figures only); -v gives the reasons in full
    assert "Failures (docs/boundedness.md; -v for the reasons in full):" in text
    assert "- A (bounded): receives at most" in text and "- C (bounded): receives at most" in text
    assert "with failures A receives at most" not in text and "ignore failures" in text
    block = text.split("Failures (docs/boundedness.md; -v for the reasons in full):\n")[1].split("\n\n")[0]
    assert len(block.splitlines()) == 3  # A, C and the spout S
    full = subprocess.run([sys.executable, "-m", "app", "-v", "check", str(path)], capture_output=True, text=True,
                          check=True).stdout
    assert "- A (bounded): with failures A receives at most" in full and "- C (bounded): with failures" in full
    data = json.loads(subprocess.run([*cmd, "--json"], capture_output=True, text=True, check=True).stdout)
    assert data["failures"]["replay_rate"]["S"] == pytest.approx(7 / 101)
    assert data["bolts"]["A"]["queue_bound"] > 0 and data["bolts"]["C"]["lost_per_failure"] == 7
    path.write_text(json.dumps(shared(BOUNDED_TTF, failures=False)))
    plain = json.loads(subprocess.run([*cmd, "--json"], capture_output=True, text=True, check=True).stdout)
    assert "failures" not in plain and "lost_per_failure" not in plain["bolts"]["A"]
    assert plain["bolts"]["A"]["queue_bound"] > 0  # every bounded bolt has its bound, failures or not


def test_replay_none_at_once_and_cycles() -> None:
    none = rate_check(parse_topology(shared(GROWING_TTF, replay="none")))
    assert none.bolts["A"].status == "bounded" and none.replay_rate["S"] == 0
    # at once, the replays of a failure go out while C is still down and are lost again: S emits at most twice
    # while C is down (2 s), so one failure loses C's one tuple, then 1 + 1, then 1 + 2 (docs/boundedness.md,
    # "At once: a failure's storm"): 6 per 101 s, within A's spare
    burst = rate_check(parse_topology(shared(BOUNDED_TTF, replay="at-once")))
    assert burst.bolts["A"].status == "bounded" and burst.bolts["C"].lost_per_failure == 6
    assert burst.replay_rate["S"] == pytest.approx(6 / 101)
    assert "while C is down S emits at most 2 times" in burst.bolts["A"].failures_note
    # C fed by two at-once spouts: the storm is not bounded, and the curves' feedback has no fixpoint, so nothing
    # the replays reach is proven (documented limit)
    both = rate_check(parse_topology(chain(replay="at-once")))
    assert both.bolts["A"].status == "may-grow" and "not proven bounded" in both.bolts["A"].failures_note
    assert both.replay_rate["S"] is None
    data = chain()
    data["subscriptions"].append({"source": "D", "target": "A"})
    data["bolts"][2].update(sigma=0.1, parallelism=2)
    assert rate_check(parse_topology({**data, "settings": {**data["settings"], "failures": False}})).all_bounded()
    cyclic = rate_check(parse_topology(data))
    assert cyclic.failures and cyclic.bolts["A"].status != "bounded"
    assert "cycle" in cyclic.bolts["A"].failures_note


def test_curve_excess_is_the_largest_gap_over_every_breakpoint() -> None:
    rng = random.Random(7)
    for _ in range(500):
        pieces = tuple((Fraction(rng.randint(0, 20), rng.randint(1, 5)),
                        Fraction(rng.randint(0, 30), rng.randint(1, 4))) for _ in range(rng.randint(1, 6)))
        curve, rate = Curve(pieces), Fraction(rng.randint(0, 20), rng.randint(1, 5))
        if min(r for r, _ in pieces) > rate:
            assert curve.excess(rate) is None
            continue
        points = {Fraction(0)} | {(b2 - b1) / (r1 - r2) for r1, b1 in pieces for r2, b2 in pieces
                                  if r1 > r2 and b2 > b1}
        assert curve.excess(rate) == max(curve.at(w) - rate * w for w in points)  # type: ignore[operator]


# ---------------------------------------------------------------------------------------------------------
# A random-run stepper of docs/model.md sections 2 and 7 (acyclic topologies, every stream `default`)


def _pick(rng: random.Random, lo: Fraction, hi: Fraction) -> Fraction:
    """A time in [lo, hi], often an end (the extremes are where bounds are tight)."""
    roll = rng.random()
    if roll < 0.3 or lo == hi:
        return lo
    if roll < 0.6:
        return hi
    return lo + (hi - lo) * Fraction(rng.randint(0, 1000), 1000)


class Run:
    """One random legal run; records what the bounds speak about."""

    def __init__(self, topo: Topology, seed: int, horizon: Fraction, model: FailureModel | None = None):
        self.topo, self.rng = topo, random.Random(seed)
        model = model or failure_model(topo)
        assert model is not None
        self.model = model
        s = topo.settings
        self.tau, self.idle, self.rule = Fraction(str(s.tolerance)), Fraction(str(s.max_idle_time)), s.emission
        self.order = [c.id for c in topo.spouts] + _topological(topo)
        self.inputs = topo.inputs()
        self.horizon = horizon
        self.times: list[Fraction] = []
        ids = [c.id for c in topo.components]
        self.arrivals: dict[str, list[int]] = {c: [] for c in ids}
        self.emitted: dict[str, list[int]] = {c: [] for c in ids}
        self.added: dict[str, list[int]] = {c.id: [] for c in topo.spouts}
        self.queues: dict[str, list[int]] = {b.id: [] for b in topo.bolts}
        self.backlogs: dict[str, list[int]] = {c.id: [] for c in topo.spouts}
        self.losses: dict[str, list[int]] = {b.id: [] for b in topo.bolts}
        self.relost = 0  # positions where a failed bolt lost replays a spout sent while it was down

    def fail_time(self, up: Fraction, bolt: str) -> Fraction | None:
        roll = self.rng.random()
        if roll < 0.05:
            return None  # it may never fail again
        earliest = up + self.model.min_ttf[bolt]
        return earliest if roll < 0.6 else earliest + Fraction(self.rng.randint(0, 4000), 1000)

    def go(self) -> Run:
        rng, topo = self.rng, self.topo
        spout = {s.id: dict(next=Fraction(0), R=0, a=1 / Fraction(str(s.rate)), burst=s.burst) for s in topo.spouts}
        bolt = {b.id: dict(Q=topo.settings.init_queues, P=0, carry=Fraction(0), emit_at=None,
                           take_at=Fraction(0) if topo.settings.init_queues else None, failed=False, fail_at=None,
                           recover_at=None, worst=1, eligible=Fraction(0), alpha=Fraction(str(b.alpha)),
                           C=b.parallelism if b.duration_window is None else 10**9, sigma=Fraction(str(b.sigma)),
                           gap=self.gap(b), last_take=None)
                for b in topo.bolts}
        self.bolt = bolt  # (the bolts' state, for a player that times its choices by it)
        for st in bolt.values():  # a timer's first run, with the initial tuples, comes within G of the start
            if st["gap"] is not None and st["take_at"] is not None:
                st["take_at"] = _pick(rng, Fraction(0), st["gap"])
        for j, st in bolt.items():
            if j in self.model.min_ttf:
                st["fail_at"] = self.fail_time(Fraction(0), j)
                st["eligible"] = self.model.min_ttf[j]
        t = Fraction(0)
        while t <= self.horizon:
            self.times.append(t)
            out: dict[str, int] = {}
            add: dict[str, int] = {s: 0 for s in spout}
            replayed = 0
            for c in self.order:
                if c in spout:
                    sp = spout[c]
                    self.backlogs[c].append(sp["R"])
                    n = 0
                    if sp["next"] == t:
                        n = self.burst(c, t, sp["burst"])
                        mode = self.model.replay
                        rep = min(sp["R"], n) if mode == "paced" else sp["R"] if mode == "at-once" else 0
                        sp["R"] -= rep
                        replayed += rep
                        sp["next"] = t + self.spout_gap(c, t, (n - self.tau) * sp["a"],
                                                       (n + self.tau) * sp["a"])
                        n += rep
                    out[c] = n
                    self.emitted[c].append(n)
                    self.arrivals[c].append(0)
                    continue
                st = bolt[c]
                arrived = sum(out.get(u, 0) for u, _ in self.inputs.get(c, []))
                self.arrivals[c].append(arrived)
                self.queues[c].append(st["Q"])
                emitted = 0
                if st["failed"] and st["recover_at"] == t:
                    st.update(failed=False, Q=0, P=0, carry=Fraction(0), emit_at=None, take_at=None,
                              recover_at=None)
                    st["fail_at"] = self.fail_time(t, c)
                    st["eligible"] = t + self.model.min_ttf[c]
                at_risk = st["Q"] + arrived + st["P"]
                if st["failed"]:
                    self.lose(c, arrived, add)
                    self.relost += bool(arrived and replayed)
                elif self.fails_now(c, st, t, at_risk):
                    # (a failure is allowed at any position once min_ttf has passed: the runs pick
                    # the scheduled time, or a position where the bolt holds as much as it ever did)
                    self.losses[c].append(0)
                    self.lose(c, at_risk, add)
                    st.update(failed=True, Q=0, P=0, carry=Fraction(0), emit_at=None, take_at=None, fail_at=None,
                              recover_at=t + self.reboot())
                else:
                    st["worst"] = max(st["worst"], at_risk)
                    if st["emit_at"] == t:
                        total = st["carry"] + st["P"]
                        emitted = int(st["sigma"] * total) if st["sigma"] else 0
                        if st["sigma"]:
                            rest = total - emitted / st["sigma"]
                            st["carry"] = Fraction(-((-rest.numerator) // rest.denominator)) \
                                if self.rule == "dvert" else rest
                        st.update(P=0, emit_at=None)
                        if st["Q"] + arrived > 0 and st["gap"] is None:
                            st["take_at"] = t + self.take_wait(c)
                    if st["gap"] is not None:
                        self.clock(st, t, arrived)
                    elif st["emit_at"] is None and st["take_at"] is None and st["Q"] + arrived > 0:
                        st["take_at"] = t + self.take_wait(c)
                    if st["emit_at"] is None and st["take_at"] == t:
                        taken = min(st["C"], st["Q"] + arrived)
                        st.update(Q=st["Q"] + arrived - taken, P=taken, take_at=None, last_take=t,
                                  emit_at=t + self.busy(c, st["alpha"] * (1 - self.tau), st["alpha"] * (1 + self.tau)))
                    else:
                        st["Q"] += arrived
                out[c] = emitted
                self.emitted[c].append(emitted)
            for s, n in add.items():
                spout[s]["R"] += n
                self.added[s].append(n)
            nxt = [sp["next"] for sp in spout.values()]
            for st in bolt.values():
                nxt += [x for x in (st["emit_at"], st["take_at"], st["fail_at"], st["recover_at"]) if x is not None]
            t = min(x for x in nxt if x > t)
        return self

    # (the run's choices, one method each, so that a player may push them to an end: `Run`'s are random)
    def reboot(self) -> Fraction:
        return _pick(self.rng, self.model.min_reboot, self.model.max_reboot)

    def burst(self, spout: str, t: Fraction, most: int) -> int:
        """The fresh tuples of a spout's emission (1..C_EMIT)."""
        return self.rng.randint(1, most)

    def spout_gap(self, spout: str, t: Fraction, lo: Fraction, hi: Fraction) -> Fraction:
        """The time to a spout's next emission, within its tolerance."""
        return _pick(self.rng, lo, hi)

    def take_wait(self, bolt: str) -> Fraction:
        """An idle bolt's wait before it takes (within max_idle)."""
        return _pick(self.rng, Fraction(0), self.idle)

    def busy(self, bolt: str, lo: Fraction, hi: Fraction) -> Fraction:
        """A batch's processing time, within the tolerance."""
        return _pick(self.rng, lo, hi)

    def fails_now(self, bolt: str, st: dict[str, Any], t: Fraction, at_risk: int) -> bool:
        """Whether an up bolt that may fail fails at this position: at its scheduled time, or (a failure is allowed at
        any position once min_ttf has passed) at a position where it holds as much as it ever did."""
        return st["fail_at"] == t or (st["fail_at"] is not None and st["eligible"] <= t
                                      and at_risk >= st["worst"] and self.rng.random() < 0.7)

    def gap(self, b: Any) -> Fraction | None:
        """A duration window's G = (1+τ)·max(S, α), from the document (docs/model.md 10.3; None: not a timer)."""
        w = b.duration_window
        if w is None:
            return None
        return (1 + self.tau) * max(Fraction(str(w.interval)), Fraction(str(b.alpha)))

    def clock(self, st: dict[str, Any], t: Fraction, arrived: int) -> None:
        """A timer's next run (docs/model.md 10.3, the timer rule): when its queue stops being empty, the run comes
        at most G after its last take if it is evaluating, else after now; any time from its evaluation's end."""
        if st["Q"] > 0 or arrived == 0 or st["take_at"] is not None:
            return
        evaluating = st["emit_at"] is not None
        start = st["last_take"] if evaluating else t
        st["take_at"] = _pick(self.rng, st["emit_at"] if evaluating else t, start + st["gap"])

    def lose(self, bolt: str, n: int, add: dict[str, int]) -> None:
        """Lost tuples, each replayed once by one of the spouts whose trees reach the bolt (the upper end)."""
        spouts = sorted(self.model.impact.get(bolt, {}))
        if self.model.replay != "none" and spouts:
            for _ in range(n):
                add[self.rng.choice(spouts)] += 1
        self.losses[bolt][-1] += n


def _topological(topo: Topology) -> list[str]:
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_nodes_from(b.id for b in topo.bolts)
    graph.add_edges_from((u, j) for j, ins in topo.inputs().items() for u, _ in ins if u in graph)
    return list(nx.topological_sort(graph))


def worst_window(times: list[Fraction], counts: list[int], rate: Fraction) -> Fraction:
    """max over windows [t_i, t_k] of (tuples at positions i..k) − rate·(t_k − t_i)."""
    best = Fraction(0)
    low: Fraction | None = None  # min over i <= k of (cum before i) − rate·t_i
    cum = 0
    for t, n in zip(times, counts, strict=True):
        start = cum - rate * t
        low = start if low is None or start < low else low
        cum += n
        best = max(best, cum - rate * t - low)
    return best


def test_the_worst_window_reads_every_window_not_only_those_from_the_start() -> None:
    """The helper every curve check here reads: 5 tuples at t = 1 exceed 1·w by 5 in the window [1, 1]."""
    times = [Fraction(0), Fraction(1), Fraction(2)]
    assert worst_window(times, [0, 5, 0], Fraction(1)) == 5
    assert worst_window(times, [1, 0, 3], Fraction(1)) == 3


def assert_within(curve: Curve, times: list[Fraction], counts: list[int], what: str) -> None:
    for rate, burst in curve.pieces:
        seen = worst_window(times, counts, rate)
        assert seen <= burst, f"{what}: a window exceeds {float(rate):.4g}·w + {float(burst):.4g} by {seen - burst}"


def check_run(topo: Topology, check: FailureCheck, run: Run) -> None:
    bounds = check.bounds
    assert bounds is not None
    for b in topo.bolts:
        j = b.id
        queue = bounds.queue[j]
        if queue is not None:
            assert max(run.queues[j]) <= queue, f"{b.name}: queue {max(run.queues[j])} above its bound {queue}"
        assert_within(bounds.inflow[j], run.times, run.arrivals[j], f"{b.name}'s inflow")
        for name, curve in bounds.stream[j].items():
            assert name == "default"
            assert_within(curve, run.times, run.emitted[j], f"{b.name}'s emissions")
        lost = bounds.lost.get(j)
        if lost is not None and run.losses[j]:
            assert max(run.losses[j]) <= lost, f"{b.name} lost {max(run.losses[j])} > {lost} in one failure"
        storm = bounds.storm.get(j)  # its own queue, counted by its pending tuples ("tails over several cycles")
        if storm is not None and storm.queue is not None:
            assert max(run.queues[j]) <= storm.queue, f"{b.name}: queue {max(run.queues[j])} above {storm.queue}"
    for s in topo.spouts:
        assert_within(bounds.stream[s.id]["default"], run.times, run.emitted[s.id], f"{s.name}'s emissions")
        assert_within(bounds.replays[s.id], run.times, run.added[s.id], f"{s.name}'s replays")
        backlog = bounds.backlog[s.id]
        if backlog is not None:
            assert max(run.backlogs[s.id]) <= backlog, f"{s.name}: backlog above {backlog}"


def storming(rate: float = 2, tau: float = 0.1, min_ttf: float = 20) -> dict[str, Any]:
    """Random #28 of the sweep (bench/verdict_sweep.py): S replays at once into B0, which fails, and B1."""
    return {
        "name": "storm",
        "spouts": [{"name": "S", "rate": rate, "burst": 1}],
        "bolts": [{"name": "B0", "alpha": 0.391, "sigma": 2, "parallelism": 2, "min_ttf": min_ttf},
                  {"name": "B1", "alpha": 0.51, "sigma": 1, "parallelism": 2}],
        "subscriptions": [{"source": "S", "target": "B0"}, {"source": "S", "target": "B1"}],
        "settings": {"tolerance": tau, "max_idle_time": 0, "min_reboot_time": 1, "max_reboot_time": 2,
                     "replay": "at-once"},
    }


def slow_taker(min_ttf: float, replay: str) -> dict[str, Any]:
    """The shared topology with C slower than S's gap (α 1.5 s, batches of two): tuples wait while C processes, so
    what C holds at a failure reaches the arrivals of L + α(1+τ), not of L alone (a bound that counted L alone is
    refuted by these runs)."""
    data = shared(min_ttf, replay=replay)
    data["bolts"][1].update(alpha=1.5, parallelism=2)
    return data


CASES = [("shared-100", shared(BOUNDED_TTF)), ("shared-2", shared(GROWING_TTF)),
         ("shared-tol", shared(10, tolerance=0.1, max_idle_time=0.02)),
         ("chain", chain()), ("chain-dvert", chain(emission="dvert")),
         ("chain-none", chain(replay="none")),
         ("once-2", shared(GROWING_TTF, replay="at-once")),
         ("slow-none", slow_taker(5, "none")), ("slow-once", slow_taker(40, "at-once")),
         ("storm-28", storming()), ("storm-fast", storming(rate=3, tau=0.1, min_ttf=10))]


@pytest.mark.parametrize(("name", "data"), CASES, ids=[c[0] for c in CASES])
def test_no_random_run_exceeds_the_bounds(name: str, data: dict[str, Any]) -> None:
    topo = parse_topology(data)
    model = failure_model(topo)
    assert model is not None
    e = RateFigures(topo)
    check = failure_check(topo, e, model, {b.id: "bounded" for b in topo.bolts})
    assert check.bounds is not None, name
    failed = relost = 0
    for seed in range(4):
        run = Run(topo, seed, Fraction(300)).go()
        check_run(topo, check, run)
        failed += sum(len(v) for v in run.losses.values())
        relost += run.relost
    assert failed > 0  # the runs did fail and recover
    if model.replay == "at-once":  # the storm bounded the loss, and the runs lost replays again while down
        assert check.bounds.storm and relost > 0, name


def timed_chain(replay: str = "paced", emission: str = "exact", *, above: bool = False) -> dict[str, Any]:
    """A duration window W (a timer, docs/model.md 10.3) below the failing bolt F, or above it (`above`), with jitter,
    bursts and initial queues; above, W's evaluations outlast its sliding interval (they run back to back)."""
    window = {"kind": "duration", "length": 3, "slide": 1.5} if above else {"kind": "duration", "length": 2, "slide": 1}
    bolts = [{"name": "F", "alpha": 0.05, "sigma": 0.5, "parallelism": 3, "min_ttf": 20},
             {"name": "W", "alpha": 2 if above else 0.3, "sigma": 1 if above else 0.5, "parallelism": 1,
              "window": window},
             {"name": "D", "alpha": 0.1, "sigma": 0, "parallelism": 1}]
    order = ["S", "W", "F", "D"] if above else ["S", "F", "W", "D"]
    subs = [{"source": a, "target": b} for a, b in zip(order, order[1:], strict=False)]
    subs.append({"source": "T", "target": "W"})
    return {"schema_version": 4, "name": "timed", "spouts": [{"name": "S", "rate": 2, "burst": 2},
                                                            {"name": "T", "rate": 0.5, "burst": 1}],
            "bolts": bolts, "subscriptions": subs,
            "settings": {"tolerance": 0.1, "max_idle_time": 0.05, "init_queues": 2, "min_reboot_time": 0.5,
                         "max_reboot_time": 1.5, "replay": replay, "emission": emission}}


def fast_timer() -> dict[str, Any]:
    """S at 10 tuples/s into W (a run every 2 s) into the failing F: each of W's runs takes about 20 tuples at once,
    so its emission curve's G is reached (a bound without it fails here)."""
    return {"schema_version": 4, "name": "fast", "spouts": [{"name": "S", "rate": 10, "burst": 1}],
            "bolts": [{"name": "W", "alpha": 0.1, "sigma": 1, "parallelism": 1,
                       "window": {"kind": "duration", "length": 4, "slide": 2}},
                      {"name": "F", "alpha": 0.05, "sigma": 0, "parallelism": 4, "min_ttf": 10}],
            "subscriptions": [{"source": "S", "target": "W"}, {"source": "W", "target": "F"}],
            "settings": {"tolerance": 0, "max_idle_time": 0, "min_reboot_time": 0.5, "max_reboot_time": 1,
                         "replay": "paced"}}


TIMED = [("timer-below", timed_chain()), ("timer-below-none-dvert", timed_chain("none", "dvert")),
         ("timer-above", timed_chain(above=True)), ("timer-above-none", timed_chain("none", above=True)),
         ("timer-above-fast", fast_timer())]


@pytest.mark.parametrize(("name", "data"), TIMED, ids=[c[0] for c in TIMED])
def test_no_random_run_through_a_timer_exceeds_the_bounds(name: str, data: dict[str, Any]) -> None:
    """docs/boundedness.md, "Failures through a timer": a duration window below the failing bolt (its inflow carries
    the replays) or above it (its evaluations' bursts feed the failing bolt's losses), paced and none: no queue, loss,
    backlog or window count of a random run passes the bounds, and the runs do fill W's queue and fail F."""
    topo = parse_topology(data)
    model = failure_model(topo)
    assert model is not None
    check = failure_check(topo, RateFigures(topo), model, {b.id: "bounded" for b in topo.bolts})
    assert check.bounds is not None, name
    w = topo.bolt_by_name("W").id
    assert check.bolts[w].status == "bounded"  # (above F without replays, nothing reaches it: failure-free words)
    assert "its timer takes whatever arrived" in check.bolts[w].note or not check.bolts[w].reached
    from app.core.latency.bounds import LatencyAnalysis

    latency = LatencyAnalysis(topo).bolts  # (its arrival curves through the timer: docs/latency.md)
    filled = 0
    for seed in range(2):
        run = Run(topo, seed, Fraction(120)).go()
        check_run(topo, check, run)
        for j, bolt in latency.items():
            if bolt.arrival is not None:
                assert_within(bolt.arrival, run.times, run.arrivals[j], f"{bolt.name}'s arrivals (latency)")
        assert run.losses[topo.bolt_by_name("F").id]
        filled = max(filled, max(run.queues[w]))
    assert filled >= 4  # (a timer's queue is what arrived since its last run: the runs let it fill)


@pytest.mark.parametrize("replay", ["paced", "none"])
def test_no_random_run_in_which_the_timer_dies_exceeds_the_bounds(replay: str) -> None:
    """Worker deaths read every bolt as a failing bolt (docs/boundedness.md, "Worker deaths" 1), a timer too: W
    fails as F does (its queue and its run lost, what arrives while it is down lost, then a fresh timer), and
    no queue, loss or window count of a random run passes the pass's bounds ("Failures through a timer", 6)."""
    import dataclasses

    topo = parse_topology(timed_chain(replay))
    plain = failure_model(topo)
    assert plain is not None
    w = topo.bolt_by_name("W").id
    model = dataclasses.replace(plain, min_ttf={**plain.min_ttf, w: Fraction(15)})
    check = failure_check(topo, RateFigures(topo), model, {b.id: "bounded" for b in topo.bolts})
    assert check.bounds is not None and check.bounds.lost[w] is not None
    lost = 0
    for seed in range(2):
        run = Run(topo, seed, Fraction(120), model).go()
        check_run(topo, check, run)
        lost = max(lost, max(run.losses[w], default=0))
    assert lost >= 4  # (W's deaths did lose what it held)


def test_the_latency_arrival_curve_below_a_timer_counts_its_initial_tuples() -> None:
    """docs/latency.md, "Arrival curves" 4, the timer: W's first run takes its Q₀ initial tuples and what arrived
    within G at once, so the curve of what reaches F below it counts both (not the larger of the two)."""
    from app.core.latency.bounds import LatencyAnalysis

    data = fast_timer()
    data["settings"].update(init_queues=10, replay="none")  # (no replays: W's inflow curve is tight)
    topo = parse_topology(data)
    f = topo.bolt_by_name("F").id
    arrival = LatencyAnalysis(topo).bolts[f].arrival
    assert arrival is not None
    for seed in range(3):
        run = Run(topo, seed, Fraction(30)).go()
        assert_within(arrival, run.times, run.arrivals[f], "F's arrivals (latency)")


ROOT = Path(__file__).resolve().parents[2]
DVERT = ROOT / "tests" / "data" / "dvert"


def test_check_failures_on_reads_the_dvert_failure_fields() -> None:
    path = DVERT / "icfem-focused-crawler-reduced-cfg-6.json"
    if not path.exists():
        pytest.skip("tests/data/dvert (the published D-VerT configurations) is missing")
    cmd = [sys.executable, "-m", "app", "check", "--json", str(path)]
    off = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    assert "failures" not in off  # the published runs switched failures off
    on = json.loads(subprocess.run([*cmd, "--failures", "on"], capture_output=True, text=True, check=True).stdout)
    assert on["failures"]["replay_rate"]["wpSpout"] > 0
    assert {b["status"] for b in on["bolts"].values()} == {"bounded"}
    assert all(b["queue_bound"] is not None for b in on["bolts"].values())


def test_no_random_run_exceeds_the_bounds_of_a_published_configuration_with_failures_on() -> None:
    """focused-crawler cfg-6 with its own min_ttf (1000 s) and reboot bounds (10..100 s): failures lose
    up to a few hundred tuples, which the runs here come close to."""
    path = DVERT / "icfem-focused-crawler-reduced-cfg-6.json"
    if not path.exists():
        pytest.skip("tests/data/dvert (the published D-VerT configurations) is missing")
    from app.core.formats import load_topology

    plain = load_topology(str(path))
    topo = plain.model_copy(update={"settings": plain.settings.model_copy(update={"failures": True})})
    model = failure_model(topo)
    assert model is not None
    check = failure_check(topo, RateFigures(topo), model, {b.id: "bounded" for b in topo.bolts})
    assert check.bounds is not None
    for seed in range(2):
        run = Run(topo, seed, Fraction(2500)).go()
        check_run(topo, check, run)
        assert sum(len(v) for v in run.losses.values()) > 0


def random_topology(rng: random.Random) -> dict[str, Any]:
    """A small acyclic topology with random speeds, ratios, failures and settings."""
    spouts = [{"name": f"S{i}", "rate": rng.choice([0.5, 1, 2]), "burst": rng.randint(1, 2)}
              for i in range(rng.randint(1, 2))]
    bolts: list[dict[str, Any]] = []
    subs: list[dict[str, str]] = []
    for i in range(rng.randint(2, 4)):
        bolt: dict[str, Any] = {"name": f"B{i}", "alpha": rng.choice([0.05, 0.1, 0.2]),
                                "sigma": rng.choice([0, 0.5, 1, 1.5]), "parallelism": rng.randint(1, 3)}
        if rng.random() < 0.25:  # a duration window: a timer, never failing (docs/model.md 10.3)
            bolt["window"] = {"kind": "duration", "length": rng.choice([1, 2, 4]), "slide": rng.choice([0.5, 1])}
            bolt["alpha"] = rng.choice([0.2, 0.6, 1.5])
        elif rng.random() < 0.5:
            bolt["min_ttf"] = rng.choice([5, 20, 60])
        earlier = [s["name"] for s in spouts] + [b["name"] for b in bolts]
        for source in rng.sample(earlier, rng.randint(1, min(2, len(earlier)))):
            subs.append({"source": source, "target": bolt["name"]})
        bolts.append(bolt)
    if not any("min_ttf" in b for b in bolts):
        bolts[0].pop("window", None)
        bolts[0]["min_ttf"] = 10
    return {"schema_version": 4, "name": "random", "spouts": spouts, "bolts": bolts, "subscriptions": subs,
            "settings": {"tolerance": rng.choice([0, 0.1, 0.2]), "max_idle_time": rng.choice([0, 0.02]),
                         "init_queues": rng.randint(0, 2), "min_reboot_time": 0.5,
                         "max_reboot_time": rng.choice([0.5, 1, 3]), "replay": rng.choice(["paced", "none"]),
                         "emission": rng.choice(["exact", "dvert"])}}


def test_no_random_run_of_a_random_topology_exceeds_the_bounds() -> None:
    rng = random.Random(2024)
    checked = timed = 0
    for _ in range(40):
        topo = parse_topology(random_topology(rng))
        model = failure_model(topo)
        assert model is not None
        check = failure_check(topo, RateFigures(topo), model, {b.id: "bounded" for b in topo.bolts})
        if check.bounds is None:
            continue
        check_run(topo, check, Run(topo, rng.randint(0, 10**6), Fraction(150)).go())
        checked += 1
        timed += any(b.duration_window is not None and check.bolts[b.id].reached for b in topo.bolts)
    assert checked >= 15  # most random topologies get bounds, and each was checked against a run
    assert timed >= 5  # among them, timers that failures or replays reach ("Failures through a timer")


def test_no_random_run_of_a_random_at_once_topology_exceeds_the_bounds() -> None:
    """At-once replays: where a spout feeds a failing bolt directly, its storm bounds the loss per failure (docs/
    boundedness.md, "At once: a failure's storm"); the runs lose replays again while the bolt is down."""
    rng = random.Random(7)
    storms = relost = 0
    for _ in range(12):
        data = random_topology(rng)
        data["settings"]["replay"] = "at-once"
        topo = parse_topology(data)
        model = failure_model(topo)
        assert model is not None
        check = failure_check(topo, RateFigures(topo), model, {b.id: "bounded" for b in topo.bolts})
        if check.bounds is None:
            continue
        run = Run(topo, rng.randint(0, 10**6), Fraction(100)).go()
        check_run(topo, check, run)
        storms += bool(check.bounds.storm)
        relost += bool(check.bounds.storm and run.relost)
    assert storms >= 4 and relost >= 1  # storms bounded losses, and a run lost replays again under one


def _with_parallelism(topo: Topology, values: dict[str, int | None]) -> Topology:
    return topo.model_copy(update={"bolts": [b.model_copy(update={"parallelism": values.get(b.name) or b.parallelism})
                                             for b in topo.bolts]})


@pytest.mark.parametrize("name", ["failover", "focused-crawler-reduced-cfg-1", "focused-crawler-reduced-cfg-4",
                                  "focused-crawler-reduced-cfg-5", "simple-DIA-cfg-1"])
def test_with_failures_on_the_suggested_parallelism_is_proven_bounded_with_failures(name: str) -> None:
    """The suggestion with failures on is one the failure-aware check proves: applied, every bolt is
    bounded with failures; the failure-free suggestion applied is not (replays need more)."""
    from app.core.formats import load_topology

    path = ROOT / "models" / "failover.storm.json" if name == "failover" else DVERT / f"icfem-{name}.json"
    if not path.exists():
        pytest.skip("tests/data/dvert (the published D-VerT configurations) is missing")
    topo = load_topology(path)
    topo = topo.model_copy(update={"settings": topo.settings.model_copy(update={"failures": True})})
    free = rate_check(topo.model_copy(update={"settings": topo.settings.model_copy(update={"failures": False})}))
    report = rate_check(topo)
    assert report.failures and all(v is not None for v in report.suggested_parallelism.values())
    repaired = rate_check(_with_parallelism(topo, report.suggested_parallelism))
    assert repaired.failures and repaired.all_bounded(), {n: b.status for n, b in repaired.bolts.items()}
    naive = rate_check(_with_parallelism(topo, free.suggested_parallelism))
    assert not naive.all_bounded()
    for bolt, value in report.suggested_parallelism.items():  # and on these, one less loses the proof
        if value is not None and value > free.suggested_parallelism[bolt]:  # type: ignore[operator]
            one_less = {**report.suggested_parallelism, bolt: value - 1}
            fewer = rate_check(_with_parallelism(topo, one_less), suggest=False)
            assert not fewer.all_bounded(), bolt
    assert all(report.suggested_parallelism[n] >= v for n, v in free.suggested_parallelism.items() if v)  # type: ignore[operator]


def test_with_failures_on_no_suggestion_where_the_check_proves_nothing() -> None:
    # a cycle: nothing a failure reaches is proven with failures, so no value is suggested for it, while
    # the failure-free suggestion exists; the headroom still reads the failure-free one (no amplifying cycle)
    from app.core.headroom import headroom

    data = chain()
    data["subscriptions"].append({"source": "D", "target": "A"})
    data["bolts"][2].update(sigma=0.1, parallelism=2)
    topo = parse_topology(data)
    free_topo = topo.model_copy(update={"settings": topo.settings.model_copy(update={"failures": False})})
    free = rate_check(free_topo)
    assert all(v is not None for v in free.suggested_parallelism.values())
    report = rate_check(topo)
    assert report.suggested_parallelism["A"] is None
    assert headroom(topo).grows_at == headroom(free_topo).grows_at
    # at-once replays of a bolt two spouts feed: no fixpoint, no proof, no suggestion for what they reach
    burst = rate_check(parse_topology(chain(replay="at-once")))
    assert burst.suggested_parallelism["A"] is None


def test_suggest_false_leaves_the_suggestion_out_and_the_statuses_alone() -> None:
    topo = parse_topology(chain())
    full, quick = rate_check(topo), rate_check(topo, suggest=False)
    assert quick.suggested_parallelism == {} and full.suggested_parallelism
    assert {n: b.status for n, b in quick.bolts.items()} == {n: b.status for n, b in full.bolts.items()}


@pytest.mark.parametrize("data", [shared(BOUNDED_TTF), shared(GROWING_TTF), chain(), chain("at-once"),
                                  chain(emission="dvert")], ids=["rare", "frequent", "chain", "at-once", "dvert"])
def test_without_the_nominal_estimate_the_same_bolts_are_bounded(data: dict[str, Any]) -> None:
    """The suggestion's checks skip the nominal replay estimate: it only words what is not bounded."""
    from app.core.rates.verdicts import status_of as _status

    topo = parse_topology(data)
    e, model = RateFigures(topo), failure_model(topo)
    assert model is not None
    status = {b.id: _status(e, b.id) for b in topo.bolts}
    full = failure_check(topo, e, model, status)
    quick = failure_check(topo, e, model, status, nominal_estimate=False)
    assert {j for j, b in full.bolts.items() if b.status == "bounded"} == \
        {j for j, b in quick.bolts.items() if b.status == "bounded"}
    assert all(quick.bolts[j].status != "grows" or status[j] == "grows" for j in quick.bolts)

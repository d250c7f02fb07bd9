"""Deaths of a worker that runs part of a bolt's executors and a spout's (docs/model.md 9.5, "Part of a bolt" and "A
spout's executors"): the simulation plays them, the certifier checks them on its own copy of the rule and rejects
traces that break it, `verify` reports a topology that survives a single bolt's failure but not its worker's death,
and no played death passes the rate check's worker-death bounds (docs/boundedness.md, "Worker deaths").

`tests/data/workers/half-worker.storm.json`: S (1 tuple/s, 2 executors) feeds A (2 executors, fast, failing alone at
most every 1000 s, section 7) feeds B (90 % busy, 5 tuples queued at time 0); worker 1 runs one executor of S and one
of A, worker 0 the rest and the acker."""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import z3

from app.core.failures import failures_off
from app.core.formats.trace import Trace
from app.core.rates import rate_check
from app.core.tcn.check.certify import certify
from app.core.tcn.check.certify_deaths import DeathState, bolt_share, death_rules
from app.core.tcn.decode import decode
from app.core.tcn.encode import Encoding
from app.core.tcn.encode_deaths import death_rule
from app.core.tcn.network import build_network
from app.core.tcn.search import SearchOptions, verify
from app.core.tcn.search_deaths import REPLAYS_PER_BATCH
from app.core.tcn.search_solver import SOLVER_OPTIONS
from app.core.tcn.simulate import build_lasso
from app.core.tcn.simulate_deaths import death_plan
from app.core.topology import parse_topology
from app.core.workers import worker_model
from tests.unit.test_worker_check import Sim, replays, within
from tests.unit.test_worker_check import check as worker_check_of

HALF = Path(__file__).resolve().parents[1] / "data" / "workers" / "half-worker.storm.json"


def lasso_of(data: dict[str, Any], target: str = "B") -> dict[str, Any] | None:
    topo = parse_topology(data)
    net = build_network(failures_off(topo), [target])
    model = worker_model(topo)
    assert model is not None
    plan = death_plan(net, model, REPLAYS_PER_BATCH * net.bolts[-1].take_max)
    assert plan is not None
    trace = build_lasso(net, target, deaths=plan).trace
    if trace is None:
        return None
    assert isinstance(trace, Trace)
    return trace.model_dump(mode="json")


@pytest.fixture(scope="module")
def half_trace() -> dict[str, Any]:
    trace = lasso_of(json.loads(HALF.read_text()))
    assert trace is not None
    return trace


def events(trace: dict[str, Any], what: str) -> list[int]:
    return [i for i, p in enumerate(trace["positions"]) if p.get("workers", {}).get("w1", {}).get(what)]


def test_a_death_takes_the_dead_executors_share_and_stops_the_spout(half_trace: dict[str, Any]) -> None:
    cert = certify(half_trace, ["B"])
    assert cert.ok and cert.growth_per_loop["B"] > 0, cert.problems[:3]
    pos = half_trace["positions"]
    deaths, restarts = events(half_trace, "death"), events(half_trace, "restart")
    assert len(deaths) >= 3 and deaths[-1] >= half_trace["loop_start"]
    for d in deaths:
        a = pos[d]["bolts"]["A"]
        assert not a.get("fail") and a.get("phase") != "failed"  # A goes on, on its executor left
        assert a.get("lost", 0) == -(-(a["queue"] + a["arrivals"]) // 2)  # ⌈k·X/p⌉ with k = 1, p = 2
        back = next(r for r in restarts if r > d)
        for i in range(d + 1, back + 1):  # S emits nothing while w1 is down (its restart included)
            assert not pos[i]["spouts"]["S"].get("emit"), i
        for i in range(d, back):  # A takes one tuple at most: its executor left
            assert pos[i]["bolts"]["A"]["batch"] <= 1 or not pos[i]["bolts"]["A"]["take"]
        first = next(i for i in range(back + 1, len(pos)) if pos[i]["spouts"]["S"].get("emit"))
        assert Fraction(pos[first]["time"]) - Fraction(pos[back]["time"]) == 1  # one period after the restart
        flight = sum(pos[d]["bolts"][b]["queue"] + pos[d]["bolts"][b]["arrivals"] + pos[d - 1]["bolts"][b]["batch"]
                     for b in ("A", "B"))
        replays = pos[d]["workers"]["w1"].get("replays", {}).get("S", 0)
        assert 0 < replays <= min(flight, a.get("lost", 0) + flight // 2)  # its lost tuples and S's half


def storm(trace: dict[str, Any], **fields: Any) -> dict[str, Any]:
    out = copy.deepcopy(trace)
    out["topology"]["storm"].update(fields)
    return out


def settings(trace: dict[str, Any], **fields: Any) -> dict[str, Any]:
    out = copy.deepcopy(trace)
    out["topology"]["settings"].update(fields)
    return out


def bolt(trace: dict[str, Any], name: str, **fields: Any) -> dict[str, Any]:
    out = copy.deepcopy(trace)
    next(b for b in out["topology"]["bolts"] if b["name"] == name).update(fields)
    return out


def first_death(trace: dict[str, Any], change: Any, after: int = 0) -> dict[str, Any]:
    """The trace with the position `after` positions past its first death changed."""
    out = copy.deepcopy(trace)
    change(out["positions"][events(out, "death")[0] + after])
    return out


MUTATIONS = [
    ("a death too early", lambda t: storm(t, worker_min_ttf=15), "before storm.worker_min_ttf 15"),
    # while w1 is down, A loses its dead executor's share of what arrives, not more
    ("a loss while down", lambda t: first_death(t, lambda p: p["bolts"]["A"].update(
        lost=p["bolts"]["A"].get("lost", 0) + 1), after=1), "share of its executors"),
    # w1 runs no executor of S: S must keep emitting, and the death replays only A's lost tuples
    ("no spout executor", lambda t: storm(t, assignment={**t["topology"]["storm"]["assignment"], "S": [2, 0]}),
     "more than"),
    # A wholly on w1: it would fail at every death of w1
    ("a whole bolt", lambda t: storm(t, assignment={**t["topology"]["storm"]["assignment"], "A": [0, 2]}),
     "does not fail at its worker w1"),
    ("replays before the timeout", lambda t: storm(t, message_timeout_secs=12), "no death's replays are due here"),
    # section 7's failures on: a bolt fails alone or with its worker in a trace, never both
    ("failures on", lambda t: settings(bolt(t, "A", min_ttf=1000), failures=True), "no worker may die in a trace"),
    ("the spout emits while down", lambda t: first_death(
        t, lambda p: p["spouts"]["S"].update(emit=True, emitted=1), after=1), "emits while a worker running"),
    ("the bolt loses nothing", lambda t: first_death(t, lambda p: p["bolts"]["A"].update(lost=0)),
     "share of its executors"),
    ("more replays than in flight", lambda t: first_death(
        t, lambda p: p["workers"]["w1"].update(replays={"S": 60})), "more than"),
    # w1 runs the acker too: every tree in flight breaks, but S cannot replay more trees than it has tuples in flight
    ("replays beyond a spout's trees", lambda t: storm(first_death(t, lambda p: p["workers"]["w1"].update(
        replays={"S": 4 + sum(b["queue"] + b["arrivals"] for b in p["bolts"].values())})),  # (batches: 3 at most)
        assignment={**t["topology"]["storm"]["assignment"], "__acker": [0, 1]}), "its trees have in flight"),
]


@pytest.mark.parametrize(("name", "mutate", "words"), MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_the_certifier_rejects_a_trace_that_breaks_the_rule(half_trace: dict[str, Any], name: str, mutate: Any,
                                                            words: str) -> None:
    cert = certify(mutate(half_trace), ["B"])
    assert not cert.ok and any(words in p for p in cert.problems), (name, cert.problems[:3])


def test_verify_says_b_survives_a_bolts_failure_but_not_its_workers_death() -> None:
    topo = parse_topology(json.loads(HALF.read_text()))
    assert rate_check(topo).bolts["B"].status == "bounded"  # with A failing alone (section 7)
    result = verify(topo, SearchOptions(timeout_s=60))
    assert result.bolts["B"].verdict == "bounded" and set(result.worker_death_lassos) == {"B"}
    assert certify(result.worker_death_traces[result.worker_death_lassos["B"]], ["B"]).ok
    note = next(n for n in result.notes if n.startswith("worker deaths (docs/model.md 9.5)"))
    assert "B grows by" in note and "running 1 of A's 2 executors and 1 of S's 2 executors" in note
    assert "B survives a single bolt's failure" in note and "but not its workers' deaths" in note


VARIANTS = [(0.9, (1, 1), (1, 1)), (0.9, (2, 1), (1, 1)), (0.9, (1, 2), (2, 1)), (0.95, (1, 1), (2, 1)),
            (0.95, (2, 1), (1, 1)), (0.95, (1, 2), (1, 1))]  # B's α, A's and S's executors on (w0, w1)


def test_no_played_death_passes_the_rate_checks_bounds() -> None:
    """The rate check's worker-death bounds (docs/boundedness.md, "Worker deaths": a death of a worker running k of a
    bolt's p executors loses at most k/p of its loss, the replays obey each spout's curve, a bounded queue stays below
    its bound) hold in every death the simulation plays, over variants of the example (B's load, how A's and S's
    executors are split; the certifier accepts such lassos: the tests above)."""
    played = 0
    for alpha, (a0, a1), (s0, s1) in VARIANTS:
        data = json.loads(HALF.read_text())
        data["bolts"][1]["alpha"] = alpha
        data["bolts"][0]["parallelism"], data["spouts"][0]["executors"] = a0 + a1, s0 + s1
        data["storm"]["assignment"].update(A=[a0, a1], S=[s0, s1])
        trace = lasso_of(data)
        if trace is None:
            continue
        topo, check = worker_check_of(data, data["storm"]["worker_min_ttf"])
        assert check.bounds is not None
        ids = {c.name: c.id for c in topo.components}
        pos = trace["positions"]
        for d in events(trace, "death"):
            played += 1
            back = next((r for r in events(trace, "restart") if r > d), len(pos) - 1)
            lost = sum(pos[i]["bolts"]["A"].get("lost", 0) for i in range(d, back))
            assert check.loss[1] is not None and lost <= check.loss[1], (alpha, a1, lost, check.loss[1])
        added = [(Fraction(p["time"]), p["workers"]["w1"]["released"]["S"]) for p in pos
                 if p.get("workers", {}).get("w1", {}).get("released")]
        assert within(check.bounds.replays[ids["S"]], added), (alpha, a1, s1)
        bound = check.bounds.queue.get(ids["A"])
        assert bound is None or max(p["bolts"]["A"]["queue"] for p in pos) <= bound
    assert played >= 10


def short() -> dict[str, Any]:
    """S (1 tuple/s, two executors) feeds X (two executors, 0.5 s a tuple) feeds A (75 % busy, 5 tuples at time 0);
    worker 1 runs one executor of S and one of X and may die 3 s after its restart, back 1 s later; the trees come
    back at once at the 2 s timeout."""
    return {
        "name": "half short", "schema_version": 4, "spouts": [{"name": "S", "rate": 1, "burst": 1, "executors": 2}],
        "bolts": [{"name": "X", "alpha": 0.5, "sigma": 1, "parallelism": 2},
                  {"name": "A", "alpha": 0.75, "sigma": 1, "parallelism": 1}],
        "subscriptions": [{"source": "S", "target": "X"}, {"source": "X", "target": "A"}],
        "settings": {"tolerance": 0, "max_idle_time": 0, "min_reboot_time": 1, "max_reboot_time": 1,
                     "replay": "at-once", "init_queues": 5},
        "storm": {"workers": 2, "message_timeout_secs": 2, "worker_min_ttf": 3, "acker_executors": 1,
                  "assignment": {"S": [1, 1], "X": [1, 1], "A": [1, 0], "__acker": [1, 0]}}}


def pinned(trace: dict[str, Any], mutations: list[dict[int, int]]) -> list[z3.CheckSatResult | dict[str, Any]]:
    """One encoding of the trace's topology (with section 9.5's deaths) at the trace's k, solved with every position's
    time, the spout's emissions, the workers' deaths and restarts and the loop's start pinned to the trace's, once per
    mutation (the spout's emissions changed at its positions): the decoded lasso when it has one, else the answer."""
    topo = parse_topology(trace["topology"])
    net = build_network(topo, ["A"])
    model = worker_model(topo)
    assert model is not None
    rule = death_rule(net, model)
    assert rule is not None and rule.partial and rule.spouts
    enc = Encoding(net, trace["k"], z3.Context(), solver_options=dict(SOLVER_OPTIONS), deaths=rule)
    deaths = enc.failures.deaths if enc.failures is not None else None
    assert deaths is not None
    out: list[z3.CheckSatResult | dict[str, Any]] = []
    for spout_at in mutations:
        enc.solver.push()
        for i, p in enumerate(trace["positions"]):
            w = p.get("workers", {}).get("w1", {})
            enc.add(enc.time[i] == z3.RealVal(p["time"], enc.ctx), enc.loop_start[i] == (i == trace["loop_start"]),
                    enc.spouts["S"].emitted[i] == spout_at.get(i, p["spouts"]["S"].get("emitted", 0)),
                    deaths.workers["w1"].death[i] == bool(w.get("death")),
                    deaths.workers["w1"].restart[i] == bool(w.get("restart")))
        answer = enc.solver.check()
        out.append(decode(enc, enc.solver.model()).model_dump(mode="json") if answer == z3.sat else answer)
        enc.solver.pop()
    return out


def test_the_encoding_plays_the_same_rule() -> None:
    """The solver's encoding (app/core/tcn/encode_deaths.py) admits the simulation's lasso with a partial bolt's and a
    spout's deaths, and the lasso it decodes passes the certifier; with the spout emitting at its worker's restart
    (a legal emission without the death) it has none."""
    trace = lasso_of(short(), "A")
    assert trace is not None and certify(trace, ["A"]).ok
    restart = events(trace, "restart")[0]
    assert not trace["positions"][restart]["spouts"]["S"].get("emit")
    solved, refused = pinned(trace, [{}, {restart: 1}])
    assert isinstance(solved, dict) and refused == z3.unsat
    cert = certify(solved, ["A"])
    assert cert.ok and cert.growth_per_loop["A"] > 0, cert.problems[:3]


class ExecutorSim(Sim):
    """test_worker_check.py's tree-by-tree random run, executor by executor, with the document's explicit assignment:
    a bolt's executors each have their own queue and receive its tuples in turn (shuffle grouping), a spout's
    executors emit its tuples in turn (a dead one's turn emits nothing) and each remembers the trees it emitted, a
    death loses its executors' queues and work and its ackers' trees, and a restarted spout executor re-emits its
    pending trees."""

    def __init__(self, data: dict[str, Any], seed: int, horizon: int) -> None:
        single = copy.deepcopy(data)
        for b in single["bolts"]:
            b["parallelism"] = 1
        super().__init__(single, Fraction(data["storm"]["worker_min_ttf"]), seed, Fraction(horizon))
        self.bolts = {b["name"]: b for b in data["bolts"]}
        rows = data["storm"]["assignment"]
        self.on: dict[str, list[int]] = {c: [x for x, n in enumerate(rows[c]) for _ in range(n)] for c in rows}
        self.acker_workers = self.on["__acker"]
        self.turn = dict.fromkeys(self.on, 0)
        self.xqueue = {(b, e): [] for b in self.bolts for e in range(len(self.on[b]))}
        self.xwork: dict[tuple[str, int], list[int]] = {key: [] for key in self.xqueue}
        self.emitter: dict[int, int] = {}  # tree -> the spout executor that emitted it

    def next_of(self, c: str) -> int:
        e = self.turn[c]
        self.turn[c] = (e + 1) % len(self.on[c])
        return e

    def emit(self, t: Fraction, s: str) -> None:
        e = self.next_of(s)  # this executor's turn: it emits when its worker is up
        sp = self.spouts[s]
        a = 1 / Fraction(str(sp["rate"]))
        self.at(t + self.pick(a * (1 - self.tau), a * (1 + self.tau)), "emit", s)
        if not self.alive[self.on[s][e]]:
            return
        replayed = min(self.backlog[s], 1)
        self.backlog[s] -= replayed
        for _ in range(1 + replayed):
            if self.pending_cap is not None and sum(self.emitter[x] == e for x in self.pending[s]) >= self.pending_cap:
                self.backlog[s] += 1  # (max.spout.pending, per executor: nextTuple is not called; it waits)
                continue
            tree = next(self.tree_ids)
            self.trees[tree] = dict(spout=s, t=t, open=0, lost=False, acker=self.rng.choice(self.acker_workers),
                                    ack_ok=True, done=False)
            self.emitter[tree] = e
            self.pending[s].add(tree)
            self.at(t + self.T + self.T * Fraction(self.rng.randint(0, 100), 100), "timeout", tree)
            self.send(t, s, tree)

    def send(self, t: Fraction, source: str, tree: int) -> None:
        for target in self.subs.get(source, []):
            self.trees[tree]["open"] += 1
            e = self.next_of(target)
            if not self.alive[self.on[target][e]]:
                self.trees[tree]["lost"] = True
                continue
            self.xqueue[(target, e)].append(tree)
            self.take(t, (target, e))

    def take(self, t: Fraction, key: Any) -> None:  # type: ignore[override]
        b = key[0]
        queue, work = self.xqueue[key], self.xwork[key]
        if not work and queue:
            work.append(queue.pop(0))
            alpha = Fraction(str(self.bolts[b]["alpha"]))
            self.at(t + self.pick(alpha * (1 - self.tau), alpha * (1 + self.tau)), "done", (key, work[0]))
        self.queues[b] = max(self.queues[b], sum(len(q) for (c, _), q in self.xqueue.items() if c == b))

    def done(self, t: Fraction, data: Any) -> None:
        key, tree = data
        if self.xwork[key] != [tree]:
            return  # (the worker died meanwhile: this work is gone)
        self.xwork[key] = []
        if self.bolts[key[0]]["sigma"]:
            self.send(t, key[0], tree)
        tr = self.trees[tree]
        tr["open"] -= 1
        if tr["open"] == 0 and not tr["lost"] and tr["ack_ok"] and not tr["done"]:
            tr["done"] = True
            self.pending[tr["spout"]].discard(tree)
            self.completion[tr["spout"]] = max(self.completion[tr["spout"]], t - tr["t"])
        self.take(t, key)

    def die(self, t: Fraction, x: int) -> None:
        self.alive[x] = False
        lost = 0
        for (b, e), queue in self.xqueue.items():
            if self.on[b][e] == x:
                for tree in queue + self.xwork[(b, e)]:
                    self.trees[tree]["lost"] = True
                    lost += 1
                self.xqueue[(b, e)], self.xwork[(b, e)] = [], []
        for tree in self.trees.values():
            if tree["acker"] == x and not tree["done"]:
                tree["ack_ok"] = False
        self.losses[x].append(lost)
        self.at(t + self.pick(*self.reboot), "restart", x)

    def restart(self, t: Fraction, x: int) -> None:
        self.alive[x] = True
        for s in self.spouts:  # its spout executors re-emit the trees they had pending
            mine = {tree for tree in self.pending[s] if self.on[s][self.emitter[tree]] == x}
            self.pending[s] -= mine
            self.backlog[s] += len(mine)
            if mine:
                self.added[s].append((t, len(mine)))
        self.at(t + self.min_ttf + self.later(), "die", x)


def spread(a_split: tuple[int, int], s_split: tuple[int, int], acker: tuple[int, int], ttf: int,
           d: tuple[int, int] = (0, 1)) -> dict[str, Any]:
    """test_worker_check.py's S, A (90 % busy), C, D on two workers with A's and S's executors split as given."""
    data = replays(a_executors=sum(a_split), pending=2, worker_min_ttf=ttf, acker_executors=sum(acker))
    data["schema_version"] = 4
    data["spouts"][0]["executors"] = sum(s_split)
    data["storm"]["assignment"] = {"S": list(s_split), "A": list(a_split), "C": [1, 0], "D": list(d),
                                   "__acker": list(acker)}
    return data


SPREADS = [("half of A and of S, nothing whole", spread((1, 1), (1, 1), (1, 0), 100, d=(1, 0))),
           ("a third of A, all of S", spread((2, 1), (0, 2), (1, 0), 60)),
           ("half of A, a spout executor and an acker each", spread((1, 1), (1, 1), (1, 1), 200))]


@pytest.mark.parametrize(("name", "data"), SPREADS, ids=[s[0] for s in SPREADS])
def test_no_random_run_with_partial_deaths_exceeds_the_bounds(name: str, data: dict[str, Any]) -> None:
    """The independent random runs, executor by executor, never pass the rate check's worker-death bounds: a queue, a
    death's loss, the replays in any window, a tree's time (docs/boundedness.md, "Worker deaths")."""
    topo, c = worker_check_of(data, data["storm"]["worker_min_ttf"])
    assert c.bounds is not None
    names = {x.id: x.name for x in topo.components}
    deaths = 0
    for seed in range(3):
        sim = ExecutorSim(data, seed, 300).run()
        deaths += sum(len(v) for v in sim.losses)
        for j, bound in c.bounds.queue.items():
            if bound is not None:
                assert sim.queues[names[j]] <= bound, (name, names[j], sim.queues[names[j]], bound)
        for s, curve in c.bounds.replays.items():
            assert within(curve, sim.added[names[s]]), (name, names[s])
        for x, lost in enumerate(c.loss):
            if lost is not None and sim.losses[x]:
                assert max(sim.losses[x]) <= lost, (name, x, sim.losses[x], lost)
        for s, longest in c.completion.items():
            if longest is not None:
                assert sim.completion[names[s]] <= longest
        if c.survives:
            assert sim.slow_timeouts == 0
    assert deaths > 0


def test_the_random_runs_catch_a_loss_bound_that_forgets_part_of_a_bolt(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison can fail: a per-death loss that counts only the bolts a worker runs whole is exceeded."""
    from app.core.workers import WorkerModel

    whole = WorkerModel.at_most
    monkeypatch.setattr(WorkerModel, "at_most", lambda self, worker, component, executors: (
        n if (n := whole(self, worker, component, executors)) >= executors else 0))
    data = spread((1, 1), (1, 1), (1, 0), 200, d=(1, 0))  # worker 1 runs half of A and of S, nothing whole
    _, c = worker_check_of(data, data["storm"]["worker_min_ttf"])
    assert c.loss[1] == 0  # (the forgetful bound)
    exceeded = 0
    for seed in range(3):
        sim = ExecutorSim(data, seed, 300).run()
        exceeded += any(c.loss[x] is not None and lost > c.loss[x]
                        for x, runs in enumerate(sim.losses) for lost in runs)
    assert exceeded > 0


def test_the_certifiers_share_rule_by_hand() -> None:
    """The certifier's rule for a bolt a dying worker runs part of (`bolt_share`), position by position: A (two
    executors, one in worker 1) holding 4 and receiving 1 at worker 1's death loses ⌈5/2⌉ = 3 and takes one at a time;
    receiving 3 while it is down, ⌈(5 + 3)/2⌉ − 3 = 1 more; at the restart nothing and two at a time again."""
    data = json.loads(HALF.read_text())
    data["bolts"][0].pop("min_ttf")  # (a trace with deaths has section 7's failures off)
    rules = death_rules(parse_topology(data))
    assert rules is not None and rules.workers["w1"].partial == {"A": (1, 2)}
    state, problems = DeathState.initial(rules), []
    share = bolt_share(rules, state, lambda i, who, text: problems.append(text))

    def bolt(queue: int, arrivals: int, lost: int) -> dict[str, Any]:
        return {"queue": queue, "arrivals": arrivals, "lost": lost, "fail": False, "recover": False,
                "phase": "idle", "replays": None, "emit": False}
    assert share(1, "A", bolt(4, 1, 3), {"w1": {"death": True}}, False, 0, 2) == (3, 1)
    state.down["w1"] = True
    assert share(2, "A", bolt(1, 3, 1), {}, False, 0, 2) == (1, 1)
    assert share(3, "A", bolt(3, 2, 0), {"w1": {"restart": True}}, False, 0, 2) == (0, 2)
    assert not problems
    state.down["w1"], state.share["w1"] = False, {}
    share(4, "A", bolt(4, 1, 2), {"w1": {"death": True}}, True, 2, 2)  # a batch of 2 does not fit on one executor
    assert any("loses 2 tuples" in p for p in problems) and any("more than the 1 executors" in p for p in problems)

"""Worker deaths in verify's search (docs/model.md 9.4): the linear program's rows with worker deaths, the checker's
own copy of them, and what the answers say.

The topology is the rate check's worker example (tests/unit/test_worker_check.py): S (1 tuple/s) feeds A (90 %
busy) and C; A feeds D. Here no bolt fails alone (section 7), so the linear program plays the workers' deaths. The
independent simulation is test_worker_check.py's, tree by tree: a worker's death loses its executors' queues and
work and its ackers' state, the lost trees come back at their timeout and a restarted spout re-emits its pending
trees."""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

import pytest

from app.core.results import LinearCertificate
from app.core.tcn.check.content import content_hash
from app.core.tcn.check.linear import check_certificate
from app.core.tcn.linear import LinearRow, build_rows, farkas, linear_message
from app.core.tcn.network import build_network
from app.core.topology import parse_topology
from tests.unit.test_worker_check import Sim, replays


def doc(min_ttf: float | None, workers: int = 2, pending: int | None = 2, a_executors: int = 1,
        **storm: Any) -> dict[str, Any]:
    data = replays(workers=workers, pending=pending, a_executors=a_executors)
    data["bolts"][1].pop("min_ttf")  # C fails only with its worker
    data["schema_version"] = 4
    if min_ttf is not None:
        data["storm"]["worker_min_ttf"] = min_ttf
    data["storm"].update(storm)
    return data


def rows_of(data: dict[str, Any], target: str = "A") -> tuple[Any, list[LinearRow]]:
    net = build_network(parse_topology(data), [target])
    return net, build_rows(net, target)


def certificate(net: Any, multipliers: dict[str, Fraction], target: str = "A") -> tuple[dict[str, Any], Any]:
    cert = LinearCertificate(target=target, content_hash=content_hash(net.topology),
                             rows={n: str(v) for n, v in multipliers.items()})
    return net.document(), cert.model_dump(mode="json")


def proof(data: dict[str, Any]) -> tuple[Any, dict[str, Fraction] | None]:
    net, rows = rows_of(data)
    return net, farkas(rows)


def test_rare_deaths_are_proven_free_of_repeating_growth_and_the_checker_agrees() -> None:
    net, y = proof(doc(200))
    assert y is not None
    assert {"worker-ttf[w0]", "death-replays[S]"} <= set(y)  # the deaths' rows carry the proof
    assert check_certificate(*certificate(net, y)) == []
    assert "worker deaths and their replays at the timeout included" in linear_message(
        net, 0, LinearCertificate(target="A", content_hash="", rows={}))


def test_frequent_deaths_are_not_proven_but_a_single_bolts_growth_free_loop_is() -> None:
    # every 101 s either worker may replay 2 pending trees and 6 emitted while it restarts: 16 per 101 s against
    # A's spare 1/9 tuple/s, less the time A may stand while a worker restarts: no certificate
    assert proof(doc(100))[1] is None
    assert proof(doc(5))[1] is None
    assert proof(doc(None))[1] is not None  # without worker deaths the same loop is proven


def test_with_one_worker_a_death_empties_the_target_so_no_growing_loop_holds_one() -> None:
    net, y = proof(doc(5, workers=1, pending=None))
    assert y is not None and "worker-whole[w0]" in y
    assert check_certificate(*certificate(net, y)) == []
    # the independent simulation: with one worker, every death empties A, whose queue peaks between deaths
    # (paced replays double S for a while) and does not grow from one peak to the next
    for seed in range(2):
        early = Sim(doc(5, workers=1, pending=None), Fraction(5), seed, Fraction(150)).run().queues["A"]
        late = Sim(doc(5, workers=1, pending=None), Fraction(5), seed, Fraction(450)).run().queues["A"]
        assert late <= 2 * early + 10, (seed, early, late)


def test_an_explicit_assignment_is_read_in_the_cone() -> None:
    data = doc(200, assignment={"A": [1, 0], "S": [0, 1], "C": [0, 1], "D": [1, 0], "__acker": [1, 1]})
    net, rows = rows_of(data)
    assert net.topology.storm.assignment == {"A": [1, 0], "S": [0, 1], "__acker": [1, 1]}  # D and C left the cone
    names = {r.name for r in rows}
    assert "worker-whole[w0]" in names and "worker-whole[w1]" not in names  # worker 0 runs all of A
    spout = next(r for r in rows if r.name == "period-lo[S]")
    assert set(spout.coefficients) >= {"X[w1]"} and "X[w0]" not in spout.coefficients  # only worker 1 runs S
    y = farkas(rows)
    assert y is not None and check_certificate(*certificate(net, y)) == []


def forged(data: dict[str, Any], change: Any) -> tuple[dict[str, Any], Any]:
    """A certificate for rows the checker must not accept: the product's rows with `change` applied."""
    net, rows = rows_of(data)
    y = farkas([change(r) for r in rows])
    assert y is not None, "the forged rows must be infeasible, or the test proves nothing"
    return certificate(net, y)


def _restart_forgotten(r: LinearRow) -> LinearRow:
    if r.name != "death-replays[S]":
        return r
    return LinearRow(r.name, r.kind, {v: (Fraction(2) if v.startswith("X") else c) for v, c in r.coefficients.items()})


def _rarer_deaths(r: LinearRow) -> LinearRow:
    if not r.name.startswith("worker-ttf"):
        return r
    return LinearRow(r.name, r.kind, {v: (2 * c if v.startswith("X") else c) for v, c in r.coefficients.items()})


@pytest.mark.parametrize("change", [_restart_forgotten, _rarer_deaths], ids=["restart forgotten", "rarer deaths"])
def test_a_certificate_for_weaker_death_rows_is_rejected(change: Any) -> None:
    assert proof(doc(100))[1] is None
    problems = check_certificate(*forged(doc(100), change))
    assert any("no contradiction" in p for p in problems), problems


def test_a_certificate_that_lets_no_worker_die_is_rejected() -> None:
    net, rows = rows_of(doc(5))
    none_die = rows + [LinearRow(f"worker-whole[w{x}]", "eq", {f"X[w{x}]": Fraction(1)}) for x in (0, 1)]
    y = farkas(none_die)
    assert y is not None
    problems = check_certificate(*certificate(net, y))
    assert any("worker-whole[w" in p and "no such row" in p for p in problems), problems


def test_a_certificate_of_the_rows_without_deaths_is_rejected() -> None:
    calm, y = proof(doc(None))
    assert y is not None
    net, _ = rows_of(doc(5))
    assert check_certificate(*certificate(net, y)) != []


def test_verify_notes_which_bolts_the_linear_program_proves_with_worker_deaths() -> None:
    from app.core.tcn.certificates import certificate_file
    from app.core.tcn.check.files import check_file
    from app.core.tcn.search import verify
    from app.core.tcn.search_deaths import death_proofs

    data = doc(200)
    data["bolts"][0]["alpha"] = 0.95  # A 95 % busy: the replays of its deaths may exceed its spare
    result = verify(parse_topology(data))
    (note,) = [n for n in result.notes if n.startswith("worker deaths in the search")]
    assert "proves that no repeating run grows C, D" in note and "it proves nothing for A" in note
    assert set(result.worker_death_certificates) == {"C", "D"}
    written = certificate_file(parse_topology(data), result.bolts, result.traces, result.worker_death_certificates)
    assert written is not None
    checked = check_file(json.loads(json.dumps(written)))
    assert sorted((name, problems) for name, _, problems in checked) == [("C", []), ("D", [])]
    (calm,) = [n for n in verify(parse_topology(doc(200))).notes if n.startswith("worker deaths in the search")]
    assert "the rate check bounds A, C, D in every run" in calm and "linear program" not in calm  # it survives them
    data["bolts"][1]["min_ttf"] = 100  # C also fails alone: its failures and its worker's deaths in the same rows
    note, proven = death_proofs(parse_topology(data), ["A", "C", "D"], lambda: False)
    assert set(proven) == {"C", "D"} and note is not None and "it proves nothing for A" in note


VARIANTS = {
    "even scheduler, paced": {},
    "three workers, jitter": {"workers": 3, "settings": {"tolerance": 0.2}},
    "explicit assignment": {"assignment": {"A": [1, 1], "S": [1, 0], "C": [0, 1], "D": [1, 0], "__acker": [1, 1]},
                            "a_executors": 2},
    "at once, max.spout.pending": {"settings": {"replay": "at-once"}},
    "at once, no max.spout.pending": {"settings": {"replay": "at-once"}, "pending": None},
    "no acking": {"acker_executors": 0},
    "dvert emission, declared stream": {"settings": {"emission": "dvert"}, "stream": True},
    "a bolt also fails alone": {"alone": True},
    "a bolt also fails alone, at once": {"alone": True, "settings": {"replay": "at-once"}},
}


@pytest.mark.parametrize("name", list(VARIANTS))
def test_the_checker_states_the_builders_death_rows_again(name: str) -> None:
    from tests.unit.test_linear import same_rows

    v = dict(VARIANTS[name])
    settings, stream, alone = v.pop("settings", {}), v.pop("stream", False), v.pop("alone", False)
    storm = {k: v.pop(k) for k in ("assignment", "acker_executors") if k in v}
    data = doc(30, **v, **storm)
    data["settings"].update(settings)
    if alone:
        data["bolts"][1]["min_ttf"] = 100
        data["subscriptions"].append({"source": "C", "target": "D"})  # C's failures replayed, on D's way
        data["bolts"][1]["sigma"] = 1
    if stream:
        data["bolts"][0].update(streams=["audit"], stream_sigma={"audit": 0.5})
        data["subscriptions"].append({"source": "A", "target": "C", "stream": "audit"})
    topo = parse_topology(data)
    for target in ("A", "C", "D"):
        same_rows(topo, target)


class CountingSim(Sim):
    """test_worker_check.py's simulation, counting what the death rows read: each worker's deaths and down time,
    each spout's fresh emissions."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.down_since: dict[int, Fraction] = {}
        self.down = [Fraction(0)] * self.W
        self.fresh = {s: 0 for s in self.spouts}

    def emit(self, t: Fraction, s: str) -> None:
        self.fresh[s] += self.alive[self.where[s]]  # one fresh tuple per emission while its worker is up
        super().emit(t, s)

    def die(self, t: Fraction, x: int) -> None:
        self.down_since[x] = t
        super().die(t, x)

    def restart(self, t: Fraction, x: int) -> None:
        self.down[x] += t - self.down_since.pop(x)
        super().restart(t, x)


def long_restarts() -> dict[str, Any]:
    """Restarts longer than the timeout: a death's replays are mostly the trees S emits while its worker restarts
    (a cap of the pending trees alone is exceeded)."""
    data = doc(20, workers=3, pending=1, message_timeout_secs=5)
    data["settings"].update(min_reboot_time=10, max_reboot_time=20)
    return data


@pytest.mark.parametrize(("data", "seed"), [(doc(20, workers=3, pending=3), 0), (doc(20, workers=3, pending=3), 1),
                                            (long_restarts(), 0), (long_restarts(), 1)])
def test_the_death_rows_hold_on_the_independent_simulation(data: dict[str, Any], seed: int) -> None:
    """Over a simulated run the counts satisfy the rows that are about deaths (up to the run's two ends): the deaths
    and down times per worker, the replays the deaths add against Σ cap·X, the spout's fresh tuples against its
    period with a restart's slack. The caps are the builder's own coefficients."""
    ttf, horizon = 20, Fraction(900)
    lo, hi = Fraction(str(data["settings"]["min_reboot_time"])), Fraction(str(data["settings"]["max_reboot_time"]))
    sim = CountingSim(data, Fraction(ttf), seed, horizon).run()
    _, rows = rows_of(data)
    by_name = {r.name: r for r in rows}
    deaths = [len(lost) for lost in sim.losses]
    assert sum(deaths) >= 10 and sim.slow_timeouts == 0
    down = [d + (horizon - sim.down_since[x] if x in sim.down_since else 0) for x, d in enumerate(sim.down)]
    for x in range(3):
        assert horizon >= down[x] + ttf * deaths[x] - ttf  # worker-ttf (the last up stretch may be cut short)
        assert lo * (deaths[x] - 1) <= down[x] <= hi * deaths[x]  # worker-down-lo/hi (the last may be cut)
    caps = by_name["death-replays[S]"].coefficients
    added = sum(n for _, n in sim.added["S"])
    assert added <= sum(caps[f"X[w{x}]"] * deaths[x] for x in range(3)), (added, caps, deaths)
    period = by_name["period-lo[S]"].coefficients
    a = 1  # S emits 1 tuple/s, burst 1, tolerance 0
    assert a * sim.fresh["S"] <= horizon + 1 + sum(period.get(f"X[w{x}]", 0) * deaths[x] for x in range(3))


def cycle(min_ttf: float) -> dict[str, Any]:
    """S (1/s) feeds A (capacity 2.5/s), which feeds B, which sends half of what it takes back to A: A takes 2/s."""
    return {"schema_version": 4, "name": "cycle", "spouts": [{"name": "S", "rate": 1, "burst": 1}],
            "bolts": [{"name": "A", "alpha": 0.4, "sigma": 1, "parallelism": 1},
                      {"name": "B", "alpha": 0.2, "sigma": 0.5, "parallelism": 1}],
            "subscriptions": [{"source": "S", "target": "A"}, {"source": "A", "target": "B"},
                              {"source": "B", "target": "A"}],
            "settings": {"tolerance": 0, "max_idle_time": 0, "min_reboot_time": 1, "max_reboot_time": 2,
                         "replay": "paced"},
            "storm": {"workers": 2, "message_timeout_secs": 30, "max_spout_pending": 2, "worker_min_ttf": min_ttf}}


def test_a_cycle_the_rate_check_cannot_bound_with_deaths_gets_the_programs_proof() -> None:
    from app.core.rates.report import RateAnalysis
    from app.core.tcn.search_deaths import death_proofs

    topo = parse_topology(cycle(200))
    check = RateAnalysis(topo).worker_check()
    assert check is not None and check.survives is None and "cycle" in check.reason
    note, proven = death_proofs(topo, ["A", "B"], lambda: False)
    assert set(proven) == {"A", "B"} and note is not None
    for name, cert in proven.items():
        net = build_network(topo, [name])
        assert check_certificate(net.document(), cert.model_dump(mode="json")) == []
    # a death every 6 s: each may replay 2 pending trees and 6 emitted while a worker restarts, beyond A's spare
    assert set(death_proofs(parse_topology(cycle(5)), ["A", "B"], lambda: False)[1]) == set()


def test_a_join_is_named_not_proven_by_the_worker_death_phase() -> None:
    from app.core.tcn.search_deaths import death_proofs
    from tests.unit.test_joins import enrichment

    data = enrichment()
    data["storm"] = {**data.get("storm", {}), "workers": 2, "worker_min_ttf": 600, "max_spout_pending": 10}
    data["settings"] = {**data.get("settings", {}), "min_reboot_time": 1, "max_reboot_time": 2}
    topo = parse_topology(data)
    note, proven = death_proofs(topo, [b.name for b in topo.bolts], lambda: False)
    assert note is not None and "join: a join, whose cache no row bounds" in note and "join" not in proven

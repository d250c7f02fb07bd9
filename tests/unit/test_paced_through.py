"""A paced replay backlog bounded per failure cycle through bolts (docs/boundedness.md, "Failures", "Paced: through
bolts"; app/core/rates/through.py): S → U_i → F with F failing, fed by S only through the U_i.

The bounds are checked against exact random legal runs (the stepper of tests/unit/test_rates_failures.py: random
timings within the tolerance and max_idle, failures as soon as min_ttf allows, later, or where the bolt holds the
most, random reboots, one replay per lost tuple), and against runs pushed to the worst timing (S as fast as it may,
every bolt, idle wait and reboot as slow): no queue, loss per failure, backlog of replays, curve, nor the potential
Φ itself (S's backlog + Σ (σ_i/κ)(U_i's holdings and carry) + F's holdings/κ, from its changes: S's fresh tuples
and replays added, less F's losses and completions over κ) may exceed them."""

from __future__ import annotations

import random
from fractions import Fraction
from functools import lru_cache
from typing import Any

import pytest

from app.core.failures import failure_model
from app.core.rates import RateFigures, rate_check
from app.core.rates.failures_check import FailureCheck, failure_check
from app.core.rates.paced import Paced
from app.core.topology import Topology, parse_topology
from tests.unit.test_rates_failures import Run, check_run
from tests.unit.worst_runs import pushed_picks

SETTINGS = {"failures": True, "min_reboot_time": 1, "max_reboot_time": 2, "replay": "paced"}


def r138() -> dict[str, Any]:
    """Random #138 of bench/verdict_sweep.py (seed 46): S → B0 (σ ½) and B1 (σ ½) → B2, which fails every 200 s at
    most. (B0 → B2 is B0's declared stream `side` of ratio ½ there; the stepper plays `default` streams only, and
    B0's `default` stream feeds nothing.)"""
    return {"name": "r138", "spouts": [{"name": "S", "rate": 2.0, "burst": 1}],
            "bolts": [{"name": "B0", "alpha": 0.4, "sigma": 0.5, "parallelism": 2},
                      {"name": "B1", "alpha": 0.46, "sigma": 0.5, "parallelism": 2},
                      {"name": "B2", "alpha": 0.493, "sigma": 1, "parallelism": 2, "min_ttf": 200.0}],
            "subscriptions": [{"source": "B0", "target": "B2"}, {"source": "B1", "target": "B2"},
                              {"source": "S", "target": "B0"}, {"source": "S", "target": "B1"}],
            "settings": {"tolerance": 0.2, "max_idle_time": 0.05, "emission": "exact", **SETTINGS}}


def through(rng: random.Random) -> dict[str, Any]:
    """S (paced) → U (σ 1 or ½), or U and V (σ ½ each, or ½ and ¼) → F, which fails and cannot keep up with twice
    S's fresh tuples; the U_i process from a little more than S's fastest pace to about twice it; B beside U on S,
    D below F; either emission rule (every σ is 1/m)."""
    rate = rng.choice([1, 2])
    burst = rng.choice([1, 1, 2])
    tau = rng.choice([0, 0.1])
    fresh = rate * burst / (burst - tau)  # S's fastest pace
    two = rng.random() < 0.4
    sigmas = rng.choice([[0.5, 0.5], [0.5, 0.25]]) if two else [rng.choice([1, 0.5])]
    ups = ["U", "V"][:len(sigmas)]
    bolts = []
    for name, sigma in zip(ups, sigmas, strict=True):
        c = rng.choice([1, 2])
        alpha = round(c / (fresh * rng.uniform(1.5, 2.4)) / (1 + tau), 3)
        bolts.append({"name": name, "alpha": alpha, "sigma": sigma, "parallelism": c})
    into = fresh * sum(sigmas)  # what F receives from S's fresh tuples at most
    cf = rng.choice([1, 2])
    alpha_f = round(cf / (into * rng.uniform(1.6, 2.2)) / (1 + tau), 3)
    bolts += [{"name": "F", "alpha": alpha_f, "sigma": 1, "parallelism": cf, "min_ttf": rng.choice([30, 40, 60])},
              {"name": "B", "alpha": round(0.3 / rate, 3), "sigma": 1, "parallelism": 1},
              {"name": "D", "alpha": round(0.3 / into, 3), "sigma": 1, "parallelism": 1}]
    subs = ([{"source": "S", "target": u} for u in ups] + [{"source": u, "target": "F"} for u in ups]
            + [{"source": "S", "target": "B"}, {"source": "F", "target": "D"}])
    return {"name": "through", "spouts": [{"name": "S", "rate": rate, "burst": burst}], "bolts": bolts,
            "subscriptions": subs,
            "settings": {"tolerance": tau, "max_idle_time": rng.choice([0, 0.05]),
                         "emission": rng.choice(["exact", "dvert"]),  # σ = 1/m: "dvert" keeps E = σ(c + P − c′)
                         **SETTINGS, "min_reboot_time": 0.5, "max_reboot_time": rng.choice([1, 2])}}


def _check(topo: Topology) -> FailureCheck:
    model = failure_model(topo)
    assert model is not None
    return failure_check(topo, RateFigures(topo), model, {b.id: "bounded" for b in topo.bolts})


def _through_bound(topo: Topology, check: FailureCheck) -> tuple[str, Paced] | None:
    """The failing bolt F bounded through bolts, and its bounds (None: the pass did not bound it so)."""
    found = [(j, p) for j, p in (check.bounds.paced.items() if check.bounds is not None else ()) if p.via]
    return found[0] if found else None


class _Recorded(Run):
    """A run that also records, per position, what each bolt loses there (Φ's changes need it)."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.lost_at: list[tuple[int, str, int]] = []

    def lose(self, bolt: str, n: int, add: dict[str, int]) -> None:
        self.lost_at.append((len(self.times) - 1, bolt, n))
        super().lose(bolt, n, add)


def potential(topo: Topology, run: _Recorded, bolt: str, kappa: Fraction) -> list[Fraction]:
    """Φ before every position but the last, from its changes (all queues start empty): + S's fresh tuples + the
    replays added, − (what F completes + what F loses)/κ. F's σ is 1 under "exact": what it completes it emits."""
    (s,) = [c.id for c in topo.spouts]
    lost = [0] * len(run.times)
    for i, j, n in run.lost_at:
        lost[i] += n if j == bolt else 0
    backlog, added = run.backlogs[s], run.added[s]
    phi, out = Fraction(0), [Fraction(0)]
    for i in range(len(run.times) - 1):
        replayed = backlog[i] + added[i] - backlog[i + 1]
        phi += run.emitted[s][i] - replayed + added[i] - Fraction(run.emitted[bolt][i] + lost[i]) / kappa
        out.append(phi)
    return out


def _play(data: dict[str, Any], seeds: int, cycles: int) -> tuple[int, Fraction]:
    """Plays random runs against every bound and Φ; the largest loss and the largest Φ reached."""
    topo = parse_topology(data)
    check = _check(topo)
    found = _through_bound(topo, check)
    assert found is not None, data["name"]
    j, bound = found
    sigma = {b.id: Fraction(str(b.sigma)) for b in topo.bolts}
    kappa = sum((sigma[u] for u, _ in topo.inputs()[j]), Fraction(0))
    ttf = max(int(b.get("min_ttf", 0)) for b in data["bolts"])
    lost, top = 0, Fraction(0)
    for seed in range(seeds):
        run = _Recorded(topo, seed, Fraction(cycles * (ttf + 2))).go()
        assert isinstance(run, _Recorded)
        check_run(topo, check, run)
        phi = potential(topo, run, j, kappa)
        assert max(phi) <= bound.held, f"{data['name']}: Φ {float(max(phi))} above {float(bound.held)}"
        assert min(phi) >= 0 and phi[-1] == run.backlogs[topo.spouts[0].id][-1] + _held(run, topo, j, kappa), \
            "Φ's changes are Φ"  # (the last position's Φ, by what each holds)
        lost = max(lost, *(max(v, default=0) for v in run.losses.values()))
        top = max(top, max(phi))
    return lost, top


def _held(run: _Recorded, topo: Topology, bolt: str, kappa: Fraction) -> Fraction:
    """What the middle bolts and F hold at the last position, in Φ's units, by their arrivals and emissions:
    cross-checks `potential` (arrivals of U_i less its emissions over σ_i is its holdings and carry)."""
    total = Fraction(0)
    for b in topo.bolts:
        ins = [u for u, _ in topo.inputs().get(b.id, [])]
        if b.id == bolt:
            lost = sum(n for i, j, n in run.lost_at if j == bolt and i < len(run.times) - 1)
            total += Fraction(sum(run.arrivals[b.id][:-1]) - sum(run.emitted[b.id][:-1]) - lost) / kappa
        elif any(u == topo.spouts[0].id for u in ins) and any(b.id == u for u, _ in topo.inputs().get(bolt, [])):
            sigma = Fraction(str(b.sigma))
            total += (sum(run.arrivals[b.id][:-1]) - Fraction(sum(run.emitted[b.id][:-1])) / sigma) * sigma / kappa
    return total


@lru_cache(maxsize=1)
def _cases() -> list[dict[str, Any]]:
    """The random topologies of seed 5 that the pass bounds through bolts (about one in six)."""
    rng = random.Random(5)
    out = []
    for _ in range(60):
        data = through(rng)
        topo = parse_topology(data)
        if _through_bound(topo, _check(topo)) is not None:
            out.append(data)
    return out


def test_random_138_is_bounded_through_its_bolts_and_says_how() -> None:
    """#138: B2's backlog is bounded per failure cycle through B0 and B1, and so are B0 and B1 (S's replays of B2's
    losses are bounded); `check -v` and `check --json` say how."""
    report = rate_check(parse_topology(r138()))
    assert {n: b.status for n, b in report.bolts.items()} == {"B0": "bounded", "B1": "bounded", "B2": "bounded"}
    cycle = report.bolts["B2"].failures_cycle
    assert "which reach B2 through B0 and B1" in cycle and "whichever queue last emptied" in cycle
    assert report.to_public_json()["bolts"]["B2"]["failures_cycle"] == cycle


def test_no_random_run_of_random_138_passes_the_bounds() -> None:
    lost, _ = _play(r138(), 1, 2)
    assert lost > 0


def _kinds() -> list[dict[str, Any]]:
    """The first case of each kind: one or two bolts between, either emission rule."""
    kinds: dict[tuple[int, str], dict[str, Any]] = {}
    for data in _cases():
        kinds.setdefault((len(data["bolts"]), data["settings"]["emission"]), data)
    return list(kinds.values())


def test_no_random_run_through_a_bolt_passes_the_bounds() -> None:
    cases = _kinds()
    assert len(cases) == 4  # U alone or U and V, "exact" or "dvert"
    for data in cases:
        lost, _ = _play(data, 1, 3)
        assert lost > 0  # the runs did fail and replay


@pytest.mark.parametrize("which", ["138", "random"])
def test_no_run_pushed_to_the_worst_timing_passes_the_bounds(which: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """S as fast as it may, every bolt, idle wait and reboot as slow as it may, most of the time."""
    cases = [r138()] if which == "138" else _kinds()[:2]
    for data in cases:
        topo = parse_topology(data)
        monkeypatch.setattr("tests.unit.test_rates_failures._pick", pushed_picks(topo))
        _play(data, 1, 2 if which == "138" else 4)

"""Netting (docs/boundedness.md, "Failures", step 7; app/core/rates/netting.py): a bolt below a failing bolt F
receives what F is sent fresh, not that plus the replays of F's losses, which only replace what F lost; duplicates
(a tree putting two tuples at F, or replays of another bolt's losses that F processes again) are still counted.

The bounds are checked against the exact random runs of tests/unit/test_rates_failures.py (replays at the upper
end: one spout tuple per lost tuple, so a tree through a σ = 2 bolt brings F two tuples per replay, and every
other bolt's losses are replayed through F again)."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import pytest

from app.core.failures import failure_model
from app.core.rates import RateFigures, rate_check
from app.core.rates.curves import Bounds, FailureBounds
from app.core.rates.failures_check import failure_check, failure_components
from app.core.topology import Topology, parse_topology
from tests.unit.test_rates_failures import Run, check_run


def below(replay: str = "paced", *, other: bool = False, double: bool = False) -> dict[str, Any]:
    """S (1 tuple/s) → F (fails every 20 s at most) → J, which keeps up with S's fresh tuples (1.11 against 1) but not
    with F's inflow counted with its replays (1.29). `other`: K below F fails too, so S replays K's losses through F,
    which re-emits them to J (duplicates); `double`: S reaches F through A (σ 2), so one replay brings F two tuples,
    one of them a duplicate (F fails every 60 s at most; J takes 2.5 tuples/s; with K, 1.43)."""
    bolts: list[dict[str, Any]] = [{"name": "F", "alpha": 0.3, "sigma": 1, "parallelism": 2,
                                    "min_ttf": 60 if double else 20},
                                   {"name": "J", "alpha": 0.4 if double else 0.7 if other else 0.9, "sigma": 1,
                                    "parallelism": 1}]
    subs = [("F", "J")]
    if double:
        bolts.append({"name": "A", "alpha": 0.2, "sigma": 2, "parallelism": 1})
        subs += [("S", "A"), ("A", "F")]
    else:
        subs.append(("S", "F"))
    if other:
        bolts.append({"name": "K", "alpha": 0.2, "sigma": 0, "parallelism": 1, "min_ttf": 60})
        subs.append(("F", "K"))
    return {"schema_version": 4, "name": "netting", "spouts": [{"name": "S", "rate": 1, "burst": 1}],
            "bolts": bolts, "subscriptions": [{"source": s, "target": t} for s, t in subs],
            "settings": {"tolerance": 0, "max_idle_time": 0, "min_reboot_time": 0.5, "max_reboot_time": 2,
                         "replay": replay}}


CASES = [("paced", below()), ("paced-other", below(other=True)), ("paced-double", below(double=True)),
         ("once", below("at-once"))]


@pytest.mark.parametrize(("name", "data"), CASES, ids=[c[0] for c in CASES])
def test_the_bolt_below_a_failing_bolt_is_bounded_and_no_random_run_exceeds_its_netted_bounds(
        name: str, data: dict[str, Any]) -> None:
    topo = parse_topology(data)
    model = failure_model(topo)
    assert model is not None
    check = failure_check(topo, RateFigures(topo), model, {b.id: "bounded" for b in topo.bolts})
    bounds = check.bounds
    assert bounds is not None, name
    # J receives S's fresh rate (twice it through A), plus, for duplicates, the losses they stand for
    fresh = Fraction(2 if "double" in name else 1)
    ids = {c.name: c.id for c in topo.components}
    rate = bounds.inflow[ids["J"]].rate
    assert rate is not None and rate >= fresh
    plain = unnetted(topo, bounds).inflow[ids["J"]].rate  # the same pass without step 7
    assert plain is not None and rate < plain and (rate > fresh if "double" in name or "other" in name
                                                   else rate == fresh), name
    verdict = rate_check(topo).bolts["J"]
    assert verdict.status == "bounded" and "step 7, netting" in verdict.failures_note, name
    replayed = 0
    for seed in range(3):
        run = Run(topo, seed, Fraction(200)).go()
        check_run(topo, check, run)
        replayed += sum(run.added[ids["S"]])
    assert replayed > 0  # the runs did lose tuples and replay them


def test_what_a_bolt_holds_at_a_windows_start_counts() -> None:
    """S (2 tuples/s, jitter) → F (fails, at once) → J (fast), both starting with 6 tuples queued: in the first
    windows F and J pass on their initial tuples on top of what S sends (a net form without the held tuples X_U is
    refuted by these runs)."""
    data = {"schema_version": 4, "name": "primed", "spouts": [{"name": "S", "rate": 2, "burst": 1}],
            "bolts": [{"name": "F", "alpha": 0.4, "sigma": 1, "parallelism": 1, "min_ttf": 10},
                      {"name": "J", "alpha": 0.1, "sigma": 1, "parallelism": 1}],
            "subscriptions": [{"source": "S", "target": "F"}, {"source": "F", "target": "J"}],
            "settings": {"tolerance": 0.1, "max_idle_time": 0.02, "min_reboot_time": 0.5, "max_reboot_time": 1,
                         "replay": "at-once", "init_queues": 6}}
    topo = parse_topology(data)
    model = failure_model(topo)
    assert model is not None
    check = failure_check(topo, RateFigures(topo), model, {b.id: "bounded" for b in topo.bolts})
    assert check.bounds is not None
    for seed in range(3):
        check_run(topo, check, Run(topo, seed, Fraction(40)).go())


def unnetted(topo: Topology, bounds: Bounds) -> Bounds:
    """The failure pass under the same replays without netting (step 7)."""
    model = failure_model(topo)
    assert model is not None
    e = RateFigures(topo)
    return FailureBounds(failure_components(topo, e, model), e.graph, model, topo.settings.init_queues).run(
        bounds.replays)


def _below(a: Fraction | None, b: Fraction | None) -> bool:
    return a is not None and (b is None or a < b)


def chains(rng: random.Random) -> dict[str, Any]:
    """A small acyclic topology in which every bolt is fed by the one before (and at times a spout), half of them
    failing: failing bolts above failing and steady ones, paced or at once."""
    spouts = [{"name": f"S{i}", "rate": rng.choice([0.5, 1, 2]), "burst": rng.randint(1, 2)}
              for i in range(rng.randint(1, 2))]
    bolts: list[dict[str, Any]] = []
    subs: list[dict[str, str]] = []
    for i in range(rng.randint(2, 4)):
        bolt: dict[str, Any] = {"name": f"B{i}", "alpha": rng.choice([0.05, 0.1, 0.2]),
                                "sigma": rng.choice([0.5, 1, 1, 2]), "parallelism": rng.randint(1, 3)}
        if i == 0 or rng.random() < 0.5:
            bolt["min_ttf"] = rng.choice([3, 10, 30])
        sources = [bolts[-1]["name"]] if bolts else [spouts[0]["name"]]
        if bolts and rng.random() < 0.3:
            sources.append(rng.choice([s["name"] for s in spouts]))
        subs += [{"source": s, "target": bolt["name"]} for s in sources]
        bolts.append(bolt)
    return {"schema_version": 4, "name": "chains", "spouts": spouts, "bolts": bolts, "subscriptions": subs,
            "settings": {"tolerance": rng.choice([0, 0.1]), "max_idle_time": rng.choice([0, 0.02]),
                         "init_queues": rng.randint(0, 1), "min_reboot_time": 0.5,
                         "max_reboot_time": rng.choice([1, 3]), "replay": rng.choice(["paced", "at-once"]),
                         "emission": rng.choice(["exact", "dvert"])}}


def test_no_random_run_of_a_random_chain_of_failing_bolts_exceeds_the_netted_bounds() -> None:
    rng = random.Random(46)
    checked = netted = 0
    for _ in range(14):
        topo = parse_topology(chains(rng))
        model = failure_model(topo)
        assert model is not None
        check = failure_check(topo, RateFigures(topo), model, {b.id: "bounded" for b in topo.bolts})
        if check.bounds is None:
            continue
        check_run(topo, check, Run(topo, rng.randint(0, 10**6), Fraction(80)).go())
        checked += 1
        plain = unnetted(topo, check.bounds)  # a bolt whose inflow step 7 lowered
        netted += any(_below(check.bounds.inflow[b.id].rate, plain.inflow[b.id].rate) for b in topo.bolts)
    assert checked >= 8 and netted >= 3

"""The simulation's schedules are ranked with a fluid growth estimate in floats (app/core/tcn/schedule.py,
`expected_growth`; docs/simulation.md, "Ranking in floats"). The ranking only decides which schedules are
simulated and in which order; every lasso found is certified exactly. Checked here against the same ranking in
exact fractions: the same schedules in the same order, on the published configurations (failures on and off) and
on layered topologies of the scale bench."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from app.cli.inputs import read_topology
from app.core.rates import rate_check
from app.core.tcn.network import build_network
from app.core.tcn.schedule import schedules
from app.core.topology import Topology
from tests.layered_topologies import layered_topology

DVERT = Path(__file__).resolve().parents[1] / "data" / "dvert"


def _same_ranking(topo: Topology) -> int:
    """Compares both rankings for every bolt the rate check does not prove bounded; gives how many were compared."""
    compared = 0
    for name, status in rate_check(topo).bolts.items():
        if status.status in ("bounded", "no-repeating-growth"):
            continue
        net = build_network(topo, [name])
        assert list(schedules(net, name)) == list(schedules(net, name, number=Fraction)), (topo.name, name)
        compared += 1
    return compared


@pytest.mark.parametrize("path", sorted(p.name for p in DVERT.glob("*.json") if "expected" not in p.name))
def test_floats_rank_the_published_configurations_as_fractions_do(path: str) -> None:
    topo = read_topology(str(DVERT / path))
    _same_ranking(topo)
    if any(b.min_ttf is not None for b in topo.bolts):
        _same_ranking(topo.model_copy(update={"settings": topo.settings.model_copy(update={"failures": True})}))


@pytest.mark.parametrize("size,seed", [(60, 0), (100, 1), (200, 2)])
def test_floats_rank_layered_topologies_as_fractions_do(size: int, seed: int) -> None:
    assert _same_ranking(layered_topology(size, seed, emission="dvert", flow_denominator=8)) >= 2

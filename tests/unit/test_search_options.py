"""SearchOptions (app/core/tcn/options.py): one checked options object for every search, free of z3."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from app.core.formats import load_topology
from app.core.tcn.options import SearchOptions

ROOT = Path(__file__).resolve().parents[2]


def test_defaults_take_the_documents_bounds() -> None:
    topo = load_topology(ROOT / "models" / "simple-DIA-cfg-1.storm.json")  # k = 15, k_max = 40
    assert SearchOptions().deepest(topo) == 15
    assert SearchOptions(k_max=8).deepest(topo) == 8
    assert SearchOptions(k=3, k_max=8).deepest(topo) == 3
    unset = topo.model_copy(update={"verification": topo.verification.model_copy(update={"k": None})})
    assert SearchOptions().deepest(unset) == 40


@pytest.mark.parametrize(("changes", "words"), [
    ({"k": 1}, "k must be at least 2, got 1"),
    ({"k_max": 0}, "k_max must be at least 2, got 0"),
    ({"threshold": 0}, "threshold must be at least 1, got 0"),
    ({"timeout_s": 0.0}, "timeout_s must be positive, got 0.0"),
    ({"widen_s": -1.0}, "widen_s must be positive, got -1.0"),
    ({"loop_clocks": "loose"}, "loop_clocks must be 'equal' or 'region', got 'loose'"),
])
def test_bad_options_are_refused_in_words(changes: dict, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        SearchOptions(**changes)
    with pytest.raises(ValueError, match=words):
        SearchOptions().with_changes(**changes)


def test_options_are_frozen_and_compare_by_value() -> None:
    options = SearchOptions(force_search=True)
    with pytest.raises(AttributeError):
        options.k = 5  # type: ignore[misc]  # the point: frozen
    assert options == SearchOptions(force_search=True) and options != SearchOptions()
    assert options.with_changes(simulate=False) == SearchOptions(force_search=True, simulate=False)


def test_building_options_loads_no_solver() -> None:
    code = "import sys, app.core.tcn.options as o; o.SearchOptions(k_max=8); print('z3' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"

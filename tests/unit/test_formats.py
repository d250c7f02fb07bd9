"""Our document format and D-VerT JSON in both dialects: import, export, round trips."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.fileio import write_output
from app.core.formats import FormatError, load_topology, topology_from_data
from app.core.formats.dvert import dialect, from_dvert, to_dvert, to_dvert_bytes
from app.core.topology import Topology, parse_topology

MODELS = Path(__file__).resolve().parents[2] / "models"


def dvert_files(dvert_dir: Path) -> list[Path]:
    return sorted(p for p in dvert_dir.glob("*.json") if "outcomes" not in p.name)


def test_every_published_file_imports(dvert_dir: Path) -> None:
    files = dvert_files(dvert_dir)
    assert len(files) == 14
    for path in files:
        topo = load_topology(path)
        assert topo.spouts and topo.bolts, path
        assert set(topo.layout) == {c.id for c in topo.components}, path


def test_older_dialect_burst_and_tolerance(dvert_dir: Path) -> None:
    data = json.loads((dvert_dir / "icfem-simple-DIA-cfg-1.json").read_text())
    assert dialect(data) == "older"
    topo = from_dvert(data)
    assert topo.settings.tolerance == 0.1
    assert [s.burst for s in topo.spouts] == [2, 2]  # base_quantity
    assert topo.verification.k == 15
    assert sorted(b.name for b in topo.checked_bolts()) == ["B2", "B3"]
    assert topo.settings.max_idle_time == 0.01 and topo.settings.init_queues == 2
    b2 = topo.bolt_by_name("B2")
    assert (b2.alpha, b2.sigma, b2.parallelism) == (4.0, 0.5, 6)
    assert sorted(c.name for c in topo.sources_of(b2.id)) == ["S1", "S2"]


def test_newer_dialect_burst_tolerance_and_case_insensitive_subs(dvert_dir: Path) -> None:
    data = json.loads((dvert_dir / "example-wikistats.json").read_text())
    assert dialect(data) == "newer"
    topo = from_dvert(data)
    assert topo.settings.tolerance == 0.04
    assert topo.spouts[0].burst == 2  # spout parallelism
    link = topo.bolt_by_name("LinkCounterBolt")
    assert [c.name for c in topo.sources_of(link.id)] == ["WikiArticleSpout"]


def test_time_bound_and_max_proc_rate() -> None:
    data = {
        "app_name": "x",
        "topology": {
            "spouts": [{"id": "S", "avg_emit_rate": 2.0, "parallelism": 3}],
            "bolts": [{"id": "B", "subs": ["s"], "max_proc_rate": 4.0, "sigma": 1.0, "parallelism": 2}],
            "max_idle_time": 0.5,
            "init_queues": 1,
        },
        "verification_params": {"time_bound": 12, "strictly_monotonic_queues": ["b"]},
    }
    topo = from_dvert(data)
    assert topo.bolt_by_name("B").alpha == 0.5  # parallelism / max_proc_rate
    assert topo.verification.k == 12 and topo.settings.tolerance == 0.04
    assert [b.name for b in topo.checked_bolts()] == ["B"]


def test_explicit_tolerance_wins(dvert_dir: Path) -> None:
    data = json.loads((dvert_dir / "icfem-simple-DIA-cfg-2.json").read_text())
    data["topology"]["tolerance"] = 0.2
    assert from_dvert(data).settings.tolerance == 0.2


def test_import_export_import_is_identity(dvert_dir: Path) -> None:
    for path in dvert_files(dvert_dir):
        first = load_topology(path)
        again = topology_from_data(json.loads(json.dumps(to_dvert(first))))
        assert again.semantics() == first.semantics(), path
        assert again.verification.k == first.verification.k


def test_dvert_errors_name_the_field() -> None:
    bad = {"topology": {"spouts": [{"id": "S", "avg_emit_rate": 1}],
                        "bolts": [{"id": "B", "subs": ["X"], "alpha": 1, "sigma": 1, "parallelism": 1}]}}
    with pytest.raises(FormatError, match="bolts.B.subs: unknown component 'X'"):
        from_dvert(bad)
    bad["topology"]["bolts"][0]["subs"] = ["S"]
    bad["topology"]["bolts"][0]["alpha"] = -1
    with pytest.raises(Exception, match="bolts.B.alpha"):
        from_dvert(bad)


def test_models_are_valid_and_laid_out() -> None:
    files = sorted(MODELS.glob("*.storm.json"))
    assert len(files) == 12
    for path in files:
        topo = load_topology(path)
        assert set(topo.layout) == {c.id for c in topo.components}, path
        xs = {(p.x, p.y) for p in topo.layout.values()}
        assert len(xs) == len(topo.layout), f"{path}: overlapping nodes"


def test_models_match_published_configurations(dvert_dir: Path) -> None:
    for path in dvert_files(dvert_dir):
        if not path.name.startswith("icfem-"):
            continue
        ours = load_topology(MODELS / (path.name[len("icfem-"):-len(".json")] + ".storm.json"))
        assert ours.semantics() == load_topology(path).semantics()


@pytest.mark.parametrize("content", ["", "   ", "{", "[1, 2]", '"text"', '{"spouts": 3}'])
def test_malformed_files(tmp_path: Path, content: str) -> None:
    path = tmp_path / "bad.storm.json"
    path.write_text(content)
    with pytest.raises(Exception) as info:
        load_topology(path)
    assert type(info.value).__name__ in {"FormatError", "TopologyError"}


def save(topo: Topology, path: Path) -> None:
    """What File > Save does (app/gui/window_files.save_to): the format's bytes through the one writer."""
    data = to_dvert_bytes(topo) if path.name.endswith(".dvert.json") else topo.to_json_bytes()
    write_output(path, data, force=True)


def test_save_is_atomic_and_round_trips(tmp_path: Path) -> None:
    topo = load_topology(MODELS / "simple-DIA-cfg-1.storm.json")
    target = tmp_path / "out.storm.json"
    target.write_text("old")
    save(topo, target)
    assert load_topology(target) == topo
    assert [p.name for p in tmp_path.iterdir()] == ["out.storm.json"]  # no temp file left
    save(topo, tmp_path / "out.dvert.json")
    assert load_topology(tmp_path / "out.dvert.json").semantics() == topo.semantics()


# ---- property test: random valid topologies survive a save/load round trip ----

names = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789", min_size=1, max_size=8)
positive = st.floats(min_value=0.001, max_value=1000, allow_nan=False, allow_infinity=False)


@st.composite
def topologies(draw) -> Topology:
    all_names = draw(st.lists(names, min_size=2, max_size=7, unique=True))
    n_spouts = draw(st.integers(1, len(all_names) - 1))
    spouts = [{"name": n, "rate": draw(positive), "burst": draw(st.integers(1, 10))} for n in all_names[:n_spouts]]
    bolts = [
        {"name": n, "alpha": draw(positive), "sigma": draw(st.one_of(st.just(0.0), st.floats(1e-6, 10))),
         "parallelism": draw(st.integers(1, 50))}
        for n in all_names[n_spouts:]
    ]
    edges = draw(st.sets(st.tuples(st.sampled_from(all_names), st.sampled_from(all_names[n_spouts:]))))
    subs = [
        {"source": a, "target": b, "grouping": g, "fields": ["f"] if g == "fields" else []}
        for (a, b), g in zip(sorted(edges), draw(st.lists(st.sampled_from(["shuffle", "fields", "all", "global"]),
                                                          min_size=len(edges), max_size=len(edges))), strict=True)
    ]
    settings_ = {
        "tolerance": draw(st.floats(0, 0.99, allow_nan=False)),
        "max_idle_time": draw(st.one_of(st.just(0.0), st.floats(1e-6, 10))),
        "init_queues": draw(st.integers(0, 20)),
    }
    return parse_topology({"name": draw(names), "spouts": spouts, "bolts": bolts, "subscriptions": subs,
                           "settings": settings_})


@settings(max_examples=60, deadline=None)
@given(topologies())
def test_random_topologies_round_trip(tmp_path_factory, topo: Topology) -> None:
    folder = tmp_path_factory.mktemp("rt")
    save(topo, folder / "t.storm.json")
    assert load_topology(folder / "t.storm.json") == topo
    save(topo, folder / "t.dvert.json")
    assert load_topology(folder / "t.dvert.json").semantics() == topo.semantics()

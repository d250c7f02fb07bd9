"""The failure model's document fields, validation, D-VerT import and the impact Imp(j, s)
(docs/model.md section 7)."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from app.core.failures import UNBOUNDED, failure_model, replay_problem, replay_range
from app.core.formats.dvert import from_dvert, to_dvert
from app.core.tcn.network import build_network, cone_of_influence
from app.core.topology import TopologyError, parse_topology


def doc(**settings: Any) -> dict[str, Any]:
    return {
        "spouts": [{"name": "S", "rate": 1}],
        "bolts": [{"name": "A", "alpha": 0.5, "sigma": 2, "parallelism": 1},
                  {"name": "B", "alpha": 0.5, "sigma": 0.5, "parallelism": 1},
                  {"name": "C", "alpha": 0.5, "sigma": 1, "parallelism": 1, "min_ttf": 5}],
        "subscriptions": [{"source": "S", "target": "A"}, {"source": "A", "target": "B"},
                          {"source": "A", "target": "C"}, {"source": "B", "target": "C"},
                          {"source": "S", "target": "C"}],
        "settings": {"min_reboot_time": 1, "max_reboot_time": 2, **settings},
    }


def problems(data: dict[str, Any]) -> list[str]:
    with pytest.raises(TopologyError) as err:
        parse_topology(data)
    return [str(p) for p in err.value.problems]


def test_bad_failure_fields_name_the_field() -> None:
    data = doc()
    data["bolts"][2]["min_ttf"] = -1
    assert problems(data) == ["bolts.C.min_ttf: input should be greater than or equal to 0"]
    data["bolts"][2]["min_ttf"] = float("inf")
    assert problems(data) == ["bolts.C.min_ttf: input should be a finite number"]
    data = doc(min_reboot_time=3)
    assert problems(data) == ["settings: min_reboot_time (3 s) is above max_reboot_time (2 s)"]
    data = doc(max_reboot_time=0)
    assert problems(data) == ["settings.max_reboot_time: input should be greater than 0"]
    data = doc()
    del data["settings"]["max_reboot_time"]
    assert problems(data)[0].startswith("settings.max_reboot_time: not set: bolts.C.min_ttf makes C fail")
    data = doc()
    data["spouts"][0]["min_ttf"] = 3
    assert problems(data) == ["spouts.S.min_ttf: a spout never fails in the model: only bolts take min_ttf "
                              "(docs/model.md section 7)"]
    assert problems(doc(replay="sometimes"))[0].startswith("settings.replay: input should be")


def test_failure_fields_are_sparse_and_count_only_when_a_bolt_can_fail() -> None:
    plain = parse_topology({"spouts": [{"name": "S", "rate": 1}],
                            "bolts": [{"name": "A", "alpha": 0.5, "sigma": 1, "parallelism": 1}],
                            "subscriptions": [{"source": "S", "target": "A"}]})
    saved = json.loads(plain.to_json_bytes())
    assert "min_ttf" not in saved["bolts"][0]
    assert set(saved["settings"]) == {"tolerance", "max_idle_time", "init_queues", "emission"}
    topo = parse_topology(doc())
    assert failure_model(topo) is not None
    assert json.loads(topo.to_json_bytes())["settings"]["min_reboot_time"] == 1
    off = parse_topology(doc(failures=False))
    assert failure_model(off) is None
    assert off.semantics() != topo.semantics()
    assert "min_reboot_time" not in off.semantics()["settings"]


def test_impact_sums_the_paths() -> None:
    topo = parse_topology(doc())
    model = failure_model(topo)
    assert model is not None
    ids = {c.name: c.id for c in topo.components}
    s = ids["S"]
    # S -> C (1), S -> A -> C (2), S -> A -> B -> C (2 * 1/2): 4 tuples of one tree at C
    assert model.impact[ids["C"]] == {s: Fraction(4)}
    assert model.impact[ids["B"]] == {s: Fraction(2)}
    assert model.impact[ids["A"]] == {s: Fraction(1)}
    assert model.min_ttf == {ids["C"]: Fraction(5)}


def test_impact_through_a_cycle_is_unbounded_and_zero_streams_do_not_count() -> None:
    data = doc()
    data["bolts"].append({"name": "D", "alpha": 0.5, "sigma": 0, "parallelism": 1})
    data["bolts"].append({"name": "E", "alpha": 0.5, "sigma": 1, "parallelism": 1})
    data["subscriptions"] += [{"source": "C", "target": "D"}, {"source": "D", "target": "E"},
                              {"source": "C", "target": "C"}]
    topo = parse_topology(data)
    model = failure_model(topo)
    assert model is not None
    ids = {c.name: c.id for c in topo.components}
    assert model.impact[ids["C"]][ids["S"]] == UNBOUNDED
    assert model.impact[ids["D"]][ids["S"]] == UNBOUNDED
    assert model.impact[ids["E"]] == {}  # only a σ = 0 stream leads there: no tree of S reaches E


def test_replay_ranges() -> None:
    assert replay_range(0, Fraction(4)) == (0, 0)
    assert replay_range(9, Fraction(4)) == (3, 9)
    assert replay_range(9, UNBOUNDED) == (1, 9)
    imp = {"S": Fraction(4), "T": Fraction(1)}
    assert replay_problem(9, {"S": 3}, imp, "paced") is None
    assert "too few" in (replay_problem(9, {"S": 2}, imp, "paced") or "")
    assert "at most one replay per lost tuple" in (replay_problem(9, {"S": 5, "T": 5}, imp, "paced") or "")
    assert replay_problem(9, {"S": 2, "T": 1}, imp, "at-once") is None  # 2*4 + 1*1 = 9
    assert "never reach" in (replay_problem(3, {"U": 1}, imp, "paced") or "")
    assert replay_problem(3, {}, imp, "none") is None
    assert "nothing is replayed" in (replay_problem(3, {"S": 1}, imp, "none") or "")
    assert replay_problem(3, {}, {}, "paced") is None  # no spout's trees reach the bolt (initial queues)


def test_cone_keeps_failing_bolts_that_make_its_spouts_replay() -> None:
    data = doc()
    data["bolts"].append({"name": "F", "alpha": 0.5, "sigma": 1, "parallelism": 1})
    data["spouts"].append({"name": "T", "rate": 1})
    data["subscriptions"].append({"source": "T", "target": "F"})
    topo = parse_topology(data)
    ids = {c.name: c.id for c in topo.components}
    kept = {c.name for c in cone_of_influence(topo, [ids["A"]]).components}
    assert kept == {"S", "A", "B", "C"}  # C fails downstream of S: S's replays reach A
    off = parse_topology({**data, "settings": {**data["settings"], "failures": False}})
    assert {c.name for c in cone_of_influence(off, [off.bolt_by_name("A").id]).components} == {"S", "A"}
    net = build_network(topo, ["A"])
    assert net.failures is not None and net.failures.min_ttf == {"C": Fraction(5)}
    assert net.failures.impact["C"] == {"S": Fraction(4)}


def test_dvert_import_reads_the_failure_fields_and_keeps_them_off(dvert_dir: Path) -> None:
    data = json.loads((dvert_dir / "icfem-simple-DIA-cfg-1.json").read_text())
    topo = from_dvert(data)
    assert {b.name: b.min_ttf for b in topo.bolts} == {"B1": 1000, "B2": 1000, "B3": 1000}
    assert (topo.settings.min_reboot_time, topo.settings.max_reboot_time) == (10, 100)
    assert topo.settings.failures is False and failure_model(topo) is None
    back = from_dvert(to_dvert(topo))
    assert back.semantics() == topo.semantics()
    on = topo.model_copy(update={"settings": topo.settings.model_copy(update={"failures": True})})
    assert from_dvert(to_dvert(on)).semantics() == on.semantics()


def test_the_failover_example_grows_only_with_frequent_failures(capsys, tmp_path: Path) -> None:
    """models/failover.storm.json: bounded without failures and with a long min_ttf (the rate proof),
    a certified lasso with failures and replays when C may fail every 2 s."""
    from app.cli import main

    model = Path(__file__).resolve().parents[2] / "models" / "failover.storm.json"

    def verify(path: Path, *extra: str) -> dict[str, Any]:
        main(["verify", str(path), "--json", *extra])
        return json.loads(capsys.readouterr().out)

    trace = tmp_path / "lasso.trace.json"
    grows = verify(model, "--trace-out", str(trace))
    assert grows["verdict"] == "counterexample", grows
    lasso = json.loads(trace.read_text())
    bolts = [pos["bolts"]["C"] for pos in lasso["positions"]]
    spouts = [pos["spouts"]["S"] for pos in lasso["positions"]]
    assert any(b.get("fail") for b in bolts[lasso["loop_start"]:]) and any(s.get("replayed") for s in spouts)
    assert verify(model, "--failures", "off")["verdict"] == "bounded"
    data = json.loads(model.read_text())
    data["bolts"] = [{**b, "min_ttf": 100} if b["name"] == "C" else b for b in data["bolts"]]
    rare = tmp_path / "rare.storm.json"
    rare.write_text(json.dumps(data))
    assert verify(rare)["verdict"] == "bounded"

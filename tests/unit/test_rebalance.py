"""`storm rebalance` lines beside a repair: executors up to the tasks, numTasks named beyond them."""

from __future__ import annotations

from pathlib import Path

from app.core.storm.flux.parser import read_flux
from app.core.storm.flux.yaml_text import FluxError
from app.core.storm.rebalance import Running, rebalance_lines, running_from_flux


def test_rebalance_within_tasks_and_numtasks_beyond() -> None:
    running = {"a": Running(2, 8, True), "b": Running(1, 1), "c": Running(3, 3), "odd name": Running(1, 4, True)}
    lines = rebalance_lines("my topo", running, {"a": 6, "b": 4, "c": 3, "odd name": 2, "gone": 5})
    assert lines[0] == "storm rebalance 'my topo' -e a=6 -e 'odd name=2'"  # c unchanged, gone unknown: left out
    assert lines[1].startswith("b: has 1 task, and rebalance cannot raise its executors above that")
    assert "numTasks: 4 or more on b" in lines[1]
    assert len(lines) == 2
    assert rebalance_lines("t", running, {"c": 3}) == []
    capped = rebalance_lines("t", {"a": Running(2, 4, True)}, {"a": 6})
    assert capped == ["a: its numTasks: 4 caps it at 4 executors, by rebalance or by a redeploy of the repaired "
                      "file: raise numTasks to 6 or more in the Flux file and redeploy"]


def test_executors_up_to_exactly_the_tasks_are_a_rebalance() -> None:
    # the boundary: as many executors as tasks is reachable by rebalance (one task per executor), one more is not
    running = {"a": Running(2, 4, True), "b": Running(1, 3)}
    assert rebalance_lines("t", running, {"a": 4, "b": 3}) == ["storm rebalance t -e a=4 -e b=3"]
    over = rebalance_lines("t", running, {"a": 5})
    assert len(over) == 1 and over[0].startswith("a: its numTasks: 4 caps it at 4 executors")


def test_tasks_come_from_numtasks_or_the_parallelism(tmp_path: Path) -> None:
    flux = tmp_path / "t.yaml"
    flux.write_text("name: t\nspouts:\n  - {id: s, className: S}\nbolts:\n"
                    "  - {id: a, className: A, parallelism: 2, numTasks: 8}\n  - {id: b, className: B}\n"
                    "streams:\n  - {from: s, to: a, grouping: {type: SHUFFLE}}\n"
                    "  - {from: a, to: b, grouping: {type: SHUFFLE}}\n")
    assert running_from_flux(read_flux(flux)) == {"a": Running(2, 8, True), "b": Running(1, 1, False)}
    flux.write_text(flux.read_text().replace("numTasks: 8", "numTasks: 0"))
    try:
        read_flux(flux)
    except FluxError as err:
        assert "bolts.a.numTasks: must be at least 1" in str(err)
    else:
        raise AssertionError("numTasks: 0 was accepted")


def test_a_storm_ui_import_gives_capacity_and_rebalance_lines_in_check(capsys, tmp_path: Path) -> None:
    """The Storm UI of an overloaded word count (count: 1 executor, 1 task; split: 2 tasks): check gives the
    headroom, the first saturated bolt, the backlog growth and the rebalance lines, by hand:
    40 sentences/s, split σ 5 -> count gets 200/s and takes 1/0.02 = 50/s: it grows above ×50/200 = 1/4,
    so backpressure lets 10 of the 40 tuples/s in and the backlog grows by 30/s."""
    import json
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from storm_ui_server import StormUIServer

    from app.cli import main

    doc = tmp_path / "ui.storm.json"
    with StormUIServer() as ui:
        assert main(["import", "storm-ui", ui.url, "--topology", "wordcount", "-o", str(doc)]) == 0
    capsys.readouterr()
    assert main(["check", str(doc), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    room = data["headroom"]
    assert room["first_to_saturate"] == ["count"] and room["grows_at"]["exact"] == "1/4"
    assert room["storm"]["offered_rate"]["exact"] == "40" and room["storm"]["backlog_growth"]["exact"] == "30"
    # the cluster's own receive buffer (topology.executor.receive.buffer.size in its configuration): count
    # gains 200 - 50 = 150 tuples/s into 1 × 1024 slots
    assert room["storm"]["receive_buffer_source"] == "config" and room["storm"]["receive_buffer"] == 1024
    assert room["storm"]["queues"][0]["seconds_to_full"]["exact"] == "512/75"
    assert data["rebalance"][0] == "storm rebalance wordcount -e split=1"
    assert data["rebalance"][1] == ("split: scales down from 2 to 1 executor: frees 1 executor thread; its 2 tasks "
                                    "stay, run by 1 (the queue model's parallelism is the executors)")
    assert data["rebalance"][2].startswith("count: has 1 task, and rebalance cannot raise its executors")

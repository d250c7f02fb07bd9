"""A bolt the instant rate check proves unbounded (a flood whose source grows by rates: `stormbound check`'s
"Unbounded") is shown so by the app before any Verify: red on the canvas with check's words in its tooltip, red in
the Verification panel with the flood proof's detail; an edit that takes the flood away takes the red away."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cone_documents import beside_a_loop

from app.gui.canvas.items import RED
from app.gui.commands import SetComponentFieldsCommand


def flooded_document(tmp_path: Path) -> Path:
    """S (1/s, τ 0.3) → U (α 1.6 s, 2 executors: may fall behind) → J (α 0.5 s): U's growth is proven by rates,
    and U draining its backlog at full speed floods J (the WIDE case of tests/unit/test_flood.py)."""
    doc = {"schema_version": 1, "name": "flood",
           "spouts": [{"kind": "spout", "id": "S", "name": "S", "rate": 1.0, "burst": 1}],
           "bolts": [{"kind": "bolt", "id": "U", "name": "U", "alpha": 1.6, "sigma": 1.0, "parallelism": 2},
                     {"kind": "bolt", "id": "J", "name": "J", "alpha": 0.5, "sigma": 0.0, "parallelism": 1}],
           "subscriptions": [{"id": "e0", "source": "S", "target": "U"}, {"id": "e1", "source": "U", "target": "J"}],
           "settings": {"tolerance": 0.3, "max_idle_time": 0.0, "emission": "exact"}}
    path = tmp_path / "flood.storm.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def check_json(path: Path, capsys: Any) -> dict[str, Any]:
    from app.cli import main

    capsys.readouterr()
    main(["check", "--json", str(path)])
    return json.loads(capsys.readouterr().out)


def test_a_flood_proven_by_the_rate_check_is_red_with_checks_words(make_window: Any, tmp_path: Path,
                                                                   capsys: Any) -> None:
    path = flooded_document(tmp_path)
    printed = check_json(path, capsys)
    assert set(printed["unbounded"]) == {"J"}  # what check proves
    words = printed["unbounded"]["J"]["message"]
    assert words.startswith("unbounded: U backs up, then floods J at 1.786 tuples/s")

    window = make_window()
    assert window.open_path(path, ask=False)
    j = window.scene.nodes["J"]
    assert j.header_colour() == RED and j.parameter_lines()[1] == "ρ 0.50 · unbounded"  # red although ρ is low
    assert f"Proven by the rate check, no search: {words}" in j.toolTip()  # check's words, whole
    assert window.scene.nodes["U"].parameter_lines()[1].endswith("may grow")  # U as check's table says it
    assert window.status_problems.text().endswith("0 grow · unbounded: J")

    panel = window.verification_panel
    state = panel.states[0]
    assert state.result is None and panel.marker_colour(0) == "red"  # before any Verify
    assert panel.verdict_text(0) == "J unbounded (rate check, no search)"
    assert panel.headline() == "J unbounded (rate check, no search)"
    assert panel.bolt_row_text(0, "J") == "unbounded: U backs up, then floods it (flood proof, certified)"
    assert state.bolt_colour("J") == "red" and state.bolt_colour("U") == "grey"
    panel.select(0, "J")
    details = panel.details.toPlainText()
    assert words[:60] in details and "stormbound check" in details
    assert panel.verified_problem() is not None  # an instant answer is not a verified configuration


def test_an_edit_that_ends_the_flood_takes_the_red_away(make_window: Any, tmp_path: Path, capsys: Any) -> None:
    window = make_window()
    assert window.open_path(flooded_document(tmp_path), ask=False)
    document = window.document
    document.undo_stack.push(SetComponentFieldsCommand(document, "U", {"parallelism": 4}))  # U keeps up now
    path = tmp_path / "edited.storm.json"
    window.save_to(path)
    assert check_json(path, capsys)["unbounded"] == {}  # check agrees: nothing unbounded
    j = window.scene.nodes["J"]
    assert j.header_colour() != RED and "unbounded" not in j.parameter_lines()[1] and "Proven by" not in j.toolTip()
    assert window.verification_panel.marker_colour(0) == "grey" and window.verification_panel.headline() == ""
    assert "unbounded" not in window.status_problems.text()
    document.undo_stack.undo()  # the flood again
    assert j.header_colour() == RED and window.verification_panel.marker_colour(0) == "red"


def test_verify_keeps_the_bolt_red_and_ends_with_its_own_unbounded(make_window: Any, qtbot: Any,
                                                                  tmp_path: Path) -> None:
    window = make_window()
    assert window.open_path(flooded_document(tmp_path), ask=False)
    panel = window.verification_panel
    panel.start()
    assert panel.states[0].bolt_colour("J") == "red"  # while the search runs, until it knows J
    qtbot.waitUntil(lambda: not panel.is_running(), timeout=240_000)
    verdict = panel.bolt_verdict(0, "J")
    assert verdict is not None and verdict.verdict == "unbounded"  # the search's own answer agrees
    assert panel.states[0].instant_verdict("J") is None and panel.marker_colour(0) == "red"


def test_a_failing_bolt_beside_an_unrelated_loop_is_bounded_as_check_says(make_window: Any, tmp_path: Path,
                                                                           capsys: Any) -> None:
    """With failures, the whole topology's rate check takes C's bound away for A's loop; `check` decides C on its
    own cone (app/core/tcn/cones.py) and so do the canvas and the status bar: the same status and queue bound."""
    path = tmp_path / "cones.storm.json"
    path.write_text(json.dumps(beside_a_loop(True, relay=True)), encoding="utf-8")
    printed = check_json(path, capsys)["bolts"]
    window = make_window()
    assert window.open_path(path, ask=False)
    c = next(node for node in window.scene.nodes.values() if node.component.name == "C")
    assert printed["C"]["status"] == c.rates.status == "bounded"
    assert c.rates.queue_bound == printed["C"]["queue_bound"] and "on its cone of influence" in c.toolTip()
    bounded = sum(1 for b in printed.values() if b["status"] == "bounded")
    assert f"rate check: {bounded} bounded" in window.status_problems.text()
    from app.core.rates import rate_check
    from app.core.topology import parse_topology

    whole = rate_check(parse_topology(beside_a_loop(True, relay=True)))
    assert whole.bolts["C"].status != "bounded"  # the whole topology's


def stormed_document(tmp_path: Path) -> Path:
    """The sweep's random #55 (bench/verdict_sweep.py, seed 46): B1 fails every 5 s with at-once replays and
    completes fewer batches per cycle than S emits, so S's replays of its losses grow every cycle and flood B0,
    which S feeds too (docs/boundedness.md, "Unbounded: a replay storm")."""
    doc = {"schema_version": 1, "name": "storm",
           "spouts": [{"id": "S", "name": "S", "rate": 1.0, "burst": 1}],
           "bolts": [{"id": "B0", "name": "B0", "alpha": 0.913, "sigma": 2.0, "parallelism": 2},
                     {"id": "B1", "name": "B1", "alpha": 0.839, "sigma": 1.0, "parallelism": 1, "min_ttf": 3.0}],
           "subscriptions": [{"source": "S", "target": "B0"}, {"source": "S", "target": "B1"}],
           "settings": {"tolerance": 0.2, "max_idle_time": 0, "emission": "exact", "failures": True,
                        "min_reboot_time": 1, "max_reboot_time": 2, "replay": "at-once"},
           "verification": {"checked": ["B0", "B1"]}}
    path = tmp_path / "storm.storm.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_a_replay_storm_proven_without_a_search_is_red_like_a_flood(make_window: Any, tmp_path: Path,
                                                                    capsys: Any) -> None:
    path = stormed_document(tmp_path)
    printed = check_json(path, capsys)
    assert set(printed["unbounded_by_storm"]) == {"B0", "B1"}  # what check proves (B1: before each failure)
    words = printed["unbounded_by_storm"]["B0"]["message"]

    window = make_window()
    assert window.open_path(path, ask=False)
    b0 = window.scene.nodes["B0"]
    assert b0.header_colour() == RED and b0.parameter_lines()[1].endswith("unbounded")
    assert f"Proven by the rate check, no search: {words}" in b0.toolTip()
    assert window.status_problems.text().endswith("unbounded: B0, B1")
    panel = window.verification_panel
    assert panel.marker_colour(0) == "red"  # before any Verify
    assert panel.bolt_row_text(0, "B0").startswith("unbounded: B1's at-once replays outgrow it")


def test_a_paced_replay_backlog_proven_without_a_search_is_red_like_a_storm(make_window: Any, tmp_path: Path,
                                                                            capsys: Any) -> None:
    """The sweep's random #46 (tests/data/paced): B0 fails every 5 s with paced replays and S's backlog of its
    losses grows every cycle, then drains into it at 4 tuples/s against its 2.5 (docs/boundedness.md, "Unbounded:
    a paced replay backlog")."""
    source = Path(__file__).resolve().parents[1] / "data" / "paced" / "random-46.storm.json"
    path = tmp_path / "paced.storm.json"
    path.write_text(json.dumps({**json.loads(source.read_text(encoding="utf-8")),
                                "verification": {"checked": ["B0"]}}), encoding="utf-8")
    printed = check_json(path, capsys)
    assert set(printed["unbounded_by_storm"]) == {"B0"}  # B1 and B2 grow anyway
    words = printed["unbounded_by_storm"]["B0"]["message"]
    assert words.startswith("unbounded (paced replay backlog, certified)")

    window = make_window()
    assert window.open_path(path, ask=False)
    b0 = next(node for node in window.scene.nodes.values() if node.component.name == "B0")
    assert b0.header_colour() == RED and b0.parameter_lines()[1].endswith("unbounded")
    assert f"Proven by the rate check, no search: {words}" in b0.toolTip()
    panel = window.verification_panel
    assert panel.marker_colour(0) == "red"  # before any Verify
    assert panel.bolt_row_text(0, "B0").startswith("unbounded: S's paced replays of B0's losses pile up")

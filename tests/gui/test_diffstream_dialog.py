"""The DiffStream dialog: verdict, first difference and leftovers from a worker thread; Runs menu entry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("PySide6")

from app.gui.diffstream_dialog import DiffStreamDialog  # noqa: E402  # after the importorskip


@pytest.fixture()
def outputs(tmp_path: Path) -> Path:
    (tmp_path / "p1.jsonl").write_text('{"key": 1, "v": 1}\n{"key": 2, "v": 2}\n{"key": 1, "v": 3}\n')
    (tmp_path / "pn.jsonl").write_text('{"key": 2, "v": 2}\n{"key": 1, "v": 1}\n{"key": 1, "v": 3}\n')
    (tmp_path / "bad.jsonl").write_text('{"key": 1, "v": 3}\n{"key": 2, "v": 2}\n{"key": 1, "v": 1}\n')
    return tmp_path


def _run(qtbot: Any, dialog: DiffStreamDialog) -> Any:
    with qtbot.waitSignal(dialog.result_ready, timeout=60_000) as blocker:
        dialog.compare_button.click()
    return blocker.args[0]


def test_equivalent(qtbot: Any, outputs: Path) -> None:
    dialog = DiffStreamDialog()
    qtbot.addWidget(dialog)
    dialog.set_inputs(str(outputs / "p1.jsonl"), str(outputs / "pn.jsonl"), "same_key:key")
    result = _run(qtbot, dialog)
    assert result.equivalent and dialog.verdict_state == "equivalent"
    assert dialog.verdict.text().startswith("Equivalent: 3 pairs matched")
    assert dialog.unmatched_left.rowCount() == 0 and dialog.compare_button.isEnabled()


def test_first_difference_and_unmatched(qtbot: Any, outputs: Path) -> None:
    dialog = DiffStreamDialog()
    qtbot.addWidget(dialog)
    dialog.set_inputs(str(outputs / "p1.jsonl"), str(outputs / "bad.jsonl"), "same_key:key")
    result = _run(qtbot, dialog)
    assert not result.equivalent and dialog.verdict_state == "different"
    assert "first difference at position 2" in dialog.verdict.text()
    assert '"v": 3' in dialog.details.toPlainText() and '"v": 1' in dialog.details.toPlainText()
    assert dialog.unmatched_left.rowCount() == 1
    assert dialog.unmatched_left.item(0, 2).text() == '{"key": 1, "v": 1}'


def test_bad_spec_shows_one_line_problem(qtbot: Any, outputs: Path) -> None:
    dialog = DiffStreamDialog()
    qtbot.addWidget(dialog)
    dialog.set_inputs(str(outputs / "p1.jsonl"), str(outputs / "pn.jsonl"), "predicate:x.key = y.key")
    assert _run(qtbot, dialog) is None
    assert dialog.verdict_state == "error" and "unexpected '='" in dialog.verdict.text()
    dialog.set_inputs(str(outputs / "p1.jsonl"), str(outputs / "missing.jsonl"), "all")
    assert _run(qtbot, dialog) is None and "no such file" in dialog.problem


def test_main_window_has_the_runs_entry(make_window: Any) -> None:
    window = make_window()
    action = window.action_compare_runs
    assert action in window.menu("Runs").actions() and action.text() == "Compare runs..."
    assert action.objectName() == "action_compare_runs"
    action.trigger()
    assert window.diffstream_dialog.isVisible()

"""The Compare runs dialog: verdict, first difference and leftovers from a worker thread; Runs menu entry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("PySide6")

from app.gui.diffstream_dialog import CompareRunsDialog, install  # noqa: E402


@pytest.fixture()
def outputs(tmp_path: Path) -> Path:
    (tmp_path / "p1.jsonl").write_text('{"key": 1, "v": 1}\n{"key": 2, "v": 2}\n{"key": 1, "v": 3}\n')
    (tmp_path / "pn.jsonl").write_text('{"key": 2, "v": 2}\n{"key": 1, "v": 1}\n{"key": 1, "v": 3}\n')
    (tmp_path / "bad.jsonl").write_text('{"key": 1, "v": 3}\n{"key": 2, "v": 2}\n{"key": 1, "v": 1}\n')
    return tmp_path


def _run(qtbot: Any, dialog: CompareRunsDialog) -> Any:
    with qtbot.waitSignal(dialog.result_ready, timeout=10_000) as blocker:
        dialog.compare_button.click()
    return blocker.args[0]


def test_equivalent(qtbot: Any, outputs: Path) -> None:
    dialog = CompareRunsDialog()
    qtbot.addWidget(dialog)
    dialog.set_inputs(str(outputs / "p1.jsonl"), str(outputs / "pn.jsonl"), "same_key:key")
    result = _run(qtbot, dialog)
    assert result.equivalent and dialog.verdict_state == "equivalent"
    assert dialog.verdict.text().startswith("Equivalent: 3 pairs matched")
    assert dialog.unmatched_left.rowCount() == 0 and dialog.compare_button.isEnabled()


def test_first_difference_and_unmatched(qtbot: Any, outputs: Path) -> None:
    dialog = CompareRunsDialog()
    qtbot.addWidget(dialog)
    dialog.set_inputs(str(outputs / "p1.jsonl"), str(outputs / "bad.jsonl"), "same_key:key")
    result = _run(qtbot, dialog)
    assert not result.equivalent and dialog.verdict_state == "different"
    assert "first difference at position 2" in dialog.verdict.text()
    assert '"v": 3' in dialog.details.toPlainText() and '"v": 1' in dialog.details.toPlainText()
    assert dialog.unmatched_left.rowCount() == 1
    assert dialog.unmatched_left.item(0, 2).text() == '{"key": 1, "v": 1}'


def test_bad_spec_shows_one_line_problem(qtbot: Any, outputs: Path) -> None:
    dialog = CompareRunsDialog()
    qtbot.addWidget(dialog)
    dialog.set_inputs(str(outputs / "p1.jsonl"), str(outputs / "pn.jsonl"), "predicate:x.key = y.key")
    assert _run(qtbot, dialog) is None
    assert dialog.verdict_state == "error" and "unexpected '='" in dialog.verdict.text()
    dialog.set_inputs(str(outputs / "p1.jsonl"), str(outputs / "missing.jsonl"), "all")
    assert _run(qtbot, dialog) is None and "no such file" in dialog.problem


def test_install_adds_runs_menu_action(qtbot: Any) -> None:
    from PySide6.QtWidgets import QMainWindow, QMenu

    class Window(QMainWindow):
        def __init__(self) -> None:
            super().__init__()
            self.menus: dict[str, QMenu] = {}

        def menu(self, title: str) -> QMenu:
            if title not in self.menus:
                self.menus[title] = self.menuBar().addMenu(title)
            return self.menus[title]

    window = Window()
    qtbot.addWidget(window)
    action = install(window)
    assert action in window.menu("Runs").actions() and action.text() == "Compare runs..."
    action.trigger()
    assert window._compare_runs_dialog.isVisible()


def test_main_window_has_the_runs_entry(make_window: Any) -> None:
    window = make_window()
    assert "app.gui.diffstream_dialog" not in window.plugin_errors
    names = [a.objectName() for a in window.menu("Runs").actions()]
    assert "action_compare_runs" in names

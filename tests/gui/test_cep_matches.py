"""The CEP matches table: standalone, filled from the shipped monitors or from given patterns."""

from __future__ import annotations

from typing import Any

from app.cep import Pattern, parse_text
from app.gui.panels.cep_matches import ALL_PATTERNS, CepMatchesPanel


def _events() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = [{"t": float(t), "ev": "bolt_fail", "comp": "count", "tuple": f"t{t}"}
                                  for t in (1, 3, 8)]
    rows += [{"t": 2.0, "ev": "take", "comp": "count", "tuple": "x"},
             {"t": 50.0, "ev": "bolt_ack", "comp": "split", "tuple": "y"}]
    return sorted(rows, key=lambda r: r["t"])


def test_panel_shows_monitor_matches_and_filters(qtbot: Any) -> None:
    panel = CepMatchesPanel()
    qtbot.addWidget(panel)
    matches = panel.show_run(_events())
    assert sorted(m.pattern for m in matches) == ["repeated_bolt_failure", "unacked_take"]
    assert panel.proxy.rowCount() == 2
    assert [panel.filter.itemText(i) for i in range(panel.filter.count())] == [
        ALL_PATTERNS, "repeated_bolt_failure", "unacked_take", "queue_above_threshold"]
    assert panel.summary.text().startswith(
        "2 matches (repeated_bolt_failure: 1, unacked_take: 1, queue_above_threshold: 0")
    # sorted by start time: the failures start at 1, the unacked take at 2
    assert [m.pattern for m in panel.visible_matches()] == ["repeated_bolt_failure", "unacked_take"]
    first = panel.proxy.index(0, 5).data()
    assert first.startswith("bolt_fail@1(comp=count") and first.count("→") == 2
    assert panel.proxy.index(1, 1).data() == "timeout"
    panel.filter.setCurrentText("unacked_take")
    assert [m.pattern for m in panel.visible_matches()] == ["unacked_take"]
    panel.filter.setCurrentText("queue_above_threshold")
    assert panel.visible_matches() == []


def test_double_click_reports_the_match(qtbot: Any) -> None:
    panel = CepMatchesPanel()
    qtbot.addWidget(panel)
    patterns = [Pattern(id="pair", ast=parse_text("bolt_fail(comp) -> bolt_fail(comp)"), context="strict")]
    matches = panel.show_run(_events(), patterns)
    assert len(matches) == 1 and panel.proxy.rowCount() == 1
    with qtbot.waitSignal(panel.match_activated, timeout=60_000) as blocker:
        panel.table.doubleClicked.emit(panel.proxy.index(0, 3))  # what a double-click on a cell emits
    assert blocker.args[0] is matches[0]

"""Editing a large document: its snapshot is analysed in a worker (app/gui/analysis.py, `SnapshotAnalyser`), the
views keep what they showed until the analysis arrives, and a burst of edits is analysed as its latest snapshot,
not once per edit. A document of up to INLINE_COMPONENTS components is analysed at once, as before. The figures
(the GUI thread's longest stall while a 3,000-bolt document is edited) are in bench/gui_edit_large.py."""

from __future__ import annotations

import threading
from typing import Any

from layered_topologies import layered_topology

from app.gui import analysis as analysis_module
from app.gui.commands import SetComponentFieldsCommand

SIZE = analysis_module.INLINE_COMPONENTS + 60  # just over: analysed in a worker


def counted_analyses(monkeypatch: Any) -> list[tuple[str, Any]]:
    """Each whole analysis made from now on: the thread that made it and its snapshot."""
    made: list[tuple[str, Any]] = []
    real = analysis_module.analysed

    def counting(topo: Any) -> Any:
        made.append((threading.current_thread().name, topo))
        return real(topo)

    monkeypatch.setattr(analysis_module, "analysed", counting)
    return made


def opened_large(make_window: Any, qtbot: Any) -> Any:
    window = make_window()
    window.document.replace(layered_topology(SIZE, 0))
    qtbot.waitUntil(lambda: window.document.analysis() is not None and not window.scene.drawing(), timeout=60_000)
    return window


def test_an_edit_of_a_large_document_is_analysed_off_the_gui_thread(make_window, qtbot, monkeypatch) -> None:
    window = opened_large(make_window, qtbot)
    document = window.document
    made = counted_analyses(monkeypatch)
    bolt = next(b for b in document.topology().bolts
                if window.scene.nodes[b.id].rates is not None and window.scene.nodes[b.id].rates.status == "bounded")
    node = window.scene.nodes[bolt.id]
    before = node.rates
    with qtbot.waitSignal(document.analysis_ready, timeout=60_000):
        document.undo_stack.push(SetComponentFieldsCommand(document, bolt.id, {"alpha": bolt.alpha * 1000}))
        # the edit returned before its analysis: the canvas keeps its colours, the status bar says so
        assert document.analysis() is None and node.rates is before
        assert "analysing the edit" in window.status_problems.text()
    assert [thread for thread, _ in made] != [] and threading.current_thread().name not in [t for t, _ in made]
    assert made[-1][1] is document.topology()
    assert node.rates is not before and node.rates.status != "bounded"  # the new figures, from the worker
    assert "analysing" not in window.status_problems.text() and "bolts · rate check:" in window.status_problems.text()
    document.undo_stack.undo()  # undo is an edit too: analysed again, the bolt bounded again
    qtbot.waitUntil(lambda: document.analysis() is not None and node.rates.status == "bounded", timeout=60_000)


def test_a_burst_of_edits_is_analysed_as_its_latest_snapshot(make_window, qtbot, monkeypatch) -> None:
    window = opened_large(make_window, qtbot)
    document = window.document
    made = counted_analyses(monkeypatch)
    bolt = document.topology().bolts[0]
    for step in range(1, 7):  # six edits in a row, each read by the views as it lands
        document.undo_stack.push(SetComponentFieldsCommand(document, bolt.id, {"alpha": bolt.alpha * (1 + step)},
                                                           merge=False))
    latest = document.topology()
    qtbot.waitUntil(lambda: document.analysis() is not None, timeout=60_000)
    # the first edit's worker ran; the five after it were waiting as one: the latest snapshot, analysed once more
    assert len(made) == 2 and made[-1][1] is latest
    assert document.rates().of(latest)


def test_a_small_document_is_analysed_at_once_on_the_gui_thread(make_window, models_dir, monkeypatch) -> None:
    from app.core.formats import load_topology

    window = make_window()
    window.document.replace(load_topology(models_dir / "simple-DIA-cfg-1.storm.json"))
    bolt = window.document.topology().bolts[0]
    window.document.undo_stack.push(SetComponentFieldsCommand(window.document, bolt.id, {"alpha": bolt.alpha * 2}))
    known = window.document.analysis()  # no worker, no waiting: the edit's figures are there when it returns
    assert known is not None and known.topology is window.document.topology()
    assert window.scene.nodes[bolt.id].rates is not None and "analysing" not in window.status_problems.text()


def test_a_document_opened_while_an_edit_is_analysed_keeps_its_own_analysis(make_window, qtbot, monkeypatch,
                                                                             models_dir) -> None:
    """A worker still analysing the previous document's edit, when a small document replaces it, ends without
    putting the old document's analysis in place of the new one's, and without a second analysis of the new one."""
    from app.core.formats import load_topology

    window = opened_large(make_window, qtbot)
    document = window.document
    made = counted_analyses(monkeypatch)
    bolt = document.topology().bolts[0]
    document.undo_stack.push(SetComponentFieldsCommand(document, bolt.id, {"alpha": bolt.alpha * 2}))
    assert document.analysis() is None  # a worker analyses the large edit
    small = load_topology(models_dir / "simple-DIA-cfg-1.storm.json")
    document.replace(small)
    shown = document.analysis()
    assert shown is not None and shown.topology is document.topology()
    qtbot.waitUntil(lambda: not analysis_module.AnalysisWorker.running_workers() and len(made) == 1, timeout=60_000)
    qtbot.wait(200)  # the worker's `finished`, queued to the GUI thread, is handled
    assert document.analysis() is shown and len(made) == 1  # the large edit's only

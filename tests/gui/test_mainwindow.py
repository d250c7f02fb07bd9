"""The main window: building, connecting, editing, files, autosave, suggest parallelism, plug-in hooks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLabel

from app.core.formats import load_topology
from app.core.rates import rate_check
from app.core.topology import Topology, parse_topology
from app.gui.autosave import find_recoverable
from app.gui.canvas.view import COMPONENT_MIME
from app.gui.dialogs import Dialogs
from app.gui.mainwindow import MainWindow

ROOT = Path(__file__).resolve().parents[2]
SIMPLE = ROOT / "models" / "simple-DIA-cfg-1.storm.json"


def viewport_point(window: MainWindow, scene_pos: QPointF) -> QPoint:
    return window.canvas.mapFromScene(scene_pos)


def drag(window: MainWindow, start: QPointF, end: QPointF, check_midway=None) -> None:
    """A left-button drag on the canvas with synthetic mouse events (press, moves, release)."""
    viewport = window.canvas.viewport()
    a, b = viewport_point(window, start), viewport_point(window, end)
    QTest.mousePress(viewport, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, a)
    for i in range(1, 6):
        QTest.mouseMove(viewport, a + (b - a) * (i / 5))
    if check_midway is not None:
        check_midway()
    QTest.mouseRelease(viewport, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, b)


def type_into(qtbot, row, text: str) -> None:
    QApplication.processEvents()  # rows added to a shown form appear on the next event-loop turn
    row.edit.setFocus()
    row.edit.selectAll()
    QTest.keyClick(row.edit, Qt.Key.Key_Backspace)
    qtbot.keyClicks(row.edit, text)
    QTest.keyClick(row.edit, Qt.Key.Key_Tab)  # leaving the field ends its merge window


def test_build_simple_dia_from_the_palette_and_inspector(make_window, qtbot) -> None:
    window = make_window()
    ids = {}
    for name in ("S1", "S2"):
        ids[name] = window.add_component("spout")
        type_into(qtbot, window.inspector.row("burst"), "2")
    for name, alpha, sigma, par in (("B1", "4", "2", "5"), ("B2", "4", "0.5", "6"), ("B3", "1", "1", "3")):
        ids[name] = window.add_component("bolt")
        inspector = window.inspector
        assert inspector.selected_id == ids[name]
        type_into(qtbot, inspector.row("alpha"), alpha)
        type_into(qtbot, inspector.row("sigma"), sigma)
        type_into(qtbot, inspector.row("parallelism"), par)
        if name in ("B2", "B3"):
            inspector.checked_box.setChecked(True)
    for src, tgt in (("S1", "B1"), ("S1", "B2"), ("S2", "B2"), ("B1", "B3"), ("B2", "B3")):
        assert window.scene.connect_components(ids[src], ids[tgt])
    type_into(qtbot, window.inspector.row("init_queues", "settings"), "2")
    assert window.document.topology().settings.max_idle_time == 0  # a new document idles for no time
    type_into(qtbot, window.inspector.row("max_idle_time", "settings"), "0.01")  # D-VerT's value
    combo = window.inspector.emission_combo  # the example came from D-VerT: its carry is rounded up
    combo.setCurrentIndex(combo.findData("dvert"))
    type_into(qtbot, window.inspector.row("k", "verification"), "15")
    type_into(qtbot, window.inspector.row("name", "topology"), "simple-DIA-cfg-1")
    assert window.document.topology().semantics() == load_topology(SIMPLE).semantics()
    assert window.isWindowModified() and "simple-DIA-cfg-1" in window.windowTitle()
    # every node shows the rate check's colour and explanation
    report = rate_check(window.document.topology())
    node = window.scene.nodes[ids["B2"]]
    assert node.rates is not None and node.rates.utilisation == report.bolts["B2"].utilisation
    assert report.bolts["B2"].explanation in node.toolTip()
    assert node.header_colour().name() == "#d64541"  # ρ 1.33: red


def test_drop_from_palette_adds_a_node_where_dropped(make_window) -> None:
    window = make_window()
    # the offscreen platform cannot run a real drag and drop: take the palette's drag data and drop it
    palette = window.component_palette
    data = palette.mimeData([palette.item(1)])
    assert bytes(data.data(COMPONENT_MIME).data()) == b"bolt"
    where = window.canvas.viewport().rect().center()
    event = QDropEvent(QPointF(where), Qt.DropAction.CopyAction, data, Qt.MouseButton.LeftButton,
                       Qt.KeyboardModifier.NoModifier)
    window.canvas.dropEvent(event)
    (bolt,) = window.document.topology().bolts
    pos = window.document.position(bolt.id)
    centre = window.canvas.mapToScene(where)
    assert abs(pos.x + 78 - centre.x()) <= 20 and abs(pos.y + 37 - centre.y()) <= 20
    assert window.document.undo_stack.count() == 1


def test_connect_and_refuse_with_mouse_drags(make_window, tmp_path) -> None:
    window = make_window()
    spout = window.add_component("spout")
    bolt = window.add_component("bolt")
    window.document.undo_stack.push(__import__("app.gui.commands", fromlist=["x"]).MoveComponentsCommand(
        window.document, {spout: window.document.position(spout).model_copy(update={"x": -300.0})}))
    window.canvas.fit_all()
    scene = window.scene
    out_port = scene.nodes[spout].output_port.scene_centre()
    in_port = scene.nodes[bolt].input_port.scene_centre()
    drag(window, out_port, in_port)
    (sub,) = window.document.topology().subscriptions
    assert (sub.source, sub.target) == (spout, bolt)
    assert sub.id in scene.edges

    # the same link again: a red rubber line with the reason, then refused
    seen = {}
    drag(window, out_port, in_port, check_midway=lambda: seen.update(refused=scene._rubber.refused))
    assert seen["refused"] is True
    assert len(window.document.topology().subscriptions) == 1
    assert "already subscribes" in window.statusBar().currentMessage()

    # from the bolt's output into the spout: refused, spouts do not subscribe
    drag(window, scene.nodes[bolt].output_port.scene_centre(), scene.nodes[spout].sceneBoundingRect().center())
    assert len(window.document.topology().subscriptions) == 1
    assert "is a spout" in window.statusBar().currentMessage()


def test_dragging_a_node_is_one_undo_step(make_window) -> None:
    window = make_window()
    bolt = window.add_component("bolt")
    stack = window.document.undo_stack
    before_count = stack.count()
    start = window.document.position(bolt)
    node = window.scene.nodes[bolt]
    grab = node.sceneBoundingRect().center() + QPointF(0, 15)
    drag(window, grab, grab + QPointF(120, 60))
    assert stack.count() == before_count + 1
    moved = window.document.position(bolt)
    assert (moved.x - start.x, moved.y - start.y) == pytest.approx((120, 60), abs=3)
    assert node.pos() == QPointF(moved.x, moved.y)
    stack.undo()
    assert window.document.position(bolt) == start and node.pos() == QPointF(start.x, start.y)


def test_rubber_band_select_delete_copy_paste_and_undo(make_window) -> None:
    window = make_window()
    assert window.open_path(SIMPLE)
    original = window.document.topology()
    scene = window.scene
    # rubber-band over everything from an empty corner
    rect = scene.itemsBoundingRect().adjusted(-40, -40, 40, 40)
    drag(window, rect.topLeft(), rect.bottomRight())
    comps, _ = scene.selected_ids()
    assert comps == {c.id for c in original.components}
    window.scene.select_ids({original.bolt_by_name("B1").id})
    window.editing.action_copy.trigger()
    window.editing.action_paste.trigger()
    assert {b.name for b in window.document.topology().bolts} == {"B1", "B2", "B3", "B1_2"}
    window.scene.select_ids({original.bolt_by_name("B2").id})
    window.editing.action_delete.trigger()
    topo = window.document.topology()
    assert "B2" not in {b.name for b in topo.bolts} and len(topo.subscriptions) == 2
    window.editing.action_undo.trigger()
    window.editing.action_undo.trigger()
    assert window.document.topology() == original
    assert not window.isWindowModified()
    window.editing.action_redo.trigger()
    assert len(window.document.topology().bolts) == 4


def test_undo_redo_across_a_sequence_of_edits(make_window, qtbot) -> None:
    window = make_window()
    window.open_path(SIMPLE)
    stack = window.document.undo_stack
    b3 = window.document.topology().bolt_by_name("B3").id
    snapshots = [window.document.topology()]
    window.scene.select_ids({b3})
    type_into(qtbot, window.inspector.row("alpha"), "1.25")
    snapshots.append(window.document.topology())
    type_into(qtbot, window.inspector.row("name"), "Sink")
    snapshots.append(window.document.topology())
    window.editing.action_suggest.trigger()
    snapshots.append(window.document.topology())
    window.editing.action_layout.trigger()
    snapshots.append(window.document.topology())
    assert stack.count() == 4
    for expected in reversed(snapshots[:-1]):
        window.editing.action_undo.trigger()
        assert window.document.topology() == expected
    assert not window.isWindowModified()
    for expected in snapshots[1:]:
        window.editing.action_redo.trigger()
        assert window.document.topology() == expected
    # the scene and the inspector follow
    assert window.scene.nodes[b3].component.name == "Sink"
    assert window.inspector.row("name").edit.text() == "Sink"


def test_invalid_parameters_are_refused_next_to_the_field(make_window, qtbot) -> None:
    window = make_window()
    window.open_path(SIMPLE)
    b1 = window.document.topology().bolt_by_name("B1").id
    window.scene.select_ids({b1})
    row = window.inspector.row("alpha")
    count = window.document.undo_stack.count()
    type_into(qtbot, row, "-1")
    assert row.error.isVisible() and "greater than 0" in row.error.text()
    assert row.edit.property("invalid") is True
    assert window.document.component(b1).alpha == 4.0
    type_into(qtbot, row, "abc")
    assert "'abc' is not a time" in row.error.text()
    parallelism = window.inspector.row("parallelism")
    type_into(qtbot, parallelism, "2.5")
    assert "whole number" in parallelism.error.text()
    name = window.inspector.row("name")
    type_into(qtbot, name, "B2")
    assert "already the name" in name.error.text()
    k_min = window.inspector.row("k_min", "verification")
    type_into(qtbot, k_min, "99")
    assert "k_min (99) is larger than k_max (40)" in k_min.error.text()
    # refused values never reach the document; valid prefixes typed on the way did, one step per field
    topo = window.document.topology()
    assert parse_topology(json.loads(topo.to_json_bytes())) == topo
    assert (topo.bolt_by_name("B").alpha, topo.bolt_by_name("B").parallelism, topo.verification.k_min) == (4.0, 2, 9)
    assert window.document.undo_stack.count() == count + 3
    for _ in range(3):
        window.editing.action_undo.trigger()
    assert window.document.topology().semantics() == load_topology(SIMPLE).semantics()
    count = window.document.undo_stack.index()
    window.scene.select_ids({b1})
    QApplication.processEvents()
    row = window.inspector.row("alpha")
    # typing a valid value: one undo step for the whole field, error gone
    row.edit.setFocus()
    row.edit.clear()
    row.edit.selectAll()
    qtbot.keyClicks(row.edit, "2.75")
    assert not row.error.isVisible() and window.document.component(b1).alpha == 2.75
    assert window.document.undo_stack.index() == count + 1


def test_save_and_reopen_keeps_the_topology(make_window, tmp_path) -> None:
    window = make_window()
    window.open_path(SIMPLE)
    window.editing.action_suggest.trigger()
    target = tmp_path / "copy.storm.json"
    window.dialogs.answers["save_file"] = str(target)
    window.document._path = None  # as if it were new: Save asks for a name
    assert window.save()
    assert not window.isWindowModified() and "copy.storm.json" in window.windowTitle()
    saved = window.document.topology()
    other = make_window()
    assert other.open_path(target)
    assert other.document.topology().semantics() == saved.semantics()
    assert other.document.topology().layout == saved.layout
    assert not other.document.is_modified()
    assert not list(tmp_path.glob(".copy.storm.json*"))  # no temporary left behind
    # recent files: most recent first, missing files pruned
    gone = tmp_path / "gone.storm.json"
    shutil.copy(SIMPLE, gone)
    other.open_path(gone)
    assert other.recent_files()[:2] == [gone.resolve(), target.resolve()]
    gone.unlink()
    assert gone.resolve() not in other.recent_files()
    other.recent_menu.aboutToShow.emit()
    assert [a.text() for a in other.recent_menu.actions()][:1] == ["copy.storm.json"]


def test_bad_files_show_a_message_naming_file_and_field(make_window, tmp_path) -> None:
    window = make_window()
    window.open_path(SIMPLE)
    before = window.document.topology()
    broken = tmp_path / "broken.storm.json"
    broken.write_text("{ not json")
    assert not window.open_path(broken)
    kind, _, text = window.dialogs.shown[-1]
    assert kind == "error" and str(broken) in text and "not valid JSON" in text
    bad = json.loads(SIMPLE.read_text())
    bad["bolts"][1]["alpha"] = -4
    bad_path = tmp_path / "bad.storm.json"
    bad_path.write_text(json.dumps(bad))
    assert not window.open_path(bad_path)
    assert "bolts.B2.alpha" in window.dialogs.shown[-1][2] and str(bad_path) in window.dialogs.shown[-1][2]
    assert window.document.topology() == before  # nothing lost
    assert "Traceback" not in "".join(t for _, _, t in window.dialogs.shown)


def test_import_dvert_is_laid_out_and_not_overwritten(make_window, dvert_dir) -> None:
    window = make_window()
    source = dvert_dir / "icfem-simple-DIA-cfg-1.json"
    assert window.open_path(source)
    topo = window.document.topology()
    assert {c.id for c in topo.components} == set(topo.layout)
    assert len({(p.x, p.y) for p in topo.layout.values()}) == len(topo.components)
    assert window.document.path is None  # Save asks for a new name
    assert topo.semantics()["bolts"] == load_topology(source).semantics()["bolts"]


def test_drop_a_file_on_the_window_opens_it(make_window) -> None:
    window = make_window()
    data = QMimeData()
    data.setUrls([QUrl.fromLocalFile(str(SIMPLE))])
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, data, Qt.MouseButton.LeftButton,
                       Qt.KeyboardModifier.NoModifier)
    window.canvas.dropEvent(event)
    assert window.document.path == SIMPLE.resolve()
    assert len(window.document.topology().bolts) == 3


def test_unsaved_changes_are_asked_about(make_window) -> None:
    window = make_window()
    window.add_component("bolt")
    window.dialogs.answers["save_changes"] = "cancel"
    assert not window.open_path(SIMPLE)
    assert len(window.document.topology().bolts) == 1
    assert not window.close()
    window.dialogs.answers["save_changes"] = "discard"
    assert window.open_path(SIMPLE)


def test_autosave_and_restore_after_a_crash(qtbot, make_window, tmp_path) -> None:
    folder = tmp_path / "autosave"
    crashed = make_window(autosave_dir=folder)
    crashed.autosave_timer.setInterval(50)
    crashed.open_path(SIMPLE)
    crashed.editing.action_suggest.trigger()
    crashed.add_component("bolt")
    snapshot = crashed.autosave.autosave_path
    assert crashed.autosave_timer.isActive()
    assert not snapshot.exists()  # written a moment after the edit, not during it
    qtbot.waitUntil(snapshot.exists, timeout=30_000)  # generous: a busy machine delays the timer
    assert crashed.autosave.lock_path.exists()
    expected = crashed.document.topology()
    # the crash: the process holding the lock is gone
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait(timeout=60)
    crashed.autosave.lock_path.write_text(json.dumps({"pid": gone.pid}))
    MainWindow._live_sessions.discard(crashed.autosave.session)
    crashed.autosave.active = False

    bystander = make_window(autosave_dir=folder, recover=False)
    answers = {"restore": True, "save_changes": "discard"}
    restored = make_window(autosave_dir=folder, dialogs=Dialogs(headless=True, answers=answers))  # asks on start
    assert restored.dialogs.shown[0][1] == "Restore unsaved work"
    assert restored.document.topology().semantics() == expected.semantics()
    assert restored.document.topology().layout == expected.layout
    assert restored.document.path == SIMPLE.resolve() and restored.isWindowModified()
    # the crashed session's snapshot stays until the restored work is saved or knowingly discarded,
    # but no other window offers it again
    assert snapshot.exists()
    assert make_window(autosave_dir=folder, dialogs=Dialogs(headless=True, answers=answers)).dialogs.shown == []
    # a clean exit (the user discards the work knowingly) leaves nothing to recover
    restored.dialogs.answers["save_changes"] = "discard"
    assert restored.close()
    bystander.close()
    assert not (folder / f"{restored.autosave.session}.lock").exists()
    assert list(folder.glob("*.autosave.json")) == []


def test_autosave_is_not_offered_when_the_file_is_newer(make_window, tmp_path) -> None:
    folder = tmp_path / "autosave"
    work = tmp_path / "work.storm.json"
    shutil.copy(SIMPLE, work)
    first = make_window(autosave_dir=folder)
    first.open_path(work)
    first.add_component("bolt")
    assert first.autosave_now()
    MainWindow._live_sessions.discard(first.autosave.session)
    os.utime(work, (os.path.getmtime(first.autosave.autosave_path) + 5,) * 2)
    second = make_window(autosave_dir=folder)
    assert second.dialogs.shown == []


def test_suggest_parallelism_is_one_undoable_step(make_window) -> None:
    window = make_window()
    window.open_path(SIMPLE)
    before = window.document.topology()
    suggestion = rate_check(before).suggested_parallelism
    window.editing.action_suggest.trigger()
    after = window.document.topology()
    assert window.document.undo_stack.count() == 1
    assert {b.name: b.parallelism for b in after.bolts} == {n: v for n, v in suggestion.items() if v is not None}
    assert rate_check(after).all_bounded()
    assert all(n.rates.utilisation < 1 for n in window.scene.nodes.values() if n.rates)
    assert "Parallelism set" in window.statusBar().currentMessage()
    window.editing.action_undo.trigger()
    assert window.document.topology() == before
    assert "action_suggest_parallelism" in {a.objectName() for a in window.toolbar.actions()}


def test_plugin_hooks_menus_panels_and_highlight(make_window) -> None:
    window = make_window()
    titles = [a.text().replace("&", "") for a in window.menuBar().actions()]
    assert titles[:6] == ["File", "Edit", "View", "Verify", "Runs", "Help"]
    assert window.menu("Verify") is window.menu("&Verify")
    dock = window.add_panel(QLabel("results"), "Results")
    assert dock.toggleViewAction() in window.menu("View").actions()
    assert window.dockWidgetArea(dock) == Qt.DockWidgetArea.BottomDockWidgetArea
    window.open_path(SIMPLE)
    window.canvas.highlight_components({"B1", "S2"})
    assert {n.component.name for n in window.scene.nodes.values() if n.highlighted} == {"B1", "S2"}
    window.canvas.highlight_components(set())
    assert not any(n.highlighted for n in window.scene.nodes.values())


def test_screenshot_mode_writes_a_png(tmp_path) -> None:
    out = tmp_path / "shot.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run([sys.executable, "-m", "app", "gui", str(SIMPLE), "--screenshot", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"wrote {out} (") and "propagateSizeHints" not in done.stderr
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    from PySide6.QtGui import QImage

    image = QImage(str(out))
    assert image.width() >= 1440 and image.height() >= 900  # docked panels may need a little more width
    assert f"({image.width()}x{image.height()})" in done.stdout
    # bad input: exit 2 with one line naming the file, no PNG
    bad = subprocess.run([sys.executable, "-m", "app", "gui", str(tmp_path / "missing.json"), "--screenshot",
                          str(tmp_path / "no.png")], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "missing.json" in bad.stderr and "Traceback" not in bad.stderr
    assert not (tmp_path / "no.png").exists()
    # a file that does not read as a topology: its problem once, on one line (it was printed twice)
    wrong = tmp_path / "wrong.storm.json"
    wrong.write_text('{"spouts": 5}')
    bad = subprocess.run([sys.executable, "-m", "app", "gui", str(wrong), "--screenshot", str(tmp_path / "no.png")],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.strip().splitlines() == [f"{wrong}: spouts: input should be a valid list"], bad.stderr
    assert not (tmp_path / "no.png").exists()


def test_zoom_and_pan(make_window) -> None:
    window = make_window()
    window.open_path(SIMPLE)
    view = window.canvas
    scale = view.transform().m11()
    view.zoom(1.25)
    assert view.transform().m11() == pytest.approx(scale * 1.25)
    for _ in range(40):
        view.zoom(1.25)
    assert view.transform().m11() <= 4.0  # clamped
    view.fit_all()
    view.zoom(2.0)
    viewport = view.viewport()
    before = (view.horizontalScrollBar().value(), view.verticalScrollBar().value())
    centre = viewport.rect().center()
    QTest.mousePress(viewport, Qt.MouseButton.MiddleButton, Qt.KeyboardModifier.NoModifier, centre)
    QTest.mouseMove(viewport, centre + QPoint(-60, -40))
    QTest.mouseRelease(viewport, Qt.MouseButton.MiddleButton, Qt.KeyboardModifier.NoModifier, centre + QPoint(-60, -40))
    after = (view.horizontalScrollBar().value(), view.verticalScrollBar().value())
    assert after != before
    assert window.document.undo_stack.count() == 0  # panning is not an edit


def test_subscription_grouping_in_the_inspector(make_window, qtbot) -> None:
    window = make_window()
    window.open_path(SIMPLE)
    sub = window.document.topology().subscriptions[0]
    window.scene.select_ids({sub.id})
    QApplication.processEvents()
    inspector = window.inspector
    assert inspector.selected_kind == "subscription"
    inspector.grouping_combo.setCurrentText("fields")  # no field names yet: refused, reason shown
    assert window.document.subscription(sub.id).grouping == "shuffle"
    assert "at least one field" in inspector.row("fields").error.text()
    assert inspector.grouping_combo.currentText() == "shuffle"
    type_into(qtbot, inspector.row("fields"), "url, host")
    inspector.grouping_combo.setCurrentText("fields")
    changed = window.document.subscription(sub.id)
    assert (changed.grouping, changed.fields) == ("fields", ["url", "host"])
    assert window.scene.edges[sub.id].label == "fields(url,host)"
    window.editing.action_undo.trigger()
    assert window.document.subscription(sub.id).grouping == "shuffle"


def test_emission_rule_in_the_inspector(make_window, qtbot) -> None:
    window = make_window()
    window.open_path(SIMPLE)  # a D-VerT configuration: the rounded-up carry
    combo = window.inspector.emission_combo
    assert window.document.topology().settings.emission == "dvert" and combo.currentData() == "dvert"
    combo.setCurrentIndex(combo.findData("exact"))
    assert window.document.topology().settings.emission == "exact"
    window.editing.action_undo.trigger()
    assert window.document.topology().settings.emission == "dvert" and combo.currentData() == "dvert"
    window.new_document()
    assert window.document.topology().settings.emission == "exact" and combo.currentData() == "exact"


def test_declining_a_restore_discards_the_snapshot(make_window, tmp_path) -> None:
    folder = tmp_path / "autosave"
    first = make_window(autosave_dir=folder)
    first.add_component("spout")
    assert first.autosave_now()
    MainWindow._live_sessions.discard(first.autosave.session)
    first.autosave.active = False
    second = make_window(autosave_dir=folder)  # default answer: do not restore
    assert second.dialogs.shown[0][1] == "Restore unsaved work"
    assert second.document.topology().components == []
    assert not first.autosave.autosave_path.exists()
    third = make_window(autosave_dir=folder)
    assert third.dialogs.shown == []


def test_the_window_builds_its_panels(make_window) -> None:
    from app.gui.panels.runs import RunsPanel
    from app.gui.panels.verification import VerificationPanel

    window = make_window()
    assert isinstance(window.verification_panel, VerificationPanel)
    assert isinstance(window.runs_panel, RunsPanel)


def test_an_incomplete_document_saves_and_reopens(make_window, tmp_path) -> None:
    window = make_window()
    bolt = window.add_component("bolt")
    assert [p.path for p in window.document.problems()] == ["spouts"]
    target = tmp_path / "draft.storm.json"
    assert window.save_to(target)
    assert "no spout" in window.statusBar().currentMessage()
    other = make_window()
    assert other.open_path(target)
    assert [b.id for b in other.document.topology().bolts] == [bolt]
    assert "problem" in other.statusBar().currentMessage()
    assert "no tuple ever enters" in other.status_problems.toolTip()


def test_new_document_asks_and_clears(make_window) -> None:
    window = make_window()
    window.open_path(SIMPLE)
    window.editing.action_suggest.trigger()
    window.dialogs.answers["save_changes"] = "cancel"
    window.action_new.trigger()
    assert len(window.document.topology().bolts) == 3
    window.dialogs.answers["save_changes"] = "discard"
    window.action_new.trigger()
    assert window.document.topology().components == [] and window.document.path is None
    assert window.scene.nodes == {} and not window.isWindowModified()


def test_gui_command_rejects_verify_without_screenshot(capsys) -> None:
    from app.cli import main

    assert main(["gui", str(SIMPLE), "--verify"]) == 2
    assert "--verify needs --screenshot" in capsys.readouterr().err
    assert main(["gui", str(SIMPLE), "--screenshot", "out.jpg"]) == 2


def test_keyboard_shortcuts_on_the_canvas(make_window, qtbot) -> None:
    window = make_window()
    window.open_path(SIMPLE)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=30_000)
    window.canvas.setFocus()
    ctrl = Qt.KeyboardModifier.ControlModifier
    b1 = window.document.topology().bolt_by_name("B1").id
    window.scene.select_ids({b1})
    QTest.keyClick(window.canvas, Qt.Key.Key_C, ctrl)
    QTest.keyClick(window.canvas, Qt.Key.Key_V, ctrl)
    assert "B1_2" in {b.name for b in window.document.topology().bolts}
    window.scene.select_ids({b1})
    QTest.keyClick(window.canvas, Qt.Key.Key_Delete)
    assert "B1" not in {b.name for b in window.document.topology().bolts}
    QTest.keyClick(window.canvas, Qt.Key.Key_Z, ctrl)
    QTest.keyClick(window.canvas, Qt.Key.Key_Z, ctrl)
    assert window.document.topology().semantics() == load_topology(SIMPLE).semantics()


def test_gui_without_a_display_is_a_usage_error(monkeypatch, capsys) -> None:
    from app.cli import main

    monkeypatch.setattr(sys, "platform", "linux")
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    assert main(["gui"]) == 2
    assert "no display" in capsys.readouterr().err


def test_a_failed_save_keeps_the_work_and_the_old_file(make_window, tmp_path) -> None:
    window = make_window()
    window.open_path(SIMPLE)
    window.editing.action_suggest.trigger()
    folder = tmp_path / "is-a-folder.storm.json"
    folder.mkdir()
    assert not window.save_to(folder)
    kind, title, text = window.dialogs.shown[-1]
    assert (kind, title) == ("error", "Cannot save file") and str(folder) in text
    assert window.document.is_modified() and window.document.path == SIMPLE.resolve()
    assert load_topology(SIMPLE).semantics() != window.document.topology().semantics()


def test_screenshot_mode_with_verify_waits_for_the_verdict(tmp_path) -> None:
    import importlib.util

    if importlib.util.find_spec("app.gui.panels.verification") is None:
        pytest.skip("the verification panel is not part of this build")
    quick = json.loads(SIMPLE.read_text())  # B2 alone at k = 4: a counterexample in well under a second
    quick["verification"].update(checked=[b["id"] for b in quick["bolts"] if b["name"] == "B2"], k=4)
    source = tmp_path / "quick.storm.json"
    source.write_text(json.dumps(quick))
    out = tmp_path / "verified.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run([sys.executable, "-m", "app", "gui", str(source), "--screenshot", str(out), "--verify"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_save_as_dvert_json_exports_the_semantics(make_window, tmp_path) -> None:
    window = make_window()
    window.open_path(SIMPLE)
    target = tmp_path / "cfg.dvert.json"
    assert window.save_to(target)
    data = json.loads(target.read_text())
    assert "topology" in data and "schema_version" not in data  # D-VerT's shape
    assert load_topology(target).semantics() == load_topology(SIMPLE).semantics()


def test_the_status_line_names_what_each_problem_is_about(make_window) -> None:
    window = make_window()
    text = window.status_problems.text()
    assert text.startswith("⚠ topology: is empty"), text  # not a bare "is empty"


def test_a_max_idle_time_over_a_tenth_of_alpha_is_shown_as_check_shows_it(make_window, tmp_path) -> None:
    import json

    from app.core.formats import load_topology
    from app.core.rates import idle_warning

    source = SIMPLE
    window = make_window()
    assert window.open_path(source)
    assert "max idle time" not in window.status_problems.text()  # 0.01 s is well under α/10
    data = json.loads(source.read_text(encoding="utf-8"))
    data["settings"]["max_idle_time"] = 0.5  # over α/10 = 0.1 s of the 1 s bolt
    slow = tmp_path / "idle.storm.json"
    slow.write_text(json.dumps(data), encoding="utf-8")
    assert window.open_path(slow)
    warning = idle_warning(load_topology(slow))
    assert warning is not None
    assert f"max idle time over α/10 of {warning.bolts[0]}" in window.status_problems.text()
    assert warning.message in window.status_problems.toolTip()


def test_time_and_rate_fields_take_units_and_show_milliseconds(make_window, qtbot) -> None:
    """α typed as 20ms is stored as 0.02 s and shown as "20 ms"; a rate typed as 90/min is 1.5 tuples/s."""
    window = make_window()
    window.open_path(SIMPLE)
    b1 = window.document.topology().bolt_by_name("B1").id
    window.scene.select_ids({b1})
    row = window.inspector.row("alpha")
    assert row.edit.text() == "4 s"
    type_into(qtbot, row, "20ms")
    assert window.document.component(b1).alpha == 0.02
    row.edit.clearFocus()
    window.inspector.show_element(b1)
    assert window.inspector.row("alpha").edit.text() == "20 ms"
    s1 = window.document.topology().spouts[0].id
    window.scene.select_ids({s1})
    type_into(qtbot, window.inspector.row("rate"), "90/min")
    assert window.document.component(s1).rate == 1.5
    idle = window.inspector.row("max_idle_time", "settings")
    assert idle.edit.text() == "10 ms"


def _crashed_session(make_window, folder: Path, tmp_path: Path) -> tuple[Path, Topology]:
    """A session that crashed with unsaved work on a copy of SIMPLE (a bolt added): its snapshot and the work."""
    original = tmp_path / "a.storm.json"
    original.write_bytes(SIMPLE.read_bytes())
    os.utime(original, (1_000_000, 1_000_000))  # older than the snapshot
    crashed = make_window(autosave_dir=folder)
    crashed.open_path(original)
    crashed.add_component("bolt")
    assert crashed.autosave_now()
    work = crashed.document.topology()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait(timeout=60)
    crashed.autosave.lock_path.write_text(json.dumps({"pid": gone.pid}))
    MainWindow._live_sessions.discard(crashed.autosave.session)
    crashed.autosave.active = False
    return crashed.autosave.autosave_path, work


def test_a_file_named_after_a_restore_opens_beside_the_restored_work(make_window, tmp_path) -> None:
    """`stormbound gui a.storm.json` after a crash: Yes restores; the restored work stays open and
    modified in the first window, the file opens in a second one, and nothing asks or discards."""
    from app.cli.gui import open_windows

    folder = tmp_path / "autosave"
    snapshot, work = _crashed_session(make_window, folder, tmp_path)
    other = tmp_path / "b.storm.json"
    other.write_bytes(SIMPLE.read_bytes())
    answers = {"restore": True}  # no answer for save_changes: asking would cancel

    def make(**kwargs):  # noqa: ANN003, ANN202 - MainWindow's keyword arguments
        return make_window(autosave_dir=folder, dialogs=Dialogs(headless=True, answers=answers), **kwargs)

    first, second = open_windows(str(other), make)
    assert [d[1] for d in first.dialogs.shown] == ["Restore unsaved work"]
    assert first.document.topology().semantics() == work.semantics() and first.isWindowModified()
    assert second.document.path == other.resolve() and not second.isWindowModified()
    assert second.dialogs.shown == []
    assert snapshot.exists()  # kept until the restored work is saved or discarded
    assert first.save()
    assert not snapshot.exists() and not first.isWindowModified()


def test_restored_work_is_dropped_only_when_the_user_says_so(make_window, tmp_path) -> None:
    folder = tmp_path / "autosave"
    snapshot, _ = _crashed_session(make_window, folder, tmp_path)
    window = make_window(autosave_dir=folder, dialogs=Dialogs(headless=True, answers={"restore": True,
                                                                                      "save_changes": "cancel"}))
    assert window.restored and window.isWindowModified()
    assert not window.open_path(SIMPLE)  # asked, cancelled: the restored work stays
    assert snapshot.exists() and window.isWindowModified()
    window.dialogs.answers["save_changes"] = "discard"
    assert window.open_path(SIMPLE)  # asked, discarded knowingly
    assert not snapshot.exists()
    assert find_recoverable(folder, MainWindow._live_sessions) == []


def test_save_keeps_the_files_mode_and_refuses_a_folder(make_window, tmp_path) -> None:
    target = tmp_path / "kept.storm.json"
    target.write_bytes(SIMPLE.read_bytes())
    target.chmod(0o640)
    window = make_window()
    window.open_path(target)
    window.add_component("bolt")
    assert window.save()
    assert (target.stat().st_mode & 0o777) == 0o640
    folder = tmp_path / "taken.storm.json"
    folder.mkdir()
    assert not window.save_to(folder)
    assert "is a folder" in window.dialogs.shown[-1][2]


def test_streams_in_the_inspector_and_on_the_canvas(make_window, qtbot, tmp_path) -> None:
    """The inspector lists a component's declared streams with their σ and edits them; a link shows and
    edits the stream it reads; a non-default stream is named on its link."""
    window = make_window()
    window.open_path(SIMPLE)
    topo = window.document.topology()
    b1 = topo.bolt_by_name("B1")
    sub = next(s for s in topo.subscriptions if s.source == b1.id)
    window.scene.select_ids({b1.id})
    QApplication.processEvents()
    inspector = window.inspector
    assert inspector.row("streams").edit.text() == ""
    type_into(qtbot, inspector.row("streams"), "status=0.25, errors")
    changed = window.document.component(b1.id)
    assert changed.streams == ["status", "errors"] and changed.stream_sigma == {"status": 0.25}
    assert inspector.row("streams").edit.property("unannotated")  # errors has no σ yet
    type_into(qtbot, inspector.row("streams"), "status=-1")
    assert "status: must be at least 0" in inspector.row("streams").error.text()
    assert all(v >= 0 for v in window.document.component(b1.id).stream_sigma.values())  # refused: never set
    type_into(qtbot, inspector.row("streams"), "status=0.25, errors=0")
    window.scene.select_ids({sub.id})
    QApplication.processEvents()
    combo = inspector.stream_combo
    assert [combo.itemText(i) for i in range(combo.count())] == ["default", "status", "errors"]
    assert combo.currentText() == "default"
    combo.setCurrentText("status")
    assert window.document.subscription(sub.id).stream == "status"
    assert window.scene.edges[sub.id].label.startswith("status")
    assert "stream status of B1" in window.scene.edges[sub.id].toolTip()
    window.editing.action_undo.trigger()
    assert window.document.subscription(sub.id).stream is None
    assert not window.scene.edges[sub.id].label.startswith("status")


def test_a_new_document_idles_for_no_time(make_window) -> None:
    window = make_window()
    window.new_document()
    assert window.document.topology().settings.max_idle_time == 0


def test_failure_fields_in_the_inspector(make_window, qtbot) -> None:
    window = make_window()
    window.open_path(SIMPLE)  # a D-VerT configuration: no failure fields yet
    inspector = window.inspector
    assert inspector.failures_box.isChecked() and inspector.replay_combo.currentData() == "paced"
    b1 = window.document.topology().bolt_by_name("B1").id
    window.scene.select_ids({b1})
    type_into(qtbot, inspector.row("min_ttf"), "30 s")
    assert window.document.component(b1).min_ttf == 30
    type_into(qtbot, inspector.row("max_reboot_time", "settings"), "2 s")
    row = inspector.row("min_reboot_time", "settings")
    type_into(qtbot, row, "5")
    assert "min_reboot_time (5 s) is above max_reboot_time (2 s)" in row.error.text()
    type_into(qtbot, row, "1")
    topo = window.document.topology()
    assert (topo.settings.min_reboot_time, topo.settings.max_reboot_time) == (1, 2)
    inspector.replay_combo.setCurrentIndex(inspector.replay_combo.findData("at-once"))
    inspector.failures_box.setChecked(False)
    topo = window.document.topology()
    assert topo.settings.replay == "at-once" and topo.settings.failures is False
    window.editing.action_undo.trigger()
    assert window.document.topology().settings.failures is True and inspector.failures_box.isChecked()
    window.editing.action_undo.trigger()
    assert inspector.replay_combo.currentData() == "paced"
    parse_topology(json.loads(window.document.topology().to_json_bytes()))  # a valid document with failures


def test_one_rate_analysis_per_edit_shared_by_the_canvas_and_the_status_bar(make_window, monkeypatch) -> None:
    from app.core.rates import report as rates_report
    from app.gui.commands import SetParallelismCommand

    window = make_window()
    window.open_path(SIMPLE)
    made: list[Topology] = []
    analysis_init = rates_report.RateAnalysis.__init__

    def counted(analysis, topo) -> None:
        made.append(topo)
        analysis_init(analysis, topo)

    monkeypatch.setattr(rates_report.RateAnalysis, "__init__", counted)
    b3 = window.document.topology().bolt_by_name("B3")
    for parallelism in (b3.parallelism + 1, b3.parallelism + 2):
        made.clear()
        window.document.undo_stack.push(SetParallelismCommand(window.document, {"B3": parallelism}))
        snapshot = window.document.topology()
        # the canvas's colours and the status bar's counts both read the edit's one analysis
        assert made == [snapshot]
        assert window.document.rates().topo is snapshot
        assert made == [snapshot]
        status = window.document.rates().report(suggest=False).bolts["B3"].status
        assert window.scene.nodes[b3.id].rates.status == status

"""Drives the app on a real X display with real input events; run by tests/gui/test_real_display.py.

`python tests/gui/real_display_driver.py MODEL OUT.json [SCREENSHOT.png]` opens MODEL the way
`stormbound gui MODEL` does (window shown, then the file opened), then, with xdotool's real
mouse and keyboard events: F5 until a verdict, step the trace, drag a bolt from the palette onto
the canvas, connect a spout's output port to it. Each step's findings go to OUT.json under its
name (`{"ok": bool, "detail": str, ...}`); a step that fails does not stop the later ones when
they can run without it. Settings, autosaves and dialogs are private to the run (the caller sets
QT_QPA_PLATFORM=xcb, DISPLAY, HOME and STORMBOUND_AUTOSAVE_DIR).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QPoint, QRect, QRectF, QSettings  # noqa: E402 (after the path fix above)
from PySide6.QtWidgets import QApplication, QComboBox, QLineEdit, QWidget  # noqa: E402

# Generous bounds: the machine running the suite may be busy with other work
STEP_TIMEOUT_S = float(os.environ.get("STORMBOUND_REAL_DISPLAY_TIMEOUT", "60"))
VERIFY_TIMEOUT_S = 4 * STEP_TIMEOUT_S
FIT_FRACTION = 0.4


class StepFailed(Exception):
    """A wait ran out; the message says what was awaited and what was seen."""


def pump(seconds: float = 0.0) -> None:
    """Process events for about `seconds` (at least once)."""
    app = QApplication.instance()
    end = time.monotonic() + seconds
    while True:
        app.processEvents()
        if time.monotonic() >= end:
            return
        time.sleep(0.01)


def wait_until(condition: Callable[[], bool], what: str, seen: Callable[[], str] = lambda: "",
               timeout_s: float = STEP_TIMEOUT_S) -> None:
    """Process events until `condition()`; StepFailed naming `what` (and what was seen) after the timeout."""
    end = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > end:
            raise StepFailed(f"{what}: not after {timeout_s:.0f} s" + (f" ({seen()})" if seen() else ""))
        pump(0.02)


def xdotool(*args: str) -> None:
    """Run xdotool while the GUI keeps processing events (a drag runs Qt's own nested loop meanwhile)."""
    proc = subprocess.Popen(["xdotool", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_until(lambda: proc.poll() is not None, f"xdotool {' '.join(args)}")
    if proc.returncode != 0:
        raise StepFailed(f"xdotool {' '.join(args)} exited {proc.returncode}: {proc.stderr.read().strip()}")


def screen_point(widget: QWidget, point: QPoint) -> tuple[int, int]:
    """A widget-local point in root-window (screen) pixels, for xdotool."""
    where = widget.mapToGlobal(point)
    ratio = widget.devicePixelRatioF()
    return round(where.x() * ratio), round(where.y() * ratio)


def drag(start: tuple[int, int], end: tuple[int, int], steps: int = 12) -> None:
    """Press at `start`, move in small steps (past Qt's drag distance), release at `end`."""
    args = ["mousemove", str(start[0]), str(start[1]), "sleep", "0.2", "mousedown", "1", "sleep", "0.2"]
    for i in range(1, steps + 1):
        x = start[0] + (end[0] - start[0]) * i // steps
        y = start[1] + (end[1] - start[1]) * i // steps
        args += ["mousemove", str(x), str(y), "sleep", "0.05"]
    args += ["sleep", "0.3", "mouseup", "1"]
    xdotool(*args)


def settled(widget: QWidget, point: QPoint) -> tuple[int, int]:
    """Where `point` of `widget` is on screen once the layout stops moving it (a panel that just
    filled may still resize the window)."""
    last = None
    end = time.monotonic() + STEP_TIMEOUT_S
    while time.monotonic() < end:
        pump(0.3)
        here = screen_point(widget, point)
        if here == last:
            return here
        last = here
    raise StepFailed(f"{widget.objectName() or type(widget).__name__} keeps moving on screen")


def click(widget: QWidget, point: QPoint | None = None) -> None:
    x, y = settled(widget, point if point is not None else widget.rect().center())
    xdotool("mousemove", str(x), str(y), "sleep", "0.2", "click", "1")


def nodes_fraction(window: Any) -> dict[str, float]:
    """How much of the visible canvas the nodes' bounding box fills (width, height, area; 0..1)."""
    canvas = window.canvas
    rect = QRectF()
    for node in canvas.canvas_scene.nodes.values():
        rect = rect.united(node.sceneBoundingRect())
    shown = canvas.mapFromScene(rect).boundingRect()
    view = canvas.viewport().rect()
    inside = shown.intersected(view)
    return {"width": inside.width() / view.width(), "height": inside.height() / view.height(),
            "area": inside.width() * inside.height() / (view.width() * view.height()),
            "clipped": float(inside != shown)}


def clipped_fields(window: Any) -> list[str]:
    """Inspector fields whose box is cut off by the panel, or too narrow to read."""
    inspector = window.inspector
    viewport = inspector.viewport()
    wide = viewport.rect()
    out = []
    for field in inspector.widget().findChildren(QWidget):
        if not isinstance(field, QLineEdit | QComboBox) or not field.isVisible():
            continue
        box = QRect(field.mapTo(viewport, QPoint(0, 0)), field.size())
        if box.left() < wide.left() or box.right() > wide.right():
            out.append(f"{field.objectName()} spans x {box.left()}..{box.right()} of 0..{wide.right()}")
        elif field.width() < field.fontMetrics().horizontalAdvance("0" * 6):
            out.append(f"{field.objectName()} is {field.width()} px wide")
    if inspector.horizontalScrollBar().isVisible():
        out.append("the inspector scrolls sideways")
    return out


def main() -> int:
    model, out_path = Path(sys.argv[1]), Path(sys.argv[2])
    screenshot = Path(sys.argv[3]) if len(sys.argv) > 3 else None
    results: dict[str, Any] = {}
    application = QApplication(sys.argv[:1])
    from app.gui.dialogs import Dialogs
    from app.gui.mainwindow import MainWindow

    settings = QSettings(str(out_path.with_suffix(".settings.ini")), QSettings.Format.IniFormat)
    window = MainWindow(settings=settings, dialogs=Dialogs(headless=True, answers={"save_changes": "discard"}),
                        autosave_dir=Path(os.environ["STORMBOUND_AUTOSAVE_DIR"]), recover=False)

    def step(name: str, body: Callable[[], dict[str, Any]]) -> bool:
        started = time.monotonic()
        try:
            found = body()
            results[name] = {"ok": True, "detail": "", **found}
        except Exception as err:
            detail = str(err) if isinstance(err, StepFailed) else traceback.format_exc(limit=6)
            results[name] = {"ok": False, "detail": detail}
        results[name]["seconds"] = round(time.monotonic() - started, 2)
        out_path.write_text(json.dumps(results, indent=2))
        return bool(results[name]["ok"])

    def open_model() -> dict[str, Any]:
        window.show()  # as `stormbound gui FILE`: the window first, then the file
        if not window.open_path(model, ask=False):
            raise StepFailed(f"cannot open {model}: {window.dialogs.shown}")
        wait_until(lambda: window.isVisible() and window.windowHandle().isExposed(), "the window is exposed")
        wait_until(lambda: max(nodes_fraction(window)["width"], nodes_fraction(window)["height"]) >= FIT_FRACTION
                   and not nodes_fraction(window)["clipped"],
                   f"the nodes fill {FIT_FRACTION:.0%} of the canvas, unclipped", lambda: str(nodes_fraction(window)))
        pump(1.0)  # the layout has settled: the fit must still hold
        fraction = nodes_fraction(window)
        if max(fraction["width"], fraction["height"]) < FIT_FRACTION or fraction["clipped"]:
            raise StepFailed(f"after the layout settled the nodes fill {fraction}")
        frame, screen = window.frameGeometry(), window.screen().availableGeometry()
        return {"fraction": fraction, "window": [frame.x(), frame.y(), frame.width(), frame.height()],
                "screen": [screen.x(), screen.y(), screen.width(), screen.height()],
                "canvas": [window.canvas.viewport().width(), window.canvas.viewport().height()]}

    def inspector() -> dict[str, Any]:
        bolt = next(n for n in window.scene.nodes.values() if n.component.kind == "bolt")
        window.scene.select_ids({bolt.component_id})
        pump(0.3)
        problems = clipped_fields(window)
        window.scene.select_ids(set())
        pump(0.3)
        problems += clipped_fields(window)
        if problems:
            raise StepFailed("inspector fields clipped: " + "; ".join(problems))
        return {"inspector_width": window.inspector.width()}

    def verify() -> dict[str, Any]:
        panel = window.verification_panel
        finished: list[bool] = []
        panel.all_finished.connect(lambda: finished.append(True))
        window.activateWindow()
        xdotool("windowfocus", "--sync", str(int(window.winId())))
        wait_until(window.isActiveWindow, "the window has the keyboard focus")
        # the example's single bound k = 15 leaves B3 to the solver for minutes: clear it in the inspector,
        # typing as a user would, so the search runs k_min..k_max (simulated lassos first)
        bound = window.inspector.row("k", "verification").edit
        click(bound)
        wait_until(bound.hasFocus, "the inspector's Bound k field has the focus")
        xdotool("key", "ctrl+a", "BackSpace", "Return")
        wait_until(lambda: window.document.topology().verification.k is None, "Bound k is cleared",
                   lambda: f"k = {window.document.topology().verification.k}, field '{bound.text()}'")
        click(window.canvas, QPoint(5, 5))  # F5 from the canvas, as after editing the drawing
        xdotool("key", "F5")
        wait_until(lambda: bool(finished), "F5 verifies every property until a verdict",
                   lambda: panel.progress.label.text(), timeout_s=VERIFY_TIMEOUT_S)
        verdicts = [s.result.verdict if s.result is not None else s.error for s in panel.states]
        if not any(v in ("counterexample", "bounded") for v in verdicts):
            raise StepFailed(f"no verdict: {verdicts}")
        return {"verdicts": verdicts}

    def step_trace() -> dict[str, Any]:
        view = window.verification_panel.trace_view
        wait_until(lambda: view.trace is not None and view.isVisible(), "a counterexample trace is shown")
        start = view.cursor_index
        click(view.next_button)
        wait_until(lambda: view.cursor_index == start + 1, "▶ steps the trace", lambda: view.position_label.text())
        click(view.next_button)
        wait_until(lambda: view.cursor_index == start + 2, "▶ steps again", lambda: view.position_label.text())
        return {"position": view.position_label.text()}

    def drag_bolt() -> dict[str, Any]:
        palette, canvas = window.component_palette, window.canvas
        window.canvas.fit_all()
        pump(0.3)
        bolts_before = {b.name for b in window.document.topology().bolts}
        item = palette.item(1)  # Bolt
        source = settled(palette.viewport(), palette.visualItemRect(item).center())
        drop_at = QPoint(canvas.viewport().width() // 2, canvas.viewport().height() - 60)
        target = settled(canvas.viewport(), drop_at)
        drag(source, target)
        wait_until(lambda: len(window.document.topology().bolts) == len(bolts_before) + 1,
                   "the dragged bolt is on the canvas", lambda: f"{len(window.document.topology().bolts)} bolts")
        new = next(b for b in window.document.topology().bolts if b.name not in bolts_before)
        node = window.scene.nodes[new.id]
        where = canvas.mapFromScene(node.sceneBoundingRect().center())
        distance = (where - drop_at).manhattanLength()
        if distance > 60:
            raise StepFailed(f"the bolt landed {distance} px from where it was dropped")
        results["_new_bolt"] = new.id
        return {"bolt": new.name, "distance_px": distance}

    def connect_ports() -> dict[str, Any]:
        canvas, scene = window.canvas, window.scene
        target_id = results.get("_new_bolt")
        if target_id is None:
            raise StepFailed("no dragged bolt to connect to")
        spout = next(n for n in scene.nodes.values() if n.component.kind == "spout")
        target = scene.nodes[target_id]
        assert target.input_port is not None
        before = len(window.document.topology().subscriptions)
        start = settled(canvas.viewport(), canvas.mapFromScene(spout.output_port.scene_centre()))
        end = settled(canvas.viewport(), canvas.mapFromScene(target.input_port.scene_centre()))
        drag(start, end)
        wait_until(lambda: len(window.document.topology().subscriptions) == before + 1,
                   "a link from the spout's output port to the new bolt",
                   lambda: scene.last_refusal or f"{len(window.document.topology().subscriptions)} links")
        sub = window.document.topology().subscriptions[-1]
        if (sub.source, sub.target) != (spout.component_id, target_id):
            raise StepFailed(f"the link joins {sub.source} → {sub.target}")
        return {"link": f"{spout.component.name} → {target.component.name}"}

    step("open", open_model)
    step("inspector", inspector)
    if shutil.which("xdotool") is None:
        for name in ("verify", "trace", "drag", "connect"):
            results[name] = {"ok": False, "skip": "xdotool is not on PATH", "detail": ""}
    else:
        if step("verify", verify):
            step("trace", step_trace)
        step("drag", drag_bolt)
        step("connect", connect_ports)
    if screenshot is not None:
        window.grab().save(str(screenshot))
    window.shutdown()
    window.close()
    application.processEvents()
    results.pop("_new_bolt", None)
    out_path.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

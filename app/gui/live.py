"""Runs ▸ Live Mode: the canvas coloured by a running topology's measured capacity, beside the model's ρ.

A `LiveWorker` (app/gui/workers.py's Worker) polls the Storm UI off the GUI thread exactly as
`stormbound watch` does (app/measure/storm_watch.py: `Judge`) and hands each poll's
line to the GUI thread through its `progress` signal; the window's scene then shows, per bolt, the
measured capacity (its header colour), the model's ρ at the measured figures and the drift of α from
the document's. Stop turns Live Mode off at once: the worker is told to stop (the poll in hand is dropped at its
next request) and let go, disconnected, to end on its own (`LiveMode.stop`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLineEdit,
    QSpinBox,
    QWidget,
)

from app.core.topology import Topology
from app.gui.analysis import Analysed, analysed
from app.gui.plugins import PluginHost
from app.gui.workers import Worker
from app.measure.storm_watch import FAIL_AFTER, LAG_WINDOW_S, WINDOW, WatchLine

#: `watch`'s judging options in Live Mode, with watch's defaults and lowest values (app/cli/storm_live.py):
#: (request key, watch's option, default, lowest, whole number)
JUDGING = (("window", "--window", WINDOW, 2, True), ("lag_window", "--lag-window", LAG_WINDOW_S, 0.0, False),
           ("fail_after", "--fail-after", FAIL_AFTER, 1, True))
MOST_SECONDS = 365 * 24 * 3600.0  # watch's bound on a time option (app/cli/options.py, MAX_SECONDS)


def judging_problem(request: dict[str, Any]) -> str | None:
    """Why the request's judging options are not what `watch` accepts (None: they are), naming the option."""
    for key, option, _default, lowest, whole in JUDGING:
        value = request.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (whole and value != int(value)):
            return f"{option}: {value!r} is not a {'whole ' if whole else ''}number"
        if whole and value < lowest:
            return f"{option}: {value:g} is below {lowest}"
        if not whole and not lowest < value <= MOST_SECONDS:
            return f"{option}: {value:g} s is out of range (above 0, up to a year)"
    return None


class LiveDialog(QDialog):
    """Where the Storm UI is, which topology, how often."""

    def __init__(self, parent: QWidget | None, last: dict[str, Any]):
        super().__init__(parent)
        self.setWindowTitle("Live Mode (Storm UI)")
        self.setMinimumWidth(480)  # an address and a topology id read whole
        form = QFormLayout(self)
        self.url = QLineEdit(str(last.get("url", "http://localhost:8080")))
        self.topology = QLineEdit(str(last.get("topology", "")))
        self.topology.setPlaceholderText("id or name of the running topology")
        self.every = QDoubleSpinBox()
        self.every.setRange(0.05, 3600)
        self.every.setValue(float(last.get("every", 30)))
        self.every.setSuffix(" s")
        self.user = QLineEdit(str(last.get("user", "")))
        self.password = QLineEdit()
        self.password.setEchoMode(QLineEdit.EchoMode.Password)
        self.token = QLineEdit()
        self.token.setEchoMode(QLineEdit.EchoMode.Password)
        # watch's --window, --lag-window and --fail-after, with its defaults and bounds
        self.intervals = QSpinBox()
        self.intervals.setRange(2, 1000)
        self.intervals.setValue(int(last.get("window", WINDOW)))
        self.intervals.setSuffix(" intervals")
        self.intervals.setToolTip("intervals between polls each verdict rests on (watch --window)")
        self.lag_window = QDoubleSpinBox()
        self.lag_window.setRange(0.05, MOST_SECONDS)
        self.lag_window.setValue(float(last.get("lag_window", LAG_WINDOW_S)))
        self.lag_window.setSuffix(" s")
        self.lag_window.setToolTip("seconds of polls the Kafka lag's growth is fitted over, at least two offset "
                                   "commits (watch --lag-window)")
        self.fail_after = QSpinBox()
        self.fail_after.setRange(1, 1000)
        self.fail_after.setValue(int(last.get("fail_after", FAIL_AFTER)))
        self.fail_after.setSuffix(" polls")
        self.fail_after.setToolTip("successive polls that must agree before a bolt's alarm is raised "
                                   "(watch --fail-after)")
        for label, widget in (("Storm UI", self.url), ("Topology", self.topology), ("Every", self.every),
                              ("Window", self.intervals), ("Lag window", self.lag_window),
                              ("Fail after", self.fail_after),
                              ("User", self.user), ("Password", self.password), ("Token", self.token)):
            form.addRow(label, widget)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def values(self) -> dict[str, Any]:
        return {"url": self.url.text().strip(), "topology": self.topology.text().strip(),
                "every": self.every.value(), "window": self.intervals.value(), "lag_window": self.lag_window.value(),
                "fail_after": self.fail_after.value(), "user": self.user.text().strip() or None,
                "password": self.password.text() or None, "token": self.token.text() or None}


class LiveWorker(Worker[int]):
    """Polls the Storm UI until cancelled (or `polls` are done); each poll's WatchLine arrives by `progress`.
    The result is the number of polls; `model_found` carries the first poll's topology when no model was given,
    laid out and analysed here, off the GUI thread (an `Analysed`, as File ▸ Open's worker makes one: 3,000 bolts
    take seconds), for the canvas to draw."""

    model_found = Signal(object)

    def __init__(self, request: dict[str, Any], model: Topology | None, parent: QObject | None = None):
        super().__init__(parent)
        self.request = dict(request)
        self.model = model
        self.stop = threading.Event()

    def cancel(self) -> None:
        self.stop.set()

    def work(self) -> int:
        from app.core.layout import with_layout
        from app.core.storm.ui.client import Credentials, StormUIClient
        from app.core.storm.ui.fetch import find_topology
        from app.core.storm.ui.reader import from_storm_ui
        from app.core.storm.ui.replies import StormUISnapshot
        from app.core.topology import unannotated_problems
        from app.measure.storm_record import poll_loop
        from app.measure.storm_run import components_mismatch
        from app.measure.storm_watch import Judge

        r = self.request
        client = StormUIClient(r["url"], Credentials.resolve(r.get("user"), r.get("password"), r.get("token")),
                               timeout_s=float(r.get("timeout", 10)))
        ident = find_topology(client, r["topology"])
        every = float(r.get("every", 30))
        judge = Judge(self.model, every, fail_on="may-grow", window=int(r.get("window", WINDOW)),
                      fail_after=int(r.get("fail_after", FAIL_AFTER)),
                      lag_window=float(r.get("lag_window", LAG_WINDOW_S)))
        done = 0
        for poll in poll_loop(client, ident, every, polls=r.get("polls"), stop=self.stop, drop_on_stop=True):
            if poll.ok and self.model is not None:
                wrong = components_mismatch(self.model, poll)
                if wrong is not None:  # the open document is another topology: refused, as `watch --doc`
                    raise ValueError(f"{wrong}: open the document of {ident}, or a new window")
            if poll.ok and judge.model is None:
                found = from_storm_ui(StormUISnapshot(url=client.base, topology_id=ident, window="all",
                                                      topology=poll.topology, components=poll.components))
                judge.model = None if unannotated_problems(found.topology) else found.topology
                if judge.model is not None:
                    self.model_found.emit(analysed(with_layout(judge.model)))
            self.progress.emit(judge.add(poll))
            done += 1
        return done


class LiveMode(QObject):
    """Runs ▸ Live Mode (Storm UI)… and Stop Live Mode: the worker, and the scene fed with each poll (a plug-in,
    app/gui/plugins.py)."""

    name = "live"
    sections = ("Runs ▸ Live",)

    def __init__(self, host: PluginHost):
        super().__init__(host.host_widget())
        self.host = host
        self.widget = host.host_widget()  # the parent of the dialogs and actions
        self.worker: LiveWorker | None = None
        self.stopping: list[LiveWorker] = []  # stopped, still ending (a request or a judgement in hand)
        self.last: WatchLine | None = None
        section = host.menu_section("Runs ▸ Live")
        self.action_start = self._action("&Live Mode (Storm UI)…", self.start_dialog, "action_live_start",
                                         "Poll a running topology's Storm UI and colour the bolts by their measured "
                                         "capacity, beside the model's ρ at the measured figures")
        self.action_stop = self._action("Stop Live &Mode", self.stop, "action_live_stop", "Stop polling the Storm UI")
        self.action_stop.setEnabled(False)
        section.add_action(self.action_start)
        section.add_action(self.action_stop)

    def _action(self, text: str, slot: Callable[[], object], name: str, tip: str) -> QAction:
        action = QAction(text, self.widget)
        action.setObjectName(name)
        action.setStatusTip(tip)
        action.triggered.connect(slot)
        return action

    def start_dialog(self) -> None:
        from app.gui.dialogs import ask_storm_ui

        request = ask_storm_ui(self.host, "live", ("url", "topology", "every", "user", "window", "lag_window",
                                                   "fail_after"), "Live Mode",
                               lambda last: LiveDialog(self.widget, last))
        if request is not None:
            self.start(request)

    def start(self, request: dict[str, Any]) -> LiveWorker | None:
        """Start polling (the open document is the model when it is annotated, else the first poll's topology)."""
        from app.core.topology import unannotated_problems

        if self.worker is not None and self.worker.isRunning():
            self.host.show_message("Live Mode is already on")
            return None
        problem = judging_problem(request)
        if problem is not None:
            self.host.dialogs.error(self.widget, "Live Mode", problem)
            return None
        topo = self.host.document.topology()
        model = topo if topo.bolts and not unannotated_problems(topo) else None
        self.worker = LiveWorker(request, model, parent=self)
        self.worker.progress.connect(self._on_line)
        self.worker.model_found.connect(self._on_model)
        self.worker.failed.connect(self._on_failed)
        self.worker.finished.connect(self._on_finished)
        self.action_start.setEnabled(False)
        self.action_stop.setEnabled(True)
        self.host.show_message(f"Live Mode: polling {request['topology']} at {request['url']} …", 0)
        self.worker.start()
        return self.worker

    def stop(self) -> None:
        """Stop Live Mode now: the worker is told to stop (it drops the poll in hand at its next request) and
        let go at once, its signals disconnected, so Live Mode is off within the click even while a request or
        a poll's judgement (seconds for 3,000 bolts) is under way; the thread ends on its own, referenced until
        then (app/gui/workers.py; docs/gui.md, "Who frees what"), and is joined on shutdown."""
        worker = self.worker
        if worker is None or not worker.isRunning():
            return
        worker.cancel()
        for signal, slot in ((worker.progress, self._on_line), (worker.model_found, self._on_model),
                             (worker.failed, self._on_failed), (worker.finished, self._on_finished)):
            signal.disconnect(slot)
        self.stopping.append(worker)
        worker.finished.connect(self._forget_stopped)
        self.worker = None
        self._on_finished()

    def _forget_stopped(self) -> None:
        self.stopping = [w for w in self.stopping if w.isRunning()]

    def shutdown(self, timeout_ms: int = 5000) -> bool:
        workers = [w for w in (self.worker, *self.stopping) if w is not None]
        return all([w.join(timeout_ms) for w in workers])

    def _on_line(self, line: object) -> None:
        from app.measure.storm_watch import format_watch_line

        if not isinstance(line, WatchLine):
            return
        self.last = line
        if line.statuses:
            self.host.scene.set_live({n: w.model_dump() for n, w in line.bolts.items()}, line.statuses)
        alarm = f"⚠ {line.agreeing} successive polls with a bolt that may grow or worse · " if line.fail else ""
        self.host.show_message("Live: " + alarm + format_watch_line(line), 0)

    def _on_model(self, known: object) -> None:
        """The running topology read from its first poll, laid out and analysed by the worker: drawn when the
        canvas is empty, so its bolts can be coloured (an open document is never replaced). A large one is drawn
        in turns (app/gui/canvas/scene.py), the window answering between them."""
        if not isinstance(known, Analysed) or self.host.document.topology().components:
            return
        self.host.document.replace(known.topology, None, known)
        self.host.canvas.fit_all()

    def _on_failed(self, text: str) -> None:
        self.host.dialogs.error(self.widget, "Live Mode", text)

    def _on_finished(self) -> None:
        self.action_start.setEnabled(True)
        self.action_stop.setEnabled(False)
        self.host.scene.set_live(None, None)
        self.host.show_message("Live Mode stopped")


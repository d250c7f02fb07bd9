"""Background workers outlive nothing they should not: an owner deleted mid-work never takes a running
QThread with it (Qt aborts the process then), and `Worker.stop_all` cancels and joins every kind."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

from app.core.results import VerifyResult
from app.gui.workers import CallWorker, VerifyWorker, Worker

ROOT = Path(__file__).resolve().parents[2]

OWNER_GONE = textwrap.dedent("""
    import sys, threading
    sys.path.insert(0, sys.argv[1])
    import shiboken6
    from PySide6.QtCore import QCoreApplication, QObject
    from app.gui.workers import CallWorker
    app = QCoreApplication([])
    release = threading.Event()
    owner = QObject()
    worker = CallWorker(lambda report: release.wait(30), parent=owner)
    worker.start()
    shiboken6.delete(owner)  # the owner goes away mid-work, as a panel closed while it reads a log
    running = worker.isRunning()
    release.set()
    print("running after owner deleted:", running, "joined:", worker.join(10_000))
""")


def test_deleting_the_owner_of_a_running_worker_does_not_abort() -> None:
    # in a child process: before the fix Qt deleted the running QThread with its owner (SIGABRT, exit 134)
    done = subprocess.run([sys.executable, "-c", OWNER_GONE, str(ROOT)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr.strip()[-500:]}"
    assert "running after owner deleted: True joined: True" in done.stdout


class WaitingSearch:
    """A search that runs until cancelled."""

    def __init__(self, topo: Any, options: Any = None, **kwargs: Any) -> None:
        self.stop = threading.Event()

    def run(self) -> VerifyResult:
        self.stop.wait(60)
        return VerifyResult(property="growth", verdict="unknown", elapsed_s=0.0, message="Cancelled.")

    def cancel(self) -> None:
        self.stop.set()


def test_stop_all_cancels_and_joins_every_kind(qtbot, models_dir: Path) -> None:
    from app.core.formats import load_topology

    release = threading.Event()
    call: CallWorker[bool] = CallWorker(lambda report: release.wait(60), on_cancel=release.set)
    verify = VerifyWorker(load_topology(models_dir / "simple-DIA-cfg-1.storm.json"), search_factory=WaitingSearch)
    call.start()
    verify.start()
    qtbot.waitUntil(lambda: verify._search is not None, timeout=30_000)
    assert set(Worker.running_workers()) >= {call, verify}
    assert Worker.stop_all(30_000) == []
    assert call.isFinished() and verify.isFinished() and verify.is_cancelled()
    assert call not in CallWorker._running and verify not in VerifyWorker._running


def test_a_worker_outliving_stop_all_stays_referenced(qtbot) -> None:
    release = threading.Event()
    stubborn: CallWorker[bool] = CallWorker(lambda report: release.wait(60))  # no way to cancel it
    stubborn.start()
    try:
        assert Worker.stop_all(100) == [stubborn]
        assert stubborn in CallWorker._running and stubborn.isRunning()
    finally:
        release.set()
    assert stubborn.join(30_000)


def test_the_collector_pauses_while_a_search_runs(qtbot, models_dir: Path) -> None:
    # the GUI thread's collector must not free a running search's z3 objects (app/gui/workers.py)
    import gc

    from app.core.formats import load_topology

    assert gc.isenabled()
    worker = VerifyWorker(load_topology(models_dir / "simple-DIA-cfg-1.storm.json"), search_factory=WaitingSearch)
    worker.start()
    try:
        qtbot.waitUntil(lambda: worker._search is not None, timeout=30_000)
        assert not gc.isenabled()
    finally:
        assert worker.join(30_000)
    assert gc.isenabled()


def test_a_search_ending_inside_a_core_pause_does_not_end_it(qtbot, models_dir: Path) -> None:
    # one pause count for the GUI's searches and the core's trace work (app/core/gc_pause.py): a search
    # that ends while a certification (begun after it) still runs must leave the collector paused
    import gc

    from app.core.formats import load_topology
    from app.core.gc_pause import paused_gc

    assert gc.isenabled()
    worker = VerifyWorker(load_topology(models_dir / "simple-DIA-cfg-1.storm.json"), search_factory=WaitingSearch)
    worker.start()
    try:
        qtbot.waitUntil(lambda: worker._search is not None, timeout=30_000)
        with paused_gc():
            worker.cancel()
            assert worker.join(30_000)
            assert not gc.isenabled()
    finally:
        worker.cancel()
        assert worker.join(30_000)
    assert gc.isenabled()

"""Background workers: a verification runs in its own QThread with its own Search (own z3 context).

The Search is created inside the worker thread, so its z3 objects never cross threads;
the GUI thread only calls the thread-safe `Search.cancel()` (which interrupts the z3
context). Results and progress are plain pydantic models, delivered through queued
signals; connect them only to bound methods of GUI-thread objects (a lambda would run
in the worker thread).
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Protocol

from PySide6.QtCore import QObject, QThread, Signal

from app.core.tcn.result import Progress, PropertyKind, VerifyResult
from app.core.topology import Topology


class SearchLike(Protocol):
    """What the worker needs of `app.core.tcn.search.Search`."""

    def run(self) -> VerifyResult: ...

    def cancel(self) -> None: ...


SearchFactory = Callable[..., SearchLike]


def default_search_factory(topo: Topology, **options: Any) -> SearchLike:
    """The real verifier (imported lazily so the GUI opens even while the verifier is missing)."""
    from app.core.tcn.search import Search

    return Search(topo, **options)


class VerifyWorker(QThread):
    """Verifies one property of a topology snapshot in a background thread.

    Signals: `progress(Progress)` while searching, then exactly one of
    `result_ready(VerifyResult)` or `failed(str)` (a one-line message), then QThread's
    `finished`. A cancelled search reports its own "unknown" result; if it was cancelled
    before the search even started, the worker reports "unknown" itself.
    """

    progress = Signal(object)
    result_ready = Signal(object)
    failed = Signal(str)

    # running workers stay referenced here until they finish, so a panel (or window) closed
    # mid-search never destroys a running QThread
    _running: set["VerifyWorker"] = set()

    def __init__(self, topo: Topology, *, prop: PropertyKind = "growth", options: dict[str, Any] | None = None,
                 search_factory: SearchFactory | None = None, parent: QObject | None = None):
        super().__init__(parent)
        self.topology = topo
        self.prop: PropertyKind = prop
        self.options = dict(options or {})
        self._factory = search_factory or default_search_factory
        self._lock = threading.Lock()
        self._search: SearchLike | None = None
        self._cancelled = False
        self.started_at = 0.0
        self.cancel_requested_at: float | None = None
        self.finished.connect(self._forget)

    def start(self, priority: QThread.Priority = QThread.Priority.InheritPriority) -> None:
        """Start the search thread (kept referenced until it finishes)."""
        VerifyWorker._running.add(self)
        super().start(priority)

    def _forget(self) -> None:
        # `finished` is emitted just before the thread ends: join it before dropping the last reference
        self.wait()
        VerifyWorker._running.discard(self)

    @classmethod
    def stop_all(cls, timeout_ms: int = 5000) -> None:
        """Cancel every running verification and wait for the threads (application exit)."""
        workers = list(cls._running)
        for worker in workers:
            worker.cancel()
        for worker in workers:
            worker.wait(timeout_ms)
        cls._running.clear()

    def cancel(self) -> None:
        """Ask the search to stop (GUI thread); the result still arrives through `result_ready`."""
        with self._lock:
            if self.cancel_requested_at is None:
                self.cancel_requested_at = time.monotonic()
            self._cancelled = True
            search = self._search
        if search is not None:
            search.cancel()

    def is_cancelled(self) -> bool:
        with self._lock:
            return self._cancelled

    def _report(self, progress: Progress) -> None:
        # called in the worker thread by the search; the signal is queued to the GUI thread
        self.progress.emit(progress)

    def _cancelled_result(self, elapsed: float) -> VerifyResult:
        return VerifyResult(property=self.prop, verdict="unknown", elapsed_s=elapsed,
                            threshold=self.options.get("threshold"),
                            message="Verification was cancelled before the search started.")

    def run(self) -> None:  # noqa: D401 - QThread entry point
        self.started_at = time.monotonic()
        try:
            with self._lock:
                if self._cancelled:
                    search = None
                else:
                    search = self._factory(self.topology, progress=self._report, **self.options)
                    self._search = search
            if search is None:
                self.result_ready.emit(self._cancelled_result(0.0))
                return
            if self.is_cancelled():
                search.cancel()
            result = search.run()
            if result.property != self.prop:
                result = result.model_copy(update={"property": self.prop})
            self.result_ready.emit(result)
        except Exception as err:  # any failure becomes one line for the panel, never a crash of the thread
            text = str(err).splitlines()[0] if str(err) else type(err).__name__
            self.failed.emit(f"{type(err).__name__}: {text}" if not isinstance(err, ValueError) else text)
        finally:
            with self._lock:
                self._search = None


class CallWorker(QThread):
    """Runs one plain function off the GUI thread (a download, a file import) and reports its value.

    Signals: `progress(str)` (the function's `report` argument), then exactly one of
    `result_ready(object)` or `failed(str)` (one line). Like VerifyWorker it stays
    referenced until it finishes, so closing a window never destroys a running thread.
    """

    progress = Signal(str)
    result_ready = Signal(object)
    failed = Signal(str)

    _running: set["CallWorker"] = set()

    def __init__(self, function: Callable[..., Any], *args: Any, parent: QObject | None = None, **kwargs: Any):
        super().__init__(parent)
        self._function = function
        self._args = args
        self._kwargs = kwargs
        self.finished.connect(self._forget)

    def start(self, priority: QThread.Priority = QThread.Priority.InheritPriority) -> None:
        CallWorker._running.add(self)
        super().start(priority)

    def _forget(self) -> None:
        self.wait()
        CallWorker._running.discard(self)

    def run(self) -> None:  # noqa: D401 - QThread entry point
        try:
            value = self._function(*self._args, report=self.progress.emit, **self._kwargs)
        except Exception as err:  # one line for the window, never a crash of the thread
            text = str(err).splitlines()[0] if str(err) else type(err).__name__
            self.failed.emit(text)
            return
        self.result_ready.emit(value)

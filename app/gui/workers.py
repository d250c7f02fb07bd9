"""The one way to run work off the GUI thread: a `Worker` (a QThread) per piece of work, with a typed result.

A worker runs `work()` in its own thread and reports through queued signals:
`progress(WorkProgress | Progress)` while it runs, then exactly one of
`result_ready(T)` or `failed(str)` (one line), then QThread's `finished`.
Connect them only to bound methods of GUI-thread objects: a lambda has no thread
affinity, and which thread runs it has changed between PySide6 versions. A worker is never a
Qt child of its owner (the `parent` argument is not passed to QThread): Qt would
delete a child QThread with its owner even while it runs, which aborts the
process. Running workers stay referenced (per worker class) until they finish,
so closing a panel or window mid-work never destroys a running QThread; owners
cancel and join theirs when they shut down (`join`), and `Worker.stop_all`
cancels and joins every one when the application quits.

Three kinds: `VerifyWorker` (one property of a topology snapshot, with its own
Search and so its own z3 context; the GUI thread only calls the thread-safe
`Search.cancel()`, which interrupts the z3 context), and `CallWorker`, which runs
a function: the Spark host calls of the Runs panel, the stream comparison of
the DiffStream dialog and the monitor patterns over a run's log.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

from PySide6.QtCore import QObject, QThread, Signal

from app.core.formats.trace import Trace, expanded_trace
from app.core.gc_pause import paused_gc
from app.core.rates import RateAnalysis
from app.core.results import Progress, PropertyKind, VerifyResult
from app.core.tcn.options import SearchOptions
from app.core.topology import Topology

if TYPE_CHECKING:
    from app.core.latency.report import LatencyReport

T = TypeVar("T")


@dataclass(frozen=True)
class WorkProgress:
    """How far a piece of background work is: one line of text and, when known, a fraction in [0, 1]."""

    fraction: float | None
    message: str


class Worker(QThread, Generic[T]):
    """Runs `work()` in a background thread; the result (type T) or a one-line failure comes back by signal."""

    progress = Signal(object)
    result_ready = Signal(object)
    failed = Signal(str)

    _running: ClassVar[set[Any]] = set()
    _kinds: ClassVar[list[type[Worker[Any]]]] = []

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._running = set()  # one registry per kind of worker
        Worker._kinds.append(cls)

    def __init__(self, parent: QObject | None = None):
        # `parent` says who owns the work, but is not the QThread's Qt parent (see the module's docstring)
        super().__init__(None)
        self.owner_name = type(parent).__name__ if parent is not None else ""
        self.finished.connect(self._forget)

    def start(self, priority: QThread.Priority = QThread.Priority.InheritPriority) -> None:
        """Start the thread (kept referenced until it finishes)."""
        type(self)._running.add(self)
        super().start(priority)

    def _forget(self) -> None:
        # `finished` is emitted just before the thread ends: join it before dropping the last reference
        self.wait()
        type(self)._running.discard(self)

    def join(self, timeout_ms: int = 5000) -> bool:
        """Cancel and wait at most `timeout_ms` for the thread to end; True when it has (owner shutdown).

        A worker still running afterwards stays referenced, so it is never destroyed while it runs.
        """
        if not self.isRunning():
            return True
        self.cancel()
        return self.wait(timeout_ms)

    @classmethod
    def running_workers(cls) -> list[Worker[Any]]:
        """The workers of this kind (`Worker`: of every kind) whose thread is still running."""
        kinds = [cls, *(k for k in Worker._kinds if issubclass(k, cls) and k is not cls)]
        return [w for kind in kinds for w in list(kind._running) if w.isRunning()]

    @classmethod
    def stop_all(cls, timeout_ms: int = 5000) -> list[Worker[Any]]:
        """Cancel every running worker of this kind (`Worker`: of every kind) and wait for the threads,
        `timeout_ms` in all (application exit, test teardown); returns those still running."""
        workers = cls.running_workers()
        for worker in workers:
            worker.cancel()
        deadline = time.monotonic() + timeout_ms / 1000
        still: list[Worker[Any]] = []
        for worker in workers:
            if not worker.wait(max(0, int((deadline - time.monotonic()) * 1000))):
                still.append(worker)
        kinds = [cls, *(k for k in Worker._kinds if issubclass(k, cls) and k is not cls)]
        for kind in kinds:  # ended ones are forgotten now (their `finished` may still be queued)
            kind._running.difference_update({w for w in kind._running if w.isFinished()})
        return still

    def cancel(self) -> None:
        """Ask the work to stop (GUI thread); what stopping means is the worker's own."""

    def work(self) -> T:
        """The work itself (runs in the worker thread)."""
        raise NotImplementedError

    def failure_text(self, err: Exception) -> str:
        """The one line `failed` carries for an exception of `work`."""
        return str(err).splitlines()[0] if str(err) else type(err).__name__

    def run(self) -> None:  # the QThread entry point
        try:
            result = self.work()
        except Exception as err:  # any failure becomes one line for the GUI, never a crash of the thread
            self.failed.emit(self.failure_text(err))
            return
        self.result_ready.emit(result)


class CallWorker(Worker[T]):
    """Runs `function(*args, report=..., **kwargs)` off the GUI thread (a Spark call, a download, a file import).

    The function calls `report(message, fraction=None)` as it goes (in the worker thread); each
    call arrives as a WorkProgress. `on_cancel()` is what `cancel()` does (e.g. cancel the Spark
    request the function started); `describe(err)` words a failure (default: its first line).
    """

    def __init__(self, function: Callable[..., T], *args: Any, parent: QObject | None = None,
                 on_cancel: Callable[[], None] | None = None, describe: Callable[[Exception], str] | None = None,
                 **kwargs: Any):
        super().__init__(parent)
        self.function = function
        self.args = args
        self.kwargs = kwargs
        self.on_cancel = on_cancel
        self.describe = describe

    def report(self, message: str, fraction: float | None = None) -> None:
        """Progress from the function (worker thread); delivered to the GUI thread as a WorkProgress."""
        self.progress.emit(WorkProgress(fraction, message))

    def cancel(self) -> None:
        if self.on_cancel is not None:
            self.on_cancel()

    def work(self) -> T:
        return self.function(*self.args, report=self.report, **self.kwargs)

    def failure_text(self, err: Exception) -> str:
        return self.describe(err) if self.describe is not None else super().failure_text(err)


class SearchLike(Protocol):
    """What the worker needs of `app.core.tcn.search.Search`."""

    def run(self) -> VerifyResult: ...

    def cancel(self) -> None: ...


class SearchFactory(Protocol):
    """Builds the search of one property: `Search(topo, options, progress=...)` or a stand-in."""

    def __call__(self, topo: Topology, options: SearchOptions, *,
                 progress: Callable[[Progress], None]) -> SearchLike: ...


def default_search_factory(topo: Topology, options: SearchOptions, *, progress: Callable[[Progress], None],
                           rates: RateAnalysis | None = None) -> SearchLike:
    """The real verifier (imported here, in the worker thread, so that z3 loads only when a search runs), reading
    the snapshot's rate analysis when given."""
    from app.core.tcn.search import Search

    return Search(topo, options, progress=progress, rates=rates)


class VerifyWorker(Worker[VerifyResult]):
    """Verifies one property of a topology snapshot in a background thread.

    Signals: `progress(Progress)` while searching, then exactly one of
    `result_ready(VerifyResult)` or `failed(str)` (a one-line message), then QThread's
    `finished`. A cancelled search reports its own "unknown" result; if it was cancelled
    before the search even started, the worker reports "unknown" itself.
    """

    def __init__(self, topo: Topology, *, prop: PropertyKind = "growth", options: SearchOptions | None = None,
                 search_factory: SearchFactory | None = None, rates: RateAnalysis | None = None,
                 parent: QObject | None = None):
        super().__init__(parent)
        self.topology = topo
        # the snapshot's rate analysis (app/core/rates/report.py), shared with the document and the other
        # properties' workers: the search's rate phase and the capacity lines read it
        self.rates = rates
        self.prop: PropertyKind = prop
        self.options = SearchOptions() if options is None else options
        self._factory: SearchFactory = search_factory or partial(default_search_factory, rates=rates)
        self._lock = threading.Lock()
        self._search: SearchLike | None = None
        self._cancelled = False
        self.started_at = 0.0
        self.cancel_requested_at: float | None = None
        # capacity in Storm's terms (app/core/headroom.py), a line each: set in the worker thread before
        # `result_ready` is emitted, so the GUI thread reads it when the result arrives
        self.capacity: list[str] = []
        # per spout: can a tuple tree outlast the message timeout (app/core/latency/report.py): the short
        # answers, then the sentences
        self.timeouts: tuple[list[str], list[str]] = ([], [])

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
        """Whether `cancel` was called."""
        with self._lock:
            return self._cancelled

    def _report(self, progress: Progress) -> None:
        # called in the worker thread by the search; the signal is queued to the GUI thread
        self.progress.emit(progress)

    def _cancelled_result(self, elapsed: float) -> VerifyResult:
        return VerifyResult(property=self.prop, verdict="unknown", elapsed_s=elapsed,
                            threshold=self.options.threshold,
                            message="Verification was cancelled before the search started.")

    def work(self) -> VerifyResult:
        # the collector runs in whichever thread allocates: left on, the GUI thread could free this
        # search's z3 objects (in reference cycles) while this thread builds terms in the same z3
        # context, which is not thread-safe (a segmentation fault under load); paused while any
        # search runs, those cycles are freed after the last one ends (app/core/gc_pause.py)
        with paused_gc():
            return self._verify()

    def _verify(self) -> VerifyResult:
        self.started_at = time.monotonic()
        try:
            with self._lock:
                if self._cancelled:
                    search = None
                else:
                    search = self._factory(self.topology, self.options, progress=self._report)
                    self._search = search
            if search is None:
                return self._cancelled_result(0.0)
            if self.is_cancelled():
                search.cancel()
            result = search.run()
            if result.property != self.prop:
                result = result.model_copy(update={"property": self.prop})
            if any(not isinstance(t, Trace) for t in result.traces):  # the trace view shows every position
                traces = [expanded_trace(t) for t in result.traces]
                result = result.model_copy(update={"traces": traces, "trace": traces[0]})
            if self.prop == "growth" and not self.is_cancelled():
                latency = self._latency()
                self.capacity = self._capacity(latency)
                self.timeouts = ([], []) if latency is None else (latency.short(), latency.lines())
            return result
        finally:
            with self._lock:
                self._search = None

    def _capacity(self, latency: LatencyReport | None) -> list[str]:
        from app.core.headroom import headroom
        from app.core.storm.lines import capacity_lines

        try:
            room = headroom(self.topology, self.rates)
        except ValueError:  # a document the rate check refuses has no capacity to tell
            return []
        return capacity_lines(room if latency is None else room.within_sojourns(latency.sojourn_exact))

    def _latency(self) -> LatencyReport | None:
        from app.core.latency.report import latency_report

        try:
            return latency_report(self.topology)
        except ValueError:  # a document the rate check refuses has no latency to tell
            return None

    def failure_text(self, err: Exception) -> str:
        text = str(err).splitlines()[0] if str(err) else type(err).__name__
        return text if isinstance(err, ValueError) else f"{type(err).__name__}: {text}"

"""What the Runs panel does, without its widgets: attach Spark, run, open a log, compare, apply measured values.

Spark work goes through the Spark host process (`app.spark.client.SparkHost`); a log is
analysed and checked by the engine the one factory picks (app.measure.engines.open_log_engine, as
the CLI does): in this process when `engine` allows it (`auto`: logs on this machine,
app.measure.engine_choice), so no Spark needs attaching for it. Each call runs in a
`CallWorker` (app.gui.workers); results come back as typed values (`RunAnalysed`,
`ReliabilityReport`, `MonitorMatches`) to bound methods of this controller, which lives
in the GUI thread. The view (`app.gui.panels.runs`) reads
its state and follows its signals.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject, Signal

from app.core.topology import Topology
from app.gui.commands import SetComponentFieldsCommand
from app.gui.document import DocumentModel
from app.gui.workers import CallWorker, WorkProgress
from app.measure.analysis import Analysis
from app.measure.model_vs_measured import Comparison, calibrate, compare
from app.measure.reliability import ReliabilityConfig, ReliabilityReport, run_settings

if TYPE_CHECKING:
    from app.cep import Match, Pattern
    from app.measure.log_engine import LogEngine

MEASURED_FIELDS = ("rate", "burst", "alpha", "sigma")


class SparkHostLike(Protocol):
    """What the panel needs of `app.spark.client.SparkHost` (tests give a fake)."""

    info: dict[str, Any]

    def start(self) -> Any: ...

    def submit(self, op: str, **params: Any) -> int: ...

    def wait(self, ident: int, on_progress: Callable[[float, str], None] | None = None) -> dict[str, Any]: ...

    def request(self, op: str, on_progress: Callable[[float, str], None] | None = None,
                **params: Any) -> dict[str, Any]: ...

    def cancel(self, ident: int) -> None: ...

    def close(self) -> None: ...


HostFactory = Callable[[str | None, str | None], SparkHostLike]
Report = Callable[..., None]  # CallWorker.report(message, fraction=None)


def default_host_factory(python: str | None, master: str | None) -> SparkHostLike:
    """The real Spark host process (started by `start()` in a worker)."""
    from app.spark.client import SparkHost

    return SparkHost(python=python or None, master=master or None)


@dataclass
class SparkRequest:
    """The id of the Spark host request a call started: set in the worker thread, read to cancel it."""

    ident: int | None = None


def _progress_to(report: Report) -> Callable[[float, str], None]:
    """The Spark host's on_progress(fraction, message) as a CallWorker report."""
    def on_progress(fraction: float, message: str) -> None:
        report(message, fraction)
    return on_progress


@dataclass(frozen=True)
class RunOptions:
    """The run settings the panel sends with a run."""

    duration_s: float
    acking: bool
    message_timeout_s: float
    max_spout_pending: int | None
    kills: tuple[tuple[str, float, float | None], ...] = ()  # (bolt, time, down or None), checked at start


@dataclass(frozen=True)
class RunAnalysed:
    """A run (or an opened log) and its analysis, for the topology it was run with."""

    out: str
    analysis: Analysis
    topology: Topology


@dataclass(frozen=True)
class MonitorMatches:
    """The shipped monitor patterns and their matches over a run's log."""

    matches: list[Match]
    patterns: list[Pattern]


class RunsController(QObject):
    """The Runs panel's state and its background calls; signals tell the view what changed."""

    status_changed = Signal(str)  # the "Spark: ..." line
    state_changed = Signal()  # attached / busy / log / measured values changed
    attach_finished = Signal()  # an attach attempt ended, either way
    progress_changed = Signal(object)  # WorkProgress
    failed = Signal(str)  # a background call failed (one line)
    raise_requested = Signal()  # a run's results arrived: show the panel
    analysis_ready = Signal(object)  # Analysis, with comparison and measured_topology set
    reliability_ready = Signal(object)  # ReliabilityReport
    patterns_started = Signal()
    patterns_matched = Signal(object)  # MonitorMatches
    patterns_failed = Signal(str)
    run_finished = Signal(str)  # the run's folder (or the opened log)

    def __init__(self, document: DocumentModel, parent: QObject | None = None):
        super().__init__(parent)
        self.document = document
        self.host_factory: HostFactory = default_host_factory
        self.host: SparkHostLike | None = None
        self.calls: set[CallWorker[Any]] = set()
        self.running: CallWorker[Any] | None = None
        self._request = SparkRequest()  # of the running run, for Cancel
        self.analysis: Analysis | None = None
        self.comparison: Comparison | None = None
        self.measured_topology: Topology | None = None
        self.report: ReliabilityReport | None = None
        self.log_path: Path | None = None
        self.engine = "auto"  # auto | local | spark: where logs are analysed and checked

    def can_read_logs(self) -> bool:
        """Whether a log can be opened now: Spark attached, or an engine that may read it here."""
        return self.host is not None or self.engine != "spark"

    # ---- calls in the background
    def _call(self, function: Callable[..., Any], done: Callable[[Any], None], *,
              failed: Callable[[str], None] | None = None, report_progress: bool = True,
              on_cancel: Callable[[], None] | None = None) -> CallWorker[Any]:
        call: CallWorker[Any] = CallWorker(function, on_cancel=on_cancel, parent=self)
        if report_progress:
            call.progress.connect(self._on_progress)
        call.result_ready.connect(done)
        call.failed.connect(failed or self._on_failed)
        call.finished.connect(self._on_call_finished)
        self.calls.add(call)
        call.start()
        return call

    def _on_call_finished(self) -> None:
        call = self.sender()
        self.calls.discard(call)
        if call is self.running:
            self.running = None
        self.state_changed.emit()

    def _on_progress(self, progress: WorkProgress) -> None:
        self.progress_changed.emit(progress)

    def _on_failed(self, message: str) -> None:
        self.failed.emit(message)

    def _on_attach_failed(self, message: str) -> None:
        # only an attach failure is Spark's status: a log read in this process may fail while detached
        if self.host is None:
            self.status_changed.emit(f"Spark: {message}")
        self.failed.emit(message)

    # ---- where a log is read (called off the GUI thread: sizing a log reads it)
    @staticmethod
    def engine_for(path: Path, host: SparkHostLike | None, engine: str) -> LogEngine:
        """The engine that reads a log, from the one factory (app.measure.engines.open_log_engine): the
        embedded one, or the attached Spark; a log that needs Spark while none is attached is an error, and
        one that cannot be sized here goes to the attached Spark, which reports its own error."""
        from app.measure.engines import SparkNeeded, open_log_engine

        spark = None if host is None else (lambda choice: host.request)
        try:
            return open_log_engine(path, engine, spark=spark, unsized_to_spark=True)
        except SparkNeeded as err:
            raise RuntimeError(f"{err}: attach Spark first, or choose the engine 'embedded'") from None

    @classmethod
    def analyse(cls, report: Report, host: SparkHostLike | None, path: Path, engine: str) -> Analysis:
        """The analysis of a log, in this process or on the attached Spark as `engine_for` decides."""
        return cls.engine_for(path, host, engine).analyze(path.resolve(), on_progress=_progress_to(report))

    # ---- attach / detach
    def attach(self, python: str, master: str) -> CallWorker[Any]:
        """Start the Spark host (python and master as typed; empty means the default)."""
        host = self.host_factory(python, master)
        self.status_changed.emit("Spark: starting...")

        def start(report: Report) -> SparkHostLike:
            host.start()
            return host

        call = self._call(start, self._on_attached, failed=self._on_attach_failed)
        call.finished.connect(self._on_attach_finished)
        return call

    def _on_attach_finished(self) -> None:
        self.attach_finished.emit()

    def _on_attached(self, host: SparkHostLike) -> None:
        self.host = host
        info = host.info or {}
        kind = "Spark Connect " if info.get("connect") else ""
        self.status_changed.emit(f"Spark: attached ({kind}{info.get('master', '?')}, "
                                 f"Spark {info.get('spark_version', '?')}, {info.get('slots', '?')} task slots)")
        self.state_changed.emit()

    def detach(self) -> None:
        """Cancel a running call and stop the Spark host."""
        if self.running is not None:
            self.cancel()
        host, self.host = self.host, None
        if host is not None:
            host.close()
        self.status_changed.emit("Spark: detached")
        self.state_changed.emit()

    # ---- run / open / reliability
    def start_run(self, options: RunOptions) -> CallWorker[Any] | None:
        """Run the current topology on Spark, then analyse its log; None when detached or busy."""
        if self.host is None or self.running is not None:
            return None
        from app.spark.run_job import RunSpec, plan_kills, windows_problem

        topo = self.document.topology()
        if windows_problem(topo) is not None:
            self.failed.emit(str(windows_problem(topo)))
            return None
        try:
            kills = plan_kills(topo, list(options.kills), options.duration_s)
        except ValueError as err:
            self.failed.emit(f"kill {err}")
            return None
        spec = RunSpec(topology=topo, duration_s=options.duration_s, acking=options.acking,
                       message_timeout_s=options.message_timeout_s, max_spout_pending=options.max_spout_pending,
                       kills=kills, replay=getattr(topo.settings, "replay", None) or "paced")
        out = Path(tempfile.mkdtemp(prefix=f"stormbound-run-{topo.name}-"))
        host, request, engine = self.host, SparkRequest(), self.engine

        def run(report: Report) -> RunAnalysed:
            request.ident = host.submit("run", spec=json.loads(spec.model_dump_json()), out=str(out))
            host.wait(request.ident, on_progress=_progress_to(report))
            report("analysing", 0.99)
            return RunAnalysed(str(out), self.analyse(report, host, out, engine), topo)

        self._request = request
        self.running = self._call(run, self._on_run_analysed, on_cancel=self._cancel_request)
        self.state_changed.emit()
        return self.running

    def _cancel_request(self) -> None:
        ident = self._request.ident
        if ident is not None and self.host is not None:
            self.host.cancel(ident)

    def _on_run_analysed(self, result: RunAnalysed) -> None:
        self.log_path = Path(result.out)
        self.raise_requested.emit()
        self.set_analysis(result.analysis, result.topology)
        self.match_patterns(self.log_path)
        self.progress_changed.emit(WorkProgress(1.0, f"run written to {result.out}"))
        self.run_finished.emit(result.out)

    def cancel(self) -> bool:
        """Cancel the running Spark request; True when a cancel was sent."""
        call = self.running
        if call is not None and call.on_cancel is not None and self._request.ident is not None \
                and self.host is not None:
            call.cancel()
            return True
        return False

    def open_log(self, path: str | Path) -> CallWorker[Any] | None:
        """Analyse a log or run folder against the current topology; None when busy, or when the
        engine is `spark` and Spark is not attached."""
        if not self.can_read_logs() or self.running is not None:
            return None
        host, engine = self.host, self.engine
        topo = self.document.topology()

        def analyse(report: Report) -> RunAnalysed:
            return RunAnalysed(str(path), self.analyse(report, host, Path(path), engine), topo)

        self.running = self._call(analyse, self._on_run_analysed)
        self.state_changed.emit()
        return self.running

    def check_reliability(self) -> CallWorker[Any] | None:
        """Check the last run's log against Storm's delivery guarantees; None without a log or when busy."""
        if not self.can_read_logs() or self.log_path is None or self.running is not None:
            return None
        host, path, topo, engine = self.host, self.log_path, self.document.topology(), self.engine

        def check(report: Report) -> ReliabilityReport:  # run.json is read here, off the GUI thread
            config = ReliabilityConfig.from_topology(topo, **run_settings(path))
            return self.engine_for(path, host, engine).reliability(path.resolve(), config,
                                                                   on_progress=_progress_to(report))

        self.running = self._call(check, self._on_reliability)
        self.state_changed.emit()
        return self.running

    def _on_reliability(self, report: ReliabilityReport) -> None:
        self.report = report
        self.reliability_ready.emit(report)

    def match_patterns(self, path: Path) -> CallWorker[Any]:
        """Match the shipped Storm monitor patterns over the run's log, off the GUI thread."""
        self.patterns_started.emit()

        def match(report: Report) -> MonitorMatches:
            from app.cep.monitors import load_monitors, run_monitors
            from app.measure.eventlog import read_log

            patterns = load_monitors()
            return MonitorMatches(run_monitors(read_log(path), patterns=patterns), patterns)

        return self._call(match, self._on_patterns_matched, failed=self._on_patterns_failed, report_progress=False)

    def _on_patterns_matched(self, result: MonitorMatches) -> None:
        self.patterns_matched.emit(result)

    def _on_patterns_failed(self, message: str) -> None:
        self.patterns_failed.emit(message)

    # ---- results
    def set_analysis(self, analysis: Analysis, topo: Topology | None = None) -> None:
        """Take an analysis of a run of `topo` (default: the current document): compare and calibrate."""
        topo = topo or self.document.topology()
        self.analysis = analysis
        known = {c.name for c in topo.components}
        fits = all(name in known for name in analysis.components)
        self.comparison = compare(topo, analysis) if fits else None
        self.measured_topology = calibrate(self.document.topology(), analysis) if fits else None
        self.analysis_ready.emit(analysis)
        self.state_changed.emit()

    def apply_measured(self) -> int:
        """Put the measured parameters into the document as one undoable step; returns the components changed."""
        if self.measured_topology is None:
            return 0
        current = self.document.topology()
        changes: list[tuple[str, dict[str, Any]]] = []
        for new in self.measured_topology.components:
            try:
                old = current.component(new.name)
            except KeyError:
                continue
            fields = {k: getattr(new, k) for k in MEASURED_FIELDS
                      if hasattr(new, k) and hasattr(old, k) and getattr(new, k) != getattr(old, k)}
            if fields:
                changes.append((old.id, fields))
        if not changes:
            return 0
        stack = self.document.undo_stack
        stack.beginMacro("Apply measured values")
        for ident, fields in changes:
            stack.push(SetComponentFieldsCommand(self.document, ident, fields, merge=False))
        stack.endMacro()
        return len(changes)

    def shutdown(self) -> None:
        """Stop the Spark host and wait for background calls (on quit)."""
        self.detach()
        for call in list(self.calls):
            call.join(5000)

"""What the views read of a document snapshot besides the document itself: its problems, its rate analysis, the
canvas's latency marks and the bolts the instant rate check proves unbounded (`Analysed`), and where each is
found (`SnapshotAnalyser`): on the GUI thread for a document of up to INLINE_COMPONENTS components (a few tens
of milliseconds), in an `AnalysisWorker` above, so that an edit of a 3,000-bolt topology never holds the window
while the rate check and its flood pass run (bench/gui_edit_large.py). Until a large snapshot's analysis
arrives, the views keep what they showed and the status bar says the edit is being analysed."""

from __future__ import annotations

import contextlib
from typing import Final

from PySide6.QtCore import QObject, Signal

from app.core.errors import Cancelled
from app.core.latency.report import canvas_latency
from app.core.rates import RateAnalysis, RateReport
from app.core.results import FloodCertificate, SpillCertificate, StormCertificate
from app.core.topology import Problem, Topology, graph_problems
from app.gui.workers import Worker

#: the most components whose snapshot is analysed on the GUI thread when a view first asks (its rate check, flood
#: pass and latency marks take tens of milliseconds; bench/gui_edit_large.py); a larger one is analysed in an
#: AnalysisWorker. The same count as the canvas's NODE_BATCH: a document it draws at once is analysed at once.
INLINE_COMPONENTS: Final = 200

class AnalysisPending(Cancelled):
    """A view asked for the rate check of a snapshot a worker is still analysing (`SnapshotAnalyser`): the read is
    given up (the view keeps what it showed), not the analysis."""


#: the most bolts for which every edit recomputes the latency bounds shown on the canvas (exact fractions: about
#: 5 ms per bolt; bench/RESULTS.md, "Latency bounds"); above, Verify's panel shows them, computed in its worker
CANVAS_LATENCY_BOLTS = 40

#: what the canvas shows of latency: a line per component id for its tooltip, the links of critical paths
LatencyMarks = tuple[dict[str, str], set[tuple[str, str]]]


def latency_marks(topo: Topology, rates: RateAnalysis | Exception) -> LatencyMarks:
    """The canvas's latency words and critical links of `topo` (app/core/latency/report.py, `canvas_latency`);
    none when the rate check refuses it, a sentence pointing to Verify's panel above CANVAS_LATENCY_BOLTS."""
    if isinstance(rates, Exception) or not topo.bolts:
        return {}, set()
    if len(topo.bolts) > CANVAS_LATENCY_BOLTS:
        return {b.id: "Latency bounds: in Verify's panel (a topology this large is not bounded after every edit)"
                for b in topo.bolts}, set()
    try:
        return canvas_latency(topo, rates)
    except Exception:  # noqa: BLE001 - a document mid-edit may not be analysable yet
        return {}, set()


class Analysed:
    """What the views read of one topology snapshot, each found once and kept beside it: its problems, its rate
    analysis (or why it has none), the canvas's latency marks, the bolts the rate check proves unbounded. A file's
    is made whole in a worker when it is opened (`analysed`), then only read by the GUI thread; an edited
    document's is made as the views ask (`SnapshotAnalyser`)."""

    def __init__(self, topology: Topology, refused: Exception | None = None):
        self.topology = topology
        self._problems: list[Problem] | None = None
        self._rates: RateAnalysis | Exception | None = refused  # `refused`: what stopped a worker's analysis
        self._latency: LatencyMarks | None = None
        self._floods: dict[str, FloodCertificate | StormCertificate | SpillCertificate] | None = None
        self._report: RateReport | Exception | None = None

    def problems(self) -> list[Problem]:
        if self._problems is None:
            self._problems = graph_problems(self.topology)
        return self._problems

    def rates_or_reason(self) -> RateAnalysis | Exception:
        """The snapshot's rate analysis (app/core/rates/report.py), or what refused it."""
        if self._rates is None:
            try:
                self._rates = RateAnalysis(self.topology)
            except Exception as err:  # noqa: BLE001 - kept and raised to each reader of this snapshot
                self._rates = err
        return self._rates

    def rates(self) -> RateAnalysis:
        """The snapshot's rate analysis; raises what refused it."""
        rates = self.rates_or_reason()
        if isinstance(rates, Exception):
            raise rates
        return rates

    def report(self) -> RateReport:
        """The rate check's report the views show, as `check` prints it: with failures in a cyclic topology, each bolt
        it leaves unproven decided on its own cone of influence (app/core/tcn/cones.py); raises what refused it."""
        if self._report is None:
            try:
                report = self.rates().report(suggest=False)
                if report.failures and report.cyclic and not self.problems():
                    from app.core.tcn.cones import bounded_in_cones  # the verifier's modules: loaded when needed

                    report, _ = bounded_in_cones(self.topology, report, [b.name for b in self.topology.bolts])
                self._report = report
            except Exception as err:  # noqa: BLE001 - kept and raised to each reader of this snapshot
                self._report = err
        if isinstance(self._report, Exception):
            raise self._report
        return self._report

    def latency_marks(self) -> LatencyMarks:
        if self._latency is None:
            self._latency = latency_marks(self.topology, self.rates_or_reason())
        return self._latency

    def floods(self) -> dict[str, FloodCertificate | StormCertificate | SpillCertificate]:
        """The bolts the instant rate check proves unbounded (a flood whose source grows by rates, or a replay
        storm), with their checked certificates: what `stormbound check` prints under "Unbounded"
        (`instant_unbounded`)."""
        if self._floods is None:
            self._floods = {}
            rates = self.rates_or_reason()
            if isinstance(rates, RateAnalysis) and self.topology.bolts and not self.problems():
                from app.core.tcn.unbounded import instant_unbounded  # the verifier's: loaded when first needed

                with contextlib.suppress(Exception):  # as the report: each reader of the snapshot says why
                    report = self.report()
                    self._floods = instant_unbounded(self.topology, {n: b.status for n, b in report.bolts.items()})
        return self._floods


def analysed(topo: Topology) -> Analysed:
    """Everything `Analysed` keeps of `topo`, made now (in OpenWorker's thread), the canvas's report included."""
    known = Analysed(topo)
    known.problems()
    rates = known.rates_or_reason()
    if isinstance(rates, RateAnalysis) and topo.bolts:
        with contextlib.suppress(Exception):  # each reader of the report says why, as after an edit
            known.report()  # what the canvas and the status bar show first
    known.latency_marks()
    known.floods()
    return known



class AnalysisWorker(Worker[Analysed]):
    """Analyses one snapshot (`analysed`) off the GUI thread; the outcome is kept on the worker (`outcome`) for the
    SnapshotAnalyser to take when the thread ends. Nothing to cancel: the rate check is exact and quick and its
    flood pass has its own budget (app/core/tcn/flood.py, `instant_floods`), so a stale analysis ends on its own."""

    def __init__(self, topology: Topology, parent: QObject | None = None):
        super().__init__(parent)
        self.topology = topology
        self.outcome: Analysed | None = None  # set in the worker thread, before `finished`

    def work(self) -> Analysed:
        try:
            self.outcome = analysed(self.topology)
        except Exception as err:  # noqa: BLE001 - kept as the snapshot's reason, read by each view as after an edit
            self.outcome = Analysed(self.topology, refused=err)
        return self.outcome


class SnapshotAnalyser(QObject):
    """The whole analysis of the document's latest snapshot the views asked about (`analysis`); a snapshot of more
    than INLINE_COMPONENTS components is analysed by one AnalysisWorker at a time, and `ready` says when it has
    arrived. Edits made meanwhile are analysed next, once, as the latest snapshot: never one worker per edit."""

    ready = Signal()  # the analysis the views were told was pending has arrived: read `analysis` again

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._whole: Analysed | None = None  # the latest complete analysis
        self._worker: AnalysisWorker | None = None  # the one running, if any
        self._wanted: Topology | None = None  # the snapshot the views wait for
        self._partial: Analysed | None = None  # a large snapshot's problems, found while its worker runs

    def adopt(self, known: Analysed) -> None:
        """Keep `known`, made whole elsewhere (File ▸ Open's worker, Live Mode's), as its snapshot's analysis."""
        self._whole, self._wanted = known, None  # a worker still running for an earlier snapshot is not waited for

    def analysis(self, topo: Topology) -> Analysed | None:
        """`topo`'s analysis, or None while its worker runs (`ready` follows when it arrives)."""
        if self._whole is not None and self._whole.topology is topo:
            return self._whole
        if len(topo.components) <= INLINE_COMPONENTS:
            self._whole, self._wanted = Analysed(topo), None  # filled as the views read it: tens of milliseconds
            return self._whole
        self._wanted = topo
        if self._worker is None:
            self._start(topo)
        return None

    def problems(self, topo: Topology) -> list[Problem]:
        """`topo`'s graph problems, found on the calling thread (a graph walk) even while its worker runs."""
        known = self._whole if self._whole is not None and self._whole.topology is topo else None
        if known is None and len(topo.components) <= INLINE_COMPONENTS:
            known = self.analysis(topo)
        if known is None:
            if self._partial is None or self._partial.topology is not topo:
                self._partial = Analysed(topo)  # its problems only, until the worker's arrives
            known = self._partial
        return known.problems()

    def _start(self, topo: Topology) -> None:
        worker = AnalysisWorker(topo, self)
        worker.finished.connect(self._on_finished)
        self._worker = worker
        worker.start()

    def _on_finished(self) -> None:
        worker = self._worker
        if worker is None or worker.outcome is None:
            return  # an earlier worker's signal, already handled
        self._worker = None
        if worker.topology is self._wanted:
            self._whole, self._wanted = worker.outcome, None
            self.ready.emit()
        elif self._wanted is not None:  # edited meanwhile: the latest snapshot next
            self._start(self._wanted)

    def join(self, timeout_ms: int = 5000) -> bool:
        """Wait for the running analysis, if any (the window's shutdown); True when none is left."""
        return self._worker is None or self._worker.join(timeout_ms)

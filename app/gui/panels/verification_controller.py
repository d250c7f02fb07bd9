"""What the Verification panel does, without its widgets: the properties, their states, the searches.

The controller follows the document's verification settings (one property for the growth
of the checked bolts, one per queue threshold), verifies them one after the other on a
snapshot of the document, each in a `VerifyWorker` (app/gui/workers.py: its own Search and
z3 context), and marks results stale on any edit. It asks each search with one
`SearchOptions` (app/core/tcn/options.py) built as the CLI's `verify` builds it: the
document's bounds and time limit, the panel's two choices. The view
(`app.gui.panels.verification`) shows its state and follows its signals; it lives in the
GUI thread, so worker signals reach its bound methods there.
"""

from __future__ import annotations

import importlib
import threading
import time
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, Signal

from app.core.formats.verified import headline, result_headline, verdict_words, verified_bytes
from app.core.rates import RateAnalysis
from app.core.results import BoltVerdict, Progress, PropertyKind, VerifyResult
from app.core.tcn.options import LoopClocks, SearchOptions
from app.core.topology import Problem, Topology, TopologyError, parse_topology
from app.gui.commands import SetSectionFieldsCommand
from app.gui.document import DocumentModel
from app.gui.workers import SearchFactory, VerifyWorker

VERDICT_MARKER = {"counterexample": "red", "unbounded": "red", "none-up-to-k": "green", "no-repeating-growth": "amber",
                  "bounded": "green", "unknown": "amber"}
MARKER_MEANING = {"grey": "not run or stale", "red": "counterexample or unbounded", "green": "no counterexample found",
                  "amber": "unknown"}
PREFERRED_STATS = ("conflicts", "decisions", "propagations", "memory", "max memory", "rlimit count")


def format_stats(stats: dict[str, float | int], limit: int = 4) -> str:
    """A few solver statistics in words ("conflicts 1234 · decisions 5678 · memory 21.3 MB")."""
    keys = [k for k in PREFERRED_STATS if k in stats] or sorted(stats)
    parts = []
    for key in keys[:limit]:
        value = stats[key]
        if "memory" in key:
            parts.append(f"{key} {float(value):.1f} MB")
        elif isinstance(value, float) and not value.is_integer():
            parts.append(f"{key} {value:.3g}")
        else:
            parts.append(f"{key} {int(value)}")
    return " · ".join(parts)


@dataclass(frozen=True)
class PropertySpec:
    """One property of the list: what it asks, in the user's words."""

    kind: PropertyKind
    title: str
    threshold: int | None = None
    bolts: tuple[str, ...] = ()  # the checked bolts, one row each under the growth property

    @property
    def key(self) -> tuple[str, str, int | None, tuple[str, ...]]:
        return (self.kind, self.title, self.threshold, self.bolts)


@dataclass
class PropertyState:
    """What the panel knows about a property: its last result, whether it is stale or running."""

    spec: PropertySpec
    result: VerifyResult | None = None
    stale: bool = False
    running: bool = False
    error: str = ""
    note: str = ""
    progress: Progress | None = None
    generation: int = -1
    capacity: list[str] = field(default_factory=list)  # the headroom and Storm's response (app/core/headroom.py)
    # per spout, against the message timeout (docs/latency.md): the short answers, then the sentences
    timeouts: tuple[list[str], list[str]] = ([], [])

    # while running: the checked bolts' verdicts known so far and what the search does next (from its progress)
    partial: dict[str, BoltVerdict] = field(default_factory=dict)
    doing: str = ""
    # the checked bolts the instant rate check proves unbounded in the current document (`stormbound check`'s
    # "Unbounded"), shown before Verify, while it runs and over a stale result
    instant: dict[str, BoltVerdict] = field(default_factory=dict)

    @property
    def colour(self) -> str:
        if self.running or self.stale:
            return "grey"
        if self.error:
            return "amber"
        if self.result is None:
            return VERDICT_MARKER["unbounded"] if self.instant else "grey"
        colour = VERDICT_MARKER[self.result.verdict]
        # bounded while no worker dies, but a certified lasso grows with deaths (docs/model.md 9.5): not all green
        return "amber" if colour == "green" and self.result.worker_death_lassos else colour

    @property
    def verdict_text(self) -> str:
        """The verdict at a glance: for the growth property what grows first ("status grows; 9 bounded")."""
        if self.running:
            return headline(self.partial, list(self.spec.bolts), searching=True) if self.partial else "verifying…"
        if self.error:
            return "unknown (failed)"
        if self.result is None and self.instant:
            return f"{headline(self.instant, list(self.spec.bolts))} (rate check, no search)"
        if self.result is None:
            return self.note or "not run"
        words = result_headline(self.result)
        dying = list(self.result.worker_death_lassos)
        if dying:  # the bolts' verdicts are for runs in which no worker dies (docs/model.md 9.5): say the rest too
            words += f"; {', '.join(dying)} {'grows' if len(dying) == 1 else 'grow'} when workers die (certified lasso)"
        return f"stale: {words}" if self.stale else words

    @property
    def verdict_words(self) -> str:
        """The property's verdict in words ("counterexample (k = 12)"; '' without a result)."""
        return "" if self.result is None else verdict_words(self.result)

    def instant_verdict(self, name: str) -> BoltVerdict | None:
        """The instant rate check's `unbounded` for checked bolt `name` when it is what its row shows: before a
        result, while a search runs until it knows the bolt, and over a stale result."""
        if self.running:
            return None if name in self.partial else self.instant.get(name)
        return self.instant.get(name) if self.result is None or self.stale else None

    def bolt_verdict(self, name: str) -> BoltVerdict | None:
        """Checked bolt `name`'s own verdict (while running: once the search knows it; the instant rate check's
        `unbounded` when it has one, `instant_verdict`; None before)."""
        instant = self.instant_verdict(name)
        if instant is not None:
            return instant
        if self.running:
            return self.partial.get(name)
        if self.result is None:
            return None
        return self.result.bolts.get(name)

    def bolt_colour(self, name: str) -> str:
        if self.instant_verdict(name) is not None:
            return VERDICT_MARKER["unbounded"]
        verdict = self.bolt_verdict(name)
        if verdict is None:
            return "grey" if not self.error else "amber"
        return "grey" if self.stale else VERDICT_MARKER[verdict.verdict]


_WARMING: list[threading.Thread] = []


def warm_up_verifier() -> None:
    """Import the verifier (z3, the search's phases: about a second) in a background thread, once per process,
    so that the first Verify shows the rate check's verdicts at once instead of after the imports."""
    if not _WARMING:
        thread = threading.Thread(target=importlib.import_module, args=("app.core.tcn.search",),
                                  name="stormbound-warm-up", daemon=True)
        _WARMING.append(thread)
        thread.start()


def property_specs(topo: Topology) -> list[PropertySpec]:
    """The properties the document asks for: growth of the checked bolts, and the queue threshold."""
    names = [b.name for b in topo.checked_bolts()]
    which = (", ".join(names) if 0 < len(names) <= 3 else "every bolt" if not topo.verification.checked or not names
             else f"{len(names)} checked bolts")  # a long list reads as a count: the rows name them
    specs = [PropertySpec("growth", f"Unbounded growth of {which}", bolts=tuple(names))]
    threshold = topo.verification.queue_threshold
    if threshold is not None:
        specs.append(PropertySpec("threshold", f"Some queue reaches {threshold}", threshold))
    return specs


class VerificationController(QObject):
    """The property states and the verification runs behind the Verification panel (see module docstring)."""

    properties_reset = Signal()  # the list of properties changed: rows rebuilt
    property_changed = Signal(int)  # one property's state changed (its row)
    status_changed = Signal(str)  # the line under the list ("Finished in 1.2 s.", a refusal, ...)
    progress_changed = Signal()  # the running search reported progress
    run_started = Signal(int)  # a property's search started (its row)
    result_arrived = Signal(int, object)  # property row (-1: no longer listed), VerifyResult
    all_finished = Signal()  # a Verify ended (every property done, cancelled or refused)
    results_stale = Signal()  # an edit made the results stale

    def __init__(self, document: DocumentModel, *, search_factory: SearchFactory | None = None,
                 parent: QObject | None = None):
        super().__init__(parent)
        self.document = document
        self.search_factory = search_factory
        self.force_search = False
        self.loop_clocks: LoopClocks = "equal"
        self.states: list[PropertyState] = []
        self.worker: VerifyWorker | None = None
        self.worker_state: PropertyState | None = None
        self._queue: list[PropertyState] = []
        self._generation = 0
        self.run_started_at = 0.0
        self.last_cancel_latency_s: float | None = None
        self.snapshot: Topology = document.topology()
        self.rates: RateAnalysis | None = None  # the snapshot's rate analysis, shared by its searches
        if search_factory is None:  # the real verifier: loaded while the user looks at the document
            warm_up_verifier()
        document.changed.connect(self._on_document_changed)
        document.analysis_ready.connect(self.rebuild)  # a large edit's floods, from its worker
        document.document_replaced.connect(self._on_document_replaced)
        self.rebuild(keep=False)

    def _rates_of(self, topo: Topology) -> RateAnalysis | None:
        """The rate analysis of the snapshot to verify: the document's own when it is of the same topology (the
        canvas made it already), else a new one (its figures are computed by the first search that reads them,
        in its worker); None when the rate check refuses the document (each search then says why)."""
        try:
            rates = self.document.rates()
            return rates if rates.of(topo) else RateAnalysis(topo)
        except Exception:  # noqa: BLE001 - the search reports the same problem in its own words
            return None

    # ---- queries -------------------------------------------------------------------------------
    def is_running(self) -> bool:
        return self.worker is not None

    def results(self) -> list[VerifyResult]:
        return [s.result for s in self.states if s.result is not None]

    def row_of(self, state: PropertyState) -> int:
        """The row of a state, or -1 when an edit replaced it."""
        return next((i for i, shown in enumerate(self.states) if shown is state), -1)

    def options(self, spec: PropertySpec) -> SearchOptions:
        """The search of one property, asked as the CLI's `verify` asks it: the document's bounds (its k is
        the deepest bound, so that simulation-built lassos are tried) and time limit, the panel's choices."""
        return SearchOptions(force_search=self.force_search, loop_clocks=self.loop_clocks,
                             threshold=spec.threshold if spec.kind == "threshold" else None)

    def deepest_bound(self) -> int:
        """The largest k the running searches try (for a progress bar)."""
        return SearchOptions().deepest(self.snapshot)

    def progress_text(self) -> str:
        """'Verifying …: 1.2 s; 1 of 11 bolts left, now status: the solver at k = 8 · conflicts … — message'
        for the running search ('' when none): what the remaining time is spent on."""
        state, worker = self.worker_state, self.worker
        if state is None or worker is None:
            return ""
        elapsed = time.monotonic() - (worker.started_at or self.run_started_at)
        text = f"Verifying {state.spec.title.lower()}: {elapsed:.1f} s"
        left = [b for b in state.spec.bolts if b not in state.partial]
        if state.partial and state.spec.bolts:
            text += f"; {len(left)} of {len(state.spec.bolts)} bolts left"
        if state.doing:
            text += f", now {state.doing}"
        elif state.progress is None:
            text += ", now the rate check"
        if state.progress is not None and not state.progress.doing:  # a step of the solver, not an announcement
            text += f", k = {state.progress.k}"
            stats = format_stats(state.progress.stats)
            if stats:
                text += f" · {stats}"
            if state.progress.message:
                text += f" — {state.progress.message}"
        return text

    # ---- the property list -----------------------------------------------------------------
    def rebuild(self, keep: bool = True) -> None:
        """Follow the document's properties; results of unchanged properties are kept (when `keep`)."""
        specs = property_specs(self.document.topology())
        if keep and [s.spec.key for s in self.states] == [spec.key for spec in specs]:
            self._set_instant()
            for row in range(len(self.states)):
                self.property_changed.emit(row)
            return
        old = {s.spec.key: s for s in self.states} if keep else {}
        self.states = [old.get(spec.key) or PropertyState(spec) for spec in specs]
        self._set_instant()
        self.properties_reset.emit()

    def _set_instant(self) -> None:
        """Each growth property's checked bolts that the instant rate check proves unbounded in the current
        document (the canvas shows the same: one flood pass per snapshot, `DocumentModel.floods`)."""
        floods = self.document.floods()
        if floods:
            from app.core.tcn.flood import instant_flood_verdict  # loaded with the floods found
        for state in self.states:
            state.instant = {n: instant_flood_verdict(floods[n]) for n in state.spec.bolts if n in floods} \
                if state.spec.kind == "growth" else {}

    def _changed(self, state: PropertyState) -> None:
        row = self.row_of(state)
        if row >= 0:
            self.property_changed.emit(row)

    def set_checked_bolt(self, bolt_id: str, on: bool) -> None:
        """Add or remove a bolt from the growth property, as one undoable step.

        All bolts chosen is stored as the empty list ("every bolt"); the last bolt cannot be removed.
        """
        topo = self.document.topology()
        chosen = [b.id for b in topo.checked_bolts() if b.id != bolt_id]
        if on:
            chosen.append(bolt_id)
        if not chosen:
            self.status_changed.emit("At least one bolt must be checked.")
            return
        ordered = [b.id for b in topo.bolts if b.id in chosen]
        value = [] if len(ordered) == len(topo.bolts) else ordered
        if value == list(topo.verification.checked):
            return
        command = SetSectionFieldsCommand(self.document, "verification", {"checked": value}, merge=False)
        name = topo.component(bolt_id).name
        command.setText(f"{'Check' if on else 'Uncheck'} growth of {name}")
        self.document.undo_stack.push(command)

    # ---- running ---------------------------------------------------------------------------
    def start(self) -> None:
        """Verify every property, one after the other, each in a background thread."""
        if self.is_running():
            return
        self.rebuild(keep=True)
        try:
            topo = parse_topology(self.document.topology().model_dump(mode="json"))
        except TopologyError as err:
            message = "Cannot verify: " + "; ".join(str(p) for p in err.problems)
            for row, state in enumerate(self.states):
                state.error, state.result, state.running, state.stale = message, None, False, False
                self.property_changed.emit(row)
            self.status_changed.emit(message)
            self.all_finished.emit()
            return
        self.snapshot = topo
        self.rates = self._rates_of(topo)
        self._queue = list(self.states)
        for row, state in enumerate(self.states):
            state.result, state.stale, state.error, state.note = None, False, "", "waiting"
            state.capacity, state.timeouts = [], ([], [])
            state.generation = self._generation  # the snapshot's generation: later edits make it stale
            self.property_changed.emit(row)
        self.run_started_at = time.monotonic()
        self.last_cancel_latency_s = None
        self._run_next()

    def _run_next(self) -> None:
        if not self._queue:
            self.worker = None
            self.worker_state = None
            self.status_changed.emit(f"Finished in {time.monotonic() - self.run_started_at:.1f} s.")
            self.all_finished.emit()
            return
        state = self._queue.pop(0)
        state.running, state.error, state.note, state.progress = True, "", "", None
        state.partial, state.doing = {}, ""
        worker = VerifyWorker(self.snapshot, prop=state.spec.kind, options=self.options(state.spec),
                              search_factory=self.search_factory, rates=self.rates)
        worker.progress.connect(self._on_progress)
        worker.result_ready.connect(self._on_result)
        worker.failed.connect(self._on_failed)
        worker.finished.connect(self._on_worker_finished)
        self.destroyed.connect(worker.cancel)  # a panel closed mid-search stops its search
        self.worker, self.worker_state = worker, state
        self._changed(state)
        self.run_started.emit(self.row_of(state))
        worker.start()

    def cancel(self) -> None:
        """Stop the running search (its property turns amber/unknown) and skip the rest."""
        if self.worker is None:
            return
        skipped = self._queue
        self._queue = []
        for state in skipped:
            state.note = "not run (cancelled)"
            self._changed(state)
        self.status_changed.emit("Cancelling…")
        self.worker.cancel()

    def _on_progress(self, progress: Progress) -> None:
        state = self.worker_state
        if state is None:
            return
        state.progress = progress
        if progress.doing:  # verdicts known so far: the bolts' rows show them at once
            state.doing = progress.doing
            if progress.verdicts.keys() != state.partial.keys():
                state.partial = dict(progress.verdicts)
                self._changed(state)
        self.progress_changed.emit()

    def _on_result(self, result: VerifyResult) -> None:
        state = self.worker_state
        if state is None:
            return
        state.result = result
        state.capacity = list(self.worker.capacity) if self.worker is not None else []
        state.timeouts = self.worker.timeouts if self.worker is not None else ([], [])
        state.running = False
        state.stale = state.generation != self._generation
        state.error = ""
        if self.worker is not None and self.worker.cancel_requested_at is not None:
            self.last_cancel_latency_s = time.monotonic() - self.worker.cancel_requested_at
        self._changed(state)
        self.result_arrived.emit(self.row_of(state), result)

    def _on_failed(self, message: str) -> None:
        state = self.worker_state
        if state is None:
            return
        state.running = False
        state.result = None
        state.error = f"Verification failed: {message}"
        self._changed(state)

    def _on_worker_finished(self) -> None:
        worker = self.worker
        if worker is not None:
            worker.wait()
            worker.deleteLater()
            state = self.worker_state
            if state is not None and state.running:
                # neither result nor failure arrived (should not happen): do not leave it spinning
                state.running = False
                state.error = "Verification stopped without a result."
                self._changed(state)
        self.worker = None
        self.worker_state = None
        self._run_next()

    def shutdown(self) -> None:
        """Cancel and join the worker (window closing); waits at most a few seconds."""
        self._queue = []
        worker = self.worker
        if worker is not None:
            worker.cancel()
            worker.wait(5000)

    # ---- staleness -------------------------------------------------------------------------
    def _on_document_changed(self) -> None:
        self._generation += 1
        for state in self.states:
            if state.result is not None or state.error:
                state.stale = True
        self.rebuild(keep=True)
        self.results_stale.emit()

    def _on_document_replaced(self) -> None:
        self.shutdown()
        self.states = []
        self.rebuild(keep=False)
        self.status_changed.emit("Not run.")

    # ---- verified configuration ------------------------------------------------------------
    def verified_problem(self) -> str | None:
        """Why the current results cannot be exported as a verified configuration (None when they can)."""
        if self.is_running():
            return "verification is still running"
        if not self.states:
            return "there is no property to verify"
        for state in self.states:
            if state.result is None:
                return f"'{state.spec.title}' has no result: run Verify first"
            if state.stale:
                return f"the result of '{state.spec.title}' is stale: the model changed, run Verify again"
        return None

    def verified_configuration(self) -> bytes:
        """The verified configuration (topology, settings, verdicts, bound, hash) as bytes to write."""
        problem = self.verified_problem()
        if problem is not None:
            raise TopologyError([Problem("verdicts", problem)])
        return verified_bytes(self.document.topology(), self.results())

"""The verifier's front: rate-check proof, deepening search over k, certification, verdicts.

`Search(topo, SearchOptions(...)).run()` blocks (the GUI calls it in a worker thread);
`cancel()` may be called from any thread and turns the result into `unknown` within 100 ms.
Each Search owns one `z3.Context`; no z3 object leaves the search. `SearchOptions` is the
one description of what to search that the CLI's `verify`, the GUI's worker and the tests
build (app/core/tcn/options.py, free of z3 so that the GUI builds it without loading the solver).

A verification runs in phases, each in its own module: the rate check and the plan
(app/core/tcn/search_rates.py), proofs by rates (app/core/tcn/search_proofs.py), replay storms
(app/core/tcn/storm.py) and the floods from those and from the growth proofs (app/core/tcn/flood.py) before any
search, lassos by
simulation (app/core/tcn/search_lassos.py), the linear program (app/core/tcn/search_proofs.py), the solver's
deepening search (app/core/tcn/search_solver.py), the storms and floods again, lassos for the traces of bolts
proven by rates with the time left, and last the linear program with worker deaths
(app/core/tcn/search_deaths.py); what they share, the search's settings and stop signals and what it has found so
far, is app/core/tcn/search_run.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from app.core.rates import RateAnalysis
from app.core.results import BoltVerdict, FloodCertificate, Progress, VerifyResult
from app.core.tcn.check.lassos import remembering
from app.core.tcn.flood import FLOOD_BUDGET_S, flood_verdicts
from app.core.tcn.flood_run import threshold_runs
from app.core.tcn.options import SearchOptions
from app.core.tcn.paced import paced_verdicts
from app.core.tcn.paced_run import build_paced_run
from app.core.tcn.search_deaths import worker_death_phase
from app.core.tcn.search_lassos import QUICK_TRACE_S, failure_cycle_phase, simulation_phase, trace_phase
from app.core.tcn.search_proofs import linear_phase, rate_growth_phase
from app.core.tcn.search_rates import plan, rate_phase
from app.core.tcn.search_run import Run, SearchControl, deepening_schedule
from app.core.tcn.search_solver import SOLVER_OPTIONS, close_undecided, deepening_phase
from app.core.tcn.spill import spill_verdicts
from app.core.tcn.spill_run import spill_runs
from app.core.tcn.storm import storm_verdicts
from app.core.tcn.storm_run import storm_runs
from app.core.tcn.summary import summarise
from app.core.topology import Topology

__all__ = ["RUNS_SHARE", "SOLVER_OPTIONS", "Search", "SearchOptions", "deepening_schedule", "verify"]

#: with `--flood-run N` and a time limit, the search ends this share of the limit early: the unbounded proofs after it
#: and the threshold runs get the rest (a run for a spill out of a long search took 4 s: docs/verifier.md, step 2f)
RUNS_SHARE = 0.25


class Search(SearchControl):
    """One verification of one property on one topology (see module docstring)."""

    def run(self) -> VerifyResult:
        """Decide the property; blocking."""
        try:
            with remembering():  # the lassos certified in this verification, each replayed once (check/lassos.py)
                result = self._run()
            if self.threshold is None and not self.force_search and not self.cancelled:
                worker_death_phase(self, result)  # whatever the other phases said (docs/model.md 9.4)
            return result
        finally:
            self.finished()

    def _run(self) -> VerifyResult:
        """The phases of a verification: the rate check (which may prove everything bounded), the
        targets and their cones, the proofs by rates, lassos built by simulation, the linear program, the solver's
        deepening search, the verdicts of what is left undecided, the bolts a backed-up bolt floods
        (app/core/tcn/flood.py), and lassos for the bolts proven to grow by rates (docs/verifier.md, step 2)."""
        limit = self.timeout_s
        if self.flood_run is not None and limit is not None:  # the threshold runs asked for get the limit's last part
            self.timeout_s = limit * (1 - RUNS_SHARE)
        run = rate_phase(self)
        if isinstance(run, VerifyResult):
            return run
        left = [n for n in run.checked if n not in run.verdicts]
        self.announce(run, f"the search for {', '.join(left)}")  # the rate check's verdicts, before the cones
        plan(self, run)
        simulating = self.simulate and self.threshold is None and self.single_k is None
        proving = self.threshold is None and not self.force_search
        if simulating and proving:  # --no-simulate and --k ask for the solver's own lassos
            # the proofs by rates first, on every cone (cycles included): milliseconds each, so a bolt they decide
            # never waits on a search, and the search's time goes to the bolts they leave (docs/verifier.md)
            rate_growth_phase(self, run)
            # a failing bolt whose at-once replays outgrow it, and the bolts its spout's replays reach: their runs
            # never repeat, so no lasso shows them (docs/boundedness.md, "Unbounded: a replay storm")
            storm_verdicts(self.topo, run.verdicts, [n for n in run.checked if n not in run.verdicts], run.notes)
            # and the bolts those sources flood: no lasso needed (docs/verifier.md, step 2a)
            self._early_floods(run)
            self._floods(run)  # only bolts decided already: a flood proof of a searched bolt waits for its search
            spill_verdicts(self.topo, run.verdicts, run.traces, lambda n: run.nets[n].topology, run.notes,
                           lambda: self.stop_reason(run.elapsed()) is not None)
            trace_phase(self, run, QUICK_TRACE_S)  # their short lassos, for a trace: milliseconds each
        if simulating:
            simulation_phase(self, run)
        if proving:
            linear_phase(self, run)
        if simulating:
            failure_cycle_phase(self, run)
        deepening_phase(self, run)
        close_undecided(self, run)
        if limit is not None and self.timeout_s != limit:  # the passes below, the threshold runs first, up to the limit
            self.timeout_s, self.deadline = limit, run.start + limit
        if proving:  # a source that backs up may flood a bolt below it (answers found before the limit: its overtime)
            storm_verdicts(self.topo, run.verdicts, run.checked, run.notes)  # (the first pass ran with the rates')
            # a paced backlog that grows (docs/boundedness.md, "Unbounded: a paced replay backlog"), only for the bolts
            # the search left: a lasso, where one exists, says more (the bolt grows in a repeating run)
            paced_verdicts(self.topo, run.verdicts, run.checked, run.notes)
            self._floods(run, overtime=True)
            # a failing bolt that can hold any backlog spills it, replayed at once, into the bolts its spout feeds
            spill_verdicts(self.topo, run.verdicts, run.traces, lambda n: run.nets[n].topology, run.notes,
                           self.overdue)
            if self.flood_run is not None:  # a finite run past N for each unbounded bolt, on request
                # (a bolt that grows in a simulated lasso backs up first under the schedule that closed it)
                played = {n: run.played[v.trace_index] for n, v in run.verdicts.items()
                          if v.verdict == "counterexample" and v.trace_index in run.played}
                threshold_runs(self.topo, run.verdicts, run.traces, self.flood_run, run.notes,
                               cancelled=lambda: self.cancelled, deadline=self.deadline, played=played)
                storm_runs(self.topo, run.verdicts, run.traces, self.flood_run, run.notes, deadline=self.deadline)
                storm_runs(self.topo, run.verdicts, run.traces, self.flood_run, run.notes, deadline=self.deadline,
                           build=build_paced_run)
                spill_runs(self.topo, run.verdicts, run.traces, self.flood_run, run.notes, deadline=self.deadline,
                           played=played)
            if simulating:  # what time is left: lassos for the bolts proven to grow by rates, for their traces
                trace_phase(self, run)
        ordered = {n: run.verdicts[n] for n in run.checked}
        return summarise(run.base, run.kept, run.notes, run.elapsed(), ordered, run.traces, run.report, run.stop,
                         self.threshold, run.nets, run.downgraded, run.durations.get(0))

    def _floods(self, run: Run, overtime: bool = False, verdicts: dict[str, BoltVerdict] | None = None) -> None:
        """Every bolt answered so far (in `verdicts`, by default the run's) that a bolt with evidence of growth
        floods becomes `unbounded` (app/core/tcn/flood.py), until the time limit, or with `overtime` (the last pass,
        over answers all found before the limit) until the limit and its overtime, like the certification of a
        lasso found in time."""
        stop = self.overdue if overtime else (lambda: self.stop_reason(run.elapsed()) is not None)
        flood_verdicts(self.topo, run.verdicts if verdicts is None else verdicts, run.traces,
                       lambda n: run.nets[n].topology, run.notes, stop)

    def _early_floods(self, run: Run) -> None:
        """Before any search, every bolt not answered yet that a source proven to grow by rates or unbounded by a
        replay storm floods (directly, in a chain, or as a lost backlog into a paced spout) becomes `unbounded`
        (app/core/tcn/flood.py): the proof needs no lasso, so the search's time goes to the bolts it leaves
        (docs/verifier.md, step 2a). Within FLOOD_BUDGET_S, as `check`'s instant floods. A bolt flooded from a rate
        proof joins `run.early`: a lasso the trace passes find answers for it instead, as for a bolt proven to grow
        by rates (a replay storm's runs never repeat: no lasso is sought for the bolts it floods)."""
        waiting = {n: BoltVerdict(verdict="unknown") for n in run.checked if n not in run.verdicts}
        if not waiting:
            return
        until = time.monotonic() + FLOOD_BUDGET_S
        trial = {**run.verdicts, **waiting}
        flood_verdicts(self.topo, trial, run.traces, lambda n: run.nets[n].topology, run.notes,
                       lambda: self.stop_reason(run.elapsed()) is not None or time.monotonic() > until)
        flooded = {n: v for n, v in trial.items() if n in waiting and v.verdict == "unbounded"}
        run.verdicts.update(flooded)
        run.early.update(n for n, v in flooded.items() if v.flood_certificate is not None
                         and _from_rates(v.flood_certificate))


def _from_rates(cert: FloodCertificate) -> bool:
    """Whether the flood's first source (the innermost of a chain) has its growth proven by rates."""
    while cert.evidence.flood_certificate is not None:
        cert = cert.evidence.flood_certificate
    return cert.evidence.growth_certificate is not None


def verify(topo: Topology, options: SearchOptions | None = None, *,
           progress: Callable[[Progress], None] | None = None, rates: RateAnalysis | None = None) -> VerifyResult:
    """Run one :class:`Search` to the end (convenience for the CLI and tests)."""
    return Search(topo, options, progress=progress, rates=rates).run()

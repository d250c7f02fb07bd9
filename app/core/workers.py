"""Workers as a unit of failure: which executors a worker runs, and the constants of its deaths.

docs/model.md section 9 is the reference. A Storm worker runs executors of several components (spouts and
ackers included); its death stops them all at once, and Storm replays the lost trees when their message
timeout T expires (between T and 2T after their emission). This module computes the assignment of executors
to workers (Storm's even scheduler, or the document's own) and the worker model the rate check reads
(app/core/rates/workers_check.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from app.core.numbers import exact
from app.core.storm.flux.ticks import TICK_PREFIX
from app.core.topology import Topology

ACKER = "__acker"  # Storm's component id of the ackers (topology.acker.executors executors)


@dataclass(frozen=True)
class WorkerModel:
    """The worker deaths of a topology in exact numbers.

    `assignment[c]`: how many executors of component c (a component id, or ACKER) each worker runs (one entry
    per worker). A worker dies at the earliest `min_ttf` after its last restart ended (its first death: after
    time 0) and restarts within [min_restart, max_restart]; `timeout` is T. `replays`: whether Storm replays
    lost trees at all (acking on: ackers run and the spouts are reliable)."""

    workers: int
    min_ttf: Fraction
    min_restart: Fraction
    max_restart: Fraction
    timeout: Fraction
    replays: bool
    assignment: dict[str, tuple[int, ...]]
    explicit: bool = False  # the document's assignment; else Storm's even scheduler as `even_assignment` deals it

    @property
    def period(self) -> Fraction:
        """The shortest time between two deaths of one worker."""
        return self.min_ttf + self.min_restart

    @property
    def delay(self) -> Fraction:
        """How long after a death its replays may still be added: a tree it breaks was emitted before its worker
        is back (max_restart after the death) and times out at most 2T after its emission; a restarted spout
        re-emits when its worker is back."""
        return 2 * self.timeout + self.max_restart

    def may_run(self, worker: int, component: str) -> bool:
        """Whether the worker may run an executor of the component. Without an explicit assignment every worker
        may: Storm's deal can start elsewhere than `even_assignment`'s (components it adds, such as metrics
        consumers, take executors in the order), so nothing sound rests on where a deal puts an executor."""
        return not self.explicit or self.assignment.get(component, (0,) * self.workers)[worker] > 0

    def at_most(self, worker: int, component: str, executors: int) -> int:
        """The executors of the component the worker runs at most: the explicit count, or ⌈executors / W⌉ (a deal
        in turn gives each worker that many of a component's consecutive executors at most, wherever it starts)."""
        if self.explicit:
            return self.assignment.get(component, (0,) * self.workers)[worker]
        return -(-executors // self.workers)

    def runs_all(self, worker: int, component: str, executors: int) -> bool:
        """Whether the worker surely runs every executor of the component."""
        return self.at_most(worker, component, executors) >= executors and (self.explicit or self.workers == 1)


def executors_of(topo: Topology) -> dict[str, int]:
    """Executors per component id: a bolt's parallelism, a spout's `executors` (Storm's parallelism hint; 1
    unset)."""
    out = {s.id: s.executors or 1 for s in topo.spouts}
    out.update({b.id: b.parallelism for b in topo.bolts})
    return out


def ackers_of(topo: Topology, workers: int) -> int:
    """topology.acker.executors; unset means one per worker (Storm 1.0 and later)."""
    return workers if topo.storm.acker_executors is None else topo.storm.acker_executors


def even_assignment(topo: Topology, workers: int) -> dict[str, tuple[int, ...]]:
    """Storm's even scheduler (the default): the executors of every component, in the order of their tasks
    (components sorted by their ids, Storm's component ids being the names here; the ackers as `__acker`),
    dealt to the workers in turn, the first executor to the first worker."""
    counts = executors_of(topo)
    names = {c.id: c.name for c in topo.components if not c.name.startswith(TICK_PREFIX)}  # a timer: no executor
    order = sorted([*names, ACKER], key=lambda c: ACKER if c == ACKER else names[c])
    sizes = {**counts, ACKER: ackers_of(topo, workers)}
    out: dict[str, list[int]] = {}
    dealt = 0
    for c in order:
        row = [0] * workers
        for _ in range(sizes[c]):
            row[dealt % workers] += 1
            dealt += 1
        out[c] = row
    return {c: tuple(row) for c, row in out.items()}


def worker_model(topo: Topology, min_ttf: float | Fraction | None = None,
                 assignment: dict[str, tuple[int, ...]] | None = None) -> WorkerModel | None:
    """The topology's worker deaths, or None when its document does not let a worker die (no `storm.workers`, or
    no time between deaths). `min_ttf` and `assignment` (by component id) override the document's."""
    s = topo.settings
    workers = topo.storm.workers
    ttf = min_ttf if min_ttf is not None else topo.storm.worker_min_ttf
    if workers is None or ttf is None or s.min_reboot_time is None or s.max_reboot_time is None:
        return None
    explicit = assignment is not None or bool(topo.storm.assignment)
    if assignment is None:
        assignment = document_assignment(topo) or even_assignment(topo, workers)
    timeout = topo.storm.message_timeout
    acking = s.replay != "none" and topo.storm.acker_executors != 0
    return WorkerModel(workers, exact(ttf), exact(s.min_reboot_time), exact(s.max_reboot_time), Fraction(timeout),
                       acking, dict(assignment), explicit)


def document_assignment(topo: Topology) -> dict[str, tuple[int, ...]] | None:
    """The document's explicit assignment (`storm.assignment`, by component name), by component id."""
    if not topo.storm.assignment:
        return None
    ids = {c.name: c.id for c in topo.components}
    return {ids.get(name, name): tuple(row) for name, row in topo.storm.assignment.items()}

"""`storm rebalance` commands for a new parallelism, beside the Flux edit (docs/storm.md, "Repair").

`storm rebalance TOPOLOGY -e COMPONENT=N` changes a running component's executors without a
redeploy, but never above its tasks: Storm fixes a component's task count at submission
(`numTasks`, by default its parallelism hint), and an executor runs at least one task. A
component that needs more executors than it has tasks is named with the `numTasks` to set
before the next deploy.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.core.storm.flux.model import FluxDocument
    from app.core.topology import Topology


@dataclass(frozen=True)
class Running:
    """A component as deployed: its executors (the parallelism hint) and its tasks."""

    executors: int
    tasks: int
    tasks_set: bool = False  # numTasks written in the Flux file (else Storm's default, one per executor)


def rebalance_lines(topology: str, running: dict[str, Running], wanted: dict[str, int],
                    raised_tasks: dict[str, int] | None = None) -> list[str]:
    """One `storm rebalance` command for the components whose tasks allow it, then a line per component
    that needs `numTasks` raised and a redeploy (`raised_tasks`: those the repaired file already raises).
    Nothing when no executor count changes."""
    raised_tasks = raised_tasks or {}
    reachable = {c: n for c, n in wanted.items() if c in running and n != running[c].executors
                 and n <= running[c].tasks}
    beyond = {c: n for c, n in wanted.items() if c in running and n > running[c].tasks}
    lines = []
    if reachable:
        lines.append(f"storm rebalance {shlex.quote(topology)} "
                     + " ".join(f"-e {shlex.quote(f'{c}={n}')}" for c, n in reachable.items()))
    for c, n in reachable.items():
        before = running[c].executors
        if n < before:
            freed = before - n
            lines.append(f"{c}: scales down from {before} to {n} executor{'s' if n != 1 else ''}: frees {freed} "
                         f"executor thread{'s' if freed != 1 else ''}; its {running[c].tasks} tasks stay, run by "
                         f"{n} (the queue model's parallelism is the executors)")
    for c, n in beyond.items():
        tasks = running[c].tasks
        if raised_tasks.get(c, 0) >= n:
            lines.append(f"{c}: has {tasks} task{'s' if tasks != 1 else ''}, and rebalance cannot raise its executors "
                         f"above that: redeploy the repaired file, which raises its numTasks to {raised_tasks[c]}")
        elif running[c].tasks_set:
            lines.append(f"{c}: its numTasks: {tasks} caps it at {tasks} executor{'s' if tasks != 1 else ''}, by "
                         f"rebalance or by a redeploy of the repaired file: raise numTasks to {n} or more in the "
                         "Flux file and redeploy")
        else:
            lines.append(f"{c}: has {tasks} task{'s' if tasks != 1 else ''}, and rebalance cannot raise its "
                         f"executors above that: redeploy the repaired file, with numTasks: {n} or more on {c} "
                         "to leave room for later rebalances")
    return lines


def running_from_flux(document: FluxDocument) -> dict[str, Running]:
    """Executors and tasks of every bolt of a read Flux file, as Storm deploys it."""
    out: dict[str, Running] = {}
    for name, v in document.bolts.items():
        executors = v.parallelism or 1
        out[name] = Running(executors, v.num_tasks or executors, v.num_tasks is not None)
    return out


def running_from_document(topo: Topology) -> dict[str, Running]:
    """Executors and tasks of every bolt as the document knows them: the executors running on the cluster (a
    Storm UI import, also `--onto` a Flux file whose parallelism differs), else its parallelism; and, from the
    Storm UI or Flux's numTasks, its tasks (else one per executor, Storm's default)."""
    # what runs; whether a redeploy keeps a numTasks is the Flux file's business (`repair` reads it)
    on_cluster = topo.storm.running_executors
    out = {}
    for b in topo.bolts:
        executors = on_cluster.get(b.name, b.parallelism)
        out[b.name] = Running(executors, b.tasks or executors)
    return out


def as_running(deployed: dict[str, Running], topo: Topology) -> dict[str, Running]:
    """`deployed` (a Flux file's executors and tasks) with what runs on the cluster where the document knows it
    (a Storm UI import, `--onto` the file): `storm rebalance` starts from the running executors and tasks."""
    tasks = {b.name: b.tasks for b in topo.bolts if b.tasks is not None}
    out = {}
    for name, r in deployed.items():
        executors = topo.storm.running_executors.get(name)
        out[name] = r if executors is None else Running(executors, tasks.get(name, r.tasks), r.tasks_set)
    return out


def as_it_runs(topo: Topology, running: dict[str, Running]) -> tuple[Topology, bool]:
    """The document with each bolt's parallelism the executors that run (`running_from_document`), and whether
    any differs: the headroom of the running topology, which the rebalance lines start from."""
    differs = any(b.name in running and running[b.name].executors != b.parallelism for b in topo.bolts)
    if not differs:
        return topo, False
    bolts = [b.model_copy(update={"parallelism": running[b.name].executors}) if b.name in running else b
             for b in topo.bolts]
    return topo.model_copy(update={"bolts": bolts}), True

"""An independent checker for spill certificates ("unbounded": a failing bolt that can hold any backlog fails once,
and its spout replays all of it at once into the target).

It shares no code with the builder (`app/core/tcn/spill.py`): from the target's cone document alone it restates the
construction of docs/boundedness.md, "Unbounded: a backlog replayed at once", and accepts when

* the content hash is the document's; failures are on and `settings.replay` is "at-once";
* the failing bolt has `min_ttf`, is an ordinary bolt (no window, no join), and the spout's trees reach it (a path
  of input streams from the spout to it, by this module's own walk): a loss there may be replayed in full by that
  spout (docs/model.md 7.3, the upper end, the whole loss put on it);
* the target is another bolt, receives the spout's default stream, and is not a join nor a duration window;
* the failing bolt's evidence shows that it can hold any backlog (the flood checker's evidence check,
  `flood.evidence_problems`: a rate proof, a certified lasso in which it grows, a flood or a storm, each part of this
  document);
* with a threshold run (`run`): the trace certifier accepts its trace as a threshold witness for the target and the
  run's threshold, and the trace's document is part of this one for the target (`parts.threshold_run_problems`).
"""

from __future__ import annotations

from typing import Any

from app.core.formats.trace import CompressedTrace, Trace
from app.core.numbers import exact
from app.core.results import SpillCertificate
from app.core.tcn.check.flood import evidence_problems
from app.core.tcn.check.parts import received, threshold_run_problems
from app.core.tcn.check.reading import join_branches, read_certificate, timer_bound
from app.core.topology import Topology

__all__ = ["check_spill_certificate"]


def _reaches(topo: Topology, spout: str, bolt: str) -> bool:
    """Whether a path of input streams leads from `spout` to `bolt` (its trees reach it)."""
    below: dict[str, set[str]] = {}
    for b, pairs in received(topo).items():
        for u, _ in pairs:
            below.setdefault(u, set()).add(b)
    seen, todo = set(), [spout]
    while todo:
        for m in below.get(todo.pop(), set()):
            if m not in seen:
                seen.add(m)
                todo.append(m)
    return bolt in seen


def check_spill_certificate(document: Any, certificate: Any, evidence_trace: Trace | CompressedTrace | None = None,
                            run_trace: Trace | None = None) -> list[str]:
    """Why `certificate` does not prove that its target's queue passes every bound in some run of `document`;
    [] = accepted. `evidence_trace`, `run_trace`: the evidence's lasso and the threshold run's trace when the
    certificate in memory refers to them by index."""
    read = read_certificate(document, certificate, SpillCertificate, "a spill certificate", count_windows=True,
                            duration_windows=True, joins=True)
    if isinstance(read, list):
        return read
    topo, cert, problems = read
    if not topo.settings.failures or topo.settings.replay != "at-once":
        return problems + ["the document's failures are off or its replays are not at-once"]
    bolts, inputs = {b.name: b for b in topo.bolts}, received(topo)
    if cert.failing not in bolts or cert.target not in bolts or cert.spout not in {s.name for s in topo.spouts}:
        return problems + ["failing and target must be bolts, spout a spout of the document"]
    g, j = bolts[cert.failing], bolts[cert.target]
    if g.min_ttf is None:
        return problems + [f"{cert.failing} has no min_ttf: it never fails"]
    if g.window is not None or join_branches(topo, g) is not None:
        return problems + [f"{cert.failing} is a windowed bolt or a join: its loss is not its queue"]
    if not _reaches(topo, cert.spout, cert.failing):
        return problems + [f"{cert.spout}'s trees do not reach {cert.failing}: it replays none of its losses"]
    if (cert.target == cert.failing or (cert.spout, "default") not in inputs[cert.target]
            or join_branches(topo, j) is not None or timer_bound(j, exact(topo.settings.tolerance)) is not None):
        return problems + [f"{cert.target} is not another ordinary bolt that receives {cert.spout}'s default stream"]
    problems += evidence_problems(cert.evidence, cert.failing, topo, evidence_trace)
    return problems or threshold_run_problems(cert.target, cert.run, topo, run_trace)

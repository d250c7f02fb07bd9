"""Whether a run of one document is a run of another (the checkers' "part of this document" test).

A certificate's evidence or threshold run is about a smaller document (a cone of influence); it holds in the
whole when every component that influences the bolt it is about (its upstream and, with failures, the failing
bolts fed by a kept spout, whose losses that spout replays, with their upstream) is in the whole with the same
parameters and input streams, under the same settings (docs/boundedness.md, "Certificate"). Shared by the
checkers of this room (`flood.py`, `storm.py`), never by the builders they check.
"""

from __future__ import annotations

from typing import Any

from app.core.formats.trace import CompressedTrace, Trace
from app.core.numbers import exact
from app.core.tcn.check.certify import certify
from app.core.tcn.check.reading import join_branches, take_bound, timer_bound
from app.core.topology import Topology, TopologyError, parse_topology

__all__ = ["part_of", "received", "threshold_run_problems"]


def received(topo: Topology) -> dict[str, list[tuple[str, str]]]:
    """Per bolt name, its input streams (sender name, stream), each once."""
    name_of = {c.id: c.name for c in topo.components}
    return {name_of[b]: [(name_of[u], st) for u, st in pairs] for b, pairs in topo.inputs().items()}


def _fails(topo: Topology) -> bool:
    return bool(topo.settings.failures) and any(b.min_ttf is not None for b in topo.bolts)


def _influence(topo: Topology, start: str) -> set[str]:
    """`start` and every component whose behaviour can change what reaches it: its upstream and, when bolts may
    fail, the failing bolts fed (transitively) by a kept spout, whose losses it replays, with their upstream."""
    inputs = received(topo)
    below: dict[str, list[str]] = {}
    for b, pairs in inputs.items():
        for u, _ in pairs:
            below.setdefault(u, []).append(b)
    failing = {b.name for b in topo.bolts if b.min_ttf is not None} if _fails(topo) else set()
    spouts = {s.name for s in topo.spouts}
    keep: set[str] = set()
    todo = [start]
    while todo:
        while todo:
            n = todo.pop()
            if n not in keep:
                keep.add(n)
                todo += [u for u, _ in inputs.get(n, [])]
        reached, frontier = set(), [s for s in spouts if s in keep]
        while frontier:
            n = frontier.pop()
            for m in below.get(n, []):
                if m not in reached:
                    reached.add(m)
                    frontier.append(m)
        todo = [f for f in failing & reached if f not in keep]
    return keep


def _parameters(topo: Topology, fails: bool) -> dict[str, tuple[Any, ...]]:
    """Per component name, what a run of it depends on: kind, timing, batch sizes, streams, and (`fails`) min_ttf."""
    out: dict[str, tuple[Any, ...]] = {}
    tau = exact(topo.settings.tolerance)
    for s in topo.spouts:
        out[s.name] = ("spout", exact(s.rate), s.burst, sorted(s.output_streams().items()))
    for b in topo.bolts:  # (a duration window's G and a join's rule change its runs too)
        out[b.name] = ("bolt", exact(b.alpha), take_bound(b), timer_bound(b, tau), join_branches(topo, b) is not None,
                       sorted(b.output_streams().items()), b.min_ttf if fails else None)
    return out


def _same(part: tuple[Any, ...], whole: tuple[Any, ...] | None) -> bool:
    """Whether a component of the part acts as in the whole: the same parameters, where a bolt without min_ttf in
    the part may have one in the whole (a run in which it never fails is a run: a failure is never forced,
    docs/model.md 7.2)."""
    if whole is None or part == whole:
        return whole is not None
    return part[0] == "bolt" and part[-1] is None and part[:-1] == whole[:-1]


def part_of(evidence: Topology, source: str, whole: Topology, label: str = "evidence") -> list[str]:
    """Why a run of `evidence` in which `source` grows is not a run of `whole`; [] when it is."""
    fails = _fails(evidence)
    if evidence.settings.semantics(fails) != whole.settings.semantics(fails):
        return [f"{label}: its document's settings are not this document's"]
    mine, theirs = _parameters(evidence, fails), _parameters(whole, fails)
    if source not in mine:
        return [f"{label}: {source} is not in its document"]
    theirs_in, here = received(evidence), received(whole)
    problems = []
    for name in sorted(_influence(evidence, source)):
        if not _same(mine[name], theirs.get(name)):
            problems.append(f"{label}: {name} is not in this document with the same parameters")
        elif sorted(theirs_in.get(name, [])) != sorted(here.get(name, [])):
            problems.append(f"{label}: {name} does not receive the same streams in this document")
    return problems


def threshold_run_problems(target: str, run: Any, topo: Topology, trace: Trace | CompressedTrace | None) -> list[str]:
    """Why a certificate's threshold run (`run`: its `threshold` and `trace`, or None) is not a legal finite run of
    `topo` in which `target`'s queue reaches the run's threshold; [] when it is (or there is none). `trace`: the
    run's trace when the certificate in memory refers to it by index."""
    if run is None:
        return []
    witness = trace if trace is not None else run.trace
    if witness is None:
        return ["threshold run: no trace"]
    found = certify(witness, checked=[target], threshold=run.threshold)
    if not found.ok:
        return [f"threshold run: not certified: {'; '.join(found.problems[:3])}"]
    document = witness.topology if isinstance(witness, Trace | CompressedTrace) else witness.get("topology")
    try:
        return part_of(parse_topology(document), target, topo, "threshold run")
    except (TopologyError, ValueError, TypeError) as exc:
        return [f"threshold run: its document is not valid: {exc}"]

"""The rules across the elements of a document: names, references, edge directions, streams, the
failure settings, placeholder values. They read a document's parts (:class:`DocumentParts`, which a
`Topology` is, validated or not), so that `Topology`'s validator calls them without a circle."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from app.core.topology.components import DEFAULT_STREAM, TICK_STREAM, Bolt, Component, Position, Spout, Subscription
from app.core.topology.problems import NotAnnotated, Problem, has_control
from app.core.topology.settings import StormSettings, TopologySettings, VerificationSettings
from app.core.words import listed


class DocumentParts(Protocol):
    """What the checks read of a document: its components, subscriptions, settings and layout."""

    @property
    def spouts(self) -> Sequence[Spout]: ...
    @property
    def bolts(self) -> Sequence[Bolt]: ...
    @property
    def subscriptions(self) -> Sequence[Subscription]: ...
    @property
    def settings(self) -> TopologySettings: ...
    @property
    def verification(self) -> VerificationSettings: ...
    @property
    def layout(self) -> Mapping[str, Position]: ...
    @property
    def storm(self) -> StormSettings: ...


def _components(topo: DocumentParts) -> list[Component]:
    return [*topo.spouts, *topo.bolts]


def graph_problems(topo: DocumentParts) -> list[Problem]:
    """Rules across elements: names, references, edge directions, non-empty."""
    problems: list[Problem] = []
    if not topo.spouts and not topo.bolts:
        problems.append(Problem("topology", "is empty: add at least one spout and one bolt"))
        return problems
    if not topo.spouts:
        problems.append(Problem("spouts", "the topology has no spout, so no tuple ever enters it"))
    seen: dict[str, str] = {}
    for key, items in (("spouts", topo.spouts), ("bolts", topo.bolts)):
        for c in items:
            if c.name in seen:
                problems.append(Problem(f"{key}.{c.name}.name", f"duplicate name '{c.name}' (also a {seen[c.name]})"))
            seen[c.name] = c.kind
    ids: dict[str, Component] = {}
    for c in _components(topo):
        if c.id in ids:
            problems.append(Problem(f"{c.kind}s.{c.name}.id", f"duplicate id '{c.id}'"))
        ids[c.id] = c
        problems += _stream_problems(c)
    pairs: set[tuple[str, str, str | None]] = set()
    declared_of: dict[str, dict[str, float | None]] = {}  # each component's streams once (not once per edge)
    for i, s in enumerate(topo.subscriptions):
        label = f"subscriptions[{i}]"
        src, tgt = ids.get(s.source), ids.get(s.target)
        if src is None:
            problems.append(Problem(f"{label}.source", f"unknown component '{s.source}'"))
        if tgt is None:
            problems.append(Problem(f"{label}.target", f"unknown component '{s.target}'"))
        elif tgt.kind == "spout":
            problems.append(Problem(f"{label}.target", f"'{tgt.name}' is a spout; spouts cannot subscribe to streams"))
        if src is not None and tgt is not None:
            label = f"subscriptions.{src.name}->{tgt.name}"
            if (s.source, s.target, s.stream) in pairs:
                problems.append(Problem(label, "duplicate subscription"))
            pairs.add((s.source, s.target, s.stream))
            declared = declared_of.get(src.id)
            if declared is None:
                declared = declared_of[src.id] = src.output_streams()
            if s.stream is not None and s.stream not in declared:
                problems.append(Problem(f"{label}.stream", f"'{s.stream}' is not a declared stream of {src.name} "
                                        f"(declared: {listed(declared, 10)}; "
                                        f"add it to {src.kind}s.{src.name}.streams)"))
            if s.grouping == "fields" and not s.fields:
                problems.append(Problem(f"{label}.fields", "fields grouping needs at least one field name"))
    problems += _join_problems(topo)
    for ref in topo.verification.checked:
        checked = ids.get(ref)
        if checked is None:
            problems.append(Problem("verification.checked", f"unknown bolt '{ref}'"))
        elif checked.kind != "bolt":
            problems.append(Problem("verification.checked", f"'{checked.name}' is a spout; only bolts have queues"))
    for ref in topo.layout:
        if ref not in ids:
            problems.append(Problem("layout", f"position for unknown component '{ref}'"))
    problems += failure_problems(topo)
    problems += worker_problems(topo)
    return problems


def _join_problems(topo: DocumentParts) -> list[Problem]:
    """A join that waits for every branch needs two branches at least: its input streams (docs/model.md
    section 11)."""
    branches: dict[str, set[tuple[str, str]]] = {}
    for s in topo.subscriptions:
        branches.setdefault(s.target, set()).add((s.source, s.stream or "default"))
    return [Problem(f"bolts.{b.name}.join", f"a join waiting for every branch needs two input streams at least (its "
                                           f"branches); it has {len(branches.get(b.id, ()))}")
            for b in topo.bolts if b.waits_for_all and len(branches.get(b.id, ())) < 2]


def still_unannotated(unannotated: Iterable[str], set_fields: Iterable[str]) -> list[str]:
    """What stays "not annotated" after values are set for `set_fields`: a value typed, imported or
    annotated is a value (the one rule `annotate`, timings files and the inspector follow)."""
    done = set(set_fields)
    return [f for f in unannotated if f not in done]



def failure_problems(topo: DocumentParts) -> list[Problem]:
    """A bolt that may fail needs the reboot bounds (how long a failure lasts)."""
    failing = [b.name for b in topo.bolts if b.min_ttf is not None]
    if not failing or not topo.settings.failures:
        return []
    missing = [f"settings.{key}" for key in ("min_reboot_time", "max_reboot_time")
               if getattr(topo.settings, key) is None]
    if not missing:
        return []
    return [Problem(", ".join(missing), f"not set: bolts.{failing[0]}.min_ttf makes {failing[0]} fail, and a "
                                        "failure lasts between settings.min_reboot_time and max_reboot_time (s)")]


def worker_problems(topo: DocumentParts) -> list[Problem]:
    """A worker that may die needs the workers and the restart bounds; an explicit assignment deals every
    executor (and acker) of the topology to one of the workers (docs/model.md section 9)."""
    storm, problems = topo.storm, []
    if storm.worker_min_ttf is not None:
        if storm.workers is None:
            problems.append(Problem("storm.workers", "not set: storm.worker_min_ttf lets a worker die, and the "
                                                     "workers are topology.workers"))
        missing = [f"settings.{key}" for key in ("min_reboot_time", "max_reboot_time")
                   if getattr(topo.settings, key) is None]
        if missing:
            problems.append(Problem(", ".join(missing), "not set: storm.worker_min_ttf lets a worker die, and it "
                                                        "restarts between settings.min_reboot_time and "
                                                        "max_reboot_time (s)"))
    if not storm.assignment:
        return problems
    if storm.workers is None:
        return [*problems, Problem("storm.assignment", "needs storm.workers (one entry per worker)")]
    sizes = {s.name: s.executors or 1 for s in topo.spouts}
    sizes.update({b.name: b.parallelism for b in topo.bolts})
    sizes["__acker"] = storm.workers if storm.acker_executors is None else storm.acker_executors
    for name, row in storm.assignment.items():
        where = f"storm.assignment.{name[:60]}"
        if name not in sizes:
            problems.append(Problem(where, "not a component of the topology (nor __acker)"))
        elif len(row) != storm.workers or any(k < 0 for k in row):
            problems.append(Problem(where, f"needs {storm.workers} counts of executors, one per worker, none "
                                           "negative"))
        elif sum(row) != sizes[name]:
            problems.append(Problem(where, f"deals {sum(row)} executors; {name[:60]} has {sizes[name]}"))
    left = [n for n, k in sizes.items() if k and n not in storm.assignment]
    if left:
        problems.append(Problem("storm.assignment", f"no worker runs {listed(sorted(left))}: an explicit "
                                                    "assignment deals every component's executors"))
    return problems


def _stream_problems(c: Component) -> list[Problem]:
    """Declared streams: unique and not 'default'; a σ (a spout's ratio) only for a declared stream."""
    problems: list[Problem] = []
    where = f"{c.kind}s.{c.name}"
    if isinstance(c, Bolt):
        values, field, own = c.stream_sigma, "stream_sigma", "its σ is the bolt's sigma"
    else:
        values, field, own = c.stream_ratio, "stream_ratio", "it carries the spout's emissions"
    seen: set[str] = set()
    for name in c.streams:
        if name.startswith("__") and name != TICK_STREAM:
            problems.append(Problem(f"{where}.streams", f"'{name[:60]}': a name starting with __ is one of Storm's "
                                                        "own streams (__ack_init, __metrics...): Storm refuses it"))
        elif has_control(name):
            problems.append(Problem(f"{where}.streams", f"'{name[:60]}' holds a control character or a bidirectional "
                                                        "mark: Storm's stream ids are printable names"))
        elif name == DEFAULT_STREAM:
            problems.append(Problem(f"{where}.streams", f"'{DEFAULT_STREAM}' is always declared ({own})"))
        elif name in seen:
            problems.append(Problem(f"{where}.streams", f"stream '{name}' is declared twice"))
        seen.add(name)
    declared = listed(sorted(seen - {DEFAULT_STREAM}), 10) or "none"
    for name in values:
        if name == DEFAULT_STREAM:
            problems.append(Problem(f"{where}.{field}.{name}",
                                    f"the '{DEFAULT_STREAM}' stream has no entry here ({own})"))
        elif name not in seen:
            problems.append(Problem(f"{where}.{field}.{name}",
                                    f"names an undeclared stream '{name}' (declared: {declared}; "
                                    f"add it to {where}.streams)"))
    return problems



def unannotated_problems(topo: DocumentParts) -> list[Problem]:
    """One `spouts.S.rate: not annotated` per placeholder value, in document order."""
    problems = [Problem(f"{key}.{c.name}.{field}", "not annotated")
                for key, items in (("spouts", topo.spouts), ("bolts", topo.bolts))
                for c in items for field in c.unannotated]
    for c in _components(topo):
        field = "stream_sigma" if isinstance(c, Bolt) else "stream_ratio"
        problems += [Problem(f"{c.kind}s.{c.name}.{field}.{name}", "not annotated")
                     for name, value in c.output_streams().items() if value is None]
    return problems


def require_annotated(topo: DocumentParts) -> None:
    """Refuse a document with placeholder values: the rate check and the verifier would compute with them."""
    problems = unannotated_problems(topo)
    if problems:
        raise NotAnnotated(problems)

"""Per spout: can a tuple tree time out? The answer `check`, `verify` and the app show (docs/latency.md).

Four answers: `no-timeouts` (a proven bound within the message timeout), `times-out` (a certified run in
which a tuple of its trees waits longer), `may-time-out` (neither, with the reason), `no-acking` (Storm
acks at emit: nothing times out). Every line is in Storm's terms (docs/storm.md, "Timeouts").
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Any, Literal

import networkx as nx
from pydantic import BaseModel, Field

from app.core.latency.bounds import LatencyAnalysis, PendingAdvice, SpoutLatency
from app.core.latency.witness import WITNESS_CELLS, LatencyWitness, timeout_witnesses
from app.core.rates import RateAnalysis, RateFigures
from app.core.rates.verdicts import status_of
from app.core.tcn.check.latency_witness import check_witness
from app.core.topology import Topology
from app.core.units import format_duration

Answer = Literal["no-timeouts", "may-time-out", "times-out", "no-acking"]
WITNESS_BOLTS = 2  # bolts tried for a witness per check (one budget of work per bolt, shared)


def _s(x: Fraction | None) -> str | None:
    return None if x is None else f"{x.numerator}/{x.denominator}" if x.denominator != 1 else str(x.numerator)


class SpoutTimeout(BaseModel):
    """One spout's answer against the message timeout, and the figures behind it."""

    spout: str
    answer: Answer
    bound: float | None  # every tree completes within this (s), in every run (None: not proven)
    bound_exact: str | None
    critical_path: list[str] = []  # bolt names: the slowest branch
    hops: list[float] = []  # what each bolt of it adds (s)
    paid_once: list[list[str]] = []  # pipelines of the path bounded as one server (burst paid once)
    reason: str = ""  # why not proven ("" when proven)
    witness: dict[str, Any] | None = None  # a certified run in which a tuple waits longer than the timeout
    sentence: str  # the line in Storm's terms


class LatencyReport(BaseModel):
    """Every spout's answer, every bolt's sojourn bound and the max.spout.pending advice."""

    timeout: float  # topology.message.timeout.secs (30 when unset)
    acking: bool
    failures: bool  # the bounds are for trees that lose no tuple (docs/latency.md, "Failures with replays")
    spouts: dict[str, SpoutTimeout]
    sojourn_bound: dict[str, float | None]  # per bolt name (s); None: not proven
    sojourn_exact: dict[str, str | None]
    pending: dict[str, Any] | None = None  # with acking: the largest max.spout.pending within the target
    # per bolt name: the lasso of its witness (for `--witness-out`; not in --json, which has the summary)
    witness_traces: dict[str, dict[str, Any]] = Field(default_factory=dict, exclude=True)

    def not_proven(self) -> list[str]:
        """Spouts with acking whose trees are not proven to complete within the timeout (`--fail-on timeout`)."""
        return [n for n, s in self.spouts.items() if s.answer in ("may-time-out", "times-out")]

    def short(self) -> list[str]:
        """Per spout its answer in a few words (the verification panel's line; the sentences in its tooltip)."""
        words = {"times-out": "tuples time out (a certified run)", "may-time-out": "not proven",
                 "no-acking": "acking off, nothing times out"}
        return [f"{n}: " + (f"no timeouts, proven (within {format_duration(s.bound)})"
                            if s.answer == "no-timeouts" and s.bound is not None else words.get(s.answer, s.answer))
                for n, s in self.spouts.items()]

    def lines(self) -> list[str]:
        """The lines `check` and `verify` print, in Storm's terms."""
        out = [s.sentence for s in self.spouts.values()]
        if self.pending is not None:
            out.append(self.pending["sentence"])
        return out


def _names(lat: LatencyAnalysis, path: list[str]) -> list[str]:
    return [lat.names[j] for j in path]


def _pending(lat: LatencyAnalysis, advice: PendingAdvice, target_given: bool) -> dict[str, Any]:
    goal = format_duration(float(advice.target))
    what = "the latency target" if target_given else "the message timeout"
    if advice.unlimited:
        head = f"max.spout.pending: any value keeps every tree within {goal} ({what}): the rates alone bound it"
    elif advice.largest:
        head = (f"max.spout.pending: at most {advice.largest} keeps every tree within {goal} ({what}), proven "
                "(docs/latency.md)")
    else:
        head = f"max.spout.pending: no value is proven to keep every tree within {goal} ({what})"
    now = ""
    if advice.current is not None:
        bounds = [f"{n} {format_duration(float(b))}" if b is not None else f"{n} not proven"
                  for n, b in advice.current_bound.items()]
        little = [f"{n} {format_duration(float(w))}" for n, w in advice.little.items()]
        now = (f"; at the current {advice.current}: proven bound {', '.join(bounds)}"
               + (f"; Little's law estimates {', '.join(little)} in flight (an estimate, not a bound)" if little
                  else ""))
    return {"target": float(advice.target), "target_exact": _s(advice.target), "largest": advice.largest,
            "unlimited": advice.unlimited, "current": advice.current,
            "current_bound": {n: None if b is None else float(b) for n, b in advice.current_bound.items()},
            "little_estimate": {n: float(w) for n, w in advice.little.items()}, "sentence": head + now}


def _witnesses(topo: Topology, lat: LatencyAnalysis, cells: int) -> dict[str, list[LatencyWitness]]:
    """Per bolt id, timeout witnesses for the bolts most likely to have one (those that grow, then may grow; one
    simulation budget for all of them), each confirmed by `app/core/tcn/check/latency_witness.check_witness`
    (which certifies the lasso and recounts the wait) and attributed to a spout only where it recomputes the
    chain of emits from that spout's tuple."""
    e = lat.e
    # (a bolt no repeating run makes grow has no growing lasso: docs/boundedness.md; none is looked for)
    status = {b.id: status_of(e, b.id) for b in topo.bolts}
    order = sorted((b for b in topo.bolts if status[b.id] in ("grows", "may-grow")),
                   key=lambda b: (status[b.id] != "grows", b.name))[:WITNESS_BOLTS]
    if not order:
        return {}
    built = timeout_witnesses(topo, [b.name for b in order], lat.timeout, cells * len(order))
    found: dict[str, list[LatencyWitness]] = {}
    for b in order:
        kept: list[LatencyWitness] = []
        for w in built.get(b.name, []):
            # claimed only once the independent checker (no code shared with the builder) confirms it
            if not check_witness(w.trace, w.bolt, w.loop_pass, w.position, lat.timeout, branch=w.branch).ok:
                continue
            if w.root is not None and not check_witness(w.trace, w.bolt, w.loop_pass, w.position, lat.timeout,
                                                        chain=w.chain, branch=w.branch).root:
                w = replace(w, root=None, chain=())
            kept.append(w)
        if kept:
            found[b.id] = kept
    return found


def _answer(lat: LatencyAnalysis, s: SpoutLatency, witnesses: dict[str, list[LatencyWitness]]) -> SpoutTimeout:
    t = format_duration(float(lat.timeout))
    words = "every tuple tree that loses no tuple" if lat.model is not None else "every tuple tree"
    path = _names(lat, s.path)
    common = dict(spout=s.name, bound=None if s.bound is None else float(s.bound), bound_exact=_s(s.bound),
                  critical_path=path, hops=[float(h) for h in s.hops],
                  paid_once=[_names(lat, line) for line in s.paid_once])
    slowest = f"; slowest branch {' → '.join([s.name, *path])}" if path else ""
    if s.bound is not None and not lat.acking:
        return SpoutTimeout(**common, answer="no-acking", sentence=(
            f"{s.name}: acking is off, Storm acks at emit and nothing times out; {words} completes within "
            f"{format_duration(float(s.bound))} in every run{slowest}"))
    if not lat.acking:
        return SpoutTimeout(**common, answer="no-acking", reason=s.reason, sentence=(
            f"{s.name}: acking is off, Storm acks at emit and nothing times out (no latency bound: {s.reason})"))
    if s.bound is not None and s.bound <= lat.timeout:
        return SpoutTimeout(**common, answer="no-timeouts", sentence=(
            f"{s.name}: {words} completes within {format_duration(float(s.bound))} in every run "
            f"(topology.message.timeout.secs {t}): no timeouts{slowest}"))
    reason = s.reason or (f"its trees are proven to complete within {format_duration(float(s.bound or 0))}, "
                          f"above the timeout {t}")
    reach = nx.descendants(lat.graph, s.ident)
    for j, found in witnesses.items():
        if j in reach:
            spouts = {a for a in nx.ancestors(lat.graph, j) if a not in lat.bolts}
            # the tuple's tree: the root the checker recomputed from the chain of emits, or the only spout reaching j
            w = next((x for x in found if x.root == s.name), found[0])
            mine = w.root == s.name or w.root is None and spouts == {s.ident}
            run = (f"a certified run in which a tuple arriving at {lat.names[j]} waits "
                   f"{format_duration(float(w.wait))} before it is taken (topology.message.timeout.secs {t})"
                   + _tree_words(lat, w)) if w.branch is None else (
                f"a certified run in which a part {w.branch[0]} sends to the join {lat.names[j]} (stream "
                f"{w.branch[1]}) waits {format_duration(float(w.wait))} in its cache for the message's slowest "
                f"branch (topology.message.timeout.secs {t}): its cache grows, so the join's queue keeping up does "
                "not save its trees")
            if mine:
                return SpoutTimeout(**common, answer="times-out", reason=reason, witness=w.to_json(), sentence=(
                    f"{s.name}: tuples time out: {run}; Storm fails the tree and replays it on top of the load"))
            whose = f"a tree of {w.root}" if w.root is not None else "its tree or another spout's through it"
            return SpoutTimeout(**common, answer="may-time-out", reason=reason, witness=w.to_json(), sentence=(
                f"{s.name}: not proven to complete within the timeout ({reason}); {run}, {whose}"))
    return SpoutTimeout(**common, answer="may-time-out", reason=reason, sentence=(
        f"{s.name}: not proven to complete within the timeout {t}: {reason}"))


def _tree_words(lat: LatencyAnalysis, w: LatencyWitness) -> str:
    """How long the witness's tree is pending by its take when a window on its chain held it (empty otherwise: the
    wait says it then)."""
    windows = [name for name, _ in w.chain[1:] if any(b.name == name and b.window is not None
                                                       for b in lat.topo.bolts)]
    tree = w.tree_pending
    if tree is None or not windows:
        return ""
    return (f", its tree pending {format_duration(float(tree))} by then, held in the window of "
            f"{', '.join(windows)} on its way")


def latency_report(topo: Topology, *, target: Fraction | None = None, witnesses: bool = True,
                   witness_cells: int = WITNESS_CELLS, figures: RateFigures | None = None, pending: bool = True,
                   rates: RateAnalysis | None = None) -> LatencyReport:
    """The latency answers of one topology (`witnesses`: look for certified timeout runs where not proven;
    `pending`: the max.spout.pending bisection, which costs about as much again as the bounds; `rates`: the
    snapshot's rate analysis when already made)."""
    lat = LatencyAnalysis(topo, figures, rates=rates)
    spouts = lat.spouts()
    unproven = any(s.bound is None or s.bound > lat.timeout for s in spouts.values())
    found = _witnesses(topo, lat, witness_cells) if witnesses and lat.acking and unproven else {}
    answers = {lat.names[k]: _answer(lat, s, found) for k, s in spouts.items()}
    advice = lat.advice(target) if pending else None
    return LatencyReport(
        timeout=float(lat.timeout), acking=lat.acking, failures=lat.model is not None, spouts=answers,
        sojourn_bound={b.name: None if b.sojourn is None else float(b.sojourn) for b in lat.bolts.values()},
        sojourn_exact={b.name: _s(b.sojourn) for b in lat.bolts.values()},
        pending=None if advice is None else _pending(lat, advice, target is not None),
        witness_traces={w[0].bolt: w[0].trace.model_dump(mode="json") for w in found.values()})


def canvas_latency(topo: Topology, rates: RateAnalysis | None = None) -> tuple[dict[str, str], set[tuple[str, str]]]:
    """What the canvas shows (proofs only, instant): per component id a line for its tooltip (a bolt's sojourn
    bound, a spout's complete-latency bound), and the links (source id, target id) of every spout's critical path.
    `rates`: the snapshot's rate analysis when already made."""
    lat = LatencyAnalysis(topo, rates=rates)
    words: dict[str, str] = {}
    for j, b in lat.bolts.items():
        words[j] = (f"A tuple stays here at most {format_duration(float(b.sojourn))} (queue and processing) in every "
                    "run (docs/latency.md)" if b.sojourn is not None else
                    "No bound on how long a tuple stays here: its queue is not proven bounded (docs/latency.md)")
    links: set[tuple[str, str]] = set()
    for ident, s in lat.spouts().items():
        if s.bound is None:
            words[ident] = f"Its tuple trees: no proven latency bound ({s.reason})"
            continue
        path = [ident, *s.path]
        words[ident] = (f"Every tuple tree completes within {format_duration(float(s.bound))} in every run; slowest "
                        f"branch {' → '.join(lat.names[n] for n in path)} (docs/latency.md)")
        links.update(zip(path, path[1:], strict=False))
    return words, links


"""Worker deaths in verify's search (docs/model.md 9.4): the linear program over one loop pass with every worker
dying as often as `storm.worker_min_ttf` allows, for every checked bolt, whatever the other phases said.

The other phases play no worker's death: the rate check's `bounded` is about runs in which no worker dies, and a
lasso the simulation or the solver finds is such a run (a death is never forced, so it is a run with worker deaths
allowed too). This phase adds, per checked bolt, the linear program's answer with the deaths in its rows
(app/core/tcn/linear.py, `_deaths`), each certificate accepted by its independent checker
(app/core/tcn/check/linear.py) before it is counted, as one note of the result. For a bolt it proves nothing for,
and that no other phase found growing, it then simulates runs in which the workers that section 9.5 lets die in a
trace die as often as they may (app/core/tcn/simulate_deaths.py): a lasso in which the bolt grows, accepted by the
certifier, is a growth with worker deaths, and the note says in Storm's terms that the topology survives a single
bolt's failure but not a worker's death. For a bolt the simulation finds no such lasso for (or with the simulation
off), the solver searches one bound after another with the same deaths in its encoding
(app/core/tcn/encode_deaths.py), within what is left of the phase's time; its lassos pass the same certifier.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from fractions import Fraction

import z3

from app.core.failures import failures_off
from app.core.formats.trace import CompressedTrace, Trace
from app.core.results import LinearCertificate, Progress, VerifyResult
from app.core.tcn.check.certify import certify
from app.core.tcn.check.content import content_hash
from app.core.tcn.check.linear import check_certificate
from app.core.tcn.decode import decode
from app.core.tcn.encode import Cancelled, Encoding
from app.core.tcn.encode_deaths import death_rule
from app.core.tcn.linear import build_rows, farkas
from app.core.tcn.network import build_network
from app.core.tcn.search_run import SearchControl, deepening_schedule
from app.core.tcn.search_solver import SOLVER_OPTIONS
from app.core.tcn.simulate import build_lasso
from app.core.tcn.simulate_deaths import death_plan
from app.core.topology import Topology
from app.core.words import listed
from app.core.workers import WorkerModel, worker_model

DEATHS_BUDGET_S = 20.0  # all checked bolts together (one program per bolt: 10-100 ms on models/)
LASSO_CELLS = 1_000_000  # positions × bolts simulated per bolt with worker deaths
REPLAYS_PER_BATCH = 4  # a death's replays in a lasso at most, in the target's batches (simulate_deaths.py)


def worker_death_phase(search: SearchControl, result: VerifyResult) -> None:
    """After the other phases: the note on worker deaths and its certificates in `result`, within what is left of
    the search's time (DEATHS_BUDGET_S at most, half a second at least: docs/verifier.md, "The time limit"), its
    lassos certified within it too; the bolts the rate check's worker check bounds are named as such."""
    if worker_model(search.topo) is None:
        return
    started = time.monotonic()
    budget = DEATHS_BUDGET_S if search.timeout_s is None else min(
        DEATHS_BUDGET_S, max(0.5, search.timeout_s - result.elapsed_s))
    if search.progress is not None:
        search.progress(Progress(k=0, elapsed_s=result.elapsed_s, message="worker deaths: the linear program, "
                                                                           "bolt by bolt"))
    check = search.rates.worker_check() if search.rates is not None else None
    names = {b.id: b.name for b in search.topo.bolts}
    bounded = frozenset() if check is None else frozenset(
        names[j] for j, v in check.bolts.items() if v.status == "bounded")
    note, proven = death_proofs(search.topo, result.checked, lambda: search.cancelled, budget, bounded)
    if note is not None:
        result.notes.append(note)
        result.worker_death_certificates = proven
        growing = {n for n, v in result.bolts.items() if v.verdict in ("counterexample", "unbounded")}
        left = [n for n in result.checked if n not in proven and n not in bounded and n not in growing
                and not search.topo.bolt_by_name(n).waits_for_all]
        lassos = death_lassos(search.topo, left, lambda: search.cancelled,
                              budget - (time.monotonic() - started)) if search.simulate else {}
        lassos |= solver_death_lassos(search, [n for n in left if n not in lassos],
                                      budget - (time.monotonic() - started), result.notes)
        for name, (trace, words) in lassos.items():
            result.worker_death_lassos[name] = len(result.worker_death_traces)
            result.worker_death_traces.append(trace)
            result.notes.append(words + _survived(search.topo, result, name))
        result.elapsed_s += time.monotonic() - started


def _survived(topo: Topology, result: VerifyResult, name: str) -> str:
    """The Storm-terms end of a death lasso's note: what the topology survives without worker deaths."""
    verdict = result.bolts.get(name)
    if verdict is None or verdict.verdict not in ("bounded", "no-repeating-growth"):
        return ""
    alone = topo.settings.failures and any(b.min_ttf is not None for b in topo.bolts)
    what = ("a single bolt's failure (docs/model.md section 7: a bolt fails alone, its replays come at once)" if alone
            else "runs in which no worker dies")
    return (f"; in Storm's terms: {name} survives {what} ({verdict.verdict}, by {verdict.method}) but not its "
            "workers' deaths")


def death_lassos(topo: Topology, names: list[str], cancelled: Callable[[], bool], budget_s: float
                 ) -> dict[str, tuple[Trace | CompressedTrace, str]]:
    """Per bolt of `names`, a certified lasso in which it grows with worker deaths (docs/model.md 9.5), and its note;
    bolts with none within `budget_s` (all together) are left out."""
    model = worker_model(topo)
    if model is None or not model.explicit:
        return {}
    started = time.monotonic()
    out: dict[str, tuple[Trace | CompressedTrace, str]] = {}
    for name in names:
        left = budget_s - (time.monotonic() - started)
        if left <= 0 or cancelled():
            break
        found = _death_lasso(topo, model, name, cancelled, time.monotonic() + left)
        if found is not None:
            out[name] = found
    return out


def _death_lasso(topo: Topology, model: WorkerModel, name: str, cancelled: Callable[[], bool], deadline: float
                 ) -> tuple[Trace | CompressedTrace, str] | None:
    net = build_network(failures_off(topo), [name])  # section 7's failures off: a bolt fails with its worker only
    target = next(b for b in net.bolts if b.name == name)
    plan = death_plan(net, model, REPLAYS_PER_BATCH * target.take_max)
    if plan is None:
        return None
    lasso = build_lasso(net, name, cancelled=cancelled, deadline=deadline, deaths=plan, max_cells=LASSO_CELLS)
    if lasso.trace is None:
        return None
    cert = certify(lasso.trace, [name], cancelled=_until(cancelled, deadline))
    if not cert.ok or cert.growth_per_loop.get(name, 0) <= 0:
        return None
    return lasso.trace, (f"worker deaths (docs/model.md 9.5): a certified lasso in which {name} grows by "
                         f"{cert.growth_per_loop[name]} tuples every {cert.loop_duration} s while {plan.describe()} "
                         f"and the spouts replay the trees each death breaks at the {plan.timeout} s message timeout")


def _until(cancelled: Callable[[], bool], deadline: float) -> Callable[[], bool]:
    """Cancelled, or past `deadline`: what a certification within the phase's time polls."""
    return lambda: cancelled() or time.monotonic() >= deadline


def solver_death_lassos(search: SearchControl, names: list[str], budget_s: float, notes: list[str]
                        ) -> dict[str, tuple[Trace | CompressedTrace, str]]:
    """Per bolt of `names`, a certified lasso in which it grows with worker deaths that the solver finds, bound by
    bound (the search's bounds, or its one `k`), within `budget_s` shared evenly by the bolts left; a trace the
    certifier rejects is a defect, said in `notes` and not counted."""
    model = worker_model(search.topo)
    if model is None or not model.explicit:
        return {}
    started = time.monotonic()
    out: dict[str, tuple[Trace | CompressedTrace, str]] = {}
    for m, name in enumerate(names):
        left = budget_s - (time.monotonic() - started)
        if left <= 0 or search.cancelled:
            break
        net = build_network(failures_off(search.topo), [name])  # section 7's failures off, as in the simulation
        rule = death_rule(net, model)
        if rule is None:
            continue
        deadline = time.monotonic() + left / (len(names) - m)
        if search.progress is not None:
            search.progress(Progress(k=0, elapsed_s=time.monotonic() - started,
                                     message=f"worker deaths: the solver for {name}"))
        ks = [search.single_k] if search.single_k is not None else deepening_schedule(search.k_min, search.k_max)
        for k in ks:
            remaining = deadline - time.monotonic()
            if remaining <= 0.05 or search.cancelled:
                break
            try:
                enc = Encoding(net, k, search.ctx, solver_options=dict(SOLVER_OPTIONS), deaths=rule,
                               cancelled=search.interrupted)
            except Cancelled:
                break
            enc.solver.set("timeout", max(1, int((deadline - time.monotonic()) * 1000)))
            answer = enc.solver.check()
            if answer == z3.unsat:
                continue
            if answer == z3.sat:
                try:
                    trace = decode(enc, enc.solver.model())
                except z3.Z3Exception:  # a cancel that lands while the model is read
                    break
                cert = certify(trace, [name], cancelled=_until(lambda: search.cancelled, deadline))
                if not cert.ok and (search.cancelled or time.monotonic() >= deadline):
                    break  # (not certified in time: not counted, no defect)
                if not cert.ok:
                    notes.append(f"defect: a trace with worker deaths at k = {k} for {name} failed certification and "
                                 "was discarded: " + "; ".join(cert.problems[:3]))
                elif cert.growth_per_loop.get(name, 0) > 0:
                    out[name] = trace, (
                        f"worker deaths (docs/model.md 9.5): a certified lasso the solver found at k = {k} in which "
                        f"{name} grows by {cert.growth_per_loop[name]} tuples every {cert.loop_duration} s while "
                        f"{rule.describe()} dies ({rule.min_ttf} s after it is back at the earliest, back "
                        f"{rule.min_reboot} to {rule.max_reboot} s after a death) and the spouts replay the trees "
                        f"each death breaks at the {rule.timeout} s message timeout")
            break  # a lasso, a trace the certifier rejects (not counted), or no answer in time
    return out


def death_proofs(topo: Topology, checked: list[str], cancelled: Callable[[], bool],
                 budget_s: float = DEATHS_BUDGET_S, bounded: frozenset[str] = frozenset()
                 ) -> tuple[str | None, dict[str, LinearCertificate]]:
    """The note on worker deaths in the search, and the certificates by bolt; (None, {}) when no worker may die.
    `bounded`: the bolts the rate check bounds in every run with worker deaths (its worker check), which need no
    program. Bolts that also fail alone (section 7) do so in the same rows."""
    if worker_model(topo) is None:
        return None, {}
    started = time.monotonic()
    proven: dict[str, LinearCertificate] = {}
    unproven: list[str] = []
    untried: list[str] = []
    joins: list[str] = []
    for name in (n for n in checked if n not in bounded):
        if topo.bolt_by_name(name).waits_for_all:  # a join's growth may be its cache's, which no row says
            joins.append(name)
            continue
        left = budget_s - (time.monotonic() - started)
        if left <= 0 or cancelled():
            untried.append(name)
            continue
        net = build_network(topo, [name])  # (a duration window: its `timer` row, no batch bound: model.md 10.3)
        y = farkas(build_rows(net, name), timeout_ms=max(1, int(left * 1000)), cancelled=cancelled)
        if y is None:
            unproven.append(name)
            continue
        cert = LinearCertificate(target=name, content_hash=content_hash(net.topology),
                                 rows={row: str(Fraction(v)) for row, v in y.items()})
        if check_certificate(net.document(), cert.model_dump(mode="json")):
            unproven.append(name)  # (the checker has the last word)
            continue
        proven[name] = cert
    return _note([n for n in checked if n in bounded], proven, unproven, untried, budget_s, joins), proven


def _note(bounded: list[str], proven: dict[str, LinearCertificate], unproven: list[str], untried: list[str],
          budget_s: float, joins: list[str]) -> str:
    parts = ["worker deaths in the search (docs/model.md 9.4): with every worker dying as often as "
             "storm.worker_min_ttf allows and the spouts replaying what its deaths break (and no tree outliving the "
             "message timeout, which the worker-death line proves or not)"]
    if bounded:
        parts.append(f"the rate check bounds {listed(bounded, 8)} in every run (its worker-death line)")
    if proven:
        parts.append(f"the linear program proves that no repeating run grows {listed(list(proven), 8)} "
                     "(certificates accepted by the independent checker)")
    if unproven:
        parts.append(f"it proves nothing for {listed(unproven, 8)} (not a growth: the rate check's worker-death "
                     "line says what is known)")
    if joins:
        parts.append(f"{listed(joins, 8)}: a join, whose cache no row bounds (docs/model.md section 11)")
    if untried:
        parts.append(f"{listed(untried, 8)} not tried within {budget_s:g} s")
    return parts[0] + ": " + "; ".join(parts[1:])

"""Worker deaths in verify's search (docs/model.md 9.4): the linear program over one loop pass with every worker
dying as often as `storm.worker_min_ttf` allows, for every checked bolt, whatever the other phases said.

The other phases play no worker's death: the rate check's `bounded` is about runs in which no worker dies, and a
lasso the simulation or the solver finds is such a run (a death is never forced, so it is a run with worker deaths
allowed too). This phase adds, per checked bolt, the linear program's answer with the deaths in its rows
(app/core/tcn/linear.py, `_deaths`), each certificate accepted by its independent checker
(app/core/tcn/check/linear.py) before it is counted, as one note of the result.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from fractions import Fraction

from app.core.results import LinearCertificate, Progress, VerifyResult
from app.core.tcn.check.content import content_hash
from app.core.tcn.check.linear import check_certificate
from app.core.tcn.linear import build_rows, farkas
from app.core.tcn.network import build_network
from app.core.tcn.search_run import SearchControl
from app.core.topology import Topology
from app.core.words import listed
from app.core.workers import worker_model

DEATHS_BUDGET_S = 20.0  # all checked bolts together (one program per bolt: 10-100 ms on models/)


def worker_death_phase(search: SearchControl, result: VerifyResult) -> None:
    """After the other phases: the note on worker deaths and its certificates in `result`, within what is left of
    the search's time (DEATHS_BUDGET_S at most); the bolts the rate check's worker check bounds are named as such."""
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
        result.elapsed_s += time.monotonic() - started


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
        net = build_network(topo, [name])
        if any(b.duration_window is not None for b in net.topology.bolts):  # no timer in the rows (model.md 10.3)
            unproven.append(name)
            continue
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

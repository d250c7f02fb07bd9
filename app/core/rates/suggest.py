"""The smallest parallelism that keeps every queue bounded (check's suggest column, repair, the GUI).

Without failures: once every bolt keeps up, each passes on σ·inflow, so the flows no longer
depend on parallelism and the executors each bolt needs follow from the uncapped flows; inside
cycles the estimate comes from below and is raised until proven. When every bolt keeps up in the
long run, every bolt is bounded in every run (no upstream bolt is then left unproven: the two
checks of docs/boundedness.md agree on "all bounded"). With failures: raised until the failure
check proves it (app/core/rates/failures_check.py).
"""

from __future__ import annotations

import math
from fractions import Fraction

from app.core.failures import failure_model
from app.core.numbers import exact
from app.core.rates.failures_check import failure_check
from app.core.rates.flows import RateFigures, keeps_up
from app.core.rates.verdicts import status_of
from app.core.topology import Bolt, Topology


def executors_needed(topo: Topology, bolt: Bolt, inflow: Fraction) -> int:
    """The fewest executors whose smallest capacity, p·T / (α(1+τ) + max_idle), exceeds `inflow` (T an asynchronous
    bolt's threads per executor, a count window's sliding interval, else 1). A duration window keeps its own: its timer
    takes whatever arrived at any inflow, and other executors would window other tuples (docs/model.md section 10.3)."""
    if bolt.duration_window is not None:
        return bolt.parallelism
    slow = exact(bolt.alpha) * (1 + exact(topo.settings.tolerance)) + exact(topo.settings.max_idle_time)
    return math.floor(inflow * slow / bolt.per_executor) + 1


def uncapped_probe(topo: Topology) -> RateFigures:
    """The figures of `topo` with 10¹² executors per bolt: every bolt keeps up, so its inflow is what the others
    pass on uncapped (`suggest` and `at_target` read the same one, `RateAnalysis.probe`)."""
    return RateFigures(topo, {b.id: 10**12 for b in topo.bolts})


def suggest(topo: Topology, figures: RateFigures | None = None, probe: RateFigures | None = None
            ) -> dict[str, int | None]:
    """Smallest parallelism per bolt that makes every queue bounded (None: no value can). `figures`: `topo`'s own
    (`RateAnalysis.figures`), `probe`: its `uncapped_probe`, when already made (the same answer, computed once)."""
    # Once every bolt is bounded, each passes on σ·inflow: flows no longer depend on
    # parallelism, so the needed capacity of each bolt follows from the uncapped flows.
    probe = probe or uncapped_probe(topo)
    own = {b.id: b.parallelism for b in topo.bolts}
    # a cycle that amplifies has no finite uncapped flows: its members and what they feed need more than any
    # value (decided, not iterated: docs/boundedness.md, "Cycles that amplify")
    uncapped = probe.inflows(probe.spout_max, probe.cap_max, from_above=False, high=True, saturated=probe.amplifying)
    # one that amplifies with one executor each (σ_hi only grows with the batch size) amplifies at every
    # parallelism: some member always saturates, so none of its members gets a value
    amplifying: frozenset[str] = frozenset()
    if probe.cyclic:
        ones = {b.id: 1 for b in topo.bolts}  # the document's own figures when it has one executor each
        single = figures if figures is not None and own == ones else RateFigures(topo, ones)
        # `amplifying` reads the graph, the inputs and the streams' ratios only: the probe's answer when its
        # ratios are the same (σ_hi does not depend on the batch size under the exact rule)
        amplifying = probe.amplifying if single.streams == probe.streams else single.amplifying
    suggestion: dict[str, int | None] = {}
    parallelism: dict[str, int] = {}
    for b in topo.bolts:
        need = executors_needed(topo, b, uncapped[b.id])
        if need >= 10**9 or b.id in amplifying:
            suggestion[b.name] = None
            parallelism[b.id] = b.parallelism
        else:
            suggestion[b.name] = max(1, need)
            parallelism[b.id] = max(1, need)
    # confirm exactly; inside cycles the estimate comes from below, so raise until proven
    ok = _no_repeating_growth(topo, parallelism, figures if parallelism == own else None)
    for round_ in range(60):
        failing = [b for b in topo.bolts if suggestion[b.name] is not None and not ok[b.name]]
        if not failing:
            break
        for b in failing:  # small steps first (keeps the answer minimal), then faster
            step = 1 if round_ < 30 else math.ceil(parallelism[b.id] * 0.1)
            parallelism[b.id] += step
            suggestion[b.name] = parallelism[b.id]
        ok = _no_repeating_growth(topo, parallelism)
    for b in topo.bolts:
        if suggestion[b.name] is not None and not ok[b.name]:
            suggestion[b.name] = None
    return suggestion


TARGET_CAPACITY = 0.7  # the Storm UI capacity an engineer plans each bolt to (DS2, Flink's autoscaler: ~0.7)


def at_target(topo: Topology, least: dict[str, int | None], target: float = TARGET_CAPACITY,
              probe: RateFigures | None = None) -> dict[str, int | None]:
    """Per bolt, the fewest executors that keep its capacity (inflow × α / (executors × threads): the Storm UI's
    figure for an ordinary bolt, whose executor is one thread) at or below `target` at nominal rates, and never
    fewer than `least` (the smallest bounded parallelism, None when none is): what `check` and `repair` suggest.
    `probe`: `topo`'s `uncapped_probe`, when already made."""
    probe = probe or uncapped_probe(topo)  # every bolt keeps up: the flows it passes on
    inflow = probe.inflows(probe.spout_nominal, probe.cap_max, from_above=False, high=True,
                           saturated=probe.amplifying)  # an amplifying cycle has no finite flows (and no `least`)
    out: dict[str, int | None] = {}
    for b in topo.bolts:
        proven = least.get(b.name)
        if proven is None:
            out[b.name] = None
            continue
        # batch-seconds per second over the tuples one executor takes at once (`threads`, a count window's slide)
        busy = inflow[b.id] * exact(b.alpha)
        need = math.ceil(busy / (exact(target) * b.per_executor)) if busy > 0 else 1
        if b.duration_window is not None:  # (its timer's evaluations do not follow the inflow: its own executors)
            need = b.parallelism
        out[b.name] = max(proven, need, 1)
    return out


FAILURE_SUGGEST_ROUNDS = 24  # raises of the failure-free suggestion (each by a quarter) before giving up


def suggest_with_failures(topo: Topology, base: dict[str, int | None]) -> dict[str, int | None]:
    """With failures on: the failure-free suggestion `base`, raised (the bolts the check does not yet
    prove, by a quarter each round) until the rate check under failures proves every bolt bounded
    (app/core/rates/failures_check.py), then lowered to what the proven inflows with replays need, for as
    long as the check still proves it; None for a bolt it proves with no value tried. Each answer
    is one the check proved, not always the smallest: a larger batch loses more at a failure, so
    the proof is not monotone in the parallelism."""
    def checked(parallelism: dict[str, int]) -> tuple[list[str], bool, dict[str, int]]:
        """(the bolts not proven, cyclic, the parallelism each proven inflow with replays needs)."""
        trial = topo.model_copy(update={"bolts": [b.model_copy(update={"parallelism": parallelism[b.name]})
                                                  for b in topo.bolts]})
        e, model = RateFigures(trial), failure_model(trial)
        assert model is not None  # parallelism leaves min_ttf and the settings alone
        # bounded or not is all we read
        check = failure_check(trial, e, model, {b.id: status_of(e, b.id) for b in trial.bolts},
                              nominal_estimate=False)
        needs = {b.name: executors_needed(trial, b, inflow) for b in trial.bolts
                  if (inflow := check.bolts[b.id].inflow) is not None}  # as in suggest, with the replays
        return [b.name for b in trial.bolts if check.bolts[b.id].status != "bounded"], e.cyclic, needs

    start = {b.name: base[b.name] or b.parallelism for b in topo.bolts}
    parallelism = dict(start)
    for _ in range(FAILURE_SUGGEST_ROUNDS):
        short, cyclic, needed = checked(parallelism)
        if not short or any(base[n] is None for n in short) or cyclic:
            break  # proven; or a bolt no parallelism bounds, or a cycle (never proven with failures)
        for name in short:
            parallelism[name] += max(1, parallelism[name] // 4)
    if short:
        return {b.name: None if base[b.name] is None or b.name in short else parallelism[b.name] for b in topo.bolts}
    for _ in range(FAILURE_SUGGEST_ROUNDS):  # down to what the proven inflows need, while still proven
        lower = {n: max(start[n], min(p, needed.get(n, p))) for n, p in parallelism.items()}
        if lower == parallelism:
            break
        short, _cyclic, lower_needs = checked(lower)
        if not short:
            parallelism, needed = lower, lower_needs
            continue
        lowered = False  # all at once loses the proof: one bolt at a time
        for name in [n for n in parallelism if lower[n] < parallelism[n]]:
            short, _cyclic, trial_needs = checked({**parallelism, name: lower[name]})
            if not short:
                parallelism, needed, lowered = {**parallelism, name: lower[name]}, trial_needs, True
        if not lowered:
            break
    return {b.name: parallelism[b.name] if base[b.name] is not None else None for b in topo.bolts}


def _no_repeating_growth(topo: Topology, parallelism: dict[str, int], figures: RateFigures | None = None
                         ) -> dict[str, bool]:
    """Per bolt name: its long-run inflow keeps up (every bolt at once: all bounded in every run); `figures`: the
    figures at this parallelism, when already made."""
    e = figures or RateFigures(topo, parallelism)
    return {b.name: keeps_up(e.in_long[b.id], e.cap_min[b.id]) for b in topo.bolts}

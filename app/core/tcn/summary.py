"""The words of a verification's verdicts: the top-level verdict over the checked bolts' own, and what would
decide a bolt the search left undecided (docs/verifier.md, "Verdicts")."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from app.core.formats.trace import AnyTrace
from app.core.results import BoltVerdict, VerifyResult
from app.core.tcn.encode_failures import position_step
from app.core.words import Words


def what_would_decide(name: str, k: int, nets: dict[str, Any], downgraded: frozenset[str]) -> str:
    """For an undecided bolt: a larger k when that can help, else what would decide it. A bolt that the
    failure-free rate check proves bounded can only grow in a loop that holds a whole failure cycle
    (min_ttf + min_reboot seconds), and positions are at most min_s(C_EMIT·a + τa) apart."""
    larger = f"try a larger k (e.g. --k-max {2 * k})"
    net = nets.get(name)
    if net is None or net.failures is None or name not in downgraded:
        return larger
    cycle = min(net.failures.min_ttf.values()) + net.failures.min_reboot
    step = position_step(net)
    if step is None or cycle / step <= 2 * k:
        return larger
    needed = math.ceil(cycle / step)
    return (f"without failures the rate check proves it bounded, so a lasso in which it grows must hold a "
            f"whole failure cycle of at least {float(cycle):.4g} s (min_ttf + min_reboot_time), at least "
            f"{needed} positions (positions are at most {float(step):.4g} s apart): a larger k within reach "
            f"will not find it. What would decide it: a bound of at least {needed} positions (--k-max "
            f"{needed}; an encoding grows linearly in k, so expect a long search), or a proof, which neither "
            "the rate check nor the linear program over one loop pass gives here (both leave room for growth: "
            "what a failing bolt loses is bounded only by what it receives)")

def summarise(base: dict[str, Any], kept: list[str], notes: list[str], elapsed: float,
              verdicts: dict[str, BoltVerdict], traces: list[AnyTrace], report: Any, stop: str | None,
              threshold: int | None, nets: dict[str, Any] | None = None,
              downgraded: frozenset[str] = frozenset(), first_loop: Fraction | None = None) -> VerifyResult:
    """The top-level verdict over the checked bolts' own: counterexample if any bolt has one,
    else unknown if any is undecided, else none-up-to-k, else bounded. `first_loop`: the first trace's loop
    duration when its certificate gave it (else read from the trace: a long compressed one is expanded for it)."""
    kinds = {v.verdict for v in verdicts.values()}
    growing = [n for n, v in verdicts.items() if v.verdict == "counterexample"]
    common = dict(kept=kept, notes=notes, elapsed_s=elapsed, bolts=verdicts, traces=traces,
                  trace=traces[0] if traces else None, **base)
    per_bolt = Words.joined("; ", (Words.of(f"{n}: {v.verdict}") if v.verdict == "counterexample"
                                   else Words.of(f"{n}: {v.verdict} (", v.words(), ")") for n, v in verdicts.items()))
    if "counterexample" in kinds:
        first = traces[0] if traces else None
        if threshold is not None:
            message = (f"counterexample: the queue of {', '.join(growing)} reaches {threshold} "
                       f"(certified run{'s' if len(traces) > 1 else ''})")
            return VerifyResult(verdict="counterexample", k=first.k if first else None, growing=growing,
                                certified=True, message=message, **common)
        growth = {n: verdicts[n].growth_per_loop or 0 for n in growing if verdicts[n].method != "rate proof"}
        by_rates = [n for n in growing if verdicts[n].method == "rate proof"]
        shown = ("this queue grows without bound" if len(growing) == 1
                 else "these queues grow without bound")
        if first is not None:
            lassoed = [n for n in growing if n not in by_rates]
            message = (f"counterexample: {', '.join(lassoed)} {'grows' if len(lassoed) == 1 else 'grow'} in "
                       f"{len(traces)} certified lasso{'s' if len(traces) > 1 else ''}; the first, of {first.k} "
                       f"positions, repeats positions {first.loop_start}..{first.k} every "
                       f"{float(first.loop_duration() if first_loop is None else first_loop):.4g} s")
            if by_rates:
                message += f"; {', '.join(by_rates)} {'grows' if len(by_rates) == 1 else 'grow'} as proven by rates"
            message += f", so {shown}"
        else:
            message = (f"counterexample: {', '.join(by_rates)} {'grows' if len(by_rates) == 1 else 'grow'}, proven "
                       "by rates under a fixed legal schedule (a lasso exists; its positions are not written), so "
                       f"{shown}")
        others = {n: v for n, v in verdicts.items() if v.verdict != "counterexample"}
        said = Words.of(message)
        if others:
            said = Words.of(said, ". Other checked bolts: ", Words.joined("; ", (
                Words.of(f"{n}: {v.verdict} (", v.words(), ")") for n, v in others.items())))
        if report.all_bounded([n for n in verdicts]):
            notes.append("BUG: the rate check proves every checked bolt bounded, yet a certified lasso was found")
        return VerifyResult.said(said, verdict="counterexample", k=first.k if first else None,
                                 loop_start=first.loop_start if first else None, growing=growing,
                                 growth_per_loop=growth, certified=True, **common)
    if "unknown" in kinds:
        bounds = [v.k for v in verdicts.values() if v.verdict not in ("bounded", "no-repeating-growth")]
        known = [x for x in bounds if x is not None]
        proven_k = min(known) if known and len(known) == len(bounds) else None
        upto = f" (no counterexample up to k = {proven_k} before that)" if proven_k else ""
        reason = stop or next(v.message for v in verdicts.values() if v.verdict == "unknown")
        summary = Words.of(f"unknown: {reason}{upto}")
        return VerifyResult.said(Words.of(summary, ". Per bolt: ", per_bolt, "."), summary=summary,
                                 verdict="unknown", k=proven_k, **common)
    searched = [n for n, v in verdicts.items() if v.verdict == "none-up-to-k"]
    if searched:
        k = min(v.k or 0 for n, v in verdicts.items() if n in searched)
        what = (f"no queue of {', '.join(searched)} reaches {threshold}" if threshold is not None
                else f"no lasso makes a queue of {', '.join(searched)} grow")
        message = (f"no counterexample up to k = {k}: {what} within {k} positions. This is not a proof of "
                   "boundedness; longer runs were not examined.")
        bounded = [n for n, v in verdicts.items() if v.verdict == "bounded"]
        if bounded:
            message += f" Proven bounded by the rate check: {', '.join(bounded)}."
        for how in ("rate check", "linear program"):
            steady = [n for n, v in verdicts.items() if v.verdict == "no-repeating-growth" and v.method == how]
            if steady:
                message += f" Proven to grow in no repeating run by the {how}: {', '.join(steady)}."
        if threshold is None:
            for name in searched:
                status = report.bolts[name].status
                if status in ("grows", "may-grow"):
                    notes.append(f"the rate check says {name} {status.replace('-', ' ')} "
                                 f"({report.bolts[name].explanation}); no lasso up to k = {k}: "
                                 + what_would_decide(name, k, nets or {}, downgraded))
            if report.all_bounded(searched):
                notes.append("as the rate check predicts: every checked bolt is bounded, and the search agrees")
        return VerifyResult(verdict="none-up-to-k", k=k, message=message, **common)
    if all(v.verdict == "bounded" for v in verdicts.values()):
        return VerifyResult.said(Words.of("bounded: ", per_bolt), verdict="bounded", **common)
    if "unbounded" in kinds:  # a flood or a replay storm: proven, not a doubt (docs/boundedness.md)
        return VerifyResult.said(Words.of("unbounded: ", per_bolt), verdict="unbounded", **common)
    return VerifyResult.said(Words.of("no repeating run grows: ", per_bolt), verdict="no-repeating-growth", **common)

"""What the search says about failures (docs/model.md section 7): how a lasso's failures and
replays read in words.

No z3 here: the search (`search.py`) calls these between its phases.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from fractions import Fraction

from app.core.formats.trace import AnyTrace, bolt_steps, format_time, timed_bolt_steps


def has_failures(trace: AnyTrace) -> bool:
    """Whether some bolt fails somewhere in the trace."""
    return any(b.get("fail") for bolts in bolt_steps(trace) for b in bolts.values())


def failure_summary(trace: AnyTrace) -> str | None:
    """The failures and replays of a lasso's loop in words ("C fails every 4 s; S replays 2
    tuples per failure"), or None when nothing fails in the loop."""
    return failures_read(trace)[1]


def failures_read(trace: AnyTrace) -> tuple[bool, str | None]:
    """Whether some bolt fails somewhere in the trace, and its :func:`failure_summary`, in one pass over its
    positions (a compressed lasso of 10^5 positions is expanded once, not three times)."""
    fails: Counter[str] = Counter()
    replays: dict[str, Counter[str]] = {}
    anywhere = False
    times: dict[int, Fraction] = {}
    for n, (at, bolts) in enumerate(timed_bolt_steps(trace)):
        if n in (trace.loop_start, trace.k + 1):
            times[n] = at
        failed = [name for name, b in bolts.items() if b.get("fail")]
        anywhere = anywhere or bool(failed)
        if not trace.loop_start <= n <= trace.k:
            continue
        fails.update(failed)
        for name, b in bolts.items():
            for spout, r in (b.get("replays") or {}).items():
                replays.setdefault(name, Counter())[spout] += r
    if not any(fails.values()):
        return anywhere, None
    return anywhere, failure_words(times[trace.k + 1] - times[trace.loop_start], fails, replays)


def failure_words(duration: Fraction, fails: Mapping[str, int], replays: Mapping[str, Mapping[str, int]]) -> str | None:
    """A loop's failures in words ("C fails every 4 s; S replays 2 tuples per failure"), from its `duration`, each
    bolt's failures in it and, per bolt, the replays its losses add per spout (as a pass over the loop or its
    certificate counts them: `Certificate.loop_failures`, `loop_replays`); None when nothing fails in it."""
    failing = [n for n in fails if fails[n] > 0]
    if not failing:
        return None
    parts = []
    for name in failing:
        count = fails[name]
        every = format_time(Fraction(duration) / count)
        part = f"{name} fails every {every} s"
        for spout, n in sorted(replays.get(name, {}).items()):
            per = Fraction(n, count)
            part += f"; {spout} replays {format_time(per)} tuple{'s' if per != 1 else ''} per failure"
        parts.append(part)
    return "; ".join(parts)

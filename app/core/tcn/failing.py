"""What the search says about failures (docs/model.md section 7): how a lasso's failures and
replays read in words.

No z3 here: the search (`search.py`) calls these between its phases.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

from app.core.formats.trace import AnyTrace, format_time, trace_positions


def has_failures(trace: AnyTrace) -> bool:
    """Whether some bolt fails somewhere in the trace."""
    return any(b.fail for p in trace_positions(trace) for b in p.bolts.values())


def failure_summary(trace: AnyTrace) -> str | None:
    """The failures and replays of a lasso's loop in words ("C fails every 4 s; S replays 2
    tuples per failure"), or None when nothing fails in the loop."""
    loop = trace_positions(trace, trace.loop_start, trace.k + 1)
    fails: Counter[str] = Counter()
    replays: dict[str, Counter[str]] = {}
    for p in loop:
        for name, b in p.bolts.items():
            fails[name] += b.fail
            for spout, n in (b.replays or {}).items():
                replays.setdefault(name, Counter())[spout] += n
    failing = [n for n in fails if fails[n] > 0]
    if not failing:
        return None
    duration = trace.loop_duration()
    parts = []
    for name in failing:
        count = fails[name]
        every = format_time(Fraction(duration) / count)
        part = f"{name} fails every {every} s"
        for spout, n in sorted(replays.get(name, Counter()).items()):
            per = Fraction(n, count)
            part += f"; {spout} replays {format_time(per)} tuple{'s' if per != 1 else ''} per failure"
        parts.append(part)
    return "; ".join(parts)

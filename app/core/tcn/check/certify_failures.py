"""The certifier's own figures for failures and replays (docs/model.md section 7), from the document alone.

Like the rest of the certifier (app/core/tcn/check/certify.py) this shares no code with the
encoder, the simulation or app/core/failures.py: it recomputes which bolts may fail, the
reboot bounds, the replay mode and the impact Imp(j, s) (section 7.3) from the trace's
embedded topology, with its own path sum and the checker room's own largest output ratio σ_hi
(`ratios.py`, section 5), states the replay split rule once more, and checks
a failing bolt's position (section 7.2) for the replay of certify_replay.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from app.core.formats.trace import parse_carry
from app.core.numbers import exact
from app.core.tcn.check.ratios import ratio_bounds
from app.core.tcn.check.reading import take_bound
from app.core.topology import Bolt, Topology


@dataclass(frozen=True)
class FailureRules:
    """Section 7 by component NAME: the bolts that may fail (min_ttf), the reboot bounds, the replay
    mode and Imp(j, s) (None = unbounded: a path from s to j runs through a cycle)."""

    min_ttf: dict[str, Fraction]
    min_reboot: Fraction
    max_reboot: Fraction
    mode: str
    impact: dict[str, dict[str, Fraction | None]]

    def constants(self) -> list[Fraction]:
        return [*self.min_ttf.values(), self.min_reboot, self.max_reboot]


def failure_rules(topo: Topology) -> FailureRules | None:
    """The failure model of section 7.1, or None when no bolt may fail (failures off, or no min_ttf)."""
    s = topo.settings
    ttf = {b.name: exact(b.min_ttf) for b in topo.bolts if b.min_ttf is not None}
    if not s.failures or not ttf or s.min_reboot_time is None or s.max_reboot_time is None:
        return None
    return FailureRules(ttf, exact(s.min_reboot_time), exact(s.max_reboot_time), s.replay, impacts(topo))


def _gain(value: Fraction, size: int, emission: str) -> Fraction:
    return ratio_bounds(value, size, emission)[1]


def impacts(topo: Topology) -> dict[str, dict[str, Fraction | None]]:
    """Imp(j, s) by name for every bolt j and every spout s whose trees reach it (section 7.3): the sum over
    the paths s → … → j of the product of each stream's largest output ratio (a spout's default stream: 1),
    at least 1; None when some path from s to j runs through a cycle."""
    names = {c.id: c.name for c in topo.components}
    comps = {c.name: c for c in topo.components}
    gain: dict[tuple[str, str], Fraction] = {}  # (u, j) -> tuples one tuple of u puts at j
    for target, streams in topo.inputs().items():
        for source, stream in streams:
            c = comps[names[source]]
            if isinstance(c, Bolt):
                g = _gain(exact(c.output_streams()[stream] or 0), take_bound(c), topo.settings.emission)
            elif stream == "default":
                g = Fraction(1)
            else:
                g = _gain(exact(c.stream_ratio.get(stream, 0)), c.burst, topo.settings.emission)
            if g > 0:
                key = (c.name, names[target])
                gain[key] = gain.get(key, Fraction(0)) + g
    succ: dict[str, list[str]] = {n: [] for n in comps}
    pred: dict[str, list[str]] = {n: [] for n in comps}
    for u, j in gain:
        succ[u].append(j)
        pred[j].append(u)

    def reach(start: str) -> set[str]:
        out, todo = set(), list(succ[start])
        while todo:
            n = todo.pop()
            if n not in out:
                out.add(n)
                todo += succ[n]
        return out

    reaches = {n: reach(n) for n in comps}
    cyclic = {n for n in comps if n in reaches[n]}
    result: dict[str, dict[str, Fraction | None]] = {b.name: {} for b in topo.bolts}
    for s in (sp.name for sp in topo.spouts):
        unbounded = set()
        for n in reaches[s] & cyclic:
            unbounded |= reaches[n] | {n}
        paths: dict[str, Fraction] = {s: Fraction(1)}

        for j in sorted(reaches[s] & set(result)):
            result[j][s] = None if j in unbounded else max(Fraction(1), _path_sum(j, s, pred, reaches[s], gain, paths))
    return result


def _path_sum(n: str, s: str, pred: dict[str, list[str]], reached: set[str], gain: dict[tuple[str, str], Fraction],
              paths: dict[str, Fraction]) -> Fraction:
    """Σ over the paths s → … → n of the product of the gains, memoised in `paths` (s: 1). n is not downstream
    of a cycle, so neither is any predecessor on a path from s: the walk ends. Iterative (an explicit stack),
    so a chain of any length is summed."""
    stack = [n]
    while stack:
        m = stack[-1]
        if m in paths:
            stack.pop()
            continue
        sources = [u for u in pred[m] if u == s or u in reached]
        waiting = [u for u in sources if u not in paths]
        if waiting:
            stack += waiting
            continue
        paths[m] = sum((paths[u] * gain[(u, m)] for u in sources), Fraction(0))
        stack.pop()
    return paths[n]


def split_problem(lost: int, replays: dict[str, int], impact: dict[str, Fraction | None], mode: str) -> str | None:
    """Section 7.3's replay rule: why `replays` cannot follow a loss of `lost` tuples at a bolt whose trees
    come from the spouts in `impact`, or None. Possible exactly when every replaying spout's trees reach the
    bolt and Σ r_s ≤ lost ≤ Σ ⌊r_s · Imp(j, s)⌋ (unbounded when Imp is); nothing is replayed under "none" or
    when no spout's trees reach the bolt."""
    given = {s: r for s, r in replays.items() if r}
    if mode == "none" or not impact:
        why = "settings.replay is 'none'" if mode == "none" else "no spout's trees reach this bolt"
        return f"replays {given} but nothing is replayed ({why})" if given else None
    foreign = sorted(set(given) - set(impact))
    if foreign:
        return f"spout {', '.join(foreign)} replays but its trees never reach this bolt"
    total = sum(given.values())
    if total > lost:
        return f"{total} replays for {lost} lost tuples: at most one spout tuple per lost tuple"
    if any(impact[s] is None for s in given):
        return None
    most = sum(math.floor(r * Fraction(impact[s] or 0)) for s, r in given.items())  # every Imp is finite here
    if lost > most:
        return (f"{total} replays for {lost} lost tuples: too few (one spout tuple's tree puts at most Imp "
                f"{ {s: str(impact[s]) for s in impact} } tuples here, so at most {most} are covered)")
    return None


@dataclass
class Failing:
    """A failing bolt at one position, as `failed_position` checks it (ticks as in certify_replay.py's `replay`)."""

    i: int
    name: str
    step: dict[str, Any]
    down: bool  # failed before this position
    t: int
    queue: int
    batch: int
    take_time: int | None  # when its batch in progress was taken (None: it was idle)
    emit_deadline: int  # α(1+τ)
    min_ttf: int
    up_since: int
    reboot: tuple[int, int]
    down_since: dict[str, int]


def failed_position(f: Failing, fl: FailureRules, bad: Callable[[int, str, str], None],
                    late: Callable[[int, str, str], None], sec: Callable[[int], Fraction]) -> None:
    """Section 7.2 at a position where bolt `f.name` fails, or is still failed: the failure's timing,
    the deadlines it meets, what it loses, and that it neither takes nor emits nor keeps anything."""
    i, bo, t, who = f.i, f.step, f.t, f"bolt {f.name}"
    if bo["fail"]:
        if f.down:
            bad(i, who, "fails while already failed (section 7.2)")
        elif t - f.up_since < f.min_ttf:
            late(i, who, f"fails {sec(t - f.up_since)} s after it was last up, before its min_ttf "
                 f"{fl.min_ttf[f.name]} (when a bolt may fail, section 7.2)")
        if bo["recover"]:
            bad(i, who, "fails and recovers at one position (section 7.2)")
        if f.take_time is not None and t - f.take_time > f.emit_deadline:
            late(i, who, f"fails {sec(t - f.take_time)} s after its take, beyond its emit deadline "
                 f"{sec(f.emit_deadline)} (a failure meets a deadline only at or before it, section 7.2)")
        want, rule = f.queue + bo["arrivals"] + f.batch, "queue + arrivals + batch at a failure"
        if not f.down:
            f.down_since[f.name] = t
    else:
        if t - f.down_since[f.name] >= f.reboot[1]:
            late(i, who, f"still failed {sec(t - f.down_since[f.name])} s after its failure, at or beyond "
                 f"max_reboot_time {fl.max_reboot} (recovery timing, section 7.2)")
        want, rule = bo["arrivals"], "its arrivals while failed"
    if bo["lost"] != want:
        bad(i, who, f"lost {bo['lost']} but {rule} is {want} (failure position, section 7.2)")
    kept = [key for key in ("take", "emit", "emitted", "batch") if bo[key]]
    kept += ["buffer"] * (Fraction(bo["buffer"]) != 0) + [
        f"buffer_by_stream.{st}" for st, c in (bo["buffer_by_stream"] or {}).items() if parse_carry(c) != 0]
    if kept or bo["phase"] != "failed":
        bad(i, who, f"a failed bolt neither takes nor emits and keeps no batch or carry, but "
            f"{', '.join(kept) or 'phase ' + repr(bo['phase'])} is set: take and emit false, emitted, batch and "
            "buffer 0, phase 'failed' (failure position, section 7.2)")

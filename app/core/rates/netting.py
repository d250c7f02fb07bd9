"""Netting: a failing bolt's replays only replace what it lost (docs/boundedness.md, "Failures", step 7).

The failure pass (app/core/rates/curves.py) counts at a failing bolt F everything it receives, replays included,
so the bolts below F see F's output inflated by the replays of F's own losses. But what F passes on in a window is
at most what it held at the window's start, plus what arrives in it, minus what it loses in it; and the replays of
F's losses that arrive in it were added in it (or wait in a spout's backlog, which is bounded). So a *net form*
keeps, beside a curve, the coefficients of two kinds of counts of one window that the pass does not know one by
one: own[k, s], the replays added at spout s by failing bolt k's losses in the window (each at most one per tuple
lost, so Σ_s own[k, s] ≤ k's losses in it, docs/model.md 7.3), and lost[k], k's losses in the window (counted
with a minus). Spouts, bolts below them and the sums at a bolt's inputs are linear in these counts, so they are
carried exactly; only at the end (`Netting.resolve`) a count left with a positive net coefficient (duplicates: a
tree that puts several tuples at k, or replays of other bolts' losses) is bounded by step 5's count of losses.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import TypeVar

from app.core.rates.arrival import UNBOUNDED_CURVE, ZERO, Curve

_K = TypeVar("_K")


@dataclass(frozen=True)
class Net:
    """In any window of length w, a count ≤ curve(w) + Σ own[k, s]·(replays added at s by k's losses in the window)
    − Σ lost[k]·(k's losses in the window) + Σ backlog[s]·(spout s's replay backlog at the window's start)."""

    curve: Curve
    own: dict[tuple[str, str], Fraction]
    lost: dict[str, Fraction]
    backlog: dict[str, Fraction]

    def plus(self, other: Net) -> Net:
        return Net(self.curve.plus(other.curve), _summed(self.own, other.own), _summed(self.lost, other.lost),
                   _summed(self.backlog, other.backlog))

    def scaled(self, k: Fraction, rate: Fraction = Fraction(0), burst: Fraction = Fraction(0)) -> Net:
        """k·form + rate·w + burst (k ≥ 0), as `Curve.scaled`."""
        return Net(self.curve.scaled(k, rate, burst), {key: k * v for key, v in self.own.items()},
                   {j: k * v for j, v in self.lost.items()}, {s: k * v for s, v in self.backlog.items()})


def _summed(a: dict[_K, Fraction], b: dict[_K, Fraction]) -> dict[_K, Fraction]:
    out = dict(a)
    for key, v in b.items():
        out[key] = out.get(key, Fraction(0)) + v
    return out


def _lower(a: Fraction | None, b: Fraction | None) -> bool:
    """A long-run rate below another (None: no rate)."""
    return a is not None and (b is None or a < b)


def opaque(curve: Curve) -> Net:
    """A flow known only by its curve (every replay in it counted in full)."""
    return Net(curve, {}, {}, {})


class Netting:
    """The net forms of one pass: every spout's and bolt's streams, and every bolt's inflow, as the pass reaches them
    in topological order. `losses`: the loss per failure of each failing bolt assumed by the pass (None: no bound);
    `backlogs`: the pass's bound of each spout's replay backlog (None: no bound), read when a form is resolved (a
    failing bolt's paced cycle may tighten it after the spout's turn)."""

    def __init__(self, fed: dict[str, list[str]], losses: dict[str, Fraction | None], period: dict[str, Fraction],
                 down: Fraction, backlogs: dict[str, Fraction | None]):
        self.fed, self.losses, self.period, self.down, self.backlogs = fed, losses, period, down, backlogs
        self.streams: dict[str, dict[str, Net]] = {}
        self.inflows: dict[str, Net] = {}

    def spout(self, s: str, fresh: Curve) -> Net:
        """What spout s emits in a window: its fresh tuples, the backlog waiting at the window's start, and the replays
        added in the window."""
        return Net(fresh, {(k, s): Fraction(1) for k in self.fed.get(s, [])}, {}, {s: Fraction(1)})

    def inflow(self, bolt: str, inputs: Iterable[tuple[str, str]], curves: dict[str, dict[str, Curve]]) -> Curve:
        """The sum of bolt's inputs' forms (a sender without one by its curve), kept for `processed`; its curve."""
        total = opaque(ZERO)
        for src, st in inputs:
            form = self.streams.get(src, {}).get(st)
            total = total.plus(form if form is not None else opaque(curves[src].get(st, ZERO)))
        self.inflows[bolt] = total
        return self.resolve(total)

    def processed(self, bolt: str, held: Fraction, fails: bool) -> Net:
        """The batches a bolt emits in a window: at most what it held at the window's start (`held`, its queue and
        batch), plus what arrives in it, minus what it loses in it."""
        form = self.inflows[bolt].scaled(Fraction(1), burst=held)
        if not fails:
            return form
        lost = dict(form.lost)
        lost[bolt] = lost.get(bolt, Fraction(0)) + 1
        return Net(form.curve, form.own, lost, form.backlog)

    def passed(self, bolt: str, curves: dict[str, Curve], netted: set[str] | None) -> dict[str, Curve]:
        """A bolt's stream curves met with the resolutions of its stream forms; the bolt joins `netted` when that
        lowers a stream's long-run rate."""
        out = {name: curve.meet(self.resolve(self.streams[bolt][name])) for name, curve in curves.items()}
        lower = any(_lower(out[name].rate, curve.rate) for name, curve in curves.items())
        if netted is not None and lower:
            netted.add(bolt)
        return out

    def resolve(self, form: Net) -> Curve:
        """A curve of the form: each failing bolt k whose replays count more than its losses, by e_k = max_s own[k, s]
        − lost[k] > 0, adds e_k times step 5's count of k's losses in a window, ℓ_k·((w + max_reboot)/T_k + 1); each
        spout's backlog its bound."""
        curve = form.curve
        for s, v in sorted(form.backlog.items()):
            bound = self.backlogs.get(s)
            if v and bound is None:
                return UNBOUNDED_CURVE
            curve = curve.scaled(Fraction(1), burst=v * (bound or 0))
        for k in sorted({j for j, _ in form.own} | set(form.lost)):
            e = max([Fraction(0), *(v for (j, _), v in form.own.items() if j == k)]) - form.lost.get(k, Fraction(0))
            if e <= 0:
                continue
            lost = self.losses.get(k)
            if lost is None:
                return UNBOUNDED_CURVE
            curve = curve.plus(Curve.affine(e * lost / self.period[k], e * lost * (1 + self.down / self.period[k])))
        return curve

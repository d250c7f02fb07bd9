"""Legal runs pushed to the worst timing, for the property tests of the failure bounds (the stepper of
tests/unit/test_rates_failures.py, `Run`, with its choices made by a plan instead of at random).

`Worst` plays every spout at its fastest (the least gap its tolerance allows after each emission, `bursts` fresh tuples
in each), every bolt at its slowest (the longest processing, then the whole idle allowance before each take) and
every reboot as long as it may be; each failing bolt fails at the first position, `offset` or more after min_ttf
allows a failure, at which `when` holds:

- "any": that first position;
- "full": the bolt is about to emit its batch there (it holds its whole batch and the most of its queue: what a
  failure loses is at its largest just before a batch goes out);
- "arrival": tuples arrive there (they are lost with the rest);
- "ahead": just before the spout's next emission (all of the spout's emissions while it is down come after it).

With `align`, a spout waits (within its tolerance) so that its next emission comes just after the next take of
the failing bolt `align` names, when one is due within its gap: the bolt has just emptied its queue, and the
emission finds it busy; the counts of the proofs (emissions at least a gap apart, batches at most L apart) reach
their breakpoints there.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from app.core.failures import failure_model
from app.core.rates import RateFigures
from app.core.rates.failures_check import failure_check
from app.core.topology import Topology, parse_topology
from tests.unit.test_rates_failures import Run, _pick, check_run

WHEN = ("any", "full", "arrival", "ahead")
EPS = Fraction(1, 10_000)  # "just before", "just after": well within every tolerance of the documents played


class Worst(Run):
    """One legal run pushed to the worst timing (module docstring); deterministic: no random choice is left."""

    def __init__(self, topo: Topology, horizon: Fraction, *, offset: Fraction = Fraction(0), when: str = "full",
                 bursts: str = "most", align: str | None = None):
        super().__init__(topo, 0, horizon)
        assert when in WHEN and bursts in ("most", "one")
        self.offset, self.when, self.bursts, self.align = offset, when, bursts, align
        self.emits: dict[str, tuple[Fraction, Fraction]] = {}  # per spout: its last emission, the gap after it

    def fail_time(self, up: Fraction, bolt: str) -> Fraction | None:
        at = up + self.model.min_ttf[bolt] + self.offset
        if self.when != "ahead" or not self.emits:
            return at
        last, gap = next(iter(self.emits.values()))  # (the played documents have one spout)
        k = max(0, -((last - at - 2 * EPS) // gap))  # the first emission at or after at + 2ε
        return last + k * gap - EPS

    def reboot(self) -> Fraction:
        return self.model.max_reboot

    def burst(self, spout: str, t: Fraction, most: int) -> int:
        return most if self.bursts == "most" else 1

    def spout_gap(self, spout: str, t: Fraction, lo: Fraction, hi: Fraction) -> Fraction:
        gap = lo
        st = self.bolt.get(self.align) if self.align is not None else None
        if st is not None and not st["failed"]:  # its takes to come, each batch at its slowest
            take = (st["emit_at"] if st["emit_at"] is not None else t + st["alpha"] * (1 + self.tau)) + self.idle
            while take + EPS < t + lo:
                take += st["alpha"] * (1 + self.tau) + self.idle
            if take + EPS <= t + hi:
                gap = take + EPS - t
        self.emits[spout] = (t, gap)
        return gap

    def take_wait(self, bolt: str) -> Fraction:
        return self.idle

    def busy(self, bolt: str, lo: Fraction, hi: Fraction) -> Fraction:
        return hi

    def fails_now(self, bolt: str, st: dict[str, Any], t: Fraction, at_risk: int) -> bool:
        if st["fail_at"] is None or t < st["fail_at"]:
            return False
        if self.when == "full":
            return bool(st["emit_at"] == t and st["P"])
        if self.when == "arrival":
            return at_risk > st["Q"] + st["P"]
        return True


def plans(periods: list[Fraction], steps: int) -> list[Fraction]:
    """Failure offsets: `steps` points over each of `periods` (a spout's gap, a bolt's L), the ends included."""
    return sorted({p * k / steps for p in periods for k in range(steps + 1)})


class Pushed(Run):
    """A random legal run pushed towards the worst timing: each choice at its worst end (the spout's least gap, the
    longest processing, idle wait and reboot) with probability `p`, else anywhere in its range (the spout at its
    longest gap half of those times: a late emission aligns the next ones with the bolt's takes); each failing bolt
    fails from a random offset of up to 3 s after min_ttf on, at the first position where it is about to emit its
    batch or tuples arrive, or at once (`Worst`'s "full", "arrival" and "any", drawn at each position)."""

    def __init__(self, topo: Topology, seed: int, horizon: Fraction, p: float = 0.6):
        super().__init__(topo, seed, horizon)
        self.p = p

    def reboot(self) -> Fraction:
        return self.model.max_reboot if self.rng.random() < self.p else super().reboot()

    def spout_gap(self, spout: str, t: Fraction, lo: Fraction, hi: Fraction) -> Fraction:
        roll = self.rng.random()
        if roll < self.p:
            return lo
        return hi if roll < (1 + self.p) / 2 else lo + (hi - lo) * Fraction(self.rng.randint(0, 1000), 1000)

    def take_wait(self, bolt: str) -> Fraction:
        return self.idle if self.rng.random() < self.p else super().take_wait(bolt)

    def busy(self, bolt: str, lo: Fraction, hi: Fraction) -> Fraction:
        return hi if self.rng.random() < self.p else super().busy(bolt, lo, hi)

    def fail_time(self, up: Fraction, bolt: str) -> Fraction | None:
        return up + self.model.min_ttf[bolt] + Fraction(self.rng.randint(0, 3000), 1000)

    def fails_now(self, bolt: str, st: dict[str, Any], t: Fraction, at_risk: int) -> bool:
        if st["fail_at"] is None or t < st["fail_at"]:
            return False
        roll = self.rng.random()
        return roll < 0.3 or bool(st["emit_at"] == t and st["P"]) or (at_risk > st["Q"] + st["P"] and roll < 0.6)


def pushed_losses(data: dict[str, Any], bolt: str, seeds: tuple[int, ...], horizon: int
                  ) -> tuple[int, Fraction | None, set[str]]:
    """Plays `Pushed` runs of `data` (one per seed) against every bound of its rate check under failures (`check_run`:
    none may pass one): the largest loss per failure of `bolt` they reach, its bound, and which of the per-cycle
    counts bound the bolt ("paced", "storm")."""
    topo = parse_topology(data)
    model = failure_model(topo)
    assert model is not None
    check = failure_check(topo, RateFigures(topo), model, {b.id: "bounded" for b in topo.bolts})
    assert check.bounds is not None
    j = next(b.id for b in topo.bolts if b.name == bolt)
    lost = 0
    for seed in seeds:
        run = Pushed(topo, seed, Fraction(horizon)).go()
        check_run(topo, check, run)
        lost = max(lost, *run.losses[j])
    kinds = {kind for kind, found in (("paced", check.bounds.paced), ("storm", check.bounds.storm)) if j in found}
    return lost, check.bounds.lost.get(j), kinds


def pushed_picks(topo: Topology) -> Callable[[random.Random, Fraction, Fraction], Fraction]:
    """A stand-in for the stepper's `_pick`: S's next emission as early as it may (90 % of the time), every other
    choice (processing, idle wait, reboot) as late as it may (85 %), the rest at random."""
    gaps = {(n - Fraction(str(topo.settings.tolerance))) / Fraction(str(s.rate))
            for s in topo.spouts for n in range(1, s.burst + 1)}

    def pushed(r: random.Random, lo: Fraction, hi: Fraction) -> Fraction:
        if lo in gaps:  # S's next emission: as early as it may
            return lo if r.random() < 0.9 else _pick(r, lo, hi)
        return hi if r.random() < 0.85 else _pick(r, lo, hi)  # everything else as late

    return pushed

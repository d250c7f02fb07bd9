"""The joint part of a paced storm certificate's check: other failing bolts whose losses the spout replays.

It shares no code with the builder (`app/core/tcn/paced.py`): from the target's cone document alone it restates
docs/boundedness.md, "Unbounded: several failing bolts on one paced spout", and accepts `others` when

* each names a bolt other than the failing one, once, with `min_ttf`, an ordinary bolt (no window, no join, no
  internal threads) that receives the spout's default stream;
* its reboot lies within the reboot bounds; `every` ≥ 1 and `every` × (the failing bolt's cycle) − reboot is at
  least its min_ttf and its offset (it fails once per `every` cycles, no sooner than allowed, and is up at the
  emission);
* `emission` ≥ 1, and 0 < `offset` < min(α(1−τ), gap) (it fails before any batch holding that emission's tuples
  can end);
* `loss` is a + 2·(⌈(offset + reboot)/gap⌉ − 1): a = 2 tuples at its failure (a fresh tuple and a replay) when
  `emission` ≤ ⌊r_F/gap⌋ − 1, the spout's backlog then holding at least one of the failing bolt's losses, else 1;
  two tuples lost at each emission while it is down;
* the joint growth over Q = lcm(every) cycles, Q × `growth` + Σ (Q/every) × `loss`, is at least 1.

The failure cycle itself is checked by `check/storm.py`; the drain by `check/paced.py`.
"""

from __future__ import annotations

import math
from fractions import Fraction

from app.core.numbers import exact
from app.core.results import StormCertificate
from app.core.tcn.check.parts import received
from app.core.tcn.check.reading import fraction_of, join_branches
from app.core.topology import Topology

__all__ = ["joint_growth", "joint_problems"]


def joint_growth(cert: StormCertificate) -> tuple[int, int]:
    """(Q, the stated growth of the pending tuples over Q cycles of the failing bolt) from the certificate's
    figures: Q = lcm of the other bolts' `every` (1 without any)."""
    cycles = math.lcm(*(max(1, o.every) for o in cert.others)) if cert.others else 1
    return cycles, cycles * cert.growth + sum((cycles // max(1, o.every)) * o.loss for o in cert.others)


def _loss(topo: Topology, cert: StormCertificate, index: int) -> tuple[int | None, list[str]]:
    """The loss the document gives the certificate's `index`-th other bolt's failure, or None, with the problems."""
    o, tau = cert.others[index], exact(topo.settings.tolerance)
    bolts = {b.name: b for b in topo.bolts}
    g, reboot, offset = fraction_of(cert.gap), fraction_of(o.reboot), fraction_of(o.offset)
    own, up = fraction_of(cert.reboot), fraction_of(cert.up) if cert.up is not None else None
    if g is None or g <= 0 or reboot is None or offset is None or own is None:
        return None, [f"{o.bolt}: gap, reboot and offset must be fractions p/q, the gap positive"]
    if o.bolt == cert.failing or o.bolt not in bolts or o.bolt in {p.bolt for p in cert.others[:index]}:
        return None, [f"{o.bolt}: not another bolt of the document than {cert.failing}, or named twice"]
    b = bolts[o.bolt]
    if b.min_ttf is None or b.window is not None or b.threads is not None or join_branches(topo, b) is not None:
        return None, [f"{o.bolt}: not an ordinary bolt that may fail"]
    if (cert.spout, "default") not in received(topo)[o.bolt]:
        return None, [f"{o.bolt} does not receive {cert.spout}'s default stream"]
    problems = []
    low, high = topo.settings.min_reboot_time, topo.settings.max_reboot_time
    if low is None or high is None or not exact(low) <= reboot <= exact(high):
        problems.append(f"{o.bolt}: reboot {o.reboot} is not within the reboot bounds")
    ttf = bolts[cert.failing].min_ttf
    if up is None and ttf is not None:
        up = exact(ttf)
    cycle = (up or Fraction(0)) + own
    if o.every < 1 or o.every * cycle - reboot < max(exact(b.min_ttf), offset):
        problems.append(f"{o.bolt}: one failure every {o.every} cycles of {cycle} s leaves it up less than min_ttf, "
                        "or down at the emission")
    if o.emission < 1 or not 0 < offset < min(exact(b.alpha) * (1 - tau), g):
        problems.append(f"{o.bolt}: emission {o.emission} must be ≥ 1 and offset {o.offset} within (0, min(α(1−τ), "
                        "gap))")
    held = 2 if o.emission <= math.floor(own / g) - 1 else 1
    return held + 2 * (math.ceil((offset + reboot) / g) - 1), problems


def joint_problems(topo: Topology, cert: StormCertificate) -> list[str]:
    """Why the certificate's other failing bolts do not make the pending tuples grow by at least 1 per joint cycle;
    [] when they do."""
    problems: list[str] = []
    for index, o in enumerate(cert.others):
        loss, found = _loss(topo, cert, index)
        problems += found
        if loss is not None and o.loss != loss:
            problems.append(f"{o.bolt}: loss {o.loss} per failure is not the derived {loss}")
    if problems:
        return problems
    cycles, growth = joint_growth(cert)
    if growth < 1:
        return [f"the pending tuples grow by {growth} per {cycles} cycles, not at least 1"]
    return []

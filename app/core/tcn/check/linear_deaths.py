"""The linear checker's own rows for worker deaths (docs/model.md 9.4, docs/verifier.md "Linear program").

Like the rest of the checker (`linear.py`) this shares no code with the builder (`app/core/tcn/linear.py`) nor
with `app/core/workers.py`: from the document alone it restates which workers may die and when, which components
a worker may run (the document's `storm.assignment`, else every worker may run every component: Storm's deal can
start anywhere), which workers surely run all of a component (an explicit count equal to its executors, or one
worker), and the most trees one death makes a spout replay: the trees pending at any instant (a paced spout's
emissions over the last 2T, twice its fresh tuples; `max.spout.pending` per executor) and those it emits while
the worker restarts (none when that worker runs all of it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from app.core.numbers import exact
from app.core.topology import Spout, Topology

Row = tuple[str, dict[str, Fraction], Fraction]  # as linear.py's rows: kind, coefficients, constant


@dataclass(frozen=True)
class DeathRows:
    """What the rest of the pass's rows read of the deaths: per component name the X variables of the workers
    that may run it, and the spouts whose backlogs the deaths feed (Gw, in `replays-in`)."""

    hitting: dict[str, list[str]]
    replaying: set[str]


def _w(x: int) -> str:
    return f"[w{x}]"


def _fresh(sp: Spout, window: Fraction, tau: Fraction) -> Fraction:
    """A spout's fresh tuples in a window of this length at most: gaps of at least n·a − τa after n tuples, so
    w / (a(1 − τ)) + C_EMIT (docs/model.md 2.1)."""
    return window * exact(sp.rate) / (1 - tau) + sp.burst


def death_rows(topo: Topology, target: str, rows: dict[str, Row], label: Callable[..., str]) -> DeathRows | None:
    """Add the rows of the workers' deaths to `rows` (`label` is linear.py's bracket): per worker its deaths and
    down time, a death of a worker running all of the target ruled out, per spout the replays Gw the deaths add;
    None when no worker may die."""
    st, s = topo.storm, topo.settings
    if st.workers is None or st.worker_min_ttf is None or s.min_reboot_time is None or s.max_reboot_time is None:
        return None
    workers, tau = st.workers, exact(s.tolerance)
    ttf, lo, hi = exact(st.worker_min_ttf), exact(s.min_reboot_time), exact(s.max_reboot_time)
    size = {sp.name: sp.executors or 1 for sp in topo.spouts} | {b.name: b.parallelism for b in topo.bolts}
    given = dict(st.assignment or {})

    def may_run(x: int, name: str) -> bool:
        return not given or given.get(name, [0] * workers)[x] > 0

    def runs_all(x: int, name: str) -> bool:
        return given.get(name, [0] * workers)[x] >= size[name] if given else workers == 1

    for x in range(workers):
        rows[f"worker-ttf{_w(x)}"] = ("ge", {"T": Fraction(1), f"Y{_w(x)}": Fraction(-1), f"X{_w(x)}": -ttf},
                                      Fraction(0))
        rows[f"worker-down-lo{_w(x)}"] = ("ge", {f"Y{_w(x)}": Fraction(1), f"X{_w(x)}": -lo}, Fraction(0))
        rows[f"worker-down-hi{_w(x)}"] = ("ge", {f"X{_w(x)}": hi, f"Y{_w(x)}": Fraction(-1)}, Fraction(0))
        if runs_all(x, target):
            rows[f"worker-whole{_w(x)}"] = ("eq", {f"X{_w(x)}": Fraction(1)}, Fraction(0))
    hitting = {n: [f"X{_w(x)}" for x in range(workers) if may_run(x, n)] for n in size}
    paced = s.replay == "paced"
    acking = s.replay != "none" and st.acker_executors != 0
    replaying: set[str] = set()
    for sp in topo.spouts if acking else []:
        n = sp.name
        replaying.add(n)
        bounds = [2 * _fresh(sp, 2 * Fraction(st.message_timeout), tau)] if paced else []
        if st.max_spout_pending is not None:
            bounds.append(Fraction(st.max_spout_pending * size[n]))
        pending = min(bounds) if bounds else None
        caps: list[Fraction | None] = []
        for x in range(workers):
            during = Fraction(0) if runs_all(x, n) else 2 * _fresh(sp, hi, tau) if paced else None
            caps.append(None if pending is None or during is None else pending + during)
        if all(c is not None for c in caps):
            coefficients = {f"Gw{label(n)}": Fraction(-1)}
            coefficients |= {f"X{_w(x)}": c for x, c in enumerate(caps) if c}
            rows[f"death-replays{label(n)}"] = ("ge", coefficients, Fraction(0))
    return DeathRows(hitting, replaying)

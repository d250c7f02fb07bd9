"""The certifier's own rule for worker deaths in a trace (docs/model.md 9.5), from the document alone.

Like the rest of the certifier (app/core/tcn/check/certify.py) this shares no code with the simulation, the
encoder or app/core/workers.py: it reads `storm.workers`, `storm.assignment`, `storm.worker_min_ttf`, the reboot
bounds, the message timeout and whether trees are replayed from the trace's embedded topology, says again which
workers may die in a trace (a worker with no spout executor that runs all or none of each bolt's executors, with an
explicit assignment), and checks every worker record: a death's timing, that its bolts fail exactly there (their
losses are section 7.2's, checked by the bolt rules), its replays against the trees in flight, their release at the
first position at or after the death plus the timeout, and the restart's timing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from app.core.numbers import exact
from app.core.topology import Topology

Report = Callable[[int, str, str], None]
ACKERS = "__acker"
DEFAULT_TIMEOUT = 30  # Storm's topology.message.timeout.secs


@dataclass(frozen=True)
class DeathRules:
    """Section 9.5 by NAME: the workers that may die in a trace (the bolts each runs, whether it runs every acker), the
    time between deaths, the restart bounds, the timeout T, the replay mode ("none" without acking) and, per bolt,
    the spouts whose trees reach it."""

    workers: dict[str, tuple[tuple[str, ...], bool]]
    bolt_worker: dict[str, str]
    min_ttf: Fraction
    min_reboot: Fraction
    max_reboot: Fraction
    timeout: Fraction
    mode: str
    reach: dict[str, set[str]]

    def constants(self) -> list[Fraction]:
        return [self.min_ttf, self.min_reboot, self.max_reboot, self.timeout]


def death_rules(topo: Topology) -> DeathRules | None:
    """The trace's worker deaths, or None when no worker may die in a trace (no worker_min_ttf, no explicit
    assignment, or no worker that section 9.5 lets die)."""
    st, s = topo.storm, topo.settings
    rows = st.assignment or {}
    if not st.workers or st.worker_min_ttf is None or not rows or s.min_reboot_time is None \
            or s.max_reboot_time is None:
        return None
    size = {b.name: b.parallelism for b in topo.bolts}
    workers: dict[str, tuple[tuple[str, ...], bool]] = {}
    for w in range(st.workers):
        def count(name: str, w: int = w) -> int:
            row = rows.get(name)
            return row[w] if row is not None and w < len(row) else 0
        if any(count(sp.name) for sp in topo.spouts):
            continue  # it runs a spout executor: never dies in a trace
        held = tuple(b for b in sorted(size) if count(b))
        if any(count(b) != size[b] for b in held):
            continue  # part of a bolt: never dies in a trace
        ackers = count(ACKERS)  # its death breaks every tree in flight only when it runs every acker
        if held or ackers:
            workers[f"w{w}"] = (held, ackers > 0 and ackers == sum(rows.get(ACKERS, [])))
    if not workers:
        return None
    acking = s.replay != "none" and st.acker_executors != 0
    timeout = Fraction(st.message_timeout_secs if st.message_timeout_secs is not None else DEFAULT_TIMEOUT)
    return DeathRules(workers, {b: w for w, (held, _) in workers.items() for b in held}, exact(st.worker_min_ttf),
                      exact(s.min_reboot_time), exact(s.max_reboot_time), timeout,
                      s.replay if acking else "none", _reach(topo))


def _reach(topo: Topology) -> dict[str, set[str]]:
    """Per bolt, the spouts from which a path of subscriptions reaches it."""
    names = {c.id: c.name for c in topo.components}
    succ: dict[str, set[str]] = {}
    for sub in topo.subscriptions:
        succ.setdefault(names[sub.source], set()).add(names[sub.target])
    out: dict[str, set[str]] = {b.name: set() for b in topo.bolts}
    for sp in topo.spouts:
        seen: set[str] = set()
        todo = list(succ.get(sp.name, ()))
        while todo:
            n = todo.pop()
            if n not in seen:
                seen.add(n)
                todo += succ.get(n, ())
        for n in seen & set(out):
            out[n].add(sp.name)
    return out


@dataclass
class DeathState:
    """Each dying worker's state in the replay, in ticks: down, its death's time, its last restart (0 at first),
    the replays its last death still holds back and when they are due."""

    down: dict[str, bool]
    died: dict[str, int] = field(default_factory=dict)
    up_since: dict[str, int] = field(default_factory=dict)
    waiting: dict[str, dict[str, int]] = field(default_factory=dict)
    due: dict[str, int] = field(default_factory=dict)

    @staticmethod
    def initial(dl: DeathRules) -> DeathState:
        return DeathState(dict.fromkeys(dl.workers, False), {}, dict.fromkeys(dl.workers, 0),
                          {w: {} for w in dl.workers}, {})

    def copy(self) -> DeathState:
        return DeathState(dict(self.down), dict(self.died), dict(self.up_since),
                          {w: dict(r) for w, r in self.waiting.items()}, dict(self.due))

    def discrete(self) -> dict[str, tuple[Any, ...]]:
        """What must repeat at a loop's ends, besides the clocks: down, and the replays held back."""
        return {w: (d, tuple(sorted(self.waiting[w].items()))) for w, d in self.down.items()}

    def clocks(self, t: int, dl: DeathRules, ticks: Callable[[Fraction], int]) -> dict[str, int | None]:
        """The readable clocks before time t: since the restart (up, below min_ttf), since the death (down, or its
        replays held back)."""
        out: dict[str, int | None] = {}
        for w in dl.workers:
            since = t - self.up_since[w]
            out[f"worker {w}: its time since its restart"] = (
                since if not self.down[w] and since < ticks(dl.min_ttf) else None)
            out[f"worker {w}: its time since its death"] = (
                t - self.died[w] if self.down[w] or self.waiting[w] else None)
        return out


def bolt_death_problem(name: str, worker: str, bo: dict[str, Any], record: dict[str, Any] | None) -> str | None:
    """Why a bolt of a dying worker breaks section 9.5 at a position (None: it does not): it fails exactly at its
    worker's death, recovers exactly at its restart, and replays nothing itself (its worker's death does)."""
    death = bool(record and record.get("death"))
    restart = bool(record and record.get("restart"))
    if bo["fail"] != death:
        return (f"fails without a death of its worker {worker}" if bo["fail"]
                else f"does not fail at its worker {worker}'s death") + " (section 9.5)"
    if bo["recover"] != restart:
        return (f"recovers without a restart of its worker {worker}" if bo["recover"]
                else f"does not recover at its worker {worker}'s restart") + " (section 9.5)"
    if any((bo["replays"] or {}).values()):
        return f"records replays {dict(bo['replays'])}, but its worker {worker}'s death holds them (section 9.5)"
    return None


def worker_rules(dl: DeathRules, st: DeathState, backlog: dict[str, int], ticks: Callable[[Fraction], int],
                 sec: Callable[[int], Fraction], bad: Report, late: Report
                 ) -> Callable[[int, int, dict[str, dict[str, Any]], dict[str, dict[str, Any]], dict[str, int]], None]:
    """Section 9.5 at a position, after the bolts' rules: the workers' records (`workers`) against their state, the
    replays due added to `backlog` (after this position). `batch_before`: each bolt's batch in progress before it."""
    min_ttf, reboot, timeout = ticks(dl.min_ttf), (ticks(dl.min_reboot), ticks(dl.max_reboot)), ticks(dl.timeout)

    def workers(i: int, t: int, records: dict[str, dict[str, Any]], bolts: dict[str, dict[str, Any]],
                batch_before: dict[str, int]) -> None:
        for w in sorted(set(records) - set(dl.workers)):
            bad(i, f"worker {w}", "records a death, restart or replays, but it is no worker that may die in a trace "
                "(an explicit storm.assignment, no spout executor, all or none of each bolt's executors: section 9.5)")
        for w, (held, acker) in dl.workers.items():
            rec, who = records.get(w) or {}, f"worker {w}"
            released = {s: r for s, r in (rec.get("released") or {}).items() if r}
            if w in st.due and t >= st.due[w]:
                if released != st.waiting[w]:
                    bad(i, who, f"releases {released} but its death at {sec(st.died[w])} s holds {st.waiting[w]} "
                        "back until the first position at or after the death plus the message timeout "
                        f"{dl.timeout} s (section 9.5)")
                for s, r in st.waiting[w].items():
                    backlog[s] = backlog.get(s, 0) + r
                st.waiting[w] = {}
                del st.due[w]
            elif released:
                bad(i, who, f"releases {released}, but no death's replays are due here (they come at the first "
                    "position at or after the death plus the message timeout, section 9.5)")
            if rec.get("restart"):
                if not st.down[w]:
                    bad(i, who, "restarts but is not down (section 9.5)")
                else:
                    gone = t - st.died[w]
                    if not reboot[0] <= gone <= reboot[1]:
                        late(i, who, f"restarts {sec(gone)} s after its death, outside [min_reboot_time, "
                             f"max_reboot_time] = [{dl.min_reboot}, {dl.max_reboot}] (section 9.5)")
                    st.down[w], st.up_since[w] = False, t
                if rec.get("death"):
                    bad(i, who, "dies and restarts at one position (section 9.5)")
                    continue
            elif st.down[w] and t - st.died[w] >= reboot[1]:
                late(i, who, f"still down {sec(t - st.died[w])} s after its death, at or beyond max_reboot_time "
                     f"{dl.max_reboot} (section 9.5)")
            gave = {s: r for s, r in (rec.get("replays") or {}).items() if r}
            if not rec.get("death"):
                if gave:
                    bad(i, who, f"records replays {gave} without a death (section 9.5)")
                continue
            if st.down[w]:
                bad(i, who, "dies while down (section 9.5)")
            elif t - st.up_since[w] < min_ttf:
                late(i, who, f"dies {sec(t - st.up_since[w])} s after it was last back (or time 0), before "
                     f"storm.worker_min_ttf {dl.min_ttf} (section 9.5)")
            if st.waiting[w]:
                bad(i, who, f"dies again while the replays {st.waiting[w]} of its last death are held back "
                    "(section 9.5: a worker dies again only once they are out)")
            _replay_check(i, who, dl, gave, held if not acker else tuple(bolts), bolts, batch_before, bad)
            st.down[w], st.died[w], st.waiting[w] = True, t, gave
            if gave:
                st.due[w] = t + timeout

    return workers


def _replay_check(i: int, who: str, dl: DeathRules, gave: dict[str, int], counted: tuple[str, ...],
                  bolts: dict[str, dict[str, Any]], batch_before: dict[str, int], bad: Report) -> None:
    """A death's replays: none without acking; else at most the tuples in flight at the death (queue, arrivals and
    batch in progress) in its bolts, and in every bolt when it runs every acker executor (each pending tree's ack-val
    dies then; with some of them, only the trees hashed to those, which no count here bounds); each replaying spout's
    trees reach a bolt with tuples in flight."""
    if dl.mode == "none":
        if gave:
            bad(i, who, f"replays {gave}, but nothing is replayed (settings.replay 'none' or no ackers)")
        return
    flight = {b: bolts[b]["queue"] + bolts[b]["arrivals"] + batch_before[b] for b in counted}
    total = sum(gave.values())
    if total > sum(flight.values()):
        bad(i, who, f"replays {total} trees, more than the {sum(flight.values())} tuples in flight in "
            f"{', '.join(counted) or 'no bolt'} at its death (section 9.5: each broken tree has one in flight)")
    for s in gave:
        if not any(n and s in dl.reach.get(b, set()) for b, n in flight.items()):
            bad(i, who, f"spout {s} replays, but none of its trees has a tuple in flight where the death breaks "
                "trees (section 9.5)")

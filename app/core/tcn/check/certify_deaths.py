"""The certifier's own rule for worker deaths in a trace (docs/model.md 9.5), from the document alone.

Like the rest of the certifier (app/core/tcn/check/certify.py) this shares no code with the simulation, the
encoder or app/core/workers.py: it reads `storm.workers`, `storm.assignment`, `storm.worker_min_ttf`, the reboot
bounds, the message timeout and whether trees are replayed from the trace's embedded topology, says again which
workers may die in a trace (with an explicit assignment and section 7's failures off, a worker that runs no part of a
window, a join or an asynchronous bolt), and checks every worker record: a death's timing, that the bolts it runs
whole fail exactly there (their losses are section 7.2's, checked by the bolt rules), that a bolt it runs part of
loses its dead executors' share and takes at most what the executors left take (`bolt_share`), that a spout it runs
executors of emits nothing until the restart (the spout rules ask `DeathState.quiet`) and is timed from it, its
replays against the trees in flight, their release at the first position at or after the death plus the timeout,
and the restart's timing.
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
class WorkerRule:
    """What one worker that may die in a trace runs: the bolts it runs whole, the bolts it runs part of (k of p
    executors), the spouts it runs executors of (k of e), and whether it runs every acker."""

    whole: tuple[str, ...]
    partial: dict[str, tuple[int, int]]
    spouts: dict[str, tuple[int, int]]
    acker: bool


@dataclass(frozen=True)
class DeathRules:
    """Section 9.5 by NAME: the workers that may die in a trace, the time between deaths, the restart bounds, the
    timeout T, the replay mode ("none" without acking) and, per bolt, the spouts whose trees reach it."""

    workers: dict[str, WorkerRule]
    bolt_worker: dict[str, str]  # the bolts a dying worker runs whole
    min_ttf: Fraction
    min_reboot: Fraction
    max_reboot: Fraction
    timeout: Fraction
    mode: str
    reach: dict[str, set[str]]

    def constants(self) -> list[Fraction]:
        return [self.min_ttf, self.min_reboot, self.max_reboot, self.timeout]

    def shares(self, component: str) -> list[tuple[str, int, int]]:
        """The dying workers that run part of a bolt or executors of a spout: (worker, k, of)."""
        return [(w, *r.partial[component]) if component in r.partial else (w, *r.spouts[component])
                for w, r in self.workers.items() if component in r.partial or component in r.spouts]


def death_rules(topo: Topology) -> DeathRules | None:
    """The trace's worker deaths, or None when no worker may die in a trace (no worker_min_ttf, no explicit
    assignment, section 7's failures on, or no worker that section 9.5 lets die)."""
    st, s = topo.storm, topo.settings
    rows = st.assignment or {}
    if not st.workers or st.worker_min_ttf is None or not rows or s.min_reboot_time is None \
            or s.max_reboot_time is None or (s.failures and any(b.min_ttf is not None for b in topo.bolts)):
        return None
    size = {b.name: b.parallelism for b in topo.bolts}
    plain = {b.name for b in topo.bolts if b.window is None and b.join is None and b.threads is None}
    workers: dict[str, WorkerRule] = {}
    for w in range(st.workers):
        def count(name: str, w: int = w) -> int:
            row = rows.get(name)
            return row[w] if row is not None and w < len(row) else 0
        held = [b for b in sorted(size) if count(b)]
        partial = {b: (count(b), size[b]) for b in held if count(b) != size[b]}
        if any(b not in plain for b in partial):
            continue  # part of a window, a join or an asynchronous bolt: never dies in a trace
        spouts = {sp.name: (count(sp.name), sp.executors or 1) for sp in topo.spouts if count(sp.name)}
        ackers = count(ACKERS)  # its death breaks every tree in flight only when it runs every acker
        if held or ackers or spouts:
            workers[f"w{w}"] = WorkerRule(tuple(b for b in held if b not in partial), partial, spouts,
                                          ackers > 0 and ackers == sum(rows.get(ACKERS, [])))
    if not workers:
        return None
    acking = s.replay != "none" and st.acker_executors != 0
    timeout = Fraction(st.message_timeout_secs if st.message_timeout_secs is not None else DEFAULT_TIMEOUT)
    return DeathRules(workers, {b: w for w, r in workers.items() for b in r.whole}, exact(st.worker_min_ttf),
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
    share: dict[str, dict[str, int]] = field(default_factory=dict)  # while down: k·X mod p per bolt run in part

    @staticmethod
    def initial(dl: DeathRules) -> DeathState:
        return DeathState(dict.fromkeys(dl.workers, False), {}, dict.fromkeys(dl.workers, 0),
                          {w: {} for w in dl.workers}, {}, {w: {} for w in dl.workers})

    def copy(self) -> DeathState:
        return DeathState(dict(self.down), dict(self.died), dict(self.up_since),
                          {w: dict(r) for w, r in self.waiting.items()}, dict(self.due),
                          {w: dict(r) for w, r in self.share.items()})

    def discrete(self) -> dict[str, tuple[Any, ...]]:
        """What must repeat at a loop's ends, besides the clocks: down, the replays held back, the share counters."""
        return {w: (d, tuple(sorted(self.waiting[w].items())), tuple(sorted(self.share[w].items())))
                for w, d in self.down.items()}

    def quiet(self, dl: DeathRules, spout: str) -> bool:
        """Whether a worker running executors of the spout is down (before this position's actions)."""
        return any(self.down[w] for w, _, _ in dl.shares(spout))

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


def bolt_share(dl: DeathRules, st: DeathState, bad: Report
               ) -> Callable[[int, str, dict[str, Any], dict[str, dict[str, Any]], bool, int, int], tuple[int, int]]:
    """Section 9.5 at a bolt that dying workers run part of: what it must lose at a position (⌈k·X/p⌉ in all since
    its worker's death, X what reached it since) and the most it may take there (p minus the dead executors)."""

    def share(i: int, name: str, bo: dict[str, Any], records: dict[str, dict[str, Any]], was_processing: bool,
              batch: int, size: int) -> tuple[int, int]:
        who = f"bolt {name}"
        if bo["fail"] or bo["recover"] or bo["phase"] == "failed" or any((bo["replays"] or {}).values()):
            bad(i, who, "records a failure (fail, recover, phase 'failed' or replays), but its dying workers run "
                "only part of it: it loses their executors' share and goes on (section 9.5)")
        lost, dead = 0, 0
        for w, k, p in dl.shares(name):
            rec = records.get(w) or {}
            if rec.get("death") and not st.down[w]:
                if was_processing and not bo["emit"] and batch > p - k:
                    bad(i, who, f"processes a batch of {batch} at worker {w}'s death, more than the {p - k} executors "
                        "it leaves (section 9.5: the death needs the batch to fit on the executors left)")
                x, r = k * (bo["queue"] + bo["arrivals"]), 0
            elif st.down[w] and not rec.get("restart"):
                x, r = k * bo["arrivals"], st.share[w].get(name, 0)
            else:
                continue
            lost += -(-(r + x) // p) - (r > 0)
            st.share[w][name] = (r + x) % p
            dead += k
        if bo["lost"] != lost:
            bad(i, who, f"loses {bo['lost']} tuples, but the share of its executors in dead workers gives {lost} "
                "(section 9.5: ⌈k·X/p⌉ in all since the death)")
        return lost, size - dead

    return share


def worker_rules(dl: DeathRules, st: DeathState, backlog: dict[str, int], last_emit: dict[str, tuple[int, int]],
                 ticks: Callable[[Fraction], int], sec: Callable[[int], Fraction], bad: Report, late: Report
                 ) -> Callable[[int, int, dict[str, dict[str, Any]], dict[str, dict[str, Any]], dict[str, int]], None]:
    """Section 9.5 at a position, after the bolts' rules: the workers' records (`workers`) against their state, the
    replays due added to `backlog` (after this position), a restarted worker's spouts timed from its restart (as
    from an emission of one tuple, in `last_emit`). `batch_before`: each bolt's batch in progress before it."""
    min_ttf, reboot, timeout = ticks(dl.min_ttf), (ticks(dl.min_reboot), ticks(dl.max_reboot)), ticks(dl.timeout)

    def workers(i: int, t: int, records: dict[str, dict[str, Any]], bolts: dict[str, dict[str, Any]],
                batch_before: dict[str, int]) -> None:
        for w in sorted(set(records) - set(dl.workers)):
            bad(i, f"worker {w}", "records a death, restart or replays, but it is no worker that may die in a trace "
                "(an explicit storm.assignment, section 7's failures off, no part of a window, join or asynchronous "
                "bolt: section 9.5)")
        for w, rule in dl.workers.items():
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
                    st.down[w], st.up_since[w], st.share[w] = False, t, {}
                    for s in rule.spouts:  # its spouts' first emission comes one period after the restart
                        last_emit[s] = (t, 1)
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
            shared = {v for c in (*rule.partial, *rule.spouts) for v, _, _ in dl.shares(c) if v != w and st.down[v]}
            if shared:
                bad(i, who, f"dies while worker {min(shared)}, which runs executors of a component it runs part of, is "
                    "down (section 9.5: one death at a time touches a shared component)")
            _replay_check(i, who, dl, rule, gave, bolts, batch_before, bad)
            st.down[w], st.died[w], st.waiting[w] = True, t, gave
            if gave:
                st.due[w] = t + timeout

    return workers


def _replay_check(i: int, who: str, dl: DeathRules, rule: WorkerRule, gave: dict[str, int],
                  bolts: dict[str, dict[str, Any]], batch_before: dict[str, int], bad: Report) -> None:
    """A death's replays: none without acking; else spout s replays at most min(F_s, c_s + ⌊k_s·F_s/e_s⌋): F_s the
    tuples in flight at the death (queue, arrivals, batch in progress) in every bolt s's trees reach, c_s those in the
    counted bolts s's trees reach (every bolt when the worker runs every acker, else those it runs whole, and what a
    bolt it runs part of loses here; with some of the ackers, only the trees hashed to those break, which no count
    here bounds), k_s of e_s its executors in the dead worker; all together at most c + Σ_s ⌊k_s·F_s/e_s⌋."""
    if dl.mode == "none":
        if gave:
            bad(i, who, f"replays {gave}, but nothing is replayed (settings.replay 'none' or no ackers)")
        return
    flight = {b: bo["queue"] + bo["arrivals"] + batch_before[b] for b, bo in bolts.items()}
    counted = dict(flight) if rule.acker else {b: flight[b] for b in rule.whole} | {
        b: bolts[b]["lost"] for b in rule.partial}
    f = {s: sum(n for b, n in flight.items() if s in dl.reach.get(b, set())) for s in {*gave, *rule.spouts}}
    total, most = sum(gave.values()), sum(counted.values()) + sum(k * f[s] // e for s, (k, e) in rule.spouts.items())
    for s, r in gave.items():
        k, e = rule.spouts.get(s, (0, 1))
        cap = min(f[s], sum(n for b, n in counted.items() if s in dl.reach.get(b, set())) + k * f[s] // e)
        if r > cap:
            bad(i, who, f"spout {s} replays {r} trees, more than the {cap} its trees have in flight where the death "
                "breaks them (section 9.5: each broken tree has a tuple in flight there)")
    if total > most:
        bad(i, who, f"replays {total} trees, more than the {most} tuples in flight where its death breaks trees "
            "(section 9.5: each broken tree has one in flight)")

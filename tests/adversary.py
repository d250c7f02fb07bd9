"""An independent simulator of docs/model.md section 2 that plays adversarial runs, for tests only.

It shares no code with app/core/tcn: it reads the topology document itself and follows the
rules as written (exact emission; failures and paced replays of docs/model.md section 7 when bolts
have a `min_ttf` and `settings.failures` is on: a bolt fails as soon as min_ttf allows, loses its
queue, its batch and what arrives while down, and each lost tuple is replayed once by a spout whose
trees reach it). Every duration is chosen by a *policy*: a
function of the component, the time and the kind of duration, which must stay inside the rule's
bounds (checked here). The run is recorded as a `stormbound-trace/1` finite run (a threshold
witness: loop_start = k + 1), so the product's certifier can confirm that it is legal, and the
largest queue of every bolt is reported.

Adversarial policies of docs/boundedness.md, "Every run": spouts at their fastest; an upstream
bolt slow until a switch time and fast after it (it backs up, then drains its backlog at full
speed); the bolt under test always at its slowest.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from math import floor
from typing import Any

# (component name, time, "gap" | "processing" | "delay", low, high) -> the duration to use, in [low, high]
Policy = Callable[[str, Fraction, str, Fraction, Fraction], Fraction]


def exact(value: Any) -> Fraction:
    return Fraction(str(value)) if isinstance(value, float) else Fraction(value)


def fmt(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


@dataclass
class _Bolt:
    name: str
    alpha: Fraction
    sigma: Fraction
    take_max: int
    queue: int
    sources: list[str]
    batch: int = 0
    buffer: Fraction = Fraction(0)
    busy_until: Fraction | None = None  # emit time of the phase in process
    take_at: Fraction | None = None  # scheduled take (idle with tuples available)
    largest: int = 0
    min_ttf: Fraction | None = None  # may fail (docs/model.md section 7)
    up_since: Fraction = Fraction(0)
    down_until: Fraction | None = None  # failed until then
    spouts: list[str] = field(default_factory=list)  # the spouts whose trees reach it (who replays its losses)


@dataclass
class Run:
    """The result of one adversarial run."""

    largest: dict[str, int]  # bolt -> its largest queue (before a position's actions)
    positions: list[dict[str, Any]] = field(default_factory=list)

    def trace(self, topology: dict[str, Any]) -> dict[str, Any]:
        """The run as a `stormbound-trace/1` threshold witness (a finite run: loop_start = k + 1)."""
        k = len(self.positions) - 2
        return {"format": "stormbound-trace/1", "topology": topology, "k": k, "loop_start": k + 1,
                "kept": [c["name"] for c in [*topology["spouts"], *topology["bolts"]]], "positions": self.positions}


def play(doc: dict[str, Any], policy: Policy, until: Fraction, max_positions: int = 200_000,
         fail_when: Callable[[str, Fraction], bool] | None = None) -> Run:
    """Play the document's topology under `policy` until time `until` (exact rule, default streams only).
    `fail_when(bolt, now)`: with failures, a bolt fails at the first position at which min_ttf allows it and this
    says yes (default: as soon as min_ttf allows)."""
    settings = doc.get("settings", {})
    tau = exact(settings.get("tolerance", 0.1))
    idle = exact(settings.get("max_idle_time", 0.01))
    q0 = int(settings.get("init_queues", 0))
    names = {c["id"]: c["name"] for c in [*doc["spouts"], *doc["bolts"]]}
    subs: dict[str, set[str]] = {}
    for s in doc["subscriptions"]:
        assert s.get("stream") in (None, "default"), "default streams only"
        subs.setdefault(names[s["target"]], set()).add(names[s["source"]])
    bolts = {b["name"]: _Bolt(b["name"], exact(b["alpha"]), exact(b["sigma"]), int(b["parallelism"]), q0,
                              sorted(subs.get(b["name"], set()))) for b in doc["bolts"]}
    period = {s["name"]: 1 / exact(s["rate"]) for s in doc["spouts"]}
    burst = {s["name"]: int(s.get("burst", 1)) for s in doc["spouts"]}  # every emission a maximal burst
    next_emit = {s: Fraction(0) for s in period}
    reboot = _failures(doc, bolts, subs, set(period))
    backlog = {s: 0 for s in period}  # replays waiting (paced: at most one per fresh tuple)

    def choose(name: str, now: Fraction, kind: str, low: Fraction, high: Fraction) -> Fraction:
        value = policy(name, now, kind, low, high)
        assert low <= value <= high, (name, kind, value, low, high)
        return value

    run = Run({b: q0 for b in bolts})
    now = Fraction(0)
    while now <= until and len(run.positions) < max_positions:
        spouts_step: dict[str, dict[str, Any]] = {}
        emitted: dict[str, int] = {}
        for s, at in next_emit.items():
            emits = at == now
            n = burst[s]
            replayed = min(backlog[s], n) if emits else 0
            spouts_step[s] = {"emit": emits, "emitted": n + replayed if emits else 0, "replayed": replayed}
            if emits:  # n tuples, then a gap of n·a ± τ·a (docs/model.md 2.1), and as many replays at most
                emitted[s] = n + replayed
                backlog[s] -= replayed
                next_emit[s] = now + choose(s, now, "gap", period[s] * (n - tau), period[s] * (n + tau))
        steps: dict[str, dict[str, Any]] = {}
        for b in bolts.values():  # emits first: the emit ends a phase
            step: dict[str, Any] = {"queue": b.queue, "emit": False, "emitted": 0}
            if b.busy_until == now:
                b.buffer += b.batch
                out = floor(b.sigma * b.buffer) if b.sigma else 0
                b.buffer = b.buffer - out / b.sigma if b.sigma else Fraction(0)
                step.update(emit=True, emitted=out)
                emitted[b.name] = out
                b.batch, b.busy_until = 0, None
            steps[b.name] = step
        for b in bolts.values():
            step = steps[b.name]
            arrivals = sum(emitted.get(src, 0) for src in b.sources)
            step["arrivals"] = arrivals
            if reboot is not None and _failed(b, step, now, arrivals, choose, reboot, backlog, fail_when):
                continue
            run.largest[b.name] = max(run.largest[b.name], b.queue)
            waiting = b.queue + arrivals
            took = False
            if b.busy_until is None and waiting > 0:
                if b.take_at is None:  # tuples just became available (an emit leaving some, or arrivals)
                    b.take_at = now + choose(b.name, now, "delay", Fraction(0), idle)
                if b.take_at == now:
                    b.batch = min(b.take_max, waiting)
                    b.busy_until = now + choose(b.name, now, "processing", b.alpha * (1 - tau), b.alpha * (1 + tau))
                    b.take_at = None
                    took = True
            b.queue = waiting - (b.batch if took else 0)
            step.update(take=took, batch=b.batch, buffer=fmt(b.buffer) if b.buffer.denominator != 1
                        else int(b.buffer), phase="processing" if b.busy_until is not None else "idle")
        run.positions.append({"time": fmt(now), "spouts": spouts_step, "bolts": steps})
        events = [*next_emit.values(), *(b.busy_until for b in bolts.values() if b.busy_until is not None),
                  *(b.take_at for b in bolts.values() if b.take_at is not None),
                  *(b.down_until if b.down_until is not None else b.up_since + b.min_ttf
                    for b in bolts.values() if b.min_ttf is not None)]
        events = [x for x in events if x > now]
        now = min(events)
    for b in bolts.values():
        run.largest[b.name] = max(run.largest[b.name], b.queue)
    return run


def _failures(doc: dict[str, Any], bolts: dict[str, _Bolt], subs: dict[str, set[str]],
              spouts: set[str]) -> tuple[Fraction, Fraction] | None:
    """With failures on and some bolt with a min_ttf: the reboot bounds; each such bolt learns its min_ttf and the
    spouts whose trees reach it (None: failure-free)."""
    settings = doc.get("settings", {})
    failing = {b["name"]: exact(b["min_ttf"]) for b in doc["bolts"] if b.get("min_ttf") is not None}
    if not failing or settings.get("failures") is False:
        return None
    assert settings.get("replay", "paced") == "paced", "paced replays only"
    for name, ttf in failing.items():
        reach, todo = set(), [name]
        while todo:
            for src in subs.get(todo.pop(), ()):
                if src not in reach:
                    reach.add(src)
                    todo.append(src)
        bolts[name].min_ttf, bolts[name].spouts = ttf, sorted(reach & spouts)
    return exact(settings["min_reboot_time"]), exact(settings["max_reboot_time"])


def _failed(b: _Bolt, step: dict[str, Any], now: Fraction, arrivals: int, choose: Policy,
            reboot: tuple[Fraction, Fraction], backlog: dict[str, int],
            fail_when: Callable[[str, Fraction], bool] | None = None) -> bool:
    """Failures and recoveries of one bolt at one position (True: it is down, its arrivals lost). A bolt fails as
    soon as min_ttf allows, but not at a position where it emits; each lost tuple is replayed once, by its
    spouts in turn."""
    lost = 0
    if b.down_until is not None and b.down_until == now:  # back: up, idle, empty; arrivals received
        b.down_until, b.up_since, b.queue, b.take_at = None, now, 0, None
        step["recover"] = True
    elif b.down_until is not None:
        lost = arrivals
    elif b.min_ttf is not None and now >= b.up_since + b.min_ttf and not step["emit"] and (
            fail_when is None or fail_when(b.name, now)):
        lost = b.queue + arrivals + b.batch
        b.queue, b.batch, b.busy_until, b.take_at, b.buffer = 0, 0, None, None, Fraction(0)
        b.down_until = now + choose(b.name, now, "reboot", reboot[0], reboot[1])
        step["fail"] = True
    if b.down_until is None:
        return False
    for i in range(lost if b.spouts else 0):
        backlog[b.spouts[i % len(b.spouts)]] += 1
    step.update(take=False, batch=0, buffer=0, phase="failed", lost=lost)
    return True


def slow_then_fast(switch: dict[str, Fraction], slowest: set[str]) -> Policy:
    """Spouts fastest; bolts in `switch` slowest until their switch time, then fastest; bolts in `slowest`
    always slowest (and idle as long as allowed); every other bolt fastest."""
    def policy(name: str, now: Fraction, kind: str, low: Fraction, high: Fraction) -> Fraction:
        if kind == "gap":
            return low
        if name in slowest:
            return high
        if name in switch:
            return high if now < switch[name] else low
        return low
    return policy


def random_policy(rng: random.Random) -> Policy:
    """Every duration at one of its ends or in between, at random (phases of a few durations each)."""
    def policy(name: str, now: Fraction, kind: str, low: Fraction, high: Fraction) -> Fraction:
        pick = rng.random()
        if pick < 0.45:
            return low
        if pick < 0.9:
            return high
        return low + (high - low) * Fraction(rng.randint(0, 8), 8)
    return policy

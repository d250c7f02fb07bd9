"""A join's figures beyond its queue (docs/model.md section 11): its branches' long-run rates, the slowest branch,
how fast its cache grows when they differ, a bound of its cache in every run when every branch is a chain of
one-input bolts from one common component, and the wait for the slowest branch at nominal timing. The queue of
complete messages is the rate check's own (`RateFigures`: the least branch in the long run, the largest branch's
curve in every window)."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from app.core.numbers import exact
from app.core.rates.flows import Key, RateFigures
from app.core.topology import DEFAULT_STREAM, Bolt

_ONE = (Fraction(1), Fraction(1), Fraction(1))  # a stream's (σ, σ_lo, σ_hi) passing each tuple on once


@dataclass(frozen=True)
class Chain:
    """One branch from the fork: the one-input bolts it passes, each with the stream it passes on (from the fork
    down), and its output ratio ρ (the fork's stream ratio times their σ): ρ parts per tuple the fork processes (or
    emits)."""

    bolts: tuple[Key, ...]
    ratio: Fraction
    one_for_one: bool  # every stream from the fork down carries exactly one tuple per tuple (σ 1, no carry)
    first: str  # the fork's stream it starts from


@dataclass(frozen=True)
class JoinFigures:
    """One join that waits for every branch: per branch (component id, stream) its long-run rate at nominal timing."""

    nominal: dict[Key, Fraction]
    slowest: Key
    growth: Fraction  # parts/s its cache gains at nominal timing: fastest branch − slowest (0: none)
    fork: str | None  # the component every branch comes from through one-input bolts (None: none such)
    cache_bound: Fraction | None  # messages its cache holds at most in every run (None: not proven)
    why_not: str  # why there is no cache bound (empty when there is one)
    wait_nominal: Fraction | None  # s a message's first part waits for its last at nominal timing (None: no fork)
    max_cache: int | None
    # the cache is bounded and every branch passes each fork tuple on one for one: the n-th part of every branch is
    # the n-th fork tuple's, so a message completes when its own slowest part comes (the latency bounds' condition)
    one_for_one: bool = False

    @property
    def grows(self) -> bool:
        return self.growth > 0

    @property
    def open_at_any_rate(self) -> bool:
        """Its cache is not proven bounded for a reason no spout rate and no parallelism changes (branches from
        different components, unequal σ products, the dvert rule), not because a bolt on a branch is behind."""
        return self.cache_bound is None and not self.why_not.endswith("is not proven bounded")


def join_figures(e: RateFigures, bolt: Bolt) -> JoinFigures | None:
    """The figures of a join that waits for every branch (None for any other bolt)."""
    if bolt.id not in e.joins:
        return None
    keys = e.inputs[bolt.id]
    nominal = {key: _nominal_rate(e, key) for key in keys}
    fork, chains = _chains(e, keys)
    bound, why = _cache_bound(e, fork, chains)
    times = {key: sum((exact(b.alpha) for b in (e.by_id[u] for u, _ in c.bolts) if isinstance(b, Bolt)), Fraction(0))
             for key, c in (chains or {}).items()}  # each chain's processing time at nominal timing
    wait = max(times.values()) - min(times.values()) if times else None
    # the slowest branch: the least rate; among equal rates the longest chain (the part that comes last)
    slowest = min(keys, key=lambda k: (nominal[k], -times.get(k, Fraction(0)), e.names[k[0]], k[1]))
    growth = max(nominal.values()) - nominal[slowest]
    return JoinFigures(nominal, slowest, growth, fork, bound, why, wait,
                       bolt.join.max_cache if bolt.join is not None else None,
                       bound is not None and chains is not None and all(c.one_for_one for c in chains.values()))


def _nominal_rate(e: RateFigures, key: Key) -> Fraction:
    """What one stream carries in the long run at nominal timing (σ_lo of what its component processes)."""
    source, stream = key
    ratios = e.streams.get(source, {}).get(stream)
    if ratios is None:
        return Fraction(0)
    through = e.spout_nominal[source] if source in e.spout_nominal else min(e.in_nominal[source],
                                                                              e.cap_nominal[source])
    return ratios[1] * through


def _path(e: RateFigures, key: Key) -> list[Key]:
    """The stream `key` and, up from its component, each one-input bolt's single input stream: the branch's way up."""
    path = [key]
    seen = {key[0]}
    while True:
        source = path[-1][0]
        ins = e.inputs.get(source)
        if ins is None or len(ins) != 1 or ins[0][0] in seen:
            return path
        path.append(ins[0])
        seen.add(ins[0][0])


def _chains(e: RateFigures, keys: list[Key]) -> tuple[str | None, dict[Key, Chain] | None]:
    """The fork (the nearest component every branch's way up passes) and each branch's chain below it."""
    paths = {key: _path(e, key) for key in keys}
    first = paths[keys[0]]
    common = [k for k in first if all(any(p[0] == k[0] for p in paths[o]) for o in keys)]
    if not common:
        return None, None
    fork = common[0][0]
    chains: dict[Key, Chain] = {}
    for key, path in paths.items():
        below: list[Key] = []
        for step in path:  # from the join up to the stream leaving the fork
            below.append(step)
            if step[0] == fork:
                break
        ratio = Fraction(1)
        for source, name in below:
            ratio *= e.streams[source][name][0] if name in e.streams[source] else Fraction(0)
        unit = all(e.streams[source].get(name) == _ONE for source, name in below)
        chains[key] = Chain(tuple(k for k in reversed(below) if k[0] != fork), ratio, unit, below[-1][1])
    return fork, chains


def _cache_bound(e: RateFigures, fork: str | None, chains: dict[Key, Chain] | None) -> tuple[Fraction | None, str]:
    """Messages the cache holds at most in every run (docs/model.md section 11): Σ over branches of the parts that
    may be in flight on it, each chain bolt's queue bound and batch, and one part per emission carry."""
    if fork is None or chains is None:
        return None, "its branches do not come from one common component through one-input bolts"
    if e.topo.settings.emission != "exact":
        return None, "the emission rule is 'dvert', whose carries the cache bound does not follow"
    if len({c.ratio for c in chains.values()}) > 1:
        return None, "its branches deliver different numbers of parts per message (their σ products differ)"
    total = Fraction(0)
    for chain in chains.values():
        # the fork's own carry on the stream the chain starts from (a spout's emissions, its default stream, have none)
        late = Fraction(0 if fork in e.spout_nominal and chain.first == DEFAULT_STREAM else 1)
        early = Fraction(0)
        for u, stream in chain.bolts:
            bound = e.queue_bound.get(u)
            if bound is None:
                return None, f"{e.names[u]} on one of its branches is not proven bounded"
            sigma = e.streams[u][stream][0]  # the exact rule: σ_lo = σ_hi = σ
            late = sigma * (late + bound + e.burst[u]) + 1
            early = sigma * (early + e.q0)
        total += late + early
    return total, ""


def branch_name(e: RateFigures, key: Key) -> str:
    """A branch in words: its component, and its stream when not the default one."""
    source, stream = key
    return e.names[source] + ("" if stream == "default" else f" (stream '{stream}')")

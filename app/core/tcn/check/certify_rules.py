"""The certifier's constants of a trace's topology (app/core/tcn/check/certify.py), recomputed from the
document alone: what its replay, its region test (certify_clocks.py) and its failure rules read."""

from __future__ import annotations

import math
from fractions import Fraction

from app.core.numbers import exact
from app.core.tcn.check.certify_deaths import death_rules
from app.core.tcn.check.certify_failures import failure_rules
from app.core.tcn.check.reading import join_branches, slide_bound, take_bound, timer_bound
from app.core.topology import Bolt, Topology


class Rules:
    """Constants of the trace's topology, recomputed from the document alone."""

    def __init__(self, topo: Topology) -> None:
        self.tau = exact(topo.settings.tolerance)
        self.idle = exact(topo.settings.max_idle_time)
        self.init = topo.settings.init_queues
        names = {c.id: c.name for c in topo.components}
        self.period = {s.name: 1 / exact(s.rate) for s in topo.spouts}
        self.burst = {s.name: s.burst for s in topo.spouts}
        self.alpha = {b.name: exact(b.alpha) for b in topo.bolts}
        self.sigma = {b.name: exact(b.sigma) for b in topo.bolts}
        self.take_max = {b.name: take_bound(b) for b in topo.bolts}  # section 8: × threads; 10: × a count slide
        self.slide = {b.name: slide_bound(b) for b in topo.bolts}  # section 10: whole slides only
        # section 10.3: a duration window's G; its timer takes every waiting tuple within G of its last run
        self.timer = {b.name: g for b in topo.bolts if (g := timer_bound(b, self.tau)) is not None}
        # input streams (component, stream): a repeated subscription to one stream counts once (section 1)
        inputs = {(names[s.target], names[s.source], s.stream or "default") for s in topo.subscriptions}
        self.sources = {b.name: sorted({(u, st) for j, u, st in inputs if j == b.name}) for b in topo.bolts}
        subscribed = {(u, st) for _, u, st in inputs}
        # section 11: a join's branches (each input stream); its arrivals are the messages they all delivered
        self.joins = {b.name: branches for b in topo.bolts if (branches := join_branches(topo, b)) is not None}
        # every output stream with its σ (a spout's: its ratio; its default stream is the emission itself)
        # and whether it carries nothing and keeps no buffer (nobody subscribes, or σ = 0)
        self.streams: dict[str, dict[str, tuple[Fraction, bool]]] = {}
        for c in topo.components:
            given = c.stream_sigma if isinstance(c, Bolt) else c.stream_ratio
            values = {"default": exact(c.sigma)} if isinstance(c, Bolt) else {}
            values.update({name: exact(given[name]) for name in c.streams})
            self.streams[c.name] = {name: (v, (c.name, name) not in subscribed or v == 0)
                                    for name, v in values.items()}
        self.declared = {c.name: bool(c.streams) for c in topo.components}
        self.silent = {b.name: self.streams[b.name]["default"][1] for b in topo.bolts}  # the default stream's
        self.emission = topo.settings.emission
        self.fail = failure_rules(topo)  # section 7: None when no bolt may fail
        self.deaths = death_rules(topo)  # section 9.5: None when no worker may die in a trace
        self._emitted: dict[tuple[str, Fraction | int, str], tuple[int, Fraction | int]] = {}

    def emit(self, name: str, total: Fraction, stream: str = "default") -> tuple[int, Fraction]:
        """Section 2's EMIT on one output stream for a buffer of `total`: (tuples emitted, carry kept)."""
        sigma, silent = self.streams[name][stream]
        if silent:
            return 0, Fraction(0)
        out = math.floor(sigma * total)
        rest = total - Fraction(out) / sigma
        return out, (Fraction(math.ceil(rest)) if self.emission == "dvert" else rest)

    def emit_fast(self, name: str, total: Fraction | int, stream: str = "default") -> tuple[int, Fraction | int]:
        """`emit`, with a whole carry as an int (cheaper to compare on long traces); a pure function of
        its arguments, remembered (a long trace repeats the same few buffers)."""
        key = (name, total, stream)
        known = self._emitted.get(key)
        if known is None:
            out, keep = self.emit(name, Fraction(total), stream)
            known = self._emitted[key] = (out, (keep.numerator if keep.denominator == 1 else keep))
        return known

    def constants(self) -> list[Fraction]:
        """Every time constant a rule compares a clock with."""
        out = [self.idle]
        for a in self.period.values():
            out += [a, a * self.tau]
        for alpha in self.alpha.values():
            out += [alpha * (1 - self.tau), alpha * (1 + self.tau)]
        out += self.timer.values()
        return out + (self.fail.constants() if self.fail else []) + (self.deaths.constants() if self.deaths else [])

    @property
    def replay_mode(self) -> str:
        """settings.replay as the failures (section 7) or the worker deaths (9.5) read it; "none" without either."""
        return self.fail.mode if self.fail else self.deaths.mode if self.deaths else "none"

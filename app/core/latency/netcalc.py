"""Deterministic network calculus on token buckets and rate-latency curves, exact fractions.

The few curve operations the latency bounds need (docs/latency.md, "Network calculus"), each a closed
form of Le Boudec & Thiran, *Network Calculus* (2001):

* an arrival curve `Bucket(r, b)`: at most r·w + b in any window of length w (γ_{r,b});
* a service curve `RateLatency(R, T)`: β(t) = R·(t − T)⁺;
* `delay` (horizontal deviation, FIFO; Thm 1.4.2), `busy_delay` (the busy-period bound of a non-FIFO
  aggregate), `backlog` (vertical deviation; Thm 1.4.1), `output` (α ⊘ β; Thm 1.4.3), `concatenate`
  (β₁ ⊗ β₂; Thm 1.4.6), `leftover_fifo` (Prop. 6.2.1 with θ = T + b/R, the smallest latency, as DiscoDNC
  chooses it) and `leftover_arbitrary` ([β − α]⁺; Thm 6.2.1).

`FeedForward` runs the two classic analyses of a flow of interest in a feed-forward network of such
servers: total flow analysis (TFA: a delay per server for the aggregate, summed) and separate flow
analysis (SFA: the flow's left-over service curves concatenated, its burst paid once), with arrival
bounds per hop (PBOO per hop). tests/unit/test_latency_netcalc.py reproduces DiscoDNC's published
figures with it; app/core/latency/bounds.py bounds a topology's latencies with the same functions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from app.core.errors import BadInput


@dataclass(frozen=True)
class Bucket:
    """Arrival curve γ_{r,b}: at most r·w + b in any window of length w."""

    rate: Fraction
    burst: Fraction

    def __add__(self, other: Bucket) -> Bucket:
        return Bucket(self.rate + other.rate, self.burst + other.burst)


ZERO_BUCKET = Bucket(Fraction(0), Fraction(0))


@dataclass(frozen=True)
class RateLatency:
    """Service curve β_{R,T}(t) = R·(t − T)⁺."""

    rate: Fraction
    latency: Fraction


class Unstable(BadInput, ValueError):
    """The arrival rate is not below the service rate: no finite bound."""


def _stable(alpha: Bucket, beta: RateLatency) -> None:
    if alpha.rate > beta.rate or beta.rate <= 0:
        raise Unstable(f"arrival rate {alpha.rate} above service rate {beta.rate}")


def delay(alpha: Bucket, beta: RateLatency) -> Fraction:
    """Horizontal deviation h(α, β) = T + b/R: the longest wait of a FIFO flow."""
    _stable(alpha, beta)
    return beta.latency + alpha.burst / beta.rate


def busy_delay(alpha: Bucket, beta: RateLatency) -> Fraction:
    """(b + R·T)/(R − r): the longest backlogged period, a delay bound for any service order."""
    if alpha.rate >= beta.rate:
        raise Unstable(f"arrival rate {alpha.rate} not below service rate {beta.rate}")
    return (alpha.burst + beta.rate * beta.latency) / (beta.rate - alpha.rate)


def backlog(alpha: Bucket, beta: RateLatency) -> Fraction:
    """Vertical deviation v(α, β) = b + r·T."""
    _stable(alpha, beta)
    return alpha.burst + alpha.rate * beta.latency


def output(alpha: Bucket, beta: RateLatency) -> Bucket:
    """α ⊘ β = γ_{r, b + r·T}: an arrival curve of what leaves the server."""
    _stable(alpha, beta)
    return Bucket(alpha.rate, alpha.burst + alpha.rate * beta.latency)


def concatenate(betas: list[RateLatency]) -> RateLatency:
    """β₁ ⊗ … ⊗ βₙ = β_{min R, Σ T}: the servers in tandem as one."""
    return RateLatency(min(b.rate for b in betas), sum((b.latency for b in betas), Fraction(0)))


def leftover_fifo(beta: RateLatency, cross: Bucket) -> RateLatency:
    """What a FIFO server leaves to one flow beside cross traffic `cross`: β_{R − r, T + b/R}."""
    if cross == ZERO_BUCKET:
        return beta
    _stable(cross, beta)
    return RateLatency(beta.rate - cross.rate, beta.latency + cross.burst / beta.rate)


def leftover_arbitrary(beta: RateLatency, cross: Bucket) -> RateLatency:
    """[β − α]⁺ for any service order: β_{R − r, (R·T + b)/(R − r)}."""
    if cross == ZERO_BUCKET:
        return beta
    if cross.rate >= beta.rate:
        raise Unstable(f"cross rate {cross.rate} not below service rate {beta.rate}")
    return RateLatency(beta.rate - cross.rate, (beta.rate * beta.latency + cross.burst) / (beta.rate - cross.rate))


@dataclass(frozen=True)
class Flow:
    name: str
    arrival: Bucket
    path: tuple[str, ...]  # the servers it crosses, in order


@dataclass(frozen=True)
class Bounds:
    delay: Fraction
    backlog: Fraction


@dataclass
class FeedForward:
    """Servers with rate-latency service curves and token-bucket flows along paths (no cycle)."""

    servers: dict[str, RateLatency]
    flows: list[Flow] = field(default_factory=list)
    fifo: bool = True  # FIFO multiplexing at every server, else arbitrary

    def leftover(self, server: str, cross: Bucket) -> RateLatency:
        beta = self.servers[server]
        return leftover_fifo(beta, cross) if self.fifo else leftover_arbitrary(beta, cross)

    def arrival_at(self, flow: Flow, server: str) -> Bucket:
        """Flow's arrival bound at `server`: its own curve at its first server, else its output bound at the
        server before, through the service left to it there (PBOO per hop)."""
        hop = flow.path.index(server)
        if hop == 0:
            return flow.arrival
        before = flow.path[hop - 1]
        return output(self.arrival_at(flow, before), self.leftover(before, self.cross_at(before, flow)))

    def cross_at(self, server: str, flow: Flow) -> Bucket:
        total = ZERO_BUCKET
        for other in self.flows:
            if other is not flow and server in other.path:
                total = total + self.arrival_at(other, server)
        return total

    def aggregate_at(self, server: str) -> Bucket:
        total = ZERO_BUCKET
        for f in self.flows:
            if server in f.path:
                total = total + self.arrival_at(f, server)
        return total

    def tfa(self, flow: Flow) -> Bounds:
        """Total flow analysis: per server the aggregate's delay (FIFO, or a single flow; else its busy
        period), summed along the path; the backlog the largest of the servers'."""
        total, worst = Fraction(0), Fraction(0)
        for server in flow.path:
            alpha, beta = self.aggregate_at(server), self.servers[server]
            alone = sum(1 for f in self.flows if server in f.path) == 1
            total += delay(alpha, beta) if self.fifo or alone else busy_delay(alpha, beta)
            worst = max(worst, backlog(alpha, beta))
        return Bounds(total, worst)

    def sfa(self, flow: Flow) -> Bounds:
        """Separate flow analysis: the flow's left-over service at every server, concatenated (its burst is
        paid once)."""
        e2e = concatenate([self.leftover(s, self.cross_at(s, flow)) for s in flow.path])
        return Bounds(delay(flow.arrival, e2e), backlog(flow.arrival, e2e))

"""The core's curve functions reproduce DiscoDNC's published figures exactly.

Network and figures: DiscoDNC (NetCal/DNC), src/unikl/disco/tests/FeedForward_1SC_3Flows_1AC_3Paths.java
(v2.3): four servers with the rate-latency service curve β_{20,20}, three token-bucket flows γ_{5,25}
(f0: s0 → s1 → s3, f1: s2 → s3, f2: s2 → s1), arrival bounds per hop (PBOO); its asserted TFA and SFA
delay and backlog bounds under FIFO and arbitrary multiplexing (NumFactory.createNum(n, d) = n/d).
"""

from fractions import Fraction

import pytest

from app.core.latency.netcalc import (
    Bucket,
    FeedForward,
    Flow,
    RateLatency,
    Unstable,
    concatenate,
    delay,
    leftover_fifo,
)

# flow -> (FIFO TFA delay, backlog; FIFO SFA delay, backlog; ARB TFA delay, backlog; ARB SFA delay, backlog)
DISCO_DNC = {
    "f0": ((5985, 64), (9425, 16), (1795, 24), (3125, 8), (6425, 36), (6125, 9), (875, 9), (4525, 9)),
    "f1": ((3965, 64), (9425, 16), (10715, 192), (18925, 64), (11975, 90), (6125, 9), (2095, 27), (10925, 27)),
    "f2": ((885, 16), (1825, 4), (295, 6), (525, 2), (685, 6), (1475, 3), (65, 1), (1025, 3)),
}


def _network(fifo: bool) -> FeedForward:
    beta = RateLatency(Fraction(20), Fraction(20))
    bucket = Bucket(Fraction(5), Fraction(25))
    net = FeedForward({s: beta for s in ("s0", "s1", "s2", "s3")}, fifo=fifo)
    net.flows = [Flow("f0", bucket, ("s0", "s1", "s3")), Flow("f1", bucket, ("s2", "s3")),
                 Flow("f2", bucket, ("s2", "s1"))]
    return net


@pytest.mark.parametrize("flow", sorted(DISCO_DNC))
def test_disco_dnc_feed_forward_3_flows(flow: str) -> None:
    figures = [Fraction(n, d) for n, d in DISCO_DNC[flow]]
    for i, fifo in enumerate((True, False)):
        net = _network(fifo)
        f = next(x for x in net.flows if x.name == flow)
        tfa, sfa = net.tfa(f), net.sfa(f)
        assert (tfa.delay, tfa.backlog, sfa.delay, sfa.backlog) == tuple(figures[4 * i:4 * i + 4])


def test_pay_bursts_once_on_a_tandem() -> None:
    """One flow through three servers: SFA pays the burst once, TFA at every hop, so SFA is never worse."""
    beta = RateLatency(Fraction(10), Fraction(1))
    net = FeedForward({s: beta for s in "abc"}, [Flow("f", Bucket(Fraction(2), Fraction(30)), ("a", "b", "c"))])
    f = net.flows[0]
    assert net.sfa(f).delay == 3 + Fraction(30, 10)
    assert net.tfa(f).delay > net.sfa(f).delay
    assert concatenate([beta, beta]) == RateLatency(Fraction(10), Fraction(2))


def test_unstable_is_refused() -> None:
    with pytest.raises(Unstable):
        delay(Bucket(Fraction(11), Fraction(0)), RateLatency(Fraction(10), Fraction(1)))
    with pytest.raises(Unstable):
        leftover_fifo(RateLatency(Fraction(10), Fraction(1)), Bucket(Fraction(11), Fraction(0)))

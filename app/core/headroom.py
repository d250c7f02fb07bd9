"""Capacity in Storm's terms: how much more load a topology takes, and what Storm does past it.

Two factors by which every spout's rate is multiplied (docs/storm.md, "Headroom"):

* **headroom** H: for every factor below H the rate check proves every bolt bounded; at H
  some bolt's largest inflow reaches its smallest capacity.
* **grows_at** G: for every factor above G some bolt surely grows (its inflow at nominal
  timing exceeds its nominal capacity); at or below G none does at nominal timing.

Both come from the rate check's exact figures (`margins`, `nominal_margins` in
app/core/rates.py) and are exact fractions. Flows scale linearly with the spout rates only
while no bolt saturates: a bolt that passes on σ·min(inflow, capacity) is linear in the
spout rates as long as inflow ≤ capacity. While every bolt is proven bounded (largest
inflow < smallest capacity ≤ largest capacity) no bolt saturates in the largest flows, so
on [0, H] every largest inflow is f·U_j, with U_j read at any factor where all bolts are
bounded, and H = min_j cap_min_j / U_j. Likewise, while no bolt grows at nominal timing no
nominal flow is capped, so G = min_j cap_nominal_j / N_j. A cycle the rate check solves
exactly is linear below its caps as well (docs/boundedness.md, "Cycles"); where it only
iterates a cycle's flows down from a bound that does not scale, H is found by bisection on
the exact check instead, and is the largest factor proven (a sound lower bound of the
supremum, marked not exact).

For an overloaded topology (G < 1), what Storm does, from the document's Storm settings
(all estimates from the model's nominal timing, not proofs):

* backpressure (on by default since Storm 1.0) throttles the spouts to G × their rates, and
  the source's backlog (Kafka lag) grows by Σ rate × (1 − G) tuples/s;
* each growing bolt's receive queues (`topology.executor.receive.buffer.size` per executor,
  1024 when unset) fill in buffer × executors / growth seconds;
* with `topology.max.spout.pending` P, a spout with E executors keeps P × E tuples in flight;
  Little's law (L = λW) at the throttled rate λ gives each one's waiting time W, and a W
  above `topology.message.timeout.secs` (30 when unset) means tuples time out and are replayed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from app.core.formats.flux_ticks import TICK_PREFIX
from app.core.rates import LoadMargins, RateReport, exact, load_margins, margins, nominal_margins, rate_check
from app.core.rates.suggest import suggest as failure_free_suggestion
from app.core.topology import Topology

DEFAULT_RECEIVE_BUFFER = 1024  # topology.executor.receive.buffer.size in Storm 1.x's defaults.yaml
DEFAULT_MESSAGE_TIMEOUT = 30  # topology.message.timeout.secs in Storm's defaults.yaml
RECEIVE_BUFFER_KEY = "topology.executor.receive.buffer.size"
BACKPRESSURE_KEY = "topology.backpressure.enable"
_SHRINK_ROUNDS = 200
_BISECTION_ROUNDS = 40


def scaled(topo: Topology, factor: Fraction) -> Topology:
    """The topology with every spout's rate multiplied by `factor`, kept exact.

    The rate is stored as a Fraction (not a float) so the rate check, which reads rates with
    `exact`, sees exactly rate × factor; the copy is only given to the rate check."""
    spouts = [s.model_copy(update={"rate": exact(s.rate) * factor}) for s in topo.spouts]
    return topo.model_copy(update={"spouts": spouts})


@dataclass
class QueueFill:
    """A bolt whose queues grow at nominal rates: how fast, and when its receive queues are full."""

    bolt: str
    growth: Fraction  # tuples/s its queues gain together
    executors: int
    seconds_to_full: Fraction  # buffer × executors / growth


@dataclass
class PendingWait:
    """Little's law for one spout's in-flight tuples under max.spout.pending."""

    spout: str
    in_flight: int  # max.spout.pending × the spout's executors
    throughput: Fraction  # tuples/s it can still emit (throttled)
    wait: Fraction | None  # seconds a tuple is in flight: in_flight / throughput (None: nothing completes)
    times_out: bool  # wait > message timeout


@dataclass
class StormForecast:
    """What Storm does with an overloaded topology (every figure an estimate)."""

    backpressure: bool
    backpressure_source: str  # "config" or "default"
    sustainable_rates: dict[str, Fraction]
    offered_rate: Fraction
    sustainable_rate: Fraction
    backlog_growth: Fraction  # tuples/s piling up at the source
    receive_buffer: int
    receive_buffer_source: str
    queues: list[QueueFill]
    max_spout_pending: int | None
    message_timeout_secs: int
    message_timeout_source: str
    pending: list[PendingWait] = field(default_factory=list)


@dataclass
class Headroom:
    """The factors of `docs/storm.md` ("Headroom"); None for a factor that is unlimited."""

    headroom: Fraction | None
    headroom_exact: bool
    limiting_bolts: list[str]
    grows_at: Fraction | None
    first_to_saturate: list[str]
    storm: StormForecast | None  # None unless some bolt grows at the document's rates
    # in a cycle the rate check's nominal flows come from a finite iteration, so grows_at is the factor at which
    # its "grows" verdict flips (close to, not exactly, the fixed point's)
    grows_at_exact: bool = True
    # with failures on, the rate check's statuses include the replays (docs/boundedness.md, "Failures") but
    # these factors, like the suggested parallelism, come from the failure-free flows: they say so
    ignores_failures: bool = False

    @property
    def overloaded(self) -> bool:
        return self.grows_at is not None and self.grows_at < 1

    def to_json(self) -> dict[str, Any]:
        """Exact values as strings ("p/q") beside their decimals."""
        out: dict[str, Any] = {
            "headroom": _num(self.headroom), "headroom_exact": self.headroom_exact,
            "limiting_bolts": self.limiting_bolts,
            "grows_at": _num(self.grows_at), "first_to_saturate": self.first_to_saturate,
            "overloaded": self.overloaded,
            "exact": [k for k, ok in (("headroom", self.headroom_exact), ("grows_at", self.grows_at_exact)) if ok],
            "storm": None,
        }
        if self.ignores_failures:
            out["ignores_failures"] = True
        f = self.storm
        if f is not None:
            out["storm"] = {
                "estimate": True,
                "backpressure": f.backpressure, "backpressure_source": f.backpressure_source,
                "offered_rate": _num(f.offered_rate), "sustainable_rate": _num(f.sustainable_rate),
                "sustainable_rates": {k: _num(v) for k, v in f.sustainable_rates.items()},
                "backlog_growth": _num(f.backlog_growth),
                "receive_buffer": f.receive_buffer, "receive_buffer_source": f.receive_buffer_source,
                "queues": [{"bolt": q.bolt, "growth": _num(q.growth), "executors": q.executors,
                            "seconds_to_full": _num(q.seconds_to_full)} for q in f.queues],
                "max_spout_pending": f.max_spout_pending,
                "message_timeout_secs": f.message_timeout_secs, "message_timeout_source": f.message_timeout_source,
                "pending": [{"spout": p.spout, "in_flight": p.in_flight, "throughput": _num(p.throughput),
                             "wait": _num(p.wait), "times_out": p.times_out} for p in f.pending],
            }
        return out


def _num(x: Fraction | None) -> dict[str, Any] | None:
    return None if x is None else {"exact": str(x), "value": float(x)}


def _linear_factor(figures: Callable[[Fraction], dict[str, tuple[Fraction, Fraction]]], within: Any,
                   slack: Fraction = Fraction(0)) -> tuple[Fraction | None, list[str], bool]:
    """min_j capacity_j / (inflow_j per unit factor), read where flows are linear.

    `figures(f)` gives {bolt: (inflow, capacity)} at load factor f; `within(inflow, capacity)` says the bolt
    is in the linear regime. Returns (factor, the bolts reaching it, whether a linear point was found)."""
    f = Fraction(1)
    for _ in range(_SHRINK_ROUNDS):
        m = figures(f)
        outside = [(i, c) for i, c in m.values() if not within(i, c)]
        if not outside:
            break
        f = f * min(c / i for i, c in outside) / 2
    else:
        return Fraction(0), [], False
    ratios = {n: c / (i / f) for n, (i, c) in m.items() if i > 0}
    if not ratios:
        return None, [], True
    best = min(ratios.values())
    return best, [n for n, r in ratios.items() if r <= best * (1 + slack)], True


def _all_bounded(topo: Topology, factor: Fraction) -> bool:
    return all(i < c for i, c in margins(scaled(topo, factor)).values())


def headroom(topo: Topology, report: RateReport | None = None) -> Headroom:
    """The headroom, the factor at which some bolt grows, and (when overloaded) Storm's response.

    `report` is the document's rate check when already made (else it is made here)."""
    report = report if report is not None else rate_check(topo)
    cyclic = report.cyclic
    read: dict[Fraction, LoadMargins] = {}
    solved: dict[str, bool] = {}  # whether the cycles were solved exactly where each factor was read

    def at(f: Fraction) -> LoadMargins:
        if f not in read:
            read[f] = load_margins(scaled(topo, f))
        return read[f]

    def largest(f: Fraction) -> dict[str, tuple[Fraction, Fraction]]:
        solved["largest"] = at(f).cycles_solved
        return at(f).largest

    def nominal(f: Fraction) -> dict[str, tuple[Fraction, Fraction]]:
        solved["nominal"] = at(f).cycles_solved
        return at(f).nominal

    h, limiting, found = _linear_factor(largest, lambda i, c: i < c)
    # a cycle solved exactly is linear below the caps as an acyclic topology is; one iterated is not
    h_exact = found and (not cyclic or solved.get("largest", False))
    if found and not h_exact and h is not None:
        lo = Fraction(0)
        m = margins(topo)
        if all(i < c for i, c in m.values()):
            lo = Fraction(1)
        hi = max(h, lo * 2, Fraction(1, 10**6))
        for _ in range(_SHRINK_ROUNDS):  # an iterated cycle is not linear: find a factor not proven
            if not _all_bounded(topo, hi):
                break
            lo, hi = hi, hi * 2
        for _ in range(_BISECTION_ROUNDS):
            mid = (lo + hi) / 2
            if _all_bounded(topo, mid):
                lo = mid
            else:
                hi = mid
        h = lo.limit_denominator(10**9) if _all_bounded(topo, lo.limit_denominator(10**9)) else lo
        worst = margins(scaled(topo, hi))
        limiting = [n for n, (i, c) in worst.items() if not i < c]
    g, first, _ = _linear_factor(nominal, lambda i, c: i <= c)
    g_exact = not cyclic or solved.get("nominal", False)
    if not g_exact:
        # in an iterated cycle the finite iteration leaves tied bolts a hair apart (in an order that varies)
        g, first, _ = _linear_factor(nominal, lambda i, c: i <= c, Fraction(1, 10**9))
    # a cycle whose gain is at least one amplifies any inflow without bound: the rate check says no parallelism
    # can fix such a bolt, and its finite iteration would give a tiny factor instead of none
    # (the failure-free suggestion: with failures on, None also means "not proven with failures")
    free = (report.suggested_parallelism if not report.failures or not cyclic
            else failure_free_suggestion(topo))  # (the suggestion never reads failures: no whole rate check)
    amplified = [n for n, p in free.items() if p is None] if cyclic else []
    if amplified:
        g, first, g_exact = Fraction(0), amplified, False
    storm = _forecast(topo, g, first) if g is not None and g < 1 else None
    return Headroom(h, h_exact, limiting, g, first, storm, grows_at_exact=g_exact, ignores_failures=report.failures)


def _forecast(topo: Topology, g: Fraction, first: list[str]) -> StormForecast:
    st = topo.storm
    config = st.config
    bp_raw = config.get(BACKPRESSURE_KEY)
    backpressure = bp_raw is not False and str(bp_raw).lower() != "false"
    buf_raw = config.get(RECEIVE_BUFFER_KEY)
    buffer = buf_raw if isinstance(buf_raw, int) and not isinstance(buf_raw, bool) and buf_raw > 0 else None
    timers = {s.name for s in topo.spouts if s.name.startswith(TICK_PREFIX)}  # Storm's ticks: neither throttled
    rates = {s.name: exact(s.rate) for s in topo.spouts if s.name not in timers}  # nor pending
    offered = sum(rates.values(), Fraction(0))
    sustainable = {n: r * g for n, r in rates.items()}
    queues = []
    bolts = {b.name: b for b in topo.bolts}
    for name, (inflow, capacity) in nominal_margins(topo).items():
        if inflow > capacity and g > 0:  # (an amplifying cycle's queues grow ever faster: no fill time to give)
            growth = inflow - capacity
            executors = bolts[name].parallelism
            queues.append(QueueFill(name, growth, executors,
                                    Fraction((buffer or DEFAULT_RECEIVE_BUFFER) * executors) / growth))
    queues.sort(key=lambda q: q.seconds_to_full)
    timeout = st.message_timeout_secs or DEFAULT_MESSAGE_TIMEOUT
    pending = []
    if st.max_spout_pending is not None:
        for s in topo.spouts:
            if s.name in timers:
                continue
            in_flight = st.max_spout_pending * (s.executors or 1)
            throughput = sustainable[s.name]
            if throughput > 0:
                wait = in_flight / throughput
                pending.append(PendingWait(s.name, in_flight, throughput, wait, wait > timeout))
            else:  # nothing completes: every tuple in flight times out
                pending.append(PendingWait(s.name, in_flight, throughput, None, True))
    return StormForecast(
        backpressure=backpressure, backpressure_source="config" if bp_raw is not None else "default",
        sustainable_rates=sustainable, offered_rate=offered, sustainable_rate=offered * g,
        backlog_growth=offered * (1 - g),
        receive_buffer=buffer or DEFAULT_RECEIVE_BUFFER, receive_buffer_source="config" if buffer else "default",
        queues=queues, max_spout_pending=st.max_spout_pending, message_timeout_secs=timeout,
        message_timeout_source="config" if st.message_timeout_secs else "default", pending=pending)


# ---- text -----------------------------------------------------------------------------------


def decimal(x: Fraction | float, digits: int = 3) -> str:
    """A figure for text: `digits` significant digits, no float noise, no exponent for everyday sizes."""
    v = float(x)
    if v == 0:
        return "0"
    if 1e-4 <= abs(v) < 1e9:
        text = f"{v:.{digits}g}"
        if "e" in text:
            text = f"{v:.0f}"
        return text
    return f"{v:.{digits}g}"


def duration(seconds: Fraction | float) -> str:
    """A duration for text: milliseconds below a second, seconds up to two minutes, then minutes or hours."""
    v = float(seconds)
    if v < 1:
        return f"{decimal(v * 1000)} ms"
    if v < 120:
        return f"{decimal(v)} s"
    if v < 7200:
        return f"{decimal(v / 60)} min"
    return f"{decimal(v / 3600)} h"


def factor_text(x: Fraction) -> str:
    return f"×{decimal(x)}"


def _names(names: list[str], most: int = 5) -> str:
    """At most `most` names, then how many more (a chain of thousands of equal bolts stays one line)."""
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def headline(h: Headroom) -> str:
    """One line: the headroom and the first bolt to saturate."""
    if h.headroom is None and h.grows_at is None:
        return "headroom: unlimited (no bolt receives tuples)"
    parts = []
    if h.headroom is not None:
        if h.headroom == 0:
            parts.append("headroom: no load factor is proven bounded")
        else:
            verb = "limits" if len(h.limiting_bolts) == 1 else "limit"
            who = f" ({_names(h.limiting_bolts)} {verb} it)" if h.limiting_bolts else ""
            bound = "" if h.headroom_exact else " at least"
            parts.append(f"headroom{bound} {factor_text(h.headroom)}: every bolt is proven bounded while the "
                         f"spouts' rates are multiplied by less than {decimal(h.headroom)}{who}")
    if h.grows_at == 0:
        verb = "grows" if len(h.first_to_saturate) == 1 else "grow"
        parts.append(f"{_names(h.first_to_saturate)} {verb} at any load (a cycle passes on at least as many "
                     "tuples as it receives; no parallelism fixes it)")
    elif h.grows_at is not None:
        verb = "saturates" if len(h.first_to_saturate) == 1 else "saturate"
        parts.append(f"{_names(h.first_to_saturate)} {verb} first: surely growing above "
                     f"{factor_text(h.grows_at)}")
    return "; ".join(parts)


def storm_lines(h: Headroom) -> list[str]:
    """What Storm does with an overloaded topology, a line per effect (estimates)."""
    f = h.storm
    if f is None:
        return []
    lines = []
    src = "" if f.backpressure_source == "config" else " (Storm's default since 1.0)"
    if f.backpressure:
        lines.append(f"with backpressure on{src}, Storm throttles the spouts to {decimal(f.sustainable_rate)} tuples/s "
                     f"of the {decimal(f.offered_rate)} offered ({factor_text(h.grows_at or Fraction(0))}): the "
                     f"source's backlog (e.g. Kafka lag) grows by {decimal(f.backlog_growth)} tuples/s")
    else:
        lines.append(f"backpressure is off ({BACKPRESSURE_KEY}: false): the spouts keep emitting "
                     f"{decimal(f.offered_rate)} tuples/s and the queues below grow until the worker runs out "
                     "of memory")
    size = "" if f.receive_buffer_source == "config" else ", Storm's default size"
    for q in f.queues[:5]:
        executors = f"{q.executors} executor{'s' if q.executors != 1 else ''}"
        lines.append(f"{q.bolt}'s receive queues ({executors} × {f.receive_buffer} tuples{size}) fill in about "
                     f"{duration(q.seconds_to_full)} at the offered rates (they gain {decimal(q.growth)} tuples/s)")
    if len(f.queues) > 5:
        lines.append(f"and {len(f.queues) - 5} more growing bolts")
    timeout_src = "" if f.message_timeout_source == "config" else " (Storm's default)"
    for p in f.pending:
        verdict = ("longer than the message timeout: tuples fail and are replayed" if p.times_out
                   else "within the message timeout")
        if p.wait is None:
            lines.append(f"max.spout.pending {f.max_spout_pending}: {p.spout}'s {p.in_flight} tuples in flight never "
                         f"complete: each fails after the message timeout ({f.message_timeout_secs} s{timeout_src}) "
                         "and is replayed")
            continue
        lines.append(f"max.spout.pending {f.max_spout_pending}: {p.spout} keeps {p.in_flight} tuples in flight at "
                     f"{decimal(p.throughput)} tuples/s, so each waits about {duration(p.wait)} (Little's law), "
                     f"{verdict} ({f.message_timeout_secs} s{timeout_src})")
    return lines


def capacity_lines(h: Headroom) -> list[str]:
    """The capacity block of `check`, `verify` and the report: the headline, then Storm's response."""
    lines = [headline(h)]
    more = storm_lines(h)
    if more:
        lines += more
        lines.append("(headroom and growth factors are exact in the model; what Storm does is an estimate from "
                     "nominal timing)")
    if h.ignores_failures:
        lines.append("the headroom and the growth factor ignore failures; the statuses and the suggested "
                     "parallelism include them")
    return lines

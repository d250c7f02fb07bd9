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

For an overloaded topology (G < 1), what Storm does, from the document's Storm settings and the defaults of
its Storm version (2.x when unknown: `storm_defaults`; all estimates from the model's nominal timing, not
proofs):

* backpressure (always on in 2.x, on by default in 1.0, off by default in 1.1 and 1.2) throttles the spouts to
  G × their rates, and the source's backlog (Kafka lag) grows by Σ rate × (1 − G) tuples/s;
* each growing bolt's receive queues (`topology.executor.receive.buffer.size` per executor: 32768 tuples in
  2.x, 1024 batched slots in 1.x) fill in buffer × executors / growth seconds, and a tuple then waits
  buffer × executors / service rate, warned when above `topology.message.timeout.secs` (30 when unset);
* with acking (ackers and reliable spouts) and `topology.max.spout.pending` P, a spout with n tasks keeps
  P × n trees in flight: at most Σ P × n × (tuples per tree, σ along the anchored paths) tuples can reach a
  bolt, and when that is below its queue max.spout.pending binds before backpressure; Little's law
  (L = λW) at the throttled rate λ gives each tree's waiting time W, against the message timeout.

Every text is a presentation function of its own (`assumptions_line`, `throttle_line`, `queue_lines`,
`pending_lines`, `timeout_lines`, `observed_line`), apart from the analysis.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from app.core.failures import failures_off
from app.core.formats.flux_ticks import TICK_PREFIX
from app.core.rates import LoadMargins, RateReport, exact, load_margins, margins, nominal_margins, rate_check
from app.core.rates.suggest import suggest as failure_free_suggestion
from app.core.topology import StormObserved, Topology

DEFAULT_RECEIVE_BUFFER = 32768  # topology.executor.receive.buffer.size in Storm 2.x's defaults.yaml (tuples)
STORM1_RECEIVE_BUFFER = 1024  # the same key in Storm 1.x: slots of its Disruptor queue, each a batch of tuples
DEFAULT_MESSAGE_TIMEOUT = 30  # topology.message.timeout.secs in Storm's defaults.yaml (1.x and 2.x)
RECEIVE_BUFFER_KEY = "topology.executor.receive.buffer.size"
BACKPRESSURE_KEY = "topology.backpressure.enable"
SATURATED_CAPACITY = 0.9  # a bolt whose executors were busy this much of the Storm UI's window is saturated
_SHRINK_ROUNDS = 200
_BISECTION_ROUNDS = 40


def scaled(topo: Topology, factor: Fraction) -> Topology:
    """The topology with every spout's rate multiplied by `factor`, kept exact.

    The rate is stored as a Fraction (not a float) so the rate check, which reads rates with
    `exact`, sees exactly rate × factor; the copy is only given to the rate check."""
    spouts = [s.model_copy(update={"rate": exact(s.rate) * factor}) for s in topo.spouts]
    return topo.model_copy(update={"spouts": spouts})


@dataclass(frozen=True)
class StormDefaults:
    """The Storm version the estimates assume and the defaults it brings (docs/storm.md, "Storm versions")."""

    version: str  # as given ("2.6.1", "1.2.3", "2.x"), or "2.x" when assumed
    major: int
    minor: int | None
    given: bool  # from the document (Flux config, the Storm UI's stormVersion, an option); else assumed
    receive_buffer: int  # the default topology.executor.receive.buffer.size
    buffer_unit: str  # "tuples" (2.x) or "slots" (1.x and older: each slot a batch of tuples)
    backpressure_default: bool
    backpressure_configurable: bool  # Storm 2.x ignores topology.backpressure.enable (always on)

    @property
    def line(self) -> str:
        """"Storm 2.x" or "Storm 1.2": the release line whose defaults apply."""
        return f"Storm {self.major}.x" if self.major >= 2 or self.minor is None else f"Storm {self.major}.{self.minor}"


def storm_defaults(version: str | None) -> StormDefaults:
    """The defaults of a Storm version: 2.x (the default when unknown) has receive queues of 32768 tuples per
    executor and backpressure always on; 1.0 has 1024 batched slots and backpressure on by default, 1.1 and 1.2
    off by default (STORM-1949); before 1.0 there is no backpressure."""
    match = re.match(r"\s*([0-9]+)(?:\.([0-9]+))?", version or "")
    if match is None:
        return StormDefaults("2.x", 2, None, False, DEFAULT_RECEIVE_BUFFER, "tuples", True, False)
    major = int(match.group(1))
    minor = int(match.group(2)) if match.group(2) is not None else None
    label = (version or "").strip()
    if major >= 2:
        return StormDefaults(label, major, minor, True, DEFAULT_RECEIVE_BUFFER, "tuples", True, False)
    if major == 1:
        return StormDefaults(label, 1, minor, True, STORM1_RECEIVE_BUFFER, "slots", minor == 0, True)
    return StormDefaults(label, major, minor, True, STORM1_RECEIVE_BUFFER, "slots", False, False)


@dataclass
class QueueFill:
    """A bolt whose queues grow at nominal rates: how fast, when its receive queues are full, and how long a tuple
    then waits in them."""

    bolt: str
    growth: Fraction  # tuples/s its queues gain together
    executors: int
    seconds_to_full: Fraction  # buffer × executors / growth
    slots: int = 0  # buffer × executors: tuples (2.x) or batched slots (1.x) its receive queues hold
    service_rate: Fraction = Fraction(0)  # tuples/s its executors take at nominal timing
    # the most tuples max.spout.pending lets ever reach its queues (trees in flight × tuples per tree); None
    # without max.spout.pending or acking
    pending_bound: Fraction | None = None
    # per spout: (trees it keeps in flight, tuples of one tree that reach the bolt: σ along the anchored paths)
    per_tree: dict[str, tuple[int, Fraction]] = field(default_factory=dict)
    wait_when_full: Fraction | None = None  # seconds a tuple waits in the queues at their fullest
    times_out: bool = False  # that wait exceeds the message timeout (with acking)

    @property
    def never_fills(self) -> bool:
        """max.spout.pending holds fewer tuples in flight than the queues take: they never fill."""
        return self.pending_bound is not None and self.pending_bound < self.slots


@dataclass
class PendingWait:
    """Little's law for one spout's in-flight tuples under max.spout.pending."""

    spout: str
    in_flight: int  # max.spout.pending × the spout's tasks (one per executor)
    throughput: Fraction  # tuples/s it can still emit (throttled)
    wait: Fraction | None  # seconds a tuple is in flight: in_flight / throughput (None: nothing completes)
    times_out: bool  # wait > message timeout


@dataclass
class StormForecast:
    """What Storm does with an overloaded topology (every figure an estimate)."""

    backpressure: bool
    backpressure_source: str  # "config", "default", or "always" (2.x: the config is ignored)
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
    defaults: StormDefaults = field(default_factory=lambda: storm_defaults(None))
    acking: bool = True
    acking_source: str = "default"  # "default" (ackers unset: one per worker), "config", "off" (0 ackers),
    # "unreliable" (replay none)
    backpressure_config: Any = None  # topology.backpressure.enable as the config sets it (2.x ignores it)
    throttle: str = "backpressure"  # what holds the spouts back: "backpressure", "max.spout.pending" or "none"


@dataclass
class TimeoutRisk:
    """A bolt whose queue bound (from the rate check) lets a tuple wait longer than the message timeout."""

    bolt: str
    queue_bound: Fraction  # tuples its queue stays below (the rate check's bound)
    service_rate: Fraction  # its smallest service rate, tuples/s
    wait: Fraction  # queue_bound / service_rate: the longest a tuple waits in it
    timeout: int  # topology.message.timeout.secs (30 when unset)


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
    # what the Storm UI showed of the running topology (a Storm UI import), and the message timeout it is read against
    observed: StormObserved | None = None
    message_timeout_secs: int | None = None
    # bounded queues that still hold tuples longer than the message timeout (with acking; from the rate check's
    # queue bounds, where it gives them)
    timeout_risks: list[TimeoutRisk] = field(default_factory=list)

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
        if self.timeout_risks:
            out["timeouts"] = [{"bolt": r.bolt, "queue_bound": _num(r.queue_bound),
                                "service_rate": _num(r.service_rate), "wait": _num(r.wait), "timeout": r.timeout}
                               for r in self.timeout_risks]
        if self.observed is not None:
            out["observed"] = {**self.observed.model_dump(mode="json"),
                               "signs": saturation_signs(self.observed, self.message_timeout_secs)}
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
                            "seconds_to_full": _num(q.seconds_to_full), "slots": q.slots,
                            "service_rate": _num(q.service_rate), "pending_bound": _num(q.pending_bound),
                            "never_fills": q.never_fills,
                            "per_tree": {s: {"trees": n, "tuples_per_tree": _num(t)}
                                         for s, (n, t) in q.per_tree.items()},
                            "wait_when_full": _num(q.wait_when_full), "times_out": q.times_out}
                           for q in f.queues],
                "storm_version": f.defaults.version, "storm_version_given": f.defaults.given,
                "receive_buffer_unit": "tuples" if f.receive_buffer_source == "config" else f.defaults.buffer_unit,
                "acking": f.acking, "acking_source": f.acking_source, "throttle": f.throttle,
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
    return Headroom(h, h_exact, limiting, g, first, storm, grows_at_exact=g_exact, ignores_failures=report.failures,
                    observed=topo.storm.observed, message_timeout_secs=topo.storm.message_timeout_secs,
                    timeout_risks=_timeout_risks(topo, report))


def _timeout_risks(topo: Topology, report: RateReport) -> list[TimeoutRisk]:
    """Bolts whose queue bound, drained at their smallest service rate, outlasts the message timeout: with acking,
    trees through them can time out and be replayed although nothing is lost (docs/storm.md, "Timeouts")."""
    if not _acking(topo)[0]:
        return []
    timeout = topo.storm.message_timeout_secs or DEFAULT_MESSAGE_TIMEOUT
    risks = []
    for name, b in report.bolts.items():
        bound = b.queue_bound
        if bound is None or b.capacity_min <= 0:
            continue
        wait = exact(bound) / exact(b.capacity_min)
        if wait > timeout:
            risks.append(TimeoutRisk(name, exact(bound), exact(b.capacity_min), wait, timeout))
    return risks


def _acking(topo: Topology) -> tuple[bool, str]:
    """Whether Storm tracks the spout tuples' trees: ackers run (topology.acker.executors unset means one per
    worker) and the spouts replay (the model's `replay` is not 'none'). Without acking Storm acks at emit:
    max.spout.pending throttles nothing and nothing times out."""
    if topo.settings.replay == "none":
        return False, "unreliable"
    if topo.storm.acker_executors == 0:
        return False, "off"
    return True, "config" if topo.storm.acker_executors is not None else "default"


def tuples_per_tree(topo: Topology) -> dict[str, dict[str, Fraction]]:
    """{spout: {bolt: tuples of one spout tuple's tree that reach the bolt}}: σ multiplied along every path
    (each stream's own σ), summed over the paths; assumes every bolt anchors what it emits to what it
    received, so each of those tuples belongs to the spout tuple's tree. Timer sources (tick tuples) are
    no tree's. Read from the rate check's nominal flows with one spout at a time, at a load where no bolt
    saturates (the flows are linear there)."""
    free = failures_off(topo)
    real = [s for s in free.spouts if not s.name.startswith(TICK_PREFIX)]
    out: dict[str, dict[str, Fraction]] = {}
    for spout in real:
        gone = {s.id for s in free.spouts if s.id != spout.id}
        alone = free.model_copy(update={"spouts": [spout],
                                        "subscriptions": [x for x in free.subscriptions if x.source not in gone]})
        f = Fraction(1)
        for _ in range(_SHRINK_ROUNDS):
            m = nominal_margins(scaled(alone, f))
            over = [c / i for i, c in m.values() if i > c]
            if not over:
                break
            f = f * min(over) / 2
        else:
            continue
        per_unit = exact(spout.rate) * f
        out[spout.name] = {n: i / per_unit for n, (i, _c) in m.items() if i > 0}
    return out


def _forecast(topo: Topology, g: Fraction, first: list[str]) -> StormForecast:
    st = topo.storm
    config = st.config
    defaults = storm_defaults(st.storm_version)
    bp_raw = config.get(BACKPRESSURE_KEY)
    if not defaults.backpressure_configurable:
        backpressure = defaults.backpressure_default
        bp_source = "always" if backpressure else "default"
    elif bp_raw is None:
        backpressure, bp_source = defaults.backpressure_default, "default"
    else:
        backpressure, bp_source = bp_raw is not False and str(bp_raw).lower() != "false", "config"
    buf_raw = config.get(RECEIVE_BUFFER_KEY)
    buffer = buf_raw if isinstance(buf_raw, int) and not isinstance(buf_raw, bool) and buf_raw > 0 else None
    size = buffer or defaults.receive_buffer
    timers = {s.name for s in topo.spouts if s.name.startswith(TICK_PREFIX)}  # Storm's ticks: neither throttled
    rates = {s.name: exact(s.rate) for s in topo.spouts if s.name not in timers}  # nor pending
    offered = sum(rates.values(), Fraction(0))
    sustainable = {n: r * g for n, r in rates.items()}
    timeout = st.message_timeout_secs or DEFAULT_MESSAGE_TIMEOUT
    acking, acking_source = _acking(topo)
    pending_applies = acking and st.max_spout_pending is not None
    trees = tuples_per_tree(topo) if pending_applies else {}
    tasks = {s.name: s.executors or 1 for s in topo.spouts}  # max.spout.pending counts per spout task
    queues = []
    bolts = {b.name: b for b in topo.bolts}
    for name, (inflow, capacity) in nominal_margins(topo).items():
        if inflow > capacity and g > 0:  # (an amplifying cycle's queues grow ever faster: no fill time to give)
            growth = inflow - capacity
            executors = bolts[name].parallelism
            q = QueueFill(name, growth, executors, Fraction(size * executors) / growth, slots=size * executors,
                          service_rate=capacity)
            if pending_applies and st.max_spout_pending is not None:
                reach = {s: t[name] for s, t in trees.items() if name in t}
                q.per_tree = {s: (st.max_spout_pending * tasks[s], t) for s, t in reach.items()}
                q.pending_bound = sum((n * t for n, t in q.per_tree.values()), Fraction(0))
            held = min(Fraction(q.slots), q.pending_bound) if q.pending_bound is not None else Fraction(q.slots)
            q.wait_when_full = held / capacity if capacity > 0 else None
            q.times_out = acking and (q.wait_when_full is None or q.wait_when_full > timeout)
            queues.append(q)
    queues.sort(key=lambda q: q.seconds_to_full)
    if queues and all(q.never_fills for q in queues):
        throttle = "max.spout.pending"
    elif backpressure:
        throttle = "backpressure"
    else:
        throttle = "max.spout.pending" if pending_applies else "none"
    pending = []
    if pending_applies and st.max_spout_pending is not None:
        for s in topo.spouts:
            if s.name in timers:
                continue
            in_flight = st.max_spout_pending * tasks[s.name]
            throughput = sustainable[s.name]
            if throughput > 0:
                wait = in_flight / throughput
                pending.append(PendingWait(s.name, in_flight, throughput, wait, wait > timeout))
            else:  # nothing completes: every tuple in flight times out
                pending.append(PendingWait(s.name, in_flight, throughput, None, True))
    return StormForecast(
        backpressure=backpressure, backpressure_source=bp_source,
        sustainable_rates=sustainable, offered_rate=offered, sustainable_rate=offered * g,
        backlog_growth=offered * (1 - g),
        receive_buffer=size, receive_buffer_source="config" if buffer else "default",
        queues=queues, max_spout_pending=st.max_spout_pending, message_timeout_secs=timeout,
        message_timeout_source="config" if st.message_timeout_secs else "default", pending=pending,
        defaults=defaults, acking=acking, acking_source=acking_source, backpressure_config=bp_raw,
        throttle=throttle)


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
                     f"{factor_text(h.grows_at)} at nominal timing")
    return "; ".join(parts)


def assumptions_line(f: StormForecast) -> str:
    """Which Storm version and which of its defaults the estimates below assume."""
    d = f.defaults
    version = (f"Storm {d.version}" if d.given
               else "Storm 2.x (no version given: set one with --storm-version or stormbound.storm_version)")
    if f.receive_buffer_source == "config":
        buffer = f"{RECEIVE_BUFFER_KEY}: {f.receive_buffer} (config)"
    elif d.buffer_unit == "tuples":
        buffer = f"receive queues of {f.receive_buffer} tuples per executor ({d.line}'s default)"
    else:
        buffer = (f"receive queues of {f.receive_buffer} slots per executor ({d.line}'s default; a slot holds a "
                  "batch of tuples)")
    if f.backpressure_source == "always":
        ignored = (f", {BACKPRESSURE_KEY}: {f.backpressure_config} ignored" if f.backpressure_config is not None
                   else "")
        bp = f"backpressure always on ({d.line}{ignored})"
    elif f.backpressure_source == "config":
        bp = f"backpressure {'on' if f.backpressure else 'off'} ({BACKPRESSURE_KEY}: {f.backpressure_config})"
    elif d.major < 1:
        bp = f"no backpressure ({d.line} has none)"
    else:
        bp = f"backpressure {'on' if f.backpressure else 'off'} ({d.line}'s default)"
    timeout = (f"message timeout {f.message_timeout_secs} s"
               + (" (config)" if f.message_timeout_source == "config" else " (Storm's default)"))
    acking = {
        "default": "acking on (topology.acker.executors unset: one acker per worker; spouts assumed reliable)",
        "config": "acking on (topology.acker.executors set; spouts assumed reliable)",
        "off": ("acking off (topology.acker.executors: 0: Storm acks every tuple at emit, so max.spout.pending "
                "throttles nothing and no tuple times out)"),
        "unreliable": "no acking (the spouts do not replay: replay none)",
    }[f.acking_source]
    return f"assuming {version}: {buffer}; {bp}; {timeout}; {acking}"


def throttle_line(h: Headroom, f: StormForecast) -> str:
    """What holds the spouts back, and the source's backlog that results."""
    factor = factor_text(h.grows_at or Fraction(0))
    rates = (f"Storm throttles the spouts to {decimal(f.sustainable_rate)} tuples/s of the "
             f"{decimal(f.offered_rate)} offered ({factor} at nominal timing): the source's backlog (e.g. Kafka lag) "
             f"grows by {decimal(f.backlog_growth)} tuples/s")
    if f.throttle == "max.spout.pending":
        why = ("max.spout.pending binds first: the tuples it lets in flight never fill a receive queue, so "
               "backpressure never triggers" if all(q.never_fills for q in f.queues)
               else "backpressure is off, so only max.spout.pending holds the spouts back")
        return f"{why}; {rates}"
    if f.throttle == "backpressure":
        return f"with backpressure, {rates}"
    return (f"backpressure is off: the spouts keep emitting {decimal(f.offered_rate)} tuples/s and the queues "
            "below grow until the worker runs out of memory")


def queue_lines(f: StormForecast, most: int = 5) -> list[str]:
    """Per growing bolt: when its receive queues fill (or why they never do), and whether a tuple then waits
    longer than the message timeout."""
    lines = []
    d = f.defaults
    unit = "tuples" if f.receive_buffer_source == "config" or d.buffer_unit == "tuples" else "slots"
    at_least = "" if unit == "tuples" else "at least "
    for q in f.queues[:most]:
        executors = f"{q.executors} executor{'s' if q.executors != 1 else ''}"
        default = "" if f.receive_buffer_source == "config" else f", {d.line}'s default"
        size = f"{executors} × {f.receive_buffer} {unit}{default}"
        if q.never_fills and q.pending_bound is not None:
            trees = " + ".join(f"{n} {s} trees × {decimal(t)}" for s, (n, t) in q.per_tree.items())
            line = (f"{q.bolt}'s receive queues ({size}) never fill: max.spout.pending lets at most "
                    f"{decimal(q.pending_bound, 5)} tuples ever reach them ({trees} tuples per tree, assuming every "
                    "emit is anchored: σ along the paths), so max.spout.pending binds before backpressure")
        else:
            line = (f"{q.bolt}'s receive queues ({size}) fill in {at_least}about {duration(q.seconds_to_full)} at "
                    f"the offered rates and nominal timing (they gain {decimal(q.growth)} tuples/s)")
        if q.times_out and q.wait_when_full is not None:
            line += (f"; then each tuple waits {at_least}{duration(q.wait_when_full)} in them (at "
                     f"{decimal(q.service_rate)} tuples/s), longer than the message timeout "
                     f"({f.message_timeout_secs} s): every tree through {q.bolt} times out and its replay piles on")
        lines.append(line)
    if len(f.queues) > most:
        lines.append(f"and {len(f.queues) - most} more growing bolts")
    return lines


def pending_lines(f: StormForecast) -> list[str]:
    """Little's law for each reliable spout's tuples in flight under max.spout.pending (with acking only)."""
    lines = []
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


def storm_lines(h: Headroom) -> list[str]:
    """What Storm does with an overloaded topology, a line per effect (estimates), after the assumptions."""
    f = h.storm
    if f is None:
        return []
    return [assumptions_line(f), throttle_line(h, f), *queue_lines(f), *pending_lines(f)]


def saturation_signs(observed: StormObserved, timeout: int | None, span: str | None = None) -> list[str]:
    """What the Storm UI showed that says its measured rates are throttled: a bolt busy nearly all the window,
    failed tuples, a complete latency of half the message timeout or more, a growing lag."""
    span = span or f"the last {decimal(observed.window_seconds)} s"
    signs = []
    capacity, bolt = observed.busiest_capacity, observed.busiest_bolt
    if capacity is not None and capacity >= SATURATED_CAPACITY:
        signs.append(f"{bolt}'s capacity is {capacity:.3f} (the Storm UI's capacity, the model's ρ)")
    if observed.failed:
        per_s = observed.failed / observed.window_seconds
        signs.append(f"{observed.failed} spout tuples failed over {span} ({decimal(per_s)}/s; timeouts count as "
                     "failures)")
    latency = observed.complete_latency_ms
    limit = timeout or DEFAULT_MESSAGE_TIMEOUT
    if latency is not None and latency >= 500 * limit:
        signs.append(f"the complete latency is {decimal(latency / 1000)} s against the {limit} s message timeout")
    growing = {n: g for n, g in observed.lag_growth.items() if g > 0}
    if growing:
        grows = ", ".join(f"{decimal(g)} tuples/s at {n}" for n, g in growing.items())
        signs.append(f"the source's lag grows by {grows} (added to the spout's rate: the offered load)")
    return signs


def observed_line(h: Headroom) -> str | None:
    """The Storm UI's signs of saturation, and what they mean for the rates the verdict read."""
    if h.observed is None:
        return None
    signs = saturation_signs(h.observed, h.message_timeout_secs)
    if not signs:
        return None
    grown = any(g > 0 for g in h.observed.lag_growth.values())
    meaning = ("the spout rates here add the lag's growth to what the spouts emitted: the offered load, at least"
               if grown else "the spout rates here are what the spouts emitted, throttled: the load offered is higher "
               "(import with --lag-interval S to add the lag's growth)")
    return f"the Storm UI shows a saturated topology: {'; '.join(signs)}; under backpressure it shows throttled " \
           f"rates, so {meaning}"


def timeout_lines(h: Headroom) -> list[str]:
    """A line per bounded queue whose wait can exceed the message timeout."""
    return [f"{r.bolt}'s queue stays below {decimal(r.queue_bound)} tuples, but a tuple may wait up to "
            f"{duration(r.wait)} in it (at {decimal(r.service_rate)} tuples/s), longer than the message timeout "
            f"({r.timeout} s): trees through {r.bolt} can time out and be replayed although nothing is lost"
            for r in h.timeout_risks]


def capacity_lines(h: Headroom) -> list[str]:
    """The capacity block of `check`, `verify` and the report: the headline, then Storm's response."""
    lines = [headline(h), *timeout_lines(h)]
    seen = observed_line(h)
    if seen is not None:
        lines.append(seen)
    more = storm_lines(h)
    if more:
        lines += more
        lines.append("(headroom and growth factors are exact in the model; what Storm does is an estimate from "
                     "nominal timing)")
    if h.ignores_failures:
        lines.append("the headroom and the growth factor ignore failures; the statuses and the suggested "
                     "parallelism include them")
    return lines

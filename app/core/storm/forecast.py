"""What Storm does with an overloaded topology (G < 1), from the document's Storm settings and the defaults
of its Storm version (2.x when unknown: `storm_defaults`). Every figure is an estimate from the model's
nominal timing, not a proof (docs/storm.md):

* backpressure (always on in 2.x, on by default in 1.0, off by default in 1.1 and 1.2) throttles the spouts to
  G × their rates, and the source's backlog (Kafka lag) grows by Σ rate × (1 − G) tuples/s;
* each growing bolt's receive queues (`topology.executor.receive.buffer.size` per executor: 32768 tuples in
  2.x, 1024 batched slots in 1.x) fill in buffer × executors / growth seconds, and a tuple then waits
  buffer × executors / service rate, warned when above `topology.message.timeout.secs` (30 when unset);
* with acking (ackers and reliable spouts) and `topology.max.spout.pending` P, a spout with n tasks keeps
  P × n trees in flight: at most Σ P × n × (tuples per tree, σ along the anchored paths) tuples can reach a
  bolt, and when that is below its queue max.spout.pending binds before backpressure; Little's law
  (L = λW) at the throttled rate λ gives each tree's waiting time W, against the message timeout.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from app.core.failures import failures_off
from app.core.numbers import exact
from app.core.rates import RateReport, nominal_margins
from app.core.storm.flux.ticks import TICK_PREFIX
from app.core.storm.words import decimal
from app.core.topology import DEFAULT_MESSAGE_TIMEOUT, StormObserved, Topology

DEFAULT_RECEIVE_BUFFER = 32768  # topology.executor.receive.buffer.size in Storm 2.x's defaults.yaml (tuples)
STORM1_RECEIVE_BUFFER = 1024  # the same key in Storm 1.x: slots of its Disruptor queue, each a batch of tuples
RECEIVE_BUFFER_KEY = "topology.executor.receive.buffer.size"
BACKPRESSURE_KEY = "topology.backpressure.enable"
#: failures are a sign of saturation from this share of the spout tuples acked or failed on (a handful in a busy
#: window is noise: a bolt's exception, a restart; a saturated topology times tuples out by the thousand)
SATURATED_FAILED_FRACTION = 0.01
SATURATED_CAPACITY = 0.9  # a bolt whose executors were busy this much of the Storm UI's window is saturated
_SHRINK_ROUNDS = 200


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
    # an asynchronous bolt's threads per executor (docs/model.md section 8): its executors enqueue all they receive,
    # so its receive queues never fill and its internal queues grow; None for an ordinary bolt
    threads: int | None = None
    seconds_to_timeout: Fraction | None = None  # asynchronous: when its internal queues make a tuple wait too long

    @property
    def fills_receive_queues(self) -> bool:
        """Its receive queues fill (and so trigger backpressure): not under max.spout.pending, nor asynchronous."""
        return not self.never_fills and self.threads is None

    @property
    def never_fills(self) -> bool:
        """max.spout.pending holds fewer tuples in flight than the queues take: they never fill."""
        return self.pending_bound is not None and self.pending_bound < self.slots


@dataclass
class JoinCache:
    """A join waiting for every branch whose cache grows at the offered rates (docs/model.md section 11)."""

    bolt: str
    slowest: str  # the branch it waits for
    growth: Fraction  # messages/s its cache gains at the offered rates and nominal timing
    max_cache: int | None  # Metron's maxCacheSize
    in_flight: int | None  # the most trees max.spout.pending lets in flight through it (None: no such limit)
    entries: Fraction = Fraction(0)  # entries/s it opens at nominal timing: its fastest branch's parts (a message each)


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
    caches: list[JoinCache] = field(default_factory=list)  # joins whose caches grow at the offered rates


@dataclass
class TimeoutRisk:
    """A bolt whose queue bound (from the rate check) lets a tuple wait longer than the message timeout."""

    bolt: str
    queue_bound: Fraction  # tuples its queue stays below (the rate check's bound)
    service_rate: Fraction  # its smallest service rate, tuples/s
    wait: Fraction  # queue_bound / service_rate: the longest a tuple waits in it
    timeout: int  # topology.message.timeout.secs (30 when unset)


def timeout_risks(topo: Topology, report: RateReport) -> list[TimeoutRisk]:
    """Bolts whose queue bound, drained at their smallest service rate, outlasts the message timeout: with acking,
    trees through them can time out and be replayed although nothing is lost (docs/storm.md, "Timeouts")."""
    if not acking_of(topo)[0]:
        return []
    timeout = topo.storm.message_timeout
    risks = []
    for name, b in report.bolts.items():
        bound = b.queue_bound
        if bound is None or b.capacity_min <= 0:
            continue
        wait = exact(bound) / exact(b.capacity_min)
        if wait > timeout:
            risks.append(TimeoutRisk(name, exact(bound), exact(b.capacity_min), wait, timeout))
    return risks


def acking_of(topo: Topology) -> tuple[bool, str]:
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


def forecast(topo: Topology, g: Fraction, first: list[str],
             nominal: dict[str, tuple[Fraction, Fraction]] | None = None) -> StormForecast:
    """What Storm does past the factor `g` at which `first` start to grow; `nominal` is the topology's
    `nominal_margins` when already made (its rate analysis: app/core/rates/report.py)."""
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
    timeout = st.message_timeout
    acking, acking_source = acking_of(topo)
    pending_applies = acking and st.max_spout_pending is not None
    trees = tuples_per_tree(topo) if pending_applies else {}
    tasks = {s.name: s.executors or 1 for s in topo.spouts}  # max.spout.pending counts per spout task
    queues = []
    bolts = {b.name: b for b in topo.bolts}
    for name, (inflow, capacity) in (nominal if nominal is not None else nominal_margins(topo)).items():
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
            if bolts[name].threads is not None:  # its internal queues hold what grows, without bound
                q.threads = bolts[name].threads
                q.wait_when_full = q.pending_bound / capacity if q.pending_bound is not None and capacity else None
                q.times_out = acking and (q.wait_when_full is None or q.wait_when_full > timeout)
                q.seconds_to_timeout = timeout * capacity / growth
            queues.append(q)
    queues.sort(key=lambda q: q.seconds_to_full)
    if queues and not any(q.fills_receive_queues for q in queues):
        throttle = "max.spout.pending" if pending_applies else "none"
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
    caches = _join_caches(topo, tasks, trees if pending_applies else None)
    return StormForecast(
        backpressure=backpressure, backpressure_source=bp_source,
        sustainable_rates=sustainable, offered_rate=offered, sustainable_rate=offered * g,
        backlog_growth=offered * (1 - g),
        receive_buffer=size, receive_buffer_source="config" if buffer else "default",
        queues=queues, max_spout_pending=st.max_spout_pending, message_timeout_secs=timeout,
        message_timeout_source="config" if st.message_timeout_secs else "default", pending=pending,
        defaults=defaults, acking=acking, acking_source=acking_source, backpressure_config=bp_raw,
        throttle=throttle, caches=caches)


def _join_caches(topo: Topology, tasks: dict[str, int], trees: dict[str, dict[str, Fraction]] | None
                 ) -> list[JoinCache]:
    """The joins whose caches grow at the offered rates (app/core/rates/joins.py), with the trees max.spout.pending
    lets in flight through each (one message a tree)."""
    if not topo.waiting_joins():
        return []
    from app.core.rates import RateFigures
    from app.core.rates.joins import branch_name, join_figures

    e = RateFigures(topo)
    out = []
    for b in topo.waiting_joins():
        j = join_figures(e, b)
        if j is None or not j.grows:
            continue
        pending = topo.storm.max_spout_pending
        flight = (sum(pending * tasks[s] for s, reach in trees.items() if b.name in reach)
                  if trees is not None and pending is not None else None)
        out.append(JoinCache(b.name, branch_name(e, j.slowest), j.growth, j.max_cache, flight or None,
                             max(j.nominal.values())))
    return out


def saturation_signs(observed: StormObserved, timeout: int | None, span: str | None = None) -> list[str]:
    """What the Storm UI showed that says its measured rates are throttled: a bolt busy nearly all the window,
    failed tuples (at least SATURATED_FAILED_FRACTION of those acked or failed: a rate, not a count), a complete
    latency of half the message timeout or more, a growing lag."""
    span = span or f"the last {decimal(observed.window_seconds)} s"
    signs = []
    capacity, bolt = observed.busiest_capacity, observed.busiest_bolt
    if capacity is not None and capacity >= SATURATED_CAPACITY:
        signs.append(f"{bolt}'s capacity is {capacity:.3f} (the Storm UI's capacity, the model's ρ)")
    done = observed.failed + (observed.acked or 0)
    if observed.failed and observed.failed >= SATURATED_FAILED_FRACTION * done:
        per_s = observed.failed / observed.window_seconds
        share = "" if observed.acked is None else f", {observed.failed / done:.3g} of the tuples acked or failed"
        signs.append(f"{observed.failed} spout tuples failed over {span} ({decimal(per_s)}/s{share}; timeouts count "
                     "as failures)")
    latency = observed.complete_latency_ms
    limit = timeout or DEFAULT_MESSAGE_TIMEOUT
    if latency is not None and latency >= 500 * limit:
        signs.append(f"the complete latency is {decimal(latency / 1000)} s against the {limit} s message timeout")
    growing = {n: g for n, g in observed.lag_growth.items() if g > 0}
    if growing:
        grows = ", ".join(f"{decimal(g)} tuples/s at {n}" for n, g in growing.items())
        signs.append(f"the source's lag grows by {grows} (added to the spout's rate: the offered load)")
    return signs

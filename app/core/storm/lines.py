"""Capacity in Storm's terms, in words: the headroom line and what Storm does past it, one presentation
function per block (`assumptions_line`, `throttle_line`, `queue_lines`, `pending_lines`, `timeout_lines`,
`observed_line`), apart from the analysis (app/core/headroom.py, app/core/storm/forecast.py). `check`,
`verify`, the report and the GUI print these same lines.
"""

from __future__ import annotations

from fractions import Fraction

from app.core.headroom import Headroom
from app.core.rates.workers_check import WorkerCheck
from app.core.storm.forecast import (
    BACKPRESSURE_KEY,
    RECEIVE_BUFFER_KEY,
    JoinCache,
    QueueFill,
    StormForecast,
    saturation_signs,
)
from app.core.storm.words import decimal, duration, factor_text
from app.core.topology import DEFAULT_MESSAGE_TIMEOUT
from app.core.words import listed, more


def headline(h: Headroom) -> str:
    """One line: the headroom and the first bolt to saturate."""
    if h.headroom is None and h.grows_at is None:
        return "headroom: unlimited (no bolt receives tuples)"
    parts = []
    if h.headroom is not None:
        if h.headroom == 0:  # (limiting bolts here: joins whose branches fill their caches unequally at any rate)
            parts.append("headroom: no load factor is proven bounded" + (
                f" (the cache of {listed(h.limiting_bolts)} is not proven bounded at any rate: docs/model.md section "
                "11)" if h.limiting_bolts else ""))
        else:
            verb = "limits" if len(h.limiting_bolts) == 1 else "limit"
            who = f" ({listed(h.limiting_bolts)} {verb} it)" if h.limiting_bolts else ""
            bound = "" if h.headroom_exact else " at least"
            parts.append(f"headroom{bound} {factor_text(h.headroom)}: every bolt is proven bounded while the "
                         f"spouts' rates are multiplied by less than {decimal(h.headroom)}{who}")
    if h.grows_at == 0:
        verb = "grows" if len(h.first_to_saturate) == 1 else "grow"
        parts.append(f"{listed(h.first_to_saturate)} {verb} at any load (a cycle passes on at least as many "
                     "tuples as it receives; no parallelism fixes it)")
    elif h.grows_at is not None:
        verb = "saturates" if len(h.first_to_saturate) == 1 else "saturate"
        parts.append(f"{listed(h.first_to_saturate)} {verb} first: surely growing above "
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
               else "no receive queue fills (asynchronous bolts enqueue all they receive), so only "
                    "max.spout.pending holds the spouts back" if not any(q.fills_receive_queues for q in f.queues)
               else "backpressure is off, so only max.spout.pending holds the spouts back")
        return f"{why}; {rates}"
    if f.queues and not any(q.fills_receive_queues for q in f.queues):
        return (f"no receive queue fills (asynchronous bolts enqueue all they receive), so backpressure never "
                f"starts: the spouts keep emitting {decimal(f.offered_rate)} tuples/s and the internal queues grow "
                "until the worker runs out of memory")
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
        if q.threads is not None:
            lines.append(_internal_queue_line(f, q))
            continue
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
        lines.append(more(len(f.queues) - most, "growing bolts"))
    return lines


def _internal_queue_line(f: StormForecast, q: QueueFill) -> str:
    """A growing asynchronous bolt (docs/model.md section 8): its internal queues grow, not its receive queues."""
    line = (f"{q.bolt} is asynchronous ({q.executors} executor{'s' if q.executors != 1 else ''} × {q.threads} "
            f"threads): its executors enqueue all they receive, so its receive queues never fill and backpressure "
            f"never starts for it; its internal queues gain {decimal(q.growth)} tuples/s at the offered rates and "
            "nominal timing, without bound unless the bolt caps them (StormCrawler's fetcher.max.urls.in.queues, "
            "which moves the wait into the receive queues)")
    if q.never_fills and q.pending_bound is not None:
        line += (f"; max.spout.pending lets at most {decimal(q.pending_bound, 5)} tuples ever reach it, a wait of "
                 f"{duration(q.wait_when_full or Fraction(0))}")
    if q.times_out and q.seconds_to_timeout is not None:
        line += (f"; after about {duration(q.seconds_to_timeout)} a tuple waits in them longer than the message "
                 f"timeout ({f.message_timeout_secs} s): its trees time out there and their replays pile on")
    return line


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
    return [assumptions_line(f), throttle_line(h, f), *queue_lines(f), *join_lines(f), *pending_lines(f)]


def join_lines(f: StormForecast) -> list[str]:
    """Per join whose cache grows (docs/model.md section 11): where the waiting parts are, what bounds them in Storm
    (the throttle, max.spout.pending, Metron's maxCacheSize) and what happens past it."""
    lines = []
    for c in f.caches:
        line = (f"{c.bolt} is a join waiting for every branch: the parts of a message wait in its cache (the worker's "
                f"heap, not a receive queue) for {c.slowest}, and at the offered rates the cache gains "
                f"{decimal(c.growth)} messages/s")
        if f.throttle != "none":
            line += ("; once Storm throttles the spouts every branch delivers the throttled rate and the cache stops "
                     f"growing, holding what waits behind {c.slowest}")
        if c.in_flight is not None:
            line += f"; max.spout.pending keeps at most {c.in_flight} trees in flight, so it holds at most as many " \
                    "messages" + ("" if c.max_cache is None else
                                  f", {'within' if c.in_flight <= c.max_cache else 'beyond'} Metron's maxCacheSize "
                                  f"{c.max_cache}")
        elif c.max_cache is not None:
            line += _eviction_words(c, f.message_timeout_secs)
        lines.append(line)
    return lines


def _eviction_words(c: JoinCache, timeout: int) -> str:
    """What Metron's join does once its cache is full, unthrottled (docs/model.md section 11, "The cache's limit"):
    it evicts at the cache's growth rate, reports an error and neither acks nor fails the evicted parts, so their
    trees time out and are replayed; and once the slowest branch lags by more than an entry's stay, nothing joins."""
    stay = Fraction(c.max_cache or 0) / c.entries if c.entries else None
    return (f"; Metron's maxCacheSize {c.max_cache} may then fill (after about "
            f"{duration(Fraction(c.max_cache or 0) / c.growth)} unthrottled), and it then evicts about "
            f"{decimal(c.growth)} messages/s, the oldest: Metron only reports an error for an evicted message and "
            f"neither acks nor fails its parts, so their trees time out after topology.message.timeout.secs "
            f"({timeout} s) and the spouts replay them, {decimal(c.growth)} more messages/s on every branch, "
            f"{c.slowest} included"
            + (f"; once {c.slowest}'s parts come more than {duration(stay)} after the others (an entry's stay: "
               f"maxCacheSize over the {decimal(c.entries)} entries/s it opens), each finds its message evicted and "
               "opens an entry that never completes, and the join completes nothing" if stay is not None else "")
            + " (the model does not play eviction: a cache that grows is `grows`)")


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
    if h.worker_check is not None:
        lines.append(worker_deaths_line(h.worker_check, h.bolt_failures_survived))
    elif h.workers is not None:
        lines.append(worker_line(h.workers, h.message_timeout_secs, h.ignores_failures, h.worker_loss))
    return lines


#: the worker-death verdicts of the capacity line, and their short forms (the app's capacity label)
WORKER_VERDICTS = {True: ("it survives them", "survives worker deaths"),
                   False: ("it does not survive them", "does not survive worker deaths"),
                   None: ("it is not proven to survive them", "not proven to survive worker deaths")}
WORKER_LINE_START = "worker deaths "


def worker_deaths_short(lines: list[str]) -> str | None:
    """The worker-death verdict of capacity lines in a few words (None: they give none)."""
    for line in lines:
        if line.startswith(WORKER_LINE_START):
            for words, short in WORKER_VERDICTS.values():
                if f"): {words}" in line:
                    return short
            return "worker deaths not decided"
    return None


def capacity_suffix(lines: list[str]) -> str:
    """What the app's capacity label adds to the headline: the worker-death verdict in a few words, and a pointer to
    its tooltip when that holds more than the headline and the worker line (Storm's response, timeouts...)."""
    deaths = worker_deaths_short(lines)
    more = [line for line in lines[1:] if not line.startswith(WORKER_LINE_START)]
    return (f"; {deaths}" if deaths else "") + (" — overloaded: see the tooltip" if more else "")


def worker_deaths_line(c: WorkerCheck, bolt_failures: bool | None) -> str:
    """Whether the topology survives its workers' deaths, in Storm's terms (docs/model.md section 9)."""
    wm = c.model
    head = (f"{WORKER_LINE_START}(topology.workers {wm.workers}, each dying at most once every "
            f"{duration(wm.period)} and restarting in {duration(wm.min_restart)} to {duration(wm.max_restart)}, "
            f"message timeout {duration(wm.timeout)})")
    pending = [f"{c.names[s]} {decimal(p, 5)}" for s, p in c.pending.items() if p]
    losses = [x for x in c.loss if x is not None]
    cost = ""
    if losses and len(losses) == len(c.loss):
        cost = (f"; one death of a worker loses at most {decimal(max(losses), 5)} tuples in queues, in work"
                + (" and " if not c.windowed else ", in windows (unacked: their trees time out too) and ")
                + "while it restarts")
    if pending:
        cost += (f"; the trees a death breaks time out and are replayed {duration(wm.timeout)} to "
                 f"{duration(2 * wm.timeout)} after their emission: the trees pending at the death, at most "
                 f"{listed(pending)}, and those emitted while the worker restarts")
    words = WORKER_VERDICTS[c.survives][0]
    if c.survives:
        longest = [t for t in c.completion.values() if t is not None]
        slowest = f"; no tree outlives the timeout (the longest takes {duration(max(longest))})" if longest else ""
        verdict = f"{words}: every bolt stays bounded with the replays" + cost + slowest
    elif c.survives is False:
        (first,) = [v for v in c.bolts.values() if v.status == "grows"][:1]
        verdict = f"{words}: {first.note}" + cost
    else:
        verdict = f"{words}: {c.reason}" + cost
    if bolt_failures is True and c.survives is not True:
        verdict += "; it does survive the failures of single bolts with immediate replays (section 7's statuses)"
    return (f"{head}: {verdict}; the rate check decides this; in verify's search the linear program's 'no repeating "
            "growth' plays worker deaths, the simulation and then the solver play them for a bolt nothing else decided "
            "(with an explicit storm.assignment: a certified lasso with deaths, docs/model.md 9.5), and the other "
            "phases play none, so a lasso without deaths is a run in which no worker dies (docs/model.md 9.4)")


def worker_line(workers: int, timeout: int | None, failures: bool, loss: Fraction | None = None) -> str:
    """What a worker's death does, and that no verdict here covers it (docs/model.md section 9)."""
    shown = f"{timeout} s" if timeout is not None else f"{DEFAULT_MESSAGE_TIMEOUT} s, Storm's default"
    which = ("the statuses with failures are per bolt with immediate replays" if failures
             else "the statuses are for runs in which no worker dies")
    lost = ("" if loss is None else f"; its one worker runs every executor, so a death loses at most "
            f"{decimal(loss, 5)} tuples in queues and in work (every bolt's queue bound and batch)")
    return (f"worker deaths are not in the model: with topology.workers {workers}, a worker's death stops every "
            "executor it runs at once (spouts and ackers too), and Storm replays the lost trees only when their "
            f"message timeout ({shown}) expires{lost}; {which}, so none covers a worker's death (set "
            "storm.worker_min_ttf, a worker's shortest time between deaths, to decide it: docs/model.md section 9)")

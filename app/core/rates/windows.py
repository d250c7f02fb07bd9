"""A windowed bolt's figures beyond its queue (docs/model.md section 10, docs/boundedness.md "Windows").

A count-windowed bolt: the tuples it holds unacked (its unevaluated tuples and its windows) and how long Storm keeps a
tuple pending in them, against `topology.message.timeout.secs`; the capacity and the queue bound are the rate check's
own (`RateFigures`: C_TAKE = executors × sliding interval, a start of max(Q₀, C − 1)). A duration-windowed bolt
(docs/model.md section 10.3): its timer's evaluations, the tuples it holds and its every-run hold time
(`RateFigures.timed`: G). A mixed window (section 10.4) has its trigger's figures (a count slide: the count window's
queue; a duration slide: the timer's) and its eviction's acks, with no every-run hold bound either way."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from app.core.numbers import exact
from app.core.rates.flows import RateFigures
from app.core.topology import Bolt


@dataclass(frozen=True)
class WindowFigures:
    """One bolt triggered by whole slides: `slide` S in tuples, on `executors` executors, and `length` L in tuples (a
    count window) or in seconds (`timed_eviction`: `withWindow(Duration L, Count S)`, docs/model.md section 10.4)."""

    executors: int
    length: Fraction
    slide: int
    pending: Fraction | None  # tuples it holds unacked in every run: queue bound + executors × L (None: no bound);
    #                           time eviction: B + executors × (B + R·L + b)
    hold_tuples: int  # a tuple is acked once this many more have reached its executor at most: L + S − 1 (count L);
    #                   time eviction: S, the tuples its first trigger past L seconds waits for at most
    hold_nominal: Fraction | None  # that many tuples' time at the nominal inflow (s; None: nothing arrives); time
    #                                eviction: L + that
    timeout: Fraction  # topology.message.timeout.secs
    timed_eviction: bool = False  # a duration length on a count slide (mixed: docs/model.md section 10.4)

    @property
    def times_out(self) -> bool:
        """At the nominal inflow, a tuple waits in its windows longer than the message timeout (or forever)."""
        return self.hold_nominal is None or self.hold_nominal > self.timeout


def window_figures(e: RateFigures, bolt: Bolt) -> WindowFigures | None:
    """The figures of a bolt with a count window (None for any other bolt)."""
    window = bolt.count_window
    if window is None:
        return None
    slide = int(window.interval)
    executors = e.burst[bolt.id] // slide  # C_TAKE = executors × S (a suggestion's parallelism included)
    bound = e.queue_bound[bolt.id]
    inflow = e.in_nominal[bolt.id]
    timeout = Fraction(e.topo.storm.message_timeout)
    if window.mixed:  # Duration L, Count S: acked at the first trigger (every S tuples) at least L after it arrived;
        # an executor's windows hold what it added in the L seconds before its last trigger: what it held then and
        # what arrived since (docs/boundedness.md, "Mixed windows")
        length = exact(window.length)
        return WindowFigures(executors, length, slide, None if bound is None else
                             bound + executors * (bound + e.in_max[bolt.id] * length + e.in_burst[bolt.id]), slide,
                             length + slide * executors / inflow if inflow > 0 else None, timeout, True)
    count = int(window.length)
    hold = count + slide - 1
    return WindowFigures(executors, Fraction(count), slide, None if bound is None else bound + executors * count,
                         hold, hold * executors / inflow if inflow > 0 else None, timeout)


def window_note(e: RateFigures, bolt: Bolt) -> str:
    """The explanation's words for a count-windowed bolt, in Storm's terms (empty for any other bolt)."""
    w = window_figures(e, bolt)
    if w is None or bolt.window is None:
        return ""
    each = "its executor runs" if w.executors == 1 else f"each of its {w.executors} executors runs"
    text = (f"; it is a windowed bolt ({bolt.window.phrase()}): {each} execute(TupleWindow) once per {w.slide} "
            f"tuples it receives, {float(bolt.alpha):.3g} s each, so it takes {w.slide} tuples a batch per executor "
            f"(C = {e.burst[bolt.id]})")
    if w.pending is not None:
        text += (f"; it holds at most {float(w.pending):.4g} tuples not yet acked (its queue bound and "
                 + (f"per executor what it held and received over {fmt_s(w.length)} in windows)"
                    if w.timed_eviction else f"{w.executors} × {w.length} in windows)"))
    if w.timed_eviction:
        text += (f"; Storm acks a tuple at the first trigger at least {fmt_s(w.length)} after it arrived, and a "
                 f"trigger waits for {w.slide} more tuples on its executor: no bound holds in every run (a trigger "
                 "waits for tuples still to come)")
    else:
        text += (f"; Storm acks a tuple when it leaves its last window, up to {w.hold_tuples} tuples later on its "
                 "executor")
    if w.hold_nominal is None:
        return text + (": nothing reaches it at nominal timing, so a tuple it holds is never acked and its tree "
                       f"times out ({float(w.timeout):g} s)")
    verdict = "beyond" if w.times_out else "within"
    return (text + f": about {float(w.hold_nominal):.3g} s at the nominal inflow, {verdict} "
            f"topology.message.timeout.secs ({float(w.timeout):g} s)"
            + (", so its trees time out and are replayed" if w.times_out else ""))


@dataclass(frozen=True)
class DurationFigures:
    """One bolt a timer triggers (docs/model.md section 10.3): `slide` S in seconds, `length` L in seconds (a duration
    window) or in tuples (`counted_eviction`: `withWindow(Count L, Duration S)`, section 10.4); every executor's
    timer evaluates whatever arrived every S, or back to back once an evaluation outlasts S."""

    executors: int
    length: Fraction
    slide: Fraction
    gap: Fraction  # G = (1+τ)·max(S, α): the longest time between two evaluations of an executor, in every run
    keeps_timer: bool  # α(1+τ) ≤ S: no evaluation outlasts the sliding interval
    pending: Fraction | None  # tuples held unacked in every run: Q₀ + b + R·hold_max (count L: queue + executors × L)
    hold_max: Fraction | None  # a tuple is acked at most L − S + 2G after it reaches the bolt, in every run (None: a
    #                            count eviction, which waits for L tuples still to come)
    hold_nominal: Fraction | None  # the same at nominal timing: L − S + 2·max(S, α) (L + S while α ≤ S); count L: L
    #                                tuples' time at the nominal inflow + max(S, α) (None: nothing arrives)
    timeout: Fraction  # topology.message.timeout.secs
    counted_eviction: bool = False  # a count length on a duration slide (mixed: docs/model.md section 10.4)

    @property
    def times_out(self) -> bool:
        """At nominal timing a tuple may wait in its windows longer than the message timeout (or forever)."""
        return self.hold_nominal is None or self.hold_nominal > self.timeout


def duration_figures(e: RateFigures, bolt: Bolt) -> DurationFigures | None:
    """The figures of a bolt with a duration window (None for any other bolt)."""
    window = bolt.duration_window
    if window is None or bolt.id not in e.timed:
        return None
    length, slide, alpha = exact(window.length), exact(window.interval), exact(bolt.alpha)
    gap, hold = e.timed[bolt.id], timed_hold(e, bolt.id)
    bound = e.queue_bound[bolt.id]
    timeout = Fraction(e.topo.storm.message_timeout)
    if hold is None:  # Count L, Duration S: acked at the first run once L more tuples reached its executor (10.4)
        inflow = e.in_nominal[bolt.id]
        return DurationFigures(bolt.parallelism, length, slide, gap, alpha * (1 + e.tau) <= slide,
                               None if bound is None else bound + bolt.parallelism * length, None,
                               length * bolt.parallelism / inflow + max(slide, alpha) if inflow > 0 else None,
                               timeout, True)
    return DurationFigures(bolt.parallelism, length, slide, gap, alpha * (1 + e.tau) <= slide,
                           None if bound is None else e.q0 + e.in_burst[bolt.id] + e.in_max[bolt.id] * hold,
                           hold, length - slide + 2 * max(slide, alpha), timeout)


def timed_hold(e: RateFigures, ident: str) -> Fraction | None:
    """A duration-windowed bolt's hold bound, L − S + 2G (None for any other bolt): Storm acks a tuple at most this
    long after it arrives, in every run, whatever arrives (docs/boundedness.md, "Duration windows"); its children are
    emitted by then too (G + α(1+τ) ≤ L − S + 2G), so it is the bolt's sojourn bound in docs/latency.md. None for a
    count length on a timer too (docs/model.md section 10.4): it acks once L more tuples came, which nothing bounds."""
    bolt = e.by_id[ident]
    window = bolt.duration_window if isinstance(bolt, Bolt) else None
    if window is None or window.mixed or ident not in e.timed:
        return None
    return exact(window.length) - exact(window.interval) + 2 * e.timed[ident]


def duration_note(e: RateFigures, bolt: Bolt) -> str:
    """The explanation's words for a duration-windowed bolt, in Storm's terms (empty for any other bolt)."""
    w = duration_figures(e, bolt)
    if w is None or bolt.window is None:
        return ""
    each = "its executor's timer runs" if w.executors == 1 else f"each of its {w.executors} executors' timers runs"
    text = (f"; it is a windowed bolt ({bolt.window.phrase()}): {each} execute(TupleWindow) every {fmt_s(w.slide)} "
            f"on whatever arrived, {fmt_s(exact(bolt.alpha))} each")
    text += (", so its evaluations keep their timer" if w.keeps_timer else
             ", longer than its sliding interval: its evaluations fall behind their timer and run back to back "
             "(Storm logs 'Possible clock drift or long running computation in window')"
             + ("" if w.counted_eviction else
                f", each window then spanning up to {fmt_s(w.length - w.slide + w.gap)}"))
    if w.pending is not None:
        text += f"; it holds at most {float(w.pending):.4g} tuples not yet acked"
    limit = f"topology.message.timeout.secs ({float(w.timeout):g} s)"
    if w.hold_max is None:  # a count eviction on a timer (docs/model.md section 10.4)
        text += (f"; Storm acks a tuple at the first run once {w.length} more tuples reached its executor: no bound "
                 "holds in every run (it waits for tuples still to come)")
        if w.hold_nominal is None:
            return text + f": nothing reaches it at nominal timing, so its trees time out ({float(w.timeout):g} s)"
        return (text + f"; about {fmt_s(w.hold_nominal)} at the nominal inflow, "
                + (f"beyond {limit}, so its trees time out and are replayed" if w.times_out else f"within {limit}"))
    text += (f"; Storm acks a tuple when it leaves its last window, at most {fmt_s(w.hold_max)} after it arrives in "
             f"every run ({fmt_s(w.hold_nominal or w.hold_max)} at nominal timing)")
    if w.hold_max <= w.timeout:
        return text + f", within {limit}"
    if w.times_out:
        return text + f", beyond {limit}: its trees may time out and be replayed"
    return text + f": within {limit} at nominal timing, not proven in every run"


def timer_bounded_note(e: RateFigures, ident: str, what: str, inflow: Fraction, queue: Fraction) -> str | None:
    """The words of a duration-windowed bolt proven bounded with `what` ("failures", "worker deaths"; None for any
    other bolt): its timer takes whatever arrived, so its queue is what arrives within G (docs/boundedness.md,
    "Failures through a timer")."""
    gap = e.timed.get(ident)
    if gap is None:
        return None
    name = e.by_id[ident].name
    return (f"with {what} {name} receives at most {float(inflow):.3g} tuples/s, and its timer takes whatever arrived "
            f"at most {fmt_s(gap)} apart (a window on a timer, no capacity limit): its queue stays below "
            f"{float(queue):.3g} tuples, what may arrive within {fmt_s(gap)}")


def fmt_s(x: Fraction) -> str:
    return f"{float(x):.3g} s"

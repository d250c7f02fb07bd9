"""A windowed bolt's figures beyond its queue (docs/model.md section 10, docs/boundedness.md "Windows").

A count-windowed bolt: the tuples it holds unacked (its unevaluated tuples and its windows) and how long Storm keeps a
tuple pending in them, against `topology.message.timeout.secs`; the capacity and the queue bound are the rate check's
own (`RateFigures`: C_TAKE = executors × sliding interval, a start of max(Q₀, C − 1)). A duration-windowed bolt
(docs/model.md section 10.3): its timer's evaluations, the tuples it holds and its every-run hold time
(`RateFigures.timed`: G)."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from app.core.numbers import exact
from app.core.rates.flows import RateFigures
from app.core.topology import Bolt


@dataclass(frozen=True)
class WindowFigures:
    """One count-windowed bolt: `length` L and `slide` S in tuples, on `executors` executors."""

    executors: int
    length: int
    slide: int
    pending: Fraction | None  # tuples it holds unacked in every run: queue bound + executors × L (None: no bound)
    hold_tuples: int  # a tuple is acked once this many more have reached its executor at most: L + S − 1
    hold_nominal: Fraction | None  # that many tuples' time at the nominal inflow (s; None: nothing arrives)
    timeout: Fraction  # topology.message.timeout.secs

    @property
    def times_out(self) -> bool:
        """At the nominal inflow, a tuple waits in its windows longer than the message timeout (or forever)."""
        return self.hold_nominal is None or self.hold_nominal > self.timeout


def window_figures(e: RateFigures, bolt: Bolt) -> WindowFigures | None:
    """The figures of a bolt with a count window (None for any other bolt)."""
    window = bolt.count_window
    if window is None:
        return None
    length, slide = int(window.length), int(window.interval)
    executors = e.burst[bolt.id] // slide  # C_TAKE = executors × S (a suggestion's parallelism included)
    bound = e.queue_bound[bolt.id]
    hold = length + slide - 1
    inflow = e.in_nominal[bolt.id]
    return WindowFigures(executors, length, slide, None if bound is None else bound + executors * length, hold,
                         hold * executors / inflow if inflow > 0 else None,
                         Fraction(e.topo.storm.message_timeout))


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
                 f"{w.executors} × {w.length} in windows)")
    text += f"; Storm acks a tuple when it leaves its last window, up to {w.hold_tuples} tuples later on its executor"
    if w.hold_nominal is None:
        return text + (": nothing reaches it at nominal timing, so a tuple it holds is never acked and its tree "
                       f"times out ({float(w.timeout):g} s)")
    verdict = "beyond" if w.times_out else "within"
    return (text + f": about {float(w.hold_nominal):.3g} s at the nominal inflow, {verdict} "
            f"topology.message.timeout.secs ({float(w.timeout):g} s)"
            + (", so its trees time out and are replayed" if w.times_out else ""))


@dataclass(frozen=True)
class DurationFigures:
    """One duration-windowed bolt (docs/model.md section 10.3): `length` L and `slide` S in seconds; every executor's
    timer evaluates whatever arrived every S, or back to back once an evaluation outlasts S."""

    executors: int
    length: Fraction
    slide: Fraction
    gap: Fraction  # G = (1+τ)·max(S, α): the longest time between two evaluations of an executor, in every run
    keeps_timer: bool  # α(1+τ) ≤ S: no evaluation outlasts the sliding interval
    pending: Fraction | None  # tuples held unacked in every run: Q₀ + b + R·hold_max
    hold_max: Fraction  # a tuple is acked at most L − S + 2G after it reaches the bolt, in every run
    hold_nominal: Fraction  # the same at nominal timing: L − S + 2·max(S, α) (L + S while α ≤ S)
    timeout: Fraction  # topology.message.timeout.secs

    @property
    def times_out(self) -> bool:
        """At nominal timing a tuple may wait in its windows longer than the message timeout."""
        return self.hold_nominal > self.timeout


def duration_figures(e: RateFigures, bolt: Bolt) -> DurationFigures | None:
    """The figures of a bolt with a duration window (None for any other bolt)."""
    window = bolt.duration_window
    if window is None or bolt.id not in e.timed:
        return None
    length, slide, alpha = exact(window.length), exact(window.interval), exact(bolt.alpha)
    gap, hold = e.timed[bolt.id], timed_hold(e, bolt.id)
    assert hold is not None  # (a duration window in the figures)
    bound = e.queue_bound[bolt.id]
    return DurationFigures(bolt.parallelism, length, slide, gap, alpha * (1 + e.tau) <= slide,
                           None if bound is None else e.q0 + e.in_burst[bolt.id] + e.in_max[bolt.id] * hold,
                           hold, length - slide + 2 * max(slide, alpha), Fraction(e.topo.storm.message_timeout))


def timed_hold(e: RateFigures, ident: str) -> Fraction | None:
    """A duration-windowed bolt's hold bound, L − S + 2G (None for any other bolt): Storm acks a tuple at most this
    long after it arrives, in every run, whatever arrives (docs/boundedness.md, "Duration windows"); its children are
    emitted by then too (G + α(1+τ) ≤ L − S + 2G), so it is the bolt's sojourn bound in docs/latency.md."""
    bolt = e.by_id[ident]
    window = bolt.duration_window if isinstance(bolt, Bolt) else None
    if window is None or ident not in e.timed:
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
             f", longer than its sliding interval: its evaluations fall behind their timer and run back to back "
             f"(Storm logs 'Possible clock drift or long running computation in window'), each window then "
             f"spanning up to {fmt_s(w.length - w.slide + w.gap)}")
    if w.pending is not None:
        text += f"; it holds at most {float(w.pending):.4g} tuples not yet acked"
    text += (f"; Storm acks a tuple when it leaves its last window, at most {fmt_s(w.hold_max)} after it arrives in "
             f"every run ({fmt_s(w.hold_nominal)} at nominal timing)")
    limit = f"topology.message.timeout.secs ({float(w.timeout):g} s)"
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
            f"at most {fmt_s(gap)} apart (a duration window, no capacity limit): its queue stays below "
            f"{float(queue):.3g} tuples, what may arrive within {fmt_s(gap)}")


def fmt_s(x: Fraction) -> str:
    return f"{float(x):.3g} s"

"""A count-windowed bolt's figures beyond its queue (docs/model.md section 10, docs/boundedness.md "Windows"): the
tuples it holds unacked (its unevaluated tuples and its windows) and how long Storm keeps a tuple pending in them,
against `topology.message.timeout.secs`. The capacity and the queue bound are the rate check's own (`RateFigures`:
C_TAKE = executors × sliding interval, a start of max(Q₀, C − 1))."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

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

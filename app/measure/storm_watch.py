"""`watch` and Live Mode's judgement of a running topology over a window of polls (docs/storm-runs.md, "Watch").

One interval between two polls measures little: a Kafka spout's lag rises between its offset commits and
falls at each (a saw-tooth), a busy bolt's latency moves by a few per cent from one interval to the next,
and the pages of one poll are read one after the other. So each poll is judged over a window:

* **the window**: the last `window` intervals between polls whose counts changed (each at least half the
  poll interval long);
* **a figure's error**: a spout's emitted rate and a bolt's α are those of the last interval, their error
  twice the noise of their per-interval values over the window (the median of successive differences: a
  level that shifts once, a real drift, does not count as noise), plus for α the Storm UI's resolution of
  latencies (three decimals of a millisecond, an all-time average);
* **the lag's growth**: the least-squares slope of the summed lag over the last `lag_window` seconds (at
  least two offset commits of storm-kafka-client, 30 s each by default) with its 95 % interval; none before;
* **the measured growth**: arrived − executed cumulated over the window, its fitted slope and interval
  (so that pages read at different moments do not show as growth);
* **the verdict** of a bolt: the rate check at the figures' optimistic end (α and the offered rates lowered
  by their error, no tolerance): `grows` / `may-grow` there is overload whatever the noise; a measured
  growth whose interval lies above the floor is `grows`; a receive queue at its capacity (metrics v2) is
  `full`; counts frozen while the page shows work waiting (capacity >= 1, spout tuples failing, spouts held
  by backpressure, a full queue) are a `stall`;
* **the gate**: `--fail-on` fires when `fail_after` successive polls have a bolt at or above its level (a
  gap, or a poll whose counts did not change with nothing waiting, neither adds nor resets the count).
"""

from __future__ import annotations

import statistics
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from app.core.topology import Topology
from app.measure.growth import fit_slope
from app.measure.storm_figures import (
    BoltFigures,
    PollCounts,
    SpoutFigures,
    backlog_series,
    executed_keys,
    figures_between,
    measured_topology,
    poll_counts,
)
from app.measure.storm_run import Poll, QueueState

if TYPE_CHECKING:
    from app.core.rates import RateReport

WINDOW = 6  # intervals a poll's verdict rests on
FAIL_AFTER = 3  # successive polls that must agree before --fail-on fires
LAG_WINDOW_S = 60.0  # two offset commits of storm-kafka-client (offset.commit.period.ms: 30 s by default)
KEEP_POLLS = 64  # polls always kept in memory; older ones only while the lag's fit may reach them
LATENCY_RESOLUTION_MS = 0.0005  # the Storm UI writes latencies with three decimals
#: what each --fail-on level counts as overload
FAIL_ON = {"may-grow": ("may-grow", "grows", "full", "stall"), "grows": ("grows", "full", "stall")}
SEVERITY = {"ok": 0, "noise": 0, "may-grow": 1, "grows": 2, "full": 3, "stall": 3}


class Disagreement(BaseModel):
    bolt: str
    what: str  # "growth", "latency" (a bolt's α) or "complete latency" (a spout's trees against the proven bound)
    model: str
    measured: str


class BoltWatch(BaseModel):
    """One bolt at one poll: the figures, their error, and the verdict they give."""

    rho: float | None = None  # the model's ρ at the measured figures (central)
    rho_low: float | None = None  # at the optimistic and the pessimistic end of their error
    rho_high: float | None = None
    status: str | None = None  # the rate check at the central figures (the document's tolerance)
    surely: str | None = None  # the rate check at the optimistic end (α and rates lowered by their error, τ 0)
    capacity: float | None = None  # the Storm UI's, as served
    alpha_s: float | None = None
    alpha_error_s: float | None = None
    growth: float | None = None  # fitted over the window, tuples/s
    growth_low: float | None = None
    growth_high: float | None = None
    model_growth: float | None = None
    queue: QueueState | None = None
    verdict: str = "ok"  # ok, noise (not bounded at the central figures only), may-grow, grows, full, stall
    why: str = ""


class WatchLine(BaseModel):
    """What `watch` prints for one poll (Live Mode shows the same)."""

    poll: int
    t: float
    elapsed_s: float
    gap: str | None = None
    interval_s: float | None = None
    window_s: float | None = None
    intervals: int = 0
    basis: str = ""  # what the verdicts rest on
    headroom: float | None = None
    grows_at: float | None = None
    first_to_saturate: list[str] = Field(default_factory=list)
    statuses: dict[str, str] = Field(default_factory=dict)  # bolt -> verdict
    bolts: dict[str, BoltWatch] = Field(default_factory=dict)
    disagree: list[Disagreement] = Field(default_factory=list)
    agreeing: int = 0  # successive polls with a bolt at or above --fail-on's level (this one included)
    note: str = ""
    fail: bool = False


def _float(x: Fraction | float | None) -> float | None:
    return None if x is None else round(float(x), 6)


def noise(values: list[float]) -> float | None:
    """The spread (standard deviation) of per-interval values around a level that may shift: from the median of
    their successive differences (robust to one step: a drift is not noise); None below three values."""
    if len(values) < 3:
        return None
    diffs = sorted(abs(b - a) for a, b in zip(values, values[1:], strict=False))
    return statistics.median(diffs) / (0.6745 * 2 ** 0.5)


class Judge:
    """Polls in, a WatchLine out per poll; keeps the counts and the count of successive polls that agree."""

    def __init__(self, model: Topology | None, every: float, *, fail_on: str | None = None,
                 fail_after: int = FAIL_AFTER, window: int = WINDOW, lag_window: float = LAG_WINDOW_S,
                 growth_floor: float = 0.05):
        self.model = model
        self.every = every
        self.fail_on = fail_on
        self.fail_after = fail_after
        self.window = window
        self.lag_window = lag_window
        self.growth_floor = growth_floor
        self.counts: list[PollCounts] = []
        self.started: float | None = None
        self.agreeing = 0
        self._document: tuple[Topology, RateReport] | None = None  # the watched document and its rate check

    def document_report(self) -> RateReport:
        """The rate check of the document being watched, made once per document (a poll changes the measured
        figures, not the document; `model` is replaced when the watch finds a new one), not once per poll."""
        from app.core.rates import RateAnalysis

        assert self.model is not None
        if self._document is None or self._document[0] is not self.model:
            self._document = (self.model, RateAnalysis(self.model).report(suggest=False))
        return self._document[1]

    def add(self, poll: Poll, queues: dict[str, QueueState] | None = None) -> WatchLine:
        self.started = poll.t if self.started is None else self.started
        line = WatchLine(poll=poll.poll, t=poll.t, elapsed_s=round(poll.t - self.started, 3))
        if not poll.ok:
            line.gap = poll.gap
            line.agreeing = self.agreeing
            return line
        self.counts.append(poll_counts(poll))
        cutoff = poll.t - 2 * self.lag_window  # the lag's fit reaches back lag_window; the window, a few polls
        while len(self.counts) > KEEP_POLLS and self.counts[0].t < cutoff:
            del self.counts[0]
        if self.model is None:
            line.note = "no model yet: the topology has processed nothing"
            return line
        counted = judge(line, self.model, self.counts, queues or {}, self)
        if counted is not None:
            self.agreeing = self.agreeing + 1 if counted else 0
        line.agreeing = self.agreeing
        line.fail = self.fail_on is not None and self.agreeing >= self.fail_after
        return line

    def alarm(self, verdict: str) -> bool:
        return verdict in FAIL_ON[self.fail_on or "may-grow"]


def _window(counts: list[PollCounts], every: float, size: int) -> list[int]:
    """Indexes of the polls the window rests on, oldest first: back from the last poll, each one whose counts
    differ from the next kept one's and at least half a poll interval before it."""
    j = len(counts) - 1
    kept = [j]
    for i in range(j - 1, -1, -1):
        last = counts[kept[-1]]
        if counts[i].counters == last.counters or last.t - counts[i].t < 0.5 * every:
            continue
        kept.append(i)
        if len(kept) > size:
            break
    return kept[::-1]


def _lag_slope(counts: list[PollCounts], span: float) -> dict[str, tuple[float, float, float, float]]:
    """Per spout with a lag: (slope, low, high, seconds covered) fitted over the polls since the last one at least
    `span` seconds before the latest; absent while the polls cover less than `span`."""
    out = {}
    last = counts[-1].t
    for name in counts[-1].lag:
        points = [(c.t, float(c.lag[name])) for c in counts if name in c.lag]
        early = [k for k, (t, _) in enumerate(points) if t <= last - span]
        if not early:
            continue
        points = points[early[-1]:]
        fit = fit_slope(points)
        if fit is not None:
            out[name] = (fit.slope, fit.low, fit.high, points[-1][0] - points[0][0])
    return out


def _shifted(model: Topology, spouts: dict[str, SpoutFigures], bolts: dict[str, BoltFigures],
             rates: dict[str, float], alphas: dict[str, float], exact: bool) -> Topology:
    """The measured topology with these offered rates and α (`exact`: no tolerance: the figures are the bound)."""
    s2 = {n: f.model_copy(update={"offered_rate": rates.get(n, f.offered_rate)}) for n, f in spouts.items()}
    def moved(f: BoltFigures, alpha: float | None) -> BoltFigures:  # an asynchronous bolt's process latency alike
        scale = alpha / f.alpha_s if alpha is not None and f.alpha_s else 1.0
        return f.model_copy(update={"alpha_s": alpha or f.alpha_s,
                                    "process_s": f.process_s * scale if f.process_s is not None else None})

    b2 = {n: moved(f, alphas.get(n)) for n, f in bolts.items()}
    topo = measured_topology(model, s2, b2)
    if exact:
        topo = topo.model_copy(update={"settings": topo.settings.model_copy(update={"tolerance": 0})})
    return topo


def judge(line: WatchLine, model: Topology, counts: list[PollCounts], queues: dict[str, QueueState],
          judge_: Judge) -> bool | None:
    """Fill `line`; True when a bolt is at or above --fail-on's level, False when none is, None when this poll
    says nothing new (the counts did not change and nothing waits)."""
    from app.core.headroom import headroom
    from app.core.rates import RateAnalysis, rate_check

    stalled = _stalls(model, counts, queues)
    kept = _window(counts, judge_.every, judge_.window)
    lag = _lag_slope(counts, judge_.lag_window)
    first = kept[0]
    counts, kept = counts[first:], [k - first for k in kept]  # the figures need the window's polls only
    if len(kept) < 2:
        for name, why in stalled.items():
            line.bolts[name] = BoltWatch(verdict="stall", why=why, queue=queues.get(name),
                                         capacity=counts[-1].capacity.get(name))
            line.statuses[name] = "stall"
        if stalled:
            line.basis = "frozen counts"
            return judge_.alarm("stall")
        line.note = "first reading (or no counts changed yet): figures from the next poll"
        return None
    intervals = [figures_between(counts, a, b) for a, b in zip(kept, kept[1:], strict=False)]
    spouts, bolts = intervals[-1]
    line.interval_s = round(counts[kept[-1]].t - counts[kept[-2]].t, 6)
    line.window_s = round(counts[kept[-1]].t - counts[kept[0]].t, 6)
    line.intervals = len(intervals)
    for name, sf in spouts.items():
        sf.lag_growth = lag[name][0] if name in lag else None
        sf.offered_rate = (sf.emitted_rate or 0.0) + max(0.0, sf.lag_growth or 0.0)
    rate_err, alpha_err = _errors(counts, kept, intervals)
    known = all(v != float("inf") for v in (*rate_err.values(), *alpha_err.values()))
    low_rates = {n: max(0.0, (f.emitted_rate or 0.0) - rate_err[n]) + max(0.0, lag[n][1] if n in lag else 0.0)
                 for n, f in spouts.items()} if known else {}
    high_rates = {n: (f.emitted_rate or 0.0) + rate_err[n] + max(0.0, lag[n][2] if n in lag else 0.0)
                  for n, f in spouts.items()} if known else {}
    low_alpha = {n: max((f.alpha_s or 0.0) - alpha_err[n], 1e-9) for n, f in bolts.items() if f.alpha_s} \
        if known else {}
    high_alpha = {n: (f.alpha_s or 0.0) + alpha_err[n] for n, f in bolts.items() if f.alpha_s} if known else {}
    try:
        measured = measured_topology(model, spouts, bolts)
        rates = RateAnalysis(measured)  # the one analysis of the measured snapshot: its report and the headroom
        report = rates.report(suggest=False)
        room = headroom(measured, rates)
        annotated = judge_.document_report()  # the watched document's own: once per watch, not per poll
        optimistic = rate_check(_shifted(model, spouts, bolts, low_rates, low_alpha, True), suggest=False) \
            if known else None
        pessimistic = rate_check(_shifted(model, spouts, bolts, high_rates, high_alpha, True), suggest=False) \
            if known else None
    except Exception as err:  # noqa: BLE001 - a topology still not annotated: one note, the watch goes on
        line.note = f"the model cannot be checked yet: {str(err).splitlines()[0][:160]}"
        return None
    line.headroom, line.grows_at = _float(room.headroom), _float(room.grows_at)
    line.first_to_saturate = list(room.first_to_saturate)
    window_counts = [counts[k] for k in kept]
    _, whole = figures_between(counts, kept[0], kept[-1])  # the window's arrival rates: what page skew scales with
    for b in model.bolts:
        r = report.bolts[b.name]
        f = bolts.get(b.name)
        w = BoltWatch(rho=round(r.utilisation, 6), status=r.status, model_growth=round(r.growth_nominal, 6),
                      capacity=f.capacity_last if f else None, alpha_s=f.alpha_s if f else None,
                      alpha_error_s=None if f is None or b.name not in alpha_err or not known
                      else round(alpha_err[b.name], 9),
                      queue=queues.get(b.name))
        if optimistic is not None and pessimistic is not None:
            w.surely = optimistic.bolts[b.name].status
            w.rho_low = round(optimistic.bolts[b.name].utilisation, 6)
            w.rho_high = round(pessimistic.bolts[b.name].utilisation, 6)
        fit = fit_slope(backlog_series(window_counts, b.name))
        arrival = whole[b.name].arrival_rate if b.name in whole else None
        if fit is not None:
            w.growth, w.growth_low, w.growth_high = round(fit.slope, 6), round(fit.low, 6), round(fit.high, 6)
        measured_grows = fit is not None and fit.low > max(judge_.growth_floor, 0.05 * (arrival or 0.0))
        w.verdict, w.why = _verdict(b.name, w, measured_grows, stalled.get(b.name))
        line.bolts[b.name] = w
        line.statuses[b.name] = w.verdict
        model_grows = annotated.bolts[b.name].status in ("grows", "may-grow")
        measured_keeps_up = fit is not None and fit.high < max(judge_.growth_floor, 0.05 * (arrival or 0.0))
        if (measured_grows and not model_grows) or (measured_keeps_up and annotated.bolts[b.name].status == "grows"):
            line.disagree.append(Disagreement(bolt=b.name, what="growth", model=annotated.bolts[b.name].status,
                                              measured=f"{w.growth:+.4g} tuples/s ({w.growth_low:+.4g}.."
                                                       f"{w.growth_high:+.4g})"))
        seen = (f.process_s if b.threads is not None else f.alpha_s) if f is not None else None  # model.md 8
        if seen and w.alpha_error_s is not None and f is not None and f.alpha_s:
            tolerance = max(model.settings.tolerance, 0.1)
            if abs(seen - b.alpha) - w.alpha_error_s * seen / f.alpha_s > tolerance * b.alpha:
                line.disagree.append(Disagreement(bolt=b.name, what="latency", model=f"α {b.alpha * 1000:.4g} ms",
                                                  measured=f"α {seen * 1000:.4g} ms"))
    line.disagree += _latency_disagreements(model, spouts)
    line.basis = _basis(line, counts, kept, lag, judge_.lag_window, known)
    if counts[-1].counters == counts[-2].counters and not stalled:
        line.basis += f"; counts unchanged since the last poll (figures of poll {line.poll} and before)"
        return None  # nothing new (Storm refreshes its counts with the executors' heartbeats)
    return any(judge_.alarm(v) for v in line.statuses.values())


def _latency_disagreements(model: Topology, spouts: dict[str, SpoutFigures]) -> list[Disagreement]:
    """A spout whose measured complete latency (the Storm UI's, an average over the interval, so below its longest
    tree) is above the model's proven bound (docs/latency.md): the model's timings do not hold for this run."""
    from app.core.latency.bounds import LatencyAnalysis

    try:
        bounds = {s.name: s.bound for s in LatencyAnalysis(model).spouts().values()}
    except Exception:  # noqa: BLE001 - a model that cannot be checked has no bound
        return []
    out = []
    for name, bound in bounds.items():
        f = spouts.get(name)
        measured = f.complete_latency_ms if f is not None else None
        if bound is not None and measured is not None and measured / 1000 > bound:
            out.append(Disagreement(bolt=name, what="complete latency", model=f"at most {float(bound) * 1000:.4g} ms",
                                    measured=f"{measured:.4g} ms"))
    return out


def _errors(counts: list[PollCounts], kept: list[int], intervals: list[tuple[dict[str, SpoutFigures],
                                                                             dict[str, BoltFigures]]]
            ) -> tuple[dict[str, float], dict[str, float]]:
    """The error (≈ 95 %) of the last interval's spout rates and bolt α: twice their noise over the window (inf
    before three intervals), α's plus the UI's resolution of its all-time average latency."""
    spouts, bolts = intervals[-1]
    rate_err: dict[str, float] = {}
    for name in spouts:
        e = noise([s[name].emitted_rate or 0.0 for s, _ in intervals if name in s])
        rate_err[name] = float("inf") if e is None else 2 * e
    alpha_err: dict[str, float] = {}
    for name in bolts:
        e = noise([a for _, b in intervals if name in b and (a := b[name].alpha_s) is not None])
        then, now = counts[kept[-2]], counts[kept[-1]]
        executed_then = sum(then.counters.get(k, 0.0) for k in executed_keys(then, name))
        executed_now = sum(now.counters.get(k, 0.0) for k in executed_keys(now, name))
        done = executed_now - executed_then
        resolution = (LATENCY_RESOLUTION_MS * (executed_now + executed_then) / done / 1000.0) if done > 0 else 0.0
        alpha_err[name] = float("inf") if e is None else 2 * e + resolution
    return rate_err, alpha_err


def _verdict(name: str, w: BoltWatch, measured_grows: bool, stall: str | None) -> tuple[str, str]:
    q = w.queue
    if stall is not None:
        return "stall", stall
    if q is not None and q.is_full():
        return "full", q.full_text() + " (metrics v2)"
    if measured_grows:
        return "grows", "its measured backlog grows beyond its interval's error"
    if w.surely in ("grows", "may-grow"):
        return w.surely, "the rate check says so even at the optimistic end of the measured figures"
    if w.surely is None and w.status not in (None, "bounded", "no-repeating-growth"):
        return "noise", "too few intervals to know the figures' noise yet"
    if w.status not in (None, "bounded", "no-repeating-growth"):
        return "noise", "not bounded at the central figures only: within their error"
    return "ok", ""


def _stalls(model: Topology, counts: list[PollCounts], queues: dict[str, QueueState]) -> dict[str, str]:
    """Bolts whose executed counts did not move between the last two polls while the page shows work waiting."""
    if len(counts) < 2:
        return {}
    before, now = counts[-2], counts[-1]
    failed = sum(now.counters.get(f"failed|{s}", 0.0) - before.counters.get(f"failed|{s}", 0.0) for s in now.spouts)
    held = [s for s in now.spouts if (q := queues.get(s)) is not None and q.backpressure_ms_rising]
    frozen: dict[str, list[str]] = {}
    own: dict[str, list[str]] = {}  # its own page's evidence: busy all the time, its queues full
    for b in model.bolts:
        keys = [k for k in executed_keys(now, b.name) if k in now.counters]
        if not keys or any(now.counters[k] != before.counters.get(k) for k in keys):
            continue
        frozen[b.name] = keys
        capacity = now.capacity.get(b.name)
        q = queues.get(b.name)
        own[b.name] = ([f"capacity {capacity:.3f}"] if capacity is not None and capacity >= 1.0 else []) \
            + (["its receive queues full"] if q is not None and q.full_executors else [])
    shared = ([f"{failed:.0f} spout tuples failed since the last poll"] if failed > 0 else []) \
        + ([f"{', '.join(held)} held by backpressure"] if held else [])
    stuck = [n for n in frozen if own[n]] or ([n for n in frozen] if shared else [])  # the stuck bolt, if one shows
    out = {}
    for name in stuck:
        keys = frozen[name]
        first = len(counts) - 2
        while first > 0 and all(counts[first - 1].counters.get(k) == now.counters[k] for k in keys):
            first -= 1
        out[name] = f"executed nothing for {now.t - counts[first].t:.3g} s while " + ", ".join(own[name] + shared)
    return out


def _basis(line: WatchLine, counts: list[PollCounts], kept: list[int], lag: dict[str, Any], lag_window: float,
           known: bool) -> str:
    parts = [f"{len(kept) - 1} interval{'s' if len(kept) != 2 else ''} over {line.window_s:.3g} s"]
    if not known:
        parts.append("noise not known yet (3 intervals needed)")
    if counts[-1].lag:
        if lag:
            parts.append("lag growth " + ", ".join(f"{n} {v[0]:+.3g}/s ({v[1]:+.3g}..{v[2]:+.3g}) over {v[3]:.3g} s"
                                                  for n, v in lag.items()))
        else:
            parts.append(f"lag growth not used before {lag_window:g} s of polls")
    return "; ".join(parts)


def format_watch_line(line: WatchLine, fail_on: str | None = None, fail_after: int = FAIL_AFTER) -> str:
    head = f"poll {line.poll} +{line.elapsed_s:.2f}s"
    if line.gap is not None:
        return f"{head}: gap: {line.gap}"
    if not line.statuses:
        return f"{head}: {line.note}"
    parts = []
    if line.headroom is not None or line.first_to_saturate:
        parts.append("headroom unlimited" if line.headroom is None else f"headroom ×{line.headroom:.3g}")
    if line.first_to_saturate:
        verb = "saturates" if len(line.first_to_saturate) == 1 else "saturate"
        parts.append(f"{', '.join(line.first_to_saturate)} {verb} first"
                     + ("" if line.grows_at is None else f" (above ×{line.grows_at:.3g})"))
    shown = [bolt_text(b, w) for b, w in line.bolts.items() if w.verdict != "ok"]
    parts.append("; ".join(shown) if shown else "every bolt keeps up")
    if line.disagree:
        parts.append("disagree: " + ", ".join(f"{d.bolt} {d.what} (model {d.model}, measured {d.measured})"
                                               for d in line.disagree))
    if fail_on is not None and line.agreeing:
        parts.append(f"--fail-on {fail_on}: {min(line.agreeing, fail_after)}/{fail_after} polls")
    if line.basis:
        parts.append(f"rests on {line.basis}")
    return f"{head}: " + "; ".join(parts)


def bolt_text(name: str, w: BoltWatch) -> str:
    """`count grows (ρ 1.25, 1.22..1.28; α 2.5 ms ±2%; growth +100/s, +97..+103): why`."""
    figures = []
    if w.rho is not None:
        figures.append(f"model ρ {w.rho:.3g}" + ("" if w.rho_low is None or w.rho_high is None
                                                  else f", {w.rho_low:.3g}..{w.rho_high:.3g}"))
    if w.capacity is not None:
        figures.append(f"UI capacity {w.capacity:.3f}")
    if w.alpha_s:
        figures.append(f"α {w.alpha_s * 1000:.4g} ms" + ("" if w.alpha_error_s is None
                                                         else f" ±{w.alpha_error_s / w.alpha_s:.0%}"))
    if w.growth is not None:
        figures.append(f"growth {w.growth:+.4g}/s ({w.growth_low:+.4g}..{w.growth_high:+.4g})")
    word = "within noise" if w.verdict == "noise" else w.verdict
    return f"{name} {word} ({'; '.join(figures)})" + (f": {w.why}" if w.why and w.verdict != "noise" else "")

"""Polling a running topology's Storm UI: `record` (into a run folder) and `watch` (the model re-checked).

One poll reads the topology page and every component's page with all-time counts, and the Kafka lag
(`/api/v1/topology/ID/lag`; a UI without it is noted in the poll, not a failure), through the Storm UI
client (app/core/storm/ui/client.py: one deadline per request). A poll that fails (the UI is
down, a reply is cut short) is a gap: recorded as such, and the next poll goes on. Polls keep a fixed
rhythm (start + k × every; a poll that overran its slot moves the rhythm: the next comes a
whole interval after it, so that no interval between polls is much shorter than `every`).
Stopping (`stop` set, e.g. by Ctrl+C) ends the loop after the poll in hand.
"""

from __future__ import annotations

import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from fractions import Fraction
from typing import Any

from pydantic import BaseModel, Field

from app.core.storm.ui.client import StormUIClient, StormUIError
from app.core.topology import Topology
from app.measure.storm_figures import PollCounts, figures_between, measured_topology
from app.measure.storm_run import Poll, poll_problem

ALL_TIME = {"window": ":all-time"}


def _quote(part: str) -> str:
    return urllib.parse.quote(part, safe="")


def read_poll(client: StormUIClient, topology_id: str, number: int) -> tuple[Poll, dict[str, Any]]:
    """One poll (raises StormUIError when a page cannot be read), and the topology's configuration."""
    path = f"/api/v1/topology/{_quote(topology_id)}"
    t = time.time()  # the UI reads its counts when the request arrives; decoding the reply comes after
    page = client.get(path, ALL_TIME)
    if not (isinstance(page, dict) and isinstance(page.get("spouts"), list) and isinstance(page.get("bolts"), list)):
        raise StormUIError(client.url(path, ALL_TIME), "the reply has no 'spouts' and 'bolts' lists")
    found = page.get("configuration")
    configuration: dict[str, Any] = found if isinstance(found, dict) else {}
    page = {k: v for k, v in page.items() if k != "configuration"}
    components: dict[str, dict[str, Any]] = {}
    for key, id_key in (("spouts", "spoutId"), ("bolts", "boltId")):
        for row in page[key]:
            name = row.get(id_key) if isinstance(row, dict) else None
            if not isinstance(name, str) or name.startswith("__"):
                continue
            reply = client.get(f"{path}/component/{_quote(name)}", ALL_TIME)
            if isinstance(reply, dict):
                components[name] = reply
    lag: Any = None
    lag_error = None
    try:
        lag = client.get(f"{path}/lag")
    except StormUIError as err:
        lag_error = str(err)
    poll = Poll(poll=number, t=t, ok=True, topology=page, components=components, lag=lag, lag_error=lag_error)
    problem = poll_problem(poll)
    if problem is not None:
        raise BadFigures(client.base, f"poll {number}: {problem}")
    return poll, configuration


class BadFigures(StormUIError):
    """A poll whose counts cannot be measurements (negative, 4,000 digits, NaN, over 10^15): one line naming
    the poll and the field. `record` keeps the poll as a gap saying so; `watch` stops on it (exit 2)."""


def poll_loop(client: StormUIClient, topology_id: str, every: float, *, polls: int | None = None,
              duration: float | None = None, stop: threading.Event | None = None, first: int = 1,
              on_configuration: Callable[[dict[str, Any]], None] | None = None,
              refuse_bad: bool = False) -> Iterator[Poll]:
    """Poll after poll (gaps included) until `polls` are done, `duration` has passed or `stop` is set.
    A poll with figures that cannot be measurements (BadFigures) is a gap naming them, or with `refuse_bad`
    raised."""
    stop = stop or threading.Event()
    origin = start = time.monotonic()
    number = first
    done = 0
    while not stop.is_set():
        try:
            poll, configuration = read_poll(client, topology_id, number)
            if on_configuration is not None and configuration:
                on_configuration(configuration)
        except BadFigures as err:
            if refuse_bad:
                raise
            poll = Poll(poll=number, t=time.time(), ok=False, gap=str(err))
        except StormUIError as err:
            poll = Poll(poll=number, t=time.time(), ok=False, gap=str(err))
        yield poll
        done += 1
        number += 1
        elapsed = time.monotonic() - origin
        if (polls is not None and done >= polls) or (duration is not None and elapsed >= duration):
            return
        due = start + done * every
        wait = due - time.monotonic()
        if wait < 0:  # late: the rhythm starts again from now, a whole interval on (no burst of short intervals)
            start += every - wait
            wait = every
        if duration is not None:
            wait = min(wait, origin + duration - time.monotonic())
        if wait > 0:
            stop.wait(wait)


# ---- watch: the model re-checked at each poll ----------------------------------------------


class Disagreement(BaseModel):
    bolt: str
    what: str  # "growth", "latency" (a bolt's α) or "complete latency" (a spout's trees against the proven bound)
    model: str
    measured: str


class WatchLine(BaseModel):
    """What `watch` prints for one poll."""

    poll: int
    t: float
    elapsed_s: float
    gap: str | None = None
    interval_s: float | None = None
    headroom: float | None = None
    grows_at: float | None = None
    first_to_saturate: list[str] = Field(default_factory=list)
    statuses: dict[str, str] = Field(default_factory=dict)
    bolts: dict[str, dict[str, float | None]] = Field(default_factory=dict)
    disagree: list[Disagreement] = Field(default_factory=list)
    note: str = ""
    fail: bool = False


def _float(x: Fraction | float | None) -> float | None:
    return None if x is None else round(float(x), 6)


FAIL_ON = {"may-grow": ("may-grow", "grows"), "grows": ("grows",)}


def check_poll(model: Topology, counts: list[PollCounts], poll: Poll, started: float,
               fail_on: str | None = None, growth_floor: float = 0.05, min_interval: float = 0.0) -> WatchLine:
    """The model re-checked with the figures measured since the previous poll whose counts differ (and at least
    half of `min_interval`, the poll interval, before this one)."""
    from app.core.headroom import headroom
    from app.core.rates import rate_check

    line = WatchLine(poll=poll.poll, t=poll.t, elapsed_s=round(poll.t - started, 3))
    if not poll.ok:
        line.gap = poll.gap
        return line
    j = len(counts) - 1
    i = j - 1
    while i >= 0 and counts[i].counters == counts[j].counters:
        i -= 1
    while i > 0 and counts[j].t - counts[i].t < 0.5 * min_interval:  # too short to measure: reach further back
        i -= 1
    if i < 0:
        line.note = "first reading (or no counts changed yet): figures from the next poll"
        return line
    spouts, bolts = figures_between(counts, i, j)
    line.interval_s = round(counts[j].t - counts[i].t, 6)
    measured = measured_topology(model, spouts, bolts)
    try:
        report = rate_check(measured, suggest=False)
        room = headroom(measured, report)
        annotated = rate_check(model, suggest=False)
    except Exception as err:  # noqa: BLE001 - a topology still not annotated: one note, the watch goes on
        line.note = f"the model cannot be checked yet: {str(err).splitlines()[0][:160]}"
        return line
    line.headroom, line.grows_at = _float(room.headroom), _float(room.grows_at)
    line.first_to_saturate = list(room.first_to_saturate)
    for b in model.bolts:
        r = report.bolts[b.name]
        f = bolts.get(b.name)
        line.statuses[b.name] = r.status
        growth = None
        if f is not None and f.arrival_rate is not None and f.executed_rate is not None:
            growth = f.arrival_rate - f.executed_rate
        line.bolts[b.name] = {"rho": round(r.utilisation, 6), "capacity": f.capacity_last if f else None,
                              "alpha_s": f.alpha_s if f else None,
                              "growth": None if growth is None else round(growth, 6),
                              "model_growth": round(r.growth_nominal, 6)}
        model_grows = annotated.bolts[b.name].status in ("grows", "may-grow")
        if growth is not None and f is not None:
            grows = growth > max(growth_floor, 0.05 * (f.arrival_rate or 0.0))
            if grows != model_grows and (grows or annotated.bolts[b.name].status == "grows"):
                line.disagree.append(Disagreement(bolt=b.name, what="growth",
                                                  model=annotated.bolts[b.name].status,
                                                  measured=f"{growth:+.4g} tuples/s"))
        if f is not None and f.alpha_s:
            tolerance = max(model.settings.tolerance, 0.1)
            if abs(f.alpha_s - b.alpha) > tolerance * b.alpha:
                line.disagree.append(Disagreement(bolt=b.name, what="latency", model=f"α {b.alpha * 1000:.4g} ms",
                                                  measured=f"α {f.alpha_s * 1000:.4g} ms"))
    line.disagree += _latency_disagreements(model, spouts)
    if fail_on is not None:
        line.fail = any(s in FAIL_ON[fail_on] for s in line.statuses.values())
    return line


def _latency_disagreements(model: Topology, spouts: dict[str, Any]) -> list[Disagreement]:
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
        measured = getattr(f, "complete_latency_ms", None)
        if bound is not None and measured is not None and measured / 1000 > bound:
            out.append(Disagreement(bolt=name, what="complete latency", model=f"at most {float(bound) * 1000:.4g} ms",
                                    measured=f"{measured:.4g} ms"))
    return out


def format_watch_line(line: WatchLine) -> str:
    head = f"poll {line.poll} +{line.elapsed_s:.2f}s"
    if line.gap is not None:
        return f"{head}: gap: {line.gap}"
    if not line.statuses:
        return f"{head}: {line.note}"
    room = "headroom unlimited" if line.headroom is None else f"headroom ×{line.headroom:.3g}"
    parts = [room]
    if line.first_to_saturate:
        parts.append(f"{', '.join(line.first_to_saturate)} saturates first"
                     + ("" if line.grows_at is None else f" (above ×{line.grows_at:.3g})"))
    growing = [f"{b} {s} (ρ {line.bolts[b]['rho']:.3g})" for b, s in line.statuses.items() if s != "bounded"]
    parts.append("; ".join(growing) if growing else "every bolt bounded")
    if line.disagree:
        parts.append("disagree: " + ", ".join(f"{d.bolt} {d.what} (model {d.model}, measured {d.measured})"
                                               for d in line.disagree))
    return f"{head}: " + "; ".join(parts)

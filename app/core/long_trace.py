"""A compressed trace's plot series without holding its positions (docs/trace-view.md, "Long traces").

A `stormbound-trace/2` file may stand for 10^5 to 10^6 positions (StormCrawler's lasso with failures:
311,558), each about 7 kB once read as a `TracePosition`. A repeat item only copies earlier positions with
their time shifted and some queues and replay backlogs raised, so a position is kept here as three numbers
and two increment vectors: the *written* position it copies (a position or a patch of the file, each read
and checked as a `TracePosition`), its time, and what its queues and backlogs gained on the way. Every
series the plots draw (app/core/trace_series.py: queue after the position's actions, tuples in process,
arrivals per input stream, losses, failures, backlogs and replays) is the written position's value plus
those increments, computed for all positions at once with numpy. The result is the same `TraceSeries`
that `trace_series` builds from the expanded trace (tests/unit/test_long_trace.py compares them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import ValidationError

from app.core.formats.limits import escape
from app.core.formats.trace import CompressedTrace, TracePosition, names_problem
from app.core.formats.trace_compress import (
    ExpandError,
    PatchItem,
    RepeatItem,
    invalid,
    item_kind,
    patched_position,
    read_item,
)
from app.core.formats.trace_numbers import exact_fraction
from app.core.topology import TopologyError, parse_topology
from app.core.trace_series import Arrivals, BoltSeries, Marks, SpoutSeries, TraceSeries, emitted_at, queue_after

#: most positions a long trace's plot holds (a position costs 8 bytes per bolt and spout, five arrays)
MAX_LONG_POSITIONS = 2_000_000

Ints = np.ndarray[Any, np.dtype[np.int64]]
Floats = np.ndarray[Any, np.dtype[np.float64]]


@dataclass(frozen=True)
class LongTrace:
    """What a plot of a long trace needs: its lasso's figures and the series (no positions)."""

    topology: dict[str, Any]
    k: int
    loop_start: int
    growth_per_loop: dict[str, int]  # per bolt, its queue's gain per loop pass
    loop_duration: float
    series: TraceSeries
    names: list[str]  # the components in the trace's order (spouts, then bolts)


@dataclass
class _Written:
    """The written positions (each a TracePosition) and, per expanded position, which one it copies."""

    positions: list[TracePosition]
    raw: list[dict[str, Any]]
    copies: Ints  # per expanded position: index into positions
    times: Floats
    queue_gain: Ints  # per expanded position and bolt
    backlog_gain: Ints  # per expanded position and spout


def _problem(where: str, message: str) -> ExpandError:
    return ExpandError(escape(where, 80), message)


def _read_position(raw: Any, where: str, spouts: set[str], bolts: set[str]) -> TracePosition:
    """One written position, checked as a TracePosition naming exactly the topology's components."""
    try:
        position = TracePosition.model_validate(raw)
    except ValidationError as err:
        raise invalid(where, err) from None
    problem = names_problem(where, position, spouts, bolts)
    if problem is not None:
        raise ExpandError(problem.path, problem.message)  # names_problem escaped the names already
    return position


def _expand(items: list[Any], spouts: list[str], bolts: list[str], limit: int) -> _Written:
    """Every position the items stand for, as (written position, time, gains); ExpandError naming the item."""
    total = sum(item["repeat"]["count"] if item_kind(item) == "repeat" and isinstance(item["repeat"], dict)
                and isinstance(item["repeat"].get("count"), int) else 1 for item in items)
    if total > limit:
        raise _problem("positions", f"more than {limit} positions once expanded (the limit on a long trace's plot)")
    copies = np.zeros(total, dtype=np.int64)
    times = np.zeros(total, dtype=np.float64)
    queue_gain = np.zeros((total, len(bolts)), dtype=np.int64)
    backlog_gain = np.zeros((total, len(spouts)), dtype=np.int64)
    column = {name: i for i, name in enumerate(bolts)}
    spout_column = {name: i for i, name in enumerate(spouts)}
    written = _Written([], [], copies, times, queue_gain, backlog_gain)
    n = 0
    for index, item in enumerate(items):
        where = f"positions.{index}"
        kind = item_kind(item)
        if kind == "repeat":
            n = _repeat(written, item, n, where, column, spout_column)
            continue
        if kind == "patch":
            found = read_item(item, where)
            assert isinstance(found, PatchItem)
            if n == 0:
                raise _problem(f"{where}.patch", "no position before it to change")
            item = patched_position([_materialised(written, n - 1, column, spout_column)], found.patch,
                                    f"{where}.patch")
        position = _read_position(item, where, set(spouts), set(bolts))
        written.positions.append(position)
        written.raw.append(item)
        copies[n], times[n] = len(written.positions) - 1, float(position.exact_time)
        n += 1
    return written


def _repeat(written: _Written, item: dict[str, Any], n: int, where: str, column: dict[str, int],
            spout_column: dict[str, int]) -> int:
    """Append the run of a repeat item after position n - 1; the count of positions after it."""
    found = read_item(item, where)
    assert isinstance(found, RepeatItem)
    rep = found.repeat
    if rep.period > n:
        raise _problem(f"{where}.repeat.period", f"{rep.period} reaches before the first position ({n} positions "
                                                 "precede it)")
    queue = np.zeros(len(column), dtype=np.int64)
    for name, gain in rep.queue.items():
        if name not in column:
            raise _problem(f"{where}.repeat.queue.{name}", "is not a bolt of the trace")
        queue[column[name]] = gain
    backlog = np.zeros(len(spout_column), dtype=np.int64)
    for name, gain in rep.backlog.items():
        if name not in spout_column:
            raise _problem(f"{where}.repeat.backlog.{name}", "is not a spout of the trace")
        backlog[spout_column[name]] = gain
    shift = float(exact_fraction(rep.time))
    left = rep.count
    while left:  # in chunks of at most one period: each chunk copies positions already there
        size = min(left, rep.period)
        src, dst = slice(n - rep.period, n - rep.period + size), slice(n, n + size)
        written.copies[dst] = written.copies[src]
        written.times[dst] = written.times[src] + shift
        written.queue_gain[dst] = written.queue_gain[src] + queue
        written.backlog_gain[dst] = written.backlog_gain[src] + backlog
        n += size
        left -= size
    return n


def _materialised(written: _Written, i: int, column: dict[str, int], spout_column: dict[str, int]) -> dict[str, Any]:
    """Position i as a written dict (what a patch changes): its source with its gains."""
    source = written.raw[int(written.copies[i])]
    gains, backlogs = written.queue_gain[i], written.backlog_gain[i]
    step_bolts = {name: {**step, "queue": step["queue"] + int(gains[column[name]])} if gains[column[name]] else step
                  for name, step in source["bolts"].items()}
    step_spouts = {name: {**step, "backlog": step.get("backlog", 0) + int(backlogs[spout_column[name]])}
                   if backlogs[spout_column[name]] else step for name, step in source["spouts"].items()}
    return {**source, "bolts": step_bolts, "spouts": step_spouts}  # the patch brings its own time


def _column(written: _Written, values: list[list[int]]) -> Ints:
    """Per written position, per component: a value read from its step (rows: written positions)."""
    return np.array(values, dtype=np.int64).reshape(len(written.positions), -1)


_KEYS = {*CompressedTrace.model_fields, "$schema"}


def _header(data: dict[str, Any]) -> tuple[dict[str, Any], int, int, list[Any]]:
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise _problem(str(unknown[0]), "unknown field")
    topology, k, loop_start, items = (data.get(key) for key in ("topology", "k", "loop_start", "positions"))
    if not isinstance(topology, dict):
        raise _problem("topology", "expected the topology document the trace runs on")
    for key, value in (("k", k), ("loop_start", loop_start)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise _problem(key, "expected a whole number")
    if not isinstance(items, list):
        raise _problem("positions", "expected a list of positions and repeat items")
    assert isinstance(k, int) and isinstance(loop_start, int)
    return topology, k, loop_start, items


def read_long_trace(data: dict[str, Any], extra_passes: int = 0, limit: int | None = None) -> LongTrace:
    """The series of a decoded `stormbound-trace/2` document with the loop repeated `extra_passes` more times;
    ExpandError (naming the item or field) or TopologyError when the document is no trace. At most `limit`
    (MAX_LONG_POSITIONS) positions, unrolled passes included."""
    limit = MAX_LONG_POSITIONS if limit is None else limit
    topology, k, loop_start, items = _header(data)
    try:
        topo = parse_topology(topology)
    except TopologyError as err:
        raise _problem(f"topology.{err.problems[0].path}".rstrip("."), err.problems[0].message) from None
    spouts, bolts = [s.name for s in topo.spouts], [b.name for b in topo.bolts]
    written = _expand(items, spouts, bolts, limit)
    count = len(written.copies)
    if k < 1 or count != k + 2:
        raise _problem("positions", f"{count} positions; a trace with k = {k} needs k + 2 (and k at least 1)")
    if not 0 <= loop_start <= k + 1:
        raise _problem("loop_start", f"{loop_start} is outside 0..{k + 1}")
    steps = [[p.bolts[b] for b in bolts] for p in written.positions]
    queue_field = _column(written, [[s.queue for s in row] for row in steps])
    backlog_field = _column(written, [[p.spouts[s].backlog for s in spouts] for p in written.positions])
    raised = queue_field[written.copies] + written.queue_gain
    if raised.size and raised.min() < 0 or backlog_field.size and (
            backlog_field[written.copies] + written.backlog_gain).min() < 0:
        raise _problem("positions", "a repeat makes a queue or a replay backlog negative")
    looped = loop_start <= k
    growth = (raised[k + 1] - raised[loop_start]) if looped else np.zeros(len(bolts), dtype=np.int64)
    backlog_growth = ((backlog_field[written.copies[k + 1]] + written.backlog_gain[k + 1])
                      - (backlog_field[written.copies[loop_start]] + written.backlog_gain[loop_start])
                      if looped else np.zeros(len(spouts), dtype=np.int64))
    duration = float(written.times[k + 1] - written.times[loop_start]) if looped else 0.0
    # the shown positions: 0..k, the loop `extra_passes` more times, the closing one (app/core/trace_series.unroll)
    passes = extra_passes if looped else 0
    parts, shifts = [np.arange(0, k + 1 if looped else k + 2)], [np.zeros(k + 1 if looped else k + 2, np.int64)]
    for r in range(1, passes + 1):
        parts.append(np.arange(loop_start, k + 1))
        shifts.append(np.full(k + 1 - loop_start, r, dtype=np.int64))
    if looped:
        parts.append(np.array([k + 1]))
        shifts.append(np.array([passes], dtype=np.int64))
    shown, shift = np.concatenate(parts), np.concatenate(shifts)
    if len(shown) > limit:
        loop = k + 1 - loop_start
        raise _problem("--unroll", f"{passes} passes of a {loop}-position loop would show more than {limit} "
                                   f"positions (at most {max(0, (limit - k - 2) // loop)} here)")
    source = written.copies[shown]
    times = written.times[shown] + shift * duration
    series = _series(topo, written, steps, bolts, spouts, shown, source, shift, times, growth, backlog_growth)
    loop_passes = ([(float(written.times[loop_start]) + r * duration, float(written.times[loop_start]) +
                     (r + 1) * duration) for r in range(passes + 1)] if looped else [])
    return LongTrace(topology=topology, k=k, loop_start=loop_start,
                     growth_per_loop={b: int(g) for b, g in zip(bolts, growth, strict=True)},
                     loop_duration=duration, names=[*written.positions[0].spouts, *written.positions[0].bolts],
                     series=TraceSeries(shown=[], times=series[0], step_times=series[1], bolts=series[2],
                                        loop_passes=loop_passes, senders=series[3], spouts=series[4]))


def _kept(times: Floats, counts: Ints) -> tuple[list[float], list[int]]:
    mask = counts != 0
    return times[mask].tolist(), counts[mask].tolist()


def _failed_spans(fail: Ints, recover: Ints, failed: Ints, times: Floats, end: float) -> list[tuple[float, float]]:
    """A bolt's failure intervals (app/core/trace_series.failure_intervals), visiting only the positions that
    fail, recover or are failed."""
    spans: list[tuple[float, float]] = []
    since: float | None = None
    for i in np.flatnonzero(fail | recover | failed):
        t = float(times[i])
        if recover[i] and since is not None:
            spans.append((since, t))
            since = None
        if fail[i] or (since is None and failed[i]):
            since = t if since is None else since
    if since is not None:
        spans.append((since, end))
    return spans


def _series(topo: Any, written: _Written, steps: list[list[Any]], bolts: list[str], spouts: list[str],
            shown: Ints, source: Ints, shift: Ints, times: Floats, growth: Ints, backlog_growth: Ints
            ) -> tuple[list[float], list[float], list[BoltSeries], list[str], list[SpoutSeries]]:
    """The plot series over the shown positions (each a written position plus gains and loop passes)."""
    time_list = times.tolist()
    span = (time_list[-1] - time_list[0]) or 1.0
    step_times = [*time_list, time_list[-1] + span * 0.03]
    after = _column(written, [[queue_after(s) for s in row] for row in steps])
    batch = _column(written, [[s.batch for s in row] for row in steps])
    lost = _column(written, [[s.lost for s in row] for row in steps])
    fail = _column(written, [[int(s.fail) for s in row] for row in steps])
    recover = _column(written, [[int(s.recover) for s in row] for row in steps])
    failed = _column(written, [[int(s.phase == "failed") for s in row] for row in steps])
    arrivals = _column(written, [[s.arrivals for s in row] for row in steps])
    down = (fail | failed)[source]
    name_of = {c.id: c.name for c in topo.components}
    received = topo.inputs()
    out: list[BoltSeries] = []
    for bolt in written.positions[0].bolts:  # in the trace's order, as trace_series draws them
        j = bolts.index(bolt)
        ident = next(b.id for b in topo.bolts if b.name == bolt)
        queue = (after[source, j] + written.queue_gain[shown, j] + shift * growth[j]) * (1 - down[:, j])
        series_arrivals: list[Arrivals] = []
        inputs = [(name_of[u], stream) for u, stream in received.get(ident, [])]
        if not topo.sources_of(ident):
            series_arrivals.append(Arrivals("arrivals", None, *_kept(times, arrivals[source, j])))
        for sender, stream in inputs:
            counts = np.array([emitted_at(p, sender, stream) for p in written.positions], dtype=np.int64)[source]
            label = f"from {sender}" if stream == "default" else f"from {sender} ({stream})"
            series_arrivals.append(Arrivals(label, sender, *_kept(times, counts)))
        out.append(BoltSeries(bolt=bolt, growth_per_loop=int(growth[j]), queue=queue.tolist(),
                              in_process=batch[source, j].tolist(), arrivals=series_arrivals,
                              failed=_failed_spans(fail[source, j], recover[source, j], failed[source, j], times,
                                                   step_times[-1]),
                              lost=Marks(*_kept(times, lost[source, j]))))
    spout_steps = [[p.spouts[sp] for sp in spouts] for p in written.positions]
    backlog = _column(written, [[s.backlog for s in row] for row in spout_steps])
    replayed = _column(written, [[s.replayed for s in row] for row in spout_steps])
    added = _column(written, [[sum((b.replays or {}).get(sp, 0) for b in p.bolts.values()) for sp in spouts]
                              for p in written.positions])  # replays the losses at a position add to the backlog
    spout_series: list[SpoutSeries] = []
    for spout in written.positions[0].spouts:
        j = spouts.index(spout)
        raised = backlog[source, j] + written.backlog_gain[shown, j] + shift * backlog_growth[j]
        if not (raised.any() or replayed[source, j].any() or added[source, j].any()):
            continue
        spout_series.append(SpoutSeries(spout, (raised - replayed[source, j] + added[source, j]).tolist(),
                                        Marks(*_kept(times, replayed[source, j]))))
    sources = {b.name: {c.name for c in topo.sources_of(b.id)} for b in topo.bolts}
    senders = [n for n in [*written.positions[0].spouts, *written.positions[0].bolts]
               if any(n in found for found in sources.values())]
    return time_list, step_times, out, senders, spout_series

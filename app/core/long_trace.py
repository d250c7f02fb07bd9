"""A trace's plot series without holding its positions (docs/trace-view.md, "Long traces"): `stormbound plot`
reads every trace here, compressed or not.

A `stormbound-trace/2` file may stand for 10^5 to 10^6 positions (StormCrawler's lasso with failures:
311,558), each about 7 kB once read as a `TracePosition`. A repeat item only copies earlier positions with
their time shifted and some queues and replay backlogs raised, so a position is kept here as three numbers
and two increment vectors: the *written* position it copies (a position or a patch of the file, each read
and checked as a `TracePosition`), its time, and what its queues and backlogs gained on the way. Every
series the plots draw (app/core/trace_series.py: queue after the position's actions, tuples in process,
arrivals per input stream, losses, failures, backlogs and replays) is the written position's value plus
those increments, computed for all positions at once with numpy. A written position is kept as one row of
64-bit integers (its figures per bolt and spout), not as the objects of a `TracePosition`, so a `/1` trace
(every position written) costs its text (its positions are decoded one at a time: app/core/formats/limits.py,
`LazyItems`) and a row a position. Limits on positions and on cells
(positions x components) are checked before anything is expanded (docs/limits.md). The result is the same
`TraceSeries` that `trace_series` builds from the expanded trace (tests/unit/test_long_trace.py compares them).
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import ValidationError

from app.core.formats.limits import LazyItems, escape
from app.core.formats.trace import CompressedTrace, TracePosition, names_problem
from app.core.formats.trace_compress import (
    TRACE_FORMAT,
    ExpandError,
    PatchItem,
    Repeat,
    checked_repeat,
    env_limit,
    invalid,
    item_kind,
    patched_position,
    read_item,
    too_many,
)
from app.core.formats.trace_numbers import exact_fraction
from app.core.topology import TopologyError, parse_topology
from app.core.trace_series import Arrivals, BoltSeries, Marks, SpoutSeries, TraceSeries, emitted_at, queue_after

#: most positions a long trace's plot holds (setting STORMBOUND_MAX_LONG_POSITIONS)
MAX_LONG_POSITIONS = env_limit("STORMBOUND_MAX_LONG_POSITIONS", 2_000_000)
#: most cells (positions x components, unrolled passes included) a plot holds (setting STORMBOUND_MAX_LONG_CELLS):
#: a cell costs about 100 bytes at its peak (its integers, then the plot's lists), so 10 million are about 1 GB
MAX_LONG_CELLS = env_limit("STORMBOUND_MAX_LONG_CELLS", 10_000_000)

Ints = np.ndarray[Any, np.dtype[np.int64]]
Floats = np.ndarray[Any, np.dtype[np.float64]]

#: the figures kept of each written position, per bolt and per spout (then one per input stream of some bolt)
_BOLT_FIELDS = ("queue", "after", "batch", "lost", "fail", "recover", "failed", "arrivals")
_SPOUT_FIELDS = ("backlog", "replayed", "added")


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
    """The written positions, each kept as one row of integers (`_BOLT_FIELDS` per bolt, `_SPOUT_FIELDS` per
    spout, the tuples emitted on each of `pairs`) and as the decoded JSON a patch changes, and, per expanded
    position, which one it copies, its time and what its queues and backlogs gained since."""

    bolts: list[str]
    spouts: list[str]
    pairs: list[tuple[str, str]]  # (sender, stream): every input stream of some bolt
    rows: array[int]
    raw: list[dict[str, Any] | None]  # what a patch of a compressed trace changes (None in a `/1` trace)
    copies: Ints  # per expanded position: index into the written positions
    times: Floats
    queue_gain: Ints  # per expanded position and bolt
    backlog_gain: Ints  # per expanded position and spout
    order: list[str] = field(default_factory=list)  # the components in the first position's order
    deaths: dict[int, list[tuple[str, bool, bool]]] = field(default_factory=dict)  # written position: (worker, death,
    # restart), docs/model.md 9.5

    def column(self, name: str) -> Ints:
        """Per written position, per bolt (or spout): one of `_BOLT_FIELDS` (`_SPOUT_FIELDS`)."""
        table = np.frombuffer(self.rows, dtype=np.int64).reshape(len(self.raw), -1)
        b, s = len(self.bolts), len(self.spouts)
        if name in _BOLT_FIELDS:
            i = _BOLT_FIELDS.index(name)
            return table[:, i * b:(i + 1) * b]
        i = _SPOUT_FIELDS.index(name)
        return table[:, len(_BOLT_FIELDS) * b + i * s:len(_BOLT_FIELDS) * b + (i + 1) * s]

    def emitted(self, pair: tuple[str, str]) -> Ints:
        table = np.frombuffer(self.rows, dtype=np.int64).reshape(len(self.raw), -1)
        return table[:, len(_BOLT_FIELDS) * len(self.bolts) + len(_SPOUT_FIELDS) * len(self.spouts)
                     + self.pairs.index(pair)]


def _problem(where: str, message: str) -> ExpandError:
    return ExpandError(escape(where, 80), message)


def _keep(written: _Written, raw: Any, where: str, compressed: bool) -> float:
    """Check one written position as a TracePosition naming exactly the topology's components and keep its
    figures as a row (the model itself is dropped: a position costs its row, not its 7 kB of objects; its
    decoded JSON is kept only in a compressed trace, for the patches after it)."""
    try:
        position = TracePosition.model_validate(raw)
    except ValidationError as err:
        raise invalid(where, err) from None
    problem = names_problem(where, position, set(written.spouts), set(written.bolts))
    if problem is not None:
        raise ExpandError(problem.path, problem.message)  # names_problem escaped the names already
    bolts = [position.bolts[b] for b in written.bolts]
    spouts = [position.spouts[s] for s in written.spouts]
    row = [s.queue for s in bolts] + [queue_after(s) for s in bolts] + [s.batch for s in bolts]
    row += [s.lost for s in bolts] + [int(s.fail) for s in bolts] + [int(s.recover) for s in bolts]
    row += [int(s.phase == "failed") for s in bolts] + [s.arrivals for s in bolts]
    row += [s.backlog for s in spouts] + [s.replayed for s in spouts]
    row += [sum((b.replays or {}).get(sp, 0) for b in position.bolts.values())  # replays that join the backlog
            + sum((w.released or {}).get(sp, 0) for w in (position.workers or {}).values()) for sp in written.spouts]
    if position.workers:
        written.deaths[len(written.raw)] = [(w, r.death, r.restart) for w, r in position.workers.items()
                                            if r.death or r.restart]
    row += [emitted_at(position, sender, stream) for sender, stream in written.pairs]
    written.rows.extend(row)
    written.raw.append(raw if compressed else None)
    if not written.order:
        written.order = [*position.spouts, *position.bolts]
    return float(position.exact_time)


def _limits(items: list[Any] | LazyItems, kinds: list[str | None], components: int, limit: int, cells: int
            ) -> tuple[dict[int, Repeat], int, int, str]:
    """Every repeat item read and checked (the one reading, trace_compress.checked_repeat) by its index, the
    positions the items stand for, and the most positions the plot may hold with the reason, all before
    anything is expanded."""
    most, why = limit, "the limit on a long trace's plot"
    if components and cells // components < most:
        most = cells // components
        why = (f"{cells} cells, positions x components, with {components} components: the limit on a long "
               "trace's plot; setting STORMBOUND_MAX_LONG_CELLS")
    repeats: dict[int, Repeat] = {}
    n = 0
    for index, kind in enumerate(kinds):
        if kind == "repeat":
            assert isinstance(items, list)  # a compressed trace's items are a list
            rep = checked_repeat(items[index], f"positions.{index}", n, most, why)
            repeats[index] = rep
            n += rep.count
        else:
            n += 1
            if n > most:
                raise too_many(most, why)
    return repeats, n, most, why


def _expand(items: list[Any] | LazyItems, compressed: bool, spouts: list[str], bolts: list[str],
            pairs: list[tuple[str, str]], limit: int, cells: int) -> tuple[_Written, int, str]:
    """Every position the items stand for, as (written position, time, gains); ExpandError naming the item.
    With the most positions the plot may hold (unrolled passes included) and why. Without `compressed`
    (a `/1` trace) every item is a position, and `items` may be LazyItems (decoded as they are read)."""
    if compressed and not isinstance(items, list):
        items = list(items)  # a compressed trace is small: its repeat items and patches are read twice
    kinds: list[str | None] = [item_kind(item) for item in items] if compressed else [None] * len(items)
    repeats, total, most, why = _limits(items, kinds, len(spouts) + len(bolts), limit, cells)
    written = _Written(bolts, spouts, pairs, array("q"), [], np.zeros(total, dtype=np.int64),
                       np.zeros(total, dtype=np.float64), np.zeros((total, len(bolts)), dtype=np.int64),
                       np.zeros((total, len(spouts)), dtype=np.int64))
    column = {name: i for i, name in enumerate(bolts)}
    spout_column = {name: i for i, name in enumerate(spouts)}
    n = 0
    for index, (item, kind) in enumerate(zip(items, kinds, strict=True)):
        where = f"positions.{index}"
        if kind == "repeat":
            n = _repeat(written, repeats[index], n, where, column, spout_column)
            continue
        if kind == "patch":
            found = read_item(item, where)
            assert isinstance(found, PatchItem)
            if n == 0:
                raise _problem(f"{where}.patch", "no position before it to change")
            item = patched_position([_materialised(written, n - 1, column, spout_column)], found.patch,
                                    f"{where}.patch")
        written.times[n] = _keep(written, item, where, compressed)
        written.copies[n] = len(written.raw) - 1
        n += 1
    return written, most, why


def _repeat(written: _Written, rep: Repeat, n: int, where: str, column: dict[str, int],
            spout_column: dict[str, int]) -> int:
    """Append the run of a (checked) repeat item after position n - 1; the count of positions after it."""
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
    assert source is not None  # a compressed trace keeps its written positions
    gains, backlogs = written.queue_gain[i], written.backlog_gain[i]
    step_bolts = {name: {**step, "queue": step["queue"] + int(gains[column[name]])} if gains[column[name]] else step
                  for name, step in source["bolts"].items()}
    step_spouts = {name: {**step, "backlog": step.get("backlog", 0) + int(backlogs[spout_column[name]])}
                   if backlogs[spout_column[name]] else step for name, step in source["spouts"].items()}
    return {**source, "bolts": step_bolts, "spouts": step_spouts}  # the patch brings its own time


_KEYS = {*CompressedTrace.model_fields, "$schema"}


def _header(data: dict[str, Any]) -> tuple[dict[str, Any], int, int, list[Any] | LazyItems]:
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise _problem(str(unknown[0]), "unknown field")
    topology, k, loop_start, items = (data.get(key) for key in ("topology", "k", "loop_start", "positions"))
    if not isinstance(topology, dict):
        raise _problem("topology", "expected the topology document the trace runs on")
    for key, value in (("k", k), ("loop_start", loop_start)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise _problem(key, "expected a whole number")
    if not isinstance(items, (list, LazyItems)):
        raise _problem("positions", "expected a list of positions and repeat items")
    assert isinstance(k, int) and isinstance(loop_start, int)
    return topology, k, loop_start, items


def _not_backwards(written: _Written) -> None:
    """Refuse times that go backwards, naming the first position (expanded) whose time is before its
    predecessor's (the exact times of the written positions; a repeat's shift is never negative)."""
    times = written.times
    down = np.flatnonzero(times[1:] < times[:-1])
    if down.size:
        i = int(down[0]) + 1
        raise _problem(f"positions.{i}.time", f"{times[i]:g} s is before the time of position {i - 1} "
                                              f"({times[i - 1]:g} s): a trace's times never go backwards")


def read_long_trace(data: dict[str, Any], extra_passes: int = 0, limit: int | None = None,
                    cells: int | None = None) -> LongTrace:
    """The series of a decoded trace document, `stormbound-trace/2` or `/1`, with the loop repeated
    `extra_passes` more times; ExpandError (naming the item or field) when the document is no trace. At most
    `limit` (MAX_LONG_POSITIONS) positions and `cells` (MAX_LONG_CELLS) positions x components, unrolled passes
    included, both checked before anything is expanded."""
    limit = MAX_LONG_POSITIONS if limit is None else limit
    cells = MAX_LONG_CELLS if cells is None else cells
    topology, k, loop_start, items = _header(data)
    try:
        topo = parse_topology(topology)
    except TopologyError as err:
        raise _problem(f"topology.{err.problems[0].path}".rstrip("."), err.problems[0].message) from None
    spouts, bolts = [s.name for s in topo.spouts], [b.name for b in topo.bolts]
    received = topo.inputs()
    pairs = list(dict.fromkeys((topo.name_of(u), stream) for b in topo.bolts for u, stream in received.get(b.id, [])))
    written, most, why = _expand(items, data.get("format") != TRACE_FORMAT, spouts, bolts, pairs, limit, cells)
    count = len(written.copies)
    if k < 1 or count != k + 2:
        raise _problem("positions", f"{count} positions; a trace with k = {k} needs k + 2 (and k at least 1)")
    if not 0 <= loop_start <= k + 1:
        raise _problem("loop_start", f"{loop_start} is outside 0..{k + 1}")
    _not_backwards(written)
    queue_field = written.column("queue")
    backlog_field = written.column("backlog")
    raised = queue_field[written.copies] + written.queue_gain
    if raised.size and raised.min() < 0 or backlog_field.size and (
            backlog_field[written.copies] + written.backlog_gain).min() < 0:
        raise _problem("positions", "a repeat makes a queue or a replay backlog negative")
    looped = loop_start <= k
    growth = (raised[k + 1] - raised[loop_start]) if looped else np.zeros(len(bolts), dtype=np.int64)
    del raised
    backlog_growth = ((backlog_field[written.copies[k + 1]] + written.backlog_gain[k + 1])
                      - (backlog_field[written.copies[loop_start]] + written.backlog_gain[loop_start])
                      if looped else np.zeros(len(spouts), dtype=np.int64))
    duration = float(written.times[k + 1] - written.times[loop_start]) if looped else 0.0
    # the shown positions: 0..k, the loop `extra_passes` more times, the closing one (app/core/trace_series.unroll)
    passes = extra_passes if looped else 0
    loop = k + 1 - loop_start
    if looped and count + passes * loop > most:
        raise _problem("--unroll", f"{passes} passes of a {loop}-position loop would show more than {most} "
                                   f"positions (at most {max(0, (most - k - 2) // loop)} here"
                                   f"{'; ' + why if most < limit else ''})")
    parts, shifts = [np.arange(0, k + 1 if looped else k + 2)], [np.zeros(k + 1 if looped else k + 2, np.int64)]
    for r in range(1, passes + 1):
        parts.append(np.arange(loop_start, k + 1))
        shifts.append(np.full(loop, r, dtype=np.int64))
    if looped:
        parts.append(np.array([k + 1]))
        shifts.append(np.array([passes], dtype=np.int64))
    shown, shift = np.concatenate(parts), np.concatenate(shifts)
    source = written.copies[shown]
    times = written.times[shown] + shift * duration
    series = _series(topo, written, shown, source, shift, times, growth, backlog_growth)
    loop_passes = ([(float(written.times[loop_start]) + r * duration, float(written.times[loop_start]) +
                     (r + 1) * duration) for r in range(passes + 1)] if looped else [])
    return LongTrace(topology=topology, k=k, loop_start=loop_start,
                     growth_per_loop={b: int(g) for b, g in zip(bolts, growth, strict=True)},
                     loop_duration=duration, names=written.order,
                     series=TraceSeries(shown=[], times=series[0], step_times=series[1], bolts=series[2],
                                        loop_passes=loop_passes, senders=series[3], spouts=series[4],
                                        deaths=_deaths(written, source, times)))


def _deaths(written: _Written, source: Ints, times: Floats) -> list[tuple[float, float, str]]:
    """The workers' deaths over the shown positions, as `trace_series.worker_deaths` gives them."""
    out: list[tuple[float, float, str]] = []
    down: dict[str, float] = {}
    if written.deaths:
        for src, t in zip(source.tolist(), times.tolist(), strict=True):
            for worker, death, restart in written.deaths.get(src, []):
                if restart and worker in down:
                    out.append((down.pop(worker), t, worker))
                if death:
                    down[worker] = t
    end = float(times[-1]) if len(times) else 0.0
    return sorted(out + [(t, end, w) for w, t in down.items()])


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


def _series(topo: Any, written: _Written, shown: Ints, source: Ints, shift: Ints, times: Floats, growth: Ints,
            backlog_growth: Ints) -> tuple[list[float], list[float], list[BoltSeries], list[str], list[SpoutSeries]]:
    """The plot series over the shown positions (each a written position plus gains and loop passes)."""
    time_list = times.tolist()
    span = (time_list[-1] - time_list[0]) or 1.0
    step_times = [*time_list, time_list[-1] + span * 0.03]
    after, batch, lost = written.column("after"), written.column("batch"), written.column("lost")
    fail, recover, failed = written.column("fail"), written.column("recover"), written.column("failed")
    arrivals = written.column("arrivals")
    down = (fail | failed)[source]
    name_of = {c.id: c.name for c in topo.components}
    received = topo.inputs()
    bolts, spouts = written.bolts, written.spouts
    out: list[BoltSeries] = []
    for bolt in (n for n in written.order if n in set(bolts)):  # in the trace's order, as trace_series draws them
        j = bolts.index(bolt)
        ident = next(b.id for b in topo.bolts if b.name == bolt)
        queue = (after[source, j] + written.queue_gain[shown, j] + shift * growth[j]) * (1 - down[:, j])
        series_arrivals: list[Arrivals] = []
        if not topo.sources_of(ident):
            series_arrivals.append(Arrivals("arrivals", None, *_kept(times, arrivals[source, j])))
        for sender, stream in [(name_of[u], stream) for u, stream in received.get(ident, [])]:
            label = f"from {sender}" if stream == "default" else f"from {sender} ({stream})"
            series_arrivals.append(Arrivals(label, sender, *_kept(times, written.emitted((sender, stream))[source])))
        out.append(BoltSeries(bolt=bolt, growth_per_loop=int(growth[j]), queue=queue.tolist(),
                              in_process=batch[source, j].tolist(), arrivals=series_arrivals,
                              failed=_failed_spans(fail[source, j], recover[source, j], failed[source, j], times,
                                                   step_times[-1]),
                              lost=Marks(*_kept(times, lost[source, j]))))
    backlog, replayed, added = written.column("backlog"), written.column("replayed"), written.column("added")
    spout_series: list[SpoutSeries] = []
    for spout in (n for n in written.order if n in set(spouts)):
        j = spouts.index(spout)
        raised = backlog[source, j] + written.backlog_gain[shown, j] + shift * backlog_growth[j]
        if not (raised.any() or replayed[source, j].any() or added[source, j].any()):
            continue
        spout_series.append(SpoutSeries(spout, (raised - replayed[source, j] + added[source, j]).tolist(),
                                        Marks(*_kept(times, replayed[source, j]))))
    sources = {b.name: {c.name for c in topo.sources_of(b.id)} for b in topo.bolts}
    senders = [n for n in written.order if any(n in found for found in sources.values())]
    return time_list, step_times, out, senders, spout_series

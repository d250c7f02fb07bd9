"""The figures of `analyze`, written once as SQL over two tables, and their rows made into an Analysis.

The tables (named by the engine, `{events}` and `{queues}` below):

* events ``(t DOUBLE, ev, comp, task BIGINT, tuple, msg, anchors LIST<STRING>, reason)``:
  times in seconds, a missing task is 0, anchors only on `bolt_emit`;
* queues ``(t DOUBLE, comp, task BIGINT, queue BIGINT)``.

Per component: throughput in (takes/s) and out (emits/s), measured α (from a take to the
first emit anchored to that tuple, else to its first ack/fail: the end of its batch), σ
(emitted per taken), spout rates and burst sizes (emits of one task less than `burst_gap`
apart form a burst; a spout's rate is the tuples of all but its last burst over the time
from its first to its last burst, so the idle tail of a log is not counted), and per
queue the series (mean of the samples in each `bin_s` bin, summed over tasks), whose
trend app.measure.analysis_model.fit_trend fits.

An engine is a function `run(sql) -> rows` (tuples in the select's order) plus its
dialect (app.measure.sql.dialect): DuckDB in this process (app.measure.sql.embedded),
Spark SQL on a cluster (app/spark/analysis_job.py).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from app.measure.analysis_model import Analysis, ComponentStats, LossRow, finish_queues
from app.measure.records import NEEDS_MSG, NEEDS_TUPLE
from app.measure.sql.dialect import Dialect, number, render

Run = Callable[[str], Sequence[Sequence[Any]]]

KINDS = ("spout_emit", "bolt_emit", "take", "bolt_ack", "bolt_fail", "spout_ack", "spout_fail",
         "bolt_down", "bolt_up", "bolt_lost")


def _listed(names: Sequence[str]) -> str:
    return ", ".join(f"'{n}'" for n in names)


# A row the readers refuse (unknown kind; t, comp, and tuple or msg where the kind needs them; a time that
# is not finite, a negative task or queue). An engine that reads a log itself (DuckDB a Parquet file, Spark
# any file) counts these in its first pass over the events and queues (`_bad_n`) and, when there is one,
# has the log's reader name it (app.measure.sql.embedded, app.spark.frames.checked_job).
BAD_EVENT = (f"ev NOT IN ({_listed(KINDS)}) OR t IS NULL OR {{nonfinite_t}} OR comp IS NULL OR task < 0"
             f" OR (ev IN ({_listed(NEEDS_TUPLE)}) AND tuple IS NULL)"
             f" OR (ev IN ({_listed(NEEDS_MSG)}) AND msg IS NULL)")
BAD_QUEUE = ("t IS NULL OR {nonfinite_t} OR comp IS NULL OR task < 0 OR queue < 0 OR task > 9007199254740992"
             " OR queue > 9007199254740992")  # counts up to 2^53, as the readers take them

# Events per (component, task) and kind, the time span, and the rows a reader would refuse.
COUNTS = ("SELECT comp, task, count(*) AS n, min(t) AS a, max(t) AS b, "
          + ", ".join(f"sum(CASE WHEN ev = '{k}' THEN 1 ELSE 0 END) AS {k}" for k in KINDS)
          + ", sum(CASE WHEN ev = 'spout_emit' AND reason = 'REPLAY' THEN 1 ELSE 0 END) AS replays"
          + ", sum(CASE WHEN ev = 'bolt_lost' AND reason = 'BATCH' THEN 1 ELSE 0 END) AS lost_batch"
          + f", sum(CASE WHEN {BAD_EVENT} THEN 1 ELSE 0 END) AS _bad_n"
          + " FROM {events} GROUP BY comp, task")

# Down intervals of killed tasks: per (component, task) the k-th bolt_down (in time) pairs with the k-th
# bolt_up; a task still down when the log ends has no up time.
DOWN = """
WITH d AS (
  SELECT comp, task, t, row_number() OVER (PARTITION BY comp, task ORDER BY t) AS k FROM {events} WHERE ev = 'bolt_down'
), u AS (
  SELECT comp, task, t, row_number() OVER (PARTITION BY comp, task ORDER BY t) AS k FROM {events} WHERE ev = 'bolt_up'
)
SELECT d.comp, d.task, d.t, u.t FROM d LEFT JOIN u ON d.comp = u.comp AND d.task = u.task AND d.k = u.k
"""

# Tuples lost per (bolt, spout of their tree): the lost tuples, their trees, and how many of those trees' messages
# the spout emitted again after the tree's attempt (bolt_lost.msg is the root tuple, the tuple of a spout_emit).
LOSSES = """
WITH lost AS (
  SELECT comp AS bolt, msg AS root, count(*) AS n FROM {events} WHERE ev = 'bolt_lost' AND msg IS NOT NULL
  GROUP BY comp, msg
), roots AS (
  SELECT l.bolt, e.comp AS spout, e.msg, e.t, l.n
  FROM lost l JOIN {events} e ON e.ev = 'spout_emit' AND e.tuple = l.root
), again AS (
  SELECT r.bolt, r.spout, r.msg, r.t, max(r.n) AS n, max(CASE WHEN x.t IS NOT NULL THEN 1 ELSE 0 END) AS replayed
  FROM roots r LEFT JOIN {events} x
    ON x.ev = 'spout_emit' AND x.reason = 'REPLAY' AND x.comp = r.spout AND x.msg = r.msg AND x.t > r.t
  GROUP BY r.bolt, r.spout, r.msg, r.t
)
SELECT bolt, spout, CAST(sum(n) AS {long}), CAST(count(*) AS {long}), CAST(sum(replayed) AS {long})
FROM again GROUP BY bolt, spout
"""

QUEUE_SPAN = f"SELECT min(t), max(t), count(*), sum(CASE WHEN {BAD_QUEUE} THEN 1 ELSE 0 END) AS _bad_n FROM {{queues}}"

# α: first take of (comp, tuple) -> first emit anchored to it, else its first ack/fail.
ALPHA = """
WITH keyed AS (
  SELECT comp, t, ev, {explode}(CASE WHEN ev = 'bolt_emit' THEN anchors ELSE {array}(tuple) END) AS k
  FROM {events} WHERE ev IN ('take', 'bolt_emit', 'bolt_ack', 'bolt_fail')
), firsts AS (
  SELECT comp, k,
         min(CASE WHEN ev = 'take' THEN t END) AS take_t,
         min(CASE WHEN ev = 'bolt_emit' THEN t END) AS emit_t,
         min(CASE WHEN ev IN ('bolt_ack', 'bolt_fail') THEN t END) AS ack_t
  FROM keyed GROUP BY comp, k
), work AS (
  SELECT comp, coalesce(emit_t, ack_t) - take_t AS alpha FROM firsts
  WHERE take_t IS NOT NULL AND coalesce(emit_t, ack_t) >= take_t
)
SELECT comp, avg(alpha), min(alpha), max(alpha), stddev_pop(alpha) FROM work GROUP BY comp
"""

# Bursts: the emits of one spout task closer than burst_gap; the rate leaves out the last burst.
# Complete latency per spout: each acked message from its last emission before the ack (a replay starts its
# latency anew) to its spout_ack (docs/latency.md).
COMPLETE = """
WITH acks AS (SELECT comp, msg, t FROM {events} WHERE ev = 'spout_ack'),
emits AS (SELECT comp, msg, t FROM {events} WHERE ev = 'spout_emit'),
pairs AS (
  SELECT a.comp, a.msg, a.t AS ack_t, max(e.t) AS emit_t FROM acks a
  JOIN emits e ON a.comp = e.comp AND a.msg = e.msg AND e.t <= a.t GROUP BY a.comp, a.msg, a.t)
SELECT comp, CAST(count(*) AS {long}), max(ack_t - emit_t), avg(ack_t - emit_t) FROM pairs GROUP BY comp
"""

BURSTS = """
WITH gaps AS (
  SELECT comp, task, t, t - lag(t) OVER (PARTITION BY comp, task ORDER BY t) AS gap
  FROM {events} WHERE ev = 'spout_emit'
), marked AS (
  SELECT comp, task, t, CASE WHEN gap IS NULL OR gap > {gap} THEN 1 ELSE 0 END AS fresh FROM gaps
), numbered AS (
  SELECT comp, task, t,
         sum(fresh) OVER (PARTITION BY comp, task ORDER BY t ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS burst
  FROM marked
), sizes AS (
  SELECT comp, task, burst, count(*) AS size, min(t) AS began FROM numbered GROUP BY comp, task, burst
), by_task AS (
  SELECT comp, task, count(*) AS n, sum(size) AS tuples, max(size) AS mx, min(began) AS first_at, max(began) AS last_at,
         max_by(size, began) AS last_size
  FROM sizes GROUP BY comp, task
)
SELECT comp, CAST(sum(n) AS {long}), CAST(sum(tuples) AS {long}), CAST(max(mx) AS {long}),
       sum(CASE WHEN last_at > first_at THEN (tuples - last_size) / (last_at - first_at) END)
FROM by_task GROUP BY comp
"""

# The queue series: the mean of each task's samples in a bin, summed over the tasks.
QUEUE_BINS = """
WITH binned AS (
  SELECT comp, task, CAST(floor((t - {start}) / {bin}) AS {long}) AS bin, queue FROM {queues}
), per_task AS (
  SELECT comp, task, bin, avg(queue) AS q FROM binned GROUP BY comp, task, bin
)
SELECT comp, bin, sum(q) FROM per_task GROUP BY comp, bin
"""


def analyze_sql(run: Run, dialect: Dialect, events: str, queues: str, bin_s: float = 1.0,
                growth_floor: float = 0.05, burst_gap: float = 0.005, source: str = "") -> Analysis:
    """The analysis of the tables `events` and `queues` by an engine that runs SQL of `dialect`."""

    def query(sql: str, **values: object) -> Sequence[Sequence[Any]]:
        return run(render(sql, dialect, events=events, queues=queues, **values))

    per_task = query(COUNTS)
    q_start, q_end, q_n, _ = query(QUEUE_SPAN)[0]
    starts = [r[3] for r in per_task if r[3] is not None] + ([q_start] if q_start is not None else [])
    ends = [r[4] for r in per_task if r[4] is not None] + ([q_end] if q_end is not None else [])
    start, end = (float(min(starts)), float(max(ends))) if starts else (0.0, 0.0)
    duration = max(end - start, 1e-9)
    n_events = sum(int(r[2]) for r in per_task)

    totals: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    tasks: dict[str, set[Any]] = defaultdict(set)
    first_seen: dict[str, float] = {}
    for r in per_task:
        comp = r[0]
        tasks[comp].add(r[1])
        first_seen[comp] = min(first_seen.get(comp, float(r[3])), float(r[3]))
        for k, value in zip((*KINDS, "replays", "lost_batch"), r[5:7 + len(KINDS)], strict=True):
            totals[comp][k] += int(value)
    components: dict[str, ComponentStats] = {}
    for comp in sorted(totals, key=lambda c: (first_seen[c], c)):
        n = totals[comp]
        kind = "spout" if n["spout_emit"] > 0 else "bolt"
        emitted = n["spout_emit"] + n["bolt_emit"]
        components[comp] = ComponentStats(
            name=comp, kind=kind, tasks=len(tasks[comp]), emitted=emitted, taken=n["take"],
            acked=n["bolt_ack"] + n["spout_ack"], failed=n["bolt_fail"] + n["spout_fail"],
            rate_in=n["take"] / duration, rate_out=emitted / duration,
            # σ over the batches the bolt finished: a batch its killed task lost emitted nothing
            sigma=(n["bolt_emit"] / (n["take"] - n["lost_batch"])) if kind == "bolt" and n["take"] > n["lost_batch"]
            else None,
            failures=n["bolt_down"], lost=n["bolt_lost"], trees_failed=n["spout_fail"], replays=n["replays"])

    if any(n["bolt_down"] for n in totals.values()):
        for comp, _task, down_t, up_t in query(DOWN):
            if comp in components:
                c = components[comp]
                until = float(up_t) if up_t is not None else end
                c.down.append((float(down_t), until))
                c.down_s += max(0.0, until - float(down_t))
        for c in components.values():
            c.down.sort()
    losses: list[LossRow] = []
    if any(n["bolt_lost"] for n in totals.values()):
        losses = sorted((LossRow(bolt=b, spout=s, lost=int(n), trees=int(k), replayed=int(r))
                        for b, s, n, k, r in query(LOSSES)), key=lambda row: (row.bolt, row.spout))

    if any(n["take"] for n in totals.values()):
        for comp, mean, lo, hi, sd in query(ALPHA):
            if comp in components:
                c = components[comp]
                c.alpha_mean, c.alpha_min, c.alpha_max = float(mean), float(lo), float(hi)
                c.alpha_std = float(sd) if sd is not None else 0.0

    if any(n["spout_emit"] for n in totals.values()):
        for comp, bursts, tuples, biggest, rate in query(BURSTS, gap=number(burst_gap)):
            if comp in components:
                c = components[comp]
                c.bursts, c.burst_mean, c.burst_max = int(bursts), int(tuples) / int(bursts), int(biggest)
                if rate is not None:
                    c.rate_out = float(rate)
        for c in components.values():  # fresh and replayed apart: the annotated rate is the fresh one
            if c.kind == "spout" and c.emitted:
                share = c.replays / c.emitted
                c.rate_fresh, c.rate_replayed = c.rate_out * (1 - share), c.rate_out * share

    if any(n["spout_ack"] for n in totals.values()):
        for comp, done, longest, mean in query(COMPLETE):
            if comp in components and int(done):
                c = components[comp]
                c.completed, c.complete_max, c.complete_mean = int(done), float(longest), float(mean)

    bins: dict[str, list[tuple[float, float]]] = defaultdict(list)
    if q_n:
        for comp, slot, level in query(QUEUE_BINS, start=number(start), bin=number(bin_s)):
            bins[comp].append((start + (int(slot) + 0.5) * bin_s, float(level)))
    finish_queues(components, bins, growth_floor, bin_s)
    return Analysis(source=source, start=start, end=end, events=n_events, queue_samples=int(q_n),
                    bin_s=bin_s, growth_floor=growth_floor, components=components, losses=losses)

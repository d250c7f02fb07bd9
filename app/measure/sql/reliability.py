"""Storm's delivery guarantees (P1-P4, max spout pending) written once as SQL over the events table.

The properties are those of app/measure/reliability.py (its docstring); here is how they
are computed, by either engine (DuckDB in this process, Spark SQL on a cluster), over
`{events}` ``(t, ev, comp, task, tuple, msg, anchors, reason, seq)`` where `seq` is the
log order (ties in time are broken by it):

* attempts: per (spout, task, msg) the k-th `spout_emit` (in time, then log order) pairs
  with the k-th `spout_ack`/`spout_fail`;
* per tuple (one group-by over its tree events): whether it failed, its last tree event,
  its last take and ack/fail, and the components that emitted it and that took or finished
  it (first and last in name order); its emitter is the component of its first emit. The
  per-component facts (P2) and who took it (P3) come from these when one component did it
  all, and from the events only for the few tuples several components emitted, took or
  finished;
* trees: (tuple, root) pairs, from the attempts' root tuples through the anchors, one
  query per level until a level adds nothing (anchors in a cycle end too);
* each property from its few candidates: P2 from the suspect takes, P3 from the (tuple,
  subscriber) pairs never taken, P4 from the late tuples, max spout pending from the time
  buckets that can reach the cap;
* the violation rows of each property in one table, counted per property, the first
  `limit` listed in a total order (time first, missing times last).

An engine (`Engine`) runs a query for its rows, keeps a query's result as a named table
for the next ones (`materialize`) and drops it (`drop`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from app.measure.reliability_model import (
    P1,
    P2,
    P3,
    P4,
    PENDING,
    ReliabilityConfig,
    ReliabilityReport,
    build_report,
)
from app.measure.sql.dialect import Dialect, literal, number, render


class Engine(Protocol):
    dialect: Dialect

    def run(self, sql: str) -> Sequence[Sequence[Any]]: ...

    def materialize(self, name: str, sql: str) -> None: ...

    def drop(self, name: str) -> None: ...


# The first pass: events, the log's end, and the rows a reader would refuse (see app.measure.sql.analysis).
SPAN = "SELECT count(*), max(t), min(t), sum(CASE WHEN {bad} THEN 1 ELSE 0 END) AS _bad_n FROM {events}"

ATTEMPTS = """
WITH e AS (
  SELECT comp, task, msg, t, seq, tuple,
         row_number() OVER (PARTITION BY comp, task, msg ORDER BY t, seq) AS k
  FROM {events} WHERE ev = 'spout_emit'
), c AS (
  SELECT comp, task, msg, t, seq, ev,
         row_number() OVER (PARTITION BY comp, task, msg ORDER BY t, seq) AS k
  FROM {events} WHERE ev IN ('spout_ack', 'spout_fail')
)
SELECT e.comp, e.task, e.msg, e.t, e.seq, e.tuple, c.t AS close_t, c.seq AS close_seq, c.ev AS close_ev
FROM e LEFT JOIN c ON e.comp = c.comp AND e.task = c.task AND e.msg = c.msg AND e.k = c.k
"""

# Per tuple, one pass over its tree events: whether it failed, its last tree event, and the components that
# emitted it, took it, and took or finished it (each as the first and last in name order: when these are
# equal, one component did it all, and the per-component facts are the per-tuple ones).
TUPLES = """
SELECT tuple,
       max(CASE WHEN ev = 'bolt_fail' THEN 1 ELSE 0 END) AS failed,
       max(CASE WHEN ev <> 'spout_emit' THEN t END) AS tree_last,
       min(CASE WHEN ev IN ('spout_emit', 'bolt_emit') THEN comp END) AS e_lo,
       max(CASE WHEN ev IN ('spout_emit', 'bolt_emit') THEN comp END) AS e_hi,
       min(CASE WHEN ev IN ('take', 'bolt_ack', 'bolt_fail', 'bolt_lost') THEN comp END) AS w_lo,
       max(CASE WHEN ev IN ('take', 'bolt_ack', 'bolt_fail', 'bolt_lost') THEN comp END) AS w_hi,
       max(CASE WHEN ev = 'take' THEN t END) AS take_last,
       max(CASE WHEN ev IN ('bolt_ack', 'bolt_fail', 'bolt_lost') THEN t END) AS done_t
FROM {events} WHERE ev IN ('spout_emit', 'bolt_emit', 'take', 'bolt_ack', 'bolt_fail', 'bolt_lost')
GROUP BY tuple
"""

# The emitter of a tuple emitted by several components: the component of its first emit (time, then log order).
FIRST_EMITTERS = """
SELECT tuple, comp AS emitter FROM (
  SELECT e.tuple, e.comp, row_number() OVER (PARTITION BY e.tuple ORDER BY e.t, e.seq) AS rn
  FROM {events} e JOIN (SELECT tuple FROM {tuples} WHERE e_lo <> e_hi) s ON e.tuple = s.tuple
  WHERE e.ev IN ('spout_emit', 'bolt_emit')
) f WHERE rn = 1
"""

# Every tuple with an emitter; `taker`: the one component that took it (NULL: none); `several`: 1 when several
# components took or finished it (who took it is then in took_several).
EMITTED = """
SELECT tuple, emitter, CASE WHEN w_lo = w_hi AND take_last IS NOT NULL THEN w_lo END AS taker,
       CASE WHEN w_lo <> w_hi THEN 1 ELSE 0 END AS several
FROM (SELECT tuple, e_lo AS emitter, w_lo, w_hi, take_last FROM {tuples} WHERE e_lo = e_hi
      UNION ALL
      SELECT p.tuple, f.emitter, p.w_lo, p.w_hi, p.take_last
      FROM {tuples} p JOIN {first_emitters} f ON p.tuple = f.tuple
     ) p
"""

# Who took a tuple that several components took or finished.
TOOK_SEVERAL = """
SELECT DISTINCT e.tuple, e.comp AS sub
FROM {events} e JOIN (SELECT tuple FROM {tuples} WHERE w_lo <> w_hi) s ON e.tuple = s.tuple
WHERE e.ev = 'take'
"""

# P2's suspects: (component, tuple) whose last take has no later ack/fail by that component; per tuple where
# one component took and finished it, else per component over the events of those tuples.
SUSPECTS = """
SELECT w_lo AS comp, tuple, done_t FROM {tuples}
WHERE w_lo = w_hi AND take_last IS NOT NULL AND (done_t IS NULL OR take_last > done_t)
UNION ALL
SELECT comp, tuple, done_t FROM (
  SELECT e.comp, e.tuple, max(CASE WHEN e.ev = 'take' THEN e.t END) AS take_last,
         max(CASE WHEN e.ev IN ('bolt_ack', 'bolt_fail', 'bolt_lost') THEN e.t END) AS done_t
  FROM {events} e JOIN (SELECT tuple FROM {tuples} WHERE w_lo <> w_hi) s ON e.tuple = s.tuple
  WHERE e.ev IN ('take', 'bolt_ack', 'bolt_fail', 'bolt_lost') GROUP BY e.comp, e.tuple
) g WHERE take_last IS NOT NULL AND (done_t IS NULL OR take_last > done_t)
"""

EDGES = """
SELECT child, parent FROM (SELECT tuple AS child, {explode}(anchors) AS parent FROM {events} WHERE ev = 'bolt_emit') a
WHERE parent IS NOT NULL
"""

TREE_START = "SELECT DISTINCT tuple, tuple AS root FROM {attempts}"

# one level deeper: the children of the last level's tuples, with roots not yet known for them
TREE_LEVEL = """
SELECT DISTINCT e.child AS tuple, f.root FROM {edges} e JOIN {frontier} f ON e.parent = f.tuple
WHERE NOT EXISTS (SELECT 1 FROM {tree} s WHERE s.tuple = e.child AND s.root = f.root)
"""

# max spout pending: the attempts of a spout task pending when it emits, a running sum over its emits (+1) and
# closes (-1) in time, then log order. Summed first per time bucket (`width` seconds from `start`): a bucket
# whose emits cannot reach the cap (pending before it, plus its emits but one, below `cap`) is skipped, and
# the running sum is taken only inside the others (a bucket's steps all come after an earlier bucket's).
PENDING_BUCKETS = 4096
PENDING_OVER = """
WITH steps AS (
  SELECT comp, task, t, seq, 1 AS step, CAST(floor((t - {start}) / {width}) AS {long}) AS b FROM {attempts}
  UNION ALL
  SELECT comp, task, close_t AS t, close_seq AS seq, -1 AS step,
         CAST(floor((close_t - {start}) / {width}) AS {long}) AS b
  FROM {attempts} WHERE close_t IS NOT NULL
), buckets AS (
  SELECT comp, task, b, sum(step) AS net, sum(CASE WHEN step = 1 THEN 1 ELSE 0 END) AS emits
  FROM steps GROUP BY comp, task, b
), hot AS (
  SELECT comp, task, b, before FROM (
    SELECT comp, task, b, emits,
           coalesce(sum(net) OVER (PARTITION BY comp, task ORDER BY b
                                   ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
    FROM buckets
  ) c WHERE emits > 0 AND before + emits - 1 >= {cap}
), pending AS (
  SELECT s.comp, s.task, s.seq, s.step,
         h.before + coalesce(sum(s.step) OVER (PARTITION BY s.comp, s.task, s.b ORDER BY s.t, s.seq
                                              ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS pending
  FROM steps s JOIN hot h ON s.comp = h.comp AND s.task = h.task AND s.b = h.b
)
SELECT {row}
FROM pending p JOIN {attempts} a ON p.comp = a.comp AND p.task = a.task AND p.seq = a.seq
WHERE p.step = 1 AND p.pending >= {cap}
"""


def _bucket_width(start: float, end: float) -> float:
    """The time buckets of PENDING_OVER: about PENDING_BUCKETS over the log (1 s for a log of one instant)."""
    width = (end - start) / PENDING_BUCKETS
    return width if width > 0 and width < float("inf") else 1.0


COLUMNS = ("t", "prop", "comp", "task", "tuple", "msg", "other", "kind", "x")
TYPES = ("DOUBLE", "STRING", "STRING", "BIGINT", "STRING", "STRING", "STRING", "STRING", "DOUBLE")


def _row(**given: str) -> str:
    """A select list of the violation columns: the given expressions, NULL of the column's type for the rest."""
    return ", ".join(f"CAST({given.get(c, 'NULL')} AS {ty}) AS {c}" for c, ty in zip(COLUMNS, TYPES, strict=True))


class _Tables:
    """The tables of one check: queries rendered with the names kept so far, results kept as `{prefix}_{name}`
    tables for the next queries, all dropped at the end (`drop_all`)."""

    def __init__(self, engine: Engine, events: str, prefix: str):
        self.engine = engine
        self.dialect = engine.dialect
        self.prefix = prefix
        self.names: dict[str, str] = {"events": events}
        self.made: list[str] = []

    def sql(self, text: str, **values: object) -> str:
        return render(text, self.dialect, **self.names, **values)

    def keep(self, name: str, text: str, rendered: bool = False, **values: object) -> str:
        full = f"{self.prefix}_{name}"
        self.engine.materialize(full, text if rendered else self.sql(text, **values))
        self.made.append(full)
        self.names[name] = full
        return full

    def count(self, text: str) -> int:
        """The single count of an already rendered query."""
        return int(self.engine.run(text)[0][0])

    def drop_all(self) -> None:
        for name in reversed(self.made):
            self.engine.drop(name)


def check_reliability_sql(engine: Engine, events: str, config: ReliabilityConfig, limit: int = 200,
                          prefix: str = "rel") -> ReliabilityReport:
    """The reliability report of the events table `events` by `engine`."""
    q = _Tables(engine, events, prefix)
    two_t = number(2 * config.message_timeout_s)
    try:
        n_events, log_end, log_start = _span(q)
        end = number(log_end)
        q.keep("attempts", ATTEMPTS)
        q.keep("tuples", TUPLES)
        q.keep("suspects", SUSPECTS)
        suspects = q.count(q.sql("SELECT count(*) FROM {suspects}"))
        if config.ackers > 0 or suspects:
            _keep_trees(q)
        parts: list[str] = []
        undecided: dict[str, int] = {}
        if config.ackers > 0:
            parts += _timed_out(q, end, two_t, undecided)
        if config.max_spout_pending is not None:
            parts.append(_pending_over(q, int(config.max_spout_pending), log_start, log_end))
        if suspects:
            parts.append(_unfinished(q, end, two_t, undecided))
        if config.ackers > 0:
            parts += _not_delivered(q, config)
            parts.append(_late(q))
        counts, rows = _violations(q, parts, limit)
    finally:
        q.drop_all()
    return build_report(config, counts, rows, undecided, n_events, log_end, limit)


def _span(q: _Tables) -> tuple[int, float, float]:
    """The events of the log, its end and its start (0 for an empty log)."""
    from app.measure.sql.analysis import BAD_EVENT

    n_events, log_end, log_start, _ = q.engine.run(q.sql(SPAN, bad=render(BAD_EVENT, q.dialect)))[0]
    return (int(n_events), float(log_end) if log_end is not None else 0.0,
            float(log_start) if log_start is not None else 0.0)


def _keep_trees(q: _Tables) -> None:
    """The trees as `{tree}` (tuple, root): one level at a time until nothing new."""
    q.keep("edges", EDGES)
    q.keep("tree", TREE_START)
    level = 0
    frontier = q.names["tree"]
    while True:
        level += 1
        deeper = q.keep(f"level{level}", TREE_LEVEL, frontier=frontier)
        if not q.count(f"SELECT count(*) FROM {deeper}"):
            break
        q.keep(f"tree{level}", "SELECT tuple, root FROM {tree} UNION ALL SELECT tuple, root FROM " + deeper)
        q.names["tree"] = q.names[f"tree{level}"]
        frontier = deeper


def _timed_out(q: _Tables, end: str, two_t: str, undecided: dict[str, int]) -> list[str]:
    """P1: the attempts closed, or still open at the end of the log, later than twice the timeout; those the
    log ends too early to decide counted in `undecided`."""
    dialect = q.dialect
    parts = [q.sql(f"SELECT {_row(t='t', prop=literal(P1, dialect), comp='comp', task='task', tuple='tuple', msg='msg', kind='close_ev', x='close_t - t')} "  # noqa: E501
                   "FROM {attempts} WHERE close_t IS NOT NULL AND close_t - t > " + two_t),
             q.sql(f"SELECT {_row(t='t', prop=literal(P1, dialect), comp='comp', task='task', tuple='tuple', msg='msg')} "  # noqa: E501
                   f"FROM {{attempts}} WHERE close_t IS NULL AND {end} - t > {two_t}")]
    undecided[P1] = q.count(q.sql(f"SELECT count(*) FROM {{attempts}} WHERE close_t IS NULL "
                                  f"AND {end} - t <= {two_t}"))
    return parts


def _pending_over(q: _Tables, cap: int, log_start: float, log_end: float) -> str:
    """Max spout pending: the spout tasks with more than `cap` tuples pending."""
    dialect = q.dialect
    row = _row(t='a.t', prop=literal(PENDING, dialect), comp='a.comp', task='a.task', tuple='a.tuple',
               msg='a.msg', kind=literal(str(cap), dialect), x='p.pending')
    return q.sql(PENDING_OVER.replace("{row}", row), cap=cap, start=number(log_start),
                 width=number(_bucket_width(log_start, log_end)))


def _unfinished(q: _Tables, end: str, two_t: str, undecided: dict[str, int]) -> str:
    """P2: takes with no later ack/fail by the same component; undecided while the log ends less than 2x the
    timeout after the take and a root of the tuple is open (or the tuple is in no tree)."""
    q.keep("unfinished", f"""
WITH open_roots AS (
  SELECT tr.tuple, max(CASE WHEN a.close_t IS NULL THEN 1 ELSE 0 END) AS any_open
  FROM {{tree}} tr JOIN {{attempts}} a ON tr.root = a.tuple
  WHERE tr.tuple IN (SELECT tuple FROM {{suspects}}) GROUP BY tr.tuple
)
SELECT e.t, e.comp, e.task, e.tuple,
       CASE WHEN {end} - e.t <= {two_t} AND coalesce(o.any_open = 1, TRUE) THEN 1 ELSE 0 END AS wait
FROM {{events}} e JOIN {{suspects}} s ON e.comp = s.comp AND e.tuple = s.tuple
LEFT JOIN open_roots o ON e.tuple = o.tuple
WHERE e.ev = 'take' AND (s.done_t IS NULL OR e.t > s.done_t)
""")
    part = q.sql(f"SELECT {_row(t='t', prop=literal(P2, q.dialect), comp='comp', task='task', tuple='tuple')} "
                 "FROM {unfinished} WHERE wait = 0")
    undecided[P2] = q.count(q.sql("SELECT count(*) FROM {unfinished} WHERE wait = 1"))
    return part


def _subscriptions(q: _Tables, config: ReliabilityConfig, emitted: str) -> str:
    """The (emitter, sub) pairs: the configured subscribers, else who took what each component emitted."""
    dialect = q.dialect
    if config.subscribers is None:  # who took what each component emitted
        return (f"SELECT DISTINCT emitter, taker AS sub FROM ({emitted}) p "
                "WHERE emitter IS NOT NULL AND taker IS NOT NULL "
                f"UNION SELECT DISTINCT p.emitter, k.sub FROM ({emitted}) p "
                "JOIN {took_several} k ON p.tuple = k.tuple WHERE p.emitter IS NOT NULL")
    pairs = [(src, dst) for src, dsts in sorted(config.subscribers.items()) for dst in dsts]
    return ("SELECT * FROM (VALUES " + ", ".join(
        f"({literal(a, dialect)}, {literal(b, dialect)})" for a, b in pairs) + ") AS v(emitter, sub)"
            if pairs else "SELECT CAST(NULL AS STRING) AS emitter, CAST(NULL AS STRING) AS sub WHERE 1 = 0")


def _not_delivered(q: _Tables, config: ReliabilityConfig) -> list[str]:
    """P3: every tuple of a clean acked tree is taken by each subscriber of its emitter. The (tuple,
    subscriber) pairs never taken come first (no taker, or one: a filter; several: who took it), then the
    acked trees without a failed tuple that hold them."""
    q.keep("first_emitters", FIRST_EMITTERS)
    q.keep("took_several", TOOK_SEVERAL)
    emitted = q.sql(EMITTED)
    subs = _subscriptions(q, config, emitted)
    q.keep("missing", f"""
WITH subs AS ({subs}), p AS ({emitted})
SELECT p.tuple, p.emitter, s.sub FROM p JOIN subs s ON p.emitter = s.emitter
WHERE p.several = 0 AND (p.taker IS NULL OR s.sub <> p.taker)
UNION ALL
SELECT p.tuple, p.emitter, s.sub FROM p JOIN subs s ON p.emitter = s.emitter
WHERE p.several = 1 AND NOT EXISTS (SELECT 1 FROM {{took_several}} k WHERE k.tuple = p.tuple AND k.sub = s.sub)
""")
    return [q.sql(f"""
WITH failed_roots AS (
  SELECT DISTINCT tr.root FROM {{tree}} tr JOIN {{tuples}} p ON tr.tuple = p.tuple WHERE p.failed = 1
)
SELECT {_row(t='a.close_t', prop=literal(P3, q.dialect), comp='m.emitter', tuple='m.tuple', msg='a.msg', other='m.sub')}
FROM {{missing}} m JOIN {{tree}} tr ON m.tuple = tr.tuple JOIN {{attempts}} a ON tr.root = a.tuple
WHERE a.close_ev = 'spout_ack' AND NOT EXISTS (SELECT 1 FROM failed_roots r WHERE r.root = tr.root)
""")]  # noqa: E501


def _late(q: _Tables) -> str:
    """P4: events of an acked tree after its root's spout_ack (the few late tuples first)."""
    q.keep("late", """
SELECT tr.tuple, a.close_t, a.msg AS root_msg
FROM {tree} tr JOIN {attempts} a ON tr.root = a.tuple JOIN {tuples} p ON tr.tuple = p.tuple
WHERE a.close_ev = 'spout_ack' AND p.tree_last > a.close_t
""")
    return q.sql(f"""
SELECT {_row(t='e.t', prop=literal(P4, q.dialect), comp='e.comp', task='e.task', tuple='e.tuple', msg='l.root_msg', kind='e.ev', x='l.close_t')}
FROM {{events}} e JOIN {{late}} l ON e.tuple = l.tuple
WHERE e.ev IN ('take', 'bolt_emit', 'bolt_ack', 'bolt_fail') AND e.t > l.close_t
""")  # noqa: E501


Row = tuple[float | None, str, str | None, int | None, str | None, str | None, str | None, str | None, float | None]


def _violations(q: _Tables, parts: list[str], limit: int) -> tuple[dict[str, int], list[Row]]:
    """The violation rows of every property in one table: their counts per property, and the first `limit`
    in a total order (time first, missing times last)."""
    parts = parts or [f"SELECT {_row()} WHERE 1 = 0"]  # nothing to check
    q.keep("violations", " UNION ALL ".join(f"SELECT * FROM ({p}) AS part{i}" for i, p in enumerate(parts)),
           rendered=True)
    counts = {str(p): int(n) for p, n in q.engine.run(q.sql("SELECT prop, count(*) FROM {violations} GROUP BY prop"))}
    found = [tuple(r) for r in q.engine.run(q.sql(
        "SELECT t, prop, comp, task, tuple, msg, other, kind, x FROM {violations} "
        "ORDER BY t ASC NULLS LAST, prop, comp ASC NULLS FIRST, task ASC NULLS FIRST, tuple ASC NULLS FIRST, "
        f"msg ASC NULLS FIRST, other ASC NULLS FIRST, x ASC NULLS FIRST LIMIT {int(limit)}"))]
    rows = [(None if t is None else float(t), prop, comp, None if task is None else int(task), tup, msg, other,
             kind, None if x is None else float(x)) for t, prop, comp, task, tup, msg, other, kind, x in found]
    return counts, rows

"""Storm's delivery guarantees (P1-P4, max spout pending) written once as SQL over the events table.

The properties are those of app/measure/reliability.py (its docstring); here is how they
are computed, by either engine (DuckDB in this process, Spark SQL on a cluster), over
`{events}` ``(t, ev, comp, task, tuple, msg, anchors, reason, seq)`` where `seq` is the
log order (ties in time are broken by it):

* attempts: per (spout, task, msg) the k-th `spout_emit` (in time, then log order) pairs
  with the k-th `spout_ack`/`spout_fail`;
* per (component, tuple): its last take, last ack/fail, whether it failed, its last tree
  event; per tuple: its emitter (the component of its first emit) and those facts over all
  components;
* trees: (tuple, root) pairs, from the attempts' root tuples through the anchors, one
  query per level until a level adds nothing (anchors in a cycle end too);
* the violation rows of each property in one table, counted per property, the first
  `limit` listed in a total order (time first, missing times last).

An engine (`Engine`) runs a query for its rows, keeps a query's result as a named table
for the next ones (`materialize`) and drops it (`drop`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

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

    def run(self, sql: str) -> Sequence[Sequence]: ...

    def materialize(self, name: str, sql: str) -> None: ...

    def drop(self, name: str) -> None: ...


# The first pass: events, the log's end, and the rows a reader would refuse (see app.measure.sql.analysis).
SPAN = "SELECT count(*), max(t), sum(CASE WHEN {bad} THEN 1 ELSE 0 END) AS _bad_n FROM {events}"

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

FACTS = """
SELECT comp, tuple,
       max(CASE WHEN ev = 'take' THEN t END) AS take_last,
       max(CASE WHEN ev IN ('bolt_ack', 'bolt_fail') THEN t END) AS done_t,
       max(CASE WHEN ev = 'bolt_fail' THEN 1 ELSE 0 END) AS failed,
       max(CASE WHEN ev <> 'spout_emit' THEN t END) AS tree_last
FROM {events} WHERE ev IN ('spout_emit', 'bolt_emit', 'take', 'bolt_ack', 'bolt_fail')
GROUP BY comp, tuple
"""

PER_TUPLE = """
WITH firsts AS (
  SELECT tuple, comp, row_number() OVER (PARTITION BY tuple ORDER BY t, seq) AS rn
  FROM {events} WHERE ev IN ('spout_emit', 'bolt_emit')
), facts AS (
  SELECT tuple, max(failed) AS failed, max(tree_last) AS tree_last FROM {facts} GROUP BY tuple
)
SELECT f.tuple, e.comp AS emitter, f.failed, f.tree_last
FROM facts f LEFT JOIN (SELECT tuple, comp FROM firsts WHERE rn = 1) e ON f.tuple = e.tuple
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

JOINED = """
SELECT tr.tuple, tr.root, a.close_t, a.close_ev, a.msg AS root_msg, p.emitter, p.failed, p.tree_last
FROM {tree} tr JOIN {attempts} a ON tr.root = a.tuple LEFT JOIN {per_tuple} p ON tr.tuple = p.tuple
"""

COLUMNS = ("t", "prop", "comp", "task", "tuple", "msg", "other", "kind", "x")
TYPES = ("DOUBLE", "STRING", "STRING", "BIGINT", "STRING", "STRING", "STRING", "STRING", "DOUBLE")


def _row(**given: str) -> str:
    """A select list of the violation columns: the given expressions, NULL of the column's type for the rest."""
    return ", ".join(f"CAST({given.get(c, 'NULL')} AS {ty}) AS {c}" for c, ty in zip(COLUMNS, TYPES, strict=True))


def check_reliability_sql(engine: Engine, events: str, config: ReliabilityConfig, limit: int = 200,
                          prefix: str = "rel") -> ReliabilityReport:
    """The reliability report of the events table `events` by `engine`."""
    from app.measure.sql.analysis import BAD_EVENT

    dialect = engine.dialect
    names: dict[str, str] = {"events": events}
    made: list[str] = []

    def sql(text: str, **values: object) -> str:
        return render(text, dialect, **names, **values)

    def keep(name: str, text: str, rendered: bool = False, **values: object) -> str:
        full = f"{prefix}_{name}"
        engine.materialize(full, text if rendered else sql(text, **values))
        made.append(full)
        names[name] = full
        return full

    two_t = number(2 * config.message_timeout_s)
    try:
        n_events, log_end, _ = engine.run(sql(SPAN, bad=render(BAD_EVENT, dialect)))[0]
        n_events = int(n_events)
        log_end = float(log_end) if log_end is not None else 0.0
        end = number(log_end)
        keep("attempts", ATTEMPTS)
        keep("facts", FACTS)
        keep("per_tuple", PER_TUPLE)

        # trees: one level at a time until nothing new
        keep("edges", EDGES)
        keep("tree", TREE_START)
        level = 0
        frontier = names["tree"]
        while True:
            level += 1
            deeper = keep(f"level{level}", TREE_LEVEL, frontier=frontier)
            if not int(engine.run(f"SELECT count(*) FROM {deeper}")[0][0]):
                break
            keep(f"tree{level}", "SELECT tuple, root FROM {tree} UNION ALL SELECT tuple, root FROM " + deeper)
            names["tree"] = names[f"tree{level}"]
            frontier = deeper
        keep("joined", JOINED)

        parts: list[str] = []
        undecided: dict[str, int] = {}
        if config.ackers > 0:
            parts.append(sql(f"SELECT {_row(t='t', prop=literal(P1, dialect), comp='comp', task='task', tuple='tuple', msg='msg', kind='close_ev', x='close_t - t')} "  # noqa: E501
                             "FROM {attempts} WHERE close_t IS NOT NULL AND close_t - t > " + two_t))
            parts.append(sql(f"SELECT {_row(t='t', prop=literal(P1, dialect), comp='comp', task='task', tuple='tuple', msg='msg')} "  # noqa: E501
                             f"FROM {{attempts}} WHERE close_t IS NULL AND {end} - t > {two_t}"))
            undecided[P1] = int(engine.run(sql(f"SELECT count(*) FROM {{attempts}} WHERE close_t IS NULL "
                                               f"AND {end} - t <= {two_t}"))[0][0])
        if config.max_spout_pending is not None:
            cap = config.max_spout_pending
            keep("steps", """
SELECT comp, task, t, seq, tuple, msg, step,
       coalesce(sum(step) OVER (PARTITION BY comp, task ORDER BY t, seq
                                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS pending
FROM (SELECT comp, task, t, seq, tuple, msg, 1 AS step FROM {attempts}
      UNION ALL
      SELECT comp, task, close_t AS t, close_seq AS seq, tuple, msg, -1 AS step FROM {attempts}
      WHERE close_t IS NOT NULL) s
""")
            parts.append(sql(f"SELECT {_row(t='t', prop=literal(PENDING, dialect), comp='comp', task='task', tuple='tuple', msg='msg', kind=literal(str(cap), dialect), x='pending')} "  # noqa: E501
                             f"FROM {{steps}} WHERE step = 1 AND pending >= {int(cap)}"))

        # P2: takes with no later ack/fail by the same component
        keep("unfinished", f"""
WITH suspects AS (
  SELECT comp, tuple, done_t FROM {{facts}} WHERE take_last IS NOT NULL AND (done_t IS NULL OR take_last > done_t)
), open_roots AS (
  SELECT tuple, max(CASE WHEN close_t IS NULL THEN 1 ELSE 0 END) AS any_open FROM {{joined}} GROUP BY tuple
)
SELECT e.t, e.comp, e.task, e.tuple,
       CASE WHEN {end} - e.t <= {two_t} AND coalesce(o.any_open = 1, TRUE) THEN 1 ELSE 0 END AS wait
FROM {{events}} e JOIN suspects s ON e.comp = s.comp AND e.tuple = s.tuple
LEFT JOIN open_roots o ON e.tuple = o.tuple
WHERE e.ev = 'take' AND (s.done_t IS NULL OR e.t > s.done_t)
""")
        parts.append(sql(f"SELECT {_row(t='t', prop=literal(P2, dialect), comp='comp', task='task', tuple='tuple')} "
                         "FROM {unfinished} WHERE wait = 0"))
        undecided[P2] = int(engine.run(sql("SELECT count(*) FROM {unfinished} WHERE wait = 1"))[0][0])

        if config.ackers > 0:
            if config.subscribers is None:
                subs = ("SELECT DISTINCT p.emitter, f.comp AS sub FROM {facts} f JOIN {per_tuple} p "
                        "ON f.tuple = p.tuple WHERE f.take_last IS NOT NULL AND p.emitter IS NOT NULL")
            else:
                pairs = [(src, dst) for src, dsts in sorted(config.subscribers.items()) for dst in dsts]
                subs = ("SELECT * FROM (VALUES " + ", ".join(
                    f"({literal(a, dialect)}, {literal(b, dialect)})" for a, b in pairs) + ") AS v(emitter, sub)"
                        if pairs else "SELECT CAST(NULL AS STRING) AS emitter, CAST(NULL AS STRING) AS sub WHERE 1 = 0")
            # P3: every tuple of a clean acked tree is taken by each subscriber of its emitter
            parts.append(sql(f"""
WITH acked AS (SELECT * FROM {{joined}} WHERE close_ev = 'spout_ack'),
failed_roots AS (SELECT DISTINCT root FROM {{joined}} WHERE failed = 1),
subs AS ({subs}),
took AS (SELECT tuple, comp AS sub FROM {{facts}} WHERE take_last IS NOT NULL)
SELECT {_row(t='a.close_t', prop=literal(P3, dialect), comp='a.emitter', tuple='a.tuple', msg='a.root_msg', other='s.sub')}
FROM acked a JOIN subs s ON a.emitter = s.emitter
WHERE a.emitter IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM failed_roots r WHERE r.root = a.root)
  AND NOT EXISTS (SELECT 1 FROM took k WHERE k.tuple = a.tuple AND k.sub = s.sub)
"""))  # noqa: E501
            # P4: events of an acked tree after its root's spout_ack
            parts.append(sql(f"""
WITH late AS (SELECT tuple, close_t, root_msg FROM {{joined}} WHERE close_ev = 'spout_ack' AND tree_last > close_t)
SELECT {_row(t='e.t', prop=literal(P4, dialect), comp='e.comp', task='e.task', tuple='e.tuple', msg='l.root_msg', kind='e.ev', x='l.close_t')}
FROM {{events}} e JOIN late l ON e.tuple = l.tuple
WHERE e.ev IN ('take', 'bolt_emit', 'bolt_ack', 'bolt_fail') AND e.t > l.close_t
"""))  # noqa: E501

        keep("violations", " UNION ALL ".join(f"SELECT * FROM ({p}) AS part{i}" for i, p in enumerate(parts)),
             rendered=True)
        counts = {str(p): int(n) for p, n in engine.run(sql("SELECT prop, count(*) FROM {violations} GROUP BY prop"))}
        rows = [tuple(r) for r in engine.run(sql(
            "SELECT t, prop, comp, task, tuple, msg, other, kind, x FROM {violations} "
            "ORDER BY t ASC NULLS LAST, prop, comp ASC NULLS FIRST, task ASC NULLS FIRST, tuple ASC NULLS FIRST, "
            f"msg ASC NULLS FIRST, other ASC NULLS FIRST, x ASC NULLS FIRST LIMIT {int(limit)}"))]
        rows = [(None if t is None else float(t), prop, comp, None if task is None else int(task), tup, msg, other,
                 kind, None if x is None else float(x)) for t, prop, comp, task, tup, msg, other, kind, x in rows]
    finally:
        for name in reversed(made):
            engine.drop(name)
    return build_report(config, counts, rows, undecided, n_events, log_end, limit)

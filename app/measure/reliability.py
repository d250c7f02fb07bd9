"""Storm's delivery guarantees checked over an event log.

Properties (the names of the reliability vectors in the shared test data folder):

* P1: every `spout_emit` attempt is acked or failed within twice the message timeout.
  Attempts pair each emit of (spout, task, msg) with the next ack/fail of that msg
  (a replay re-uses the msg id). With no ackers Storm acks at once: P1 holds trivially.
* P2: every `take` has a later `bolt_ack`/`bolt_fail` of that tuple by the same
  component, or a `bolt_lost` (the task died with the tuple in its batch: Storm acks
  nothing then, the tree times out, P1 sees its `spout_fail`). Undecided (not a
  violation) while the log ends less than 2x timeout after the take and the tuple's
  root is still pending.
* P3: when a root was acked and nothing in its tree failed, every tuple of the tree is
  taken by each component subscribing to its emitter (needs ackers; trees are untracked
  otherwise).
* P4: nothing of an acked root's anchored tree (take, emit, ack, fail) happens after
  its `spout_ack` (needs ackers).
* max spout pending: when a spout task emits, fewer than `max_spout_pending` of its
  attempts are pending.

The check is written once, as SQL (app/measure/sql/reliability.py): `check_reliability_local`
and `check_reliability_path_local` run it on the embedded engine (DuckDB, in this process),
`app.spark.reliability_job.check_reliability` (app/spark/reliability_job.py) on Spark.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from app.measure.eventlog import Event, EventLogError
from app.measure.reliability_model import (
    CANNOT_DECIDE,
    P1,
    P2,
    P3,
    P4,
    PENDING,
    PROPERTIES,
    TREE_EVENTS,
    ReliabilityConfig,
    ReliabilityReport,
    Violation,
    build_report,
    violation_detail,
)

__all__ = ["P1", "P2", "P3", "P4", "PENDING", "PROPERTIES", "TREE_EVENTS", "ReliabilityConfig", "ReliabilityReport",
           "Violation", "build_report", "violation_detail", "run_settings", "check_reliability_local",
           "check_reliability_path_local", "load_vectors", "undecidable"]


def run_settings(path: Path) -> dict[str, Any]:
    """ReliabilityConfig settings recorded in a run folder's run.json (nothing for a plain log)."""
    meta_file = path / "run.json" if path.is_dir() else None
    if meta_file is None or not meta_file.exists():
        return {}
    from app.core.fileio import read_text
    from app.measure.records import json_value

    data = json_value(read_text(meta_file, lambda reason: EventLogError(str(meta_file), reason)), str(meta_file))
    meta = data.get("reliability", {}) if isinstance(data, dict) else None
    if not isinstance(meta, dict):
        raise EventLogError(f"{meta_file}", "expected an object with a 'reliability' object")
    settings: dict[str, Any] = {
        "message_timeout_s": _setting(meta, "topology.message.timeout.secs", 30, float, 0, meta_file),
        "ackers": _setting(meta, "topology.acker.executors", 1, int, 0, meta_file)}
    if meta.get("topology.max.spout.pending") is not None:
        settings["max_spout_pending"] = _setting(meta, "topology.max.spout.pending", None, int, 1, meta_file)
    return settings


def _setting(meta: dict[str, Any], key: str, default: Any, kind: type, least: int, where: Path) -> Any:
    """One Storm setting of run.json's `reliability`: a finite number (a whole one for `int`), at least
    `least` (above 0 for a timeout), at most 2^31-1 as Storm takes it; else one EventLogError naming it."""
    import math

    value = meta.get(key, default)
    field = f"reliability.{key}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise EventLogError(where.name, f"{field}: must be a number, not {type(value).__name__}")
    if not math.isfinite(value) or (kind is int and value != int(value)):
        raise EventLogError(where.name, f"{field}: must be a {'whole ' if kind is int else 'finite '}number, "
                                        f"not {value!r}")
    if value < least or (kind is float and value <= 0) or value > 2**31 - 1:
        raise EventLogError(where.name, f"{field}: {value!r} is out of range "
                                        f"({'above 0' if kind is float else least}..{2**31 - 1})")
    return kind(value)


# ---- on the embedded engine ----------------------------------------------------


def check_reliability_local(events: Iterable[Event], config: ReliabilityConfig, limit: int = 200) -> ReliabilityReport:
    """The check on the embedded engine over Event records (or their plain rows), in log order."""
    from app.measure.logstream import event_row
    from app.measure.sql.embedded import Embedded
    from app.measure.sql.reliability import check_reliability_sql

    with Embedded() as engine:
        engine.load_rows((event_row(e) if isinstance(e, Event) else e for e in events), [])
        return check_reliability_sql(engine, engine.events, config, limit)


def undecidable(path: str | os.PathLike[str]) -> dict[str, str]:
    """The properties this kind of log cannot decide (property -> why); EventLogError (one line, exit 2)
    when it can decide none, or has no per-tuple events at all (a Storm metrics log)."""
    from app.measure.eventlog import is_uri, log_format

    if isinstance(path, str) and is_uri(path):
        return {}
    kind = log_format(path)
    if kind == "storm-metrics":
        raise EventLogError(str(path), "a Storm metrics log has no per-tuple events; "
                                       "the reliability check needs an event log")
    props, why = CANNOT_DECIDE.get(kind, ((), ""))
    if set(props) >= set(PROPERTIES):
        raise EventLogError("", f"{why}: none of P1-P4 and max spout pending can be decided from it "
                                       "(the reliability check needs a run's event log with takes and acks, "
                                       "docs/event-log.md)")
    return {p: why for p in props}


def check_reliability_path_local(path: str | os.PathLike[str], config: ReliabilityConfig, time_unit: str = "s",
                                 limit: int = 200) -> ReliabilityReport:
    """The check of a log file or run folder on the embedded engine (DuckDB, in this process; no Spark)."""
    from app.measure.sql.embedded import embedded_log
    from app.measure.sql.reliability import check_reliability_sql

    cannot = undecidable(path)
    with embedded_log(path, time_unit) as engine:  # type: ignore[arg-type]  # a str time unit, checked by the reader
        report = check_reliability_sql(engine, engine.events, config, limit)
    report.cannot_decide = cannot
    return report


def load_vectors(path: str | Path) -> list[dict[str, Any]]:
    """The reliability test vectors (each: name, topology with config, trace in ms, expected)."""
    try:
        from app.core.fileio import read_text

        data = json.loads(read_text(path, OSError))
    except (OSError, json.JSONDecodeError) as err:
        raise EventLogError(str(path), f"cannot read the vectors: {err}") from None
    return list(data)

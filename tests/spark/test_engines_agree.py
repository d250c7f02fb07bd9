"""DuckDB (the embedded engine) and Spark SQL local[2] give the same reports, field by field, on random logs.

Both run the one definition of app/measure/sql; this checks that the dialects and the
loaders agree. Logs with several spouts and tasks, replays (a message emitted again after
a fail or a timeout, some marked REPLAY), dropped tuples, tuples lost by a killed task and
its down intervals, bolt failures, late acks, timeouts and closes that never come, queue
samples, written as JSON Lines in an order that is not time order (and the same log as
Parquet, which DuckDB reads itself).
"""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.measure.analysis import analyze_path_local
from app.measure.reliability import ReliabilityConfig, check_reliability_path_local
from app.spark.analysis_job import analyze
from app.spark.frames import load_frames
from app.spark.reliability_job import check_reliability

pytestmark = pytest.mark.spark

TIMEOUT = 5.0


@st.composite
def root_specs(draw) -> dict[str, Any]:
    return {
        "spout": draw(st.sampled_from(["S", "S", "T"])),
        "task": draw(st.sampled_from([1, 2])),
        "msg": draw(st.integers(0, 6)),  # few message ids: replays and repeated closes
        "t": draw(st.integers(0, 400)) / 10.0,
        "taken": draw(st.booleans() | st.just(True)),
        "children": draw(st.integers(0, 2)),
        "child_fate": draw(st.lists(st.sampled_from(["ack", "ack", "fail", "drop", "no-ack", "late", "lost"]),
                                    min_size=2, max_size=2)),
        "replay": draw(st.booleans()),  # marked as a replay (reason REPLAY), as a run with killed tasks writes it
        "close": draw(st.sampled_from(["ack", "ack", "fail", "timeout", "none", "late", "early"])),
        "delay": draw(st.integers(1, 30)) / 100.0,
    }


def build_log(roots: list[dict[str, Any]], queue_comps: list[str],
              kills: list[tuple[int, float, float | None]] | None = None) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for task, down, length in kills or []:  # B's task goes down (and up again unless the log ends first)
        rows.append({"t": down, "ev": "bolt_down", "comp": "B", "task": task, "reason": "KILLED"})
        if length is not None:
            rows.append({"t": down + length, "ev": "bolt_up", "comp": "B", "task": task})
    for i, r in enumerate(roots):
        t, d = r["t"], r["delay"]
        root, msg = f"r{i}", f"{r['spout']}-m{r['msg']}"
        rows.append({"t": t, "ev": "spout_emit", "comp": r["spout"], "task": r["task"], "tuple": root, "msg": msg,
                     **({"reason": "REPLAY"} if r.get("replay") else {})})
        bolt = "A" if r["spout"] == "S" else "C"
        if r["taken"]:
            rows.append({"t": t + d, "ev": "take", "comp": bolt, "task": 3, "tuple": root})
            for k in range(r["children"]):
                child = f"{root}.{k}"
                rows.append({"t": t + 2 * d, "ev": "bolt_emit", "comp": bolt, "task": 3, "tuple": child,
                             "anchors": [root]})
                fate = r["child_fate"][k]
                if fate == "drop":
                    continue
                if fate == "lost":
                    rows.append({"t": t + 3 * d, "ev": "bolt_lost", "comp": "B", "task": 4 + k, "tuple": child,
                                 "msg": root, "reason": "DOWN"})
                    continue
                rows.append({"t": t + 3 * d, "ev": "take", "comp": "B", "task": 4 + k, "tuple": child})
                if fate in ("ack", "fail"):
                    rows.append({"t": t + 4 * d, "ev": f"bolt_{fate}", "comp": "B", "task": 4 + k, "tuple": child})
                elif fate == "late":
                    rows.append({"t": t + 3 * TIMEOUT, "ev": "bolt_ack", "comp": "B", "task": 4 + k, "tuple": child})
            if r["close"] != "early":
                rows.append({"t": t + 2.5 * d, "ev": "bolt_ack", "comp": bolt, "task": 3, "tuple": root})
        close = {"ack": ("spout_ack", t + 5 * d, None), "fail": ("spout_fail", t + 5 * d, "FAILED"),
                 "timeout": ("spout_fail", t + TIMEOUT, "TIMEOUT"), "late": ("spout_ack", t + 3 * TIMEOUT, None),
                 "early": ("spout_ack", t + 1.5 * d, None)}.get(r["close"])
        if close is not None:
            row = {"t": round(close[1], 6), "ev": close[0], "comp": r["spout"], "task": r["task"], "msg": msg}
            if close[2]:
                row["reason"] = close[2]
            rows.append(row)
        if r["close"] == "early" and r["taken"]:
            rows.append({"t": t + 6 * d, "ev": "bolt_ack", "comp": bolt, "task": 3, "tuple": root})
    for comp in queue_comps:
        for j in range(0, 45):
            rows.append({"t": j + 0.25, "comp": comp, "task": 3, "queue": (j * 7 + len(comp)) % 5 + j // 9})
    return rows


def same(a: Any, b: Any, where: str = "") -> None:
    """Field-by-field equality; floats to 1e-9 relative (sums run in another order on Spark)."""
    if isinstance(a, dict) and isinstance(b, dict):
        assert set(a) == set(b), f"{where}: fields {sorted(set(a) ^ set(b))}"
        for k in a:
            same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        assert len(a) == len(b), f"{where}: {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            same(x, y, f"{where}[{i}]")
    elif isinstance(a, float) or isinstance(b, float):
        assert a is not None and b is not None, f"{where}: {a!r} != {b!r}"
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), f"{where}: {a!r} != {b!r}"
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def _as_parquet(rows: list[dict[str, Any]], path: Path) -> Path | None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ModuleNotFoundError:
        return None
    columns = ("t", "ev", "comp", "task", "tuple", "msg", "anchors", "reason", "queue")
    schema = pa.schema([("t", pa.float64()), ("ev", pa.string()), ("comp", pa.string()), ("task", pa.int64()),
                        ("tuple", pa.string()), ("msg", pa.string()), ("anchors", pa.list_(pa.string())),
                        ("reason", pa.string()), ("queue", pa.int64())])
    table = pa.Table.from_pylist([{c: r.get(c) for c in columns} for r in rows], schema=schema)
    pq.write_table(table, path, row_group_size=7)  # several record batches
    return path


CONFIGS = [
    ReliabilityConfig(message_timeout_s=TIMEOUT, max_spout_pending=2, ackers=1),
    ReliabilityConfig(message_timeout_s=TIMEOUT, ackers=1,
                      subscribers={"S": ["A"], "T": ["C"], "A": ["B"], "C": ["B"]}),
    ReliabilityConfig(message_timeout_s=TIMEOUT, max_spout_pending=1, ackers=0),
]


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(roots=st.lists(root_specs(), min_size=1, max_size=14), queue_comps=st.sampled_from([[], ["B"], ["A", "B"]]),
       config_index=st.integers(0, len(CONFIGS) - 1), limit=st.sampled_from([3, 1000]),
       reverse=st.booleans(),
       kills=st.lists(st.tuples(st.sampled_from([4, 5]), st.integers(0, 400).map(lambda n: n / 10.0),
                                st.none() | st.integers(1, 30).map(lambda n: n / 10.0)), max_size=3))
def test_local_and_spark_reports_agree(spark, roots, queue_comps, config_index, limit, reverse, kills) -> None:
    rows = build_log(roots, queue_comps, kills)
    if reverse:
        rows.reverse()
    config = CONFIGS[config_index]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "log.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        local_analysis = analyze_path_local(path)
        local_report = check_reliability_path_local(path, config, limit=limit)
        parquet = _as_parquet(rows, Path(folder) / "log.parquet")
        if parquet is not None:  # the same log as Parquet, read in record batches
            same(local_analysis.model_dump(exclude={"source"}),
                 analyze_path_local(parquet).model_dump(exclude={"source"}), "parquet analysis")
            same(local_report.model_dump(), check_reliability_path_local(parquet, config, limit=limit).model_dump(),
                 "parquet reliability")
        events, queues = load_frames(spark, path)
        spark_analysis = analyze(spark, events, queues, source=str(path))
        spark_report = check_reliability(spark, events, config, limit=limit)
    same(local_analysis.model_dump(), spark_analysis.model_dump(), "analysis")
    same(local_report.model_dump(), spark_report.model_dump(), "reliability")


def test_a_known_messy_log_breaks_every_property_in_both_engines(spark, tmp_path: Path) -> None:
    roots = [
        {"spout": "S", "task": 1, "msg": 0, "t": 0.0, "taken": True, "children": 2, "child_fate": ["drop", "late"],
         "close": "ack", "delay": 0.1},
        {"spout": "S", "task": 1, "msg": 1, "t": 1.0, "taken": True, "children": 1, "child_fate": ["no-ack", "ack"],
         "close": "late", "delay": 0.1},
        {"spout": "S", "task": 1, "msg": 2, "t": 2.0, "taken": True, "children": 1, "child_fate": ["ack", "ack"],
         "close": "none", "delay": 0.1},
        {"spout": "T", "task": 2, "msg": 1, "t": 40.0, "taken": True, "children": 0, "child_fate": ["ack", "ack"],
         "close": "early", "delay": 0.1},
    ]
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in build_log(roots, ["B"])))
    config = ReliabilityConfig(message_timeout_s=TIMEOUT, max_spout_pending=1, ackers=1)
    local = check_reliability_path_local(path, config)
    events, _ = load_frames(spark, path)
    remote = check_reliability(spark, events, config)
    same(local.model_dump(), remote.model_dump(), "reliability")
    assert not any(local.properties.values()), local.summary()


@pytest.mark.parametrize("bad, field", [
    ({"t": 1.0, "ev": "explode", "comp": "A", "tuple": "x"}, "ev"),
    ({"t": 1.0, "ev": "take", "comp": "A"}, "tuple"),
    ({"t": 1.0, "ev": "spout_ack", "comp": "S"}, "msg"),
])
def test_both_engines_refuse_the_same_bad_row(spark, tmp_path: Path, bad: dict, field: str, monkeypatch) -> None:
    from app.measure import logstream
    from app.measure.eventlog import EventLogError

    rows = build_log([{"spout": "S", "task": 1, "msg": 0, "t": 0.0, "taken": True, "children": 1,
                       "child_fate": ["ack", "ack"], "close": "ack", "delay": 0.1}], [])
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows + [bad]))
    config = ReliabilityConfig()
    for run in (lambda: analyze_path_local(path), lambda: check_reliability_path_local(path, config)):
        with pytest.raises(EventLogError, match=rf"log\.jsonl.*\.{field}"):
            run()
    # a bad row near the start is named in this process before Spark reads the file
    with pytest.raises(EventLogError, match=rf"log\.jsonl line {len(rows) + 1}\.{field}"):
        load_frames(spark, path)
    monkeypatch.setattr(logstream, "sniff", lambda *args, **kwargs: None)  # Spark's own check, further in
    events, queues = load_frames(spark, path)  # the check runs inside each job's first pass
    with pytest.raises(EventLogError, match=rf"log\.jsonl\.{field}"):
        analyze(spark, events, queues)
    with pytest.raises(EventLogError, match=rf"log\.jsonl\.{field}"):
        check_reliability(spark, events, config)


def test_a_log_named_by_a_uri_is_read_by_spark(spark, tmp_path: Path) -> None:
    rows = build_log([{"spout": "S", "task": 1, "msg": 0, "t": 0.0, "taken": True, "children": 1,
                       "child_fate": ["ack", "ack"], "close": "ack", "delay": 0.1}], ["B"])
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    events, queues = load_frames(spark, path.as_uri())
    same(analyze_path_local(path).model_dump(exclude={"source"}),
         analyze(spark, events, queues).model_dump(exclude={"source"}), "analysis")

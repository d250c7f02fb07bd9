"""`--engine auto|embedded|spark`: which engine runs a log, and logs on this machine without Spark or Java."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.measure.engine_choice import Choice, EngineError, choose_engine, is_out_of_memory, local_limits
from app.spark.memory import driver_memory_of, out_of_memory_advice, spark_host_env
from tests.conftest import ROOT

TEN_EVENTS = [
    {"t": 0.0, "ev": "spout_emit", "comp": "S", "task": 1, "tuple": "r1", "msg": "m1"},
    {"t": 0.01, "ev": "take", "comp": "A", "task": 2, "tuple": "r1"},
    {"t": 0.02, "ev": "bolt_emit", "comp": "A", "task": 2, "tuple": "c1", "anchors": ["r1"]},
    {"t": 0.021, "ev": "bolt_ack", "comp": "A", "task": 2, "tuple": "r1"},
    {"t": 0.03, "ev": "take", "comp": "B", "task": 3, "tuple": "c1"},
    {"t": 0.04, "ev": "bolt_ack", "comp": "B", "task": 3, "tuple": "c1"},
    {"t": 0.05, "ev": "spout_ack", "comp": "S", "task": 1, "msg": "m1"},
    {"t": 1.0, "ev": "spout_emit", "comp": "S", "task": 1, "tuple": "r2", "msg": "m2"},
    {"t": 1.01, "ev": "take", "comp": "A", "task": 2, "tuple": "r2"},
    {"t": 1.02, "ev": "bolt_ack", "comp": "A", "task": 2, "tuple": "r2"},
]


@pytest.fixture
def ten_events(tmp_path: Path) -> Path:
    path = tmp_path / "ten.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in TEN_EVENTS))
    return path


def test_auto_picks_by_size_and_master(ten_events: Path, tmp_path: Path) -> None:
    assert choose_engine(ten_events).engine == "embedded"
    assert choose_engine(ten_events).records == 10
    assert choose_engine(ten_events, max_events=9).engine == "spark"
    assert choose_engine(ten_events, max_mb=0.0001).engine == "spark"
    assert choose_engine(ten_events, spark_requested=True).engine == "spark"
    assert choose_engine(ten_events, "embedded", max_events=1).engine == "embedded"
    assert choose_engine(ten_events, "local", max_events=1).engine == "embedded"  # the former name
    assert choose_engine(ten_events, "spark").engine == "spark"
    env = {"STORMBOUND_LOCAL_MAX_EVENTS": "5"}
    assert choose_engine(ten_events, env=env).engine == "spark"
    assert local_limits(env={}) == (None, None)  # no limit: the embedded engine spills to disk
    assert local_limits(env={"STORMBOUND_LOCAL_MAX_MB": "50", "STORMBOUND_LOCAL_MAX_EVENTS": "2_000"}) == (2000, 50.0)
    with pytest.raises(EngineError):
        local_limits(env={"STORMBOUND_LOCAL_MAX_EVENTS": "many"})
    with pytest.raises(EngineError):
        choose_engine(ten_events, "gpu")
    csv = tmp_path / "log.csv"
    csv.write_text("t,ev,comp,task,tuple,msg,anchors,reason,queue\n0,take,A,1,x,,,,\n1,bolt_ack,A,1,x,,,,\n")
    assert isinstance(choose_engine(csv), Choice) and choose_engine(csv).records == 2


def test_parquet_is_sized_from_its_metadata(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    table = pa.table({"t": [float(i) for i in range(30)], "ev": ["take"] * 30, "comp": ["A"] * 30,
                      "task": [1] * 30, "tuple": [f"x{i}" for i in range(30)]})
    pq.write_table(table, tmp_path / "log.parquet")
    choice = choose_engine(tmp_path / "log.parquet", max_events=20)
    assert (choice.engine, choice.records) == ("spark", 30)


def test_spark_host_environment_carries_memory_and_settings() -> None:
    env = spark_host_env("local[2]", "6g", ["spark.sql.shuffle.partitions=2"], env={})
    assert env["PYSPARK_SUBMIT_ARGS"].endswith("pyspark-shell")
    assert "--driver-memory 6g" in env["PYSPARK_SUBMIT_ARGS"] and driver_memory_of(env) == "6g"
    assert "--conf spark.sql.shuffle.partitions=2" in env["PYSPARK_SUBMIT_ARGS"]
    default = spark_host_env("local[2]", env={})
    assert driver_memory_of(default).endswith("g") and 1 <= int(driver_memory_of(default)[:-1]) <= 8
    assert driver_memory_of(spark_host_env("local[2]", env={"STORMBOUND_SPARK_DRIVER_MEMORY": "3072m"})) == "3072m"
    assert "PYSPARK_SUBMIT_ARGS" not in spark_host_env("sc://gateway:15002", "6g", env={})
    kept = spark_host_env("local[2]", "6g", env={"PYSPARK_SUBMIT_ARGS": "--driver-memory 2g pyspark-shell"})
    assert driver_memory_of(kept) == "2g"  # a user's own setting wins
    for bad in ("lots", "4q", ""):
        with pytest.raises(EngineError):
            spark_host_env("local[2]", bad or " ", env={})
    with pytest.raises(EngineError):
        spark_host_env("local[2]", "4g", ["no-equals-sign"], env={})


def test_out_of_memory_is_recognised_and_explained() -> None:
    assert is_out_of_memory("SparkOutOfMemoryError: No enough memory for aggregation")
    assert is_out_of_memory("Py4JJavaError: An error occurred", "java.lang.OutOfMemoryError: Java heap space")
    assert not is_out_of_memory("AnalysisException: column not found")
    env = spark_host_env("local[2]", "2g", env={})
    advice = out_of_memory_advice("local[2]", env)
    assert "driver memory 2g" in advice and "--driver-memory" in advice and "\n" not in advice
    assert "spark.executor.memory" in out_of_memory_advice("spark://cluster:7077", env)
    assert "server" in out_of_memory_advice("sc://gateway:15002", {})


def _run_cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=120)


def _env_without_spark(tmp_path: Path) -> dict[str, str]:
    """No Java anywhere, and a Python that cannot import pyspark."""
    blocker = tmp_path / "no-pyspark"
    blocker.mkdir(exist_ok=True)
    (blocker / "pyspark").mkdir(exist_ok=True)
    (blocker / "pyspark" / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'pyspark'\", name='pyspark')\n")
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items()
           if k not in ("JAVA_HOME", "SPARK_HOME", "STORMBOUND_SPARK_PYTHON", "STORMBOUND_SPARK_MASTER")}
    env["PATH"] = str(bindir)  # nothing else: no java, no python3 to fall back on
    env["PYTHONPATH"] = os.pathsep.join([str(blocker), str(ROOT)])
    return env


def test_reliability_of_a_ten_event_log_starts_no_jvm(ten_events: Path, tmp_path: Path) -> None:
    """The done-when test: no Java and no pyspark reachable, and the check still runs (exit 0) and fast."""
    env = _env_without_spark(tmp_path)
    began = time.perf_counter()
    done = _run_cli(["reliability", str(ten_events)], env, tmp_path)
    wall = time.perf_counter() - began
    assert done.returncode == 0, done.stderr
    assert "10 events" in done.stdout and "P2_take_has_ack_or_fail" in done.stdout
    assert wall < 30
    done = _run_cli(["analyze", str(ten_events), "--json"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["analysis"]["components"]["A"]["taken"] == 2


def test_no_session_and_no_java_process_in_process(ten_events: Path, monkeypatch, capsys) -> None:
    """In-process: SparkHost is never started, pyspark is not imported, no java child appears."""
    from app.cli import main
    from app.spark import client

    def refuse(self, *a, **k):  # pragma: no cover - reached only on failure
        raise AssertionError("a Spark host was started for a ten-event log")

    monkeypatch.setattr(client.SparkHost, "start", refuse)
    had_pyspark = "pyspark" in sys.modules
    children = Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children")
    # a JVM started by an earlier test of the same pytest process is not this test's doing
    before = set(children.read_text().split()) if children.exists() else set()
    assert main(["reliability", str(ten_events)]) == 0
    assert main(["analyze", str(ten_events)]) == 0
    topology = str(ROOT / "models" / "getting-started.storm.json")
    assert main(["compare", str(ten_events), "--topology", topology]) in (0, 2)
    if not had_pyspark:
        assert "pyspark" not in sys.modules
    if children.exists():
        for pid in set(children.read_text().split()) - before:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            assert b"java" not in cmdline
    assert "10 events" in capsys.readouterr().out


def test_a_large_log_without_pyspark_says_how_to_install_spark(ten_events: Path, tmp_path: Path) -> None:
    env = _env_without_spark(tmp_path)
    env["STORMBOUND_SPARK_PYTHON"] = sys.executable  # a Python that (here) cannot import pyspark
    done = _run_cli(["reliability", str(ten_events), "--local-max-events", "5"], env, tmp_path)
    assert done.returncode == 2
    message = done.stderr.strip()
    assert "pyspark" in message and "pip install" in message and "--engine embedded" in message
    assert len(message.splitlines()) == 1
    done = _run_cli(["reliability", str(ten_events), "--local-max-events", "5", "--engine", "local"], env, tmp_path)
    assert done.returncode == 0, done.stderr


def test_spark_out_of_memory_is_one_line_exit_2(ten_events: Path, monkeypatch, capsys) -> None:
    from app.cli import main, spark_jobs
    from app.spark.client import HostError

    class Host:
        master = "local[2]"
        env = {"PYSPARK_SUBMIT_ARGS": "--driver-memory 1g pyspark-shell"}
        _stderr_tail = ["java.lang.OutOfMemoryError: Java heap space"]

        def request(self, op, on_progress=None, **params):
            raise HostError("Py4JJavaError: An error occurred while calling o57.collectToPython.", "internal")

        def close(self) -> None:
            pass

    monkeypatch.setattr(spark_jobs, "start_spark_host", lambda *args, **kwargs: Host())
    assert main(["reliability", str(ten_events), "--engine", "spark"]) == 2
    err = capsys.readouterr().err.strip()
    assert "ran out of memory" in err and "--driver-memory" in err and "internal error" not in err
    assert len(err.splitlines()) == 1


def test_a_uri_goes_to_spark(monkeypatch, capsys) -> None:
    from app.cli import main

    uri = "hdfs://namenode:8020/logs/run1/events.parquet"
    assert choose_engine(uri).engine == "spark"
    with pytest.raises(EngineError):
        choose_engine(uri, "embedded")
    assert main(["reliability", uri, "--engine", "local"]) == 2
    assert "URI" in capsys.readouterr().err


def _same(a: object, b: object) -> bool:
    """Equal, floats up to their summation order: DuckDB aggregates in parallel, so a standard deviation of
    a few 1e-16 (a numerical zero) can come out 5.43e-16 one time and 5.45e-16 the next."""
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def test_the_embedded_engine_loads_rows_without_arrow_as_with_it(tmp_path: Path, monkeypatch) -> None:
    """The frozen app has no pyarrow: rows then go into DuckDB by plain inserts, with the same figures."""
    from app.measure.analysis import analyze_path_local
    from app.measure.reliability import ReliabilityConfig, check_reliability_path_local
    from app.measure.sql import embedded

    rows = []
    for i in range(1500):  # more than one small batch
        rows += [{"t": i * 0.01, "ev": "spout_emit", "comp": "S", "task": 1, "tuple": f"r{i}", "msg": f"m{i}"},
                 {"t": i * 0.01 + 0.002, "ev": "take", "comp": "A", "task": 2, "tuple": f"r{i}"},
                 {"t": i * 0.01 + 0.004, "ev": "bolt_ack", "comp": "A", "task": 2, "tuple": f"r{i}"},
                 {"t": i * 0.01 + 0.005, "comp": "A", "task": 2, "queue": i % 3}]
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = ReliabilityConfig(message_timeout_s=0.001)
    with_arrow = (analyze_path_local(path).model_dump(), check_reliability_path_local(path, config).model_dump())
    monkeypatch.setattr(embedded, "_has_pyarrow", lambda: False)
    without = (analyze_path_local(path).model_dump(), check_reliability_path_local(path, config).model_dump())
    assert _same(with_arrow, without), (with_arrow, without)
    assert with_arrow[0]["components"]["A"]["taken"] == 1500
    assert with_arrow[1]["counts"]["P1_emit_eventually_acked_or_failed"] == 1500

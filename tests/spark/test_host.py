"""The Spark host process and the CLI's messages when Spark cannot start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from app.measure.eventlog import write_log
from tests.conftest import MODELS, ROOT
from tests.spark.test_analysis import known_log


def _cli(args: list[str], env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def _python_without_pyspark() -> str | None:
    for candidate in ("/usr/bin/python3", "/bin/python3"):
        if Path(candidate).exists() and subprocess.run([candidate, "-c", "import pyspark"],
                                                       capture_output=True).returncode != 0:
            return candidate
    return None


def test_message_when_python_has_no_pyspark(tmp_path: Path) -> None:
    python = _python_without_pyspark()
    if python is None:
        pytest.skip("no Python without pyspark on this machine")
    env = {**os.environ, "STORMBOUND_SPARK_PYTHON": python}
    done = _cli(["run", str(MODELS / "getting-started.storm.json"), "--duration", "1", "--out", str(tmp_path)], env)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert f"{python} has no pyspark" in done.stderr and "STORMBOUND_SPARK_PYTHON" in done.stderr


def test_message_when_java_is_missing(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env.update(PATH=str(empty), STORMBOUND_SPARK_PYTHON=sys.executable)
    write_log(tmp_path / "log", known_log())
    done = _cli(["analyze", str(tmp_path / "log"), "--engine", "spark"], env)  # a small log needs no Java
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().count("\n") == 0
    assert "Java not found" in done.stderr and "JAVA_HOME" in done.stderr


def test_bad_run_arguments(tmp_path: Path) -> None:
    model = str(MODELS / "getting-started.storm.json")
    done = _cli(["run", model, "--duration", "1", "--out", str(tmp_path), "--parallelism", "nosuch=2"],
                dict(os.environ))
    assert done.returncode == 2 and "no bolt named 'nosuch'" in done.stderr
    done = _cli(["run", model, "--duration", "1", "--out", str(tmp_path), "--parallelism", "split=0"], dict(os.environ))
    assert done.returncode == 2 and "expected BOLT=N" in done.stderr
    done = _cli(["reliability", str(tmp_path / "missing.jsonl")], dict(os.environ))
    assert done.returncode == 2 and "no such file" in done.stderr


def test_host_serves_analysis_reliability_run_and_cancel(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    from app.core.formats import load_topology
    from app.measure.analysis import Analysis
    from app.measure.reliability import ReliabilityReport
    from app.spark.client import HostError, SparkHost
    from app.spark.run_job import RunSpec

    write_log(tmp_path / "known", known_log())
    vectors = json.loads((ROOT / "tests" / "data" / "vectors" / "storm-reliability-vectors.json").read_text())
    case = next(v for v in vectors if v["name"] == "missing_bolt_ack_timeout")
    (tmp_path / "case.json").write_text(json.dumps(case["trace"]))
    spec = RunSpec(topology=load_topology(MODELS / "getting-started.storm.json"), duration_s=60, workers=1)
    with SparkHost(master="local[2]") as host:
        assert host.info["slots"] == 2
        analysis = Analysis.model_validate(host.request("analyze", path=str(tmp_path / "known")))
        assert analysis.components["B"].queue.slope == pytest.approx(3.0)
        from app.measure.reliability import ReliabilityConfig

        config = ReliabilityConfig.from_storm(case["topology"], case["topology"]["config"])
        report = ReliabilityReport.model_validate(host.request(
            "reliability", path=str(tmp_path / "case.json"), time_unit="ms", config=config.model_dump()))
        assert report.properties == case["expected"]
        # DiffStream's per-key Spark job, for an app without pyspark of its own
        (tmp_path / "left.jsonl").write_text('{"key": 1, "v": 1}\n{"key": 2, "v": 1}\n{"key": 1, "v": 2}\n')
        (tmp_path / "right.jsonl").write_text('{"key": 2, "v": 1}\n{"key": 1, "v": 1}\n{"key": 1, "v": 2}\n')
        (tmp_path / "swapped.jsonl").write_text('{"key": 1, "v": 2}\n{"key": 2, "v": 1}\n{"key": 1, "v": 1}\n')
        same = host.request("diff", left=str(tmp_path / "left.jsonl"), right=str(tmp_path / "right.jsonl"),
                            dependence="same_key:key")
        assert same["equivalent"] is True
        swapped = host.request("diff", left=str(tmp_path / "left.jsonl"), right=str(tmp_path / "swapped.jsonl"),
                               dependence="same_key:key")
        assert swapped["equivalent"] is False
        with pytest.raises(HostError, match="no such file") as err:
            host.request("analyze", path=str(tmp_path / "nope.jsonl"))
        assert err.value.kind == "input"
        progress: list[float] = []
        ident = host.submit("run", spec=json.loads(spec.model_dump_json()), out=str(tmp_path / "run"))
        threading.Timer(4.0, host.cancel, args=(ident,)).start()
        began = time.time()
        with pytest.raises(HostError) as err:
            host.wait(ident, on_progress=lambda f, m: progress.append(f))
        assert err.value.kind == "cancelled" and time.time() - began < 40
        assert progress and not (tmp_path / "run" / "events.jsonl").exists()


def test_diff_spark_goes_through_the_host_when_pyspark_is_not_importable(tmp_path: Path, monkeypatch, capsys) -> None:
    """The frozen app has no pyspark: `stormbound diff --spark` runs the per-key job in the host process."""
    pytest.importorskip("pyspark")
    import importlib.util

    from app.cli import main

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "pyspark" else real_find_spec(name, *a))
    monkeypatch.setenv("STORMBOUND_SPARK_MASTER", "local[1]")
    (tmp_path / "left.jsonl").write_text('{"key": 1, "v": 1}\n{"key": 1, "v": 2}\n')
    (tmp_path / "right.jsonl").write_text('{"key": 1, "v": 2}\n{"key": 1, "v": 1}\n')
    code = main(["diff", str(tmp_path / "left.jsonl"), str(tmp_path / "right.jsonl"), "-d", "same_key:key",
                 "--spark", "--json"])
    out = capsys.readouterr().out
    assert code == 1 and json.loads(out)["equivalent"] is False

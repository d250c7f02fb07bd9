"""Spark Connect: the same run, analysis and reliability check against an `sc://` server.

The server (fixture `connect_url`) is a separate JVM without this source tree on its
path; the app reaches it through the Spark host process (a process can hold a classic
session or a Connect one, not both), as the CLI and the GUI do.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from app.measure.eventlog import read_log, write_log
from tests.conftest import MODELS, ROOT, VECTORS
from tests.spark.test_analysis import known_log

pytestmark = pytest.mark.spark


def _cli(args: list[str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "STORMBOUND_SPARK_MASTER"}
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_run_then_reliability_over_connect(connect_url: str, tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = _cli(["run", str(MODELS / "getting-started.storm.json"), "--duration", "4", "--workers", "2",
                 "--out", str(out), "--master", connect_url, "--json"])
    first_ended = time.monotonic()
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["master"] == connect_url and result["workers"] == 2
    assert set(result["placement"].values()) == {0, 1}  # tuples crossed a socket between the two tasks
    # the next run attaches to the same server-side session (session.shared_connect_url): Spark's Python
    # workers of the first run are reused, and the host's start is recorded with the phases
    again = _cli(["run", str(MODELS / "getting-started.storm.json"), "--duration", "2", "--workers", "2",
                  "--out", str(tmp_path / "again"), "--master", connect_url, "--json"])
    assert again.returncode == 0, again.stderr
    second = json.loads(again.stdout)
    assert second["master"] == connect_url
    phases = json.loads((tmp_path / "again" / "run.json").read_text())["result"]["phases"]
    assert list(phases) == ["host_start", "worker_start", "shared_start", "run", "collect", "write"]
    # Spark stops a Python worker idle for a minute (PythonWorkerFactory's idle timeout, not a setting): the
    # workers are the same ones only when the second run's tasks began within it; on a machine so loaded
    # that starting the second run took longer, new workers are the right outcome
    idle = time.monotonic() - first_ended - sum(float(phases[p]) for p in ("run", "collect", "write"))
    if idle < 45:  # the first run's workers idled this long, at most, before the second run's tasks
        assert set(second["task_pids"]) & set(result["task_pids"]), (result["task_pids"], second["task_pids"])
    log = read_log(out)
    kinds = {e.ev for e in log.events}
    assert {"spout_emit", "take", "bolt_emit", "bolt_ack", "spout_ack"} <= kinds
    assert log.queues and result["events"] == len(log.events)
    done = _cli(["reliability", str(out), "--master", connect_url, "--json"])
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert all(report["properties"].values()) and not report["violations"]


def test_a_closed_run_session_gives_way_to_a_new_one(connect_url: str) -> None:
    """The server closes a run session left idle (its session timeout) and refuses its id from then on:
    the next run starts a new session instead of failing."""
    script = (
        "import sys\n"
        "from app.spark.session import build_session, shared_connect_url\n"
        "url = shared_connect_url(sys.argv[1])\n"
        "spark = build_session(url)\n"
        "assert spark.release_session_on_close is False\n"  # kept for the next process
        "spark.release_session_on_close = True\n"
        "spark.stop()\n"  # released: closed on the server, as its idle timeout does
        "spark = build_session(url)\n"
        "print(spark.range(3).count(), spark.conf.get('spark.sql.shuffle.partitions'),\n"
        "      spark.client._session_id in url)\n")
    env = {k: v for k, v in os.environ.items() if k != "STORMBOUND_SPARK_MASTER"}
    done = subprocess.run([sys.executable, "-c", script, connect_url], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["3", "4", "False"]  # a new working session, with our settings


@pytest.mark.parametrize("host", ["localhost", "127.0.0.2"])
def test_analysis_over_connect(connect_url: str, tmp_path: Path, host: str) -> None:
    """localhost: the server reads the file itself; 127.0.0.2 counts as another machine, so the
    records are read here and uploaded. Both give the known answers."""
    write_log(tmp_path / "known.jsonl", known_log())
    url = connect_url.replace("localhost", host)
    done = _cli(["analyze", str(tmp_path / "known.jsonl"), "--master", url, "--json"])
    assert done.returncode == 0, done.stderr
    analysis = json.loads(done.stdout)["analysis"]
    b = analysis["components"]["B"]
    assert b["taken"] == 20 and b["sigma"] == pytest.approx(0.5) and b["alpha_mean"] == pytest.approx(0.5)
    assert b["queue"]["slope"] == pytest.approx(3.0) and b["queue"]["verdict"] == "grows"
    assert analysis["components"]["S"]["rate_out"] == pytest.approx(2.0)


def test_host_over_connect_checks_every_vector_and_cancels_a_run(connect_url: str, tmp_path: Path) -> None:
    from app.core.formats import load_topology
    from app.measure.reliability import ReliabilityConfig, ReliabilityReport
    from app.spark.client import HostError, SparkHost
    from app.spark.run_job import RunSpec

    vectors = json.loads((VECTORS / "storm-reliability-vectors.json").read_text())
    with SparkHost(master=connect_url) as host:
        assert host.info["connect"] is True and host.info["master"] == connect_url
        assert host.info["slots"] == 2 and host.info["spark_version"].startswith("4.")
        for case in vectors:
            (tmp_path / f"{case['name']}.json").write_text(json.dumps(case["trace"]))
            config = ReliabilityConfig.from_storm(case["topology"], case["topology"]["config"])
            report = ReliabilityReport.model_validate(host.request(
                "reliability", path=str(tmp_path / f"{case['name']}.json"), time_unit="ms",
                config=config.model_dump()))
            assert report.properties == case["expected"], case["name"]
        spec = RunSpec(topology=load_topology(MODELS / "getting-started.storm.json"), duration_s=60, workers=1)
        ident = host.submit("run", spec=json.loads(spec.model_dump_json()), out=str(tmp_path / "run"))
        threading.Timer(4.0, host.cancel, args=(ident,)).start()
        began = time.time()
        with pytest.raises(HostError) as err:
            host.wait(ident)
        assert err.value.kind == "cancelled" and time.time() - began < 40
        assert not (tmp_path / "run" / "events.jsonl").exists()
        # the interrupted job is gone: the session still serves
        assert host.request("ping")["connect"] is True


def test_unreachable_connect_server_is_one_line(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    from app.spark.connect_server import free_port

    write_log(tmp_path / "known.jsonl", known_log())
    began = time.time()
    done = _cli(["analyze", str(tmp_path / "known.jsonl"), "--master", f"sc://localhost:{free_port()}"])
    assert done.returncode == 2 and time.time() - began < 60
    assert done.stderr.strip().count("\n") == 0
    assert "Spark Connect server sc://localhost:" in done.stderr and "not reachable" in done.stderr


def test_diff_refuses_connect_and_falls_back(tmp_path: Path, monkeypatch, capsys) -> None:
    pytest.importorskip("pyspark")
    from app.cli import main

    monkeypatch.setenv("STORMBOUND_SPARK_MASTER", "sc://localhost:1")
    (tmp_path / "l.jsonl").write_text('{"key": 1, "v": 1}\n{"key": 2, "v": 1}\n')
    (tmp_path / "r.jsonl").write_text('{"key": 2, "v": 1}\n{"key": 1, "v": 1}\n')
    args = [str(tmp_path / "l.jsonl"), str(tmp_path / "r.jsonl"), "-d", "same_key:key"]
    assert main(["diff", *args, "--spark"]) == 2
    assert "RDD API, which Spark Connect" in capsys.readouterr().err
    assert main(["diff", *args, "--spark-threshold", "0.000001"]) == 0  # auto mode: compared here instead
    assert "comparing in this process" in capsys.readouterr().err


def test_connect_urls_and_missing_client_libraries(monkeypatch) -> None:
    pytest.importorskip("pyspark")
    import importlib

    from app.spark import session
    from app.spark.session import (
        SparkUnavailable,
        check_environment,
        connect_address,
        shared_connect_url,
        without_session_id,
    )

    assert connect_address("sc://gw") == ("gw", 15002)
    assert connect_address("sc://gw:443/;use_ssl=true;token=x") == ("gw", 443)
    assert connect_address("sc://[::1]:15099") == ("::1", 15099)
    # a run's own session on the server: one per user, server and version of the app's code; shown without it
    shared = shared_connect_url("sc://gw:443/;use_ssl=true")
    assert shared.startswith("sc://gw:443/;use_ssl=true;session_id=") and connect_address(shared) == ("gw", 443)
    assert shared == shared_connect_url("sc://gw:443/;use_ssl=true") != shared_connect_url("sc://other:443")
    assert without_session_id(shared) == "sc://gw:443/;use_ssl=true"
    assert without_session_id(shared_connect_url("sc://gw")) == "sc://gw"
    mine = "sc://gw/;session_id=00000000-0000-4000-8000-000000000000"
    assert shared_connect_url(mine) == mine and shared_connect_url("local[2]") == "local[2]"
    for bad, words in (("sc://:15002", "names a host"), ("sc://gw:port", "not a number")):
        with pytest.raises(SparkUnavailable, match=words):
            connect_address(bad)
    real = importlib.import_module

    def without_grpc(name, *args):
        if name == "grpc":
            raise ImportError("No module named 'grpc'")
        return real(name, *args)

    monkeypatch.setattr(session.importlib, "import_module", without_grpc)
    with pytest.raises(SparkUnavailable) as err:
        check_environment("sc://localhost:15002")
    assert "Spark Connect needs grpc" in str(err.value) and "pyspark[connect]>=4.0,<4.1" in str(err.value)
    # a classic master needs Java, not the Connect client
    check_environment("local[1]")


def test_connect_server_command(tmp_path: Path) -> None:
    """`stormbound connect-server` serves until interrupted; the host attaches to it."""
    pytest.importorskip("pyspark")
    import signal
    import socket
    import subprocess

    from app.spark.client import SparkHost
    from app.spark.connect_server import free_port

    assert _cli(["connect-server", "--port", "0"]).returncode == 2
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        done = _cli(["connect-server", "--port", str(taken.getsockname()[1])])
    assert done.returncode == 2 and "already in use" in done.stderr
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "app", "connect-server", "--port", str(port),
                               "--master", "local[1]", "--log", str(tmp_path / "server.log")],
                              cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        assert line.startswith(f"Spark Connect server at sc://localhost:{port}"), line
        with SparkHost(master=f"sc://localhost:{port}") as host:
            assert host.info["connect"] is True and host.info["slots"] == 1
    finally:
        server.send_signal(signal.SIGTERM)  # as `kill` or a service manager stops it
        assert server.wait(60) == 0
    assert (tmp_path / "server.log").read_text()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


def test_run_on_a_server_whose_python_lacks_pyarrow(tmp_path: Path) -> None:
    """A Connect server whose workers run a Python without pyarrow: one line saying what to install."""
    pytest.importorskip("pyspark")
    import subprocess

    from app.spark.connect_server import free_port, start_connect_server, stop_connect_server, wait_until_listening
    from app.spark.session import SparkUnavailable

    bare = "/usr/bin/python3"
    probe = subprocess.run([bare, "-c", "import sys, pyarrow"], capture_output=True) if Path(bare).exists() else None
    version = subprocess.run([bare, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True,
                             text=True).stdout.strip() if probe else ""
    if probe is None or probe.returncode == 0 or version != str(sys.version_info[:2]):
        pytest.skip(f"needs {bare} of Python {sys.version_info[:2]} without pyarrow")
    port = free_port()
    with open(tmp_path / "server.log", "w") as log:
        try:
            server = start_connect_server(port, "local[1]", python=sys.executable, worker_python=bare,
                                          cwd=tmp_path, log=log)
        except SparkUnavailable as err:
            pytest.skip(str(err))
        try:
            wait_until_listening(server, port)
            done = _cli(["run", str(MODELS / "getting-started.storm.json"), "--duration", "1", "--workers", "1",
                         "--out", str(tmp_path / "run"), "--master", f"sc://localhost:{port}"])
        finally:
            stop_connect_server(server)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().count("\n") == 0
    assert "Spark's Python workers have no pyarrow" in done.stderr and "pyspark[connect]" in done.stderr

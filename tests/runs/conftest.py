"""One session-scoped local[2] SparkSession shared by every Spark test (startup is the cost)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark():
    pytest.importorskip("pyspark")
    from app.runs.session import SparkUnavailable, build_session

    try:
        session = build_session("local[2]", "stormbound-tests", {
            "spark.sql.shuffle.partitions": "2",
            "spark.default.parallelism": "2",
            "spark.sql.adaptive.enabled": "false",
        })
    except SparkUnavailable as err:
        pytest.skip(str(err))
    yield session
    session.stop()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _python_without_app(folder):
    """A launcher for this Python that cannot import `app` (no editable-install finder, no source
    tree on the path): the Connect server's workers get the code only as a session artifact."""
    import sys

    blocker = folder / "no-app"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        "import sys\n"
        "sys.meta_path[:] = [f for f in sys.meta_path if '__editable__' not in getattr(f, '__module__', '')]\n")
    launcher = folder / "python"
    launcher.write_text(f'#!/bin/sh\nexport PYTHONPATH="${{PYTHONPATH:+$PYTHONPATH:}}{blocker}"\n'
                        f'exec "{sys.executable}" "$@"\n')
    launcher.chmod(0o755)
    return launcher


@pytest.fixture(scope="session")
def connect_url(tmp_path_factory):
    """A Spark Connect server (local[2]) in its own JVM; yields its sc:// URL.

    It runs from an empty folder with this source tree off its PYTHONPATH, as a remote
    server would: the app's code reaches its Python workers only as a session artifact.
    """
    pyspark = pytest.importorskip("pyspark")
    import os
    import signal
    import socket
    import subprocess
    import sys
    import time
    from pathlib import Path

    from app.runs.session import find_java

    if find_java() is None:
        pytest.skip("no Java for the Spark Connect server")
    home = Path(pyspark.__file__).resolve().parent
    if not list((home / "jars").glob("spark-connect_*.jar")):
        pytest.skip("this pyspark has no Spark Connect server jar")
    port = _free_port()
    folder = tmp_path_factory.mktemp("connect-server")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPARK_CONNECT_MODE_ENABLED")}
    env.update(SPARK_HOME=str(home), PYSPARK_PYTHON=str(_python_without_app(folder)))
    log = open(folder / "server.log", "w")
    server = subprocess.Popen(
        [str(home / "bin" / "spark-submit"), "--class", "org.apache.spark.sql.connect.service.SparkConnectServer",
         "--master", "local[2]", "--conf", f"spark.connect.grpc.binding.port={port}",
         "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=2",
         "--conf", "spark.driver.memory=1g", "spark-internal"],
        cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.time() + 180
        while True:
            if server.poll() is not None:
                pytest.fail("the Spark Connect server exited: " + (folder / "server.log").read_text()[-2000:])
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.time() > deadline:
                    pytest.fail("the Spark Connect server did not open its port within 180 s")
                time.sleep(0.5)
        yield f"sc://localhost:{port}"
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
        log.close()

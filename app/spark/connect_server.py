"""A Spark Connect server on this machine, from the pyspark the Spark Python has (no Qt).

pyspark 4.0's wheel carries the server (`jars/spark-connect_*.jar`), so trying Spark
Connect needs no Spark download: `stormbound connect-server` starts one, and the tests
and benchmarks use :func:`start_connect_server` for theirs. A real deployment runs
its own server; point `--master sc://host:port` at it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO

from app.spark.session import SparkUnavailable, no_pyspark, require_java, spark_python

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"


def free_port() -> int:
    """A TCP port nobody listens on right now (for a server started next)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def spark_home(python: str) -> Path:
    """The pyspark folder of `python` (it holds bin/spark-submit and jars/)."""
    done = subprocess.run([python, "-c", "import os, pyspark; print(os.path.dirname(pyspark.__file__))"],
                          capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise no_pyspark(python)
    home = Path(done.stdout.strip())
    if not list((home / "jars").glob("spark-connect_*.jar")):
        raise SparkUnavailable(f"{home} has no Spark Connect server (jars/spark-connect_*.jar): "
                               "pyspark 4.0 or newer has one")
    return home


def start_connect_server(port: int, master: str = "local[*]", python: str | None = None,
                         worker_python: str | None = None, cwd: str | os.PathLike[str] | None = None,
                         log: IO[str] | int | None = None, conf: Mapping[str, str] | None = None,
                         env: Mapping[str, str] | None = None) -> subprocess.Popen[bytes]:
    """Start a Spark Connect server on `port` (its own process group) and return the process.

    `worker_python` is the Python its workers run (PYSPARK_PYTHON; it needs pyarrow),
    by default the Spark Python itself. Call :func:`wait_until_listening` next.
    """
    python = spark_python(python)
    require_java()
    try:  # otherwise wait_until_listening would take that other listener for our server
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        pass
    else:
        raise SparkUnavailable(f"port {port} is already in use: choose another with --port")
    home = spark_home(python)
    settings = {"spark.connect.grpc.binding.port": str(port), "spark.ui.enabled": "false",
                "spark.sql.session.timeZone": "UTC", **(conf or {})}
    argv = [str(home / "bin" / "spark-submit"), "--class", SERVER_CLASS, "--master", master,
            "--name", "stormbound-connect"]
    for key, value in settings.items():
        argv += ["--conf", f"{key}={value}"]
    argv.append("spark-internal")
    child_env = {k: v for k, v in (os.environ if env is None else env).items() if k != "SPARK_CONNECT_MODE_ENABLED"}
    child_env.update(SPARK_HOME=str(home), PYSPARK_PYTHON=worker_python or python)
    return subprocess.Popen(argv, cwd=cwd, env=child_env, stdout=log, stderr=subprocess.STDOUT if log else None,
                            start_new_session=True)


def wait_until_listening(process: subprocess.Popen[bytes], port: int, timeout: float = 180.0) -> None:
    """Block until the server accepts connections on `port`; SparkUnavailable if it exits or takes too long."""
    deadline = time.time() + timeout
    while True:
        if process.poll() is not None:
            raise SparkUnavailable(f"the Spark Connect server exited with status {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.time() > deadline:
                raise SparkUnavailable(
                    f"the Spark Connect server did not listen on port {port} within {timeout:.0f} s") from None
            time.sleep(0.5)


def stop_connect_server(process: subprocess.Popen[bytes]) -> None:
    """Stop the server and its JVM (the whole process group)."""
    import signal

    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(30)
    except ProcessLookupError:
        return
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)

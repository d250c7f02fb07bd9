"""One session-scoped local[2] SparkSession shared by every Spark test (startup is the cost)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark():
    pytest.importorskip("pyspark")
    from app.spark.session import SparkUnavailable, build_session

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
    pytest.importorskip("pyspark")
    import os
    import sys

    from app.spark.connect_server import free_port, start_connect_server, stop_connect_server, wait_until_listening
    from app.spark.session import SparkUnavailable, find_java

    if find_java() is None:
        pytest.skip("no Java for the Spark Connect server")
    folder = tmp_path_factory.mktemp("connect-server")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    with open(folder / "server.log", "w") as log:
        # the port is free when chosen, but the server's own driver takes ephemeral ports before the Connect
        # service binds it and may take that very one (BindException, exit 255): then another port, at most 3
        for attempt in range(3):
            port = free_port()
            try:
                server = start_connect_server(
                    port, "local[2]", python=sys.executable, worker_python=str(_python_without_app(folder)),
                    cwd=folder, log=log, env=env,
                    conf={"spark.sql.shuffle.partitions": "2", "spark.driver.memory": "1g"})
            except SparkUnavailable as err:
                pytest.skip(str(err))
            try:
                wait_until_listening(server, port)
                break
            except SparkUnavailable as err:
                stop_connect_server(server)
                if attempt == 2 or "Failed to bind" not in (folder / "server.log").read_text():
                    pytest.fail(f"{err}: " + (folder / "server.log").read_text()[-2000:])
        try:
            yield f"sc://localhost:{port}"
        finally:
            stop_connect_server(server)

"""Finding Java and a Python with pyspark, and building the Spark session (no Qt).

The app itself never needs pyspark: Spark work runs in a host process
(`python -m app.spark.host`) started with the Python named by
`STORMBOUND_SPARK_PYTHON`, else the current interpreter when it has pyspark,
else the one the `stormbound-spark` package installs (docs/install.md), else
`python3` on PATH. These helpers give the one-line messages users see when
Java or pyspark is missing.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from app.core.errors import BadInput

SPARK_PYTHON_ENV = "STORMBOUND_SPARK_PYTHON"
SPARK_MASTER_ENV = "STORMBOUND_SPARK_MASTER"
DEFAULT_MASTER = "local[*]"
# The Python with pyspark that the stormbound-spark package installs (packaging/deb/build_spark_deb.py).
PACKAGED_SPARK_PYTHON = "/opt/stormbound-spark/bin/python"


class SparkUnavailable(BadInput, RuntimeError):
    """Spark cannot start here; the message says what is missing and how to fix it."""


def find_java(env: Mapping[str, str] | None = None) -> str | None:
    """The java executable Spark will use: $JAVA_HOME/bin/java, else `java` on PATH."""
    env = os.environ if env is None else env
    home = env.get("JAVA_HOME")
    if home:
        candidate = Path(home) / "bin" / ("java.exe" if os.name == "nt" else "java")
        if candidate.exists():
            return str(candidate)
    return shutil.which("java", path=env.get("PATH", ""))


def has_pyspark(python: str) -> bool:
    """Whether `python` can import pyspark (runs it once, a second at most)."""
    if os.path.realpath(python) == os.path.realpath(sys.executable):
        try:
            import pyspark  # noqa: F401  # only whether it imports
        except ModuleNotFoundError:
            return False
        return True
    try:
        done = subprocess.run([python, "-c", "import pyspark"], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def spark_python(setting: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """The Python to start the Spark host with: the setting, $STORMBOUND_SPARK_PYTHON, this one,
    the packaged one (PACKAGED_SPARK_PYTHON) when installed, or python3."""
    env = os.environ if env is None else env
    chosen = setting or env.get(SPARK_PYTHON_ENV)
    if chosen:
        found = shutil.which(chosen, path=env.get("PATH", "")) or (chosen if Path(chosen).exists() else None)
        if not found:
            raise SparkUnavailable(f"{SPARK_PYTHON_ENV}={chosen}: no such Python executable")
        return found
    if not getattr(sys, "frozen", False) and has_pyspark(sys.executable):
        return sys.executable
    if os.access(PACKAGED_SPARK_PYTHON, os.X_OK):
        return PACKAGED_SPARK_PYTHON
    for name in ("python3", "python"):
        found = shutil.which(name, path=env.get("PATH", ""))
        if found:
            return found
    raise SparkUnavailable(f"no Python found for Spark: set {SPARK_PYTHON_ENV} to a Python that has pyspark")


PYSPARK_REQUIREMENT = "pyspark[connect]>=4.0,<4.1"
CONNECT_PORT = 15002  # Spark Connect's default port
# Settings of our own session, classic or Connect: event logs make small shuffles (a server's
# default of 200 partitions made the reliability joins 3-4x slower on 2 cores).
SESSION_SQL = {"spark.sql.shuffle.partitions": "4", "spark.sql.session.timeZone": "UTC"}


def require_java(env: Mapping[str, str] | None = None) -> str:
    """The java executable, or SparkUnavailable saying how to provide one."""
    java = find_java(env)
    if java is None:
        raise SparkUnavailable("Java not found: Spark needs Java 17 or 21; set JAVA_HOME or put java on PATH")
    return java


def no_pyspark(python: str) -> SparkUnavailable:
    """The one-line error for a Python that cannot import pyspark."""
    return SparkUnavailable(f"{python} has no pyspark: install it there (pip install '{PYSPARK_REQUIREMENT}') "
                            f"or set {SPARK_PYTHON_ENV} to a Python that has it")


def is_connect_url(master: str) -> bool:
    return master.startswith("sc://")


def connect_address(master: str) -> tuple[str, int]:
    """(host, port) of a Spark Connect URL `sc://host[:port][/;param=value...]`."""
    rest = master[len("sc://"):].split("/", 1)[0].split(";", 1)[0]
    if rest.startswith("["):  # an IPv6 address: sc://[::1]:15002
        host, _, tail = rest[1:].partition("]")
        port = tail[1:] if tail.startswith(":") else ""
    else:
        host, _, port = rest.partition(":")
    if not host:
        raise SparkUnavailable(f"{master}: a Spark Connect URL names a host: sc://HOST[:PORT]")
    if port and not port.isdigit():
        raise SparkUnavailable(f"{master}: the port '{port}' is not a number")
    return host, int(port) if port else CONNECT_PORT


def is_local_host(host: str) -> bool:
    """Whether a server at `host` runs on this machine (so it can read this machine's files)."""
    return host in ("localhost", "127.0.0.1", "::1", socket.gethostname(), socket.getfqdn())


def check_environment(master: str = DEFAULT_MASTER, env: Mapping[str, str] | None = None) -> None:
    """Raise SparkUnavailable when this Python lacks pyspark (or Spark Connect's client
    libraries for an `sc://` master), Java is missing for a JVM master, or the Spark
    Connect server does not answer."""
    try:
        import pyspark  # noqa: F401  # only whether it imports
    except ModuleNotFoundError:
        raise no_pyspark(sys.executable) from None
    if not is_connect_url(master):
        require_java(env)
        return
    for module in ("pandas", "pyarrow", "grpc", "grpc_status", "google.rpc"):
        try:
            importlib.import_module(module)
        except ImportError:
            raise SparkUnavailable(
                f"Spark Connect needs {module.split('.')[0]} in {sys.executable}: "
                f"pip install '{PYSPARK_REQUIREMENT}' there") from None
    host, port = connect_address(master)
    try:  # the client would retry for minutes against a server that is not there
        socket.create_connection((host, port), timeout=5).close()
    except OSError as err:
        reason = err.strerror or type(err).__name__
        raise SparkUnavailable(f"Spark Connect server {master} is not reachable ({host}:{port}: {reason})") from None


def build_session(master: str = DEFAULT_MASTER, app_name: str = "stormbound",
                  conf: Mapping[str, Any] | None = None) -> Any:
    """A SparkSession for `master` (local[N], spark://, yarn, k8s://) or a Spark Connect `sc://` URL."""
    check_environment(master)
    from pyspark.sql import SparkSession

    if is_connect_url(master):
        sql = {k: str(v) for k, v in (conf or {}).items() if k.startswith("spark.sql.")}  # the rest is the server's
        try:
            return _connect_session(master, sql)
        except Exception as err:
            if "SESSION_CLOSED" not in str(err) or SESSION_ID not in master:
                raise
            # the server closed that session (idle for its session timeout): a new one, not kept
            return _connect_session(without_session_id(master), sql)
    builder = SparkSession.builder.master(master).appName(app_name)
    settings = {
        **SESSION_SQL,
        "spark.ui.enabled": "false",
        "spark.python.worker.reuse": "true",
        "spark.driver.memory": "1g",
        "spark.ui.showConsoleProgress": "false",
    }
    settings.update({k: str(v) for k, v in (conf or {}).items()})
    for key, value in settings.items():
        builder = builder.config(key, value)
    if master.startswith("local"):  # Python workers on this machine: the same Python (pyarrow, pydantic)
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    # Spark's Python workers must import app.spark and app.measure: put this source tree on their path
    root = str(Path(__file__).resolve().parent.parent.parent)
    path = os.environ.get("PYTHONPATH", "")
    if root not in path.split(os.pathsep):
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (root, path) if p)
    builder = builder.config("spark.executorEnv.PYTHONPATH", os.environ["PYTHONPATH"])
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if not master.startswith("local"):  # executors on other machines: send them the code
        ship_code(spark)
    return spark


def _connect_session(master: str, sql: Mapping[str, str]) -> Any:
    """A Spark Connect session with our SQL settings and the app's code. A URL naming its session
    (`;session_id=`, e.g. from :func:`shared_connect_url`) names one that outlives this process: it is
    not released when the host stops, so the next process attaches to it again."""
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.remote(master).getOrCreate()
    if SESSION_ID in master:
        spark.release_session_on_close = False  # type: ignore[attr-defined]  # a Connect session's own
    spark._stormbound_url = without_session_id(master)  # type: ignore[attr-defined]  # for session_info
    try:
        for key, value in {**SESSION_SQL, **sql}.items():
            spark.conf.set(key, value)  # session-scoped: other users of the server keep theirs
        ship_code(spark)
    except Exception:
        spark.stop()
        raise
    return spark


SESSION_ID = ";session_id="


def without_session_id(master: str) -> str:
    """A Spark Connect URL without its `session_id` parameter (as the user gave it, for showing)."""
    if SESSION_ID not in master:
        return master
    head, _, tail = master.partition(SESSION_ID)
    rest = tail.partition(";")[2]
    url = head + (";" + rest if rest else "")
    return url if ";" in url else url.rstrip("/")


def shared_connect_url(master: str) -> str:
    """`master` (a Spark Connect URL) naming a server-side session of its own: one per user, server and
    version of the app's code (the artifact the session holds), so every `run` against that server attaches
    to the same session, whose Python workers are already up (Spark keeps a session's workers and reuses
    them; a new session starts its own). A URL naming a session already, or not `sc://`, is left alone.
    The server closes the session after its idle timeout (spark.connect.session.manager.defaultSessionTimeout,
    60 min by default); `build_session` then starts a new one."""
    import getpass
    import uuid

    if not is_connect_url(master) or SESSION_ID in master:
        return master
    digest = hashlib.sha256(f"{getpass.getuser()}\0{master}\0{code_archive().name}".encode()).digest()
    session = uuid.UUID(bytes=digest[:16], version=4)
    return (master if ";" in master else master.rstrip("/") + "/") + f"{SESSION_ID}{session}"


def is_connect(spark: Any) -> bool:
    """Whether `spark` is a Spark Connect session (no SparkContext, no RDDs)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def master_of(spark: Any) -> str:
    """The master URL as the user gave it (sc://... for Spark Connect) or Spark's own."""
    if is_connect(spark):
        url = getattr(spark, "_stormbound_url", None)
        return url or f"sc:// ({spark.conf.get('spark.master', '?')})"
    return str(spark.sparkContext.master)


def task_slots(spark: Any) -> int:
    """How many tasks can run at once: SparkContext.defaultParallelism, or for Spark Connect
    the server's `spark.default.parallelism`, else its `local[N]` master, else 2."""
    if not is_connect(spark):
        return max(1, int(spark.sparkContext.defaultParallelism))
    configured = spark.conf.get("spark.default.parallelism", None)
    if configured and str(configured).isdigit():
        return max(1, int(configured))
    server_master = str(spark.conf.get("spark.master", ""))
    if server_master.startswith("local["):
        inside = server_master[len("local["):].split(",")[0].rstrip("]")
        if inside.isdigit():
            return max(1, int(inside))
        if inside == "*":
            return os.cpu_count() or 2
    if server_master == "local":
        return 1
    return 2


def session_info(spark: Any) -> dict[str, Any]:
    """What the app shows about an attached session."""
    return {"master": master_of(spark), "spark_version": spark.version, "slots": task_slots(spark),
            "connect": is_connect(spark)}


_shipped: dict[int, str] = {}


def code_archive() -> Path:
    """A zip of the `app` package (without the GUI), named by its content hash, for Spark's Python workers."""
    package = Path(__file__).resolve().parent.parent
    files = sorted(p for p in package.rglob("*.py") if "gui" not in p.relative_to(package).parts)
    digest = hashlib.sha256()
    for f in files:
        digest.update(str(f.relative_to(package)).encode() + b"\0" + f.read_bytes())
    target = Path(tempfile.gettempdir()) / f"stormbound-app-{digest.hexdigest()[:16]}.zip"
    if not target.exists():
        partial = target.with_suffix(f".{os.getpid()}.tmp")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as zf:
            for f in files:
                zf.write(f, "app/" + str(f.relative_to(package)))
        os.replace(partial, target)
    return target


def ship_code(spark: Any) -> None:
    """Make `app` importable in the session's Python workers (a session artifact, once per session):
    a Spark Connect server or a cluster's executors do not have this source tree."""
    archive = code_archive()
    if _shipped.get(id(spark)) == archive.name:
        return
    spark.addArtifacts(str(archive), pyfile=True)
    _shipped[id(spark)] = archive.name


def local_session() -> Any:
    """The active session, or a new local one (for small helper jobs such as reading Parquet)."""
    check_environment(DEFAULT_MASTER)
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    return build_session(os.environ.get(SPARK_MASTER_ENV, "local[2]"))


def raise_if_out_of_memory(err: BaseException, spark: Any = None) -> None:
    """Inside a Spark job: turn an out-of-memory failure (anywhere in Spark's message, the Java
    stack trace included) into SparkUnavailable, which the Spark host reports as a setup problem
    (exit 2 in the CLI) instead of an internal error. Other errors are left alone."""
    from app.measure.engine_choice import is_out_of_memory

    if not is_out_of_memory(str(err)):
        return
    memory = None
    try:
        memory = spark.conf.get("spark.driver.memory", None) if spark is not None else None
    except Exception:  # noqa: BLE001 - a session that no longer answers
        memory = None
    raise SparkUnavailable("Spark ran out of memory" + (f" (driver memory {memory})" if memory else "")
                           + ": raise --driver-memory (local) or --conf spark.executor.memory=... (cluster)") from None

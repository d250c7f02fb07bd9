"""Finding Java and a Python with pyspark, and building the Spark session (no Qt).

The app itself never needs pyspark: Spark work runs in a host process
(`python -m app.runs.sparkhost`) started with the Python named by
`STORMBOUND_SPARK_PYTHON`, else the current interpreter when it has pyspark,
else `python3` on PATH. These helpers give the one-line messages users see when
Java or pyspark is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Mapping

SPARK_PYTHON_ENV = "STORMBOUND_SPARK_PYTHON"
SPARK_MASTER_ENV = "STORMBOUND_SPARK_MASTER"
DEFAULT_MASTER = "local[*]"


class SparkUnavailable(RuntimeError):
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
            import pyspark  # noqa: F401
        except ModuleNotFoundError:
            return False
        return True
    try:
        done = subprocess.run([python, "-c", "import pyspark"], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def spark_python(setting: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """The Python to start the Spark host with: the setting, $STORMBOUND_SPARK_PYTHON, this one, or python3."""
    env = os.environ if env is None else env
    chosen = setting or env.get(SPARK_PYTHON_ENV)
    if chosen:
        found = shutil.which(chosen, path=env.get("PATH", "")) or (chosen if Path(chosen).exists() else None)
        if not found:
            raise SparkUnavailable(f"{SPARK_PYTHON_ENV}={chosen}: no such Python executable")
        return found
    if not getattr(sys, "frozen", False) and has_pyspark(sys.executable):
        return sys.executable
    for name in ("python3", "python"):
        found = shutil.which(name, path=env.get("PATH", ""))
        if found:
            return found
    raise SparkUnavailable(f"no Python found for Spark: set {SPARK_PYTHON_ENV} to a Python that has pyspark")


def check_environment(master: str = DEFAULT_MASTER, env: Mapping[str, str] | None = None) -> None:
    """Raise SparkUnavailable when this Python has no pyspark, or Java is missing for a JVM master."""
    try:
        import pyspark  # noqa: F401
    except ModuleNotFoundError:
        raise SparkUnavailable(
            f"{sys.executable} has no pyspark: install it there (pip install 'pyspark>=3.5,<4.1') "
            f"or set {SPARK_PYTHON_ENV} to a Python that has it") from None
    if not master.startswith("sc://") and find_java(env) is None:
        raise SparkUnavailable("Java not found: Spark needs Java 17 or 21; set JAVA_HOME or put java on PATH")


def build_session(master: str = DEFAULT_MASTER, app_name: str = "stormbound", conf: Mapping[str, Any] | None = None):
    """A SparkSession for `master` (local[N], spark://, yarn, k8s://) or a Spark Connect `sc://` URL."""
    check_environment(master)
    from pyspark.sql import SparkSession

    if master.startswith("sc://"):
        return SparkSession.builder.remote(master).getOrCreate()
    builder = SparkSession.builder.master(master).appName(app_name)
    settings = {
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "4",
        "spark.sql.session.timeZone": "UTC",
        "spark.python.worker.reuse": "true",
        "spark.driver.memory": "1g",
        "spark.ui.showConsoleProgress": "false",
    }
    settings.update({k: str(v) for k, v in (conf or {}).items()})
    for key, value in settings.items():
        builder = builder.config(key, value)
    # Spark's Python workers must import app.runs: put this source tree on their path
    root = str(Path(__file__).resolve().parent.parent.parent)
    path = os.environ.get("PYTHONPATH", "")
    if root not in path.split(os.pathsep):
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (root, path) if p)
    builder = builder.config("spark.executorEnv.PYTHONPATH", os.environ["PYTHONPATH"])
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def local_session():
    """The active session, or a new local one (for small helper jobs such as reading Parquet)."""
    check_environment(DEFAULT_MASTER)
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    return build_session(os.environ.get(SPARK_MASTER_ENV, "local[2]"))

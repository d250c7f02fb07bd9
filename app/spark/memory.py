"""The Spark host's JVM memory: a JVM master (`local[N]`, `spark://`, `yarn`, `k8s://`) starts with
`--driver-memory` (default `STORMBOUND_SPARK_DRIVER_MEMORY`, else a quarter of this machine's memory,
between 1g and 8g) and any `--conf KEY=VALUE`, passed through PYSPARK_SUBMIT_ARGS, which spark-submit
reads when pyspark starts the JVM. A Spark Connect server (`sc://`) has its own memory settings. An
out-of-memory failure becomes one line saying what to raise (`out_of_memory_advice`). No pyspark here.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping

from app.measure.engine_choice import EngineError

DRIVER_MEMORY_ENV = "STORMBOUND_SPARK_DRIVER_MEMORY"
SUBMIT_ARGS_ENV = "PYSPARK_SUBMIT_ARGS"


def physical_memory() -> int | None:
    """Bytes of memory of this machine (None when the platform does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def default_driver_memory(env: Mapping[str, str] | None = None) -> str:
    """$STORMBOUND_SPARK_DRIVER_MEMORY, else a quarter of this machine's memory between 1g and 8g."""
    env = os.environ if env is None else env
    if env.get(DRIVER_MEMORY_ENV):
        return check_memory_size(env[DRIVER_MEMORY_ENV], DRIVER_MEMORY_ENV)
    total = physical_memory()
    gigabytes = 2 if total is None else max(1, min(8, int(total / 4 / 2**30)))
    return f"{gigabytes}g"


def check_memory_size(value: str, name: str = "--driver-memory") -> str:
    """A JVM memory size such as 4g or 3072m."""
    text = value.strip().lower()
    if not text or not (text[:-1].isdigit() if text[-1] in "kmgt" else text.isdigit()):
        raise EngineError(f"{name}: expected a size such as 4g or 3072m, got '{value}'")
    return text


def spark_host_env(master: str, driver_memory: str | None = None, conf: list[str] | None = None,
                   env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for the Spark host process: PYSPARK_SUBMIT_ARGS with the driver memory and
    `--conf` settings for a JVM master (left alone for Spark Connect, or when already set)."""
    out = dict(os.environ if env is None else env)
    if master.startswith("sc://") or out.get(SUBMIT_ARGS_ENV):
        return out
    memory = check_memory_size(driver_memory) if driver_memory else default_driver_memory(out)
    args = ["--driver-memory", memory]
    for item in conf or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise EngineError(f"--conf {item}: expected KEY=VALUE")
        args += ["--conf", f"{key.strip()}={value}"]
    out[SUBMIT_ARGS_ENV] = " ".join(shlex.quote(a) for a in args) + " pyspark-shell"
    return out


def driver_memory_of(env: Mapping[str, str]) -> str | None:
    """The --driver-memory in an environment's PYSPARK_SUBMIT_ARGS."""
    words = shlex.split(env.get(SUBMIT_ARGS_ENV, ""))
    for i, word in enumerate(words[:-1]):
        if word == "--driver-memory":
            return words[i + 1]
    return None


def out_of_memory_advice(master: str, env: Mapping[str, str]) -> str:
    """One line: Spark ran out of memory, and what to raise."""
    if master.startswith("sc://"):
        return ("Spark ran out of memory on the Spark Connect server: raise the server's spark.driver.memory / "
                "spark.executor.memory (or use --engine embedded for a log that fits this machine)")
    now = driver_memory_of(env) or "its default"
    if master.startswith("local"):
        return (f"Spark ran out of memory (driver memory {now}, master {master}): raise it with "
                f"--driver-memory (e.g. --driver-memory 8g) or ${DRIVER_MEMORY_ENV}")
    return (f"Spark ran out of memory (driver memory {now}, master {master}): raise the executors' memory with "
            f"--conf spark.executor.memory=8g, or the driver's with --driver-memory")

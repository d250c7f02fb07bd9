"""The one place that chooses the engine for a run's log and builds it: `open_log_engine`.

`open_log_engine(log, engine, ...)` picks the engine by app.measure.engine_choice.choose_engine's rules
(embedded, spark, or auto: a log on this machine in this process, a URI or a given master on Spark,
optional size limits) and returns a `LogEngine` (app/measure/log_engine.py) built by the entry of
`ENGINE_BUILDERS` for that engine, in the spirit of pySMT's `Factory` and networkx's backend dispatch.
The embedded engine is this package's; Spark registers its own with `register_engine` when app.spark
is imported (app/spark/__init__.py, app/spark/log_engine.py's `SparkEngine`, which sends the same
operations to the Spark host process), so that reading a local log never enters the Spark package
and this package imports nothing of it (CONTRIBUTING.md, "Code layout"). The CLI (app/cli/engine.py)
and the Runs panel (app/gui/panels/runs_controller.py) call only this factory; tests put a fake in
`ENGINE_BUILDERS`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from app.core.errors import BadInput
from app.measure.engine_choice import Choice, choose_engine
from app.measure.log_engine import EmbeddedEngine, LogEngine, LogPath, Progress

__all__ = ["ENGINE_BUILDERS", "EngineBuilder", "HostRequest", "SparkConnect", "SparkNeeded", "choose",
           "open_log_engine", "register_engine"]


class HostRequest(Protocol):
    """One request to a Spark host, as `app.spark.client.SparkHost.request`: its result, or an error."""

    def __call__(self, op: str, on_progress: Progress | None = None, **params: Any) -> dict[str, Any]: ...


#: the Spark host's request function for a log chosen for Spark (the choice says why)
SparkConnect = Callable[[Choice], HostRequest]
#: what builds an engine from the choice and the Spark at hand (None: no Spark)
EngineBuilder = Callable[[Choice, SparkConnect | None], LogEngine]


class SparkNeeded(BadInput, RuntimeError):
    """The log needs Spark and none is at hand (the Runs panel with no Spark attached)."""

    def __init__(self, choice: Choice):
        super().__init__(f"this log needs Spark ({choice.reason})")
        self.choice = choice


def _embedded(choice: Choice, spark: SparkConnect | None) -> LogEngine:
    return EmbeddedEngine(reason=choice.reason)


#: what builds each engine by its name: "embedded" here, "spark" registered by app.spark (tests put fakes here)
ENGINE_BUILDERS: dict[str, EngineBuilder] = {"embedded": _embedded}


def register_engine(name: str, builder: EngineBuilder) -> None:
    """Make `builder` the one that builds the engine `name` (app.spark registers "spark" when imported)."""
    ENGINE_BUILDERS[name] = builder


def choose(log: LogPath, engine: str = "auto", *, spark: SparkConnect | None = None, spark_requested: bool = False,
           max_events: int | None = None, max_mb: float | None = None, env: Mapping[str, str] | None = None,
           unsized_to_spark: bool = False) -> Choice:
    """The engine for `log` (app.measure.engine_choice.choose_engine); with `unsized_to_spark`, a log that
    cannot be sized here goes to the Spark at hand (unless `engine` is embedded): Spark reports its error."""
    try:
        return choose_engine(log, engine, spark_requested=spark_requested, max_events=max_events, max_mb=max_mb,
                             env=env)
    except Exception:
        if unsized_to_spark and spark is not None and engine not in ("embedded", "local"):
            return Choice("spark", "a log that cannot be sized here", None, 0)
        raise


def open_log_engine(log: LogPath, engine: str = "auto", *, spark: SparkConnect | None = None,
                    spark_requested: bool = False, max_events: int | None = None, max_mb: float | None = None,
                    env: Mapping[str, str] | None = None, unsized_to_spark: bool = False) -> LogEngine:
    """The engine that reads `log`, as the user chose it (`engine`: auto, embedded, spark; `spark_requested`:
    a Spark master was given; the optional size limits of `auto`). `spark` gives the Spark host's request
    function for a log chosen for Spark; None (or Spark's engine not registered: app.spark not imported): no
    Spark at hand, and such a log raises SparkNeeded. A bad setting raises
    app.measure.engine_choice.EngineError."""
    choice = choose(log, engine, spark=spark, spark_requested=spark_requested, max_events=max_events,
                    max_mb=max_mb, env=env, unsized_to_spark=unsized_to_spark)
    builder = ENGINE_BUILDERS.get(choice.engine)
    if builder is None:
        raise SparkNeeded(choice)
    return builder(choice, spark)

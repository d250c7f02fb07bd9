"""The one place that chooses the engine for a run's log, behind one interface.

`open_log_engine(log, engine, ...)` picks the engine by app.measure.engine_choice.choose_engine's
rules (embedded, spark, or auto: a log on this machine in this process, a URI or a given master on
Spark, optional size limits) and returns a `LogEngine` (app/measure/log_engine.py): the embedded
`EmbeddedEngine` or the `SparkEngine` here, which sends the same operations to the Spark host
process (app/spark/host.py) through a request function, `SparkHost.request` of app/spark/client.py
or the CLI's own (app/cli/spark_jobs.py). Both return the same pydantic results. The CLI
(app/cli/engine.py) and the Runs panel (app/gui/panels/runs_controller.py) call only this factory,
in the spirit of pySMT's `Factory` and networkx's backend dispatch: `ENGINE_BUILDERS` maps an engine's name
to what builds it (tests put a fake there).

No pyspark is imported here: the Spark engine only talks to the host process.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from app.core.errors import StormboundError
from app.measure.engine_choice import Choice, choose_engine
from app.measure.log_engine import EmbeddedEngine, LogEngine, LogPath, Progress

if TYPE_CHECKING:
    from app.measure.analysis import Analysis
    from app.measure.reliability import ReliabilityConfig, ReliabilityReport

__all__ = ["ENGINE_BUILDERS", "HostRequest", "LogEngine", "SparkConnect", "SparkEngine", "SparkNeeded", "choose",
           "open_log_engine"]


class HostRequest(Protocol):
    """One request to a Spark host, as `app.spark.client.SparkHost.request`: its result, or an error."""

    def __call__(self, op: str, on_progress: Progress | None = None, **params: Any) -> dict[str, Any]: ...


#: the Spark host's request function for a log chosen for Spark (the choice says why)
SparkConnect = Callable[[Choice], HostRequest]


class SparkNeeded(StormboundError, RuntimeError):
    """The log needs Spark and none is at hand (the Runs panel with no Spark attached)."""

    def __init__(self, choice: Choice):
        super().__init__(f"this log needs Spark ({choice.reason})")
        self.choice = choice


@dataclass(frozen=True)
class SparkEngine:
    """Spark SQL in the Spark host process, reached by `request`."""

    request: HostRequest
    reason: str = "--engine spark"
    name: Literal["embedded", "spark"] = "spark"

    def analyze(self, log: LogPath, *, time_unit: str = "s", bin_s: float = 1.0, growth_floor: float = 0.05,
                on_progress: Progress | None = None) -> Analysis:
        from app.measure.analysis import Analysis

        data = self.request("analyze", on_progress, path=str(log), time_unit=time_unit, bin_s=bin_s,
                            growth_floor=growth_floor)
        return Analysis.model_validate(data)

    def reliability(self, log: LogPath, config: ReliabilityConfig, *, time_unit: str = "s", limit: int = 200,
                    on_progress: Progress | None = None) -> ReliabilityReport:
        from app.measure.reliability import ReliabilityReport

        data = self.request("reliability", on_progress, path=str(log), time_unit=time_unit,
                            config=config.model_dump(), limit=limit)
        return ReliabilityReport.model_validate(data)  # its cannot_decide filled by the host (app/spark/host.py)


def _embedded(choice: Choice, spark: SparkConnect | None) -> LogEngine:
    return EmbeddedEngine(reason=choice.reason)


def _spark(choice: Choice, spark: SparkConnect | None) -> LogEngine:
    if spark is None:
        raise SparkNeeded(choice)
    return SparkEngine(spark(choice), reason=choice.reason)


#: what builds each engine from the choice and the Spark at hand (tests replace an entry with a fake)
ENGINE_BUILDERS: dict[str, Callable[[Choice, SparkConnect | None], LogEngine]] = {"embedded": _embedded,
                                                                                  "spark": _spark}


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
    function for a log chosen for Spark; None: no Spark at hand, and such a log raises SparkNeeded. A bad
    setting raises app.measure.engine_choice.EngineError."""
    choice = choose(log, engine, spark=spark, spark_requested=spark_requested, max_events=max_events,
                    max_mb=max_mb, env=env, unsized_to_spark=unsized_to_spark)
    return ENGINE_BUILDERS[choice.engine](choice, spark)

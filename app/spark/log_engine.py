"""The Spark engine for a run's log: `SparkEngine` sends the operations of app/measure/log_engine.py's
`LogEngine` to the Spark host process (app/spark/host.py) through a request function (`SparkHost.request`
of app/spark/client.py, or the CLI's own: app/cli/spark_jobs.py) and returns the same pydantic results as
the embedded engine. It registers itself with the one factory, app/measure/engines.py's `open_log_engine`,
when app.spark is imported (app/spark/__init__.py); which engine reads a log is chosen there.

No pyspark is imported here: the Spark engine only talks to the host process.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from app.measure.engine_choice import Choice
from app.measure.engines import HostRequest, SparkConnect, SparkNeeded, register_engine
from app.measure.log_engine import LogEngine, LogPath, Progress

if TYPE_CHECKING:
    from app.measure.analysis import Analysis
    from app.measure.reliability import ReliabilityConfig, ReliabilityReport

__all__ = ["SparkEngine"]


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


def _spark(choice: Choice, spark: SparkConnect | None) -> LogEngine:
    if spark is None:
        raise SparkNeeded(choice)
    return SparkEngine(spark(choice), reason=choice.reason)


register_engine("spark", _spark)

"""The one interface of the engines that read a run's log: `LogEngine`, and its embedded implementation.

Two engines run the same definition (the SQL of app/measure/sql): the embedded one, DuckDB in
this process (`EmbeddedEngine`, here), and Spark SQL through the Spark host process
(`app.spark.log_engine.SparkEngine`). Each answers the same operations with the same pydantic
results (`Analysis`, `ReliabilityReport`). Which one reads a log is chosen and built by the one
factory, app/measure/engines.py's `open_log_engine` (by app.measure.engine_choice.choose_engine's
rules), with which Spark registers its engine when app.spark is imported; the CLI (app/cli/engine.py)
and the Runs panel (app/gui/panels/runs_controller.py) ask it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    from app.measure.analysis import Analysis
    from app.measure.reliability import ReliabilityConfig, ReliabilityReport

#: progress of an engine's work: (fraction done, what it does)
Progress = Callable[[float, str], None]
LogPath = str | os.PathLike[str]


@runtime_checkable
class LogEngine(Protocol):
    """An engine that reads a run's log (a file, a run folder or, for Spark, a URI)."""

    @property
    def name(self) -> Literal["embedded", "spark"]:
        """"embedded" or "spark"."""
        ...

    @property
    def reason(self) -> str:
        """Why this engine reads the log (app.measure.engine_choice.Choice.reason)."""
        ...

    def analyze(self, log: LogPath, *, time_unit: str = "s", bin_s: float = 1.0, growth_floor: float = 0.05,
                on_progress: Progress | None = None) -> Analysis:
        """Measured rates, α, σ, bursts and queue growth of the log."""
        ...

    def reliability(self, log: LogPath, config: ReliabilityConfig, *, time_unit: str = "s", limit: int = 200,
                    on_progress: Progress | None = None) -> ReliabilityReport:
        """Storm's delivery guarantees checked over the log (`cannot_decide` filled by either engine)."""
        ...


@dataclass(frozen=True)
class EmbeddedEngine:
    """DuckDB in this process: no JVM; it spills to disk beyond memory."""

    reason: str = "--engine embedded"
    name: Literal["embedded", "spark"] = "embedded"

    def analyze(self, log: LogPath, *, time_unit: str = "s", bin_s: float = 1.0, growth_floor: float = 0.05,
                on_progress: Progress | None = None) -> Analysis:
        from app.measure.analysis import analyze_path_local

        if on_progress is not None:
            on_progress(0.3, "analysing in this process")
        return analyze_path_local(log, time_unit, bin_s=bin_s, growth_floor=growth_floor)

    def reliability(self, log: LogPath, config: ReliabilityConfig, *, time_unit: str = "s", limit: int = 200,
                    on_progress: Progress | None = None) -> ReliabilityReport:
        from app.measure.reliability import check_reliability_path_local

        if on_progress is not None:
            on_progress(0.3, "checking in this process")
        return check_reliability_path_local(log, config, time_unit, limit=limit)

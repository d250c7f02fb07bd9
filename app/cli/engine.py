"""The engine that reads a run's log for `analyze`, `compare`, `reliability` and `analyze --report`: the one
factory's (app.measure.engines.open_log_engine) from --engine, --master and --local-max-events/--local-max-mb,
its Spark started for each request from the options of app/cli/spark_jobs.py; and its failures as one line."""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from app.cli import spark_jobs
from app.cli.common import UsageError
from app.core.topology import TopologyError

if TYPE_CHECKING:
    from app.measure.engine_choice import Choice
    from app.measure.engines import HostRequest, SparkConnect
    from app.measure.log_engine import LogEngine, Progress


def spark_for(args: argparse.Namespace) -> SparkConnect:
    """The CLI's Spark for a log chosen for it: each request starts a Spark host from the options of
    `add_spark_options` (closed after), naming why the log needs Spark when it cannot start."""
    def connect(choice: Choice) -> HostRequest:
        def request(op: str, on_progress: Progress | None = None, **params: Any) -> dict[str, Any]:
            return spark_jobs.spark_request(args, op, choice.reason, **params)  # its progress on stderr
        return request
    return connect


def open_engine(args: argparse.Namespace) -> LogEngine:
    """The engine for the log of `args`; bad settings are a UsageError; says which on a terminal's stderr."""
    import app.spark  # noqa: F401 - Spark registers its engine with the factory (app/measure/engines.py)
    from app.measure.engine_choice import EngineError
    from app.measure.engines import open_log_engine

    try:
        engine = open_log_engine(args.log, args.engine, spark=spark_for(args), spark_requested=args.master is not None,
                                 max_events=args.local_max_events, max_mb=args.local_max_mb)
    except EngineError as err:
        raise UsageError(str(err)) from None
    where = "embedded (DuckDB, this process)" if engine.name == "embedded" else "Spark"
    logging.getLogger("stormbound.engine").info("engine: %s (%s)", where, engine.reason)
    if not spark_jobs.quiet(args) and not getattr(args, "verbose", 0) and sys.stderr.isatty():
        sys.stderr.write(f"engine: {where} ({engine.reason})\n")
    return engine


def in_this_process(args: argparse.Namespace) -> LogEngine | str:
    """The factory's engine for the log of `args` when it reads the log in this process (no Spark offered);
    else why not (a bad setting, or why the log goes to Spark). Says nothing."""
    from app.measure.engine_choice import EngineError
    from app.measure.engines import SparkNeeded, open_log_engine

    try:
        return open_log_engine(args.log, args.engine, spark=None, spark_requested=args.master is not None,
                               max_events=args.local_max_events, max_mb=args.local_max_mb)
    except EngineError as err:
        return str(err)
    except SparkNeeded as err:
        return err.choice.reason


@contextlib.contextmanager
def engine_failures() -> Iterator[None]:
    """A failure of the engine running a log (app.measure.engine_choice.engine_failure: out of memory,
    DuckDB missing) becomes one line, exit 2; every other error passes."""
    try:
        yield
    except (TopologyError, UsageError):
        raise
    except Exception as err:
        from app.measure.engine_choice import engine_failure

        line = engine_failure(err)
        if line is None:
            raise
        raise UsageError(line) from None

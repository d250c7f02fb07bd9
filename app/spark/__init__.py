"""Everything that talks to Spark: session, host process and client, the run job and its task side,
the Connect server, frames (event logs as DataFrames), and the Spark twin of the DiffStream matcher."""

from app.spark import log_engine as _log_engine  # noqa: F401 - Spark registers its engine (app/measure/engines.py)

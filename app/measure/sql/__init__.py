"""Every figure computed from a run's logs, written once as SQL (docs/event-log.md, "Engines").

- `dialect`: the few spellings DuckDB and Spark SQL do not share;
- `analysis`: the queries of `analyze` (counts, rates, α, σ, bursts, queue series) and the
  assembly of their rows into an `app.measure.analysis.Analysis`;
- `embedded`: the in-process engine, DuckDB, and how a log becomes its `events` and `queues` tables.

The Spark engine (app/spark/analysis_job.py) runs the same queries through Spark SQL over
its DataFrames registered as views; nothing here imports app.spark.
"""

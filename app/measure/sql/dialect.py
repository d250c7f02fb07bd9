"""What DuckDB and Spark SQL spell differently, in one table; the queries use `{name}` for these.

Everything else in the queries of app/measure/sql is the SQL both engines read alike
(window functions, `max_by`, `stddev_pop`, `CASE`, `coalesce`, `floor`).
"""

from __future__ import annotations

from typing import Literal

Dialect = Literal["duckdb", "spark"]

SPELLINGS: dict[str, dict[str, str]] = {
    # one row per element of a list column, in the select list
    "explode": {"duckdb": "unnest", "spark": "explode"},
    # a list of the given values
    "array": {"duckdb": "list_value", "spark": "array"},
    # a 64-bit integer type
    "long": {"duckdb": "BIGINT", "spark": "BIGINT"},
    # the time column is NaN or infinite
    # not finite, or beyond the readers' largest time (app.measure.eventlog.MAX_TIME)
    "nonfinite_t": {"duckdb": "(NOT isfinite(t) OR abs(t) > 1e13)", "spark": "(isnan(t) OR abs(t) > 1e13)"},
}


def render(sql: str, dialect: Dialect, **values: object) -> str:
    """`sql` with the dialect's spellings and the given values filled in (`{name}` placeholders)."""
    words = {name: spelled[dialect] for name, spelled in SPELLINGS.items()}
    return sql.format(**words, **values)


def number(value: float) -> str:
    """A float as a SQL literal both engines read exactly (a DOUBLE, never a DECIMAL)."""
    text = repr(float(value))
    return f"CAST('{text}' AS DOUBLE)"


def literal(text: str, dialect: Dialect) -> str:
    """A string literal of `dialect`, ready to pass through `render` once (its braces doubled).

    DuckDB doubles a quote; Spark SQL escapes quotes and backslashes with a backslash."""
    spark = dialect == "spark"
    body = text.replace("\\", "\\\\").replace("'", "\\'") if spark else text.replace("'", "''")
    return "'" + body.replace("{", "{{").replace("}", "}}") + "'"

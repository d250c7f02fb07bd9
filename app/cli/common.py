"""What every subcommand of `stormbound` shares: exit codes, the usage error, the parser and the result
documents (public in app.cli). The other shared helpers have a module each: options.py (argument types and
options), inputs.py (reading a topology or a run's log), outputs.py (the one way a command writes a file),
spark_jobs.py (a Spark host for one command), engine.py (the engine that reads a run's log) and console.py
(logging and the status line)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, NoReturn

from app.core.errors import BadInput

# The exit codes of every subcommand (README.md, "Exit codes"): a pipeline can tell them apart.
EXIT_OK = 0
EXIT_FOUND = 1  # a finding: a counterexample, violations, a difference, or what a --fail-on option asked about
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3
EXIT_UNKNOWN = 4  # verify: no answer within the limits (time limit, solver gave up)

RESULT_FORMAT = "stormbound-result/1"  # the `format` of every --json document (docs/formats.md)


class UsageError(BadInput):
    """Bad arguments or input that is not a topology problem; exit code 2. `field` names the
    option or field at fault, `file` the input, when the message is about one."""

    def __init__(self, message: str, field: str | None = None, file: str | None = None):
        super().__init__(message)
        self.field = field
        self.file = file


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, except that an epilog of examples keeps its line breaks."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("example:"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


class Parser(argparse.ArgumentParser):
    """argparse that raises UsageError instead of exiting; its --help keeps the examples' line breaks."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:  # raises instead of exiting with argparse's own code
        raise UsageError(message)


def examples(*lines: str) -> str:
    """An `epilog` for a subcommand's --help: one or more example command lines."""
    return "example:\n" + "\n".join(f"  {line}" for line in lines)


def print_json(data: Any) -> None:
    """`data` as indented JSON on stdout."""
    sys.stdout.write(json.dumps(data, indent=2) + "\n")


def result_document(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """`data` as a --json result: `format` and `kind` first, then the subcommand's own keys."""
    return {"format": RESULT_FORMAT, "kind": kind, **data}


def print_result(kind: str, data: dict[str, Any]) -> None:
    """A subcommand's --json outcome: one JSON document on stdout (values JSON lacks, e.g. a date, as text)."""
    sys.stdout.write(json.dumps(result_document(kind, data), indent=2, default=str) + "\n")


def error_document(file: str | None, field: str | None, message: str, *,
                   problems: list[dict[str, str | None]] | None = None,
                   exit_code: int = EXIT_BAD_INPUT) -> dict[str, Any]:
    """The --json document of a failed command: the first problem as `error`, every one under `problems`."""
    error = {"file": file, "field": field or None, "message": message}
    return result_document("error", {"error": error, "problems": problems or [error], "exit_code": exit_code})


def table(rows: list[list[str]]) -> str:
    """Rows as left-aligned text columns (the first row is the header); every cell on one printable
    line (a name's control characters and direction overrides escaped)."""
    from app.core.topology import one_line

    rows = [[one_line(cell) for cell in row] for row in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows)

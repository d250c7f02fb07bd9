"""Reading a JSON file of any of our formats, every failure as one FormatError naming the problem."""

from __future__ import annotations

import json
import os
from typing import Any

from app.core.topology import Problem, TopologyError


class FormatError(TopologyError):
    """The file could not be read as any supported format."""


def read_json(path: str | os.PathLike[str]) -> Any:
    """Decode a JSON file, turning every failure into a one-line FormatError."""
    from app.core.fileio import read_text

    text = read_text(path, lambda reason: FormatError([Problem("file", reason)]))
    if not text.strip():
        raise FormatError([Problem("file", "is empty")])
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        where = f"at line {err.lineno} column {err.colno}"
        raise FormatError([Problem("file", f"not valid JSON: {err.msg} {where}")]) from None

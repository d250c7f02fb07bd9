"""Reading a JSON file of any of our formats, every failure as one FormatError naming the problem."""

from __future__ import annotations

import os
from typing import Any

from app.core.formats.limits import MAX_DOCUMENT_BYTES, FormatError, load_json_text
from app.core.topology import Problem

__all__ = ["FormatError", "read_json"]


def read_json(path: str | os.PathLike[str]) -> Any:
    """Decode a JSON document file within the limits of docs/limits.md; every failure is one FormatError line."""
    from app.core.fileio import read_text

    text = read_text(path, lambda reason: FormatError([Problem("file", reason)]), MAX_DOCUMENT_BYTES)
    if not text.strip():
        raise FormatError([Problem("file", "is empty")])
    return load_json_text(text, "file")

"""Reading a JSON file of any of our formats, every failure as one FormatError naming the problem."""

from __future__ import annotations

import os
import re
from typing import Any

from app.core.formats.limits import MAX_DOCUMENT_BYTES, FormatError, decode_lazily, load_json_text
from app.core.topology import Problem

__all__ = ["FormatError", "read_json"]


def read_json(path: str | os.PathLike[str], lazy: str | None = None) -> Any:
    """Decode a JSON document file within the limits of docs/limits.md; every failure is one FormatError line.
    `lazy`: a top-level key whose array is left in the text, decoded item by item (limits.decode_lazily)."""
    from app.core.fileio import read_text

    text = read_text(path, lambda reason: FormatError([Problem("file", reason)]), MAX_DOCUMENT_BYTES)
    if not text.strip():
        raise FormatError([Problem("file", "is empty")])
    try:
        return load_json_text(text, "file") if lazy is None else decode_lazily(text, lazy, "file")
    except FormatError:
        if looks_like_flux(text):
            stem = os.path.basename(os.fspath(path)).split(".")[0] or "topology"
            raise FormatError([Problem("file", f"is a Flux (YAML) file, not JSON: import it first with "
                                                f"`stormbound import flux {os.fspath(path)} -o {stem}.storm.json`")]
                              ) from None
        raise


_FLUX_KEY = re.compile(r"^(name|config|spouts|bolts|streams|includes|components|topologySource)\s*:", re.MULTILINE)


def looks_like_flux(text: str) -> bool:
    """Whether a text that is not JSON reads like a Flux YAML topology (a top-level Flux key on a line)."""
    return text.lstrip()[:1] not in ("{", "[") and len(set(_FLUX_KEY.findall(text))) >= 2

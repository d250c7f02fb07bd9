"""Atomic file writes for the core (the GUI uses QSaveFile)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def write_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write `data` to `path` so that readers see either the old or the whole new file.

    Serialise first, then write a temporary file in the same folder, fsync and rename.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def read_text(path: str | os.PathLike[str], error: Callable[[str], Exception]) -> str:
    """A UTF-8 text file; every failure becomes `error(one-line reason)` (no such file, folder, not UTF-8, ...)."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error("no such file") from None
    except IsADirectoryError:
        raise error("is a folder, not a file") from None
    except UnicodeDecodeError:
        raise error("is not UTF-8 text") from None
    except OSError as err:
        raise error(err.strerror or str(err)) from None

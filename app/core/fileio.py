"""Atomic file writes for the core (the GUI uses QSaveFile)."""

from __future__ import annotations

import contextlib
import os
import stat
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


def read_text(path: str | os.PathLike[str], error: Callable[[str], Exception], max_bytes: int | None = None) -> str:
    """A UTF-8 regular file; every failure becomes `error(one-line reason)`.

    Refused up front: no such file, a folder, a named pipe or device (reading one could
    block forever), a file over `max_bytes`; then bytes that are not UTF-8 (offset and line named).
    """
    data = read_bytes(path, error, max_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise error(f"is not UTF-8 text: byte 0x{data[err.start]:02x} at offset {err.start} (line {line})") from None


def check_regular(path: str | os.PathLike[str], error: Callable[[str], Exception]) -> os.stat_result:
    """The stat of `path` when it is a regular file, else `error(reason)` (missing, folder, pipe, device)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise error("no such file") from None
    except OSError as err:
        raise error(err.strerror or str(err)) from None
    if stat.S_ISDIR(st.st_mode):
        raise error("is a folder, not a file")
    if not stat.S_ISREG(st.st_mode):
        kind = "a named pipe" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "a device"
        raise error(f"is {kind}, not a regular file")
    return st


def read_bytes(path: str | os.PathLike[str], error: Callable[[str], Exception], max_bytes: int | None = None) -> bytes:
    """The bytes of a regular file of at most `max_bytes`; every failure becomes `error(one-line reason)`."""
    st = check_regular(path, error)
    if max_bytes is not None and st.st_size > max_bytes:
        raise error(f"is {st.st_size} bytes, over the limit of {max_bytes} bytes")
    try:
        with open(path, "rb") as fh:
            data = fh.read() if max_bytes is None else fh.read(max_bytes + 1)
    except FileNotFoundError:
        raise error("no such file") from None
    except IsADirectoryError:
        raise error("is a folder, not a file") from None
    except OSError as err:
        raise error(err.strerror or str(err)) from None
    if max_bytes is not None and len(data) > max_bytes:
        raise error(f"is over the limit of {max_bytes} bytes")
    return data

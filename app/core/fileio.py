"""The one way to write a file (every command and the GUI's save), and the checked readers.

`write_output` refuses an output that is one of the command's inputs (same device and inode,
through links too), a folder, a pipe, a device or anything else that is not a regular file
or a new path, and an existing file unless the caller was told to replace it (`--force`);
then `write_atomic` writes a temporary file beside the target, keeps the target's mode and
renames it over the target, so a reader sees the old file or the whole new one.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from app.core.errors import BadInput
from app.core.topology import one_line


def _umask() -> int:
    mask = os.umask(0o22)
    os.umask(mask)
    return mask


def write_atomic(path: str | os.PathLike[str], data: bytes | Iterable[bytes]) -> None:
    """Write `data` to `path` so that readers see either the old or the whole new file.

    Serialise first, then write a temporary file in the same folder, fsync and rename. A link
    is followed (its target is replaced, the link kept); the target keeps its mode, a new file
    gets the mode any new file gets (0666 less the umask).
    """
    target = Path(os.path.realpath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            if isinstance(data, bytes):
                fh.write(data)
            else:  # chunks, written as they come (a large output is never whole in memory)
                for chunk in data:
                    fh.write(chunk)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)  # mkstemp's file is private (0600): the target's own mode, or a new file's
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def read_text(path: str | os.PathLike[str], error: Callable[[str], Exception], max_bytes: int | None = None) -> str:
    """A UTF-8 regular file; every failure becomes `error(one-line reason)`.

    Refused up front: no such file, a folder, a named pipe or device (reading one could
    block forever), a file over `max_bytes`; then bytes that are not UTF-8 (offset and line named).
    A gzip file (its magic bytes) is read decompressed, within the same `max_bytes` once decompressed.
    """
    data = read_bytes(path, error, max_bytes)
    if data[:2] == b"\x1f\x8b":
        data = _gunzipped(data, error, max_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise error(f"is not UTF-8 text: byte 0x{data[err.start]:02x} at offset {err.start} (line {line})") from None


def _gunzipped(data: bytes, error: Callable[[str], Exception], max_bytes: int | None) -> bytes:
    """A gzip file's content, every member of it in turn (gzip allows several, as `cat a.gz b.gz` makes, and
    `gunzip` reads them all), refused past `max_bytes` before it is all in memory (a gzip bomb)."""
    import zlib

    limit = max_bytes if max_bytes is not None else 2**62
    parts: list[bytes] = []
    size, rest = 0, data
    while True:
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            out = inflate.decompress(rest, limit - size + 1)
        except zlib.error as err:
            raise error(f"is a damaged gzip file ({err})") from None
        size += len(out)
        if size > limit:
            raise error(f"is over the limit of {limit} bytes once decompressed")
        if not inflate.eof:
            raise error("is a gzip file cut short")
        parts.append(out)
        rest = inflate.unused_data
        if not rest.strip(b"\0"):  # the end, or the zero padding some tools add
            return b"".join(parts)
        if rest[:2] != b"\x1f\x8b":
            raise error(f"is a gzip file followed by {len(rest)} bytes that are not gzip")


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
    with open_checked(path, error) as fh:
        try:
            if max_bytes is None:
                data = fh.read()
            else:  # a buffer the file's size, not the limit's (read(n) allocates n bytes first: 64 MB a document)
                data = fh.read(min(max_bytes, st.st_size) + 1)
                if st.st_size < len(data) <= max_bytes:  # it grew since it was looked at: the rest, to the limit
                    data += fh.read(max_bytes + 1 - len(data))
        except OSError as err:
            raise error(err.strerror or str(err)) from None
    if max_bytes is not None and len(data) > max_bytes:
        raise error(f"is over the limit of {max_bytes} bytes")
    return data



# ---- the one boundary every reader of a file or a folder goes through (docs/limits.md) --------------
#
# A reader never calls open(), Path.read_text/read_bytes, gzip.open or os.scandir itself: it calls
# read_bytes / read_text (a whole file, its size checked before reading), iter_lines (a stream, a chunk
# at a time, with line, line-count and byte limits), csv_rows (a CSV table from those lines) or
# files_below (a folder's files, counted). Each refuses what is not a regular file (a named pipe would
# block for ever, /dev/zero never ends, a folder cannot be read) before opening it, and every failure
# is `error(one-line reason)`. tests/unit/test_read_boundary.py fails when a module reads otherwise.

#: the most entries files_below walks in a folder (a metrics folder, a worker-artifacts folder)
MAX_FOLDER_ENTRIES = 100_000


@contextlib.contextmanager
def open_checked(path: str | os.PathLike[str], error: Callable[[str], Exception]) -> Iterator[BinaryIO]:
    """A regular file opened for reading in binary (without blocking: one swapped for a pipe since the
    check is refused, not waited on); a failure to open it is `error(reason)`."""
    check_regular(path, error)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise error("no such file") from None
    except IsADirectoryError:
        raise error("is a folder, not a file") from None
    except OSError as err:
        raise error(err.strerror or str(err)) from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise error("is not a regular file")
        yield fh


def iter_lines(path: str | os.PathLike[str], error: Callable[[str], Exception], *, max_line_bytes: int,
               max_bytes: int | None = None, max_lines: int | None = None, gunzip: bool | None = None,
               skip_blank: bool = True, at_line: Callable[[int, str], Exception] | None = None,
               ) -> Iterator[tuple[int, str]]:
    """(line number, text with its newline) of a UTF-8 regular file, read a megabyte at a time, so that
    memory stays at one line: a line over `max_line_bytes`, more than `max_bytes` bytes (once
    decompressed) or `max_lines` lines is refused as soon as it is met, not after reading it all.

    A gzip file is decompressed (every member) when `gunzip`, or, with None, when it starts with gzip's
    magic bytes. Blank lines are counted and skipped unless not `skip_blank` (a CSV cell may hold one).
    A problem of one line is `at_line(number, reason)` (default `error("line N: reason")`).
    """
    import gzip
    import zlib

    def line_error(number: int, reason: str) -> Exception:
        return at_line(number, reason) if at_line is not None else error(f"line {number}: {reason}")

    number = total = counted = 0  # counted: the lines split (whole blank megabytes are only counted in number)
    with open_checked(path, error) as raw:
        try:
            if gunzip is None:
                gunzip = raw.read(2) == b"\x1f\x8b"
                raw.seek(0)
            with (gzip.GzipFile(fileobj=raw) if gunzip else contextlib.nullcontext(raw)) as fh:
                rest = b""
                while True:
                    chunk = fh.read(1 << 20)
                    total += len(chunk)
                    if max_bytes is not None and total > max_bytes:
                        raise error(f"{'decompresses to' if gunzip else 'is'} over {max_bytes} bytes (the limit "
                                    "of this file; docs/limits.md)")
                    data = rest + chunk
                    if chunk and skip_blank and not data.strip():  # blank: counted, not split (a gzip of newlines)
                        number += data.count(b"\n")
                        rest = data[data.rfind(b"\n") + 1:]
                        continue
                    pieces = data.split(b"\n")
                    rest = pieces.pop()
                    if len(rest) > max_line_bytes:
                        raise line_error(number + len(pieces) + 1, f"is over {max_line_bytes} bytes (the limit of "
                                                                   "one line; docs/limits.md)")
                    last = len(pieces)  # the piece after the last newline: no newline of its own
                    if not chunk:
                        pieces.append(rest)
                    for index, piece in enumerate(pieces):
                        number += 1
                        counted += 1
                        if max_lines is not None and counted > max_lines:
                            raise error(f"has over {max_lines} lines (the limit of this file; docs/limits.md)")
                        if skip_blank and not piece.strip():
                            continue
                        try:
                            text = piece.decode("utf-8")
                        except UnicodeDecodeError as err:
                            raise line_error(number, f"is not UTF-8 text: byte 0x{piece[err.start]:02x} at column "
                                                     f"{err.start + 1}") from None
                        yield number, text if index == last else text + "\n"
                    if not chunk:
                        return
        except (OSError, EOFError, zlib.error) as err:
            if gunzip:
                raise error(f"not a readable gzip file: {one_line(str(err))[:120]}") from None
            raise error(one_line(getattr(err, "strerror", None) or str(err))[:120]) from None


def csv_rows(lines: Iterable[str], error: Callable[[str], Exception], *, delimiter: str = ",",
             at_line: Callable[[int, str], Exception] | None = None) -> Iterator[Any]:
    """First the header's column names, then (line number, {column: cell}) of each row, from CSV `lines`
    (iter_lines with skip_blank=False, or a text's lines). Refused, one line each: a column named twice
    (csv would keep the last silently), a row with more cells than the header, a cell over csv's field
    limit (131,072 characters)."""
    import csv

    def line_error(number: int, reason: str) -> Exception:
        return at_line(number, reason) if at_line is not None else error(f"line {number}: {reason}")

    reader = csv.reader(lines, delimiter=delimiter)
    try:
        header = next(reader, [])
        seen: set[str] = set()
        for name in header:
            if name in seen:
                raise line_error(reader.line_num, f"the column {_echo(name)} is named twice (each column once)")
            seen.add(name)
        yield header
        for row in reader:
            if not row:
                continue
            if len(row) > len(header):
                raise line_error(reader.line_num, f"{len(row)} cells, the header names {len(header)}")
            yield reader.line_num, dict(zip(header, row, strict=False))
    except csv.Error as err:
        why = (f"a cell is over {csv.field_size_limit()} characters (the CSV field limit)" if "field limit" in str(err)
               else f"not valid CSV: {one_line(str(err))[:120]}")
        raise line_error(max(reader.line_num, 1), why) from None


def _echo(text: str) -> str:
    cut = one_line(repr(text))
    return cut if len(cut) <= 60 else cut[:60] + "…"


def files_below(root: str | os.PathLike[str], error: Callable[[str], Exception],
                max_entries: int = MAX_FOLDER_ENTRIES) -> list[Path]:
    """Every entry below folder `root` that is not a folder, sorted (links to folders are not followed, so
    a loop ends; a named pipe or device is listed, and refused by name when read); more than `max_entries`
    entries is `error(reason)`."""
    found: list[Path] = []
    seen = 0
    for folder, dirs, files in os.walk(root, onerror=lambda err: None):
        seen += len(dirs) + len(files)
        if seen > max_entries:
            raise error(f"holds over {max_entries} files and folders (the limit of one folder; docs/limits.md)")
        found.extend(Path(folder) / name for name in files)
        found.extend(Path(folder) / d for d in dirs if os.path.islink(os.path.join(folder, d)))
    return sorted(found)


# ---- the one way to write an output ------------------------------------------------------


class OutputRefused(BadInput, ValueError):
    """An output path that must not or cannot be written; the message is one line naming why."""


def _kind(st: os.stat_result) -> str:
    if stat.S_ISDIR(st.st_mode):
        return "a folder"
    if stat.S_ISFIFO(st.st_mode):
        return "a named pipe"
    if stat.S_ISSOCK(st.st_mode):
        return "a socket"
    if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
        return "a device"
    return "not a regular file"


def input_ids(inputs: Iterable[str | os.PathLike[str]]) -> dict[tuple[int, int], str]:
    """(device, inode) -> name of every input that exists; a folder stands for itself and the files in it
    (a run folder's log and topology)."""
    found: dict[tuple[int, int], str] = {}
    for item in inputs:
        try:
            st = os.stat(item)
        except (OSError, ValueError):
            continue
        found[(st.st_dev, st.st_ino)] = str(item)
        if stat.S_ISDIR(st.st_mode):
            with contextlib.suppress(OSError):
                for count, entry in enumerate(os.scandir(item)):
                    if count >= 10_000:
                        break
                    with contextlib.suppress(OSError):
                        inner = entry.stat()
                        found.setdefault((inner.st_dev, inner.st_ino), entry.path)
    return found


def check_output(path: str | os.PathLike[str], *, inputs: Iterable[str | os.PathLike[str]] = (),
                 force: bool = False) -> Path:
    """The file to write for output `path` (a link followed), or OutputRefused (one line) when it is an
    input, a folder, a pipe, a device, or an existing file and not `force`, or its folder is missing or
    cannot be written."""
    text = os.fspath(path)
    if not text:
        raise OutputRefused("an empty file name")
    target = Path(os.path.realpath(text))
    try:
        st: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as err:
        raise OutputRefused(f"cannot write: {err.strerror or err}") from None
    if st is not None:
        if not stat.S_ISREG(st.st_mode):
            if stat.S_ISDIR(st.st_mode):
                raise OutputRefused("is a folder, not a file: give a file name")
            raise OutputRefused(f"is {_kind(st)}, not a regular file: give a file name")
        same = input_ids(inputs).get((st.st_dev, st.st_ino))
        if same is not None:
            raise OutputRefused(f"is also an input of this command ({one_line(same)}): give another file")
        if not force:
            raise OutputRefused("exists: give --force to replace it")
        if not os.access(target, os.W_OK) or not st.st_mode & stat.S_IWUSR:
            # the rename would replace it all the same (the folder is writable): a read-only file says "keep me"
            raise OutputRefused("is read-only: make it writable (chmod u+w) to replace it")
    folder = target.parent
    if not folder.is_dir():
        above = folder
        while not above.exists() and above.parent != above:
            above = above.parent
        if above.exists() and not above.is_dir():
            raise OutputRefused(f"{one_line(str(above))} is a file, not a folder")
        raise OutputRefused(f"no such folder {one_line(str(folder))}")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputRefused(f"cannot write in the folder {one_line(str(folder))} (permission denied)")
    return target


def write_output(path: str | os.PathLike[str], data: bytes | Iterable[bytes], *,
                 inputs: Iterable[str | os.PathLike[str]] = (), force: bool = False) -> Path:
    """Check `path` (:func:`check_output`), then write `data` atomically; an OS failure (a read-only
    place, a full disk) is one OutputRefused line. Returns the file written."""
    target = check_output(path, inputs=inputs, force=force)
    try:
        write_atomic(target, data)
    except OSError as err:
        raise OutputRefused(f"cannot write: {err.strerror or err}") from None
    return target


# ---- one command at a time on a file it reads, changes and writes back ----------------------------------


class FileBusy(OutputRefused):
    """Another command holds the file (`locked`) for longer than the wait."""


@contextlib.contextmanager
def locked(path: str | os.PathLike[str], wait_s: float = 30.0) -> Iterator[None]:
    """An exclusive lock on the file at `path` around a read-change-write (`annotate`, `repair --in-place`):
    a second command waits for the first and then reads what it wrote, so no change is lost. The lock is
    on the file's inode; a file replaced while we waited is locked again (the writer renames a new one in)."""
    import fcntl
    import time

    deadline = time.monotonic() + wait_s
    while True:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise FileBusy(f"is being changed by another command (waited {wait_s:g} s)") from None
                    time.sleep(0.02)
            held, now = os.fstat(fd), os.stat(path)
            if (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino):
                yield
                return
        finally:
            os.close(fd)  # releases the lock

"""Streams to compare: the two sides, connecting them into one stream, and reading them from files.

A stream file is JSON Lines (one item per line), a JSON array (or an object with
an `items`/`events`/`output` array), or an event log of :mod:`app.measure.eventlog`
(CSV, Parquet, run folder, Storm metrics lines).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from app.core.fileio import open_checked
from app.core.formats.limits import JsonLimitError, on_one_line
from app.core.topology import TopologyError
from app.diff.specs import DiffError
from app.expr.limits import decoder, loads, one_line

LEFT = 0
RIGHT = 1
SIDE_NAMES = ("left", "right")


def side_index(side: int | str) -> int:
    """LEFT or RIGHT from 0/1, 'left'/'right' or 'L'/'R'."""
    if side in (0, "left", "L", "l"):
        return LEFT
    if side in (1, "right", "R", "r"):
        return RIGHT
    raise DiffError(f"side: {one_line(repr(side), 40)} is not left/right (L/R)")


def interleave(left: Iterable[Any], right: Iterable[Any], order: str = "alternate") -> Iterator[tuple[int, Any]]:
    """The connected stream of two sides: 'alternate' (L R L R ..., then the rest) or 'left-first'."""
    if order == "left-first":
        for item in left:
            yield LEFT, item
        for item in right:
            yield RIGHT, item
        return
    if order != "alternate":
        raise DiffError(f"order: {one_line(repr(order), 40)} is not 'alternate' or 'left-first'")
    left_it, right_it = iter(left), iter(right)
    for item in left_it:
        yield LEFT, item
        for other in right_it:
            yield RIGHT, other
            break
        else:
            for rest in left_it:
                yield LEFT, rest
            return
    for item in right_it:
        yield RIGHT, item


def from_pattern(left: Sequence[Any], right: Sequence[Any], pattern: str) -> Iterator[tuple[int, Any]]:
    """The connected stream given by a pattern of 'L'/'R' letters (as in the test vectors)."""
    next_item = [0, 0]
    sides = (left, right)
    for pos, letter in enumerate(pattern, 1):
        side = side_index(letter)
        if next_item[side] >= len(sides[side]):
            raise DiffError(f"interleaving: position {pos} asks for {SIDE_NAMES[side]} item "
                            f"{next_item[side] + 1} but that side has only {len(sides[side])}")
        yield side, sides[side][next_item[side]]
        next_item[side] += 1
    for s in (LEFT, RIGHT):
        if next_item[s] != len(sides[s]):
            raise DiffError(f"interleaving: uses {next_item[s]} of {len(sides[s])} {SIDE_NAMES[s]} items")


def read_stream(path: str | os.PathLike[str]) -> Iterator[Any]:
    """Items of one stream file: JSON Lines (one item per line), a JSON array (or an object with an
    `items`/`events`/`output` array), or an event log of :mod:`app.measure.eventlog` (CSV, Parquet, run folder).

    Every problem reading it is a one-line DiffError naming the file (and the line), raised as the
    items are read: JSON nested past json_depth, numbers Python cannot read, text that is not UTF-8."""
    p = Path(path)
    if not p.exists():
        raise DiffError(f"{p}: no such file or folder")
    if p.is_dir() or p.suffix.lower() in (".csv", ".parquet", ".log"):
        yield from _read_event_log(p)
        return
    try:
        yield from _read_json_stream(p)
    except UnicodeDecodeError as err:
        raise DiffError(f"{p}: is not UTF-8 text ({err.reason} at byte {err.start} of a chunk)") from None
    except OSError as err:
        raise DiffError(f"{p}: cannot be read: {one_line(err.strerror or str(err))}") from None


@contextlib.contextmanager
def _open(p: Path) -> Iterator[io.TextIOWrapper]:
    """The file as UTF-8 text through the read boundary (a pipe or a device refused before it is opened)."""
    with open_checked(p, lambda reason: DiffError(f"{p}: {reason}")) as raw, \
            io.TextIOWrapper(raw, encoding="utf-8") as text:
        yield text


def _read_json_stream(p: Path) -> Iterator[Any]:
    with _open(p) as handle:
        head = ""
        while True:
            ch = handle.read(1)
            if not ch or not ch.isspace():
                head = ch
                break
        handle.seek(0)
        if head in ("[", "{") and not looks_like_json_lines(p):
            try:
                data = loads(handle.read(), lambda problem: DiffError(f"{p}: {problem}"), strict_numbers=False)
            except json.JSONDecodeError as err:
                raise DiffError(f"{p}: invalid JSON at line {err.lineno} column {err.colno}: {err.msg}") from None
            if isinstance(data, dict):
                for name in ("items", "events", "output"):
                    if isinstance(data.get(name), list):
                        data = data[name]
                        break
                else:
                    raise DiffError(f"{p}: a JSON object needs an `items`, `events` or `output` array")
            if not isinstance(data, list):
                raise DiffError(f"{p}: expected a JSON array of items")
            yield from data
            return
        decode = decoder(strict_numbers=False)
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                item = decode(line)
            except JsonLimitError as err:
                raise DiffError(f"{p}: line {number}: {on_one_line(str(err))}") from None
            except json.JSONDecodeError as err:
                raise DiffError(f"{p}: line {number}: invalid JSON at column {err.colno}: {err.msg}") from None
            yield item


def looks_like_json_lines(p: Path) -> bool:
    """True for JSON Lines: by name, or when the first line is a complete JSON value and more follow."""
    if p.suffix.lower() in (".jsonl", ".ndjson"):
        return True
    if p.suffix.lower() == ".json":
        return False
    try:
        with _open(p) as handle:
            first = handle.readline()
            second = handle.readline()
    except UnicodeDecodeError:
        raise DiffError(f"{p}: is not UTF-8 text") from None
    except OSError as err:
        raise DiffError(f"{p}: cannot be read: {one_line(err.strerror or str(err))}") from None
    if not second.strip():
        return False
    try:
        json.loads(first)
    except (ValueError, RecursionError):  # not a complete JSON value on its own: not JSON Lines
        return False
    return True


def _read_event_log(p: Path) -> Iterator[Any]:
    from app.measure import eventlog  # only when a stream is an event log

    try:
        log = eventlog.read_log(p)
    except (TopologyError, DiffError):
        raise
    except Exception as err:  # a reader's own failure (Arrow, OS): one line naming the file
        raise DiffError(f"{p}: cannot be read as an event log: {type(err).__name__}: "
                        f"{one_line(str(err), 200)}") from None
    if not log.events:
        raise DiffError(f"{p}: no events in this log (only queue or metric samples); nothing to compare")
    for event in log.events:  # the reader sorts events by time
        yield event.model_dump(exclude_none=True)


def read_connected(path: str | os.PathLike[str]) -> Iterator[tuple[int, Any]]:
    """A connected stream file: items `{"side": "left"|"right"|"L"|"R", "item": ...}` (JSON Lines or array)."""
    for number, record in enumerate(read_stream(path), 1):
        if not isinstance(record, dict) or "side" not in record or "item" not in record:
            raise DiffError(f"{path}: record {number}: expected an object with `side` and `item`")
        try:
            side = side_index(record["side"])
        except DiffError:
            raise DiffError(f"{path}: record {number}.side: {one_line(repr(record['side']), 40)} "
                            "is not left/right (L/R)") from None
        yield side, record["item"]

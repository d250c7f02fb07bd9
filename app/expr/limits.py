"""Named limits of the expression and pattern languages and of stream/spec JSON (docs/limits.md).

Every limit has a name, a default and a message that names it. A user who needs
more sets `STORMBOUND_LIMITS="name=value,name=value"` in the environment or
passes `--limit name=value` to `stormbound diff` / `stormbound cep` (which call
:func:`set_limits`). Also here: JSON decoding that refuses deep nesting and huge
numbers with one clear line through the one bounded decoder of app/core/formats/limits.py,
and the one-line rendering of user text in messages.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from types import FrameType
from typing import Any

from app.core.errors import BadInput
from app.core.formats.limits import MAX_INT_DIGITS, JsonLimitError, decode_json, escape

ENV = "STORMBOUND_LIMITS"


@dataclass(frozen=True)
class Limit:
    """One limit: its `name`, `default`, the largest value it may be set to, and what it counts."""

    name: str
    default: int
    maximum: int
    what: str


_PY_DIGITS = MAX_INT_DIGITS  # Python's own limit on int <-> str conversion (sys.get_int_max_str_digits)

LIMITS: dict[str, Limit] = {lim.name: lim for lim in (
    Limit("expr_depth", 64, 100, "nesting of an expression: parentheses, brackets, not, signs, calls, "
                                 "field accesses"),
    Limit("expr_length", 1_000_000, 100_000_000, "characters of one expression or pattern text"),
    Limit("number_digits", 1000, _PY_DIGITS, "digits of an integer in an expression, a pattern or a JSON item"),
    Limit("json_depth", 100, 400, "nesting of a JSON value (stream item, spec, pattern file)"),
    Limit("pattern_depth", 64, 100, "nesting of a pattern: parentheses, NOT, repetitions, within"),
    Limit("pattern_size", 10_000, 1_000_000, "event types and operators in one pattern"),
    Limit("repeat_count", 10_000, 10_000_000, "n of a repetition a{n} or {\"op\": \"times\", \"n\": n}"),
    Limit("automaton_size", 10_000, 10_000_000, "transitions of a compiled pattern, counted before it is built "
                                                "(AND expands to every order, {n} unrolls)"),
)}

_overrides: dict[str, int] = {}
# settings shared with the file readers (docs/limits.md): the same JSON depth for every JSON input
_SHARED_ENV = {"json_depth": "STORMBOUND_MAX_JSON_DEPTH"}


class LimitSettingError(BadInput, ValueError):
    """A bad `--limit` or STORMBOUND_LIMITS entry."""


def parse_settings(text: str, where: str) -> dict[str, int]:
    """`name=value[,name=value...]` as a dict; LimitSettingError naming the bad entry."""
    out: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, eq, value = part.partition("=")
        name = name.strip()
        if name not in LIMITS:
            raise LimitSettingError(f"{where}: unknown limit {shown(name, 40)} (known: {', '.join(LIMITS)})")
        lim = LIMITS[name]
        if not eq or not (value.strip().isascii() and value.strip().isdigit()) or len(value.strip()) > 12:
            raise LimitSettingError(f"{where}: {name} needs a whole number, e.g. {name}={lim.default}")
        number = int(value.strip())
        if not 1 <= number <= lim.maximum:
            raise LimitSettingError(f"{where}: {name} must be between 1 and {lim.maximum:,}")
        out[name] = number
    return out


def set_limits(values: Mapping[str, int]) -> None:
    """Override limits for this process (what `--limit` does); an empty mapping restores the defaults."""
    _overrides.clear()
    _overrides.update(values)


def overrides() -> dict[str, int]:
    """The limits set for this process by :func:`set_limits` (to hand on to a Spark host or worker)."""
    return dict(_overrides)


def limit(name: str) -> int:
    """The value of limit `name`: `--limit`, then STORMBOUND_LIMITS, then (json_depth) the file readers'
    STORMBOUND_MAX_JSON_DEPTH, then the default."""
    if name in _overrides:
        return _overrides[name]
    env = os.environ.get(ENV)
    if env:
        try:
            from_env = parse_settings(env, ENV)
        except LimitSettingError:
            from_env = {}  # a bad setting is reported by the commands that read it (check_env)
        if name in from_env:
            return from_env[name]
    shared = _SHARED_ENV.get(name)
    value = os.environ.get(shared, "") if shared else ""
    if value.isascii() and value.isdigit() and 1 <= int(value) <= LIMITS[name].maximum:
        return int(value)
    return LIMITS[name].default


def check_env() -> None:
    """Raise LimitSettingError when STORMBOUND_LIMITS is malformed (commands call it once at start)."""
    env = os.environ.get(ENV)
    if env:
        parse_settings(env, ENV)


def exceeded(name: str, found: str) -> str:
    """The message for a limit that an input goes past: what, the limit's value and how to raise it."""
    value = limit(name)
    return (f"{found}, over the limit {name} = {value:,} (raise it with --limit {name}=N "
            f"or {ENV}={name}=N)")


@contextmanager
def stack_for(levels: int, frames_per_level: int) -> Iterator[None]:
    """Room on Python's stack for a recursive parser going `levels` deep (CPython 3.11 keeps
    Python-to-Python calls off the C stack, so a higher recursion limit costs nothing); restored after."""
    depth = 0
    frame: FrameType | None = sys._getframe()
    while frame is not None:
        depth += 1
        frame = frame.f_back
    need = depth + levels * frames_per_level + 200
    old = sys.getrecursionlimit()
    if need > old:
        sys.setrecursionlimit(need)
    try:
        yield
    finally:
        if need > old:
            sys.setrecursionlimit(old)


# ---- one-line text ------------------------------------------------------------


def one_line(text: str, width: int = 80) -> str:
    """`text` for a one-line message, as the file readers' messages show it (control characters and
    lone surrogates escaped repr-style), cut to `width` characters with '…'."""
    return escape(text, width if len(text) <= width else width - 1)


def path_line(path: str, width: int = 80) -> str:
    """A file's name for a one-line message, escaped like `one_line`; a name longer than `width` is cut at its
    start with '…', since its end names the file."""
    text = str(path)
    if len(text) <= width:
        return escape(text, width)
    return "…" + escape(text[len(text) - (width - 1):], width)


def shown(text: str, width: int = 60) -> str:
    """`text` quoted for a message (like repr, but one line and cut to `width`)."""
    return "'" + one_line(text, width).replace("'", "\\'") + "'"


# ---- JSON with limits -----------------------------------------------------------


def _raise_hint(name: str) -> str:
    return f"--limit {name}=N or {ENV}={name}=N"


def decoder(strict_numbers: bool = True) -> Callable[[str], Any]:
    """The one bounded JSON decoder (app/core/formats/limits.py) under the limits in force now:
    json_depth and, with `strict_numbers`, number_digits, no NaN/Infinity and no float overflow
    (stream items skip the number checks for speed: Python still refuses integers over 4,300
    digits). The function raises JsonLimitError (one line) past a limit and JSONDecodeError for
    text that is not JSON. Take it once per file: the limits are read here, not per item."""
    options: dict[str, Any] = {
        "max_depth": limit("json_depth"), "depth_hint": _raise_hint("json_depth"),
        "max_digits": limit("number_digits") if strict_numbers else MAX_INT_DIGITS,
        "digits_hint": _raise_hint("number_digits"), "check_numbers": strict_numbers}
    return partial(decode_json, **options)


def loads(text: str, error: Callable[[str], Exception], strict_numbers: bool = True) -> Any:
    """JSON `text` through :func:`decoder`; a limit is `error(one-line problem)`, and JSONDecodeError
    passes through so callers can name the line and column."""
    try:
        return decoder(strict_numbers)(text)
    except JsonLimitError as err:
        raise error(str(err)) from None


def int_digits_ok(text: str) -> bool:
    """Whether an integer literal is within number_digits (and Python's own conversion limit)."""
    digits = len(text.lstrip("+-"))
    return digits <= min(limit("number_digits"), sys.get_int_max_str_digits() or _PY_DIGITS)

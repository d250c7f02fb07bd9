"""Input limits and the one safe JSON loader every reader uses (docs/limits.md lists them).

Python's `json` module recurses once per nesting level and turns `1e400` into `inf`
and `NaN` into a float; a hostile file would then crash a later step. Here the text
is checked before decoding (nesting depth, iteratively) and while decoding (numbers
finite, integers within the digit limit), and every failure is one FormatError line
naming where (`line L column C`) and which limit.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
from collections.abc import Iterator
from typing import Any

from app.core.errors import BadInput, InternalError
from app.core.topology import Problem, TopologyError, one_line


class FormatError(TopologyError):
    """The file could not be read as any supported format."""


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        return default
    return value if value > 0 else default


#: Deepest nesting of JSON arrays/objects accepted (setting: STORMBOUND_MAX_JSON_DEPTH).
MAX_DEPTH = _env_int("STORMBOUND_MAX_JSON_DEPTH", 100)
#: Most digits in a JSON integer (Python's own conversion limit; not configurable).
MAX_INT_DIGITS = 4300
#: Largest topology/D-VerT/trace/Flux document read, in bytes (setting: STORMBOUND_MAX_DOCUMENT_BYTES).
MAX_DOCUMENT_BYTES = _env_int("STORMBOUND_MAX_DOCUMENT_BYTES", 64 * 1024 * 1024)
#: Largest time bound `k` verify encodes (option `verify --max-k`, setting STORMBOUND_MAX_K).
MAX_K = _env_int("STORMBOUND_MAX_K", 10_000)
#: Longest value echoed back in a message (longer ones are cut with an ellipsis).
ECHO_CHARS = 60

_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')


def escape(text: str, limit: int = ECHO_CHARS) -> str:
    """`text` safe to print on one line: control characters escaped repr-style, cut to `limit` characters."""
    text = str(text)
    cut = len(text) > limit
    if cut:
        text = text[:limit]
    return one_line(text) + ("…" if cut else "")


def line_col(text: str, pos: int) -> str:
    """`line L column C` of character offset `pos` in `text` (1-based)."""
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return f"line {line} column {col}"


def _error(where: str, message: str) -> FormatError:
    return FormatError([Problem(where, message)])


_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


_CHUNK = 1 << 20  # characters split at a time (a whole 50 MB text split at its quotes made 600 MB of pieces)


def _brackets_outside_strings(text: str) -> bytes:
    """The brackets of JSON `text` that are not inside a string, in order: every other piece between quotes,
    a chunk of text at a time (whether a chunk starts inside a string is carried over), unless a quote may be
    escaped."""
    if "\\" in text:
        return _STRING.sub("", text).encode("utf-8", "surrogatepass").translate(None, _NOT_BRACKETS)
    found: list[bytes] = []
    inside = False
    for start in range(0, len(text), _CHUNK):
        pieces = text[start:start + _CHUNK].split('"')
        outside = "".join(pieces[1::2] if inside else pieces[0::2])
        found.append(outside.encode("utf-8", "surrogatepass").translate(None, _NOT_BRACKETS))
        inside ^= len(pieces) % 2 == 0  # an odd count of quotes in the chunk
    return b"".join(found)


def depth_overflow(text: str, limit: int | None = None) -> int | None:
    """Offset of the first bracket nested deeper than `limit` (MAX_DEPTH) in JSON `text`, else None.

    Iterative, so any depth is measured without recursion: text with fewer brackets than
    the limit passes at once; else strings are cut out and the brackets' running depth
    summed (all at C speed), and only a text over the limit is walked token by token to
    find where.
    """
    limit = MAX_DEPTH if limit is None else limit
    if text.count("[") + text.count("{") <= limit:
        return None
    brackets = _brackets_outside_strings(text)
    if not brackets or max(itertools.accumulate(map(_STEP.__getitem__, brackets))) <= limit:
        return None
    depth = 0
    for m in _TOKENS.finditer(text):
        ch = m.group()
        if ch in "[{":
            depth += 1
            if depth > limit:
                return m.start()
        elif ch in "]}":
            depth -= 1
    return None


def _path_text(path: list[Any]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return escape(out or "(top)", 120)


def _has_nonfinite(value: Any) -> bool:
    """Whether decoded JSON `value` holds a NaN or an infinite number (iteratively, any depth)."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, float) and not math.isfinite(node):
            return True
    return False


def nonfinite_path(value: Any) -> tuple[str, float] | None:
    """The path (`layout.S1.x`, `spouts[0].rate`) and value of the first NaN or infinite number in
    decoded JSON `value`, else None; iterative, so any depth is walked without recursion."""
    if not _has_nonfinite(value):  # the common case: a walk that builds no paths
        return None
    stack: list[tuple[Any, list[Any]]] = [(value, [])]
    while stack:
        node, path = stack.pop()
        if isinstance(node, float):
            if not math.isfinite(node):
                return _path_text(path), node
        elif isinstance(node, dict):
            stack.extend((v, [*path, k]) for k, v in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend((v, [*path, i]) for i, v in reversed(list(enumerate(node))))
    return None


class JsonLimitError(BadInput, ValueError):
    """A JSON text past one of the limits; the message is one line naming the limit and where."""


class _NotFinite(InternalError, ValueError):
    def __init__(self, literal: str):
        super().__init__(literal)
        self.literal = literal


def _refuse_constant(literal: str) -> float:
    raise _NotFinite(literal)


# one decoder for every call (json.loads with hooks builds a new one each time: a third of a log line's cost)
def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose keys are all different; a repeated key (JSON lets the last one win, silently)
    is a one-line JsonLimitError naming it."""
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise JsonLimitError(f"duplicate key {escape(repr(key))} in an object (each key may appear once)")
            seen.add(key)
    return found


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant, object_pairs_hook=_unique_keys)
_PLAIN = json.JSONDecoder()
# a literal that may overflow a float to inf: a digit, an exponent of three digits or more; or 309 digits
# (a cheap test that strings may also pass: it only decides whether the decoded value is walked)
_MAYBE_HUGE = re.compile(r"\d[eE]\+?\d{3}")
_LONG_DIGITS = re.compile(r"\d{309}")
#: how to raise the depth limit, as the file readers say it (diff and cep add their --limit option)
DEPTH_HINT = "STORMBOUND_MAX_JSON_DEPTH=N"


def _digit_run(text: str, more_than: int) -> re.Match[str] | None:
    """The first run of more than `more_than` digits that is not a fraction or an exponent."""
    return re.search(rf"(?<![\d.eE+-])-?\d{{{more_than + 1},}}(?![\d.eE])", text)


def decode_json(text: str, *, max_depth: int | None = None, depth_hint: str = DEPTH_HINT,
                max_digits: int = MAX_INT_DIGITS, digits_hint: str = "", check_numbers: bool = True) -> Any:
    """The one bounded JSON decoder: every reader of JSON text comes here (docs/limits.md).

    Refused with a one-line JsonLimitError: nesting deeper than `max_depth` (MAX_DEPTH; measured
    before decoding, without recursion), integers of more than `max_digits` digits (the limit
    `number_digits` where `digits_hint` says how to raise it, else Python's own limit), and, with
    `check_numbers`, NaN/Infinity and numbers that overflow a float (`1e400`; the field is named).
    Without `check_numbers` (stream items, for speed) NaN is taken as Python's json takes it.
    Text that is not JSON raises json.JSONDecodeError, so each caller names line and column
    in its own words.
    """
    depth = MAX_DEPTH if max_depth is None else max_depth
    if text.count("[") + text.count("{") > depth:  # else it cannot nest deeper (a log line: no call)
        pos = depth_overflow(text, depth)
        if pos is not None:
            raise JsonLimitError(f"JSON nested deeper than {depth} levels at {line_col(text, pos)}, over the "
                                 f"limit json_depth = {depth} (raise it with {depth_hint})")
    if max_digits < MAX_INT_DIGITS and len(text) > max_digits:
        m = _digit_run(text, max_digits)
        if m is not None and _number_at(text, m.start()):
            raise _digits_error(text, m, max_digits, digits_hint)
    literal = ""
    try:
        data = (_DECODER if check_numbers else _PLAIN).decode(text)
    except _NotFinite as err:
        literal = err.literal
        try:
            data = json.loads(text, object_pairs_hook=_unique_keys)  # again, to name the field
        except (ValueError, RecursionError):  # something else is wrong too: the number is named alone
            data = None
    except (json.JSONDecodeError, JsonLimitError):
        raise
    except RecursionError:  # a deeper stack than the pre-check allows for (a raised limit)
        raise JsonLimitError(f"JSON nested too deeply to decode (lower json_depth: {depth_hint})") from None
    except ValueError as err:  # Python's integer digit limit
        m = _digit_run(text, MAX_INT_DIGITS)
        if "digits" not in str(err) or m is None:
            raise JsonLimitError(f"not valid JSON: {escape(str(err))}") from None
        raise _digits_error(text, m, MAX_INT_DIGITS, "") from None
    if not check_numbers:
        return data
    if not literal:
        if not _MAYBE_HUGE.search(text) and (len(text) < 309 or not _LONG_DIGITS.search(text)):
            return data
        found = nonfinite_path(data)
        if found is None:
            return data
        m = next((m for m in _NUMBER.finditer(text) if not math.isfinite(float(m.group()))), None)
        literal = m.group() if m else str(found[1])
    else:
        found = nonfinite_path(data) if data is not None else None
    at = _find_literal(text, literal)
    field = f"{found[0]}: " if found is not None else ""
    raise JsonLimitError(f"{field}number {escape(literal)}{at} is not finite (finite numbers only)")


def _number_at(text: str, pos: int) -> bool:
    """Whether a digit run starting at `pos` is a JSON number, not part of a string (a quote count)."""
    before = text[:pos]
    if "\\" in before:
        before = _STRING.sub("", before)
        return '"' not in before
    return before.count('"') % 2 == 0


def _digits_error(text: str, m: re.Match[str], most: int, hint: str) -> JsonLimitError:
    digits = len(m.group().lstrip("-"))
    where = f"an integer of {digits:,} digits at {line_col(text, m.start())}"
    if hint:
        return JsonLimitError(f"{where}, over the limit number_digits = {most:,} (raise it with {hint})")
    return JsonLimitError(f"{where} is too large (Python reads at most {MAX_INT_DIGITS:,} digits)")


def on_one_line(message: str) -> str:
    """A decoder message about a text that is one line of a file (a log line, a stream item): the
    position as `column C`, since the caller names the line."""
    return message.replace(" at line 1 column ", " at column ")


def load_json_text(text: str, where: str = "file") -> Any:
    """Decode JSON `text` as :func:`decode_json` does; every failure is one FormatError at `where`."""
    try:
        return decode_json(text)
    except json.JSONDecodeError as err:
        raise _error(where, f"not valid JSON: {err.msg} at line {err.lineno} column {err.colno}") from None
    except JsonLimitError as err:
        raise _error(where, str(err)) from None


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?[eE][+-]?\d+|-?\d{309,}(?:\.\d+)?")


def _find_literal(text: str, literal: str) -> str:
    m = re.search(r"(?<![\w.+-])" + re.escape(literal) + r"(?![\w.])", text)
    return f" at {line_col(text, m.start())}" if m else ""


def type_name(value: Any) -> str:
    """The JSON name of `value`'s type, for messages (`object`, `array`, `string`, ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "an array"
    return type(value).__name__


def decode_utf8(data: bytes, where: str = "file") -> str:
    """`data` as UTF-8 text, or a FormatError naming the byte offset and line of the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise _error(where, f"is not UTF-8 text: byte 0x{data[err.start]:02x} at offset {err.start} "
                            f"(line {line})") from None


# ---- a document whose one large array is decoded item by item ---------------------------------------------

_SPACE = re.compile(r"[ \t\n\r]*")


class LazyItems:
    """The items of a JSON array left in its document's text (`decode_lazily`): iterating decodes one item at a
    time with the one decoder (NaN, Infinity and repeated keys refused), `len` is their count. Every item was
    decoded once already, when the array was passed over, so iterating never fails."""

    def __init__(self, text: str, start: int, count: int):
        self.text, self.start, self.count = text, start, count

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[Any]:
        text = self.text
        pos = _space(text, self.start + 1)
        for _ in range(self.count):
            item, pos = _DECODER.raw_decode(text, pos)
            yield item
            pos = _space(text, _space(text, pos) + 1)  # past the ',' (or the closing ']')


def _space(text: str, pos: int) -> int:
    """The position of the first character from `pos` on that is not JSON white space."""
    m = _SPACE.match(text, pos)
    return m.end() if m else pos


def _decoded(text: str, pos: int, walk: bool) -> tuple[Any, int]:
    """The value at `pos` and the position after it; with `walk`, a number that overflowed a float is refused
    (the text has literals that may: `decode_json` walks its whole value then)."""
    value, pos = _DECODER.raw_decode(text, pos)
    if walk and nonfinite_path(value) is not None:
        raise ValueError("a number that is not finite")
    return value, pos


def _passed_array(text: str, pos: int, walk: bool) -> tuple[LazyItems, int]:
    """The array at `pos` as LazyItems (each item decoded and dropped on the way), and the position after it."""
    start, pos, count = pos, _space(text, pos + 1), 0
    if text[pos] == "]":
        return LazyItems(text, start, 0), pos + 1
    while True:
        _, pos = _decoded(text, pos, walk)
        count += 1
        pos = _space(text, pos)
        if text[pos] == "]":
            return LazyItems(text, start, count), pos + 1
        if text[pos] != ",":
            raise ValueError("expected ',' or ']'")
        pos = _space(text, pos + 1)


def _lazy_object(text: str, key: str, walk: bool) -> Any:
    pos = _space(text, 0)
    if text[pos:pos + 1] != "{":
        raise ValueError("not an object")  # decoded whole
    pairs: list[tuple[str, Any]] = []
    pos = _space(text, pos + 1)
    while text[pos] != "}":
        if text[pos] != '"':
            raise ValueError("expected a key")
        name, pos = json.decoder.scanstring(text, pos + 1)  # type: ignore[attr-defined]
        pos = _space(text, pos)
        if text[pos] != ":":
            raise ValueError("expected ':'")
        pos = _space(text, pos + 1)
        value, pos = _passed_array(text, pos, walk) if name == key and text[pos] == "[" else \
            _decoded(text, pos, walk)
        pairs.append((name, value))
        pos = _space(text, pos)
        if text[pos] == ",":
            pos = _space(text, pos + 1)
            if text[pos] == "}":
                raise ValueError("a trailing ','")
        elif text[pos] != "}":
            raise ValueError("expected ',' or '}'")
    if _space(text, pos + 1) != len(text):
        raise ValueError("extra data")
    return _unique_keys(pairs)


def decode_lazily(text: str, key: str, where: str = "file") -> Any:
    """`load_json_text(text, where)`, except that when the document is an object, the array under its top-level
    `key` is left in the text as LazyItems: a long trace's positions then cost their text, not their decoded
    objects (4 kB a position). Whatever this cannot take so (not an object, nesting past the limit, a number that
    overflows a float, any failure) is decoded whole by `load_json_text`, so every refusal is its one line, word
    for word, and every value the same."""
    if text.count("[") + text.count("{") > MAX_DEPTH and depth_overflow(text, MAX_DEPTH) is not None:
        return load_json_text(text, where)
    walk = bool(_MAYBE_HUGE.search(text) or (len(text) >= 309 and _LONG_DIGITS.search(text)))
    try:
        return _lazy_object(text, key, walk)
    except (ValueError, IndexError, RecursionError):  # not JSON, NaN, a repeated key, Python's digit limit
        return load_json_text(text, where)

"""Values of stream items: dotted field paths, a hashable form of JSON values, short renderings."""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Callable
from typing import Any

from app.core.errors import InternalError


class MissingField(InternalError):
    """A field path that an item does not have; `path` names it."""

    def __init__(self, path: str):
        super().__init__(path)
        self.path = path


class NotAString(InternalError, ValueError):
    """set_of_split equality met a value that is not a string."""


def _index(part: str) -> str | int:
    """A path part: a list index when it is a short ASCII whole number, a field name otherwise."""
    digits = part.removeprefix("-")
    return int(part) if digits.isascii() and digits.isdigit() and len(digits) <= 18 else part


def field_getter(path: str) -> Callable[[Any], Any]:
    """A function reading a dotted field path (`a.b`, `pos.0`) of a JSON value; raises MissingField."""
    parts: list[str | int] = [_index(p) for p in path.split(".")]
    if len(parts) == 1 and isinstance(parts[0], str):
        name = parts[0]

        def get1(item: Any) -> Any:
            try:
                return item[name]
            except (KeyError, TypeError, IndexError):
                raise MissingField(path) from None
        return get1

    def get(item: Any) -> Any:
        value = item
        for part in parts:
            try:
                value = value[part] if not (isinstance(value, dict) and isinstance(part, int)) else value[str(part)]
            except (KeyError, TypeError, IndexError):
                raise MissingField(path) from None
        return value
    return get


def item_getter(name: str) -> Callable[[Any], Any]:
    """operator.itemgetter (C speed) for a top-level field; a missing field raises KeyError or TypeError."""
    return operator.itemgetter(name)


def freeze(value: Any) -> Any:
    """A hashable form of a JSON value with the same equality (lists -> tuples, objects -> frozen items)."""
    kind = type(value)
    if kind is dict:
        try:
            return (_DICT_TAG, frozenset(value.items()))
        except TypeError:  # a nested list or object
            return (_DICT_TAG, frozenset((k, freeze(v)) for k, v in value.items()))
    if kind is list or kind is tuple:
        return tuple(freeze(v) for v in value)
    return value


_DICT_TAG = "\0dict"  # with a frozenset beside it, no JSON value freezes to the same tuple


def short_json(item: Any, limit: int = 120) -> str:
    """`item` as one line of JSON, cut to `limit` characters (for reports)."""
    text = json.dumps(item, default=str, ensure_ascii=False)
    text = text if len(text) <= limit else text[:limit - 3] + "..."
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)  # printable on any terminal


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


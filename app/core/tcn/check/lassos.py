"""The lassos the checker room has certified itself within one verification, so that a certificate embedding one of
them again is not replayed a second time.

A spill's evidence (docs/boundedness.md, "Unbounded: a backlog replayed at once") may be a flood whose source grows
in a lasso: random #157 B0's spill carries B3's flood, whose evidence is B1's lasso of 2,688 positions, embedded as
JSON. Certifying that lasso again took 2 s at each check (the flood, the spill, each threshold run), past the end of
a 60 s verification. Within `remembering()` (one verification: `Search.run`, on its own thread, a context
variable), `certified(lasso, checked)` answers with the certifier's own earlier answer when the same lasso was
accepted before for the same checked bolts: the same object, or JSON whose canonical bytes (`content.canonical_json`)
have the same SHA-256 as the JSON of one accepted. Anything else is certified (`certify.py`) and, when accepted,
remembered.

Only this module writes the record, and only with `certify`'s answers: a builder may open a record, never fill it,
so the checkers stay independent of the builders. Outside a record (`stormbound check-certificate`, the tests) every
lasso is certified.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from app.core.formats.trace import CompressedTrace, Trace, trace_data
from app.core.tcn.check.certify import Certificate, certify
from app.core.tcn.check.content import canonical_json

__all__ = ["certified", "remembering"]


@dataclass
class _Accepted:
    """One lasso the certifier accepted for `checked`: the object it was given (kept alive, so that its id is not
    reused) and, once asked for, the digest of its JSON."""

    lasso: Any
    checked: tuple[str, ...]
    answer: Certificate
    digest: str | None = None


@dataclass
class _Record:
    accepted: list[_Accepted] = field(default_factory=list)


_RECORD: ContextVar[_Record | None] = ContextVar("stormbound_certified_lassos", default=None)


@contextmanager
def remembering() -> Iterator[None]:
    """Within this block, `certified` remembers the lassos the certifier accepts (one verification)."""
    token = _RECORD.set(_Record())
    try:
        yield
    finally:
        _RECORD.reset(token)


def _digest(lasso: Any) -> str:
    data = trace_data(lasso) if isinstance(lasso, Trace | CompressedTrace) else lasso
    return hashlib.sha256(canonical_json(data)).hexdigest()


def _earlier(record: _Record, lasso: Any, checked: tuple[str, ...]) -> Certificate | None:
    """The certifier's answer for this very lasso (the same object, or the same JSON), accepted before."""
    same = [a for a in record.accepted if a.checked == checked]
    for a in same:
        if a.lasso is lasso:
            return a.answer
    if not same or not isinstance(lasso, dict | Trace | CompressedTrace):
        return None
    digest = _digest(lasso)
    for a in same:
        if a.digest is None:
            a.digest = _digest(a.lasso)
        if a.digest == digest:
            return a.answer
    return None


def certified(lasso: Any, checked: list[str], cancelled: Callable[[], bool] | None = None) -> Certificate:
    """`certify(lasso, checked=checked)`, or, within `remembering()`, its own earlier answer for the same lasso."""
    record = _RECORD.get()
    key = tuple(checked)
    if record is not None and (known := _earlier(record, lasso, key)) is not None:
        return known
    answer = certify(lasso, checked=checked, cancelled=cancelled)
    if record is not None and answer.ok:
        record.accepted.append(_Accepted(lasso, key, answer))
    return answer

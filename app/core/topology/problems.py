"""What is wrong with a document: a :class:`Problem` names the element and field, a
:class:`TopologyError` carries every problem found; names are echoed on one printable line."""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.core.errors import BadInput


@dataclass(frozen=True)
class Problem:
    """One validation problem: `path` names the element and field (e.g. `bolts.B2.alpha`)."""

    path: str
    message: str

    def __str__(self) -> str:
        text = f"{self.path}: {self.message}" if self.path else self.message
        return one_line(text)


# control characters, line separators and bidirectional marks and overrides (which would make a
# printed name read as something else): escaped wherever a name or key is echoed
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def one_line(text: str) -> str:
    """`text` on one printable line: control characters and bidi overrides escaped repr-style, lone
    surrogates as \\udXXX."""
    text = _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def has_control(text: str) -> bool:
    """`text` holds a control character, a line separator or a bidirectional mark (what one_line escapes)."""
    return _CONTROL.search(text) is not None


class TopologyError(BadInput, ValueError):
    """Raised when a document is invalid; carries every problem found."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems))


class NotAnnotated(TopologyError):
    """The document still has placeholder values (an import found no rate, burst, α or σ)."""

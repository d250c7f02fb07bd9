"""Words written from figures, one way everywhere (the presentation room of the core).

- `listed`: a list of names that stays one line however long (the first few, then `more`: "and N more").
- `Words`: a sentence whose rates stay figures (`Figure`, `Exactly`) until it is written out, in the form the
  reader asks for: exact (`2.222 (exactly 20/9)`: the JSON results, the GUI) or as decimals only (`2.222`: the
  CLI's text).
  The core says what it found with figures; who shows it picks the form, nobody edits the prose afterwards.

The CLI, the GUI, the core's own messages and the checker room use it; it imports no builder (only the exact
numbers of `app/core/numbers.py`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

from app.core.numbers import exact_text


def more(hidden: int, what: str = "") -> str:
    """How many were left out of a list: "and 3 more", "and 3 more growing bolts"."""
    return f"and {hidden} more" + (f" {what}" if what else "")


def listed(names: Iterable[str], most: int = 5, sep: str = ", ") -> str:
    """At most `most` names joined by `sep`, then how many more ("a, b, c and 4 more")."""
    names = list(names)
    shown = sep.join(names[:most])
    return shown + (f" {more(len(names) - most)}" if len(names) > most else "")


@dataclass(frozen=True)
class Figure:
    """A figure of a sentence (a rate in tuples/s, an amount), written to four significant digits."""

    value: Fraction

    def text(self, exact: bool) -> str:
        return f"{float(self.value):.4g}"


@dataclass(frozen=True)
class Exactly:
    """The exact value of a figure, " (exactly 20/9)", written only when the reader wants exact figures (it
    stands right after its `Figure`, or after the unit the figure carries: "1.17 tuples/s or more (exactly ...)")."""

    value: Fraction

    def text(self, exact: bool) -> str:
        return f" (exactly {exact_text(self.value)})" if exact else ""


@dataclass(frozen=True)
class Words:
    """A sentence of text and figures (`Figure`, `Exactly`), written out exact or as decimals (`text`)."""

    parts: tuple[str | Figure | Exactly, ...] = ()

    @classmethod
    def of(cls, *parts: str | Figure | Exactly | Fraction | Words) -> Words:
        """The sentence of these parts in order (a Fraction is its `Figure` then its `Exactly`: "2.222 (exactly
        20/9)"; a `Words` is spliced in)."""
        flat: list[str | Figure | Exactly] = []
        for part in parts:
            if isinstance(part, Words):
                flat.extend(part.parts)
            elif isinstance(part, Fraction):
                flat += [Figure(part), Exactly(part)]
            else:
                flat.append(part)
        return cls(tuple(flat))

    @classmethod
    def joined(cls, sep: str, sentences: Iterable[Words]) -> Words:
        """The sentences one after the other, `sep` between them."""
        parts: list[str | Words] = []
        for i, sentence in enumerate(sentences):
            parts += [sep, sentence] if i else [sentence]
        return cls.of(*parts)

    def text(self, exact: bool = True) -> str:
        """The sentence: every figure with its exact value (`exact`), or as a decimal only."""
        return "".join(p if isinstance(p, str) else p.text(exact) for p in self.parts)

    def __str__(self) -> str:
        return self.text()

"""The tokenizer and parser core that every small language of the app builds on.

A language supplies its token rules and its error type; the core supplies the
loop that skips white space and tries the rules in order (:func:`tokenize`), and
the cursor a recursive-descent parser walks the tokens with (:class:`TokenStream`).
The expression language of :mod:`app.expr.parser` (DiffStream predicates) and the
pattern language of :mod:`app.cep.syntax` (CEP patterns and their guards) both
use it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Token:
    """One lexical token: its `kind` (named by the language), its `value`, 0-based `pos` and source `text`."""

    kind: str
    value: Any
    pos: int
    text: str


Rule = Callable[[str, int, Sequence[Token]], "tuple[Token, int] | None"]
"""A token rule: given the source, a position and the tokens so far, the token there and where it ends, or None."""


def tokenize(source: str, rules: Sequence[Rule], unexpected: Callable[[int], Exception], end: Token) -> list[Token]:
    """Split `source` with the first rule that matches at each position; `unexpected(pos)` when none does.

    White space between tokens is skipped; `end` is appended as the last token.
    """
    tokens: list[Token] = []
    i, n = 0, len(source)
    while i < n:
        if source[i].isspace():
            i += 1
            continue
        for rule in rules:
            found = rule(source, i, tokens)
            if found is not None:
                token, i = found
                tokens.append(token)
                break
        else:
            raise unexpected(i)
    tokens.append(end)
    return tokens


class TokenStream:
    """A cursor over tokens for a recursive-descent parser; the language says how errors read."""

    def __init__(self, tokens: list[Token]):
        self.tokens = tokens
        self.i = 0

    def peek(self, ahead: int = 0) -> Token:
        """The current token (or the one `ahead` of it; the end token when past the end)."""
        return self.tokens[min(self.i + ahead, len(self.tokens) - 1)]

    def take(self) -> Token:
        """The current token; moves past it."""
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def at(self, kinds: str | tuple[str, ...], *values: Any) -> bool:
        """Whether the current token has one of `kinds` (and, when given, one of `values`)."""
        tok = self.tokens[self.i]
        return tok.kind in ((kinds,) if isinstance(kinds, str) else kinds) and (not values or tok.value in values)

    def expect(self, kind: str, value: Any = None) -> Token:
        """Take the current token if it is of `kind` (and `value`); otherwise raise the language's error."""
        if self.at(kind, *(() if value is None else (value,))):
            return self.take()
        raise self.expected(self.peek(), kind, value)

    def expected(self, tok: Token, kind: str, value: Any) -> Exception:
        """The error for `tok` where a token of `kind` (and `value`) was needed."""
        raise NotImplementedError

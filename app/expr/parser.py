"""A small safe expression language over named items (by default `x` and `y`): tokens and parser.

Used for DiffStream dependence/equality predicates. The tokenizer and the
recursive-descent parser sit on the shared core of :mod:`app.expr.core` and build
an AST of :class:`ExprNode`; :mod:`app.expr.evaluate` turns it into closures.

Grammar (lowest precedence first)::

    expr       := or
    or         := and (("or" | "||") and)*
    and        := not (("and" | "&&") not)*
    not        := ("not" | "!") not | comparison
    comparison := sum (("==" | "!=" | "<" | "<=" | ">" | ">=" | "in" | "not in") sum)*
    sum        := product (("+" | "-") product)*
    product    := unary (("*" | "/" | "//" | "%") unary)*
    unary      := ("-" | "+") unary | postfix
    postfix    := primary ("." NAME | "[" expr "]")*
    primary    := NUMBER | STRING | true | false | null | NAME | FUNC "(" args ")"
                | "(" expr ")" | "[" [expr ("," expr)*] "]"

`x.kind` and `x['kind']` both read the field `kind` of a JSON object; `x[0]`
reads an element of a list. Comparisons chain as in Python (`0 < x.ts <= 9`).
Functions: `abs`, `len`, `min`, `max`. Python spellings (`True`, `None`) are
accepted beside JSON ones (`true`, `null`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from app.core.errors import BadInput
from app.expr.core import Token, TokenStream
from app.expr.core import tokenize as core_tokenize
from app.expr.limits import exceeded, int_digits_ok, limit, shown


class ExprError(BadInput, ValueError):
    """The text is not in the grammar; names the offending token and its 0-based position."""

    def __init__(self, message: str, position: int, source: str):
        self.position = position
        self.source = source
        self.detail = message
        super().__init__(f"position {position}: {message} in {shown(source)}")


# ---- tokens ----------------------------------------------------------------
# Kinds: NUM, STR, NAME, OP and END.

KEYWORDS = {"and", "or", "not", "in", "true", "false", "null", "True", "False", "None"}
_CONSTANTS = {"true": True, "True": True, "false": False, "False": False, "null": None, "None": None}
_OPERATORS = ("//", "==", "!=", "<=", ">=", "&&", "||", "<", ">", "+", "-", "*", "/", "%",
              "(", ")", "[", "]", ".", ",", "!")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "0": "\0"}
FUNCTIONS: dict[str, Callable[..., Any]] = {"abs": abs, "len": len, "min": min, "max": max}


_DIGITS = frozenset("0123456789")  # ASCII only: str.isdigit() also takes '¹', which int() refuses


def _number(source: str, i: int, tokens: Sequence[Token]) -> tuple[Token, int] | None:
    n, ch, start = len(source), source[i], i
    after_dot = bool(tokens) and tokens[-1].kind == "OP" and tokens[-1].value == "."
    after_value = bool(tokens) and (tokens[-1].kind == "NAME" or tokens[-1].value in (")", "]"))
    if not (ch in _DIGITS or (ch == "." and not after_value and not after_dot
                             and i + 1 < n and source[i + 1] in _DIGITS)):
        return None
    while i < n and source[i] in _DIGITS:
        i += 1
    is_float = False
    if after_dot:  # `x.pos.0`: a field index, never a float
        if not int_digits_ok(source[start:i]):
            raise ExprError(exceeded("number_digits", f"an index of {i - start:,} digits"), start, source)
        return Token("NUM", int(source[start:i]), start, source[start:i]), i
    if i < n and source[i] == "." and (i + 1 >= n or source[i + 1] in _DIGITS):
        is_float = True
        i += 1
        while i < n and source[i] in _DIGITS:
            i += 1
    if i < n and source[i] in "eE":
        j = i + 1
        if j < n and source[j] in "+-":
            j += 1
        if j < n and source[j] in _DIGITS:
            is_float = True
            i = j
            while i < n and source[i] in _DIGITS:
                i += 1
    text = source[start:i]
    if i < n and (source[i].isalpha() or source[i] == "_"):
        raise ExprError(f"malformed number {shown(source[start:i + 1], 30)}", start, source)
    if is_float:
        value: float | int = float(text)
        if value == float("inf"):
            raise ExprError(f"the number {shown(text, 30)} is too large (only finite numbers)", start, source)
    else:
        if not int_digits_ok(text):
            raise ExprError(exceeded("number_digits", f"a number of {len(text):,} digits"), start, source)
        value = int(text)
    return Token("NUM", value, start, text), i


def _name(source: str, i: int, tokens: Sequence[Token]) -> tuple[Token, int] | None:
    n, start = len(source), i
    if not (source[i].isalpha() or source[i] == "_"):
        return None
    while i < n and (source[i].isalnum() or source[i] == "_"):
        i += 1
    text = source[start:i]
    return Token("NAME", text, start, text), i


def _string(source: str, i: int, tokens: Sequence[Token]) -> tuple[Token, int] | None:
    n, quote, start = len(source), source[i], i
    if quote not in "'\"":
        return None
    i += 1
    chars: list[str] = []
    while True:
        if i >= n:
            raise ExprError("unterminated string", start, source)
        c = source[i]
        if c == quote:
            i += 1
            break
        if c == "\\":
            if i + 1 >= n or source[i + 1] not in _ESCAPES:
                raise ExprError(f"unknown escape {shown(source[i:i + 2])}", i, source)
            chars.append(_ESCAPES[source[i + 1]])
            i += 2
            continue
        chars.append(c)
        i += 1
    return Token("STR", "".join(chars), start, source[start:i]), i


def _operator(source: str, i: int, tokens: Sequence[Token]) -> tuple[Token, int] | None:
    for op in _OPERATORS:
        if source.startswith(op, i):
            return Token("OP", op, i, op), i + len(op)
    return None


def tokenize(source: str) -> list[Token]:
    """Split `source` into tokens; raise ExprError at the first character outside the grammar."""
    def unexpected(pos: int) -> ExprError:
        if source[pos] == "=":
            return ExprError("unexpected '=' (use '==' to compare)", pos, source)
        return ExprError(f"unexpected character {shown(source[pos])}", pos, source)

    return core_tokenize(source, (_number, _name, _string, _operator), unexpected,
                         Token("END", None, len(source), "end of expression"))


# ---- AST -------------------------------------------------------------------

@dataclass(frozen=True)
class ExprNode:
    """An AST node: `op` names the construct, `args` are children or literal values."""

    op: str
    args: tuple[Any, ...]
    pos: int


_COMPARE = ("==", "!=", "<", "<=", ">", ">=", "in", "not in")


class ExprParser(TokenStream):
    """Recursive descent over the grammar above, for the variable `names`."""

    def __init__(self, source: str, names: frozenset[str]):
        if len(source) > limit("expr_length"):
            raise ExprError(exceeded("expr_length", f"an expression of {len(source):,} characters"), 0, source)
        super().__init__(tokenize(source))
        self.source = source
        self.names = names
        self.depth = 0
        self.max_depth = limit("expr_depth")

    def enter(self, tok: Token) -> None:
        """One level deeper (a bracket, prefix operator, call or accessor); refused past expr_depth."""
        self.depth += 1
        if self.depth > self.max_depth:
            raise ExprError(exceeded("expr_depth", "expression nested too deeply"), tok.pos, self.source)

    def at_any(self, *values: str) -> bool:
        """Whether the current token is one of these operators or words."""
        return self.at(("OP", "NAME"), *values)

    def fail(self, tok: Token, expected: str) -> ExprError:
        what = f"unexpected {shown(tok.text, 30)}" if tok.kind != "END" else "unexpected end of expression"
        return ExprError(f"{what}, expected {expected}", tok.pos, self.source)

    def expected(self, tok: Token, kind: str, value: Any) -> ExprError:
        return self.fail(tok, f"{value!r}")

    def parse(self) -> ExprNode:
        if self.peek().kind == "END":
            raise ExprError("empty expression", 0, self.source)
        node = self.or_()
        tok = self.peek()
        if tok.kind != "END":
            raise self.fail(tok, "an operator or end of expression")
        return node

    def or_(self) -> ExprNode:
        parts = [self.and_()]
        pos = parts[0].pos
        while self.at_any("or", "||"):
            tok = self.take()
            pos = tok.pos if len(parts) == 1 else pos
            parts.append(self.and_())
        return parts[0] if len(parts) == 1 else ExprNode("or", tuple(parts), pos)  # a flat chain: no nesting

    def and_(self) -> ExprNode:
        parts = [self.not_()]
        pos = parts[0].pos
        while self.at_any("and", "&&"):
            tok = self.take()
            pos = tok.pos if len(parts) == 1 else pos
            parts.append(self.not_())
        return parts[0] if len(parts) == 1 else ExprNode("and", tuple(parts), pos)

    def not_(self) -> ExprNode:
        if self.at_any("not", "!"):
            tok = self.take()
            self.enter(tok)
            node = ExprNode("not", (self.not_(),), tok.pos)
            self.depth -= 1
            return node
        return self.comparison()

    def comparison(self) -> ExprNode:
        first = self.sum_()
        ops: list[str] = []
        operands = [first]
        pos = first.pos
        while True:
            tok = self.peek()
            if tok.kind == "OP" and tok.value in _COMPARE:
                self.take()
                ops.append(tok.value)
            elif tok.kind == "NAME" and tok.value == "in":
                self.take()
                ops.append("in")
            elif tok.kind == "NAME" and tok.value == "not" and self.peek(1).value == "in":
                self.i += 2
                ops.append("not in")
            else:
                break
            operands.append(self.sum_())
        if not ops:
            return first
        return ExprNode("compare", (tuple(ops), tuple(operands)), pos)

    def chain(self, ops: tuple[str, ...], operand: Callable[[], ExprNode]) -> ExprNode:
        """`a op b op c ...` left to right as one flat `arith` node (a long chain adds no nesting)."""
        first = operand()
        names: list[str] = []
        operands = [first]
        positions: list[int] = []
        while self.peek().kind == "OP" and self.peek().value in ops:
            tok = self.take()
            names.append(tok.value)
            positions.append(tok.pos)
            operands.append(operand())
        if not names:
            return first
        return ExprNode("arith", (tuple(names), tuple(operands), tuple(positions)), positions[0])

    def sum_(self) -> ExprNode:
        return self.chain(("+", "-"), self.product)

    def product(self) -> ExprNode:
        return self.chain(("*", "/", "//", "%"), self.unary)

    def unary(self) -> ExprNode:
        tok = self.peek()
        if tok.kind == "OP" and tok.value in ("-", "+"):
            self.take()
            self.enter(tok)
            node = ExprNode("neg" if tok.value == "-" else "pos", (self.unary(),), tok.pos)
            self.depth -= 1
            return node
        return self.postfix()

    def postfix(self) -> ExprNode:
        node = self.primary()
        entered = 0
        while True:
            tok = self.peek()
            if tok.kind == "OP" and tok.value in (".", "["):
                self.enter(tok)  # every accessor nests the node once more
                entered += 1
            if tok.kind == "OP" and tok.value == ".":
                self.take()
                name = self.peek()
                if name.kind == "NAME" or name.kind == "NUM" and isinstance(name.value, int):
                    self.take()
                    node = ExprNode("field", (node, name.value), name.pos)
                else:
                    raise self.fail(name, "a field name after '.'")
            elif tok.kind == "OP" and tok.value == "[":
                self.take()
                index = self.or_()
                self.expect("OP", "]")
                node = ExprNode("index", (node, index), tok.pos)
            else:
                self.depth -= entered
                return node

    def primary(self) -> ExprNode:
        tok = self.peek()
        if tok.kind in ("NUM", "STR"):
            self.take()
            return ExprNode("const", (tok.value,), tok.pos)
        if tok.kind == "NAME":
            if tok.value in _CONSTANTS:
                self.take()
                return ExprNode("const", (_CONSTANTS[tok.value],), tok.pos)
            if tok.value in KEYWORDS:
                raise self.fail(tok, "a value")
            if tok.value in FUNCTIONS and self.peek(1).value == "(":
                self.i += 2
                self.enter(tok)
                args: list[ExprNode] = []
                if not self.at_any(")"):
                    args.append(self.or_())
                    while self.at_any(","):
                        self.take()
                        args.append(self.or_())
                self.expect("OP", ")")
                self.depth -= 1
                return ExprNode("call", (tok.value, tuple(args)), tok.pos)
            if tok.value in self.names:
                self.take()
                return ExprNode("name", (tok.value,), tok.pos)
            allowed = ", ".join(sorted(self.names))
            raise ExprError(f"unknown name {shown(tok.value, 30)} (only {allowed} and literals are allowed)",
                            tok.pos, self.source)
        if tok.kind == "OP" and tok.value == "(":
            self.take()
            self.enter(tok)
            node = self.or_()
            self.expect("OP", ")")
            self.depth -= 1
            return node
        if tok.kind == "OP" and tok.value == "[":
            self.take()
            self.enter(tok)
            items: list[ExprNode] = []
            if not self.at_any("]"):
                items.append(self.or_())
                while self.at_any(","):
                    self.take()
                    items.append(self.or_())
            self.expect("OP", "]")
            self.depth -= 1
            return ExprNode("list", tuple(items), tok.pos)
        raise self.fail(tok, "a value (number, string, field of " + ", ".join(sorted(self.names)) + ")")

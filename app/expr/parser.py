"""A small safe expression language over named items (by default `x` and `y`).

Used for DiffStream dependence/equality predicates and CEP pattern guards. A
hand-written tokenizer and recursive-descent parser build an AST; the AST is
then turned into nested Python closures (never `eval`/`exec`, never `getattr`),
so an expression can only read fields of the items it is given.

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

import operator
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

__all__ = [
    "ExprError",
    "ExprEvalError",
    "Expr",
    "parse_expr",
    "compile_predicate",
]


class ExprError(ValueError):
    """The text is not in the grammar; names the offending token and its 0-based position."""

    def __init__(self, message: str, position: int, source: str):
        self.position = position
        self.source = source
        self.detail = message
        super().__init__(f"position {position}: {message} in {source!r}")


class ExprEvalError(ValueError):
    """Evaluation failed on concrete items (missing field, incomparable values, division by zero)."""


# ---- tokens ----------------------------------------------------------------

@dataclass(frozen=True)
class Token:
    """One lexical token: `kind` is NUM, STR, NAME, OP or END; `pos` is its 0-based offset."""

    kind: str
    value: Any
    pos: int
    text: str


_KEYWORDS = {"and", "or", "not", "in", "true", "false", "null", "True", "False", "None"}
_CONSTANTS = {"true": True, "True": True, "false": False, "False": False, "null": None, "None": None}
_OPERATORS = ("//", "==", "!=", "<=", ">=", "&&", "||", "<", ">", "+", "-", "*", "/", "%",
              "(", ")", "[", "]", ".", ",", "!")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "0": "\0"}
FUNCTIONS: dict[str, Callable[..., Any]] = {"abs": abs, "len": len, "min": min, "max": max}


def tokenize(source: str) -> list[Token]:
    """Split `source` into tokens; raise ExprError at the first character outside the grammar."""
    tokens: list[Token] = []
    i, n = 0, len(source)
    while i < n:
        ch = source[i]
        if ch.isspace():
            i += 1
            continue
        start = i
        after_dot = bool(tokens) and tokens[-1].kind == "OP" and tokens[-1].value == "."
        after_value = bool(tokens) and (tokens[-1].kind == "NAME" or tokens[-1].value in (")", "]"))
        if ch.isdigit() or (ch == "." and not after_value and not after_dot
                            and i + 1 < n and source[i + 1].isdigit()):
            while i < n and source[i].isdigit():
                i += 1
            is_float = False
            if after_dot:  # `x.pos.0`: a field index, never a float
                tokens.append(Token("NUM", int(source[start:i]), start, source[start:i]))
                continue
            if i < n and source[i] == "." and (i + 1 >= n or source[i + 1].isdigit()):
                is_float = True
                i += 1
                while i < n and source[i].isdigit():
                    i += 1
            if i < n and source[i] in "eE":
                j = i + 1
                if j < n and source[j] in "+-":
                    j += 1
                if j < n and source[j].isdigit():
                    is_float = True
                    i = j
                    while i < n and source[i].isdigit():
                        i += 1
            text = source[start:i]
            if i < n and (source[i].isalpha() or source[i] == "_"):
                raise ExprError(f"malformed number {source[start:i + 1]!r}", start, source)
            tokens.append(Token("NUM", float(text) if is_float else int(text), start, text))
            continue
        if ch.isalpha() or ch == "_":
            while i < n and (source[i].isalnum() or source[i] == "_"):
                i += 1
            text = source[start:i]
            tokens.append(Token("NAME", text, start, text))
            continue
        if ch in "'\"":
            quote = ch
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
                        raise ExprError(f"unknown escape {source[i:i + 2]!r}", i, source)
                    chars.append(_ESCAPES[source[i + 1]])
                    i += 2
                    continue
                chars.append(c)
                i += 1
            tokens.append(Token("STR", "".join(chars), start, source[start:i]))
            continue
        for op in _OPERATORS:
            if source.startswith(op, i):
                tokens.append(Token("OP", op, start, op))
                i += len(op)
                break
        else:
            if ch == "=":
                raise ExprError("unexpected '=' (use '==' to compare)", start, source)
            raise ExprError(f"unexpected character {ch!r}", start, source)
    tokens.append(Token("END", None, n, "end of expression"))
    return tokens


# ---- AST -------------------------------------------------------------------

@dataclass(frozen=True)
class Node:
    """An AST node: `op` names the construct, `args` are children or literal values."""

    op: str
    args: tuple[Any, ...]
    pos: int


_COMPARE = ("==", "!=", "<", "<=", ">", ">=", "in", "not in")


class _Parser:
    def __init__(self, source: str, names: frozenset[str]):
        self.source = source
        self.names = names
        self.tokens = tokenize(source)
        self.i = 0

    def peek(self) -> Token:
        return self.tokens[self.i]

    def advance(self) -> Token:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def at(self, *values: str) -> bool:
        tok = self.peek()
        return tok.kind in ("OP", "NAME") and tok.value in values

    def fail(self, tok: Token, expected: str) -> ExprError:
        shown = tok.text if tok.kind != "END" else "end of expression"
        what = f"unexpected {shown!r}" if tok.kind != "END" else "unexpected end of expression"
        return ExprError(f"{what}, expected {expected}", tok.pos, self.source)

    def expect(self, value: str) -> Token:
        tok = self.peek()
        if tok.kind == "OP" and tok.value == value:
            return self.advance()
        raise self.fail(tok, f"{value!r}")

    def parse(self) -> Node:
        if self.peek().kind == "END":
            raise ExprError("empty expression", 0, self.source)
        node = self.or_()
        tok = self.peek()
        if tok.kind != "END":
            raise self.fail(tok, "an operator or end of expression")
        return node

    def or_(self) -> Node:
        node = self.and_()
        while self.at("or", "||"):
            pos = self.advance().pos
            node = Node("or", (node, self.and_()), pos)
        return node

    def and_(self) -> Node:
        node = self.not_()
        while self.at("and", "&&"):
            pos = self.advance().pos
            node = Node("and", (node, self.not_()), pos)
        return node

    def not_(self) -> Node:
        if self.at("not", "!"):
            pos = self.advance().pos
            return Node("not", (self.not_(),), pos)
        return self.comparison()

    def comparison(self) -> Node:
        first = self.sum_()
        ops: list[str] = []
        operands = [first]
        pos = first.pos
        while True:
            tok = self.peek()
            if tok.kind == "OP" and tok.value in _COMPARE:
                self.advance()
                ops.append(tok.value)
            elif tok.kind == "NAME" and tok.value == "in":
                self.advance()
                ops.append("in")
            elif tok.kind == "NAME" and tok.value == "not" and self.tokens[self.i + 1].value == "in":
                self.i += 2
                ops.append("not in")
            else:
                break
            operands.append(self.sum_())
        if not ops:
            return first
        return Node("compare", (tuple(ops), tuple(operands)), pos)

    def sum_(self) -> Node:
        node = self.product()
        while self.peek().kind == "OP" and self.peek().value in ("+", "-"):
            tok = self.advance()
            node = Node(tok.value, (node, self.product()), tok.pos)
        return node

    def product(self) -> Node:
        node = self.unary()
        while self.peek().kind == "OP" and self.peek().value in ("*", "/", "//", "%"):
            tok = self.advance()
            node = Node(tok.value, (node, self.unary()), tok.pos)
        return node

    def unary(self) -> Node:
        tok = self.peek()
        if tok.kind == "OP" and tok.value in ("-", "+"):
            self.advance()
            return Node("neg" if tok.value == "-" else "pos", (self.unary(),), tok.pos)
        return self.postfix()

    def postfix(self) -> Node:
        node = self.primary()
        while True:
            tok = self.peek()
            if tok.kind == "OP" and tok.value == ".":
                self.advance()
                name = self.peek()
                if name.kind == "NAME":
                    self.advance()
                    node = Node("field", (node, name.value), name.pos)
                elif name.kind == "NUM" and isinstance(name.value, int):
                    self.advance()
                    node = Node("field", (node, name.value), name.pos)
                else:
                    raise self.fail(name, "a field name after '.'")
            elif tok.kind == "OP" and tok.value == "[":
                self.advance()
                index = self.or_()
                self.expect("]")
                node = Node("index", (node, index), tok.pos)
            else:
                return node

    def primary(self) -> Node:
        tok = self.peek()
        if tok.kind in ("NUM", "STR"):
            self.advance()
            return Node("const", (tok.value,), tok.pos)
        if tok.kind == "NAME":
            if tok.value in _CONSTANTS:
                self.advance()
                return Node("const", (_CONSTANTS[tok.value],), tok.pos)
            if tok.value in _KEYWORDS:
                raise self.fail(tok, "a value")
            if tok.value in FUNCTIONS and self.tokens[self.i + 1].value == "(":
                self.i += 2
                args: list[Node] = []
                if not self.at(")"):
                    args.append(self.or_())
                    while self.at(","):
                        self.advance()
                        args.append(self.or_())
                self.expect(")")
                return Node("call", (tok.value, tuple(args)), tok.pos)
            if tok.value in self.names:
                self.advance()
                return Node("name", (tok.value,), tok.pos)
            allowed = ", ".join(sorted(self.names))
            raise ExprError(f"unknown name {tok.value!r} (only {allowed} and literals are allowed)",
                            tok.pos, self.source)
        if tok.kind == "OP" and tok.value == "(":
            self.advance()
            node = self.or_()
            self.expect(")")
            return node
        if tok.kind == "OP" and tok.value == "[":
            self.advance()
            items: list[Node] = []
            if not self.at("]"):
                items.append(self.or_())
                while self.at(","):
                    self.advance()
                    items.append(self.or_())
            self.expect("]")
            return Node("list", tuple(items), tok.pos)
        raise self.fail(tok, "a value (number, string, field of " + ", ".join(sorted(self.names)) + ")")


# ---- evaluation: AST -> closures --------------------------------------------

Env = Sequence[Any]
Fn = Callable[[Env], Any]

_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod,
}
_COMPARATORS: dict[str, Callable[[Any, Any], Any]] = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
    ">": operator.gt, ">=": operator.ge,
    "in": lambda a, b: a in b, "not in": lambda a, b: a not in b,
}


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _get_field(value: Any, key: Any, where: str) -> Any:
    if isinstance(value, Mapping):
        if isinstance(key, (str, int)) and key in value:
            return value[key]
        if isinstance(key, int) and str(key) in value:
            return value[str(key)]
        raise ExprEvalError(f"{where}: no field {key!r} in {_describe(value)}")
    if isinstance(value, (list, tuple, str)):
        if isinstance(key, bool) or not isinstance(key, int):
            raise ExprEvalError(f"{where}: index {key!r} of a list must be an integer")
        try:
            return value[key]
        except IndexError:
            raise ExprEvalError(f"{where}: index {key} out of range for {_describe(value)}") from None
    raise ExprEvalError(f"{where}: {_describe(value)} has no fields")


class _Compiler:
    def __init__(self, source: str, slots: dict[str, int]):
        self.source = source
        self.slots = slots

    def where(self, node: Node) -> str:
        return f"position {node.pos} of {self.source!r}"

    def build(self, node: Node) -> Fn:  # noqa: C901 - one case per construct
        op, args = node.op, node.args
        if op == "const":
            value = args[0]
            return lambda env: value
        if op == "name":
            slot = self.slots[args[0]]
            return lambda env: env[slot]
        if op == "list":
            parts = [self.build(a) for a in args]
            return lambda env: [p(env) for p in parts]
        if op == "field":
            inner, key = self.build(args[0]), args[1]
            where = self.where(node)

            def field(env: Env) -> Any:
                value = inner(env)
                if type(value) is dict and key in value:  # fast path
                    return value[key]
                return _get_field(value, key, where)
            return field
        if op == "index":
            inner, index = self.build(args[0]), self.build(args[1])
            where = self.where(node)

            def index_fn(env: Env) -> Any:
                value, key = inner(env), index(env)
                if type(value) is dict and type(key) is str and key in value:
                    return value[key]
                return _get_field(value, key, where)
            return index_fn
        if op == "and":
            left, right = self.build(args[0]), self.build(args[1])
            return lambda env: left(env) and right(env)
        if op == "or":
            left, right = self.build(args[0]), self.build(args[1])
            return lambda env: left(env) or right(env)
        if op == "not":
            inner = self.build(args[0])
            return lambda env: not inner(env)
        if op in ("neg", "pos"):
            inner = self.build(args[0])
            where = self.where(node)
            sign = -1 if op == "neg" else 1

            def unary(env: Env) -> Any:
                value = inner(env)
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    raise ExprEvalError(f"{where}: cannot negate {_describe(value)}")
                return sign * value
            return unary
        if op in _BINARY:
            left, right, fn = self.build(args[0]), self.build(args[1]), _BINARY[op]
            where = self.where(node)

            def binary(env: Env) -> Any:
                a, b = left(env), right(env)
                try:
                    return fn(a, b)
                except ZeroDivisionError:
                    raise ExprEvalError(f"{where}: division by zero") from None
                except TypeError:
                    raise ExprEvalError(
                        f"{where}: cannot apply {op!r} to {_describe(a)} and {_describe(b)}") from None
            return binary
        if op == "compare":
            ops, operands = args
            fns = [self.build(o) for o in operands]
            comps = [_COMPARATORS[o] for o in ops]
            where = self.where(node)
            if len(comps) == 1:
                left, right, comp, name = fns[0], fns[1], comps[0], ops[0]

                def compare1(env: Env) -> Any:
                    a, b = left(env), right(env)
                    try:
                        return comp(a, b)
                    except TypeError:
                        raise ExprEvalError(
                            f"{where}: cannot compare {_describe(a)} {name} {_describe(b)}") from None
                return compare1

            def compare(env: Env) -> Any:
                a = fns[0](env)
                for comp, name, fn in zip(comps, ops, fns[1:]):
                    b = fn(env)
                    try:
                        if not comp(a, b):
                            return False
                    except TypeError:
                        raise ExprEvalError(
                            f"{where}: cannot compare {_describe(a)} {name} {_describe(b)}") from None
                    a = b
                return True
            return compare
        if op == "call":
            name, call_args = args
            fn = FUNCTIONS[name]
            parts = [self.build(a) for a in call_args]
            where = self.where(node)

            def call(env: Env) -> Any:
                values = [p(env) for p in parts]
                try:
                    return fn(*values)
                except (TypeError, ValueError) as err:
                    raise ExprEvalError(f"{where}: {name}() failed: {err}") from None
            return call
        raise AssertionError(f"unknown node {op}")  # pragma: no cover - parser only makes the above


class Expr:
    """A parsed expression; `evaluate(x=..., y=...)` or `function()` for a fast positional call."""

    def __init__(self, source: str, names: Sequence[str], tree: Node):
        self.source = source
        self.names = tuple(names)
        self.tree = tree
        self._fn = _Compiler(source, {n: i for i, n in enumerate(self.names)}).build(tree)

    def evaluate(self, **values: Any) -> Any:
        """Evaluate with the items bound by name; every declared name must be given."""
        missing = [n for n in self.names if n not in values]
        if missing:
            raise ExprEvalError(f"no value for {', '.join(missing)}")
        return self._fn([values[n] for n in self.names])

    def function(self) -> Callable[..., Any]:
        """A positional callable `f(*items)` in the order of `names` (what the matchers call)."""
        fn = self._fn

        def call(*items: Any) -> Any:
            return fn(items)
        return call

    def __repr__(self) -> str:
        return f"Expr({self.source!r})"


def parse_expr(source: str, names: Iterable[str] = ("x", "y")) -> Expr:
    """Parse `source` over the given variable names; raise ExprError if it is outside the grammar."""
    if not isinstance(source, str):
        raise ExprError(f"expected a string expression, got {type(source).__name__}", 0, repr(source))
    names = tuple(names)
    for name in names:
        if not name.isidentifier() or name in _KEYWORDS or name in FUNCTIONS:
            raise ValueError(f"cannot use {name!r} as a variable name")
    tree = _Parser(source, frozenset(names)).parse()
    return Expr(source, names, tree)


def compile_predicate(source: str) -> Callable[[Any, Any], bool]:
    """A two-item predicate `p(x, y) -> bool` from an expression over `x` and `y`."""
    fn = parse_expr(source, ("x", "y"))._fn

    def predicate(x: Any, y: Any) -> bool:
        return bool(fn((x, y)))
    return predicate

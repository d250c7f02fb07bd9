"""Evaluating expressions: the AST becomes nested Python closures (never `eval`/`exec`, never `getattr`).

An expression can only read fields of the items it is given; a failure on
concrete items (missing field, incomparable values, division by zero) is an
:class:`ExprEvalError` naming the position in the source.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from app.core.errors import BadInput
from app.expr.limits import exceeded, limit, one_line, shown, stack_for
from app.expr.parser import FUNCTIONS, KEYWORDS, ExprError, ExprNode, ExprParser


class ExprEvalError(BadInput, ValueError):
    """Evaluation failed on concrete items (missing field, incomparable values, division by zero)."""


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
    return one_line(repr(value), 40)


def _get_field(value: Any, key: Any, where: str) -> Any:
    if isinstance(value, Mapping):
        if isinstance(key, (str, int)) and key in value:
            return value[key]
        if isinstance(key, int) and str(key) in value:
            return value[str(key)]
        raise ExprEvalError(f"{where}: no field {_describe(key)} in {_describe(value)}")
    if isinstance(value, (list, tuple, str)):
        if isinstance(key, bool) or not isinstance(key, int):
            raise ExprEvalError(f"{where}: index {_describe(key)} of a list must be an integer")
        try:
            return value[key]
        except IndexError:
            raise ExprEvalError(f"{where}: index {_describe(key)} out of range for {_describe(value)}") from None
    raise ExprEvalError(f"{where}: {_describe(value)} has no fields")


class _Compiler:
    def __init__(self, source: str, slots: dict[str, int]):
        self.source = source
        self.slots = slots

    def where(self, node: ExprNode) -> str:
        return f"position {node.pos} of {shown(self.source)}"

    def build(self, node: ExprNode) -> Fn:  # one case per construct
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
        if op in ("and", "or"):
            return self.logic(op, [self.build(a) for a in args])
        if op == "arith":
            return self.arith(node)
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
                for comp, name, fn in zip(comps, ops, fns[1:], strict=True):
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
                    raise ExprEvalError(f"{where}: {name}() failed: {one_line(str(err), 120)}") from None
            return call
        raise AssertionError(f"unknown node {op}")  # pragma: no cover - parser only makes the above

    @staticmethod
    def logic(op: str, parts: list[Fn]) -> Fn:
        """`a and b and ...` / `a or b or ...` as Python does them (the deciding value), in a loop."""
        if len(parts) == 2:
            left, right = parts
            if op == "and":
                return lambda env: left(env) and right(env)
            return lambda env: left(env) or right(env)
        stop_when = op == "or"

        def chain(env: Env) -> Any:
            value: Any = None
            for part in parts:
                value = part(env)
                if bool(value) is stop_when:
                    return value
            return value
        return chain

    def arith(self, node: ExprNode) -> Fn:
        """A flat chain `a + b - c ...` (or `* / // %`), applied left to right."""
        ops, operands, positions = node.args
        fns = [self.build(o) for o in operands]
        steps = [(_BINARY[o], o, f"position {p} of {shown(self.source)}", fn)
                 for o, p, fn in zip(ops, positions, fns[1:], strict=True)]
        first = fns[0]

        def arith(env: Env) -> Any:
            a = first(env)
            for fn, name, where, operand in steps:
                b = operand(env)
                try:
                    a = fn(a, b)
                except ZeroDivisionError:
                    raise ExprEvalError(f"{where}: division by zero") from None
                except TypeError:
                    raise ExprEvalError(
                        f"{where}: cannot apply {name!r} to {_describe(a)} and {_describe(b)}") from None
                except (OverflowError, ValueError) as err:
                    raise ExprEvalError(f"{where}: {name!r} of {_describe(a)} and {_describe(b)}: "
                                        f"{one_line(str(err), 120)}") from None
            return a
        return arith


class Expr:
    """A parsed expression; `evaluate(x=..., y=...)` or `function()` for a fast positional call."""

    def __init__(self, source: str, names: Sequence[str], tree: ExprNode):
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
        if not name.isidentifier() or name in KEYWORDS or name in FUNCTIONS:
            raise ValueError(f"cannot use {name!r} as a variable name")
    try:
        with stack_for(limit("expr_depth"), 12):  # about 9 parser frames and 2 builder frames per level
            return Expr(source, names, ExprParser(source, frozenset(names)).parse())
    except RecursionError:  # a safety net: expr_depth keeps well below Python's stack
        raise ExprError(exceeded("expr_depth", "expression nested too deeply"), 0, source) from None


def compile_predicate(source: str) -> Callable[[Any, Any], bool]:
    """A two-item predicate `p(x, y) -> bool` from an expression over `x` and `y`."""
    fn = parse_expr(source, ("x", "y"))._fn

    def predicate(x: Any, y: Any) -> bool:
        return bool(fn((x, y)))
    return predicate

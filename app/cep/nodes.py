"""Complex event patterns as data: the AST, the named Pattern, its limits and the JSON (`ast`) form.

The compact text form that most users write is read by :mod:`app.cep.syntax`; both
forms build the nodes defined here. Every problem is a :class:`PatternError` whose
message names the pattern, the position or JSON field, and the problem, so the CLI
can print one line.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from app.core.topology import Problem, TopologyError
from app.expr.limits import exceeded, limit, one_line, shown

CONTEXTS: tuple[str, ...] = ("chronicle", "immediate", "strict", "every", "any", "once", "first")
# Spellings accepted for the contexts (VIATRA's enum names among them).
CONTEXT_ALIASES = {
    "chronicle": "chronicle", "immediate": "immediate", "strict": "strict",
    "strict_immediate": "strict", "strict-immediate": "strict",
    "every": "every", "all": "every", "any": "any", "once": "once", "first": "first",
}
SKIPS: tuple[str, ...] = ("no_skip", "to_next", "past_last")
COMPARATORS = ("==", "!=", "<=", ">=", "<", ">")


class PatternError(TopologyError):
    """A pattern or pattern file that cannot be read; one line naming where and what."""

    def __init__(self, where: str, message: str):
        super().__init__([Problem(where, message)])


# ---- the AST ----------------------------------------------------------------


@dataclass(frozen=True)
class Atom:
    """One event of type `type`; `binds` join attributes to parameters, `tests` compare attributes with constants."""

    type: str
    binds: tuple[tuple[str, str], ...] = ()  # (attribute, parameter)
    tests: tuple[tuple[str, str, Any], ...] = ()  # (attribute, comparator, constant)


@dataclass(frozen=True)
class Follows:
    """`a -> b -> ...`: each argument matched after the previous one."""

    args: tuple[PatternNode, ...]


@dataclass(frozen=True)
class Or:
    """`a OR b`: either argument."""

    args: tuple[PatternNode, ...]


@dataclass(frozen=True)
class And:
    """`a AND b`: every argument, in any order (each argument's events kept together)."""

    args: tuple[PatternNode, ...]


@dataclass(frozen=True)
class Times:
    """`a{n}`: the argument n times in a row (n >= 1)."""

    arg: PatternNode
    n: int


@dataclass(frozen=True)
class Star:
    """`a{*}`: the argument zero or more times (only inside a sequence)."""

    arg: PatternNode


@dataclass(frozen=True)
class Plus:
    """`a{+}`: the argument one or more times."""

    arg: PatternNode


@dataclass(frozen=True)
class Not:
    """`NOT a`: the next events do not start `a`; matches the first event where `a` fails."""

    arg: PatternNode


@dataclass(frozen=True)
class Within:
    """`a within w`: first to last event of `a` at most `w` apart (event time, inclusive)."""

    arg: PatternNode
    window: float


@dataclass(frozen=True)
class HoldsFor:
    """`a holdsFor d`: first to last event of `a` at least `d` apart (event time, inclusive)."""

    arg: PatternNode
    duration: float


PatternNode = Atom | Follows | Or | And | Times | Star | Plus | Not | Within | HoldsFor


@dataclass
class Pattern:
    """A named pattern with its matching context, after-match skip, partition keys and report kind."""

    id: str
    ast: PatternNode
    context: str = "chronicle"
    skip: str = "no_skip"
    by: tuple[str, ...] = ()  # match separately per value of these attributes
    timeout: bool = False  # report partial matches whose top-level window expired instead of matches
    only: tuple[str, ...] = ()  # when set, the pattern sees only events of these types
    text: str = ""
    description: str = ""


# ---- limits --------------------------------------------------------------------


def repeat_problem(value: str | int) -> str | None:
    """Why a repetition count cannot be used (below 1, or over repeat_count), or None."""
    if isinstance(value, str):
        digits = value.lstrip("0") or "0"
        if len(digits) > 12:
            return exceeded("repeat_count", f"a repetition of {len(digits):,} digits")
        value = int(digits)
    if value < 1:
        return "a multiplicity must be at least 1"
    if value > limit("repeat_count"):
        return exceeded("repeat_count", f"a repetition of {value:,}")
    return None


def _children(node: PatternNode) -> tuple[PatternNode, ...]:
    if isinstance(node, Atom):
        return ()
    if isinstance(node, (Follows, Or, And)):
        return node.args
    return (node.arg,)


def check_size(node: PatternNode, where: str) -> None:
    """Refuse a pattern past pattern_depth or pattern_size (counted without recursion; an `@name`
    reference counts as often as it is used)."""
    max_depth, max_size = limit("pattern_depth"), limit("pattern_size")
    depth: dict[int, int] = {}
    size: dict[int, int] = {}
    stack: list[tuple[PatternNode, bool]] = [(node, False)]
    while stack:
        current, ready = stack.pop()
        key = id(current)
        if key in size:
            continue
        kids = _children(current)
        if not ready:
            stack.append((current, True))
            stack.extend((k, False) for k in kids if id(k) not in size)
            continue
        depth[key] = 1 + max((depth[id(k)] for k in kids), default=0)
        size[key] = min(1 + sum(size[id(k)] for k in kids), max_size + 1)
        if depth[key] > max_depth:
            raise PatternError(where, exceeded("pattern_depth", "pattern nested too deeply"))
        if size[key] > max_size:
            raise PatternError(where, exceeded("pattern_size", "too many event types and operators"))


def _scalar(value: Any, where: str) -> Any:
    """A constant a test compares with: a string, a finite number, true, false or null."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float) and value == value and value not in (float("inf"), float("-inf")):
        return value
    raise PatternError(where, f"a test compares with a string, a finite number, true, false or null, "
                              f"not {echo(value)}")


def echo(value: Any, width: int = 40) -> str:
    """A value from the input for a message: one line, control characters escaped, cut to `width`."""
    if isinstance(value, str):
        return shown(value, width)
    try:
        return one_line(json.dumps(value, default=str, ensure_ascii=False), width)
    except (ValueError, RecursionError):  # nested past what json.dumps walks
        return type(value).__name__



# ---- the JSON (`ast`) form ---------------------------------------------------


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PatternError(where, f"expected a number, got {echo(value)}")
    return float(value)


def parse_ast(data: Any, where: str = "ast") -> PatternNode:
    """Parse the JSON form used by the vectors: `{"atom": "a"}`, `{"op": "follows", "args": [...]}`, ..."""
    node = _parse_ast(data, where, limit("pattern_depth"))
    check_size(node, where)
    return node


def _parse_ast(data: Any, where: str, depth: int) -> PatternNode:
    if depth < 0:
        raise PatternError(where, exceeded("pattern_depth", "pattern nested too deeply"))
    if not isinstance(data, dict):
        raise PatternError(where, f"expected an object, got {type(data).__name__}")
    if "atom" in data:
        name = data["atom"]
        if not isinstance(name, str) or not name:
            raise PatternError(f"{where}.atom", "expected an event type name")

        params = data.get("params", {})
        if isinstance(params, list) and all(isinstance(p, str) for p in params):  # positional: same names
            params = {p: p for p in params}
        if not isinstance(params, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                   for k, v in params.items()):
            raise PatternError(f"{where}.params", "expected {attribute: parameter} or a list of names")
        tests_raw = data.get("tests", [])
        tests: list[tuple[str, str, Any]] = []
        if not isinstance(tests_raw, list):
            raise PatternError(f"{where}.tests", "expected a list of [attribute, comparator, constant]")
        for k, test in enumerate(tests_raw):
            if not (isinstance(test, list) and len(test) == 3 and isinstance(test[0], str) and test[1] in COMPARATORS):
                raise PatternError(f"{where}.tests[{k}]",
                                   f"expected [attribute, one of {' '.join(COMPARATORS)}, constant]")
            tests.append((test[0], test[1], _scalar(test[2], f"{where}.tests[{k}][2]")))
        return Atom(name, tuple(params.items()), tuple(tests))
    op = data.get("op")
    ops = ("follows", "or", "and", "times", "star", "plus", "not", "within", "holdsFor")
    if op not in ops:
        raise PatternError(f"{where}.op",
                           f"unknown operator {echo(op)} (expected atom or one of {', '.join(ops)})")
    if op in ("follows", "or", "and"):
        args = data.get("args")
        if not isinstance(args, list) or len(args) < 2:
            raise PatternError(f"{where}.args", f"'{op}' needs a list of at least two patterns")
        nodes = tuple(_parse_ast(a, f"{where}.args[{k}]", depth - 1) for k, a in enumerate(args))
        many: dict[str, Callable[[tuple[PatternNode, ...]], PatternNode]] = {"follows": Follows, "or": Or, "and": And}
        return many[op](nodes)
    if "arg" not in data:
        raise PatternError(f"{where}.arg", f"'{op}' needs an 'arg' pattern")
    arg = _parse_ast(data["arg"], f"{where}.arg", depth - 1)
    if op == "times":
        n = data.get("n")
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise PatternError(f"{where}.n", "expected a whole number of at least 1")
        problem = repeat_problem(n)
        if problem:
            raise PatternError(f"{where}.n", problem)
        return Times(arg, n)
    if op == "within":
        return Within(arg, _number(data.get("window"), f"{where}.window"))
    if op == "holdsFor":
        return HoldsFor(arg, _number(data.get("duration"), f"{where}.duration"))
    one: dict[str, Callable[[PatternNode], PatternNode]] = {"star": Star, "plus": Plus, "not": Not}
    return one[op](arg)


def to_ast(node: PatternNode) -> dict[str, Any]:
    """The JSON form of an AST (inverse of :func:`parse_ast`)."""
    if isinstance(node, Atom):
        out: dict[str, Any] = {"atom": node.type}
        if node.binds:
            out["params"] = dict(node.binds)
        if node.tests:
            out["tests"] = [list(t) for t in node.tests]
        return out
    if isinstance(node, (Follows, Or, And)):
        name = {Follows: "follows", Or: "or", And: "and"}[type(node)]
        return {"op": name, "args": [to_ast(a) for a in node.args]}
    if isinstance(node, Times):
        return {"op": "times", "n": node.n, "arg": to_ast(node.arg)}
    if isinstance(node, Within):
        return {"op": "within", "window": node.window, "arg": to_ast(node.arg)}
    if isinstance(node, HoldsFor):
        return {"op": "holdsFor", "duration": node.duration, "arg": to_ast(node.arg)}
    name = {Star: "star", Plus: "plus", Not: "not"}[type(node)]
    return {"op": name, "arg": to_ast(node.arg)}


def to_text(node: PatternNode) -> str:
    """The compact text form of an AST (fully parenthesised where precedence needs it)."""
    if isinstance(node, Atom):
        parts = [a if a == p else f"{a}={p}" for a, p in node.binds]
        parts += [f"{a}{'=' if op == '==' else op}{json.dumps(v)}" for a, op, v in node.tests]
        return node.type + (f"({', '.join(parts)})" if parts else "")
    if isinstance(node, (Follows, Or, And)):
        sep = {Follows: " -> ", Or: " OR ", And: " AND "}[type(node)]
        return sep.join(_wrap(a) for a in node.args)
    if isinstance(node, Times):
        return f"{_wrap(node.arg)}{{{node.n}}}"
    if isinstance(node, Star):
        return f"{_wrap(node.arg)}{{*}}"
    if isinstance(node, Plus):
        return f"{_wrap(node.arg)}{{+}}"
    if isinstance(node, Not):
        return f"NOT {_wrap(node.arg)}"
    if isinstance(node, Within):
        return f"{_wrap(node.arg)} within {node.window:g}"
    return f"{_wrap(node.arg)} holdsFor {node.duration:g}"


def _wrap(node: PatternNode) -> str:
    return to_text(node) if isinstance(node, Atom) else f"({to_text(node)})"


# ---- options and pattern files ---------------------------------------------





def iter_atoms(node: PatternNode) -> Iterable[Atom]:
    """Every atom of a pattern, left to right."""
    if isinstance(node, Atom):
        yield node
    elif isinstance(node, (Follows, Or, And)):
        for a in node.args:
            yield from iter_atoms(a)
    else:
        yield from iter_atoms(node.arg)

"""Complex event pattern syntax: the AST, the compact text form and the JSON (`ast`) form.

The text form is close to VIATRA-CEP's VEPL (`a1 -> a2`, `a1 OR a2`, `a1{3} -> a2`,
`(a -> b) within 10`, `fail(c) -> fail(c)`); docs/cep.md describes it. Every
problem is a :class:`PatternError` whose message names the pattern, the position
or JSON field, and the problem, so the CLI can print one line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from app.core import fileio
from app.core.topology import Problem, TopologyError
from app.expr.core import Token, TokenStream, tokenize
from app.expr.limits import exceeded, int_digits_ok, limit, loads, one_line, shown, stack_for

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


def _repeat_problem(value: str | int) -> str | None:
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
                              f"not {_echo(value)}")


def _echo(value: Any, width: int = 40) -> str:
    """A value from the input for a message: one line, control characters escaped, cut to `width`."""
    if isinstance(value, str):
        return shown(value, width)
    try:
        return one_line(json.dumps(value, default=str, ensure_ascii=False), width)
    except (ValueError, RecursionError):  # nested past what json.dumps walks
        return type(value).__name__


# ---- the text form ----------------------------------------------------------

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<num>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)
      | (?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
      | (?P<var>\$[A-Za-z_][A-Za-z0-9_]*)
      | (?P<ref>@[A-Za-z_][A-Za-z0-9_.-]*)
      | (?P<name>[A-Za-z_][A-Za-z0-9_.:]*)
      | (?P<op>->|==|!=|<=|>=|&&|\|\||[-(){}\[\],=<>+*|&!])
    )""",
    re.VERBOSE,
)
_KEYWORDS = {"or": "OR", "and": "AND", "not": "NOT", "within": "WITHIN", "holdsfor": "HOLDSFOR",
             "true": "TRUE", "false": "FALSE", "null": "NULL"}


def _pattern_token(text: str, i: int, tokens: Sequence[Token]) -> tuple[Token, int] | None:
    m = _TOKEN.match(text, i)
    if not m or m.end() == i:
        return None
    group = m.lastgroup or "op"
    kind, value = group, m.group(group)
    if kind == "name" and value.lower() in _KEYWORDS:
        kind, value = "kw", _KEYWORDS[value.lower()]
    return Token(kind, value, m.start(group), value), m.end()


def _tokenize(text: str, where: str) -> list[Token]:
    """Tokens of kinds num, str, var, ref, name, op, kw and end (keywords in upper case)."""
    return tokenize(text, (_pattern_token,),
                    lambda pos: PatternError(where, f"position {pos}: unexpected character {shown(text[pos])}"),
                    Token("end", "", len(text), ""))


class _TextParser(TokenStream):
    """Recursive descent over the compact form; `->` binds tightest, then AND, then OR, then within/holdsFor."""

    def __init__(self, text: str, where: str, constants: Mapping[str, Any], patterns: Mapping[str, PatternNode]):
        if len(text) > limit("expr_length"):
            raise PatternError(where, exceeded("expr_length", f"a pattern of {len(text):,} characters"))
        super().__init__(_tokenize(text, where))
        self.text = text
        self.where = where
        self.constants = constants
        self.patterns = patterns
        self.depth = 0
        self.max_depth = limit("pattern_depth")

    # helpers
    def fail(self, tok: Token, message: str) -> PatternError:
        found = tok.text if tok.kind != "end" else "end of pattern"
        return PatternError(self.where, f"position {tok.pos}: {message} (found {shown(found, 40)})")

    def enter(self, tok: Token) -> None:
        """One level deeper (parentheses, NOT, a repetition or window); refused past pattern_depth."""
        self.depth += 1
        if self.depth > self.max_depth:
            raise PatternError(self.where, f"position {tok.pos}: "
                                           + exceeded("pattern_depth", "pattern nested too deeply"))

    def expected(self, tok: Token, kind: str, value: Any) -> PatternError:
        return self.fail(tok, f"expected {value or kind}")

    def is_op(self, text: str) -> bool:
        return self.at("op", text)

    def is_kw(self, text: str) -> bool:
        return self.at("kw", text)

    # grammar
    def parse(self) -> PatternNode:
        node = self.timed()
        tok = self.peek()
        if tok.kind != "end":
            raise self.fail(tok, "unexpected text after the pattern")
        return node

    def timed(self) -> PatternNode:
        node = self.alternatives()
        while self.is_kw("WITHIN") or self.is_kw("HOLDSFOR"):
            kw = self.take()
            amount = self.number("a time window")
            if amount < 0:
                raise self.fail(kw, "a time window cannot be negative")
            node = Within(node, amount) if kw.text == "WITHIN" else HoldsFor(node, amount)
        return node

    def alternatives(self) -> PatternNode:
        args = [self.conjunction()]
        while self.is_kw("OR") or self.is_op("|") or self.is_op("||"):
            self.take()
            args.append(self.conjunction())
        return args[0] if len(args) == 1 else Or(tuple(args))

    def conjunction(self) -> PatternNode:
        args = [self.sequence()]
        while self.is_kw("AND") or self.is_op("&") or self.is_op("&&"):
            self.take()
            args.append(self.sequence())
        return args[0] if len(args) == 1 else And(tuple(args))

    def sequence(self) -> PatternNode:
        args = [self.unary()]
        while self.is_op("->"):
            self.take()
            args.append(self.unary())
        return args[0] if len(args) == 1 else Follows(tuple(args))

    def unary(self) -> PatternNode:
        if self.is_kw("NOT") or self.is_op("!"):
            self.enter(self.take())
            node = Not(self.unary())
            self.depth -= 1
            return node
        return self.postfix()

    def postfix(self) -> PatternNode:
        node = self.primary()
        entered = 0
        while True:
            if self.is_op("{") or self.is_op("["):
                self.enter(self.peek())  # each repetition or window wraps the node once more
                entered += 1
            if self.is_op("{"):
                self.take()
                tok = self.take()
                if tok.kind == "op" and tok.text == "*":
                    node = Star(node)
                elif tok.kind == "op" and tok.text == "+":
                    node = Plus(node)
                elif tok.kind == "num" and re.fullmatch(r"\d+", tok.text):
                    problem = _repeat_problem(tok.text)
                    if problem:
                        raise self.fail(tok, problem)
                    n = int(tok.text.lstrip("0"))  # leading zeros do not count towards Python's digit limit
                    node = Times(node, n)
                else:
                    raise self.fail(tok, "expected a count, '*' or '+' inside { }")
                self.expect("op", "}")
            elif self.is_op("["):  # VEPL's `(a -> b)[1000]` time window
                self.take()
                window = self.number("a time window")
                self.expect("op", "]")
                node = Within(node, window)
            else:
                self.depth -= entered
                return node

    def primary(self) -> PatternNode:
        tok = self.peek()
        if self.is_op("("):
            self.enter(self.take())
            node = self.timed()
            self.expect("op", ")")
            self.depth -= 1
            return node
        if tok.kind == "name":
            self.take()
            return self.atom(tok.text)
        if tok.kind == "ref":  # @name: a pattern defined earlier in the same file (VEPL's pattern references)
            self.take()
            if tok.text[1:] not in self.patterns:
                raise self.fail(tok, f"unknown pattern {tok.text} (define it above this one)")
            return self.patterns[tok.text[1:]]
        raise self.fail(tok, "expected an event type, NOT or '('")

    def atom(self, type_name: str) -> Atom:
        binds: list[tuple[str, str]] = []
        tests: list[tuple[str, str, Any]] = []
        if self.is_op("("):
            self.take()
            if not self.is_op(")"):
                while True:
                    attr = self.expect("name").text
                    if self.is_op("=") or any(self.is_op(c) for c in COMPARATORS):
                        op_tok = self.take()
                        op = "==" if op_tok.text == "=" else op_tok.text
                        value_tok = self.peek()
                        if op_tok.text == "=" and value_tok.kind == "name":
                            self.take()
                            binds.append((attr, value_tok.text))
                        else:
                            tests.append((attr, op, self.constant()))
                    else:
                        binds.append((attr, attr))
                    if self.is_op(","):
                        self.take()
                        continue
                    break
            self.expect("op", ")")
        return Atom(type_name, tuple(binds), tuple(tests))

    def constant(self) -> Any:
        tok = self.take()
        if tok.kind == "num":
            if any(c in tok.text for c in ".eE"):
                value = float(tok.text)
                if value in (float("inf"), float("-inf")):
                    raise self.fail(tok, "the number is too large (only finite numbers)")
                return value
            if not int_digits_ok(tok.text):
                raise self.fail(tok, exceeded("number_digits", f"a number of {len(tok.text.lstrip('-')):,} digits"))
            return int(tok.text)
        if tok.kind == "str":
            text = '"' + tok.text[1:-1].replace('"', '\\"') + '"' if tok.text[0] == "'" else tok.text
            try:
                return json.loads(text)
            except ValueError:
                raise self.fail(tok, "a string with an escape JSON does not know") from None
        if tok.kind == "kw" and tok.text in ("TRUE", "FALSE", "NULL"):
            return {"TRUE": True, "FALSE": False, "NULL": None}[tok.text]
        if tok.kind == "var":
            name = tok.text[1:]
            if name not in self.constants:
                raise self.fail(tok, f"unknown constant ${name} (define it with 'define {name} = ...')")
            return self.constants[name]
        raise self.fail(tok, "expected a number, a string, true, false, null or a $constant")

    def number(self, what: str) -> float:
        value = self.constant()
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(self.tokens[self.i - 1], f"expected a number for {what}")
        return float(value)


def parse_text(text: str, where: str = "pattern", constants: Mapping[str, Any] | None = None,
               patterns: Mapping[str, PatternNode] | None = None) -> PatternNode:
    """Parse the compact text form of one pattern expression into an AST (`@name` refers to `patterns`)."""
    if not text.strip():
        raise PatternError(where, "the pattern is empty")
    try:
        with stack_for(limit("pattern_depth"), 8):  # seven parser frames per level
            node = _TextParser(text, where, constants or {}, patterns or {}).parse()
    except RecursionError:  # a safety net: pattern_depth keeps well below Python's stack
        raise PatternError(where, exceeded("pattern_depth", "pattern nested too deeply")) from None
    check_size(node, where)
    return node


# ---- the JSON (`ast`) form ---------------------------------------------------


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PatternError(where, f"expected a number, got {_echo(value)}")
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
                           f"unknown operator {_echo(op)} (expected atom or one of {', '.join(ops)})")
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
        problem = _repeat_problem(n)
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


def _options(raw: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Validate context / skip / by / only / timeout options given as a mapping."""
    out: dict[str, Any] = {}
    if "context" in raw:
        ctx = str(raw["context"]).lower().removeprefix("eventcontext.")
        if ctx not in CONTEXT_ALIASES:
            raise PatternError(f"{where}.context",
                               f"unknown context {_echo(raw['context'])} (expected one of {', '.join(CONTEXTS)})")
        out["context"] = CONTEXT_ALIASES[ctx]
    if "skip" in raw:
        skip = str(raw["skip"]).lower()
        skip = {"skip_to_next": "to_next", "skip_past_last_event": "past_last",
                "past_last_event": "past_last"}.get(skip, skip)
        if skip not in SKIPS:
            raise PatternError(f"{where}.skip",
                               f"unknown skip strategy {_echo(raw['skip'])} (expected one of {', '.join(SKIPS)})")
        out["skip"] = skip
    if "by" in raw:
        by = raw["by"]
        if isinstance(by, str):
            by = [by]
        if not isinstance(by, list) or not all(isinstance(b, str) and b for b in by):
            raise PatternError(f"{where}.by", "expected an attribute name or a list of them")
        out["by"] = tuple(by)
    if "only" in raw:
        only = raw["only"]
        if isinstance(only, str):
            only = [only]
        if not isinstance(only, list) or not all(isinstance(b, str) and b for b in only):
            raise PatternError(f"{where}.only", "expected an event type or a list of them")
        out["only"] = tuple(only)
    if "timeout" in raw:
        if not isinstance(raw["timeout"], bool):
            raise PatternError(f"{where}.timeout", "expected true or false")
        out["timeout"] = raw["timeout"]
    return out


def _bracket_options(text: str, where: str) -> dict[str, Any]:
    """Options written as `[strict, by comp task, skip=past_last, timeout]`."""
    raw: dict[str, Any] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        key, eq, value = part.partition("=")
        key = key.strip().lower()
        if eq:
            if key not in ("context", "skip", "by", "only"):
                raise PatternError(where, f"unknown option {_echo(key)} (expected context=, skip=, by=, only=)")
            raw[key] = value.strip().split() if key in ("by", "only") else value.strip()
        elif key.startswith("by "):
            raw["by"] = part.strip()[3:].split()
        elif key.startswith("only "):
            raw["only"] = part.strip()[5:].split()
        elif key == "timeout":
            raw["timeout"] = True
        elif key in CONTEXT_ALIASES:
            raw["context"] = key
        elif key in SKIPS or key in ("skip_to_next", "skip_past_last_event"):
            raw["skip"] = key
        else:
            raise PatternError(where,
                               f"unknown option {_echo(part)} "
                               "(a context, skip=..., by ATTR..., only TYPE..., or timeout)")
    return _options(raw, where)


_HEADER = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)\s*(?:\[(?P<opts>[^\]]*)\])?\s*:(?!=)\s*(?P<body>.*)$")
_DEFINE = re.compile(r"^define\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*=\s*(?P<value>.+?)\s*$")


def parse_pattern_text(source: str, where: str = "patterns",
                       overrides: Mapping[str, Any] | None = None) -> list[Pattern]:
    """Parse a `.cep` file: `NAME [options]: EXPRESSION` per pattern, `#` comments,
    indented continuation lines, `define NAME = VALUE` constants used as `$NAME`,
    `@NAME` for a pattern defined earlier in the file."""
    constants: dict[str, Any] = {}
    entries: list[tuple[int, str, str, str, str]] = []  # line, name, opts, body, description
    comment: list[str] = []
    for number, line in enumerate(source.splitlines(), start=1):
        stripped = line.strip()
        if not stripped:
            comment = []
            continue
        if stripped.startswith("#"):
            comment.append(stripped.lstrip("#").strip())
            continue
        if line[0].isspace() and entries:
            ln, name, opts, body, desc = entries[-1]
            entries[-1] = (ln, name, opts, body + " " + stripped, desc)
            continue
        m = _DEFINE.match(stripped)
        if m:
            here = f"{where} line {number}"
            try:
                value = loads(m["value"], partial(PatternError, here))
            except json.JSONDecodeError:
                value = {}  # not JSON at all: the same message as a JSON object or list
            if isinstance(value, (dict, list)):
                raise PatternError(here, f"define {m['name']}: expected a number, a quoted string, "
                                         "true, false or null")
            constants[m["name"]] = value
            comment = []  # a comment above a define describes the constant, not the next pattern
            continue
        m = _HEADER.match(stripped)
        if not m:
            raise PatternError(f"{where} line {number}",
                               "expected 'NAME [options]: PATTERN', 'define NAME = VALUE' or a # comment")
        entries.append((number, m["name"], m["opts"] or "", m["body"], " ".join(comment)))
        comment = []
    if overrides:
        constants.update(overrides)
    patterns: list[Pattern] = []
    seen: dict[str, PatternNode] = {}
    for number, name, opts, body, desc in entries:
        here = f"{where} line {number} ({name})"
        if name in seen:
            raise PatternError(here, f"a pattern named {_echo(name)} is already defined")
        options = _bracket_options(opts, here)
        ast = parse_text(body, here, constants, seen)
        seen[name] = ast
        patterns.append(Pattern(id=name, ast=ast, text=body.strip(), description=desc, **options))
    if not patterns:
        raise PatternError(where, "no pattern found (write 'NAME: PATTERN', e.g. 'pair: a -> b')")
    return patterns


def pattern_from_json(raw: Any, where: str, defaults: Mapping[str, Any] | None = None) -> Pattern:
    """One pattern object: `{"id", "vepl"|"text"|"ast", "context"?, "skip"?, "by"?, "only"?, "timeout"?}`."""
    if not isinstance(raw, dict):
        raise PatternError(where, f"expected a pattern object, got {type(raw).__name__}")
    pid = raw.get("id") or raw.get("name")
    if not isinstance(pid, str) or not pid:
        raise PatternError(f"{where}.id", "every pattern needs a non-empty 'id'")
    here = f"{where} ({one_line(pid, 60)})"
    if "ast" in raw:
        ast = parse_ast(raw["ast"], f"{here}.ast")
        text = raw.get("text") or raw.get("vepl") or to_text(ast)
    elif "text" in raw or "vepl" in raw:
        text = raw.get("text", raw.get("vepl"))
        if not isinstance(text, str):
            raise PatternError(f"{here}.text", "expected the pattern as a string")
        ast = parse_text(text, f"{here}.text")
    else:
        raise PatternError(here, "needs 'text' (compact form) or 'ast' (JSON form)")
    options = _options({**(defaults or {}), **raw}, here)
    return Pattern(id=pid, ast=ast, text=str(text), description=str(raw.get("description", "")), **options)


def parse_pattern_json(data: Any, where: str = "patterns") -> list[Pattern]:
    """A JSON pattern file: a list of pattern objects or `{"context"?, "patterns": [...]}`."""
    defaults: dict[str, Any] = {}
    if isinstance(data, dict):
        defaults = {k: data[k] for k in ("context", "skip") if k in data}
        data = data.get("patterns")
    if not isinstance(data, list) or not data:
        raise PatternError(where, "expected a non-empty list of patterns (or {\"patterns\": [...]})")
    patterns = [pattern_from_json(p, f"{where}[{k}]", defaults) for k, p in enumerate(data)]
    ids = [p.id for p in patterns]
    dup = next((i for i in ids if ids.count(i) > 1), None)
    if dup:
        raise PatternError(where, f"two patterns are named {_echo(dup)}")
    return patterns


def read_text(path: Path) -> str:
    """A UTF-8 text file, every failure as one PatternError naming the file."""
    return fileio.read_text(path, lambda reason: PatternError(str(path), reason))


def load_patterns(path: str | Path, overrides: Mapping[str, Any] | None = None) -> list[Pattern]:
    """Read a pattern file: JSON when it starts with `[` or `{`, the compact text form otherwise."""
    p = Path(path)
    source = read_text(p)
    if source.lstrip().startswith(("[", "{")):
        try:
            data = loads(source, lambda problem: PatternError(p.name, problem))
        except json.JSONDecodeError as err:
            raise PatternError(f"{p.name} line {err.lineno}", f"not valid JSON: {err.msg}") from None
        return parse_pattern_json(data, p.name)
    return parse_pattern_text(source, p.name, overrides)


def iter_atoms(node: PatternNode) -> Iterable[Atom]:
    """Every atom of a pattern, left to right."""
    if isinstance(node, Atom):
        yield node
    elif isinstance(node, (Follows, Or, And)):
        for a in node.args:
            yield from iter_atoms(a)
    else:
        yield from iter_atoms(node.arg)

"""Complex event pattern syntax: the compact text form and pattern files (text or JSON).

The text form is close to VIATRA-CEP's VEPL (`a1 -> a2`, `a1 OR a2`, `a1{3} -> a2`,
`(a -> b) within 10`, `fail(c) -> fail(c)`); docs/cep.md describes it. Every
problem is a :class:`PatternError` whose message names the pattern, the position
or JSON field, and the problem, so the CLI can print one line. The AST, the named
:class:`Pattern` and the JSON (`ast`) form live in :mod:`app.cep.nodes`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from app.cep.nodes import (
    COMPARATORS,
    CONTEXT_ALIASES,
    CONTEXTS,
    SKIPS,
    And,
    Atom,
    Follows,
    HoldsFor,
    Not,
    Or,
    Pattern,
    PatternError,
    PatternNode,
    Plus,
    Star,
    Times,
    Within,
    check_size,
    echo,
    parse_ast,
    repeat_problem,
    to_text,
)
from app.core import fileio
from app.expr.core import Token, TokenStream, tokenize
from app.expr.limits import exceeded, int_digits_ok, limit, loads, one_line, shown, stack_for

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
                    problem = repeat_problem(tok.text)
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



def _options(raw: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Validate context / skip / by / only / timeout options given as a mapping."""
    out: dict[str, Any] = {}
    if "context" in raw:
        ctx = str(raw["context"]).lower().removeprefix("eventcontext.")
        if ctx not in CONTEXT_ALIASES:
            raise PatternError(f"{where}.context",
                               f"unknown context {echo(raw['context'])} (expected one of {', '.join(CONTEXTS)})")
        out["context"] = CONTEXT_ALIASES[ctx]
    if "skip" in raw:
        skip = str(raw["skip"]).lower()
        skip = {"skip_to_next": "to_next", "skip_past_last_event": "past_last",
                "past_last_event": "past_last"}.get(skip, skip)
        if skip not in SKIPS:
            raise PatternError(f"{where}.skip",
                               f"unknown skip strategy {echo(raw['skip'])} (expected one of {', '.join(SKIPS)})")
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
                raise PatternError(where, f"unknown option {echo(key)} (expected context=, skip=, by=, only=)")
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
                               f"unknown option {echo(part)} "
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
        here = f"{where} line {number} ({one_line(name, 60)})"
        if name in seen:
            raise PatternError(here, f"a pattern named {echo(name)} is already defined")
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
        raise PatternError(where, f"two patterns are named {echo(dup)}")
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

"""Fuzzing the languages in-process: expressions, CEP patterns (text and JSON), DiffStream streams and specs.

Hypothesis mutates valid inputs (deep nesting, huge and non-finite numbers, odd encodings, random
bytes, wrong types) and asserts that each reader either refuses cleanly with its documented error
type (ExprError/ExprEvalError, PatternError, DiffError, TopologyError) in one line, or gives a valid
result that then runs (evaluates, compiles and matches, compares). A few hundred examples run in
CI; the `fuzz` marker runs many more (`pytest -m fuzz tests/unit/test_fuzz_languages.py`).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.cep import CepEngine, PatternError, compile_pattern, parse_ast, parse_pattern_text, parse_text
from app.cep.nodes import Pattern
from app.core.topology import TopologyError
from app.diff import DiffError, Matcher, diff_streams, read_stream
from app.expr import ExprError, ExprEvalError, parse_expr
from app.expr.limits import set_limits

CI = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow],
              derandomize=True)
LONG = settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ---- generators -----------------------------------------------------------------------------

PREDICATES = [
    "x.key == y.key", "x.a < y.a and not (x.b in [1, 2, 'z'])", "abs(x.v - y.v) <= 0.5 or x.k != y.k",
    "len(x.tags) > 0 && x.tags[0] == 'a'", "-x.n * 2 + y.n // 3 % 5 == 1", "x['pos'].0 >= 1e3",
    "min(x.a, y.a, 3) == max(1, 2) or null == None", "!(x.t > y.t) || true",
]
PATTERNS = [
    "a -> b", "(take(tuple) -> bolt_ack(tuple)) within 30", "fail(c) -> fail(c)", "a{3} -> b{*} -> c",
    "a OR b AND c", "NOT a -> b", "(a -> b)[10] holdsFor 1", "x(v > 3, w = 'k') -> y(v) -> z{+}",
    "a AND NOT b", "(a OR b){2} -> c",
]
TOKENS = ["(", ")", "[", "]", "{", "}", "{2}", "{*}", "{+}", "not ", "NOT ", "-", "+", " or ", " and ", " OR ",
          " AND ", " -> ", " within ", ".", ",", "'", '"', "\\", "==", "=", "$X", "@p", "9" * 5000, "1e400",
          "NaN", "\x00", "\n", "\ud800", "é", "\x1b[31m", "10" + "0" * 30, "x", "y", "a", "__import__"]
# deep nesting of every kind the languages have
DEEP = [lambda n: "(" * n + "x" + ")" * n, lambda n: "not " * n + "x", lambda n: "-" * n + "x",
        lambda n: "NOT " * n + "a", lambda n: "a" + "{2}" * n, lambda n: "[" * n + "]" * n,
        lambda n: " or ".join(["x.a == 1"] * n)]


@st.composite
def mutated(draw: st.DrawFn, seeds: list[str]) -> str:
    """A valid text with a few edits: tokens inserted, slices deleted or repeated, deep nesting spliced in."""
    text = draw(st.sampled_from(seeds))
    for _ in range(draw(st.integers(1, 4))):
        pos = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["insert", "delete", "repeat", "deep", "random"]))
        if action == "insert":
            text = text[:pos] + draw(st.sampled_from(TOKENS)) + text[pos:]
        elif action == "delete":
            text = text[:pos] + text[pos + draw(st.integers(1, 5)):]
        elif action == "repeat":
            text = text[:pos] + text[pos:pos + 3] * draw(st.integers(2, 3000)) + text[pos:]
        elif action == "deep":
            deep = draw(st.sampled_from(DEEP))(draw(st.sampled_from([10, 70, 200, 1000, 10_000])))
            text = text[:pos] + deep + text[pos:]
        else:
            text = text[:pos] + draw(st.text(max_size=20)) + text[pos:]
    return text


JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
                         st.text(max_size=10))
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                                 st.dictionaries(st.text(max_size=6), inner,
                                                                                 max_size=4)), max_leaves=12)


def _deep_json(n: int, kind: str) -> Any:
    value: Any = {"atom": "a"}
    for _ in range(n):
        value = {"op": kind, "arg": value} if kind in ("not", "star", "plus") else [value]
    return value


@st.composite
def json_patterns(draw: st.DrawFn) -> Any:
    """The JSON form of a valid pattern with one part replaced by a wrong type, a huge count or deep nesting."""
    atom = {"atom": "a", "params": ["k"], "tests": [["v", ">", 3]]}
    node: Any = draw(st.sampled_from([
        atom, {"op": "follows", "args": [atom, {"atom": "b"}]}, {"op": "times", "n": 3, "arg": atom},
        {"op": "within", "window": 10, "arg": {"op": "or", "args": [atom, {"atom": "c"}]}},
        {"op": "and", "args": [{"atom": "a"}, {"op": "not", "arg": {"atom": "b"}}]},
    ]))
    node = json.loads(json.dumps(node))
    target = node if "atom" in node else draw(st.sampled_from([node] + [a for a in node.get("args", [])
                                                                    if isinstance(a, dict)]))
    key = draw(st.sampled_from(["atom", "params", "tests", "op", "args", "n", "arg", "window"]))
    choice = draw(st.integers(0, 3))
    if choice == 0:
        target[key] = draw(JSON_VALUES)
    elif choice == 1:
        target[key] = draw(st.sampled_from([10**7, 10**30, -1, 0, 1e400, float("nan"), [], {}, "3"]))
    elif choice == 2:
        target[key] = _deep_json(draw(st.sampled_from([50, 300, 3000])), draw(st.sampled_from(["not", "list"])))
    else:
        target.pop(key, None)
    return node


@st.composite
def stream_bytes(draw: st.DrawFn) -> tuple[str, bytes]:
    """A stream file's name suffix and bytes: valid JSON Lines or arrays mutated, odd encodings, random bytes."""
    items = draw(st.lists(JSON_VALUES, max_size=6))
    suffix = draw(st.sampled_from([".jsonl", ".json", ".txt"]))
    as_array = suffix == ".json" or draw(st.booleans())
    text = json.dumps(items) if as_array else "".join(json.dumps(i) + "\n" for i in items)
    kind = draw(st.sampled_from(["valid", "truncate", "deep", "digits", "latin1", "surrogate", "bytes", "insert"]))
    if kind == "truncate":
        text = text[:draw(st.integers(0, len(text)))]
    elif kind == "deep":
        n = draw(st.sampled_from([50, 99, 101, 1000, 10_000]))
        text += "[" * n + "]" * n + "\n"
    elif kind == "digits":
        text += '{"a": ' + "7" * draw(st.sampled_from([999, 1001, 4300, 5000])) + "}\n"
    elif kind == "latin1":
        return suffix, (text + '"é"\n').encode("latin-1", "replace")
    elif kind == "surrogate":
        text += '"\\ud800"\n{"a": "\\udfff"}\n'
    elif kind == "bytes":
        return suffix, draw(st.binary(max_size=512))
    elif kind == "insert":
        pos = draw(st.integers(0, len(text)))
        text = text[:pos] + draw(st.sampled_from(TOKENS)) + text[pos:]
    return suffix, text.encode("utf-8", "surrogatepass")


SPECS = st.one_of(
    st.sampled_from(["all", "none", "same_key:a", "same_key:", "pairs:a-b", "pairs:a", "predicate:x.a == y.a",
                     "only:", "ignore:", "only:a,b", "set_of_split:,", "structural", "bogus", "@/nonexistent",
                     "@/", "{", "{}", '{"kind": 5}', '{"kind": "same_key", "fields": [[]]}',
                     '{"kind": "pairs", "pairs": [[1]]}', '{"kind": "predicate", "expr": 5}']),
    mutated(["predicate:" + p for p in PREDICATES]),
    JSON_VALUES.map(lambda v: json.dumps({"kind": "pairs", "pairs": v})),
    JSON_VALUES,
)


# ---- the checks -------------------------------------------------------------------------------


def _one_line(err: Exception) -> None:
    text = str(err)
    assert "\n" not in text and "\x1b" not in text, text[:300]
    assert len(text) < 2000, text[:300]


def _refuses(fn: Callable[[], Any], *kinds: type[Exception]) -> Any:
    try:
        return fn()
    except kinds as err:
        _one_line(err)
        return None


@pytest.fixture(autouse=True)
def _defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STORMBOUND_LIMITS", raising=False)
    set_limits({})


ITEMS = [{"a": 1, "key": 1, "v": 2.5, "k": "z", "tags": ["a"], "pos": {"0": 1}, "t": 1, "n": 3, "b": 2},
         {"a": "s"}, [1, 2], None, "x"]


def check_predicate(source: str) -> None:
    expr = _refuses(lambda: parse_expr(source), ExprError)
    if expr is None:
        return
    for x in ITEMS:
        for y in ITEMS[:2]:
            _refuses(lambda x=x, y=y: expr.evaluate(x=x, y=y), ExprEvalError)


def check_pattern_text(text: str) -> None:
    node = _refuses(lambda: parse_text(text, constants={"X": 3}), PatternError)
    if node is None:
        return
    automaton = _refuses(lambda: compile_pattern(Pattern("p", node)), PatternError)
    if automaton is None:
        return
    events = [{"type": t, "t": i, "v": i, "k": "k", "tuple": i % 3, "c": 1, "w": "k"}
              for i, t in enumerate("abcabxyz")]
    _refuses(lambda: CepEngine([Pattern("p", node)]).run(events), PatternError)


def check_pattern_json(doc: Any) -> None:
    node = _refuses(lambda: parse_ast(doc), PatternError)
    if node is not None:
        _refuses(lambda: compile_pattern(Pattern("p", node)), PatternError)


def check_stream(suffix: str, data: bytes) -> None:
    fd, name = tempfile.mkstemp(suffix=suffix)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        items = _refuses(lambda: list(read_stream(name)), DiffError, TopologyError)
        if items is not None:
            result = _refuses(lambda: diff_streams(items, list(reversed(items)), "none"), DiffError)
            assert result is None or result.equivalent
            _refuses(lambda: diff_streams(items, items, "same_key:a"), DiffError)
    finally:
        Path(name).unlink()


def check_spec(spec: Any) -> None:
    for build in (lambda: Matcher(spec, None), lambda: Matcher("all", spec)):
        matcher = _refuses(build, DiffError)
        if matcher is not None:
            _refuses(lambda m=matcher: m.feed([(0, ITEMS[0]), (1, ITEMS[1]), (1, ITEMS[0]), (0, ITEMS[1])]),
                     DiffError)


# ---- CI size and the long runs --------------------------------------------------------------


@CI
@given(mutated(PREDICATES))
def test_predicates(source: str) -> None:
    check_predicate(source)


@CI
@given(mutated(PATTERNS) | mutated(["p: " + p for p in PATTERNS]).map(lambda t: t.split(": ", 1)[-1]))
def test_pattern_text(text: str) -> None:
    check_pattern_text(text)


@CI
@given(st.lists(mutated(["define X = 3", "p: a -> b", "q [strict, by k]: @p -> c", "# c"]), min_size=1,
                max_size=4).map("\n".join))
def test_pattern_files(source: str) -> None:
    _refuses(lambda: parse_pattern_text(source, "f.cep"), PatternError)


@CI
@given(json_patterns())
def test_pattern_json(doc: Any) -> None:
    check_pattern_json(doc)


@CI
@given(stream_bytes())
def test_streams(case: tuple[str, bytes]) -> None:
    check_stream(*case)


@CI
@given(SPECS)
def test_specs(spec: Any) -> None:
    check_spec(spec)


@pytest.mark.fuzz
@LONG
@given(mutated(PREDICATES))
def test_predicates_long(source: str) -> None:
    check_predicate(source)


@pytest.mark.fuzz
@LONG
@given(mutated(PATTERNS))
def test_pattern_text_long(text: str) -> None:
    check_pattern_text(text)


@pytest.mark.fuzz
@LONG
@given(json_patterns())
def test_pattern_json_long(doc: Any) -> None:
    check_pattern_json(doc)


@pytest.mark.fuzz
@LONG
@given(stream_bytes())
def test_streams_long(case: tuple[str, bytes]) -> None:
    check_stream(*case)


@pytest.mark.fuzz
@LONG
@given(SPECS)
def test_specs_long(spec: Any) -> None:
    check_spec(spec)


def test_a_long_pattern_name_is_cut_in_the_message() -> None:
    """A header names the pattern in every message about its body: a name of thousands of characters is cut."""
    name = "p10" * 1000
    with pytest.raises(PatternError) as err:
        parse_pattern_text(f"# c\n{name}: a -> \x1b", "f.cep")
    _one_line(err.value)
    assert str(err.value).startswith("f.cep line 2 (p10p10")

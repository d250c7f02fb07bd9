"""The safe expression language: grammar, evaluation, and clear rejection of everything else."""

from __future__ import annotations

import contextlib
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.expr import ExprError, ExprEvalError, compile_predicate, parse_expr


@pytest.mark.parametrize("source,x,y,expected", [
    ("x == y", 1, 1, True),
    ("x != y", 1, 1, False),
    ("not ((x < 0 and y < 0) or (x > 0 and y > 0))", 1, 2, False),
    ("not ((x < 0 and y < 0) or (x > 0 and y > 0))", 0, 2, True),
    ("x.key == y.key", {"key": "a"}, {"key": "a"}, True),
    ("x['kind'] == 'EOD' || y[\"kind\"] == \"EOD\"", {"kind": "x"}, {"kind": "EOD"}, True),
    ("!(x.a && y.a)", {"a": True}, {"a": False}, True),
    ("x.pos[1] + y.pos.0 * 2 == 9", {"pos": [0, 5]}, {"pos": [2, 0]}, True),
    ("0 < x.ts <= y.ts", {"ts": 3}, {"ts": 3}, True),
    ("0 < x.ts < y.ts", {"ts": 3}, {"ts": 3}, False),
    ("-x + 10 // 3 - 7 % 4 == -4", 4, None, True),
    ("x / 4 == 0.5 and 1.5e1 == 15", 2, None, True),
    ("x.type in ['Inc', 'Dec'] and y.type not in ['Inc']", {"type": "Inc"}, {"type": "Barrier"}, True),
    ("abs(x.n - y) <= 2 and len(x.__class__) == 1", {"n": 5}, 3, None),  # __class__ is only a (missing) field
    ("x.a.b == null and y == None and true and True", {"a": {"b": None}}, None, True),
    ("x.name == 'it\\'s'", {"name": "it's"}, None, True),
    ("max(x, y) - min(x, y) == 3", 1, 4, True),
])
def test_evaluates(source: str, x: object, y: object, expected: object) -> None:
    expr = parse_expr(source)
    if expected is None:
        with pytest.raises(ExprEvalError, match="no field '__class__'"):
            expr.evaluate(x=x, y=y)
    else:
        assert expr.evaluate(x=x, y=y) == expected


@pytest.mark.parametrize("source,position,fragment", [
    ("__import__('os')", 0, "unknown name '__import__'"),
    ("x.__class__.__mro__ == 1 or open('f')", 28, "unknown name 'open'"),
    ("x = 1", 2, "use '=='"),
    ("x @ y", 2, "unexpected character '@'"),
    ("x +", 3, "unexpected end of expression"),
    ("z.a == 1", 0, "unknown name 'z'"),
    ("x.", 2, "field name after '.'"),
    ("(x == y", 7, "expected ')'"),
    ("x and or y", 6, "unexpected 'or'"),
    ("", 0, "empty expression"),
    ("1abc", 0, "malformed number"),
    ("x == 'abc", 5, "unterminated string"),
    ("x == y y", 7, "unexpected 'y'"),
    ("lambda: 1", 6, "unexpected character ':'"),
    ("lambda x1 == 1", 0, "unknown name 'lambda'"),
    ("x if y else 1", 2, "unexpected 'if'"),
    ("x; y", 1, "unexpected character ';'"),
    ("x ** 2", 3, "unexpected '*'"),
    ("'a\\q'", 2, "unknown escape"),
    ("len", 0, "unknown name 'len'"),
])
def test_rejects_outside_grammar(source: str, position: int, fragment: str) -> None:
    with pytest.raises(ExprError) as info:
        parse_expr(source)
    assert info.value.position == position
    assert fragment in str(info.value)
    assert f"position {position}" in str(info.value)


@pytest.mark.parametrize("source,x,fragment", [
    ("x.a < 1", {"a": "s"}, "cannot compare 's' < 1"),
    ("x.a == 1", {"b": 1}, "no field 'a'"),
    ("x / 0 == 1", 1, "division by zero"),
    ("x[5] == 1", [1], "out of range"),
    ("x.a == 1", 3, "has no fields"),
    ("x + 'a' == 1", 1, "cannot apply '+'"),
    ("-x == 1", "s", "cannot negate"),
])
def test_evaluation_errors_are_clear(source: str, x: object, fragment: str) -> None:
    with pytest.raises(ExprEvalError, match=re.escape(fragment)):
        parse_expr(source).evaluate(x=x, y=None)


def test_other_variable_names_for_pattern_guards() -> None:
    expr = parse_expr("e.comp == 'split' and prev.t < e.t", names=("e", "prev"))
    assert expr.evaluate(e={"comp": "split", "t": 2}, prev={"t": 1}) is True
    with pytest.raises(ExprError, match="unknown name 'x'"):
        parse_expr("x == 1", names=("e",))
    assert expr.function()({"comp": "a", "t": 1}, {"t": 0}) is False


def test_and_or_short_circuit_skips_missing_fields() -> None:
    pred = compile_predicate("x.kind == 'taxi' and y.kind == 'taxi' and x.taxiId == y.taxiId")
    assert pred({"kind": "EOD"}, {"kind": "taxi", "taxiId": 1}) is False


@settings(max_examples=200, deadline=None)
@given(a=st.integers(-1000, 1000), b=st.integers(-1000, 1000).filter(lambda v: v != 0))
def test_arithmetic_matches_python(a: int, b: int) -> None:
    expr = parse_expr("(x + y) * 3 - x // y + x % y - -x")
    assert expr.evaluate(x=a, y=b) == (a + b) * 3 - a // b + a % b - -a


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="xy.+-*/%=!<>()[]'\" 0123456789abcdnotrl&|_,", max_size=25))
def test_never_crashes_on_junk(source: str) -> None:
    """Any text either parses or raises ExprError; evaluation raises only ExprEvalError."""
    try:
        expr = parse_expr(source)
    except ExprError as err:
        assert 0 <= err.position <= len(source)
        return
    with contextlib.suppress(ExprEvalError):
        expr.evaluate(x={"a": 1}, y=[1, 2])

"""The CEP pattern language: text and JSON forms, errors, parameters, time windows, NOT, contexts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.cep import (
    Pattern,
    PatternError,
    compile_ast,
    find_matches,
    load_patterns,
    parse_ast,
    parse_pattern_text,
    parse_text,
    to_ast,
    to_text,
)
from app.cep.nodes import And, Atom, Follows, HoldsFor, Not, Or, Plus, Star, Times, Within


def ev(kind: str, t: float = 0.0, **attrs: Any) -> dict[str, Any]:
    return {"type": kind, "t": t, **attrs}


def run(text: str, events: list[dict[str, Any]], **options: Any) -> list[list[int]]:
    """Indices of the events of every match."""
    return [m.indices for m in find_matches([Pattern(id="p", ast=parse_text(text), **options)], events)]


# ---- parsing ---------------------------------------------------------------------


def test_precedence_follows_binds_tighter_than_and_then_or() -> None:
    assert parse_text("a -> b OR c AND d -> e") == Or((
        Follows((Atom("a"), Atom("b"))), And((Atom("c"), Follows((Atom("d"), Atom("e")))))))


def test_window_applies_to_everything_before_it() -> None:
    node = parse_text("fail(c) -> fail(c) -> fail(c) within 10")
    assert isinstance(node, Within) and node.window == 10 and isinstance(node.arg, Follows)
    assert parse_text("(a -> b)[1000]") == Within(Follows((Atom("a"), Atom("b"))), 1000)
    assert parse_text("(a -> b) holdsFor 5") == HoldsFor(Follows((Atom("a"), Atom("b"))), 5)


def test_atoms_with_parameters_and_tests() -> None:
    node = parse_text('take(comp, tuple=x, queue >= 10, msg = "m1")')
    assert node == Atom("take", (("comp", "comp"), ("tuple", "x")), (("queue", ">=", 10), ("msg", "==", "m1")))


def test_multiplicities_and_not() -> None:
    assert parse_text("a{3} -> b{*} -> c{+}") == Follows((Times(Atom("a"), 3), Star(Atom("b")), Plus(Atom("c"))))
    assert parse_text("a -> NOT b -> c") == Follows((Atom("a"), Not(Atom("b")), Atom("c")))


@pytest.mark.parametrize("text, fragment", [
    ("", "empty"),
    ("a ->", "position 4: expected an event type"),
    ("a -> (b", "expected )"),
    ("a{0}", "at least 1"),
    ("a{x}", "inside { }"),
    ("a within", "expected a number"),
    ("a(b > )", "expected a number, a string"),
    ("a $ b", "unexpected character"),
    ("a b", "unexpected text after the pattern"),
    ("x(v > $nope)", "unknown constant $nope"),
])
def test_text_errors_are_one_line_with_position(text: str, fragment: str) -> None:
    with pytest.raises(PatternError) as err:
        parse_text(text, "p")
    message = str(err.value)
    assert fragment in message and "\n" not in message and message.startswith("p")


@pytest.mark.parametrize("data, where", [
    ({"op": "follows", "args": [{"atom": "a"}]}, "ast.args"),
    ({"op": "bogus"}, "ast.op"),
    ({"op": "times", "n": 0, "arg": {"atom": "a"}}, "ast.n"),
    ({"op": "within", "arg": {"atom": "a"}}, "ast.window"),
    ({"atom": ""}, "ast.atom"),
    ({"atom": "a", "tests": [["q", "~", 1]]}, "ast.tests[0]"),
    ([], "ast"),
])
def test_json_errors_name_the_field(data: Any, where: str) -> None:
    with pytest.raises(PatternError) as err:
        parse_ast(data)
    assert str(err.value).startswith(where + ":")


def test_unmatchable_patterns_are_rejected() -> None:
    with pytest.raises(PatternError, match="without any event"):
        compile_ast(parse_text("a{*}"))
    with pytest.raises(PatternError, match="deterministic"):
        compile_ast(parse_text("NOT ((a -> b) OR (a -> c))"))
    with pytest.raises(PatternError, match="already contains NOT"):
        compile_ast(parse_text("NOT (a -> NOT b)"))


names = st.sampled_from(["a", "b", "c", "fail", "take"])
atoms = st.builds(lambda t, p: Atom(t, (("comp", p),) if p else ()), names, st.sampled_from(["", "c", "x"]))


def _trees(children: st.SearchStrategy) -> st.SearchStrategy:
    pair = st.lists(children, min_size=2, max_size=3).map(tuple)
    return st.one_of(
        pair.map(Follows), pair.map(Or), pair.map(And),
        st.builds(Times, children, st.integers(1, 3)), children.map(Plus), children.map(Not),
        st.builds(Within, children, st.sampled_from([1.0, 2.5, 10.0])),
    )


@settings(max_examples=150, deadline=None)
@given(st.recursive(atoms, _trees, max_leaves=6))
def test_text_and_json_forms_round_trip(node: Any) -> None:
    assert parse_text(to_text(node)) == node
    assert parse_ast(json.loads(json.dumps(to_ast(node)))) == node


# ---- matching ------------------------------------------------------------------


def test_parameters_join_across_sub_patterns() -> None:
    events = [ev("fail", 0, comp="A"), ev("fail", 1, comp="B"), ev("fail", 2, comp="A"),
              ev("fail", 3, comp="B"), ev("fail", 4, comp="A")]
    assert run("fail(comp=c) -> fail(comp=c) -> fail(comp=c)", events) == [[0, 2, 4]]
    matches = find_matches([Pattern(id="p", ast=parse_text("fail(comp=c) -> fail(comp=c)"))], events)
    # chronicle: every fail also starts a new partial match, so A's second fail pairs with its third
    assert [(m.indices, m.bindings) for m in matches] == [
        ([0, 2], {"c": "A"}), ([1, 3], {"c": "B"}), ([2, 4], {"c": "A"})]


def test_parameters_join_different_attributes() -> None:
    events = [ev("emit", 0, tuple="t1"), ev("take", 1, tuple="t2"), ev("take", 2, tuple="t1")]
    assert run("emit(tuple=x) -> take(tuple=x)", events) == [[0, 2]]


def test_missing_attribute_does_not_match() -> None:
    assert run("a(comp) -> b(comp)", [ev("a", 0, comp="X"), ev("b", 1)]) == []


def test_within_is_inclusive_and_drops_late_partial_matches() -> None:
    events = [ev("a", 0), ev("b", 10), ev("a", 20), ev("b", 30.5)]
    assert run("(a -> b) within 10", events) == [[0, 1]]
    # the a at 20 timed out at 30.5, so a later a starts afresh
    assert run("(a -> b) within 10", events + [ev("a", 31), ev("b", 35)]) == [[0, 1], [4, 5]]


def test_nested_window_only_constrains_its_part() -> None:
    events = [ev("a", 0), ev("b", 50), ev("c", 52)]
    assert run("a -> ((b -> c) within 5)", events) == [[0, 1, 2]]
    assert run("(a -> b -> c) within 5", events) == []


def test_holds_for_needs_the_span_to_last() -> None:
    events = [ev("up", 0), ev("up", 2), ev("down", 3), ev("up", 10), ev("up", 16), ev("down", 17)]
    assert run("((up -> up) holdsFor 5) -> down", events, context="strict") == [[3, 4, 5]]
    # chronicle pairs the oldest waiting up (at 2) with the up at 10: a span of 8
    assert run("((up -> up) holdsFor 5) -> down", events) == [[1, 3, 5]]


def test_negation_of_the_next_event() -> None:
    assert run("a -> NOT b -> c", [ev("a"), ev("x"), ev("c")]) == [[0, 1, 2]]
    assert run("a -> NOT b -> c", [ev("a"), ev("b"), ev("c")]) == []
    # NOT (a -> b): the first event that breaks the sequence completes it; in chronicle every
    # event also starts a new attempt (b and z are not a, so they match on their own)
    assert run("NOT (a -> b)", [ev("a"), ev("b"), ev("z")]) == [[1], [2]]
    assert run("NOT (a -> b)", [ev("a"), ev("z")]) == [[0, 1], [1]]
    assert run("NOT (a -> b)", [ev("a"), ev("z")], context="strict") == [[0, 1]]


def test_and_not_abandons_a_partial_match() -> None:
    events = [ev("take", 0, tuple="t1"), ev("take", 1, tuple="t2"), ev("fail", 2, tuple="t1"),
              ev("ack", 3, tuple="t1"), ev("ack", 4, tuple="t2")]
    # a take acked without failing first: t1 failed in between, so only t2 matches
    assert run("take(tuple) -> (ack(tuple) AND NOT fail(tuple))", events) == [[1, 4]]
    assert run("take(tuple) -> ack(tuple)", events) == [[0, 3], [1, 4]]
    with pytest.raises(PatternError, match="exactly one pattern without NOT"):
        compile_ast(parse_text("NOT a AND NOT b"))
    with pytest.raises(PatternError, match="an OR of event types"):
        compile_ast(parse_text("a AND NOT (b -> c)"))


def test_tests_compare_with_constants() -> None:
    events = [ev("queue", t, comp="B", queue=q) for t, q in enumerate([5, 1200, 1500, 900, 2000, 3000, 4000])]
    assert run("queue(queue > 1000){3}", events, context="strict", only=("queue",)) == [[4, 5, 6]]
    assert run("queue(queue > 1000){3}", events) == [[1, 2, 4], [2, 4, 5], [4, 5, 6]]


def test_partitions_match_each_key_separately() -> None:
    events = [ev("queue", 0, comp="A", queue=2000), ev("queue", 0, comp="B", queue=2000),
              ev("queue", 1, comp="A", queue=2000), ev("queue", 1, comp="B", queue=10),
              ev("queue", 2, comp="A", queue=2000), ev("queue", 2, comp="B", queue=2000)]
    assert run("queue(queue > 1000){3}", events, context="strict", by=("comp",)) == [[0, 2, 4]]


def test_runaway_partial_matches_stop_with_a_clear_error() -> None:
    from app.cep import PatternMatcher

    matcher = PatternMatcher(Pattern(id="combos", ast=parse_text("a -> b{+} -> c"), context="any"))
    matcher.max_partial = 1000
    with pytest.raises(PatternError, match=r"combos: more than 1,000 partial matches at event 10 \(context any\)"):
        matcher.feed_all([ev("a")] + [ev("b")] * 20, 0, [])


def test_partition_by_a_list_valued_attribute() -> None:
    events = [ev("emit", 0, anchors=["t1", "t2"]), ev("emit", 1, anchors=["t3"]), ev("emit", 2, anchors=["t1", "t2"])]
    assert run("emit -> emit", events, by=("anchors",)) == [[0, 2]]


def test_timeout_needs_a_top_level_window() -> None:
    with pytest.raises(PatternError, match="timeout option needs a 'within'"):
        find_matches([Pattern(id="p", ast=parse_text("a -> (b within 3)"), timeout=True)], [])


def test_timeout_reports_partial_matches_whose_window_passed() -> None:
    events = [ev("take", 0, tuple="t1"), ev("take", 1, tuple="t2"), ev("ack", 2, tuple="t1"),
              ev("emit", 40, tuple="t9")]
    pattern = Pattern(id="late", ast=parse_text("(take(tuple) -> ack(tuple)) within 30"), timeout=True, by=("tuple",))
    matches = find_matches([pattern], events)
    assert [(m.kind, m.indices, m.bindings, m.at) for m in matches] == [("timeout", [1], {"tuple": "t2"}, 3)]


@pytest.mark.parametrize("context, expected", [
    ("chronicle", [[0, 2], [1, 4]]),
    ("immediate", [[0, 2]]),  # x fires nothing: the second a's partial match is discarded
    ("strict", [[1, 2]]),
    ("every", [[0, 2], [1, 2]]),
    ("any", [[0, 2], [1, 2], [0, 4], [1, 4]]),
    ("once", [[0, 2]]),
    ("first", [[0, 2]]),
])
def test_contexts_on_one_stream(context: str, expected: list[list[int]]) -> None:
    events = [ev("a"), ev("a"), ev("b"), ev("x"), ev("b")]
    assert run("a -> b", events, context=context) == expected


def test_skip_past_last_keeps_other_parameter_values() -> None:
    events = [ev("f", t, comp=c) for t, c in enumerate("AABAAB")]
    assert run("f(comp) -> f(comp)", events, skip="past_last") == [[0, 1], [3, 4], [2, 5]]


# ---- pattern files -------------------------------------------------------------


def test_text_file_with_defines_options_and_continuations(tmp_path: Path) -> None:
    source = (
        "# header comment\n\n"
        "define window = 5\n"
        "# Two failures close together.\n"
        "twice [immediate, by comp, skip=past_last]:\n"
        "    fail(comp) -> fail(comp)\n"
        "    within $window\n"
        "pair: a -> b\n"
    )
    path = tmp_path / "p.cep"
    path.write_text(source)
    first, second = load_patterns(path)
    assert (first.id, first.context, first.by, first.skip, first.description) == (
        "twice", "immediate", ("comp",), "past_last", "Two failures close together.")
    assert isinstance(first.ast, Within) and first.ast.window == 5
    assert (second.id, second.context, second.ast) == ("pair", "chronicle", Follows((Atom("a"), Atom("b"))))
    assert parse_pattern_text(source, "p", {"window": 7})[0].ast.window == 7  # type: ignore[union-attr]  # a Within


def test_pattern_references_in_a_file() -> None:
    first, second = parse_pattern_text("pair: a -> b\nthen_c [strict]: @pair{2} -> c\n")
    assert second.ast == Follows((Times(first.ast, 2), Atom("c")))
    with pytest.raises(PatternError, match=r"line 1 \(x\): position 0: unknown pattern @later"):
        parse_pattern_text("x: @later\nlater: a\n")


def test_json_file(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"context": "strict", "patterns": [
        {"id": "x", "text": "a -> b"}, {"id": "y", "ast": {"op": "or", "args": [{"atom": "a"}, {"atom": "b"}]},
                                        "context": "chronicle"}]}))
    x, y = load_patterns(path)
    assert (x.context, y.context, to_text(y.ast)) == ("strict", "chronicle", "a OR b")


@pytest.mark.parametrize("source, fragment", [
    ("just words\n", "line 1: expected 'NAME [options]: PATTERN'"),
    ("p [sideways]: a\n", "unknown option 'sideways'"),
    ("p [context=lazy]: a\n", "unknown context 'lazy'"),
    ("p: a\np: b\n", "already defined"),
    ("define x = nope\n", "define x"),
    ("# only a comment\n", "no pattern found"),
    ("p: a ->\n", "line 1 (p): position 4"),
])
def test_pattern_file_errors(tmp_path: Path, source: str, fragment: str) -> None:
    path = tmp_path / "bad.cep"
    path.write_text(source)
    with pytest.raises(PatternError) as err:
        load_patterns(path)
    assert fragment in str(err.value) and "\n" not in str(err.value)


def test_json_file_errors(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('[{"id": "p", "text": "a", "skip": "sideways"}]')
    with pytest.raises(PatternError, match=r"bad.json\[0\] \(p\).skip: unknown skip strategy"):
        load_patterns(path)
    path.write_text('[{"text": "a"}]')
    with pytest.raises(PatternError, match=r"\.id: every pattern needs"):
        load_patterns(path)
    with pytest.raises(PatternError, match="no such file"):
        load_patterns(tmp_path / "missing.cep")


# ---- reference models of the contexts on `a -> b` ---------------------------------

streams = st.lists(st.sampled_from("abx"), max_size=40)


def _reference(stream: list[str], context: str) -> list[tuple[int, int]]:
    """Straightforward models of each context for `a -> b` (pairs of event positions)."""
    pairs: list[tuple[int, int]] = []
    waiting: list[int] = []
    seen_a: list[int] = []
    for i, kind in enumerate(stream):
        if context == "any" and kind == "b":
            pairs += [(a, i) for a in seen_a]
        if context == "chronicle" and kind == "b" and waiting:
            pairs.append((waiting.pop(0), i))  # oldest a with this b
        if context == "every" and kind == "b":
            pairs += [(a, i) for a in waiting]  # every waiting a completes
            waiting = []
        if context == "immediate":
            if kind == "b" and waiting:
                pairs.append((waiting.pop(0), i))
            elif kind == "x" or (kind == "b" and not waiting):
                waiting = []  # nothing fired: partial matches are discarded
        if kind == "a":
            waiting.append(i)
            seen_a.append(i)
    return pairs


@settings(max_examples=200, deadline=None)
@given(streams, st.sampled_from(["chronicle", "immediate", "every", "any"]))
def test_contexts_agree_with_reference_models(stream: list[str], context: str) -> None:
    events = [ev(kind, float(i)) for i, kind in enumerate(stream)]
    got = [tuple(m) for m in run("a -> b", events, context=context)]
    assert sorted(got) == sorted(_reference(stream, context))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list("ab(){}[],=<>!-+*|&$@\"' 0123456789.")
                                + ["OR ", "AND ", "NOT ", " within ", " holdsFor ", "->"]), max_size=30).map("".join))
def test_any_text_is_a_pattern_or_one_clear_error(text: str) -> None:
    try:
        compile_ast(parse_text(text, "p"))
    except PatternError as err:
        assert str(err).startswith("p") and "\n" not in str(err)

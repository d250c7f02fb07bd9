"""The automaton compiler against a reference: the compiled automaton accepts exactly the event
sequences the pattern describes (no contexts, parameters or windows involved)."""

from __future__ import annotations

import itertools
from functools import cache
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from app.cep import compile_ast
from app.cep.nodes import And, Atom, Follows, Or, PatternNode, Plus, Star, Times

ALPHABET = "abc"


def accepts_reference(node: PatternNode, seq: tuple[str, ...]) -> bool:
    """Language membership straight from the definitions (exponential, fine for short sequences)."""

    @cache
    def m(n: PatternNode, s: tuple[str, ...]) -> bool:
        if isinstance(n, Atom):
            return s == (n.type,)
        if isinstance(n, Or):
            return any(m(a, s) for a in n.args)
        if isinstance(n, Follows):
            return seq_of(n.args, s)
        if isinstance(n, And):
            return any(seq_of(perm, s) for perm in itertools.permutations(n.args))
        if isinstance(n, Times):
            return seq_of((n.arg,) * n.n, s)
        if isinstance(n, Star):
            return s == () or any(m(n.arg, s[:k]) and m(n, s[k:]) for k in range(1, len(s) + 1))
        if isinstance(n, Plus):
            return any(m(n.arg, s[:k]) and m(Star(n.arg), s[k:]) for k in range(0, len(s) + 1))
        raise AssertionError(n)

    def seq_of(args: tuple[PatternNode, ...], s: tuple[str, ...]) -> bool:
        if not args:
            return s == ()
        return any(m(args[0], s[:k]) and seq_of(args[1:], s[k:]) for k in range(0, len(s) + 1))

    return m(node, seq)


def accepts_automaton(node: PatternNode, seq: tuple[str, ...]) -> bool:
    """Run the compiled automaton as an NFA over the whole sequence."""
    automaton = compile_ast(node)
    current = {0}
    for kind in seq:
        current = {e.dst for e in automaton.transitions() if e.src in current and e.type == kind}
    return bool(current & automaton.accepting)


atoms = st.sampled_from(ALPHABET).map(Atom)


def _trees(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    pair = st.lists(children, min_size=2, max_size=3).map(tuple)
    return st.one_of(
        pair.map(Follows), pair.map(Or), st.lists(children, min_size=2, max_size=2).map(tuple).map(And),
        st.builds(Times, children, st.integers(1, 3)), children.map(Star), children.map(Plus),
    )


@settings(max_examples=300, deadline=None)
@given(st.recursive(atoms, _trees, max_leaves=5), st.lists(st.sampled_from(ALPHABET), max_size=6).map(tuple))
def test_compiled_automaton_accepts_the_pattern_language(node: PatternNode, seq: tuple[str, ...]) -> None:
    assume(not accepts_reference(node, ()))  # patterns that match no event are rejected by the compiler
    assert accepts_automaton(node, seq) == accepts_reference(node, seq)


def test_some_tricky_constructions() -> None:
    cases = {
        "(a -> b){*} -> c": [("c",), ("a", "b", "c"), ("a", "b", "a", "b", "c")],
        "a{*} -> b{*} -> c": [("c",), ("a", "b", "c"), ("b", "c"), ("a", "a", "c")],
        "((a -> b){*} -> c) OR d": [("d",), ("a", "b", "c")],
        "(a{+}){+} -> b": [("a", "b"), ("a", "a", "a", "b")],
    }
    rejected = {
        "a{*} -> b{*} -> c": [("b", "a", "c")],
        "((a -> b){*} -> c) OR d": [("a", "b", "d"), ("a", "b")],
    }
    from app.cep import parse_text

    for text, good in cases.items():
        for seq in good:
            assert accepts_automaton(parse_text(text), seq), (text, seq)
    for text, bad in rejected.items():
        for seq in bad:
            assert not accepts_automaton(parse_text(text), seq), (text, seq)


def _random_pattern(rng: Any, depth: int = 0) -> PatternNode:
    from app.cep.nodes import HoldsFor, Not, Within

    if depth > 3 or rng.random() < 0.35:
        binds = (("k", "v"),) if rng.random() < 0.3 else ()
        tests = (("n", ">", rng.randint(0, 3)),) if rng.random() < 0.2 else ()
        return Atom(rng.choice(ALPHABET), binds, tests)
    kind = rng.choice(["follows", "or", "and", "times", "star", "plus", "not", "within", "holds", "unless"])

    def sub() -> PatternNode:
        return _random_pattern(rng, depth + 1)

    return {
        "follows": lambda: Follows(tuple(sub() for _ in range(rng.randint(2, 3)))),
        "or": lambda: Or((sub(), sub())),
        "and": lambda: And((sub(), sub())),
        "times": lambda: Times(sub(), rng.randint(1, 3)),
        "star": lambda: Follows((Star(sub()), sub())),
        "plus": lambda: Plus(sub()),
        "not": lambda: Not(sub()),
        "within": lambda: Within(sub(), rng.choice([1.0, 3.0])),
        "holds": lambda: HoldsFor(sub(), rng.choice([1.0, 3.0])),
        "unless": lambda: And((sub(), Not(Atom(rng.choice(ALPHABET))))),
    }[kind]()


def test_engine_invariants_on_random_patterns() -> None:
    """Every context, skip and partitioning on random patterns: no crash, matches list their events in
    stream order, and the count of partial matches equals the live tokens."""
    import random

    from app.cep import Pattern, PatternError, PatternMatcher

    rng = random.Random(20261122)
    checked = 0
    while checked < 60:
        node = _random_pattern(rng)
        try:
            window = compile_ast(node).top_window
        except PatternError:
            continue
        checked += 1
        events = [{"type": rng.choice(ALPHABET + "x"), "t": j * 0.7, "k": rng.choice("XY"), "n": rng.randint(0, 4)}
                  for j in range(20)]
        for context in ("chronicle", "immediate", "strict", "every", "any", "once", "first"):
            for skip in ("no_skip", "past_last", "to_next"):
                matcher = PatternMatcher(Pattern(id="p", ast=node, context=context, skip=skip,
                                                 by=("k",) if rng.random() < 0.5 else (),
                                                 timeout=window is not None and rng.random() < 0.5))
                found: list[Any] = []
                matcher.feed_all(events[:10] if context == "any" else events, 0, found)
                for run in matcher.runs.values():
                    assert run.partial == sum(1 for tokens in run.tokens for tok in tokens if tok.alive)
                for match in found:
                    assert match.indices == sorted(set(match.indices))
                    assert all(events[i] is e for i, e in zip(match.indices, match.events, strict=True))

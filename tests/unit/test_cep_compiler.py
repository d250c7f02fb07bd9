"""The automaton compiler against a reference: the compiled automaton accepts exactly the event
sequences the pattern describes (no contexts, parameters or windows involved)."""

from __future__ import annotations

import itertools
from functools import lru_cache
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from app.runs.cep import compile_ast
from app.runs.cep.syntax import And, Atom, Follows, Node, Or, Plus, Star, Times

ALPHABET = "abc"


def accepts_reference(node: Node, seq: tuple[str, ...]) -> bool:
    """Language membership straight from the definitions (exponential, fine for short sequences)."""

    @lru_cache(maxsize=None)
    def m(n: Node, s: tuple[str, ...]) -> bool:
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

    def seq_of(args: tuple[Node, ...], s: tuple[str, ...]) -> bool:
        if not args:
            return s == ()
        return any(m(args[0], s[:k]) and seq_of(args[1:], s[k:]) for k in range(0, len(s) + 1))

    return m(node, seq)


def accepts_automaton(node: Node, seq: tuple[str, ...]) -> bool:
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
def test_compiled_automaton_accepts_the_pattern_language(node: Node, seq: tuple[str, ...]) -> None:
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
    from app.runs.cep import parse_text

    for text, good in cases.items():
        for seq in good:
            assert accepts_automaton(parse_text(text), seq), (text, seq)
    for text, bad in rejected.items():
        for seq in bad:
            assert not accepts_automaton(parse_text(text), seq), (text, seq)

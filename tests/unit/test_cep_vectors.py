"""Every case of cep-vectors.json (tests/data/vectors): VIATRA-CEP match counts per event and automaton
shapes, and the FlinkCEP / Esper / Apama documentation examples whose operator we have."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from app.cep import (
    Pattern,
    PatternMatcher,
    compile_ast,
    find_matches,
    parse_ast,
    parse_pattern_text,
    parse_text,
)

VECTORS = Path(__file__).resolve().parents[1] / "data" / "vectors" / "cep-vectors.json"


def _cases(kind: str, engines: tuple[str, ...]) -> list[dict[str, Any]]:
    return [c for c in json.loads(VECTORS.read_text()) if c["kind"] == kind and c["engine"] in engines]


def _ids(cases: list[dict[str, Any]]) -> list[str]:
    return [c["name"] for c in cases]



VIATRA_MATCH = _cases("match", ("viatra-cep",))
VIATRA_SHAPE = _cases("automaton_structure", ("viatra-cep",))
OTHER_MATCH = _cases("match", ("flinkcep", "esper", "apama"))


def test_the_file_has_every_case() -> None:
    assert len(VIATRA_MATCH) == 27 and len(VIATRA_SHAPE) == 37 and len(OTHER_MATCH) == 27


@pytest.mark.parametrize("case", VIATRA_MATCH, ids=_ids(VIATRA_MATCH))
def test_viatra_match_counts_after_each_event(case: dict[str, Any]) -> None:
    matchers = [PatternMatcher(Pattern(id=p["id"], ast=parse_ast(p["ast"]), context=case["context"]))
                for p in case["patterns"]]
    # the compact text of each pattern parses to the same AST as its JSON form
    for p in case["patterns"]:
        assert parse_text(p["vepl"]) == parse_ast(p["ast"])
    counts = {p["id"]: 0 for p in case["patterns"]}
    indices: dict[str, list[int]] = {p["id"]: [] for p in case["patterns"]}
    expected_steps = case.get("expected_counts_after_each_event") or case["expected_asserted_after_each_event"]
    for i, name in enumerate(case["events"]):
        out: list = []
        for m in matchers:
            m.feed({"type": name, "t": float(i)}, i, out)
        for match in out:
            counts[match.pattern] += 1
            indices[match.pattern].append(i + 1)
            assert match.indices[-1] == i and [e["type"] for e in match.events][-1] == name
        # upstream asserts a subset of the counters after each event; all of them must agree
        for pid, want in expected_steps[i].items():
            assert counts[pid] == want, f"after event {i + 1} ({name}): {pid} = {counts[pid]}, expected {want}"
        if "expected_full_counts_after_each_event_derived" in case:
            assert counts == case["expected_full_counts_after_each_event_derived"][i]
    assert indices == (case.get("match_event_indices") or case["match_event_indices_derived"])
    if "expected_final_counts" in case:
        assert counts == case["expected_final_counts"]


# VIATRA's compiler tests refer to other patterns of their event model by name; so do we (`@name`).
PRELUDE = "follows: a -> b\nor: a OR b\nparamsFollows: a_1(p) -> b_1(p)\n"


def _shape_patterns(vepl: str) -> list[Any]:
    """The case as written upstream (references resolved by the file parser), and its spelled-out form."""
    written = re.sub(r"\s*\(= .*\)\s*$", "", vepl)
    written = re.sub(r"(?<![A-Za-z_@])(follows|or|paramsFollows)(?![A-Za-z_(])", r"@\1", written)
    nodes = [parse_pattern_text(PRELUDE + "case: " + written + "\n", "vepl")[-1].ast]
    spelled = re.search(r"\(= (.*)\)\s*$", vepl)
    if spelled:
        nodes.append(parse_text(spelled.group(1)))
    return nodes


@pytest.mark.parametrize("case", VIATRA_SHAPE, ids=_ids(VIATRA_SHAPE))
def test_viatra_automaton_shapes(case: dict[str, Any]) -> None:
    for node in _shape_patterns(case["vepl"]):  # as written upstream, then spelled out
        automaton = compile_ast(node)
        shape = automaton.shape()
        for key, want in case["expected"].items():
            assert shape[key] == want, f"{key}: {shape[key]} != {want}\n{automaton.describe()}"
        # upstream also asserts: no epsilon transitions (we have none by construction), no orphan
        # transitions and no orphan states (every state is reachable from the initial one)
        reach = {0}
        for _ in range(automaton.n_states):
            reach |= {e.dst for e in automaton.transitions() if e.src in reach}
        assert reach | {automaton.trap} == set(range(automaton.n_states))
        assert all(e.src in reach for e in automaton.edges)


# How each documented operator maps onto our contexts and skip strategies.
SUPPORTED: dict[str, tuple[str, str, str]] = {
    "flink_contiguity_strict_next": ("a -> b", "strict", "no_skip"),
    "flink_contiguity_relaxed_followedBy": ("a -> b", "every", "no_skip"),
    "flink_contiguity_nondeterministic_followedByAny": ("a -> b", "any", "no_skip"),
    "flink_looping_nondeterministic_allowCombinations": ("a -> b{+} -> c", "any", "no_skip"),
    "flink_allowCombinations_example": ("C -> A{+} -> B", "any", "no_skip"),
    "flink_skip_no_skip": ("b{+} -> c", "every", "no_skip"),
    "flink_skip_to_next": ("b{+} -> c", "every", "to_next"),
    "flink_skip_past_last_event": ("b{+} -> c", "every", "past_last"),
    "flink_no_skip_a_bplus": ("a -> b{+}", "every", "no_skip"),
    "flink_skip_to_next_a_bplus": ("a -> b{+}", "every", "to_next"),
    "flink_skip_no_skip_greedy": ("(a OR b OR c) -> (b OR c) -> c{+} -> d", "every", "no_skip"),
    "esper_every_paren_A_then_B": ("A -> B", "once", "no_skip"),
    "esper_every_A_then_B": ("A -> B", "every", "no_skip"),
    "esper_every_A_then_every_B": ("A -> B", "any", "no_skip"),
    "esper_every_A_then_B_two_As": ("A -> B", "every", "no_skip"),
    "esper_every_A_then_B_and_not_A": ("A -> (B AND NOT A)", "every", "no_skip"),
    "flink_until_stop_condition": ("a{+} AND NOT b", "every", "no_skip"),
    "apama_A_then_B_first_only": ("A -> B", "first", "no_skip"),
    "apama_all_A_then_B": ("A -> B", "every", "no_skip"),
}
UNSUPPORTED: dict[str, str] = {
    "flink_looping_strict_consecutive": "consecutive() inside a loop is not an operator of ours",
    "flink_looping_relaxed_default": "Flink's looping state restarts at any b; our {+} has one contiguity per pattern",
    "flink_consecutive_example": "consecutive() inside a loop is not an operator of ours",
    "flink_consecutive_example_without": "Flink's loop exits after every iteration (prefix matches); no such operator",
    "flink_skip_to_first_b": "SKIP_TO_FIRST needs named pattern variables",
    "flink_skip_to_last_b": "SKIP_TO_LAST needs named pattern variables",
    "flink_skip_to_first_c_greedy": "SKIP_TO_FIRST and greedy() are not operators of ours",
    "esper_A_then_every_B": "'every' on a sub-pattern: our contexts apply to the whole pattern",
}


def test_every_other_engine_case_is_classified() -> None:
    assert {c["name"] for c in OTHER_MATCH} == set(SUPPORTED) | set(UNSUPPORTED)


def _by_completion(matches: list[list[str]], ends: list[int]) -> list[tuple[int, list[list[str]]]]:
    """Group matches by the event that completed them; the order inside a group is not specified."""
    groups: dict[int, list[list[str]]] = {}
    for m, end in zip(matches, ends, strict=False):
        groups.setdefault(end, []).append(m)
    return [(end, sorted(g)) for end, g in sorted(groups.items())]


@pytest.mark.parametrize("case", OTHER_MATCH, ids=_ids(OTHER_MATCH))
def test_other_engines_documented_examples(case: dict[str, Any]) -> None:
    if case["name"] in UNSUPPORTED:
        pytest.skip(UNSUPPORTED[case["name"]])
    text, context, skip = SUPPORTED[case["name"]]
    events = [{"type": re.sub(r"\d+$", "", name), "name": name, "t": float(i)} for i, name in enumerate(case["events"])]
    matches = find_matches([Pattern(id="p", ast=parse_text(text), context=context, skip=skip)], events)
    got = [[e["name"] for e in m.events] for m in matches]
    position = {name: i for i, name in enumerate(case["events"])}
    expected = case["expected_matches"]
    assert _by_completion(got, [m.indices[-1] for m in matches]) == \
        _by_completion(expected, [position[m[-1]] for m in expected])
    if case["engine"] == "esper":  # Esper lists matches in completion order, then by start
        assert got == expected


def test_within_is_inclusive_on_event_time() -> None:
    case = next(c for c in _cases("match", ("comparison",)) if c["name"].startswith("within_boundary"))
    events = [{"type": e["type"], "t": e["ts"]} for e in case["events"]]
    pattern = Pattern(id="p", ast=parse_text("(a -> b) within 1000"))
    assert len(find_matches([pattern], events)) == case["expected"]["viatra_cep"] == 1
    late = [events[0], {"type": "b", "t": 1000.5}]
    assert find_matches([pattern], late) == []

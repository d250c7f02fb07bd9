"""Property tests (hypothesis): permutations that respect the dependence are equivalent under every
connection of the two streams; swapping two dependent unequal items is never equivalent."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from app.diff import Matcher, from_pattern

# (spec given to the matcher, the same relation written independently in Python)
DEPENDENCES: list[tuple[Any, Callable[[dict, dict], bool]]] = [
    ("all", lambda a, b: True),
    ("none", lambda a, b: False),
    ("same_key:key", lambda a, b: a["key"] == b["key"]),
    ("same_key:key,type", lambda a, b: (a["key"], a["type"]) == (b["key"], b["type"])),
    ({"kind": "pairs", "field": "type", "pairs": [["a", "b"], ["b", "b"]]},
     lambda a, b: {a["type"], b["type"]} == {"a", "b"} or a["type"] == b["type"] == "b"),
    ({"kind": "type_table", "field": "type", "independent": [["a", "a"], ["a", "c"]]},
     lambda a, b: {a["type"], b["type"]} not in ({"a"}, {"a", "c"})),
    ("predicate:x.key == y.key or x.type == 'c' or y.type == 'c'",
     lambda a, b: a["key"] == b["key"] or "c" in (a["type"], b["type"])),
    ("predicate:x.v < y.v - 1 or y.v < x.v - 1", lambda a, b: abs(a["v"] - b["v"]) > 1),
]

items = st.fixed_dictionaries({
    "type": st.sampled_from(["a", "b", "c"]),
    "key": st.integers(0, 2),
    "v": st.integers(0, 3),
})
streams = st.lists(items, max_size=10)
dependence_choice = st.integers(0, len(DEPENDENCES) - 1)


def _respecting_permutation(stream: list[dict], dep: Callable[[dict, dict], bool], data: st.DataObject) -> list[dict]:
    """A random linear extension of the stream's dependence order (a random valid reordering)."""
    placed = [False] * len(stream)
    out: list[dict] = []
    while len(out) < len(stream):
        ready = [j for j in range(len(stream)) if not placed[j]
                 and all(placed[i] or not dep(stream[i], stream[j]) for i in range(j))]
        j = data.draw(st.sampled_from(ready))
        placed[j] = True
        out.append(stream[j])
    return out


def _verdicts(left: list, right: list, spec: Any, data: st.DataObject) -> list[bool]:
    """Verdicts for left-first, right-first and one random connection of the two streams."""
    random_pattern = data.draw(st.permutations("L" * len(left) + "R" * len(right)))
    patterns = ["L" * len(left) + "R" * len(right), "R" * len(right) + "L" * len(left), "".join(random_pattern)]
    verdicts = []
    for pattern in patterns:
        matcher = Matcher(spec)
        matcher.feed(from_pattern(left, right, pattern))
        verdicts.append(matcher.finish().equivalent)
    return verdicts


@settings(max_examples=300, deadline=None)
@given(stream=streams, which=dependence_choice, data=st.data())
def test_permutation_respecting_dependence_is_equivalent(stream: list[dict], which: int,
                                                         data: st.DataObject) -> None:
    spec, dep = DEPENDENCES[which]
    other = _respecting_permutation(stream, dep, data)
    assert _verdicts(stream, other, spec, data) == [True, True, True]


@settings(max_examples=300, deadline=None)
@given(stream=streams.filter(lambda s: len(s) >= 2), which=dependence_choice, data=st.data())
def test_swapping_two_dependent_unequal_items_is_not_equivalent(stream: list[dict], which: int,
                                                                data: st.DataObject) -> None:
    spec, dep = DEPENDENCES[which]
    pairs = [(i, j) for i in range(len(stream)) for j in range(i + 1, len(stream))
             if stream[i] != stream[j] and dep(stream[i], stream[j])]
    if not pairs:
        return
    i, j = data.draw(st.sampled_from(pairs))
    swapped = list(stream)
    swapped[i], swapped[j] = swapped[j], swapped[i]
    # the other items may still be reordered validly: the difference must survive that too
    swapped = _respecting_permutation(swapped, dep, data)
    assert _verdicts(stream, swapped, spec, data) == [False, False, False]

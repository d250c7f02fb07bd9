"""DiffStream matcher: specs and short forms, fast paths against the general path, files, errors."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from app.diff import (
    DiffError,
    Matcher,
    diff_connected,
    diff_streams,
    freeze,
    interleave,
    parse_dependence,
    parse_equality,
    read_connected,
    read_stream,
)


@pytest.mark.parametrize("text,expected", [
    ("all", {"kind": "all"}),
    ("none", {"kind": "none"}),
    ("same_key:key", {"kind": "same_key", "fields": ["key"]}),
    ("same_key: a , b.c", {"kind": "same_key", "fields": ["a", "b.c"]}),
    ("pairs:a-b,c-b", {"kind": "pairs", "pairs": [("a", "b"), ("c", "b")]}),
    ("predicate:x.key == y.key", {"kind": "predicate", "expr": "x.key == y.key"}),
    ('{"kind": "same_key", "key": "taxiId"}', {"kind": "same_key", "fields": ["taxiId"]}),
    ('{"kind": "predicate", "python": "x == y"}', {"kind": "predicate", "expr": "x == y"}),
    ('{"kind": "type_table", "field": "type", "independent": [["Inc", "Inc"]]}',
     {"kind": "type_table", "field": "type", "independent": [("Inc", "Inc")]}),
])
def test_dependence_forms(text: str, expected: dict) -> None:
    dep = parse_dependence(text).model_dump(exclude_none=True, exclude={"key"})
    for name, value in expected.items():
        assert dep[name] == value


@pytest.mark.parametrize("text,fragment", [
    ("everything", "unknown short form 'everything'"),
    ("same_key:", "same_key needs at least one key field"),
    ("pairs:ab", "'ab' is not of the form a-b"),
    ("predicate:x.key = y.key", "dependence.expr: position 6: unexpected '='"),
    ("predicate:__import__('os').system('x')", "unknown name '__import__'"),
    ('{"kind": "pairs"}', "dependence.pairs: Field required"),
    ('{"kind": "same_key", "feilds": ["a"]}', "dependence.feilds: Extra inputs"),
    ('{"kind": "magic"}', "dependence.kind: 'magic' is not one of"),
    ('{"kind": "type_table", "field": "t"}', "exactly one of `independent` or `dependent`"),
    ('{"kind": "all",', "dependence: invalid JSON"),
    ("@/no/such/file.json", "dependence: cannot read /no/such/file.json"),
])
def test_dependence_errors_name_the_field(text: str, fragment: str) -> None:
    with pytest.raises(DiffError) as info:
        parse_dependence(text)
    assert fragment in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("text,kind", [
    (None, "structural"), ("structural", "structural"), ("ignore:ts,worker", "structural"),
    ("only:key", "structural"), ("set_of_split:@", "set_of_split"), ("predicate:x.v == y.v", "predicate"),
])
def test_equality_forms(text: str | None, kind: str) -> None:
    assert parse_equality(text).kind == kind


def test_equality_errors() -> None:
    with pytest.raises(DiffError, match="equality: unknown short form"):
        parse_equality("fuzzy")
    with pytest.raises(DiffError, match="equality.sep"):
        parse_equality('{"kind": "set_of_split", "sep": ""}')


def test_ignore_and_only_fields() -> None:
    left = [{"key": 1, "v": 1, "worker": "a"}, {"key": 2, "v": 2, "worker": "b"}]
    right = [{"key": 1, "v": 1, "worker": "c"}, {"key": 2, "v": 2, "worker": "a"}]
    assert not diff_streams(left, right, "all").equivalent
    assert diff_streams(left, right, "all", "ignore:worker").equivalent
    assert diff_streams(left, right, "none", "ignore:worker").equivalent
    assert diff_streams(left, right, "same_key:key", "only:key,v").equivalent
    assert diff_streams(left, right, "pairs:1-2", "ignore:worker").equivalent


def test_first_difference_names_both_items() -> None:
    result = diff_streams([{"k": 1, "v": 1}, {"k": 1, "v": 2}], [{"k": 1, "v": 2}, {"k": 1, "v": 1}], "same_key:k")
    assert not result.equivalent and result.detected_at == 2
    diff = result.first_difference
    assert diff.item.side == "right" and diff.item.index == 1 and diff.item.item == {"k": 1, "v": 2}
    assert diff.other.side == "left" and diff.other.index == 1 and diff.other.item == {"k": 1, "v": 1}
    assert "same key 1" in diff.reason
    assert [u.item for u in result.unmatched_left] == [{"k": 1, "v": 1}]
    assert result.stopped_early and result.left_count == 2 and result.right_count == 2


def test_unmatched_at_end_in_stream_order() -> None:
    result = diff_streams([3, 1, 2, 1], [1, 2], "none")
    assert result.detected_at == "end"
    assert [(u.index, u.item) for u in result.unmatched_left] == [(1, 3), (4, 1)]
    assert result.unmatched_right == []


def test_unhashable_keys_and_items() -> None:
    left = [{"k": [1, 2], "v": {"a": [1]}}, {"k": [3], "v": {"a": [2]}}]
    right = [left[1], left[0]]
    assert diff_streams(left, right, "same_key:k").equivalent
    assert diff_streams(left, right, "none").equivalent
    assert not diff_streams(left, right, "all").equivalent
    assert freeze({"a": [1]}) == freeze({"a": [1]}) and freeze([1]) != freeze({"0": 1})


def _random_case(rng: random.Random) -> tuple[list, list]:
    n = rng.randrange(0, 12)
    left = [{"k": rng.randrange(3), "v": rng.randrange(3)} for _ in range(n)]
    right = list(left)
    for _ in range(rng.randrange(0, 4)):
        if len(right) > 1:
            i = rng.randrange(len(right) - 1)
            right[i], right[i + 1] = right[i + 1], right[i]
    if rng.random() < 0.3 and right:
        right.pop(rng.randrange(len(right)))
    return left, right


@pytest.mark.parametrize("fast,slow", [
    ("all", "predicate:true"),
    ("none", "predicate:false"),
    ("same_key:k", "predicate:x.k == y.k"),
])
def test_fast_paths_agree_with_general_path(fast: str, slow: str) -> None:
    """Same verdict, position, offending items and leftovers whether or not a fast path is taken."""
    rng = random.Random(7)
    for _ in range(300):
        left, right = _random_case(rng)
        order = rng.choice(["alternate", "left-first"])
        a, b = diff_streams(left, right, fast, order=order), diff_streams(left, right, slow, order=order)
        assert Matcher(fast).mode != "general" and Matcher(slow).mode == "general"
        assert (a.equivalent, a.detected_at, a.matched) == (b.equivalent, b.detected_at, b.matched)
        assert a.unmatched_left == b.unmatched_left and a.unmatched_right == b.unmatched_right
        if a.first_difference:
            assert a.first_difference.item == b.first_difference.item
            assert a.first_difference.other == b.first_difference.other


def test_interleave_orders() -> None:
    assert list(interleave([1, 2, 3], [4])) == [(0, 1), (1, 4), (0, 2), (0, 3)]
    assert list(interleave([1], [4, 5, 6])) == [(0, 1), (1, 4), (1, 5), (1, 6)]
    assert list(interleave([1, 2], [3], "left-first")) == [(0, 1), (0, 2), (1, 3)]
    with pytest.raises(DiffError, match="order"):
        list(interleave([], [], "random"))


def test_connected_stream_and_push() -> None:
    result = diff_connected([("L", "a"), ("right", "c"), ("left", "c"), (0, "b"), ("R", "a"), (1, "b")],
                               {"kind": "pairs", "pairs": [["a", "b"], ["c", "b"]]})
    assert result.equivalent and result.peak_unmatched == 2
    matcher = Matcher("all")
    assert matcher.push("left", 1) is None
    assert matcher.push("right", 2) is not None and matcher.stopped
    matcher.push("left", 3)  # counted, not matched
    result = matcher.finish()
    assert result.left_count == 2 and result.detected_at == 2
    with pytest.raises(DiffError, match="side"):
        Matcher("all").push("middle", 1)


def test_bad_items_give_one_line_naming_item_and_field() -> None:
    with pytest.raises(DiffError, match=r"^left item 2: no field 'key' in \{\"k\": 2\}$"):
        diff_streams([{"key": 1}, {"k": 2}], [], "same_key:key")
    with pytest.raises(DiffError, match=r"right item 1: .*cannot compare 's' < 1"):
        diff_streams([{"v": 1}], [{"v": "s"}], "predicate:x.v < y.v")
    with pytest.raises(DiffError, match="no field 'type'"):
        diff_streams([{"type": "a"}], [{"kind": "a"}], {"kind": "type_table", "dependent": [["a", "a"]]})


def test_read_stream_formats(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text('{"k": 1}\n\n{"k": 2}\n')
    (tmp_path / "b.json").write_text('[{"k": 1}, {"k": 2}]')
    (tmp_path / "c.json").write_text('{"items": [1, 2]}')
    (tmp_path / "d.txt").write_text('1\n2\n')
    (tmp_path / "bad.jsonl").write_text('{"k": 1}\n{"k": \n')
    (tmp_path / "e.json").write_text('{"x": 1}')
    assert list(read_stream(tmp_path / "a.jsonl")) == [{"k": 1}, {"k": 2}]
    assert list(read_stream(tmp_path / "b.json")) == [{"k": 1}, {"k": 2}]
    assert list(read_stream(tmp_path / "c.json")) == [1, 2]
    assert list(read_stream(tmp_path / "d.txt")) == [1, 2]
    with pytest.raises(DiffError, match="bad.jsonl: line 2: invalid JSON"):
        list(read_stream(tmp_path / "bad.jsonl"))
    with pytest.raises(DiffError, match="needs an `items`"):
        list(read_stream(tmp_path / "e.json"))
    with pytest.raises(DiffError, match="no such file"):
        list(read_stream(tmp_path / "nope.jsonl"))
    (tmp_path / "conn.jsonl").write_text("\n".join(json.dumps(r) for r in [
        {"side": "L", "item": 1}, {"side": "right", "item": 1}]))
    assert list(read_connected(tmp_path / "conn.jsonl")) == [(0, 1), (1, 1)]
    (tmp_path / "conn_bad.jsonl").write_text('{"side": "up", "item": 1}\n')
    with pytest.raises(DiffError, match="record 1.side: 'up'"):
        list(read_connected(tmp_path / "conn_bad.jsonl"))


def test_event_log_csv_is_read_with_the_eventlog_reader(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("t,ev,comp,task,tuple\n0.1,take,split,1,t1\n0.2,bolt_ack,split,1,t1\n")
    items = list(read_stream(tmp_path / "a.csv"))
    assert [i["ev"] for i in items] == ["take", "bolt_ack"] and items[0]["comp"] == "split"
    assert diff_streams(items, list(reversed(items)), "same_key:tuple").equivalent is False
    assert diff_streams(items, list(reversed(items)), "none").equivalent is True


def test_event_log_without_events_is_refused(tmp_path: Path) -> None:
    (tmp_path / "q.csv").write_text("t,comp,task,queue\n0.1,split,1,4\n")
    with pytest.raises(DiffError, match="q.csv: no events in this log"):
        list(read_stream(tmp_path / "q.csv"))

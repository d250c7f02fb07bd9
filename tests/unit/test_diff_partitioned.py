"""The Spark job's per-key computation (run here without Spark) agrees with the online matcher."""

from __future__ import annotations

import random

import pytest

from app.diff import DiffError, diff_streams
from app.spark.diff_job import _connected_position, partitioned_same_key_diff


def test_connected_positions_follow_interleave() -> None:
    from app.diff import interleave

    for n_left, n_right in [(3, 5), (5, 3), (0, 2), (4, 4), (1, 0)]:
        for order in ("alternate", "left-first"):
            events = interleave([(0, i) for i in range(1, n_left + 1)], [(1, j) for j in range(1, n_right + 1)],
                                order)
            for position, (side, (_, index)) in enumerate(events, 1):
                assert _connected_position(side, index, n_left, n_right, order) == position


def test_partitioned_agrees_with_online_matcher() -> None:
    rng = random.Random(5)
    for _ in range(1500):
        left = [{"key": rng.randrange(3), "v": rng.randrange(3)} for _ in range(rng.randrange(0, 15))]
        right = list(left)
        if rng.random() < 0.5:
            rng.shuffle(right)
        if rng.random() < 0.3 and right:
            right.pop(rng.randrange(len(right)))
        if rng.random() < 0.3:
            right.append({"key": rng.randrange(3), "v": 9})
        for order in ("alternate", "left-first"):
            a = diff_streams(left, right, "same_key:key", order=order)
            b = partitioned_same_key_diff(left, right, "same_key:key", order=order)
            assert (a.equivalent, a.detected_at, a.matched) == (b.equivalent, b.detected_at, b.matched)
            assert a.first_difference == b.first_difference
            assert a.unmatched_left == b.unmatched_left and a.unmatched_right == b.unmatched_right


def test_partitioned_limits_items_not_counts() -> None:
    result = partitioned_same_key_diff([{"key": i} for i in range(10)], [], "same_key:key", limit=3)
    assert result.unmatched_left_count == 10 and [u.index for u in result.unmatched_left] == [1, 2, 3]


def test_partitioned_needs_same_key() -> None:
    with pytest.raises(DiffError, match="only same_key"):
        partitioned_same_key_diff([], [], "all")
    with pytest.raises(DiffError, match="only same_key"):
        partitioned_same_key_diff([], [], "same_key:k", "predicate:x == y")

"""Every case of diffstream-vectors.json (tests/data/vectors): verdict, detection position, leftovers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.diff import Matcher, diff_streams, from_pattern

VECTORS = Path(__file__).resolve().parents[1] / "data" / "vectors" / "diffstream-vectors.json"


def _cases() -> list[dict]:
    return json.loads(VECTORS.read_text(encoding="utf-8"))


CASES = _cases()
DETECTIONS = [(case, name, det) for case in CASES for name, det in case["detection"].items()]


def test_all_31_cases_are_there() -> None:
    assert len(CASES) == 31


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_expected_verdict(case: dict) -> None:
    result = diff_streams(case["left"], case["right"], case["dependence"], case["equality"])
    assert result.equivalent is case["expected"]
    assert (result.detected_at is None) is case["expected"]


@pytest.mark.parametrize("case,name,detection", DETECTIONS,
                         ids=[f"{c['name']}-{n}" for c, n, _ in DETECTIONS])
def test_detection_position(case: dict, name: str, detection: dict) -> None:
    matcher = Matcher(case["dependence"], case["equality"])
    matcher.feed(from_pattern(case["left"], case["right"], detection["interleaving"]))
    result = matcher.finish()
    assert result.equivalent is detection["verdict"]
    assert result.detected_at == detection["detected_at"]
    if detection["detected_at"] == "end":
        assert [u.item for u in result.unmatched_left] == detection["unmatched_left"]
        assert [u.item for u in result.unmatched_right] == detection["unmatched_right"]
    if isinstance(detection["detected_at"], int):
        diff = result.first_difference
        assert diff is not None and diff.position == detection["detected_at"]
        # the offending item is the one at that position of the interleaving
        side = "left" if detection["interleaving"][diff.position - 1] == "L" else "right"
        assert diff.item.side == side
        source = case["left"] if side == "left" else case["right"]
        assert diff.item.item == source[diff.item.index - 1]
        assert diff.other is not None and diff.other.side != side


@pytest.mark.parametrize("case,name,detection", DETECTIONS,
                         ids=[f"{c['name']}-{n}-push" for c, n, _ in DETECTIONS])
def test_push_one_by_one_agrees(case: dict, name: str, detection: dict) -> None:
    """Feeding item by item (the GUI's way) gives the same answer as a batch."""
    matcher = Matcher(case["dependence"], case["equality"])
    first = None
    for side, item in from_pattern(case["left"], case["right"], detection["interleaving"]):
        found = matcher.push(side, item)
        if found is not None and first is None:
            first = matcher.position
    result = matcher.finish()
    assert result.detected_at == detection["detected_at"]
    if isinstance(detection["detected_at"], int):
        assert first == detection["detected_at"]
    assert result.left_count == len(case["left"]) and result.right_count == len(case["right"])

"""The verified-configuration export: content, canonical hash, integrity check."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.core.formats import load_topology
from app.core.formats.verified import (
    VERIFIED_FORMAT,
    build_verified,
    canonical_json,
    check_verified,
    content_hash,
    verdict_words,
    verified_bytes,
)
from app.core.results import VerifyResult
from app.core.topology import Position, TopologyError


@pytest.fixture()
def topo(models_dir: Path):
    return load_topology(models_dir / "simple-DIA-cfg-1.storm.json")


def _results() -> list[VerifyResult]:
    return [
        VerifyResult(property="growth", verdict="counterexample", k=12, loop_start=5, growing=["B2"],
                     checked=["B2", "B3"], message="B2 grows by 1 per loop"),
        VerifyResult(property="threshold", verdict="none-up-to-k", k=20, threshold=50, message="no run reaches 50"),
    ]


def test_document_holds_topology_settings_verdicts_bound_and_hash(topo) -> None:
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    doc = build_verified(topo, _results(), created=when)
    assert doc["format"] == VERIFIED_FORMAT
    assert doc["created"] == "2026-01-02T03:04:05Z"
    assert doc["topology"]["name"] == "simple-DIA-cfg-1"
    assert doc["verification"]["k"] == 15
    assert doc["solver_bound"]["k"] == 20
    assert [v["verdict"] for v in doc["verdicts"]] == ["counterexample", "none-up-to-k"]
    assert doc["verdicts"][0]["subject"] == "unbounded growth of B2, B3"
    assert doc["verdicts"][1]["subject"] == "some queue reaches 50"
    assert doc["verdicts"][1]["verdict_words"] == "no counterexample up to k = 20"
    assert "trace" not in doc["verdicts"][0]
    expected = hashlib.sha256(
        json.dumps(topo.semantics(), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    ).hexdigest()
    assert doc["content_hash"]["value"] == expected == content_hash(topo)


def test_hash_ignores_layout_but_not_semantics(topo) -> None:
    moved = topo.model_copy(update={"layout": {k: Position(x=v.x + 50, y=v.y) for k, v in topo.layout.items()},
                                    "description": "moved nodes"})
    assert content_hash(moved) == content_hash(topo)
    bolts = [b.model_copy(update={"parallelism": b.parallelism + 1}) if b.name == "B2" else b for b in topo.bolts]
    changed = topo.model_copy(update={"bolts": bolts})
    assert content_hash(changed) != content_hash(topo)


def test_canonical_json_is_order_independent() -> None:
    assert canonical_json({"b": 1, "a": [1, 2]}) == canonical_json({"a": [1, 2], "b": 1}) == b'{"a":[1,2],"b":1}'


def test_exported_bytes_round_trip_and_tampering_is_detected(topo) -> None:
    data = json.loads(verified_bytes(topo, _results()).decode("utf-8"))
    assert check_verified(data).semantics() == topo.semantics()
    data["topology"]["bolts"][1]["parallelism"] = 99
    with pytest.raises(TopologyError, match="content_hash.value: does not match"):
        check_verified(data)
    with pytest.raises(TopologyError, match="format"):
        check_verified({"format": "other"})


def test_no_results_is_refused(topo) -> None:
    with pytest.raises(TopologyError, match="verdicts: no verification results"):
        build_verified(topo, [])


def test_verdict_words() -> None:
    assert verdict_words(VerifyResult(verdict="bounded")) == "bounded (rate proof)"
    assert verdict_words(VerifyResult(verdict="unknown")) == "unknown"
    assert verdict_words(VerifyResult(verdict="counterexample", k=7)) == "counterexample (k = 7)"

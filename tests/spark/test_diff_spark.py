"""The Spark same_key job gives the same verdict, position, offending items and leftovers as the local matcher."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from app.diff import DiffError, diff_streams

pytestmark = pytest.mark.spark


def _write(path: Path, items: list) -> Path:
    path.write_text("".join(json.dumps(i) + "\n" for i in items))
    return path


def _cases() -> list[tuple[str, list, list]]:
    rng = random.Random(3)
    base = [{"key": rng.randrange(5), "v": i} for i in range(40)]
    # per-key order kept, keys interleaved differently: equivalent
    by_key: dict[int, list] = {}
    for item in base:
        by_key.setdefault(item["key"], []).append(item)
    regrouped = [item for key in sorted(by_key) for item in by_key[key]]
    swapped = list(base)
    i = next(i for i in range(len(swapped) - 1) if swapped[i]["key"] == swapped[i + 1]["key"])
    swapped[i], swapped[i + 1] = swapped[i + 1], swapped[i]
    return [
        ("equivalent", base, regrouped),
        ("same-key swap", base, swapped),
        ("missing tail", base, regrouped[:-3]),
        ("extra on right", base[:30], regrouped),
        ("changed value", base, [dict(b, v=-1) if n == 25 else b for n, b in enumerate(base)]),
        ("empty right", base[:5], []),
    ]


def test_spark_matches_local(spark, tmp_path: Path) -> None:
    """Few cases (each costs several Spark jobs); the per-key logic itself is checked against the
    local matcher on thousands of cases in tests/unit/test_diff_partitioned.py."""
    from app.spark.diff_job import spark_same_key_diff

    cases = _cases()
    for (name, left, right), order in [(cases[1], "alternate"), (cases[2], "left-first")]:
        lp, rp = _write(tmp_path / f"{name}-l.jsonl", left), _write(tmp_path / f"{name}-r.jsonl", right)
        local = diff_streams(left, right, "same_key:key", order=order)
        remote = spark_same_key_diff(spark, lp, rp, "same_key:key", order=order)
        assert remote.engine == "spark" and remote.peak_unmatched is None
        assert (remote.equivalent, remote.detected_at, remote.matched) == \
            (local.equivalent, local.detected_at, local.matched), name
        assert remote.first_difference == local.first_difference, name
        assert remote.unmatched_left == local.unmatched_left, name
        assert remote.unmatched_right == local.unmatched_right, name
        assert (remote.left_count, remote.right_count) == (len(left), len(right))


def test_spark_rejects_other_dependences_and_bad_lines(spark, tmp_path: Path) -> None:
    from app.spark.diff_job import spark_same_key_diff

    good = _write(tmp_path / "a.jsonl", [{"key": 1}])
    with pytest.raises(DiffError, match="only same_key"):
        spark_same_key_diff(spark, good, good, "all")
    bad = tmp_path / "b.jsonl"
    bad.write_text('{"key": 1}\n{"nokey": 2}\n')
    with pytest.raises(DiffError, match=r"b.jsonl: item 2: no key field"):
        spark_same_key_diff(spark, good, bad, "same_key:key")


def test_cli_spark_path_reuses_the_session(spark, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`stormbound diff --spark` answers like the local run and leaves an active session running."""
    from app.cli import main

    cases = _cases()
    _, left, right = cases[1]
    lp, rp = _write(tmp_path / "l.jsonl", left), _write(tmp_path / "r.jsonl", right)
    assert main(["diff", str(lp), str(rp), "-d", "same_key:key", "--spark", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    local = diff_streams(left, right, "same_key:key")
    assert data["engine"] == "spark" and data["detected_at"] == local.detected_at
    assert not spark.sparkContext._jsc.sc().isStopped()
    (tmp_path / "a.json").write_text("[1, 2]")
    assert main(["diff", str(tmp_path / "a.json"), str(rp), "-d", "same_key:key", "--spark"]) == 2
    assert "--spark reads JSON Lines files" in capsys.readouterr().err

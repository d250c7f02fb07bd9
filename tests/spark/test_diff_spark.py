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


@pytest.fixture()
def default_limits():
    """Each test starts and ends with the default reader limits (`--limit` sets them for the process)."""
    from app.expr.limits import set_limits

    set_limits({})
    yield
    set_limits({})


def _deep_streams(tmp_path: Path, levels: int = 120) -> tuple[Path, Path]:
    """Two equivalent JSON Lines streams whose first item nests `levels` deep (past json_depth = 100)."""
    deep: object = 0
    for _ in range(levels - 1):
        deep = [deep]
    items = [{"key": 1, "v": deep}, {"key": 2, "v": 1}, {"key": 3, "v": 2}]
    return _write(tmp_path / "deep-l.jsonl", items), _write(tmp_path / "deep-r.jsonl", [items[0], *items[:0:-1]])


def test_cli_limits_reach_the_spark_workers(spark, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            default_limits: None) -> None:
    """An item nested 120 deep is refused by default and read with --limit json_depth=150, over Spark
    (the parsing runs in Spark's Python workers) as without it."""
    from app.cli import main

    lp, rp = _deep_streams(tmp_path)
    args = [str(lp), str(rp), "-d", "same_key:key"]
    refusals = []
    for spark_args in ([], ["--spark"]):
        assert main(["diff", *args, *spark_args]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "deep-l.jsonl: line 1: JSON nested" in err
        assert "over the limit json_depth = 100" in err and "--limit json_depth=N" in err
        refusals.append(err)
        assert main(["diff", *args, *spark_args, "--limit", "json_depth=150", "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["equivalent"] and data["engine"] == ("spark" if spark_args else "local")
    assert refusals[0] == refusals[1]  # the same line from the local reader and the Spark workers
    assert not spark.sparkContext._jsc.sc().isStopped()


def test_limits_travel_with_the_request_to_the_spark_host(spark, tmp_path: Path, monkeypatch,
                                                          capsys: pytest.CaptureFixture[str],
                                                          default_limits: None) -> None:
    """Without pyspark in the app, `diff --spark` sends its --limit values to the host process with the
    request. The host here is the host's own request handler on the shared session, behind a stand-in
    for the process boundary: the request crosses as JSON and the handler sees only the defaults."""
    import importlib.util
    import io

    from app.cli import main
    from app.expr.limits import overrides, set_limits
    from app.spark import client
    from app.spark.host import _Host

    requests: list[dict] = []

    class WireHost:
        def __init__(self, *args: object, **kwargs: object) -> None:
            pass

        def __enter__(self) -> WireHost:
            return self

        def __exit__(self, *exc: object) -> None:
            pass

        def request(self, op: str, on_progress: object = None, **params: object) -> dict:
            req = json.loads(json.dumps({"id": 1, "op": op, **params}))
            requests.append(req)
            out = io.StringIO()
            host = _Host(out, "local[2]")
            host.spark = spark
            in_cli = overrides()
            set_limits({})  # the host process has only the defaults of its own
            try:
                host.serve(req)
            finally:
                set_limits(in_cli)
            reply = json.loads(out.getvalue().splitlines()[-1])
            if reply["type"] == "error":
                raise client.HostError(reply["message"], reply["kind"])
            return reply["result"]

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "pyspark" else real_find_spec(name, *a))
    monkeypatch.setattr(client, "SparkHost", WireHost)
    monkeypatch.setenv("STORMBOUND_SPARK_MASTER", "local[2]")
    lp, rp = _deep_streams(tmp_path)
    args = ["diff", str(lp), str(rp), "-d", "same_key:key", "--spark"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "deep-l.jsonl: line 1: JSON nested" in err
    assert "over the limit json_depth = 100" in err and requests[-1]["limits"] == {}
    assert main([*args, "--limit", "json_depth=150", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["equivalent"] and data["engine"] == "spark"
    assert requests[-1]["limits"] == {"json_depth": 150}

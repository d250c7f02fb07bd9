"""`stormbound diff` and the `cep` hand-over: exit codes, text and JSON output, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main


@pytest.fixture()
def streams(tmp_path: Path) -> Path:
    (tmp_path / "p1.jsonl").write_text('{"key": 1, "v": 1}\n{"key": 2, "v": 2}\n{"key": 1, "v": 3}\n')
    (tmp_path / "pn.json").write_text('[{"key": 2, "v": 2}, {"key": 1, "v": 1}, {"key": 1, "v": 3}]')
    (tmp_path / "bad.jsonl").write_text('{"key": 1, "v": 3}\n{"key": 2, "v": 2}\n{"key": 1, "v": 1}\n')
    return tmp_path


def test_equivalent_exit_0(streams: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(streams / "p1.jsonl"), str(streams / "pn.json"), "--dependence", "same_key:key"]) == 0
    assert capsys.readouterr().out.startswith("equivalent: 3 left / 3 right items, 3 matched")


def test_not_equivalent_exit_1_with_first_difference(streams: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["diff", str(streams / "p1.jsonl"), str(streams / "bad.jsonl"), "-d", "same_key:key"])
    out = capsys.readouterr().out
    assert code == 1
    assert "NOT equivalent" in out and "first difference at position 2" in out
    assert 'right #1: {"key": 1, "v": 3}' in out and 'left #1: {"key": 1, "v": 1}' in out


def test_json_output(streams: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["diff", str(streams / "p1.jsonl"), str(streams / "bad.jsonl"), "-d", "none", "--json",
                 "--equality", "ignore:v"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["equivalent"] is True and data["equality"] == "ignore:v"
    code = main(["diff", str(streams / "p1.jsonl"), str(streams / "pn.json"), "-d", "all", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1 and data["detected_at"] == 2
    assert data["first_difference"]["item"]["item"] == {"key": 2, "v": 2}
    assert data["unmatched_left"][0]["index"] == 1


def test_connected_file(streams: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (streams / "c.jsonl").write_text('{"side": "L", "item": "a"}\n{"side": "R", "item": "a"}\n'
                                     '{"side": "R", "item": "b"}\n')
    assert main(["diff", "--connected", str(streams / "c.jsonl"), "-d", "all"]) == 1
    out = capsys.readouterr().out
    assert "unmatched right items at the end: 1" in out and 'right #2 (position 3): "b"' in out


@pytest.mark.parametrize("args,fragment", [
    (["p1.jsonl", "nope.jsonl", "-d", "all"], "nope.jsonl: no such file"),
    (["p1.jsonl", "pn.json", "-d", "predicate:x.key = y.key"], "dependence.expr: position 6: unexpected '='"),
    (["p1.jsonl", "pn.json", "-d", "same_key:zz"], "left item 1: no field 'zz'"),
    (["p1.jsonl", "-d", "all"], "missing RIGHT file"),
    (["p1.jsonl", "pn.json", "-d", "all", "--spark"], "--spark needs same_key dependence"),
    (["p1.jsonl", "pn.json"], "--dependence"),
])
def test_bad_input_exit_2_one_line(streams: Path, capsys: pytest.CaptureFixture[str], args: list[str],
                                   fragment: str) -> None:
    args = [str(streams / a) if a.endswith((".jsonl", ".json")) else a for a in args]
    assert main(["diff", *args]) == 2
    err = capsys.readouterr().err
    assert fragment in err and err.count("\n") == 1 and "Traceback" not in err


def test_cep_is_registered(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """`cep` exists; it hands over to app.cep or says clearly that it is missing."""
    from app.cli import build_parser

    args = build_parser().parse_args(["cep", "patterns.txt", "log.jsonl", "--json"])
    assert args.patterns == "patterns.txt" and args.log == "log.jsonl" and args.json
    code = main(["cep", str(tmp_path / "none.txt"), str(tmp_path / "none.jsonl")])
    assert code in (0, 1, 2)
    assert "Traceback" not in capsys.readouterr().err


def test_large_inputs_fall_back_to_local_without_spark(streams: Path, capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Where this Python has pyspark, the job runs here and Java is missing (made so); where it has none, the
    job would run in the Spark host, whose Python has no pyspark either (made so): either reason is said."""
    import importlib.util

    from app.spark import client, session

    def no_spark(*_: object, **__: object) -> None:
        raise session.SparkUnavailable("Java not found")

    monkeypatch.setattr(session, "check_environment", no_spark)
    monkeypatch.setattr(client, "has_pyspark", lambda _python: False)
    reason = "Java not found" if importlib.util.find_spec("pyspark") is not None else "has no pyspark: install it"
    args = ["diff", str(streams / "p1.jsonl"), str(streams / "bad.jsonl"), "-d", "same_key:key"]
    assert main(args + ["--spark-threshold", "0.000001"]) == 1  # "large": tries Spark, falls back
    captured = capsys.readouterr()
    assert "Spark unavailable (" in captured.err and "); comparing in this process" in captured.err
    assert reason in captured.err
    assert "first difference at position 2" in captured.out
    assert main(args + ["--spark"]) == 2  # asked for explicitly: a one-line problem
    err = capsys.readouterr().err.strip()
    assert err.startswith("stormbound: diff: ") and reason in err and len(err.splitlines()) == 1

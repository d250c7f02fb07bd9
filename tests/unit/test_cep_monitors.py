"""The shipped Storm monitor patterns over a measured-run log, and `stormbound cep`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.cep import events_from_log, load_events
from app.cep.monitors import load_monitors, monitors_path, run_monitors, summarize
from app.cli import main


def _records() -> list[dict[str, Any]]:
    """A small run: count fails 3 times in 7 s, split fails 3 times in 39 s; tuple t2 is never acked;
    count's queue stays above 1000 for three samples, split's dips in between."""
    rows: list[dict[str, Any]] = [
        {"t": 0.5, "ev": "spout_emit", "comp": "spout", "tuple": "t1", "msg": "m1"},
        {"t": 1.0, "ev": "bolt_fail", "comp": "count", "tuple": "t0"},
        {"t": 1.0, "ev": "bolt_fail", "comp": "split", "tuple": "t0"},
        {"t": 2.0, "ev": "take", "comp": "count", "tuple": "t1"},
        {"t": 2.5, "ev": "bolt_ack", "comp": "count", "tuple": "t1"},
        {"t": 3.0, "ev": "bolt_fail", "comp": "count", "tuple": "t3"},
        {"t": 4.0, "ev": "take", "comp": "count", "tuple": "t2"},
        {"t": 8.0, "ev": "bolt_fail", "comp": "count", "tuple": "t4"},
        {"t": 20.0, "ev": "bolt_fail", "comp": "split", "tuple": "t5"},
        {"t": 40.0, "ev": "bolt_fail", "comp": "split", "tuple": "t6"},
    ]
    for t, (count_q, split_q) in enumerate([(1500, 1500), (1600, 200), (1700, 1500)]):
        rows.append({"t": 10.0 + t, "comp": "count", "task": 1, "queue": count_q})
        rows.append({"t": 10.0 + t, "comp": "split", "task": 2, "queue": split_q})
    return rows


@pytest.fixture()
def log_file(tmp_path: Path) -> Path:
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _records()))
    return path


def test_monitors_file_is_shipped_and_parses() -> None:
    assert monitors_path().is_file()
    assert [p.id for p in load_monitors()] == ["repeated_bolt_failure", "unacked_take", "queue_above_threshold"]
    assert all(p.description for p in load_monitors())


def test_monitors_over_a_measured_run(log_file: Path) -> None:
    events = load_events(log_file)
    assert events[0]["type"] == "spout_emit" and any(e["type"] == "queue" for e in events)
    patterns = load_monitors()
    matches = run_monitors(events, patterns=patterns)
    assert summarize(matches, patterns) == {"repeated_bolt_failure": 1, "unacked_take": 1, "queue_above_threshold": 1}
    by_id = {m.pattern: m for m in matches}
    fails = by_id["repeated_bolt_failure"]
    assert fails.bindings == {"comp": "count"} and [e["t"] for e in fails.events] == [1.0, 3.0, 8.0]
    late = by_id["unacked_take"]
    assert late.kind == "timeout" and late.bindings == {"comp": "count", "tuple": "t2"}
    assert [e["type"] for e in late.events] == ["take"]
    queue = by_id["queue_above_threshold"]
    assert {e["comp"] for e in queue.events} == {"count"} and [e["queue"] for e in queue.events] == [1500, 1600, 1700]


def test_overrides_change_the_thresholds(log_file: Path) -> None:
    events = load_events(log_file)
    loose = load_monitors({"failure_window": 40, "queue_threshold": 100})
    counts = summarize(run_monitors(events, patterns=loose), loose)
    assert counts["repeated_bolt_failure"] == 2  # split's fails at 1, 20, 40 now fit
    assert counts["queue_above_threshold"] == 2  # split's 200 is above 100


def test_eventlog_model_is_accepted(log_file: Path) -> None:
    from app.measure import eventlog

    log = eventlog.read_log(log_file)
    events = events_from_log(log)
    assert len(events) == len(_records())
    assert len(run_monitors(log)) == 3


def test_cli_reports_every_match(log_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cep", str(monitors_path()), str(log_file)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("repeated_bolt_failure t=1..8 comp=count: bolt_fail@1.0(comp=count")
    assert any(line.startswith("unacked_take [timeout]") for line in out)
    assert out[-1] == ("3 matches over 16 events (repeated_bolt_failure 1, unacked_take 1, "
                       "queue_above_threshold 1)")
    assert main(["cep", str(monitors_path()), str(log_file), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["counts"] == {"repeated_bolt_failure": 1, "unacked_take": 1, "queue_above_threshold": 1}
    assert doc["matches"][0]["indices"] == [1, 5, 7] and doc["matches"][0]["events"][0]["comp"] == "count"


def test_cli_monitors_keyword(log_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cep", "monitors", str(log_file), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["counts"]["unacked_take"] == 1


def test_cli_with_plain_events_and_json_patterns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    patterns = tmp_path / "p.json"
    patterns.write_text(json.dumps([{"id": "pair", "vepl": "a1 -> a2", "context": "strict"}]))
    events = tmp_path / "e.json"
    events.write_text(json.dumps([{"type": n, "t": i} for i, n in enumerate(["a1", "a1", "a2", "a2"])]))
    assert main(["cep", str(patterns), str(events), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [m["indices"] for m in doc["matches"]] == [[1, 2]]


@pytest.mark.parametrize("pattern_text, log_text, fragment", [
    ("p: a ->\n", None, "line 1 (p): position 4: expected an event type"),
    ("p: a\n", "[{\"t\": 1}]", "e.json records[0]: neither an event"),
    ("p: a\n", "[{\"type\": \"a\", \"t\": \"soon\"}]", "event 0.t: not a number"),
    ("p: a\n", "{not json", "not valid JSON"),
])
def test_cli_bad_input_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          pattern_text: str, log_text: str | None, fragment: str) -> None:
    patterns = tmp_path / "p.cep"
    patterns.write_text(pattern_text)
    log = tmp_path / "e.json"
    log.write_text(log_text if log_text is not None else "[]")
    assert main(["cep", str(patterns), str(log)]) == 2
    err = capsys.readouterr().err
    assert fragment in err and err.count("\n") == 1


def test_cli_missing_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cep", str(tmp_path / "none.cep"), str(tmp_path / "none.jsonl")]) == 2
    assert "no such file" in capsys.readouterr().err

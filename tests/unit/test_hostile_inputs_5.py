"""Hostile input, round five: run folders, Storm UI counts on every poll, queue samples, metrics files and
timings files, each from its smallest reproducer, refused with exit 2 and one line naming the file, the
line or poll and the field (docs/limits.md); nothing hangs on a pipe or reads /dev/zero."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from app.measure.storm_run import Poll, PollWriter, StormRunHeader, write_header
from tests.unit.test_hostile_inputs import document, jsonl, refused, run, write

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from storm_ui_drift import DriftingStormUI  # noqa: E402 - the stand-in lives beside the tests

WORDS = "wordcount-drift"


def page(t: float, executed: Any = None) -> tuple[dict, dict]:
    """A topology page and the component pages of a one-spout, one-bolt topology at `t` s (all-time counts)."""
    n = round(100 * t)
    topology = {"spouts": [{"spoutId": "s", "executors": 1, "emitted": n, "acked": n, "failed": 0}],
                "bolts": [{"boltId": "b", "executors": 1, "executed": n if executed is None else executed,
                           "emitted": 0, "executeLatency": "1.000", "capacity": "0.100"}]}
    components = {"s": {"outputStats": [{"stream": "default", "emitted": n, "acked": n, "failed": 0}]},
                  "b": {"inputStats": [{"component": "s", "stream": "default", "executed": n,
                                        "executeLatency": "1.000"}]}}
    return topology, components


def recording(folder: Path, polls: int = 6, bad: dict[int, Any] | None = None) -> Path:
    """A run folder of `polls` polls 30 s apart; `bad` puts a value as the bolt's executed count at a poll."""
    folder.mkdir(parents=True, exist_ok=True)
    write_header(folder, StormRunHeader(url="http://ui:8080", topology="t", topology_id="t-1", every_s=30))
    with PollWriter(folder) as writer:
        for i in range(1, polls + 1):
            topology, components = page(30.0 * i, (bad or {}).get(i))
            writer.append(Poll(poll=i, t=1.7e9 + 30 * i, ok=True, topology=topology, components=components))
    return folder


def model(tmp_path: Path) -> Path:
    """The getting-started document (bolt B, spout S... as it names them) for `compare` and `--calibrate`."""
    return write(tmp_path / "t.storm.json", document())


# ---- run-folder files: what is not a regular file is refused before it is opened ----------------------


@pytest.mark.parametrize("kind", ["fifo", "folder", "/dev/zero", "sparse 3 GB"])
@pytest.mark.parametrize("command", ["analyze", "compare"])
def test_polls_that_are_not_a_readable_file_are_refused_naming_it(capsys, tmp_path: Path, kind: str,
                                                                   command: str) -> None:
    run_dir = recording(tmp_path / "run")
    polls = run_dir / "polls.jsonl"
    polls.unlink()
    if kind == "fifo":
        os.mkfifo(polls)
    elif kind == "folder":
        polls.mkdir()
    elif kind == "/dev/zero":
        polls.symlink_to("/dev/zero")
    else:
        with open(polls, "wb") as fh:
            fh.truncate(3 * 1024**3)
    says = {"fifo": "is a named pipe", "folder": "is a folder", "/dev/zero": "is a device",
            "sparse 3 GB": "line 1: is over"}[kind]
    extra = ["--topology", str(model(tmp_path))] if command == "compare" else []
    start = time.monotonic()
    refused(capsys, command, str(run_dir), *extra, says=says, names="polls.jsonl")
    assert time.monotonic() - start < 60


def test_record_out_with_polls_as_a_pipe_is_refused_before_polling(capsys, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    write_header(run_dir, StormRunHeader(url="http://ui:8080", topology=WORDS, topology_id=f"{WORDS}-1"))
    os.mkfifo(run_dir / "polls.jsonl")
    with DriftingStormUI() as ui:
        refused(capsys, "record", ui.url, "--topology", WORDS, "--every", "0.05", "--polls", "2",
                "--out", str(run_dir), says="polls.jsonl: is a named pipe")


@pytest.mark.parametrize(("line", "says"), [
    ("[" * 100_000 + "]" * 100_000, "line 2: JSON nested deeper than 100 levels"),
    ('{"poll": "two", "t": 1, "ok": false}', "line 2: not a poll record (poll: Input should be a valid integer"),
    ('{"poll": 2, "t": 1, "ok": false, "poll": 3}', "line 2: duplicate key 'poll'"),
    ("[1, 2]", "line 2: not a poll record (expected an object, got an array)"),
])
def test_a_poll_line_that_is_not_a_poll_names_the_line_and_field(capsys, tmp_path: Path, line: str,
                                                                 says: str) -> None:
    run_dir = recording(tmp_path / "run", polls=1)
    with open(run_dir / "polls.jsonl", "a", encoding="utf-8") as fh:
        fh.write(line + "\n")
    text = refused(capsys, "analyze", str(run_dir), says=says, names="polls.jsonl")
    assert "validation error" not in text and len(text) < 400


@pytest.mark.parametrize("name", ["storm-run.json"])
def test_a_run_header_that_is_a_pipe_or_mistyped_is_named(capsys, tmp_path: Path, name: str) -> None:
    run_dir = recording(tmp_path / "run")
    header = run_dir / name
    header.write_text('{"format": "stormbound-storm-run/1", "every_s": "often"}')
    refused(capsys, "analyze", str(run_dir), says="storm-run.json: every_s: Input should be a valid number")


# ---- Storm UI counts: checked on every poll and when a recording is read ------------------------------


@pytest.mark.parametrize(("value", "says"), [
    (10**3999, "is over 1e+15: not a measurement"), (-5, "is negative"), (float("nan"), "not finite"),
    ("12abc", "is not a number")])
@pytest.mark.parametrize("command", ["analyze", "compare", "calibrate"])
def test_a_bad_count_from_poll_3_on_is_named_by_poll_and_field(capsys, tmp_path: Path, value: Any, says: str,
                                                               command: str) -> None:
    run_dir = recording(tmp_path / "run", bad={3: value})
    argv = {"analyze": ["analyze", str(run_dir)],
            "compare": ["compare", str(run_dir), "--topology", str(model(tmp_path))],
            "calibrate": ["analyze", str(run_dir), "--topology", str(model(tmp_path)), "--calibrate",
                          str(tmp_path / "m.yaml")]}[command]
    line = refused(capsys, *argv, says="topology.bolts[0].executed", names="polls.jsonl line 3")
    assert says in line and len(line) < 400
    assert not (tmp_path / "m.yaml").exists()


class NegativeFromPoll3(DriftingStormUI):
    """A Storm UI whose count bolt's executed count turns negative from the third poll on."""

    def topology_page(self, t: float) -> dict[str, Any]:
        out = super().topology_page(t)
        if self.polls >= 3:
            out["bolts"][1]["executed"] = -5
        return out


def test_record_keeps_a_poll_with_negative_counts_as_a_gap_naming_poll_and_field(capsys, tmp_path: Path) -> None:
    from app.measure.storm_run import read_polls

    out = tmp_path / "rec"
    with NegativeFromPoll3(overload_after=1000) as ui:
        code, _, err = run(capsys, "-q", "record", ui.url, "--topology", WORDS, "--every", "0.05", "--polls", "4",
                           "--out", str(out))
    assert code == 0, err
    polls, _ = read_polls(out)
    assert [p.ok for p in polls] == [True, True, False, False]
    assert "poll 3: topology.bolts[1].executed: -5 is negative" in (polls[2].gap or "")
    code, out_text, err = run(capsys, "analyze", str(out))
    assert code == 0 and "σ = -" not in out_text


def test_watch_exits_2_at_a_poll_with_negative_counts(capsys, tmp_path: Path) -> None:
    with NegativeFromPoll3(overload_after=1000) as ui:
        line = refused(capsys, "watch", ui.url, "--topology", WORDS, "--every", "0.05", "--polls", "5",
                       says="poll 3: topology.bolts[1].executed: -5 is negative")
    assert "int too large" not in line


class HugeCounts(DriftingStormUI):
    def topology_page(self, t: float) -> dict[str, Any]:
        out = super().topology_page(t)
        if self.polls >= 2:
            out["bolts"][0]["executed"] = 10**3999
        return out


def test_watch_on_4000_digit_counts_exits_2_not_3(capsys) -> None:
    with HugeCounts(overload_after=1000) as ui:
        refused(capsys, "watch", ui.url, "--topology", WORDS, "--every", "0.05", "--polls", "3",
                says="poll 2: topology.bolts[0].executed")


# ---- queue samples: the event-log checks wherever they enter ------------------------------------------


@pytest.mark.parametrize(("queue", "says"), [
    ("1e308", "queue: 1e+308 is over the largest count"), ("NaN", "queue: number NaN"),
    ("-5", "queue: must be a whole number >= 0, not -5")])
def test_queues_jsonl_samples_are_checked_as_in_an_event_log(capsys, tmp_path: Path, queue: str, says: str) -> None:
    run_dir = recording(tmp_path / "run")
    (run_dir / "queues.jsonl").write_text('{"t": 0, "comp": "b", "task": 1, "queue": 3}\n'
                                          f'{{"t": 1, "comp": "b", "task": 1, "queue": {queue}}}\n')
    refused(capsys, "analyze", str(run_dir), says=says, names="queues.jsonl line 2")


@pytest.mark.parametrize(("line", "says"), [
    ("[" * 100_000 + "]" * 100_000, "line 2: JSON nested deeper than 100 levels"),
    ('{"t": 1, "comp": "b", "task": 1, "name": "x", "value": ' + "9" * 400 + "}", "line 2: not an executor metric"),
    ('{"t": 1e19, "comp": "b", "task": 1, "name": "x", "value": 1}', "line 2: not an executor metric"),
    ('{"t": 1, "comp": "b", "task": 1, "name": "x", "value": NaN}', "line 2: value: number NaN")])
def test_executor_metrics_of_a_run_folder_are_read_through_the_bounded_decoder(capsys, tmp_path: Path, line: str,
                                                                               says: str) -> None:
    run_dir = recording(tmp_path / "run")
    (run_dir / "metrics.jsonl").write_text('{"t": 0, "comp": "b", "task": 1, "name": "x", "value": 1}\n' + line + "\n")
    refused(capsys, "analyze", str(run_dir), says=says, names="metrics.jsonl")


@pytest.mark.parametrize("log", [False, True])
def test_a_queue_sample_without_its_component_is_refused(capsys, tmp_path: Path, log: bool) -> None:
    """Found by make fuzz: the streaming reader took a queue sample with `"comp": null` (the model reader
    refused it), and analyze then failed on a bolt without a name (exit 3)."""
    sample = '{"t": 0, "comp": null, "task": 1, "queue": 3}\n'
    if log:
        path = jsonl(tmp_path / "log.jsonl", {"t": 1, "ev": "take", "comp": "B", "tuple": "x"}, sample.strip())
    else:
        path = recording(tmp_path / "run")
        (path / "queues.jsonl").write_text(sample)
    refused(capsys, "analyze", str(path), says=".comp: a queue sample has no comp")


@pytest.mark.parametrize("suffix", ["jsonl", "csv"])
def test_a_queue_sample_at_t_1e19_is_refused_in_any_event_log(capsys, tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"log.{suffix}"
    if suffix == "jsonl":
        jsonl(path, {"t": 1, "ev": "take", "comp": "B", "tuple": "x"}, {"t": 1e19, "comp": "B", "queue": 3})
    else:
        path.write_text("t,ev,comp,tuple,queue\n1,take,B,x,\n1e19,,B,,3\n")
    refused(capsys, "analyze", str(path), says="line 3.t: 1e+19 s is beyond the largest time" if suffix == "csv"
            else "line 2.t: 1e+19 s is beyond the largest time")


def test_a_parquet_log_with_a_time_of_1e19_is_refused_by_every_engine(capsys, tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "log.parquet"
    pq.write_table(pa.table({"t": [1.0, 1e19], "ev": ["take", None], "comp": ["B", "B"], "tuple": ["x", None],
                             "queue": pa.array([None, 3], pa.int64())}), str(path))
    refused(capsys, "analyze", str(path), says="t: 1e+19 s is beyond the largest time")


def test_a_parquet_log_with_a_uint64_task_column_is_read_or_refused_naming_the_row(capsys, tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "log.parquet"
    pq.write_table(pa.table({"t": [1.0, 2.0], "ev": ["take", "take"], "comp": ["B", "B"], "tuple": ["x", "y"],
                             "task": pa.array([1, 2**63 + 5], pa.uint64())}), str(path))
    refused(capsys, "analyze", str(path), says="row 1.task: ")


def test_compare_of_a_log_with_a_queue_time_of_1e308_exits_2(capsys, tmp_path: Path) -> None:
    path = jsonl(tmp_path / "log.jsonl", {"t": 1, "ev": "take", "comp": "split", "tuple": "x"},
                 {"t": 1e308, "comp": "split", "queue": 3})
    refused(capsys, "compare", str(path), "--topology", str(model(tmp_path)), says="line 2.t: 1e+308 s is beyond")


# ---- timings files (`annotate --from`, File ▸ Import ▸ Timings) -----------------------------------------


@pytest.mark.parametrize(("kind", "says"), [
    ("fifo", "is a named pipe"), ("folder", "is a folder"), ("/dev/zero", "is a device"),
    ("big", "over the limit of 2000000 bytes"), ("csv twice", "the column 'alpha' is named twice"),
    ("csv cell", "a cell is over 131072 characters"), ("json deep", "JSON nested deeper than 100 levels")])
def test_annotate_from_a_timings_file_that_cannot_be_read_exits_2_at_once(capsys, tmp_path: Path, kind: str,
                                                                          says: str) -> None:
    doc = write(tmp_path / "t.storm.json", document())
    before = doc.read_bytes()
    path = tmp_path / ("timings.json" if kind == "json deep" else "timings.csv")
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "/dev/zero":
        path.symlink_to("/dev/zero")
    elif kind == "big":
        path.write_text("component,alpha\n" + "split,20ms\n" * 200_000)
    elif kind == "csv twice":
        path.write_text("component,alpha,alpha\nsplit,20ms,30ms\n")
    elif kind == "csv cell":
        path.write_text("component,alpha\nsplit," + "9" * 200_000 + "\n")
    else:
        path.write_text('{"bolts": [], "spouts": [], "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    start = time.monotonic()
    refused(capsys, "annotate", str(doc), "--from", str(path), says=says, names=path.name)
    assert time.monotonic() - start < 30 and doc.read_bytes() == before


# ---- import metrics ------------------------------------------------------------------------------------

METRIC = "storm.topology.wc-1.host.count.3.6700-receive-queue.population"


@pytest.mark.parametrize(("rows", "says"), [
    ("t,value\n1700000000,1e308\n", "line 2.receive-queue.population: 1e308 is over the largest count"),
    ("t,value\n1700000000,nan\n", "line 2.receive-queue.population: must be a finite number, not nan"),
    ("t,value\n1700000000,-5\n", "line 2.receive-queue.population: must be a whole number >= 0, not -5"),
    ("t,value,value\n1700000000,1,2\n", "line 1: the column 'value' is named twice"),
    ("t,value\n1700000000," + "9" * 200_000 + "\n", "line 2: a cell is over 131072 characters"),
    ("t,value\n1e19,3\n", "line 2: expected a time and a number"),
])
def test_import_metrics_checks_every_population_as_an_event_log_queue(capsys, tmp_path: Path, rows: str,
                                                                      says: str) -> None:
    source = tmp_path / "csv"
    source.mkdir()
    (source / f"{METRIC}.csv").write_text(rows)
    refused(capsys, "import", "metrics", str(source), "--out", str(tmp_path / "run"), says=says, names=METRIC)
    assert not (tmp_path / "run" / "queues.jsonl").exists()


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero"])
def test_import_metrics_names_a_metrics_file_that_is_not_a_regular_file(capsys, tmp_path: Path, kind: str) -> None:
    source = tmp_path / "csv"
    source.mkdir()
    target = source / f"{METRIC}.csv"
    if kind == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to("/dev/zero")
    refused(capsys, "import", "metrics", str(source), "--out", str(tmp_path / "run"),
            says="is a named pipe" if kind == "fifo" else "is a device", names=METRIC)


def test_import_metrics_of_a_graphite_file_with_a_negative_population(capsys, tmp_path: Path) -> None:
    source = write(tmp_path / "g.txt", f"{METRIC} 4 1700000000\n{METRIC} -5 1700000001\n")
    refused(capsys, "import", "metrics", str(source), "--out", str(tmp_path / "run"),
            says="g.txt: line 2.receive-queue.population: must be a whole number >= 0")

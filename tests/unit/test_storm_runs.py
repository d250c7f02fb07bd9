"""Measured runs of a real Storm cluster: record, import metrics, analyze/compare, watch (docs/storm-runs.md).

The cluster is tests/storm_ui_drift.py: a stand-in Storm UI on 127.0.0.1 whose `count` bolt slows down
after a given poll, so that its queue grows by GROWTH tuples/s.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from app.cli import main
from app.measure.storm_run import Poll, PollWriter, read_polls

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from storm_ui_drift import GROWTH, DriftingStormUI  # noqa: E402 - the stand-in lives beside the tests

EVERY = "0.05"


def _record(ui: DriftingStormUI, out: Path, *extra: str) -> int:
    return main(["-q", "record", ui.url, "--topology", "wordcount-drift", "--every", EVERY, "--out", str(out),
                 *extra])


def _analyze(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    capsys.readouterr()
    assert main(["analyze", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_record_then_analyze_names_the_growing_bolt(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "prod-1"
    with DriftingStormUI(overload_after=6) as ui:
        assert _record(ui, out, "--polls", "20") == 0
    polls, notes = read_polls(out)
    assert len(polls) == 20 and all(p.ok for p in polls) and not notes
    data = _analyze(capsys, str(out))
    bolts = {b["name"]: b for b in data["storm_run"]["bolts"]}
    growing = [n for n, b in bolts.items() if b["queue"] and b["queue"]["verdict"] == "grows"]
    assert growing == ["count"]
    assert bolts["count"]["growth_from"] == "ui-counts"
    assert abs(bolts["count"]["queue"]["slope"] - GROWTH) <= 0.1 * GROWTH
    assert abs(bolts["count"]["recent_growth"] - GROWTH) <= 0.1 * GROWTH
    assert data["model_now"]["count"]["status"] == "grows"
    assert data["model_now"]["split"]["status"] == "bounded"
    comparison = {b["bolt"]: b for b in data["comparison"]["bolts"]}
    assert comparison["count"]["measured_verdict"] == "grows" and comparison["count"]["model_status"] == "bounded"
    spout = data["storm_run"]["spouts"][0]
    assert spout["name"] == "sentences" and abs(spout["emitted_rate"] - 100) < 10 and spout["replayed_rate"] == 0
    # the text report names it too, with the model's verdict beside it
    assert main(["analyze", str(out)]) == 0
    text = capsys.readouterr().out
    assert "grows (1.2" in text and "ui-counts" in text and "cannot" not in text.split("note:")[0]
    # the folder keeps the topology as the first poll showed it, so compare needs no --topology
    assert (out / "topology.storm.json").is_file()
    assert main(["compare", str(out), "--fail-on-disagreement"]) == 0


def test_calibrated_timings_annotate_a_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from app.measure.storm_figures import model_of_run

    out = tmp_path / "run"
    with DriftingStormUI(overload_after=1000) as ui:
        assert _record(ui, out, "--polls", "8") == 0
    model = model_of_run(str(out))
    assert model is not None
    doc = tmp_path / "wc.storm.json"
    doc.write_bytes(model.model_copy(update={"bolts": [b.model_copy(update={"alpha": 0.5}) for b in model.bolts]})
                    .to_json_bytes())
    timings = tmp_path / "measured.yaml"
    assert main(["analyze", str(out), "--topology", str(doc), "--calibrate", str(timings)]) == 0
    assert "count" in timings.read_text()
    assert main(["annotate", str(doc), "--from", str(timings)]) == 0
    from app.core.formats import load_topology

    annotated = load_topology(str(doc))
    count = next(b for b in annotated.bolts if b.name == "count")
    assert count.alpha == pytest.approx(0.001, rel=0.1)
    sentences = annotated.spouts[0]
    assert sentences.rate == pytest.approx(100, rel=0.1)


def test_a_dropped_connection_leaves_a_gap_and_the_recording_goes_on(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "dropped"
    with DriftingStormUI(overload_after=1000) as ui:
        def drop() -> None:
            deadline = time.monotonic() + 20
            while ui.polls < 4 and time.monotonic() < deadline:
                time.sleep(0.005)
            ui.stop()
            time.sleep(0.3)
            ui.start()

        dropper = threading.Thread(target=drop, daemon=True)
        dropper.start()
        assert _record(ui, out, "--polls", "16") == 0
        dropper.join(5)
    polls, notes = read_polls(out)
    assert len(polls) == 16 and not notes
    gaps = [p for p in polls if not p.ok]
    assert gaps and all(p.gap and p.gap.startswith(ui.url) for p in gaps)  # one line naming the URL
    assert any("cannot connect" in (p.gap or "") for p in gaps)
    assert polls[-1].ok and sum(p.ok for p in polls) >= 8
    data = _analyze(capsys, str(out))
    assert data["storm_run"]["gaps"] == len(gaps)
    assert all(b["queue"]["verdict"] != "grows" for b in data["storm_run"]["bolts"] if b["queue"])


def test_ctrl_c_finishes_the_poll_and_exits_0(tmp_path: Path) -> None:
    out = tmp_path / "interrupted"
    with DriftingStormUI() as ui:
        def interrupt_while_polling() -> None:
            # Ctrl+C once polls are being answered (the handler is installed before the first poll), not after a
            # fixed delay: on a loaded machine a fixed delay can land before the recording has started
            deadline = time.monotonic() + 60
            while ui.polls < 2 and time.monotonic() < deadline:
                time.sleep(0.005)
            os.kill(os.getpid(), signal.SIGINT)

        timer = threading.Thread(target=interrupt_while_polling, daemon=True)
        timer.start()
        assert _record(ui, out) == 0  # no --polls: until Ctrl+C
        timer.join()
    polls, notes = read_polls(out)
    assert polls and not notes and (out / "polls.jsonl").read_bytes().endswith(b"\n")
    assert json.loads((out / "storm-run.json").read_text())["topology_id"] == "wordcount-drift-1"


def test_duration_ends_the_recording_and_the_header_says_what_was_recorded(tmp_path: Path) -> None:
    out = tmp_path / "timed"
    with DriftingStormUI() as ui:
        started = time.monotonic()
        assert _record(ui, out, "--duration", "0.4") == 0
        assert time.monotonic() - started < 30  # generous: --duration ends it, not a poll count
        header = json.loads((out / "storm-run.json").read_text())
        assert header["format"] == "stormbound-storm-run/1" and header["every_s"] == 0.05
        assert header["url"] == ui.url and header["configuration"]["topology.workers"] == 1
        first = len(read_polls(out)[0])
        assert 1 <= first <= 12  # polls every 0.05 s for 0.4 s: fewer on a loaded machine, never more
        assert _record(ui, out, "--polls", "2") == 0  # the same topology again: the recording goes on
    polls, _ = read_polls(out)
    assert [p.poll for p in polls] == list(range(1, first + 3))


def test_a_line_cut_short_is_left_out_and_cut_before_appending(tmp_path: Path) -> None:
    with PollWriter(tmp_path) as writer:
        writer.append(Poll(poll=1, t=1.0, ok=False, gap="down"))
        writer.append(Poll(poll=2, t=2.0, ok=False, gap="down"))
    with open(tmp_path / "polls.jsonl", "ab") as f:
        f.write(b'{"poll": 3, "t": 3.0, "ok": tr')
    polls, notes = read_polls(tmp_path)
    assert [p.poll for p in polls] == [1, 2] and "cut short" in notes[0]
    with PollWriter(tmp_path) as writer:
        writer.append(Poll(poll=3, t=3.0, ok=False, gap="down"))
    polls, notes = read_polls(tmp_path)
    assert [p.poll for p in polls] == [1, 2, 3] and not notes


def test_record_and_import_refuse_a_folder_of_other_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spark_run = tmp_path / "spark-run"
    spark_run.mkdir()
    (spark_run / "events.jsonl").write_text("")
    with DriftingStormUI() as ui:
        assert _record(ui, spark_run, "--polls", "1") == 2
    assert "holds other files" in capsys.readouterr().err
    assert main(["import", "metrics", str(tmp_path), "--out", str(spark_run)]) == 2
    assert "holds other files" in capsys.readouterr().err
    assert sorted(p.name for p in spark_run.iterdir()) == ["events.jsonl"]


def test_record_refuses_an_unknown_topology(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with DriftingStormUI() as ui:
        code = main(["record", ui.url, "--topology", "nope", "--every", EVERY, "--polls", "2",
                     "--out", str(tmp_path / "x")])
    assert code == 2 and "no topology 'nope' is running" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


# ---- metrics v2 reporters ---------------------------------------------------------------------------

TOPO = "wordcount-7-1700000000"


def _csv_reporter_folder(folder: Path, seconds: int = 90) -> None:
    """A CsvStormReporter folder: one NAME.csv per metric, `t,value` rows (unix seconds), the metric named
    storm.topology.ID.HOST.COMPONENT.TASK.PORT-NAME. count's two executors each gain 0.6 tuples/s."""
    import random

    rng = random.Random(7)
    folder.mkdir()
    t0 = 1_700_000_000
    executors = {("count", 3): 0.6, ("count", 4): 0.6, ("split", 1): 0.0, ("split", 2): 0.0, ("__acker", 9): 0.0}
    for (comp, task), growth in executors.items():
        name = f"storm.topology.{TOPO}.host_example_org.{comp}.{task}.6700-receive-queue.population"
        rows = ["t,value"] + [f"{t0 + s},{max(0, round(5 + growth * s + rng.gauss(0, 1.5)))}" for s in range(seconds)]
        (folder / f"{name}.csv").write_text("\n".join(rows) + "\n")
        other = f"storm.topology.{TOPO}.host_example_org.{comp}.{task}.6700-__execute-count-default.csv"
        (folder / other).write_text("t,count\n" + "".join(f"{t0 + s},{s * 10}\n" for s in range(seconds)))


def test_a_csv_reporter_folder_gives_queue_growth_per_bolt(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "csv-metrics"
    _csv_reporter_folder(source)
    out = tmp_path / "run"
    assert main(["import", "metrics", str(source), "--out", str(out)]) == 0
    assert "4 executors (count, split)" in capsys.readouterr().out
    data = _analyze(capsys, str(out))
    bolts = {b["name"]: b for b in data["storm_run"]["bolts"]}
    assert bolts["count"]["growth_from"] == "metrics" and bolts["count"]["queue"]["verdict"] == "grows"
    assert abs(bolts["count"]["queue"]["slope"] - 1.2) <= 0.12
    assert bolts["split"]["queue"]["verdict"] == "stable"
    assert any("rates, α and σ" in n for n in data["storm_run"]["cannot"])


def test_graphite_lines_are_read_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = []
    for s in range(60):
        lines.append(f"storm.topology.{TOPO}.h.count.3.6700-receive-queue.population {2 * s} {1_700_000_000 + s}")
        lines.append(f"storm.worker.{TOPO}.h.6700-memory.heap.used 1000 {1_700_000_000 + s}")
    source = tmp_path / "graphite.txt"
    source.write_text("\n".join(lines) + "\n")
    assert main(["import", "metrics", str(source), "--out", str(tmp_path / "g")]) == 0
    data = _analyze(capsys, str(tmp_path / "g"))
    count = next(b for b in data["storm_run"]["bolts"] if b["name"] == "count")
    assert count["queue"]["slope"] == pytest.approx(2.0)


def test_import_metrics_refuses_a_folder_without_queue_metrics(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "unrelated.csv").write_text("a,b\n1,2\n")
    assert main(["import", "metrics", str(tmp_path / "m"), "--out", str(tmp_path / "o")]) == 2
    assert "no metrics-v2 executor metrics" in capsys.readouterr().err


def test_metrics_join_a_recording_and_a_queue_above_the_models_bound_is_named(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "both"
    with DriftingStormUI(overload_after=1000) as ui:
        assert _record(ui, out, "--polls", "8") == 0
    source = tmp_path / "csv"
    source.mkdir()
    name = "storm.topology.wordcount-drift-1.h.split.1.6700-receive-queue.population"
    (source / f"{name}.csv").write_text("t,value\n" + "".join(f"{1_700_000_000 + s},50\n" for s in range(40)))
    assert main(["import", "metrics", str(source), "--out", str(out)]) == 0
    data = _analyze(capsys, str(out))
    split = next(b for b in data["storm_run"]["bolts"] if b["name"] == "split")
    assert split["growth_from"] == "metrics" and split["queue"]["verdict"] == "stable"
    assert data["model_now"]["split"]["queue_bound"] == pytest.approx(2.0)
    notes = data["storm_run"]["notes"]
    assert any(n.startswith("split: its receive queues held 50 tuples, above the 2 ") for n in notes)
    header = json.loads((out / "storm-run.json").read_text())
    assert header["source"] == "storm-ui" and header["metrics_from"] == str(source.resolve())

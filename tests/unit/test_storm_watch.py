"""`watch` judges a window of polls (app/measure/storm_watch.py, docs/storm-runs.md "Watch").

The cluster is tests/storm_ui_live.py, a stand-in Storm UI whose all-time counts move between polls: a healthy
Kafka topology whose lag rises in a saw-tooth between offset commits, a busy bolt (capacity 0.75, ±5 % latency
noise), a drift into overload, a stall, another topology under the same id, full receive queues. The recordings
judged ten times over are built without HTTP (`poll_at`, chosen poll times: fast and repeatable); the command
itself runs against the served stand-in.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from app.cli import main
from app.core.storm.ui.reader import from_storm_ui
from app.core.storm.ui.replies import StormUISnapshot
from app.core.topology import Topology
from app.measure.storm_watch import Judge, WatchLine, noise

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from storm_ui_live import GROWTH, LiveStormUI, metrics_folder  # noqa: E402 - the stand-in lives beside the tests

EVERY = "0.05"


def _model(ui: LiveStormUI, tolerance: float | None = None) -> Topology:
    """The topology as a first poll shows it (a throwaway stand-in of the same scenario, so `ui` is untouched)."""
    probe = LiveStormUI(ui.scenario)
    poll = probe.poll_at(1, 5.0)
    model = from_storm_ui(StormUISnapshot(url="http://x", topology_id="x", window="all", topology=poll.topology,
                                          components=poll.components)).topology
    if tolerance is not None:
        model = model.model_copy(update={"settings": model.settings.model_copy(update={"tolerance": tolerance})})
    return model


def _judge(ui: LiveStormUI, every: float, polls: int, start: float = 2.0, tolerance: float | None = None,
           **options: object) -> list[WatchLine]:
    judge = Judge(_model(ui, tolerance), every, fail_on="may-grow", **options)  # type: ignore[arg-type]
    return [judge.add(ui.poll_at(k, start + (k - 1) * every)) for k in range(1, polls + 1)]


def test_noise_is_the_spread_of_the_values_not_a_step() -> None:
    assert noise([1.0, 1.0]) is None
    assert noise([1.0, 1.0, 1.0, 1.0, 1.0, 2.5]) == 0.0  # a drift is a level that moved, not noise
    assert noise([1.0, 1.1, 0.9, 1.1, 0.9, 1.0]) == pytest.approx(0.2 / (0.6745 * 2 ** 0.5))


@pytest.mark.parametrize("run", range(10))
def test_no_false_alarm_on_the_healthy_sawtooth(run: int) -> None:
    # polls every 10 s, offsets committed every 30 s (storm-kafka-client's default), each run at another phase
    lines = _judge(LiveStormUI("sawtooth", commit_s=30.0), 10.0, 40, start=2.0 + 3.7 * run, tolerance=0.1)
    assert not any(line.fail for line in lines)
    assert all(line.statuses.get("count") in (None, "ok") for line in lines), [line.statuses for line in lines]
    # its pages are read one after the other (2 ms apart): no growth is seen in that
    assert not any(d.what == "growth" for line in lines for d in line.disagree)
    last = lines[-1]
    assert "lag growth sentences" in last.basis and "over 60 s" in last.basis
    # the same recording judged on one interval's lag rise, and on one poll, pages: the test can fail
    naive = _judge(LiveStormUI("sawtooth", commit_s=30.0), 10.0, 40, start=2.0 + 3.7 * run, tolerance=0.1,
                   lag_window=15.0, fail_after=1)
    assert any(line.fail for line in naive)


@pytest.mark.parametrize("seed", range(10))
def test_no_false_alarm_on_a_busy_bolt_with_noisy_latency(seed: int) -> None:
    # capacity 0.75 with ±5 % latency noise, a document whose tolerance is 30 %: at the central figures of a noisy
    # interval the rate check says may-grow; carried with its error, the measured α says the bolt keeps up
    lines = _judge(LiveStormUI("busy", seed=seed), 1.0, 40, tolerance=0.3)
    assert not any(line.fail for line in lines)
    assert not any(d.what == "growth" for line in lines for d in line.disagree)
    verdicts = {line.statuses.get("count") for line in lines}
    assert verdicts <= {None, "ok", "noise"}
    assert "noise" in verdicts or max(line.bolts["count"].rho or 0 for line in lines if line.bolts) < 0.77


def test_a_drift_into_overload_fails_within_three_polls() -> None:
    ui = LiveStormUI("drift", change_after=10)
    lines = _judge(ui, 1.0, 30)
    failing = [line.poll for line in lines if line.fail]
    assert failing and failing[0] <= 10 + 3  # the drift starts after the 10th poll
    assert all(line.statuses["count"] == "ok" for line in lines[3:10])
    assert lines[-1].bolts["count"].growth == pytest.approx(GROWTH, rel=0.1)


def test_watch_fails_on_a_served_drift(capsys: pytest.CaptureFixture[str]) -> None:
    # served over HTTP, polls 0.2 s apart: how fast the verdict firms up depends on how evenly a loaded machine
    # answers (a page's request taking 20 ms more is 10 % of an interval); the 3 polls are checked above, on the
    # same stand-in's recording at chosen times
    with LiveStormUI("drift", change_after=6) as ui:
        code = main(["watch", ui.url, "--topology", "wordcount-live", "--every", "0.2", "--polls", "30",
                     "--fail-on", "may-grow", "--json"])
    assert code == 1
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines[-1]["poll"] < 30 and lines[-1]["fail"] and lines[-1]["agreeing"] == 3
    assert lines[-1]["statuses"]["count"] == "grows" and lines[-1]["basis"]
    # count's α; and the spout's complete latency, 12.4 ms in this UI, above what the model proves for its trees at
    # the document's timings (docs/latency.md)
    assert {("count", "latency"), ("sentences", "complete latency")} <= {(d["bolt"], d["what"])
                                                                         for d in lines[-1]["disagree"]}
    assert all(line["statuses"].get("count") in (None, "ok", "noise") for line in lines[:6])


def test_a_stall_is_named_and_fails_the_gate(capsys: pytest.CaptureFixture[str]) -> None:
    with LiveStormUI("stall", change_after=4) as ui:
        code = main(["watch", ui.url, "--topology", "wordcount-live", "--every", EVERY, "--polls", "20",
                     "--fail-on", "grows"])
    assert code == 1
    captured = capsys.readouterr()
    out = captured.out.splitlines()
    assert "count stall" in out[-1] and "executed nothing for" in out[-1] and "capacity 1.500" in out[-1]
    assert "rests on " in out[-1] and "--fail-on grows: 3/3 polls" in out[-1]  # what the verdict rests on
    assert "split stall" not in out[-1]  # the bolt stuck in execute is named, not those it starves
    assert "(count)" in captured.err
    assert not any("first reading" in line for line in out[1:])


def test_a_document_of_another_topology_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = tmp_path / "wc.storm.json"
    doc.write_bytes(_model(LiveStormUI("drift")).to_json_bytes())
    with LiveStormUI("wrong") as ui:
        code = main(["watch", ui.url, "--topology", "wordcount-live", "--every", EVERY, "--polls", "5",
                     "--doc", str(doc)])
    assert code == 2
    captured = capsys.readouterr()
    assert "poll" not in captured.out  # no live line from the wrong document
    err = captured.err
    assert "spouts only in the document: sentences" in err and "spouts only on the cluster: pages" in err
    assert "bolts only in the document: count, report, split" in err
    assert "bolts only on the cluster: fetch, store" in err


def test_full_receive_queues_are_named_and_fail(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    metrics = metrics_folder(tmp_path / "metrics", 1_800_000_000.0)
    with LiveStormUI("drift", change_after=1000) as ui:  # healthy counts: the queues alone say it
        code = main(["watch", ui.url, "--topology", "wordcount-live", "--every", EVERY, "--polls", "10",
                     "--fail-on", "grows", "--metrics", str(metrics)])
    assert code == 1
    out = capsys.readouterr().out.splitlines()
    assert "count full" in out[-1] and "2 of 2 receive queues full (2048 of 2048 tuples)" in out[-1]
    assert "tuples in the overflow" in out[-1] and "(metrics v2)" in out[-1]
    quiet = metrics_folder(tmp_path / "quiet", 1_800_000_000.0, full=False)
    with LiveStormUI("drift", change_after=1000) as ui:
        code = main(["watch", ui.url, "--topology", "wordcount-live", "--every", EVERY, "--polls", "6",
                     "--fail-on", "grows", "--metrics", str(quiet)])
    assert code == 0
    assert "full" not in capsys.readouterr().out


def _record_live(ui: LiveStormUI, out: Path, polls: int = 8) -> None:
    assert main(["-q", "record", ui.url, "--topology", "wordcount-live", "--every", EVERY, "--out", str(out),
                 "--polls", str(polls)]) == 0


def test_analyze_and_compare_call_full_queues_overload(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    with LiveStormUI("full") as ui:
        _record_live(ui, out)
    metrics = metrics_folder(tmp_path / "metrics", 1_800_000_000.0)
    assert main(["import", "metrics", str(metrics), "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["analyze", str(out), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    count = next(b for b in data["storm_run"]["bolts"] if b["name"] == "count")
    assert count["full"] and "2 of 2 receive queues full (2048 of 2048 tuples)" in count["full"]
    assert count["queue"]["verdict"] == "grows" and count["growth_from"] == "metrics"
    split = next(b for b in data["storm_run"]["bolts"] if b["name"] == "split")
    assert split["full"] is None
    assert main(["analyze", str(out)]) == 0
    text = capsys.readouterr().out
    assert "count: full: 2 of 2 receive queues full" in text
    code = main(["compare", str(out), "--fail-on-disagreement"])
    text = capsys.readouterr().out
    assert code == 1 and "--fail-on-disagreement: model and measurement disagree on count" in text


def test_compare_refuses_a_document_of_another_topology(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    with LiveStormUI("wrong") as ui:
        _record_live(ui, out, polls=3)
    doc = tmp_path / "wc.storm.json"
    doc.write_bytes(_model(LiveStormUI("drift")).to_json_bytes())
    capsys.readouterr()
    assert main(["compare", str(out), "--topology", str(doc)]) == 2
    err = capsys.readouterr().err
    assert "bolts only in the document: count, report, split" in err and "only on the cluster: fetch, store" in err


def test_check_plans_to_the_target_capacity_from_the_executors_that_run(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The cluster runs count on 4 executors (8 tasks) at 1000 tuples/s and α 2 ms (2 executors' work); the
    document says 2. The headroom is the running topology's; the suggestion plans to capacity 0.7 (3 executors),
    to 0.25 (8, all its tasks), to 0.2 (10: beyond its tasks, a resubmit)."""
    doc = tmp_path / "wc.storm.json"
    with LiveStormUI("drift", change_after=1000) as ui:
        assert main(["import", "storm-ui", ui.url, "--topology", "wordcount-live", "--window", "all",
                     "-o", str(doc)]) == 0
    topo = Topology.model_validate_json(doc.read_bytes())
    assert topo.storm.running_executors["count"] == 4
    bolts = [b.model_copy(update={"parallelism": 2}) if b.name == "count" else b for b in topo.bolts]
    spouts = [s.model_copy(update={"rate": 1000.0}) for s in topo.spouts]  # the UI's uptime is whole seconds
    doc.write_bytes(topo.model_copy(update={"bolts": bolts, "spouts": spouts}).to_json_bytes())
    capsys.readouterr()
    assert main(["check", str(doc), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["headroom_executors"]["count"] == 4
    assert data["headroom"]["headroom"]["value"] > 1.2  # with the document's 2 it would be below 1
    assert data["suggested_parallelism"]["count"] == 3 and data["target_capacity"] == 0.7
    assert data["rebalance"][0] == "storm rebalance wordcount-live -e count=3"
    assert main(["check", str(doc)]) == 0
    text = capsys.readouterr().out
    assert "with the executors that run on the cluster (split 1, count 4, report 1; the document says split 1, " \
           "count 2, report 1)" in text
    assert main(["check", str(doc), "--target-capacity", "0.25", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rebalance"][0].startswith("storm rebalance wordcount-live -e count=8 ")
    assert main(["check", str(doc), "--target-capacity", "0.2"]) == 0
    text = capsys.readouterr().out
    count_row = next(line for line in text.splitlines() if line.startswith("count "))
    assert count_row.endswith("10 (> 8 tasks: resubmit)")
    assert "count: has 8 tasks, and rebalance cannot raise its executors above that" in text

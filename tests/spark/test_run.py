"""Real Spark runs: a short run of a tiny topology, and the 60-second simple-DIA-cfg-1 pair.

The pair (annotated parallelism, where B2 falls behind, and the rate check's suggested
parallelism) runs as two concurrent Spark jobs of one task each in the shared local[2]
session, so both fit in one minute of wall-clock time.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from app.cli.run import apply_parallelism
from app.core.formats import load_topology
from app.core.rates import rate_check
from app.measure.eventlog import read_log
from app.measure.model_vs_measured import calibrate, compare
from app.measure.reliability import ReliabilityConfig, check_reliability_local
from app.spark.analysis_job import analyze
from app.spark.frames import load_frames
from app.spark.run_job import RunResult, RunSpec, run_on_spark
from tests.conftest import MODELS


def test_tiny_run_two_workers(spark, tmp_path: Path) -> None:
    topo = load_topology(MODELS / "getting-started.storm.json")
    seen: list[float] = []
    result = run_on_spark(spark, RunSpec(topology=topo, duration_s=4.0, workers=2), tmp_path,
                          progress=lambda f, m: seen.append(f))
    assert result.workers == 2 and set(result.placement.values()) == {0, 1}  # tuples cross a socket
    assert seen and seen[-1] == 1.0
    log = read_log(tmp_path)
    assert {e.comp for e in log.events} == {c.name for c in topo.components}
    for bolt in topo.bolts:
        assert any(e.ev == "take" and e.comp == bolt.name for e in log.events), bolt.name
    taken = {e.tuple for e in log.events if e.ev == "take" and e.comp == "split"}
    sent = {e.tuple for e in log.events if e.ev == "spout_emit"}
    assert taken <= sent and len(taken) >= len(sent) - 4  # at most the last burst is still queued
    acked = {e.msg for e in log.events if e.ev == "spout_ack"}
    assert acked and acked <= sent  # the acker completed trees across the two tasks
    report = check_reliability_local(log.events, ReliabilityConfig.from_topology(topo, ackers=1))
    assert report.ok, report.summary()
    assert (tmp_path / "run.json").exists() and load_topology(tmp_path / "topology.storm.json") == topo
    # where the time went (docs/spark-runs.md): every phase but the host's start, which the CLI measures
    phases = json.loads((tmp_path / "run.json").read_text())["result"]["phases"]
    assert phases == result.phases and list(phases) == ["worker_start", "shared_start", "run", "collect", "write"]
    assert phases["run"] >= 4.0 and all(value >= 0 for value in phases.values())


def test_tasks_elsewhere_meet_with_all_gather(spark, tmp_path: Path, monkeypatch) -> None:
    """Tasks that may not reach the driver's process (a cluster) meet with Spark's allGather, as before
    the Rendezvous: the same run, trees acked across the two tasks."""
    import app.spark.run_job as run_job

    monkeypatch.setattr(run_job, "tasks_meet_here", lambda spark: False)
    met: list[object] = []
    monkeypatch.setattr(run_job, "Rendezvous", lambda workers: met.append(workers))
    topo = load_topology(MODELS / "getting-started.storm.json")
    # (4 s, not 2: on a loaded machine the meeting by allGather may take most of 2 s and leave no tree acked)
    result = run_on_spark(spark, RunSpec(topology=topo, duration_s=4.0, workers=2), tmp_path)
    assert not met and result.workers == 2 and set(result.placement.values()) == {0, 1}
    log = read_log(tmp_path)
    acked = {e.msg for e in log.events if e.ev == "spout_ack"}
    assert acked and {e.comp for e in log.events if e.ev == "take"} == {"split", "count"}
    assert result.phases["shared_start"] >= 0.5  # Spark answers allGather at its next poll, a second later


def test_dia_cfg1_grows_and_suggested_parallelism_does_not(spark, tmp_path: Path) -> None:
    topo = load_topology(MODELS / "simple-DIA-cfg-1.storm.json")
    fixed = apply_parallelism(topo, ["suggested"])
    assert rate_check(fixed).all_bounded()
    results: dict[str, RunResult | BaseException] = {}

    def go(label: str, t) -> None:
        try:
            results[label] = run_on_spark(spark, RunSpec(topology=t, duration_s=60.0, workers=1, seed=7),
                                          tmp_path / label)
        except BaseException as err:  # noqa: BLE001 - re-raised in the test thread
            results[label] = err

    threads = [threading.Thread(target=go, args=(label, t)) for label, t in (("annotated", topo), ("suggested", fixed))]
    for th in threads:
        th.start()
    for th in threads:
        th.join(300)
    for value in results.values():
        if isinstance(value, BaseException):
            raise value

    events, queues = load_frames(spark, tmp_path / "annotated")
    measured = analyze(spark, events, queues)
    b2 = compare(topo, measured).bolts[1]
    assert b2.bolt == "B2" and b2.model_status == "grows"
    assert measured.components["B2"].queue.verdict == "grows"
    predicted = rate_check(calibrate(topo, measured)).bolts["B2"].growth_nominal
    assert predicted == pytest.approx(b2.predicted_growth)
    assert abs(b2.measured_slope - predicted) <= 0.3 * predicted, (b2.measured_slope, predicted)
    print(f"\nB2 measured slope {b2.measured_slope:.3f}/s (CI {b2.measured_ci}), predicted {predicted:.3f}/s")

    events, queues = load_frames(spark, tmp_path / "suggested")
    steady = analyze(spark, events, queues)
    for bolt in fixed.bolts:
        trend = steady.components[bolt.name].queue
        assert trend.verdict != "grows", (bolt.name, trend)
    assert steady.components["B2"].queue.verdict == "stable"
    print(f"suggested {dict((b.name, b.parallelism) for b in fixed.bolts)}: "
          + ", ".join(f"{n} {c.queue.slope:+.3f}/s" for n, c in steady.components.items() if c.queue))


def test_a_killed_task_shows_its_losses_and_replays(spark, tmp_path: Path, capsys) -> None:
    """One killed task on Spark: bolt_down/bolt_up, lost tuples, failed trees and replays, in `analyze` on
    both engines, in the reliability check (no violation), in `compare` and in the HTML report."""
    from app.cli import main
    from app.measure.analysis import analyze_path_local
    from app.spark.run_job import Kill

    topo = load_topology(MODELS / "getting-started.storm.json")
    bolts = [b.model_copy(update={"alpha": 0.05}) for b in topo.bolts]
    spouts = [s.model_copy(update={"rate": 20.0}) for s in topo.spouts]
    topo = topo.model_copy(update={"bolts": bolts, "spouts": spouts})
    spec = RunSpec(topology=topo, duration_s=3.0, workers=2, message_timeout_s=0.5,
                   kills=[Kill(bolt="split", at_s=0.8, down_s=0.5)])
    run_on_spark(spark, spec, tmp_path)
    assert json.loads((tmp_path / "run.json").read_text())["spec"]["kills"] == [
        {"bolt": "split", "at_s": 0.8, "down_s": 0.5}]
    events, queues = load_frames(spark, tmp_path)
    on_spark = analyze(spark, events, queues)
    local = analyze_path_local(tmp_path)
    for measured in (on_spark, local):
        split, sentences = measured.components["split"], measured.components["sentences"]
        assert split.failures == 1 and split.lost >= 5 and split.down_s == pytest.approx(0.5, abs=0.05)
        assert sentences.trees_failed >= split.lost // 8 and sentences.replays >= 1
        (row,) = measured.losses
        assert (row.bolt, row.spout, row.lost) == ("split", "sentences", split.lost)
    assert on_spark.losses == local.losses
    assert [(c.failures, c.lost, c.trees_failed, c.replays, c.down) for c in on_spark.components.values()] == \
        [(c.failures, c.lost, c.trees_failed, c.replays, c.down) for c in local.components.values()]
    report = check_reliability_local(read_log(tmp_path).events,
                                     ReliabilityConfig.from_topology(topo, ackers=1, message_timeout_s=0.5))
    assert report.ok, report.summary()
    code = main(["compare", str(tmp_path), "--bin", "0.25", "--report", str(tmp_path / "report.html")])
    out = capsys.readouterr().out
    assert code == 0 and "failures and replays:" in out and "around the failures" in out, out
    assert "replays of the lost tuples" in out
    html = (tmp_path / "report.html").read_text()
    assert "<h2>Failures and replays</h2>" in html and "Queues around the failures" in html


def test_a_run_delivers_each_stream_as_the_model_says(spark, tmp_path: Path) -> None:
    """A bolt with a declared stream: each subscriber receives the stream it subscribes to, with that stream's σ,
    and a repeated subscription delivers once (Topology.inputs, the rate check's definition)."""
    from app.core.topology import parse_topology

    doc = {
        "schema_version": 1, "name": "streams",
        "spouts": [{"kind": "spout", "id": "S", "name": "S", "rate": 40.0, "burst": 1}],
        "bolts": [{"kind": "bolt", "id": "A", "name": "A", "alpha": 0.002, "sigma": 1.0, "parallelism": 4,
                   "streams": ["status"], "stream_sigma": {"status": 0.5}},
                  {"kind": "bolt", "id": "B", "name": "B", "alpha": 0.002, "sigma": 0.0, "parallelism": 4},
                  {"kind": "bolt", "id": "C", "name": "C", "alpha": 0.002, "sigma": 0.0, "parallelism": 4}],
        "subscriptions": [{"id": "e1", "source": "S", "target": "A"},
                          {"id": "e2", "source": "A", "target": "B"},
                          {"id": "e3", "source": "A", "target": "B", "stream": "default"},  # the same stream again
                          {"id": "e4", "source": "A", "target": "C", "stream": "status"}],
        "settings": {"tolerance": 0.0, "max_idle_time": 0.0, "emission": "exact"},
    }
    topo = parse_topology(doc)
    run_on_spark(spark, RunSpec(topology=topo, duration_s=4.0, workers=1, seed=3), tmp_path)
    log = read_log(tmp_path)
    takes = {name: sum(1 for e in log.events if e.ev == "take" and e.comp == name) for name in "ABC"}
    inflow = {name: b.inflow_nominal for name, b in rate_check(topo).bolts.items()}
    assert inflow["B"] == inflow["A"] and inflow["C"] == inflow["A"] / 2  # what the model says
    assert abs(takes["B"] - takes["A"]) <= 4, takes  # each of A's default tuples once, not twice
    assert abs(takes["C"] - takes["A"] / 2) <= 2, takes  # half of A's tuples on 'status', none of the default ones

"""Killed tasks in a measured run, without Spark: the task side (one StormWorker), the SQL counts of
`analyze` on hand-written logs, the reliability check, `compare` around a failure, and `run --kill`'s
bad input (docs/spark-runs.md, "Killing a task")."""

from __future__ import annotations

import json
import time
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest

from app.cli import main
from app.core.topology import Topology
from app.measure.analysis import analyze_local
from app.measure.eventlog import Event, QueueSample
from app.measure.failures_measured import around_failures, downstream
from app.measure.reliability import ReliabilityConfig, check_reliability_local
from app.spark.run_job import Kill, RunSpec, plan_of
from app.spark.tasks import StormWorker

DOC = {"schema_version": 1, "name": "kill-demo",
       "spouts": [{"kind": "spout", "id": "s", "name": "lines", "rate": 20.0, "burst": 1}],
       "bolts": [{"kind": "bolt", "id": "p", "name": "parse", "alpha": 0.05, "sigma": 1.0, "parallelism": 2},
                 {"kind": "bolt", "id": "c", "name": "count", "alpha": 0.05, "sigma": 0.0, "parallelism": 2}],
       "subscriptions": [{"id": "a", "source": "s", "target": "p"}, {"id": "b", "source": "p", "target": "c"}]}


def _topology() -> Topology:
    return Topology.model_validate(DOC)


def _run(spec: RunSpec) -> tuple[list[Event], list[QueueSample]]:
    rows = StormWorker(plan_of(spec, workers=1), 0, time.time()).run()
    events = sorted((Event(t=r[0], ev=r[1], comp=r[2], task=r[3], tuple=r[4], msg=r[5], anchors=r[6], reason=r[7])
                     for r in rows if r[1] is not None), key=lambda e: e.t)
    return events, [QueueSample(t=r[0], comp=r[2], task=r[3], queue=r[8]) for r in rows if r[1] is None]


# ---- the task side -----------------------------------------------------------


def test_a_killed_bolt_loses_its_tuples_and_the_spout_replays_them() -> None:
    topo = _topology()
    spec = RunSpec(topology=topo, duration_s=3.0, message_timeout_s=0.4, sample_interval_s=0.05,
                   kills=[Kill(bolt="parse", at_s=0.8, down_s=0.5)])
    events, queues = _run(spec)
    down = [e for e in events if e.ev == "bolt_down"]
    up = [e for e in events if e.ev == "bolt_up"]
    assert [e.comp for e in down] == ["parse"] and [e.comp for e in up] == ["parse"]
    assert 0.8 <= down[0].t < 0.85 and 1.3 <= up[0].t < 1.35
    lost = [e for e in events if e.ev == "bolt_lost"]
    assert lost and all(e.comp == "parse" and down[0].t <= e.t <= up[0].t for e in lost)
    assert Counter(e.reason for e in lost)["DOWN"] >= 5  # 20 tuples/s for 0.5 s arrive while down
    # nothing of parse's happens while it is down, and it acks none of what it lost
    assert not any(e.comp == "parse" and e.ev in ("take", "bolt_emit", "bolt_ack") and down[0].t < e.t < up[0].t
                   for e in events if e.t > down[0].t + 0.06)  # a batch taken before the kill may log its take late
    lost_ids = {e.tuple for e in lost}
    assert not any(e.ev == "bolt_ack" and e.tuple in lost_ids for e in events)
    # every lost tuple's tree fails at the timeout and its message is replayed with a new root tuple
    failed = {e.msg for e in events if e.ev == "spout_fail"}
    message_of = {e.tuple: e.msg for e in events if e.ev == "spout_emit"}  # bolt_lost.msg is the root tuple
    assert {message_of[e.msg] for e in lost if e.msg is not None} <= failed
    replays = [e for e in events if e.ev == "spout_emit" and e.reason == "REPLAY"]
    assert {e.msg for e in replays} == failed - {e.msg for e in events if e.ev == "spout_fail" and e.t > 2.9}
    assert all(e.tuple != e.msg for e in replays)
    # paced (docs/model.md 7.3): at most one replay per new message (bursts of 1 here), the new ones keep the pace
    emits = [e for e in events if e.ev == "spout_emit"]
    assert not any(a.reason == b.reason == "REPLAY" for a, b in zip(emits, emits[1:], strict=False))
    assert len(emits) - len(replays) >= 0.9 * 20 * 3.0
    config = ReliabilityConfig.from_topology(topo, ackers=1, message_timeout_s=0.4)
    report = check_reliability_local(events, config)
    assert report.ok, report.summary()  # P2 takes a lost batch as finished; a replay is a new attempt for P1
    analysis = analyze_local(events, queues, bin_s=0.25)
    parse, lines = analysis.components["parse"], analysis.components["lines"]
    assert parse.failures == 1 and parse.lost == len(lost) and abs(parse.down_s - 0.5) < 0.05
    assert parse.sigma == 1.0  # the lost batch does not count: σ is over the batches the bolt finished
    assert lines.trees_failed == len([e for e in events if e.ev == "spout_fail"]) and lines.replays == len(replays)
    # the spout's rate apart: fresh (the annotated rate, 20/s) and replayed; calibration reads the fresh one
    assert lines.rate_replayed and lines.rate_fresh is not None
    assert lines.rate_fresh + lines.rate_replayed == pytest.approx(lines.rate_out)
    assert lines.rate_fresh == pytest.approx(20.0, rel=0.1) and lines.rate_out > 1.05 * lines.rate_fresh
    from app.measure.model_vs_measured import calibrate, parameter_rows

    assert calibrate(topo, analysis).spouts[0].rate == pytest.approx(lines.rate_fresh)
    row_rate = next(p for p in parameter_rows(topo, analysis) if p.component == "lines")
    assert row_rate.parameter == "rate (fresh)" and row_rate.measured == pytest.approx(lines.rate_fresh)
    (row,) = analysis.losses
    assert (row.bolt, row.spout, row.lost, row.trees) == ("parse", "lines", len(lost), len({e.msg for e in lost}))
    assert row.replayed <= row.trees


@pytest.mark.parametrize(("acking", "replay"), [(False, "paced"), (True, "none")])
def test_nothing_is_replayed_without_ackers_or_with_replays_off(acking: bool, replay: str) -> None:
    spec = RunSpec(topology=_topology(), duration_s=2.0, message_timeout_s=0.3, acking=acking, replay=replay,
                   kills=[Kill(bolt="parse", at_s=0.5, down_s=0.4)])
    events, _ = _run(spec)
    assert any(e.ev == "bolt_lost" for e in events)
    assert not any(e.reason == "REPLAY" for e in events)
    assert any(e.ev == "spout_fail" for e in events) == acking


def test_at_once_replays_come_in_one_burst() -> None:
    spec = RunSpec(topology=_topology(), duration_s=2.0, message_timeout_s=0.3, replay="at-once",
                   sample_interval_s=0.3, kills=[Kill(bolt="parse", at_s=0.3, down_s=0.4)])
    events, _ = _run(spec)
    emits = [e for e in events if e.ev == "spout_emit"]
    replays = [e.t for e in emits if e.reason == "REPLAY"]
    assert len(replays) >= 5
    # the messages one acker sweep failed are emitted again at the spout's next burst, not one per period,
    # and on top of its own pace (20 new messages a second)
    biggest = max(len([t for t in replays if r <= t < r + 0.02]) for r in replays)
    assert biggest >= 3
    assert len([e for e in emits if e.reason is None]) >= 0.9 * 20 * 2.0


def test_a_run_without_kills_has_no_kill_events() -> None:
    events, _ = _run(RunSpec(topology=_topology(), duration_s=1.0))
    assert not any(e.ev in ("bolt_down", "bolt_up", "bolt_lost") or e.reason == "REPLAY" for e in events)


# ---- the SQL counts on a hand-written log -------------------------------------


def _e(t: float, ev: str, comp: str, tuple_: str | None = None, msg: str | None = None,
       anchors: list[str] | None = None, reason: str | None = None, task: int = 1) -> Event:
    return Event(t=t, ev=ev, comp=comp, task=task, tuple=tuple_, msg=msg, anchors=anchors, reason=reason)


HAND = [
    _e(0.0, "spout_emit", "S", "S-1", "S-1"),
    _e(0.1, "take", "B", "S-1", task=2),
    _e(0.2, "bolt_emit", "B", "B-1", anchors=["S-1"], task=2),
    _e(0.2, "bolt_emit", "B", "B-2", anchors=["S-1"], task=2),
    _e(0.3, "bolt_ack", "B", "S-1", task=2),
    _e(0.4, "take", "C", "B-1", task=3),
    _e(0.5, "bolt_down", "C", reason="KILLED", task=3),
    _e(0.5, "bolt_lost", "C", "B-1", "S-1", reason="BATCH", task=3),
    _e(0.5, "bolt_lost", "C", "B-2", "S-1", reason="QUEUE", task=3),
    _e(0.6, "spout_emit", "S", "S-2", "S-2"),
    _e(0.7, "take", "B", "S-2", task=2),
    _e(0.8, "bolt_emit", "B", "B-3", anchors=["S-2"], task=2),
    _e(0.8, "bolt_ack", "B", "S-2", task=2),
    _e(0.8, "bolt_lost", "C", "B-3", "S-2", reason="DOWN", task=3),
    _e(1.0, "bolt_up", "C", task=3),
    _e(1.5, "spout_fail", "S", msg="S-1", reason="TIMEOUT"),
    _e(1.6, "spout_emit", "S", "S-3", "S-1", reason="REPLAY"),
    _e(1.7, "take", "B", "S-3", task=2),
    _e(1.8, "bolt_ack", "B", "S-3", task=2),
    _e(1.9, "spout_ack", "S", msg="S-1"),
    _e(2.1, "spout_fail", "S", msg="S-2", reason="TIMEOUT"),
    _e(2.5, "bolt_down", "C", reason="KILLED", task=3),
]


def test_analyze_counts_failures_losses_and_replays() -> None:
    analysis = analyze_local(HAND, [])
    c, s, b = (analysis.components[n] for n in ("C", "S", "B"))
    assert (c.failures, c.lost, c.down) == (2, 3, [(0.5, 1.0), (2.5, 2.5)])  # the second: still down at the end
    assert c.down_s == pytest.approx(0.5)
    assert (s.trees_failed, s.replays, s.emitted) == (2, 1, 3)
    assert (b.failures, b.lost, b.replays, b.trees_failed) == (0, 0, 0, 0)
    assert b.sigma == pytest.approx(3 / 3) and c.sigma is None  # C's one take died in its batch: no σ to measure
    assert [(r.bolt, r.spout, r.lost, r.trees, r.replayed) for r in analysis.losses] == [("C", "S", 3, 2, 1)]


def test_reliability_allows_lost_takes_and_replays() -> None:
    report = check_reliability_local(HAND, ReliabilityConfig(message_timeout_s=1.0, ackers=1))
    assert report.properties["P2_take_has_ack_or_fail"], report.summary()  # C's take of B-1 was lost
    assert report.properties["P1_emit_eventually_acked_or_failed"], report.summary()
    assert report.properties["P4_root_ack_is_last_event_of_tree"], report.summary()
    # without the loss, the take would be unfinished
    report = check_reliability_local([e for e in HAND if not (e.ev == "bolt_lost" and e.tuple == "B-1")],
                                     ReliabilityConfig(message_timeout_s=0.1, ackers=1))
    assert not report.properties["P2_take_has_ack_or_fail"]


def test_compare_around_a_failure_and_the_replay_range() -> None:
    queues = [QueueSample(t=t / 4, comp=comp, task=1, queue=q)
              for comp, levels in (("B", [2] * 8 + [0] * 4 + [12, 9, 6, 3, 2, 2, 2, 2]), ("C", [1] * 20))
              for t, q in enumerate(levels)]
    events = [_e(0.0, "spout_emit", "S", "S-1", "S-1"), _e(2.0, "bolt_down", "B"),
              *[_e(2.0, "bolt_lost", "B", f"x{i}", "S-1") for i in range(4)], _e(3.0, "bolt_up", "B")]
    analysis = analyze_local(events, queues, bin_s=0.25)
    subscribers = {"S": ["B"], "B": ["C"], "C": []}
    assert downstream(subscribers, "B") == ["B", "C"]
    result = around_failures(analysis, subscribers, impact=lambda j, s: Fraction(3), spare={"B": 4.0, "C": 1.0},
                             window_s=1.0)
    (window,) = result.windows
    qb, qc = window.queues
    assert (window.bolt, window.down, window.up, qb.bolt, qc.bolt) == ("B", 2.0, 3.0, "B", "C")
    assert qb.baseline == 2 and qb.peak == 12
    assert qb.drained_s == pytest.approx(3.875 - 3.0)  # back within a tuple of 2 at the bin of 3 (t = 3.75 + bin/2)
    assert qb.forecast_s == pytest.approx(10 / 4.0)
    assert qc.drained_s == 0.0 and qc.forecast_s == 0.0
    assert all(1.0 <= t <= 4.25 for t, _ in qb.series)
    (replay,) = result.replays
    assert (replay.lost, replay.trees, replay.model_low, replay.model_high, replay.within) == (4, 1, 2, 4, False)
    assert replay.impact == "3"


# ---- run --kill: bad input ------------------------------------------------------


@pytest.mark.parametrize(("kill", "message"), [
    ("parse@-1", "--kill: parse@-1: TIME must be at least 0"),
    ("parse@nan", "--kill: parse@nan: TIME 'nan' is not a time"),
    ("parse@1/0", "--kill: parse@1/0: DOWN must be above 0"),
    ("parse@1/inf", "--kill: parse@1/inf: DOWN 'inf' is not a time"),
    ("parse", "--kill: expected BOLT@TIME[/DOWN]"),
    ("nope@1", "--kill nope: no bolt named 'nope'"),
    ("lines@1", "--kill lines: a spout cannot be killed"),
    ("parse@10", "--kill parse@10: the time must be before the end of the run"),
    ("parse@2min", "--kill parse@120: the time must be before the end of the run"),
])
def test_run_kill_bad_input_is_one_line_exit_2(tmp_path: Path, capsys, kill: str, message: str) -> None:
    doc = tmp_path / "kill.storm.json"
    doc.write_text(json.dumps(DOC))
    code = main(["run", str(doc), "--duration", "10", "--out", str(tmp_path / "run"), "--kill", kill])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1, err


def test_run_kill_overlapping_and_default_down(tmp_path: Path, capsys, monkeypatch) -> None:
    from app.cli import spark_jobs

    doc = tmp_path / "kill.storm.json"
    doc.write_text(json.dumps(DOC))
    code = main(["run", str(doc), "--duration", "10", "--out", str(tmp_path / "run"),
                 "--kill", "parse@1/2", "--kill", "parse@2.5"])
    err = capsys.readouterr().err
    assert code == 2 and "--kill parse@2.5: the bolt is still down then" in err
    seen: dict = {}

    class FakeHost:
        def request(self, op, on_progress=None, **params):  # noqa: ANN001, ANN003  # a stand-in for the host client
            seen.update(params["spec"])
            return {"master": "local", "workers": 1, "events": 0, "queue_samples": 0, "out_dir": params["out"]}

        def close(self) -> None:
            pass

    monkeypatch.setattr(spark_jobs, "start_spark_host", lambda master, *a, **k: FakeHost())
    assert main(["run", str(doc), "--duration", "10", "--out", str(tmp_path / "run"), "--kill", "count@500ms",
                 "--kill", "parse@1/2", "--kill", "parse@3s/250ms"]) == 0
    assert seen["kills"] == [{"bolt": "count", "at_s": 0.5, "down_s": 1.0},
                             {"bolt": "parse", "at_s": 1.0, "down_s": 2.0},
                             {"bolt": "parse", "at_s": 3.0, "down_s": 0.25}]
    assert seen["replay"] == "paced"
    # DOWN defaults to the document's min_reboot_time, and its replay mode goes with the run
    doc.write_text(json.dumps({**DOC, "settings": {"min_reboot_time": 2.5, "max_reboot_time": 4, "replay": "at-once"}}))
    assert main(["run", str(doc), "--duration", "10", "--out", str(tmp_path / "run"), "--force",
                 "--kill", "count@1"]) == 0
    assert seen["kills"] == [{"bolt": "count", "at_s": 1.0, "down_s": 2.5}] and seen["replay"] == "at-once"


def test_which_batches_die_with_their_executor() -> None:
    from app.spark.tasks import killable_batch_lost

    # (generation before the take, now, taken at, last kill, last restart, down now)
    assert not killable_batch_lost(0, 0, 1.0, -1.0, -1.0, False)  # no kill since the take
    assert killable_batch_lost(0, 1, 1.0, 1.5, -1.0, True)  # killed while working on it
    assert killable_batch_lost(0, 1, 1.0, 0.99, -1.0, True)  # taken just before the kill, stamped after it
    assert killable_batch_lost(0, 1, 1.0, 0.99, 1.2, False)  # the same, and the bolt is up again by now
    assert not killable_batch_lost(0, 1, 1.0, 0.5, 0.9, False)  # a short failure came and went during the wait


def test_compare_takes_imp_from_the_model() -> None:
    from app.measure.model_vs_measured import impact_of

    topo = Topology.model_validate({**DOC, "bolts": [{**DOC["bolts"][0], "sigma": 2.0}, DOC["bolts"][1]]})
    impact = impact_of(topo)
    assert impact is not None and impact("parse", "lines") == 1 and impact("count", "lines") >= 2
    assert impact("count", "nope") is None
    events = [_e(0.0, "spout_emit", "lines", "lines-1", "lines-1"), _e(1.0, "bolt_down", "count"),
              *[_e(1.0, "bolt_lost", "count", f"parse-{i}", "lines-1", reason="QUEUE") for i in range(2)],
              _e(2.0, "bolt_up", "count")]
    from app.measure.model_vs_measured import compare

    (row,) = compare(topo, analyze_local(events, [])).failures.replays
    assert (row.lost, row.trees, row.model_high, row.within) == (2, 1, 2, True)
    assert row.model_low == -(-2 // int(impact("count", "lines")))



def test_growth_is_judged_per_stretch_between_failures() -> None:
    """A queue that piles up while a bolt is down and settles after its restart is not 'grows'; one that grows
    only after the restart is not hidden by the quiet stretch before it. Both say which stretch they judged."""
    from app.measure.analysis_model import ComponentStats, finish_queues

    def series(level) -> list[tuple[float, float]]:  # noqa: ANN001 - a function of time
        return [(t * 0.5, float(level(t * 0.5))) for t in range(200)]

    components = {"parse": ComponentStats(name="parse", kind="bolt", failures=1, down=[(20.0, 25.0)]),
                  "settles": ComponentStats(name="settles", kind="bolt"),
                  "grows": ComponentStats(name="grows", kind="bolt")}
    bins = {"settles": series(lambda t: 3 + (t % 2) if t < 20 else 3 + 8 * (t - 20) if t < 25
                              else 3 + (t % 2) + max(0.0, 40 - 40 * (t - 25))),  # drained within a second
            "grows": series(lambda t: 2 + (t % 2) if t < 25 else 2 + 4 * (t - 25))}
    finish_queues(components, bins, growth_floor=0.05, bin_s=0.5)
    settles, grows = components["settles"], components["grows"]
    assert [s.label for s in settles.segments] == ["before parse failed", "after parse failed", "after parse recovered"]
    assert settles.queue is not None and settles.queue.verdict == "stable", settles.queue
    assert "after parse recovered" in settles.queue.note
    assert grows.queue is not None and grows.queue.verdict == "grows" and grows.queue.slope == pytest.approx(4, rel=0.1)

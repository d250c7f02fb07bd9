"""Storm's events.log (the event inspector's FileBasedEventLogger) as a run log: emits per component and task."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.measure.analysis import analyze_local
from app.measure.eventlog import EventLogError, log_format, read_log
from app.measure.model_vs_measured import calibrate, compare
from app.measure.storm_events import LIMITS, apply_storm_events, read_storm_events

ROOT = Path(__file__).resolve().parents[2]


def events_log(seconds: int = 10, sentences_per_s: int = 4, words: int = 3) -> str:
    """A word count's events.log: the spout's anchored sentences, split's words (values hold commas)."""
    lines = []
    for s in range(seconds):
        stamp = f"Mon Nov 23 11:33:{10 + s:02d} UTC 2026"
        for i in range(sentences_per_s):
            msg = f"{s * sentences_per_s + i}"
            lines.append(f"{stamp},sentences,{1 + i % 2},{msg},[the cow, jumped over, the moon]")
            for w in range(words):
                lines.append(f"{stamp},split,{3 + w % 2},,[word{w}, 1]")
    return "\n".join(lines) + "\n"


def test_lines_become_spout_and_bolt_emits(tmp_path: Path) -> None:
    path = tmp_path / "events.log"
    path.write_text(events_log())
    log = read_storm_events(path)
    assert log_format(path) == "storm-events"
    assert read_log(path).events == log.events
    spout = [e for e in log.events if e.comp == "sentences"]
    split = [e for e in log.events if e.comp == "split"]
    assert len(spout) == 40 and len(split) == 120
    assert {e.ev for e in spout} == {"spout_emit"} and {e.ev for e in split} == {"bolt_emit"}
    assert {e.task for e in spout} == {1, 2} and {e.task for e in split} == {3, 4}
    assert spout[0].msg == "0" and split[0].anchors == []
    assert log.events[0].t == 0 and log.events[-1].t == 9


def test_message_ids_with_commas_and_values_over_two_lines(tmp_path: Path) -> None:
    path = tmp_path / "worker.log"
    path.write_text("Tue Dec 01 09:00:00 CET 2026,kafka,7,KafkaSpoutMessageId{topic-partition=t-0, offset=5},"
                    "[a, b]\nTue Dec 01 09:00:01 CET 2026,parse,2,,[line one\nline two]\n")
    assert log_format(path) == "storm-events"
    log = read_storm_events(path)
    assert [(e.comp, e.ev, e.msg) for e in log.events] == [
        ("kafka", "spout_emit", "KafkaSpoutMessageId{topic-partition=t-0, offset=5}"), ("parse", "bolt_emit", None)]


def test_a_metrics_log_is_still_a_metrics_log(tmp_path: Path) -> None:
    path = tmp_path / "metrics.log"
    path.write_text("2026-11-23 11:33:18,123 INFO 1432753016 localhost:6703 2:split __receive {population=3}\n")
    assert log_format(path) == "storm-metrics"


@pytest.mark.parametrize(("text", "message"), [
    ("hello\n", "events.log line 1: not an event inspector line"),
    ("Mon Nov 23 11:33:18 UTC 2026,split\n", "events.log line 1: expected DATE,COMPONENT,TASK,MESSAGE_ID,[VALUES]"),
    ("Mon Nov 23 11:33:18 UTC 2026,split,x,,[a]\n", "events.log line 1.task: not a task number"),
    ("Mon Nov 23 11:33:18 UTC 2026,split,1,abc\n", "events.log line 1.values: no [values] list"),
])
def test_bad_lines_name_the_line_and_field(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "events.log"
    path.write_text(text)
    with pytest.raises(EventLogError) as err:
        read_storm_events(path)
    assert str(err.value) == message or message in str(err.value)


def test_analysis_keeps_rates_and_says_what_the_log_cannot_give(tmp_path: Path) -> None:
    path = tmp_path / "events.log"
    path.write_text(events_log())
    log = read_storm_events(path)
    analysis = apply_storm_events(analyze_local(log.events, log.queues), log)
    spout, split = analysis.components["sentences"], analysis.components["split"]
    assert spout.rate_out == pytest.approx(4.0) and split.rate_out == pytest.approx(12.0)  # 10 whole seconds
    assert spout.burst_max is None and split.alpha_mean is None and split.sigma is None
    assert analysis.notes == list(LIMITS)
    assert any("no takes and no acks" in n for n in analysis.notes)


def test_compare_and_calibrate_from_an_events_log(tmp_path: Path) -> None:
    from app.core.formats.flux import import_flux

    path = tmp_path / "events.log"
    path.write_text(events_log())
    log = read_storm_events(path)
    analysis = apply_storm_events(analyze_local(log.events, log.queues), log)
    flux = import_flux(ROOT / "models" / "wordcount.flux.yaml").topology
    calibrated = calibrate(flux, analysis)
    sentences = calibrated.spouts[0]
    assert sentences.rate == pytest.approx(4.0) and sentences.unannotated == ["burst"]  # bursts: not from this log
    assert calibrated.bolt_by_name("split").unannotated == ["alpha", "sigma"]
    annotated = calibrated.model_copy(update={
        "spouts": [sentences.model_copy(update={"unannotated": []})],
        "bolts": [b.model_copy(update={"alpha": 0.01, "sigma": 1.0, "unannotated": []}) for b in calibrated.bolts]})
    comparison = compare(annotated, analysis)
    rows = {(r.component, r.parameter): r.measured for r in comparison.parameters}
    assert rows[("sentences", "rate")] == pytest.approx(4.0)
    assert rows[("sentences", "burst")] is None
    assert rows[("split", "alpha")] is None and rows[("split", "sigma")] is None
    assert all(b.measured_slope is None and b.agrees is None for b in comparison.bolts)  # no queue samples


def test_the_report_prints_the_limits(tmp_path: Path) -> None:
    from app.cli.analyze import format_analysis

    path = tmp_path / "events.log"
    path.write_text(events_log())
    log = read_storm_events(path)
    text = format_analysis(apply_storm_events(analyze_local(log.events, log.queues, source=str(path)), log))
    assert f"note: {LIMITS[0]}" in text and f"note: {LIMITS[1]}" in text

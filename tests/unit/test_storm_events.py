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
    from app.core.storm.flux.builder import import_flux

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


# ---- what such a log cannot decide, rolled files and the worker-artifacts layout --------------------


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    from app.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_reliability_refuses_an_events_log_in_one_line_and_the_report_agrees(tmp_path: Path, capsys) -> None:
    path = tmp_path / "events.log"
    path.write_text(events_log())
    code, out, err = _run(capsys, "reliability", str(path))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "emits only" in err and "none of P1-P4 and max spout pending can be decided" in err
    assert err.count(str(path)) == 1  # named once
    code, out, _ = _run(capsys, "reliability", str(path), "--json")
    assert code == 2 and "can be decided" in out
    report = tmp_path / "r.html"
    code, _, _ = _run(capsys, "analyze", str(path), "--report", str(report))
    html = report.read_text()
    assert code == 0 and "every guarantee holds" not in html and "not checked" in html and "emits only" in html


def test_a_report_says_which_properties_a_log_kind_cannot_decide() -> None:
    from app.measure.reliability import P1, P2, ReliabilityConfig, ReliabilityReport

    props = {p: True for p in ("P1_emit_eventually_acked_or_failed", "P2_take_has_ack_or_fail",
                               "P3_no_failure_implies_take_at_each_subscriber", "P4_root_ack_is_last_event_of_tree",
                               "max_spout_pending_respected")}
    props[P1] = False
    report = ReliabilityReport(properties=props, counts={}, violations=[], config=ReliabilityConfig(),
                               cannot_decide={P1: "no acks in this log"})
    assert report.ok  # P1 is not decided, so its False is no verdict
    text = report.summary()
    assert f"n/a   {P1}  (this log cannot decide it: no acks in this log)" in text and f"ok    {P2}" in text
    assert f"FAIL  {P1}" not in text


def test_rolled_and_gzipped_files_and_worker_artifacts_read_as_one_log(tmp_path: Path, capsys) -> None:
    import gzip
    import json

    lines = events_log().splitlines(keepends=True)
    whole = tmp_path / "events.log"
    whole.write_text("".join(lines))
    port = tmp_path / "workers-artifacts" / "wordcount-1-1700000000" / "6700"
    port.mkdir(parents=True)
    half = len(lines) // 2
    with gzip.open(port / "events.log.1.gz", "wt") as fh:  # the older half, rolled and compressed
        fh.write("".join(lines[:half]))
    (port / "events.log").write_text("".join(lines[half:]))
    artifacts = tmp_path / "workers-artifacts"
    for given in (artifacts, artifacts / "wordcount-1-1700000000", port):
        assert log_format(given) == "storm-events"
        assert len(read_log(given).events) == len(lines)
    assert log_format(port / "events.log.1.gz") == "storm-events"
    assert len(read_log(port / "events.log.1.gz").events) == half
    code, out, _ = _run(capsys, "analyze", str(artifacts), "--json")
    merged = json.loads(out)["analysis"]
    code2, out2, _ = _run(capsys, "analyze", str(whole), "--json")
    alone = json.loads(out2)["analysis"]
    assert code == code2 == 0 and merged["events"] == alone["events"] == len(lines)
    for name in ("sentences", "split"):
        assert merged["components"][name]["rate_out"] == pytest.approx(alone["components"][name]["rate_out"])
    other = artifacts / "other-2-1700000001" / "6701"
    other.mkdir(parents=True)
    (other / "events.log").write_text("".join(lines[:4]))
    with pytest.raises(EventLogError, match="of 2 topologies .*give one TOPOLOGY-ID folder"):
        read_log(artifacts)


def test_a_gzip_file_is_bounded_and_a_broken_one_is_one_line(tmp_path: Path, monkeypatch) -> None:
    import gzip

    from app.measure import storm_events

    path = tmp_path / "events.log.2.gz"
    with gzip.open(path, "wt") as fh:
        fh.write(events_log())
    monkeypatch.setattr(storm_events, "MAX_BYTES", 100)
    with pytest.raises(EventLogError, match="decompresses to over 100 bytes"):
        read_log(path)
    broken = tmp_path / "events.log.3.gz"
    broken.write_bytes(b"not gzip at all")
    with pytest.raises(EventLogError, match="not a readable gzip file"):
        read_log(broken)


def test_unknown_figures_are_unknown_not_zero(tmp_path: Path, capsys) -> None:
    import json

    path = tmp_path / "events.log"
    path.write_text(events_log())
    code, out, _ = _run(capsys, "analyze", str(path), "--json")
    split = json.loads(out)["analysis"]["components"]["split"]
    assert code == 0 and split["rate_in"] is None and split["taken"] is None and split["acked"] is None
    code, out, _ = _run(capsys, "analyze", str(path))
    row = next(line for line in out.splitlines() if line.startswith("split"))
    assert "unknown" in row.split()[1]


def test_cep_names_the_patterns_that_cannot_occur_in_an_events_log(tmp_path: Path, capsys) -> None:
    import json

    path = tmp_path / "events.log"
    path.write_text(events_log())
    patterns = tmp_path / "p.txt"
    patterns.write_text("emits: spout_emit -> bolt_emit\nacks: take -> bolt_ack\neither: bolt_emit OR take\n")
    code, out, _ = _run(capsys, "cep", str(patterns), str(path))
    assert code == 0
    assert "note: acks cannot match this log: bolt_ack, take cannot occur in a Storm events.log" in out
    assert "note: emits" not in out and "note: either" not in out  # these can occur
    code, out, _ = _run(capsys, "cep", str(patterns), str(path), "--json")
    assert json.loads(out)["cannot_occur"] == {"acks": ["bolt_ack", "take"]}

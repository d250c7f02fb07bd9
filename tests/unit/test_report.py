"""The Qt-free halves of the command line's pictures: trace series and the HTML run report."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.core.formats.trace import BoltStep, SpoutStep, Trace, TracePosition
from app.core.trace_series import describe_trace, loop_passes, trace_series
from app.measure.analysis import analyze_path_local
from app.measure.report import PatternCount, PatternSummary, Section, inline_svg, predicted_queue, render_report
from tests.conftest import ROOT

EXAMPLE_RUN = ROOT / "docs" / "examples" / "getting-started-run"
TOPOLOGY = {"name": "pair", "spouts": [{"name": "S", "rate": 1.0, "burst": 1}],
            "bolts": [{"name": "B", "alpha": 2.0, "sigma": 1.0, "parallelism": 1}],
            "subscriptions": [{"source": "S", "target": "B"}]}


def _trace() -> Trace:
    """S emits 1 tuple a second, B takes one every 2 s: positions 1..2 repeat every 2 s, B's queue +1 per pass."""
    def bolt(queue: int, arrivals: int, take: bool) -> BoltStep:
        return BoltStep(queue=queue, arrivals=arrivals, take=take, batch=1, emit=False, emitted=0, buffer=0,
                        phase="processing")

    rows = [("0", bolt(0, 1, True)), ("1", bolt(0, 1, False)), ("2", bolt(1, 1, True)), ("3", bolt(1, 1, False))]
    positions = [TracePosition(time=t, spouts={"S": SpoutStep(emit=True, emitted=1)}, bolts={"B": b})
                 for t, b in rows]
    return Trace(topology=TOPOLOGY, k=2, loop_start=1, positions=positions)


def test_trace_series_unrolls_times_queues_and_loop_passes() -> None:
    trace = _trace()
    assert trace.growth_per_loop() == {"B": 1}
    plain, unrolled = trace_series(trace, 0), trace_series(trace, 2)
    assert plain.times == [0.0, 1.0, 2.0, 3.0] and plain.loop_passes == [(1.0, 3.0)]
    assert unrolled.times == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    assert unrolled.loop_passes == [(1.0, 3.0), (3.0, 5.0), (5.0, 7.0)] == loop_passes(trace, 2)
    assert unrolled.step_times[-1] == pytest.approx(7.0 + 7.0 * 0.03)
    (b,) = unrolled.bolts
    assert b.bolt == "B" and b.growth_per_loop == 1
    assert b.queue == [0, 1, 1, 2, 2, 3, 3, 4]  # after each position: arrivals in, a take's batch out
    assert [a.label for a in b.arrivals] == ["from S"] and b.arrivals[0].counts == [1] * 8
    assert unrolled.senders == ["S"]
    assert describe_trace(trace) == "lasso with k = 2: positions 1..2 repeat forever (every 2 s; per loop: B +1)."


def test_predicted_queue_starts_at_the_measured_value_and_rises_at_the_model_growth() -> None:
    series = [(100.0, 4.0), (101.0, 5.0), (110.0, 12.0)]
    assert predicted_queue(series, 100.0, 0.5) == [(0.0, 4.0), (10.0, 9.0)]
    assert predicted_queue(series, 100.0, 0.0) == [(0.0, 4.0), (10.0, 4.0)]
    assert predicted_queue(series, 100.0, None) == []
    assert predicted_queue([], 100.0, 1.0) == []


def test_inline_svg_makes_ids_unique_and_refuses_external_files() -> None:
    svg = ('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"><clipPath id="ViewBox_1_clip"/>'
           '<g id="PlotItem_1" clip-path="url(#ViewBox_1_clip)"/></svg>')
    text = inline_svg(svg, "q3")
    assert not text.startswith("<?xml")
    assert 'id="q3-ViewBox_1_clip"' in text and "url(#q3-ViewBox_1_clip)" in text and 'id="q3-PlotItem_1"' in text
    with pytest.raises(ValueError, match="external"):
        inline_svg('<svg><image href="https://example.org/x.png"/></svg>', "q0")


@pytest.fixture(scope="module")
def analysis():
    if not (EXAMPLE_RUN / "events.jsonl").exists():
        pytest.skip("the example run docs/examples/getting-started-run is missing")
    return analyze_path_local(str(EXAMPLE_RUN))


def test_report_escapes_every_text_from_the_run(analysis, tmp_path: Path) -> None:
    hostile = analysis.model_copy(update={"source": '<script>alert("run")</script>'})
    patterns = PatternSummary(events=3, counts=[PatternCount(pattern="p<1>", text="a -> b & c", matches=2)],
                              first=["p<1> t=0..1 comp=<b>"])
    text = render_report(hostile, None, {}, Section(title="Reliability", reason="not <checked>"), patterns,
                         title="<img src=x>")
    assert "<script>" not in text and "<img" not in text and "<b>" not in text
    assert "&lt;script&gt;alert(&quot;run&quot;)&lt;/script&gt;" in text
    assert "a -&gt; b &amp; c" in text and "not &lt;checked&gt;" in text
    assert "No topology with annotated parameters" in text


def test_report_lists_every_component_measured(analysis) -> None:
    text = render_report(analysis, None, {"count": "<svg></svg>"}, None, None, title="run")
    for name in analysis.components:
        assert re.search(rf"<tr><td>{name}</td><td>(spout|bolt)</td>", text), name
    assert text.count("<svg") == 1 and text.startswith("<!DOCTYPE html>")


def test_pattern_events_match_as_the_cep_command_reads_them() -> None:
    """The report reads events as plain tuples; the monitors must find exactly what `stormbound cep` finds."""
    from app.cep.monitors import load_monitors, run_monitors
    from app.cli.report import pattern_events
    from app.measure.eventlog import read_log

    if not (EXAMPLE_RUN / "events.jsonl").exists():
        pytest.skip("the example run docs/examples/getting-started-run is missing")
    patterns = load_monitors({"queue_threshold": 20, "ack_timeout": 0.5})  # low thresholds: the run matches
    expected = run_monitors(read_log(EXAMPLE_RUN), patterns=patterns)
    found = run_monitors(pattern_events(str(EXAMPLE_RUN), "s"), patterns=patterns)
    assert len(expected) > 10
    assert [m.to_json() for m in found] == [m.to_json() for m in expected]

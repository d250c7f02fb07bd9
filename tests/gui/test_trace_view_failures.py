"""The trace view with failures (docs/trace-view.md): failure intervals shaded per bolt, lost tuples and the
spout's replays marked (the count in the tooltip), the table and the CSV say the same; `stormbound plot` too."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.formats.trace import Trace, load_trace
from app.core.trace_series import failure_intervals, has_failures, trace_series
from app.gui.panels.trace_view import TraceView, queue_after, trace_csv, unroll
from app.gui.trace_plots import FAILED_COLOURS, key_html

ROOT = Path(__file__).resolve().parents[2]
TRACE = ROOT / "tests" / "data" / "traces" / "failure-paced.trace.json"


@pytest.fixture()
def trace() -> Trace:
    """C fails at 1, 3, 5 (back 1 s later), losing 2, 4, 4 tuples that S replays one per fresh tuple; A grows."""
    return load_trace(TRACE)


@pytest.fixture()
def view(qtbot, trace: Trace) -> TraceView:
    widget = TraceView()
    qtbot.addWidget(widget)
    widget.resize(900, 600)
    widget.show()
    widget.set_trace(trace, "failures")
    return widget


def test_series_of_a_trace_with_failures(trace: Trace) -> None:
    series = trace_series(trace, 1)
    a, c = series.bolts
    assert a.failed == [] and a.lost.times == []
    assert c.failed == [(1.0, 2.0), (3.0, 4.0), (5.0, 6.0), (7.0, series.step_times[-1])]
    assert (c.lost.times, c.lost.counts) == ([1.0, 3.0, 5.0, 7.0], [2, 4, 4, 4])
    # a failed bolt loses its queue and what arrives: its queue after a failed position is 0
    failed = [q for q, sp in zip(c.queue, series.shown, strict=True) if sp.position.bolts["C"].phase == "failed"]
    assert failed == [0] * 4
    (s,) = series.spouts
    assert s.spout == "S" and (s.replayed.times, s.replayed.counts) == ([2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [1] * 6)
    # the backlog after each position; the unrolled pass raises it by its growth (2 per loop)
    assert s.backlog == [0, 2, 1, 4, 3, 6, 5, 8]
    assert [sp.position.spouts["S"].backlog for sp in unroll(trace, 1)] == [0, 0, 2, 1, 4, 3, 6, 5]
    assert series.failures and has_failures(trace)


def test_failure_intervals_end_at_the_recovery_or_the_plot() -> None:
    from app.core.formats.trace import BoltStep

    def step(phase: str, **kw: object) -> BoltStep:
        return BoltStep(queue=0, arrivals=0, take=False, batch=0, emit=False, emitted=0, buffer=0,
                        phase=phase, **kw)  # type: ignore[arg-type]

    steps = [step("idle"), step("failed", fail=True), step("failed"), step("idle", recover=True),
             step("failed", fail=True)]
    assert failure_intervals(steps, [0, 1, 2, 3, 4], 9) == [(1, 3), (4, 9)]
    assert queue_after(step("failed", fail=True)) == 0


def test_the_view_shades_failures_in_the_bolts_colour_and_marks_lost_and_replays(view: TraceView) -> None:
    drawn = view.drawn
    assert set(drawn.failed_regions) == {"C"}
    spans = [tuple(r.getRegion()) for r in drawn.failed_regions["C"]]
    assert spans == [(1.0, 2.0), (3.0, 4.0), (5.0, 5.15)]  # the last: still failed where the plot ends
    colour = drawn.failed_regions["C"][0].brush.color()
    assert colour.name() == FAILED_COLOURS[1] and 0 < colour.alpha() < 255  # C is the second bolt
    lost = drawn.lost_marks["C"]
    assert list(lost.data["x"]) == [1.0, 3.0, 5.0] and list(lost.data["y"]) == [2, 4, 4]
    replays = drawn.replay_marks["S"]
    assert list(replays.data["y"]) == [1, 1, 1, 1]
    assert replays.opts["tip"](x=2.0, y=1, data=1) == "1 replay(s) emitted"
    assert lost.opts["tip"](x=3.0, y=4, data=4) == "lost 4 tuple(s)"
    assert "S (replays)" in view.plot_items
    key = drawn.key.text
    assert "failed: " in key and "&nbsp;C" in key and "lost" in key and "replays" in key and "backlog" in key


def test_the_table_says_where_a_bolt_fails_and_what_it_replays(view: TraceView) -> None:
    view.set_cursor(1)
    values = view.table_values()
    assert values["C"]["phase"] == "failed (fails here, lost 2, replays S 2)"
    view.set_cursor(2)
    values = view.table_values()
    assert values["C"]["phase"] == "processing (recovers here)"
    assert values["S"]["phase"] == "spout, 1 replayed, backlog 2"
    assert values["A"]["phase"] == "processing"


def test_the_csv_has_the_failure_columns_only_with_failures(trace: Trace) -> None:
    rows = list(csv.DictReader(trace_csv(trace, unroll(trace, 0)).splitlines()))
    assert rows[1]["C.fail"] == "1" and rows[1]["C.lost"] == "2" and rows[1]["C.replays"] == "S=2"
    assert rows[2]["C.recover"] == "1" and rows[2]["S.backlog"] == "2" and rows[2]["S.replayed"] == "1"
    plain = load_trace(ROOT / "tests" / "data" / "traces" / "getting-started.1.trace.json")
    header = trace_csv(plain, unroll(plain, 0)).splitlines()[0]
    assert "fail" not in header and "backlog" not in header


def test_a_trace_without_failures_draws_as_before(qtbot) -> None:
    plain = load_trace(ROOT / "tests" / "data" / "traces" / "getting-started.1.trace.json")
    widget = TraceView()
    qtbot.addWidget(widget)
    widget.set_trace(plain, "plain")
    assert widget.drawn.failed_regions == {} and widget.drawn.replay_marks == {} and widget.drawn.lost_marks == {}
    series = trace_series(plain)
    assert not series.failures and series.spouts == []
    assert "failed" not in key_html(series, {}) and "replays" not in key_html(series, {})


def test_plot_draws_the_failures_too(tmp_path: Path) -> None:
    out = tmp_path / "failure.svg"
    done = subprocess.run([sys.executable, "-m", "app", "plot", str(TRACE), "-o", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    svg = out.read_text()
    assert "failed: " in svg or "failed:" in svg.replace("&#160;", " ")
    assert "S replays" in svg

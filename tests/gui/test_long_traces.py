"""Long lassos (docs/trace-view.md, "Long traces"): the trace view and `stormbound plot` draw per-pixel bands
when more positions are shown than the plots have pixels, each position when zoomed in, and `plot` reads the
compressed file of a long lasso quickly."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from app.cli import main
from app.core.formats.trace import COMPRESSED_FORMAT, Trace, load_trace, save_trace
from app.core.tcn.check.certify import certify
from app.core.trace_series import unroll
from app.gui.panels.trace_view import TraceView
from app.gui.trace_plots import ENVELOPE_WORDS

ROOT = Path(__file__).resolve().parents[2]
TRACE = ROOT / "tests" / "data" / "traces" / "failure-paced.trace.json"


def long_lasso(passes: int) -> Trace:
    """failure-paced's lasso with its loop unrolled `passes` times before the loop: the same run, as long
    as asked (C fails every 2 s, S replays, A grows), still a genuine lasso."""
    short = load_trace(TRACE)
    shown = unroll(short, passes)
    length = short.k + 1 - short.loop_start
    positions = [sp.position for sp in shown]
    k = len(positions) - 2
    return short.model_copy(update={"positions": positions, "k": k, "loop_start": k + 1 - length})


@pytest.fixture(scope="module")
def lasso() -> Trace:
    trace = long_lasso(1500)
    assert len(trace.positions) > 3000 and certify(trace).ok
    return trace


def test_a_long_lasso_is_written_compressed_and_plotted_as_bands(lasso: Trace, tmp_path: Path, capsys) -> None:
    path = tmp_path / "long.trace.json"
    save_trace(lasso, path)
    raw = json.loads(path.read_text())
    assert raw["format"] == COMPRESSED_FORMAT and len(raw["positions"]) < 20  # one run of the loop, repeated
    assert load_trace(path) == lasso
    out = tmp_path / "long.png"
    started = time.process_time()  # CPU time: a loaded machine stretches the wall-clock time, not this
    assert main(["plot", str(path), "-o", str(out), "--width", "800"]) == 0
    assert time.process_time() - started < 60  # about 2 s here; the figures are bench/'s
    assert out.stat().st_size > 5_000
    capsys.readouterr()


def test_the_trace_view_draws_bands_then_each_position_when_zoomed_in(qtbot, lasso: Trace) -> None:
    view = TraceView()
    qtbot.addWidget(view)
    view.resize(1000, 700)
    view.show()
    view.set_trace(lasso, "long")
    view.refresh_detail()
    drawn = view.drawn
    assert drawn.envelope and ENVELOPE_WORDS in drawn.key.text
    queue = view.plot_items["A"].listDataItems()[0]
    assert queue.name() == "queue" and len(queue.xData) < 3 * 1000  # one step per pixel, not 12k
    # the greatest queue of the whole band is the trace's greatest queue after a position
    series_max = max(drawn.series.bolts[0].queue)
    assert max(queue.yData) == series_max
    first = next(iter(view.plot_items.values()))
    first.setXRange(100, 104, padding=0)
    view.refresh_detail()
    assert not drawn.envelope and ENVELOPE_WORDS not in drawn.key.text
    queue = view.plot_items["A"].listDataItems()[0]
    inside = [i for i, t in enumerate(drawn.series.times) if 100 <= t <= 104]
    lo, hi = inside[0] - 1, inside[-1] + 2
    assert list(queue.yData) == drawn.series.bolts[0].queue[lo:hi]  # every position, exactly
    shown = [t for t in drawn.series.bolts[1].lost.times if drawn.series.times[lo] <= t <= drawn.series.times[hi - 1]]
    assert list(drawn.lost_marks["C"].data["x"]) == shown  # every loss in range (and either side), none merged
    # the cursor still steps through every position of the trace
    view.cursor_to_time(102.0)
    assert abs(float(view.shown[view.cursor_index].time) - 102.0) <= 1


def test_unrolling_a_long_loop_stops_at_the_shown_positions_limit(qtbot, monkeypatch, lasso: Trace,
                                                                  tmp_path: Path, capsys) -> None:
    import app.core.long_trace as long_trace
    import app.core.trace_series as trace_series

    monkeypatch.setattr(trace_series, "MAX_SHOWN_POSITIONS", len(lasso.positions) + 20)
    monkeypatch.setattr(long_trace, "MAX_LONG_POSITIONS", len(lasso.positions) + 20)  # plot reads it compressed
    loop = lasso.k + 1 - lasso.loop_start
    assert trace_series.max_unroll(lasso, 50) == 20 // loop
    path = tmp_path / "long.trace.json"
    save_trace(lasso, path)
    assert main(["plot", str(path), "-o", str(tmp_path / "x.png"), "--unroll", "50"]) == 2
    err = capsys.readouterr().err
    assert f"would show more than {len(lasso.positions) + 20} positions (at most {20 // loop} here)" in err
    view = TraceView()
    qtbot.addWidget(view)
    view.set_trace(lasso)
    assert view.unroll_box.maximum() == 20 // loop
    view.set_trace(load_trace(TRACE))
    assert view.unroll_box.maximum() == 50

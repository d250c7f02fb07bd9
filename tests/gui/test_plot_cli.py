"""`stormbound plot` and `stormbound analyze --report`: pictures and reports from the command line (Qt offscreen)."""

from __future__ import annotations

import json
import re
import shutil
import struct
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
from test_trace_view import make_trace

from app.cli import main
from app.core.formats.trace import save_trace
from tests.conftest import MODELS, ROOT

SVG = "{http://www.w3.org/2000/svg}"
EXAMPLE_RUN = ROOT / "docs" / "examples" / "getting-started-run"


@pytest.fixture()
def trace_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.trace.json"
    save_trace(make_trace(), path)
    return path


def _groups(root: ET.Element, kind: str) -> list[ET.Element]:
    """The SVG groups pyqtgraph names after an item class (`PlotItem_1`, `LinearRegionItem_3`, ...)."""
    return [g for g in root.iter(f"{SVG}g") if re.fullmatch(rf"{kind}_\d+", g.get("id", ""))]


def _loop_spans(root: ET.Element) -> list[tuple[float, float]]:
    """The shaded loop passes (data coordinates of each region's rectangle), of every plot."""
    spans = []
    for region in _groups(root, "LinearRegionItem"):
        shape = next(g for g in region.iter(f"{SVG}g") if g.find(f"{SVG}rect") is not None)
        assert shape.get("fill") == "#ffbf00"  # the loop's amber shade
        rect = shape.find(f"{SVG}rect")
        assert rect is not None
        x, width = float(rect.get("x", "nan")), float(rect.get("width", "nan"))
        spans.append((round(x, 6), round(x + width, 6)))
    return spans


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def test_plot_svg_has_one_plot_per_bolt_and_the_loop_shaded(qapp, trace_file: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "lasso.svg"
    assert main(["plot", str(trace_file), "-o", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    root = ET.parse(out).getroot()
    assert root.tag == f"{SVG}svg"
    assert len(_groups(root, "PlotItem")) == 2  # bolts B1 and B2
    assert sorted(set(_loop_spans(root))) == [(1.0, 2.0)]  # the loop: positions 1..2, t = 1..2 s
    texts = " ".join(t.text or "" for t in root.iter(f"{SVG}text"))
    assert "tiny" in texts and "k = 2" in texts and "counterexample" in texts  # the title
    assert "loop (repeats forever)" in texts


def test_unroll_repeats_the_loop_and_extends_the_time_axis(qapp, trace_file: Path, tmp_path: Path) -> None:
    plain, unrolled = tmp_path / "plain.svg", tmp_path / "unrolled.svg"
    assert main(["plot", str(trace_file), "-o", str(plain)]) == 0
    assert main(["plot", str(trace_file), "-o", str(unrolled), "--unroll", "3"]) == 0
    plain_spans = sorted(set(_loop_spans(ET.parse(plain).getroot())))
    unrolled_spans = sorted(set(_loop_spans(ET.parse(unrolled).getroot())))
    assert unrolled_spans == [(1.0, 2.0), (2.0, 3.0), (3.0, 4.0), (4.0, 5.0)]
    assert max(end for _, end in unrolled_spans) == max(end for _, end in plain_spans) + 3.0
    # the bottom axis reaches the later time: its tick labels go past 4 s
    ticks = [float(t.text) for t in ET.parse(unrolled).getroot().iter(f"{SVG}text")
             if t.text and re.fullmatch(r"\d+(\.\d+)?", t.text.strip())]
    assert max(ticks) >= 4.5


def test_a_run_without_loop_is_drawn_as_found(qapp, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    witness = make_trace().model_copy(update={"loop_start": 3})  # a threshold witness: loop_start = k + 1
    path, out = tmp_path / "witness.json", tmp_path / "witness.svg"
    save_trace(witness, path)
    assert main(["plot", str(path), "-o", str(out), "--unroll", "2"]) == 0
    assert "the trace has no loop" in capsys.readouterr().err
    root = ET.parse(out).getroot()
    assert len(_groups(root, "PlotItem")) == 2 and not _groups(root, "LinearRegionItem")
    assert "witness" in " ".join(t.text or "" for t in root.iter(f"{SVG}text"))


def test_plot_png_is_an_image_of_the_asked_width(qapp, trace_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "lasso.png"
    assert main(["plot", str(trace_file), "-o", str(out), "--width", "800"]) == 0
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk
    assert width == 800 and height > 200
    assert len(data) > 10_000  # curves, not a blank image


def test_plot_of_a_verified_model(qapp, tmp_path: Path) -> None:
    trace = tmp_path / "t.json"
    assert main(["verify", str(MODELS / "getting-started.storm.json"), "--trace-out", str(trace)]) == 1
    out = tmp_path / "lasso.svg"
    assert main(["plot", str(trace), "-o", str(out), "--unroll", "1"]) == 0
    root = ET.parse(out).getroot()
    bolts = list(json.loads(trace.read_text())["positions"][0]["bolts"])
    assert len(_groups(root, "PlotItem")) == len(bolts) >= 1
    assert len(set(_loop_spans(root))) == 2


@pytest.mark.parametrize(("case", "expected"), [
    ("missing", "no such file"),
    ("topology", "not a stormbound trace"),
    ("broken", "positions"),
    ("extension", "unknown picture format '.jpg'"),
    ("no-folder", "no such folder"),
    ("folder", "is a folder"),
    ("unroll", "--unroll: 99 is out of range"),
])
def test_plot_errors_exit_2_with_one_line(qapp, case: str, expected: str, trace_file: Path, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    trace, out, extra = str(trace_file), str(tmp_path / "out.svg"), []
    if case == "missing":
        trace = str(tmp_path / "nothing.json")
    elif case == "topology":
        trace = str(MODELS / "getting-started.storm.json")
    elif case == "broken":
        data = json.loads(trace_file.read_text())
        data["positions"] = data["positions"][:2]
        (tmp_path / "broken.json").write_text(json.dumps(data))
        trace = str(tmp_path / "broken.json")
    elif case == "extension":
        out = str(tmp_path / "out.jpg")
    elif case == "no-folder":
        out = str(tmp_path / "missing" / "out.svg")
    elif case == "folder":
        (tmp_path / "taken.svg").mkdir()
        out = str(tmp_path / "taken.svg")
    elif case == "unroll":
        extra = ["--unroll", "99"]
    assert main(["plot", trace, "-o", out, *extra]) == 2
    assert expected in _one_error_line(capsys)
    assert not Path(out).is_file()


# ---- analyze --report --------------------------------------------------------------------------
class _References(HTMLParser):
    """Every src/href of a page, and the tags seen."""

    def __init__(self) -> None:
        super().__init__()
        self.references: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.references += [v or "" for k, v in attrs if k in ("src", "href", "xlink:href")]


@pytest.fixture()
def run_folder(tmp_path: Path) -> Path:
    if not (EXAMPLE_RUN / "events.jsonl").exists():
        pytest.skip("the example run docs/examples/getting-started-run is missing")
    return Path(shutil.copytree(EXAMPLE_RUN, tmp_path / "run"))


def test_report_is_one_self_contained_file_with_plots_and_tables(qapp, run_folder: Path, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report" / "run.html"
    out.parent.mkdir()
    assert main(["analyze", str(run_folder), "--report", str(out), "--engine", "local"]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    assert [p.name for p in out.parent.iterdir()] == ["run.html"]  # one file, nothing beside it
    text = out.read_text(encoding="utf-8")
    page = _References()
    page.feed(text)
    assert not [r for r in page.references if not r.startswith("#")], page.references
    assert "script" not in page.tags and "link" not in page.tags and "img" not in page.tags
    assert not re.search(r"https?://(?!www\.w3\.org/)", text)  # only the SVG namespaces
    assert page.tags.count("svg") == 2  # the queues of split and count
    plots = re.findall(r'<div class="plot" id="plot-(\w+)">(.*?)</div>', text, re.S)
    assert [name for name, _ in plots] == ["split", "count"]
    for plot in plots:
        legend = " ".join(re.findall(r">([^<>]+)</text>", plot[1]))
        assert "measured" in legend and "model" in legend, plot[0]  # both lines, with their key
    # the inline plots each keep their own clip paths
    ids = re.findall(r'\bid="([^"]+)"', text)
    assert len(ids) == len(set(ids))
    # model versus measured: one row per bolt, with the verdicts the analysis prints
    rows = re.findall(r"<tr[^>]*><td>(split|count)</td><td>(bounded|grows)</td>", text)
    assert rows == [("split", "bounded"), ("count", "grows")]
    assert "every guarantee holds" in text and "queue_above_threshold" in text
    assert "headroom ×" in text  # capacity in Storm's terms, from the run's own topology
    for section in ("Queues: measured and predicted", "Model versus measured", "Capacity in Storm's terms",
                    "Reliability", "Pattern matches"):
        assert section in text


def test_report_refuses_a_bad_output_before_reading_the_log(qapp, run_folder: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", str(run_folder), "--report", str(tmp_path / "report.pdf")]) == 2
    assert "unknown report format '.pdf'" in _one_error_line(capsys)
    assert main(["analyze", str(run_folder), "--report", str(tmp_path / "no" / "report.html")]) == 2
    assert "no such folder" in _one_error_line(capsys)


def test_compare_writes_the_same_report(qapp, run_folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "compare.html"
    assert main(["compare", str(run_folder), "--report", str(out), "--engine", "local"]) == 0
    text = out.read_text(encoding="utf-8")
    assert "Model versus measured" in text and text.count("<svg") == 2


def test_plot_needs_no_display(trace_file: Path, tmp_path: Path) -> None:
    """A fresh process with no Qt platform chosen and an X display that does not answer still draws."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    env["DISPLAY"] = ":97"  # nothing listens there
    out = tmp_path / "lasso.png"
    done = subprocess.run([sys.executable, "-m", "app", "plot", str(trace_file), "-o", str(out)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ---- readable pictures ----------------------------------------------------------------------------


def test_every_component_gets_its_own_colour() -> None:
    from app.gui.trace_plots import ARRIVAL_COLOURS, component_colours

    names = [f"c{i}" for i in range(60)]
    colours = component_colours(names)
    assert len(set(colours.values())) == 60  # no two components share a colour, however many there are
    assert list(colours.values())[: len(ARRIVAL_COLOURS)] == ARRIVAL_COLOURS
    assert not {"#1f77b4", "#2ca02c"} & set(colours.values())  # the queue's and in-process lines' colours


def test_one_time_unit_per_figure_and_titles_that_fit() -> None:
    from app.core.formats.trace import Trace
    from app.core.trace_series import describe_trace, trace_series
    from app.gui.trace_plots import time_unit, wrap_title

    traces = ROOT / "tests" / "data" / "traces"
    for name in ("focused-crawler-complete.1.trace.json", "getting-started.1.trace.json",
                 "simple-DIA-cfg-1.1.trace.json"):
        trace = Trace.model_validate(json.loads((traces / name).read_text()))
        series = trace_series(trace, 0)
        span = float(series.step_times[-1] - series.times[0])
        assert time_unit(series) == (("ms", 1000.0) if span < 1 else ("s", 1.0))
        text = describe_trace(trace)
        assert not re.search(r"\d\.\d{7,}", text), text  # no float noise such as 0.036000000000000003
    title = ("crawler — counterexample, a queue grows without bound: lasso with k = 60: positions 17..60 repeat "
             "forever (every 570 ms; per loop: tika +7).")
    lines = wrap_title(title, 600).split("<br>")
    assert len(lines) > 1 and all(len(line) <= 600 / 7.2 for line in lines)
    assert any("570\u00a0ms" in line for line in lines)  # a figure stays with its unit


def test_report_plots_shade_the_intervals_a_killed_task_was_down(qapp) -> None:
    from app.cli.report import queue_plots
    from app.measure.analysis_model import Analysis

    analysis = Analysis.model_validate({
        "start": 100.0, "end": 110.0, "events": 0, "queue_samples": 20, "bin_s": 1.0, "growth_floor": 0.0,
        "components": {"B": {"name": "B", "kind": "bolt", "series": [(100.0 + t, t % 3) for t in range(10)]},
                       "C": {"name": "C", "kind": "bolt", "series": [(100.0 + t, 1) for t in range(10)],
                             "failures": 1, "down": [(103.0, 105.5)], "down_s": 2.5}}})
    plots = queue_plots(analysis, None)
    for name in ("B", "C"):  # every queue plot shows C's down time, in run time (3 s .. 5.5 s)
        root = ET.fromstring(f"<svg xmlns='http://www.w3.org/2000/svg'>{plots[name]}</svg>")
        texts = " ".join(t.text or "" for t in root.iter(f"{SVG}text"))
        assert "shaded: C down" in texts
        regions = [g for g in root.iter(f"{SVG}g") if re.fullmatch(r"q\d+-LinearRegionItem_\d+", g.get("id", ""))]
        assert len(regions) == 1  # ids made unique per plot by inline_svg
        shape = next(g for g in regions[0].iter(f"{SVG}g") if g.find(f"{SVG}rect") is not None)
        rect = shape.find(f"{SVG}rect")
        assert shape.get("fill") == "#d62728" and rect is not None  # the first failure colour, as in the trace view
        x, width = float(rect.get("x", "nan")), float(rect.get("width", "nan"))
        assert (round(x, 6), round(x + width, 6)) == (3.0, 5.5)
    assert "shaded" not in queue_plots(analysis.model_copy(update={"components": {
        "B": analysis.components["B"]}}), None)["B"]

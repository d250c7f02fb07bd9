"""The installation self-test (`stormbound --selftest`) run from the checkout, not frozen.

The frozen run is in tests/dist (slow). Here: each step on its own, the one-line
failure report, the data lookup of the bundle, and the whole run when the
verifier is installed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app import datafiles, selftest
from app.cli import main
from app.core.formats.trace import Trace


def _small_lasso(topo) -> Trace:
    """A hand-made two-step lasso on the example (queue of B2 rises by one per loop)."""
    names = [b.name for b in topo.bolts]

    def position(time: str, queue_b2: int) -> dict:
        bolts = {
            name: {"queue": queue_b2 if name == "B2" else 0, "arrivals": 1, "take": False, "batch": 0,
                   "emit": False, "emitted": 0, "buffer": 0, "phase": "idle"}
            for name in names
        }
        spouts = {s.name: {"emit": True, "emitted": 1} for s in topo.spouts}
        return {"time": time, "spouts": spouts, "bolts": bolts}

    return Trace.model_validate({
        "topology": topo.model_dump(mode="json"),
        "k": 2,
        "loop_start": 1,
        "positions": [position("0", 0), position("1", 1), position("2", 2), position("3", 3)],
    })


def test_bundled_example_loads_and_rate_check_flags_b2():
    topo = selftest.load_example()
    statuses = selftest.check_rates(topo)
    assert topo.name == "simple-DIA-cfg-1"
    assert statuses["B2"] == "grows"
    assert statuses["B1"] == "bounded"


def test_render_writes_a_png_that_is_not_blank(tmp_path: Path):
    from PySide6.QtGui import QImage

    topo = selftest.load_example()
    path, drawn_by = selftest.render_trace_png(_small_lasso(topo), tmp_path)
    image = QImage(str(path))
    assert path == tmp_path / "trace.png" and drawn_by in {"trace view", "queue plot"}
    assert (image.width(), image.height()) == selftest.PNG_SIZE
    assert selftest._distinct_colours(image) >= 3


def test_missing_example_fails_with_one_line_naming_the_step(monkeypatch, capsys, tmp_path: Path):
    monkeypatch.setattr(datafiles, "data_root", lambda: tmp_path)
    assert main(["--selftest"]) == selftest.EXIT_SELFTEST_FAILED
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("stormbound selftest FAILED at example:")
    assert "simple-DIA-cfg-1.storm.json is missing" in err[0]


def test_a_step_raising_any_error_is_reported_not_raised(monkeypatch, capsys):
    def broken(topo):
        raise OSError("libz3.so: cannot open shared object file")

    monkeypatch.setattr(selftest, "check_rates", broken)
    assert selftest.run_selftest() == selftest.EXIT_SELFTEST_FAILED
    assert capsys.readouterr().err.strip() == (
        "stormbound selftest FAILED at rate check: OSError: libz3.so: cannot open shared object file")


def test_wrong_verdict_is_a_failure(monkeypatch, capsys):
    from app.core.results import VerifyResult

    monkeypatch.setattr(selftest, "_verify_function",
                        lambda: (lambda topo, options=None, **kwargs: VerifyResult(verdict="none-up-to-k", k=3,
                                                                                 message="none")))
    assert selftest.run_selftest() == selftest.EXIT_SELFTEST_FAILED
    assert "FAILED at verify: expected a counterexample" in capsys.readouterr().err


def test_frozen_bundle_finds_data_under_meipass(monkeypatch, tmp_path: Path):
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    assert datafiles.is_frozen()
    assert datafiles.models_dir() == tmp_path / "models"
    assert datafiles.resources_dir() == tmp_path / "resources"


def test_checkout_finds_data_beside_app():
    assert not datafiles.is_frozen()
    assert (datafiles.models_dir() / selftest.EXAMPLE).is_file()


def test_headless_qt_is_chosen_without_display(monkeypatch):
    for name in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    assert selftest.ensure_headless_qt() == "offscreen"
    monkeypatch.setenv("QT_QPA_PLATFORM", "minimal")
    assert selftest.ensure_headless_qt() == "minimal"


@pytest.mark.timeout(60)
def test_whole_selftest_finds_the_counterexample(tmp_path: Path, capsys):
    assert selftest.run_selftest(out_dir=tmp_path) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1
    assert "selftest ok" in out[0] and "verify B2: counterexample" in out[0] and "growing B2 certified" in out[0]
    assert (tmp_path / "trace.png").stat().st_size > 1000


def test_fallback_queue_plot_renders_when_the_trace_view_is_absent(monkeypatch, tmp_path: Path):
    monkeypatch.setattr(selftest, "_trace_view_widget", lambda trace: None)
    path, drawn_by = selftest.render_trace_png(_small_lasso(selftest.load_example()), tmp_path)
    assert drawn_by == "queue plot" and path.stat().st_size > 1000

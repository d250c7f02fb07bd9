"""`stormbound --selftest`: a headless check that an installation works end to end.

Loads a bundled example, runs the rate check and a small verification (which must
find the known counterexample), renders the trace view to a PNG in a temporary
folder and prints one summary line. Each step that fails stops the test with one
line naming the step, so a broken bundle (missing libz3, missing Qt plugin,
missing example) is diagnosed without a traceback.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app import __version__
from app.core.errors import InternalError

if TYPE_CHECKING:
    from PySide6.QtCore import QCoreApplication
    from PySide6.QtGui import QImage

    from app.core.formats.trace import Trace
    from app.core.results import VerifyResult
    from app.core.topology import Topology

EXAMPLE = "simple-DIA-cfg-1.storm.json"
EXPECTED_GROWING = "B2"  # the rate check says B2 `grows` at nominal rates
SELFTEST_MAX_K = 8  # small bound: checking B2 alone, its lasso has k = 4 (found in well under a second)
SELFTEST_TIMEOUT_S = 120.0
PNG_SIZE = (900, 560)
EXIT_SELFTEST_FAILED = 1


class SelftestError(InternalError):
    """A self-test step failed; the message says what and why in one line."""

    def __init__(self, step: str, message: str) -> None:
        super().__init__(f"{step}: {message}")
        self.step = step


def _step(name: str, action: Callable[[], Any]) -> Any:
    """Run one step, turning any failure into a SelftestError naming the step."""
    try:
        return action()
    except SelftestError:
        raise
    except Exception as err:  # the whole point: report any failure as one line
        detail = str(err).strip().splitlines()[0] if str(err).strip() else ""
        raise SelftestError(name, f"{type(err).__name__}: {detail}" if detail else type(err).__name__) from err


def ensure_headless_qt() -> str:
    """Use the offscreen Qt platform when there is no display; returns the platform in use."""
    if not os.environ.get("QT_QPA_PLATFORM") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    os.environ.setdefault("QT_API", "pyside6")
    return os.environ.get("QT_QPA_PLATFORM", "default")


def load_example(name: str = EXAMPLE) -> Topology:
    """The bundled example topology (from the checkout or sys._MEIPASS)."""
    from app.core.formats import load_topology
    from app.datafiles import example_path

    path = example_path(name)
    if not path.is_file():
        raise SelftestError("example", f"{path} is missing from the installation")
    return load_topology(path)


def check_rates(topo: Topology) -> dict[str, str]:
    """The rate check's status per bolt; the example must have a growing bolt."""
    from app.core.rates import rate_check

    report = rate_check(topo)
    statuses: dict[str, str] = {name: bolt.status for name, bolt in report.bolts.items()}
    if statuses.get(EXPECTED_GROWING) != "grows":
        raise SelftestError("rate check", f"expected {EXPECTED_GROWING} to grow, got {statuses}")
    return statuses


def _verify_function() -> Callable[..., VerifyResult]:
    import importlib

    try:
        search = importlib.import_module("app.core.tcn.search")
    except ModuleNotFoundError as err:
        if err.name != "app.core.tcn.search":
            raise  # e.g. z3 missing from the bundle: reported by _step as the cause
        raise SelftestError("verify", "the verifier is not installed (app.core.tcn.search missing)") from err
    verify: Callable[..., VerifyResult] = search.verify  # app.core.tcn.search.verify, imported by name above
    return verify


def run_verification(topo: Topology, max_k: int = SELFTEST_MAX_K) -> VerifyResult:
    """A bounded verification of the example's growing queue, which must return a lasso.

    Only B2 is checked: its cone of influence (S1, S2, B2) gives a short lasso, so the
    self-test exercises z3, the encoding, the certifier and the trace in a second
    rather than the 10-50 s the whole example takes.
    """
    from app.core.tcn.options import SearchOptions

    verify = _verify_function()
    growing = next((b for b in topo.bolts if b.name == EXPECTED_GROWING), None)
    if growing is None:
        raise SelftestError("verify", f"the example has no bolt {EXPECTED_GROWING}")
    checked = topo.verification.model_copy(update={"checked": [growing.id]})
    # a broken solver must not hang the self-test
    # the solver, not the simulation, is what a broken bundle would lack
    options = SearchOptions(k_max=max_k, timeout_s=SELFTEST_TIMEOUT_S, simulate=False)
    result = verify(topo.model_copy(update={"verification": checked}), options)
    if result.verdict != "counterexample":
        raise SelftestError("verify",
                            f"expected a counterexample up to k={max_k}, got {result.verdict}: {result.message}")
    if result.trace is None:
        raise SelftestError("verify", "the counterexample has no trace")
    if not result.growing:
        raise SelftestError("verify", "the counterexample names no growing queue")
    return result


_QUIET_QT_WARNINGS = ("This plugin does not support propagateSizeHints()",)  # offscreen plugin noise


def _qt_message(mode: Any, context: Any, message: str) -> None:
    """Qt's log, minus the offscreen plugin's harmless warnings, so the summary stays one line."""
    if message not in _QUIET_QT_WARNINGS:
        print(message, file=sys.stderr)


def _qt_app() -> QCoreApplication:
    from PySide6.QtCore import qInstallMessageHandler
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        qInstallMessageHandler(_qt_message)
        app = QApplication([sys.argv[0] if sys.argv else "stormbound"])
    return app


def _trace_view_widget(trace: Trace) -> Any | None:
    """The app's trace-view panel showing `trace`, or None while that panel is not installed."""
    import importlib

    try:
        trace_view = importlib.import_module("app.gui.panels.trace_view")
    except ModuleNotFoundError as err:
        if err.name not in ("app.gui.panels.trace_view", "app.gui.panels"):
            raise  # the panel exists but something it needs is missing from the installation
        return None
    widget_class = getattr(trace_view, "TraceView", None)
    if widget_class is None:
        return None
    widget = widget_class()
    for setter in ("set_trace", "setTrace", "show_trace", "load_trace"):
        if hasattr(widget, setter):
            getattr(widget, setter)(trace)
            return widget
    raise SelftestError("trace view", f"{widget_class.__name__} has no set_trace method")


def _queue_plot_widget(trace: Trace) -> Any:
    """A plain pyqtgraph plot of every bolt's queue over time, with the loop marked."""
    import pyqtgraph as pg
    from PySide6.QtCore import Qt

    plot = pg.PlotWidget(background="w")
    plot.setTitle(f"queues of the lasso (k={trace.k}, loop from position {trace.loop_start})")
    plot.setLabel("bottom", "time", units="s")
    plot.setLabel("left", "queue", units="tuples")
    plot.addLegend()
    times = [float(p.exact_time) for p in trace.positions]
    names = list(trace.positions[0].bolts)
    for index, name in enumerate(names):
        queue = [p.bolts[name].queue for p in trace.positions]
        plot.plot(times, queue, name=name, pen=pg.mkPen(pg.intColor(index, hues=max(len(names), 3)), width=2),
                  symbol="o", symbolSize=5)
    plot.addItem(pg.InfiniteLine(times[trace.loop_start], angle=90, pen=pg.mkPen("k", style=Qt.PenStyle.DashLine)))
    return plot


def render_trace_png(trace: Trace, out_dir: Path) -> tuple[Path, str]:
    """Render the trace view offscreen to out_dir/trace.png; returns the path and which widget drew it."""
    app = _qt_app()
    widget = _trace_view_widget(trace)
    drawn_by = "trace view"
    if widget is None:
        widget, drawn_by = _queue_plot_widget(trace), "queue plot"
    widget.resize(*PNG_SIZE)
    widget.show()
    app.processEvents()
    image = widget.grab().toImage()
    widget.close()
    widget.deleteLater()
    app.processEvents()
    if image.isNull() or image.width() == 0:
        raise SelftestError("render", "the trace view rendered an empty image")
    if _distinct_colours(image) < 3:
        raise SelftestError("render", "the trace view rendered a blank image (no curves)")
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "trace.png"
    if not image.save(str(path), "PNG"):
        raise SelftestError("render", f"could not write {path} (no PNG image plugin?)")
    return path, drawn_by


def _distinct_colours(image: QImage, samples: int = 4000) -> int:
    """How many different colours a sample of pixels has (a blank render has one or two)."""
    width, height = image.width(), image.height()
    step = max(1, (width * height) // samples)
    seen = set()
    for n in range(0, width * height, step):
        seen.add(image.pixel(n % width, n // width))
        if len(seen) >= 16:
            break
    return len(seen)


def spark_python_note() -> str:
    """Which Python measured runs would use and whether it has pyspark (informative, never a failure)."""
    try:
        from app.spark.session import SPARK_PYTHON_ENV, SparkUnavailable, find_java, has_pyspark, spark_python
    except ModuleNotFoundError:
        return "spark: measured runs not installed"
    try:
        python = spark_python()
    except SparkUnavailable as err:
        return f"spark: {err}"
    if not has_pyspark(python):
        return f"spark: {python} has no pyspark (measured runs off; see {SPARK_PYTHON_ENV} in docs/install.md)"
    java = find_java()
    return f"spark: {python} with pyspark, java {java or 'missing (install Java 17)'}"


def run_selftest(out_dir: str | os.PathLike[str] | None = None, max_k: int = SELFTEST_MAX_K) -> int:
    """Run every step; print one summary line and return 0, or one error line and return 1."""
    started = time.perf_counter()
    platform = ensure_headless_qt()
    try:
        topo = _step("example", load_example)
        statuses = _step("rate check", lambda: check_rates(topo))
        result = _step("verify", lambda: run_verification(topo, max_k))
        folder = Path(out_dir) if out_dir is not None else Path(tempfile.mkdtemp(prefix="stormbound-selftest-"))
        png, drawn_by = _step("render", lambda: render_trace_png(result.trace, folder))
        spark = _step("spark", spark_python_note)
    except SelftestError as err:
        print(f"stormbound selftest FAILED at {err}", file=sys.stderr)
        return EXIT_SELFTEST_FAILED
    rates = ", ".join(f"{name} {status}" for name, status in statuses.items())
    frozen = "bundle" if getattr(sys, "frozen", False) else "python"
    print(
        f"stormbound {__version__} selftest ok ({frozen}, Qt {platform}): {topo.name}: rate check {rates}; "
        f"verify {EXPECTED_GROWING}: {result.verdict} k={result.k} loop_start={result.loop_start} "
        f"growing {','.join(result.growing)}"
        f"{' certified' if result.certified else ''}; {drawn_by} PNG {png} ({png.stat().st_size} bytes); {spark}; "
        f"{time.perf_counter() - started:.1f} s"
    )
    return 0

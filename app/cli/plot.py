"""`stormbound plot TRACE.json -o OUT.svg|png [--unroll N]`: the trace view's plots as a picture, no window.

One plot per bolt (queue over time, tuples in process, arrivals), the loop shaded and
a title with the verdict and k: the same drawing as the GUI's trace view
(app/gui/trace_plots.py), rendered by pyqtgraph's exporters on Qt's offscreen platform,
so it runs in a terminal or a CI job without a display.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.cli.common import UsageError
from app.cli.options import number
from app.cli.outputs import add_force_option
from app.cli.report import check_output, write_output
from app.core.topology import one_line

if TYPE_CHECKING:
    from app.core.trace_series import TraceSeries

FORMATS = (".svg", ".png")
MAX_UNROLL = 50  # as the trace view's control: beyond it the steps are too thin to read


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `plot` to the `stormbound` command line."""
    p = sub.add_parser(
        "plot", help="draw a trace's plots (one per bolt, loop shaded) to an SVG or PNG file, no window",
        description="Draw the trace view's plots of a trace (from `verify --trace-out`) to a picture:\n"
                    "one plot per bolt with its queue (tuples) over time (s), the loop shaded.\n"
                    "Needs no display (Qt's offscreen platform).",
        epilog="example:\n  stormbound verify models/getting-started.storm.json --trace-out t.json\n"
               "  stormbound plot t.json -o lasso.svg --unroll 2",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("trace", help="trace file (stormbound-trace/1 JSON, or /2 compressed, as written by "
                                 "`verify --trace-out`)")
    p.add_argument("-o", "--out", required=True, metavar="OUT",
                   help="picture to write: .svg (drawing) or .png (image), chosen by the extension")
    p.add_argument("--unroll", type=number(int), default=0, metavar="N",
                   help=f"repeat the loop N more times (0..{MAX_UNROLL}; default 0: the trace as found)")
    p.add_argument("--width", type=number(int), default=1000, metavar="PX",
                   help="picture width in pixels (default 1000)")
    p.add_argument("--title", help="title above the plots (default: the verdict, k and the loop)")
    add_force_option(p)
    p.set_defaults(func=cmd_plot, file_args=("trace",))


def read_trace_data(path: str) -> dict[str, Any]:
    """A trace file's decoded JSON (either format, `$schema` left out), its positions decoded one at a time as
    they are read (app/core/formats/limits.py, `LazyItems`); one-line UsageError (exit 2) otherwise."""
    from app.core.formats.jsonfile import read_json
    from app.core.formats.schema import without_schema_key
    from app.core.formats.trace import TRACE_FORMATS

    data = read_json(path, lazy="positions")  # FormatError (exit 2) for a missing, empty or non-JSON file
    if not isinstance(data, dict) or data.get("format") not in TRACE_FORMATS:
        raise UsageError(f"{path}: format: not a stormbound trace (expected \"format\": \"stormbound-trace/1\", "
                         f"or \"stormbound-trace/2\" compressed)")
    trace: dict[str, Any] = without_schema_key(data)  # a trace may name its schema
    return trace


def default_title(topology: dict[str, Any], k: int, loop_start: int, growth: dict[str, int], duration_s: float,
                  source: str) -> str:
    """The verdict and k in words: a lasso is a counterexample to boundedness, a finite run a threshold witness."""
    from app.core.trace_series import describe_lasso

    name = str(topology.get("name") or Path(source).name)
    verdict = "counterexample, a queue grows without bound" if loop_start <= k else "witness"
    return f"{name} — {verdict}: {describe_lasso(k, loop_start, growth, duration_s)}"


def plotted(path: str, unroll: int) -> tuple[TraceSeries, str, list[str]]:
    """The series of a trace file, its default title and its components. Every trace, `/1` or compressed `/2`,
    is read without its positions (app/core/long_trace.py): a position costs a row of integers, and the limits
    on positions and cells are checked before anything is expanded."""
    from app.core.formats.trace import ExpandError
    from app.core.long_trace import read_long_trace

    data = read_trace_data(path)
    try:
        long = read_long_trace(data, unroll)
    except ExpandError as err:
        raise UsageError(f"{path}: {err}") from None
    if not long.series.bolts:
        raise UsageError(f"{path}: positions: the trace has no bolts (nothing to plot)")
    return long.series, default_title(long.topology, long.k, long.loop_start, long.growth_per_loop,
                                      long.loop_duration, path), long.names


def cmd_plot(args: argparse.Namespace) -> int:
    """Render the trace's plots headless and write them as SVG or PNG."""
    if not 0 <= args.unroll <= MAX_UNROLL:
        raise UsageError(f"--unroll: {args.unroll} is out of range (0..{MAX_UNROLL})")
    if not 200 <= args.width <= 10000:
        raise UsageError(f"--width: {args.width} is out of range (200..10000 pixels)")
    out = check_output(args, "-o", args.out, FORMATS, "picture")
    series, title, names = plotted(args.trace, args.unroll)
    from app.gui.trace_plots import png_bytes, svg_bytes, trace_canvas  # Qt: only for this command

    if args.unroll and not series.loop_passes:
        print(f"{args.trace}: --unroll: the trace has no loop (a finite witness run); drawn as found",
              file=sys.stderr)
    canvas = trace_canvas(series, args.title or title, names, width=args.width)
    data = svg_bytes(canvas) if out.suffix.lower() == ".svg" else png_bytes(canvas, args.width)
    canvas.close()
    write_output(args, "-o", out, data)
    print(f"wrote {one_line(str(out))} ({len(series.bolts)} plots, {len(series.loop_passes)} loop passes shaded, "
          f"t = {series.times[0]:g}..{series.times[-1]:g} s)")
    return 0

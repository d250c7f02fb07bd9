"""Long lassos: trace file size (`stormbound-trace/1` vs the compressed `/2`) and `stormbound plot` time.

Usage: .venv/bin/python bench/trace_size.py [--baseline TREE] [--trace FILE ...] [--width PX]

By default the lassos are those of focused-crawler cfg-4 with D-VerT's failure fields (every
bolt min_ttf 1000 s, reboot bounds [10, 100] s) and failures on: two of about 15k and 23k
positions (docs/trace-format.md). `--trace FILE` measures given trace files instead (either
format). For each lasso it prints the positions, the `/1` and `/2` file sizes and their ratio,
the seconds to write (`trace_bytes`) and to read (`load_trace`) each, whether the `/2` file
reads back as exactly the same positions, and the wall-clock seconds of `stormbound plot` on
each file (a PNG `--width` pixels wide, in its own process). `--baseline TREE` also times
`plot` of the `/1` file with the code of another source tree (e.g. a checkout of main before
the per-pixel bands) as the "before" figure. Timings are wall-clock on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DVERT = ROOT / "tests" / "data" / "dvert"
sys.path.insert(0, str(ROOT))

from app.core.formats import load_topology  # noqa: E402
from app.core.formats.trace import Trace, load_trace, trace_bytes  # noqa: E402
from app.core.topology import parse_topology  # noqa: E402


def cfg4_with_failures() -> list[Trace]:
    from app.core.tcn.search import verify

    data = load_topology(ROOT / "models" / "focused-crawler-reduced-cfg-4.storm.json").model_dump(mode="json")
    data["settings"].update({"failures": True, "min_reboot_time": 10, "max_reboot_time": 100})
    for bolt in data["bolts"]:
        bolt["min_ttf"] = 1000
    return [t for t in verify(parse_topology(data)).traces if len(t.positions) > 1000]


def published_with_failures() -> list[tuple[str, Trace]]:
    """The lassos of every published ICFEM configuration (D-VerT files, failures on as bench/verify_failures.py)."""
    from app.core.tcn.search import verify

    out = []
    for config in sorted(DVERT.glob("icfem-*.json")):
        if "expected-outcomes" in config.name:
            continue
        data = load_topology(config).model_dump(mode="json")
        data["settings"]["failures"] = True
        try:
            traces = verify(parse_topology(data)).traces
        except Exception as err:  # noqa: BLE001 - a bench row, not a verdict
            print(f"{config.name}: {type(err).__name__}: {err}")
            continue
        out += [(f"{config.stem.removeprefix('icfem-')} lasso {i + 1}", t) for i, t in enumerate(traces)]
    return out


def plot_seconds(tree: Path, trace: Path, out: Path, width: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree), "QT_QPA_PLATFORM": "offscreen"}
    argv = [sys.executable, "-m", "app", "plot", str(trace), "-o", str(out), "--width", str(width), "--force"]
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tree, timeout=900)
    seconds = time.monotonic() - started
    if done.returncode != 0:
        print(f"  plot ({tree}) exit {done.returncode}: {done.stderr.strip()[-200:]}")
        return float("nan")
    return seconds


def trace_bytes_packed(trace: Trace) -> bytes:
    """The `/2` form whatever its size (the writer keeps `/1` for short traces or when it is smaller)."""
    from app.core.formats import trace as trace_format

    data = trace.model_dump(mode="json")
    items = trace_format.compress_positions(data["positions"])
    return trace_format._packed_bytes({**data, "format": trace_format.COMPRESSED_FORMAT, "positions": items})


def trace_from_bytes(data: bytes) -> Trace:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.json"
        path.write_bytes(data)
        return load_trace(path)


def timed(fn, *args):  # noqa: ANN001, ANN202 - a tiny helper
    started = time.monotonic()
    value = fn(*args)
    return value, time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trace", nargs="*", default=[], help="trace files to measure (default: cfg-4's lassos)")
    parser.add_argument("--baseline", type=Path, help="a source tree whose `plot` is the 'before' figure")
    parser.add_argument("--width", type=int, default=1000, help="picture width (default 1000)")
    parser.add_argument("--published", action="store_true",
                        help=f"sizes only, of every lasso of the published configurations with failures on ({DVERT})")
    args = parser.parse_args()
    if args.published:
        for name, trace in published_with_failures():
            plain, packed = trace_bytes(trace, False), trace_bytes(trace)
            back = trace_from_bytes(packed)
            print(f"{name}: {len(trace.positions)} positions, /1 {len(plain)} bytes, as written "
                  f"({json.loads(packed)['format']}) {len(packed)} bytes, {len(plain) / len(packed):.1f}x; "
                  f"compressed form: {len(trace_bytes_packed(trace))} bytes; same positions: {back == trace}",
                  flush=True)
        return 0
    traces = [(Path(p).name, load_trace(p)) for p in args.trace] if args.trace else [
        (f"cfg-4+failures lasso {i + 1}", t) for i, t in enumerate(cfg4_with_failures())]
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        for name, trace in traces:
            plain, plain_write = timed(trace_bytes, trace, False)
            packed, packed_write = timed(trace_bytes, trace)
            one, two = tmp / "plain.trace.json", tmp / "packed.trace.json"
            one.write_bytes(plain)
            two.write_bytes(packed)
            back_one, read_one = timed(load_trace, one)
            back_two, read_two = timed(load_trace, two)
            same = back_two == trace and back_one == trace
            print(f"{name}: {len(trace.positions)} positions")
            written = json.loads(packed)["format"]
            print(f"  file size: /1 {len(plain) / 1e6:.2f} MB, as written ({written}) {len(packed) / 1e6:.3f} MB, "
                  f"{len(plain) / len(packed):.1f}x smaller; reads back the same positions: {same}")
            print(f"  write s: /1 {plain_write:.2f}, compressed {packed_write:.2f}; read s: /1 {read_one:.2f}, "
                  f"compressed {read_two:.2f}")
            png = tmp / "plot.png"
            line = f"  plot s (--width {args.width}): /1 {plot_seconds(ROOT, one, png, args.width):.2f}, " \
                   f"compressed {plot_seconds(ROOT, two, png, args.width):.2f}"
            if args.baseline:
                line += f"; before (/1, {args.baseline}): {plot_seconds(args.baseline, one, png, args.width):.2f}"
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`stormbound verify --failures on` on every published ICFEM configuration (docs/model.md section 7).

Usage: .venv/bin/python bench/verify_failures.py [--timeout S] [--only NAME] [--markdown]

Each D-VerT configuration keeps its own failure fields (every bolt min_ttf 1000 s, reboot
bounds [10, 100] s; the imports switch failures off, `--failures on` switches them back on).
Each configuration runs `python -m app verify FILE --failures on --json --timeout S` in its
own process, then the same with `--failures off` as the baseline measured in the same run,
and prints per checked bolt its verdict (with what decided it, and `+failures` when its
lasso has failures), the seconds with failures, the seconds without, and their ratio.
Timings are wall-clock on a shared machine: expect noise.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DVERT = ROOT / "tests" / "data" / "dvert"


def run(config: Path, failures: str, timeout: float) -> tuple[dict, float]:
    """One `verify` process: its JSON result and its wall-clock seconds."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "app", "verify", str(config), "--failures", failures, "--json",
            "--timeout", str(timeout), "-q"]
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT, timeout=timeout * 6 + 60)
    seconds = time.monotonic() - started
    try:
        return json.loads(done.stdout), seconds
    except json.JSONDecodeError:
        return {"verdict": f"exit {done.returncode}", "bolts": {}, "error": done.stderr.strip()[-200:]}, seconds


def describe(result: dict) -> str:
    """Per checked bolt: verdict (method)[+failures]."""
    out = []
    for name, v in result.get("bolts", {}).items():
        text = f"{name} {v['verdict']}"
        if v.get("method") not in (None, "none"):
            text += f" ({v['method']})"
        if v.get("failures"):
            text += " +failures"
        out.append(text)
    return "; ".join(out) or result.get("error", "-")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timeout", type=float, default=10.0, help="verify --timeout per run (default 10 s)")
    parser.add_argument("--only", help="only configurations whose name contains this")
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    args = parser.parse_args()
    if not DVERT.is_dir():
        print(f"no D-VerT data at {DVERT}", file=sys.stderr)
        return 2
    configs = sorted(p for p in DVERT.glob("icfem-*.json") if "expected-outcomes" not in p.name)
    if args.only:
        configs = [p for p in configs if args.only in p.name]
    header = ["config", "verdict (failures on)", "per checked bolt", "seconds", "verdict (failures off)",
              "seconds (failures off)", "on / off", "under 10 s"]
    rows = []
    for config in configs:
        name = config.stem.removeprefix("icfem-")
        on, on_s = run(config, "on", args.timeout)
        off, off_s = run(config, "off", args.timeout)
        rows.append([name, on.get("verdict", "?"), describe(on), f"{on_s:.2f}", off.get("verdict", "?"), f"{off_s:.2f}",
                     f"{on_s / off_s:.2f}", str(on_s < 10.0)])
        if not args.markdown:
            print(" | ".join(rows[-1]), flush=True)
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for row in rows:
            print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

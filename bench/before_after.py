"""Verdicts and times of this tree against an earlier commit, side by side, in the same run.

Usage: .venv/bin/python bench/before_after.py BASE_REF [--timeout S] [--only NAME] [--repeat N]

Checks BASE_REF out into a temporary git worktree, then for every file under models/ and the published
D-VerT configurations (tests/data/dvert), with `--failures off` and, where a bolt has
a min_ttf, `--failures on`: runs `python -m app check --json` and `python -m app verify --json --timeout S`
in the base tree and in this one, one right after the other (so both see the same machine load; `--repeat`
takes the median of N runs each). Prints per case the rate check's statuses (equal or the differences),
each checked bolt's verdict and what decided it in both trees, the verify seconds of both and their ratio,
and a summary: cases whose statuses or verdicts differ, and the median and worst time ratio.
Timings are wall-clock on a shared machine: read the load printed beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DVERT = ROOT / "tests" / "data" / "dvert"


def cases(only: str | None) -> list[tuple[Path, str]]:
    """(file, failures) for every model and published configuration; `on` only where a bolt may fail."""
    files = sorted(ROOT.glob("models/*.storm.json")) + sorted(p for p in DVERT.glob("*.json")
                                                             if "outcomes" not in p.name)
    out = []
    for path in files:
        if only and only not in path.name:
            continue
        out.append((path, "off"))
        text = path.read_text()
        if '"min_ttf"' in text or "min_ttf" in text:
            out.append((path, "on"))
    return out


def run(tree: Path, argv: list[str], timeout: float) -> tuple[dict, float]:
    env = {**os.environ, "PYTHONPATH": str(tree), "QT_QPA_PLATFORM": "offscreen"}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "app", *argv], capture_output=True, text=True, env=env,
                          cwd=tree, timeout=timeout * 8 + 120)
    seconds = time.monotonic() - started
    try:
        return json.loads(done.stdout), seconds
    except json.JSONDecodeError:
        return {"error": f"exit {done.returncode}: {done.stderr.strip()[-160:]}"}, seconds


def statuses(check: dict) -> dict[str, str]:
    return {n: b.get("status", "?") for n, b in check.get("bolts", {}).items()}


def verdicts(result: dict) -> dict[str, str]:
    return {n: f"{v['verdict']}" + (f" ({v['method']})" if v.get("method") not in (None, "none") else "")
            for n, v in result.get("bolts", {}).items()} or {"*": result.get("error", result.get("verdict", "?"))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--only")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch) / "base"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(base), args.base], check=True)
        try:
            return compare(base, args)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=False)


def compare(base: Path, args: argparse.Namespace) -> int:
    ratios: list[float] = []
    differ: list[str] = []
    print(f"base {args.base} vs this tree; verify --timeout {args.timeout:g}; load {os.getloadavg()[0]:.1f}")
    for path, failures in cases(args.only):
        name = f"{path.name} failures {failures}"
        flags = ["--failures", failures] if failures == "on" else ["--failures", "off"]
        old_check, _ = run(base, ["check", str(path), "--json", *flags], args.timeout)
        new_check, _ = run(ROOT, ["check", str(path), "--json", *flags], args.timeout)
        argv = ["verify", str(path), "--json", "--timeout", str(args.timeout), "-q", *flags]
        old_times, new_times = [], []
        for _ in range(args.repeat):
            old, seconds = run(base, argv, args.timeout)
            old_times.append(seconds)
            new, seconds = run(ROOT, argv, args.timeout)
            new_times.append(seconds)
        before, after = statistics.median(old_times), statistics.median(new_times)
        ratio = after / before if before else float("nan")
        ratios.append(ratio)
        same_status = statuses(old_check) == statuses(new_check)
        old_v, new_v = verdicts(old), verdicts(new)
        print(f"\n{name}: verify {before:.2f} s -> {after:.2f} s (x{ratio:.2f}, load {os.getloadavg()[0]:.1f}); "
              f"rate-check statuses {'equal' if same_status else 'DIFFER'}")
        if not same_status:
            differ.append(f"{name}: statuses")
            for n in sorted(set(statuses(old_check)) | set(statuses(new_check))):
                if statuses(old_check).get(n) != statuses(new_check).get(n):
                    print(f"  {n}: {statuses(old_check).get(n)} -> {statuses(new_check).get(n)}")
        for n in sorted(set(old_v) | set(new_v)):
            mark = "" if old_v.get(n) == new_v.get(n) else "   <- changed"
            if mark:
                differ.append(f"{name}: {n}")
            print(f"  {n}: {old_v.get(n)} -> {new_v.get(n)}{mark}")
    finite = sorted(r for r in ratios if r == r)
    print(f"\n{len(ratios)} cases; time ratio median x{statistics.median(finite):.2f}, worst x{max(finite):.2f}; "
          f"{len(differ)} differences" + (": " + "; ".join(differ) if differ else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())

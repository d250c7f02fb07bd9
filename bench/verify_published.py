"""Run the verifier on every published ICFEM configuration and compare with the published results.

Usage: .venv/bin/python bench/verify_published.py [--timeout S] [--only NAME] [--markdown]
                                                  [--emission dvert|exact|both]

Each configuration runs in its own process (so peak memory is its own) with the
bound deepened up to the published k. Prints verdict, k, loop start, growing
bolts, per-bolt verdicts, seconds to the first certified lasso and to every checked
bolt's verdict, peak memory, the published verdict and seconds, and the ratio (of the
first lasso's time, the figure comparable with the published runs, which stopped at one).
`--emission exact` re-reads each configuration with the exact emission rule instead of
D-VerT's rounded-up carry.
Timings are wall-clock on a shared 2-core machine: expect noise.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DVERT = ROOT / "tests" / "data" / "dvert"


def run_one(config: Path, k: int, timeout: float, emission: str = "dvert") -> dict:
    """Verify one configuration in this process; the result as plain data."""
    sys.path.insert(0, str(ROOT))
    import time

    from app.core.formats import load_topology
    from app.core.tcn.search import SearchOptions, verify

    topo = load_topology(config)
    topo = topo.model_copy(update={"settings": topo.settings.model_copy(update={"emission": emission})})
    started = time.monotonic()
    first: list[float] = []

    def progress(p) -> None:
        if "lasso found" in p.message and not first:
            first.append(time.monotonic() - started)

    result = verify(topo, SearchOptions(k_max=k, timeout_s=timeout), progress=progress)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    first_s = first[0] if first else result.elapsed_s
    return {"verdict": result.verdict, "k": result.k, "loop_start": result.loop_start, "growing": result.growing,
            "bolts": {n: f"{v.verdict}" + (f"@{v.k}" if v.k is not None else "") for n, v in result.bolts.items()},
            "first_s": round(first_s, 2),
            "growth_per_loop": result.growth_per_loop, "seconds": round(result.elapsed_s, 2),
            "peak_mb": round(peak_mb), "certified": result.certified, "notes": result.notes,
            "message": result.message}


def published() -> dict:
    return json.loads((DVERT / "icfem-expected-outcomes.json").read_text())["experiments"]


def explain(name: str, pub: dict, ours: dict) -> str:
    """Why our verdict differs from the published one (or 'same')."""
    pub_sat = pub["readme_outcome"] == "SAT"
    if ours["verdict"] == "counterexample" and pub_sat:
        if pub.get("readme_spurious"):
            return "same verdict, but ours is a certified lasso (the published trace was flagged spurious)"
        return "same (certified lasso)"
    if ours["verdict"] == "none-up-to-k" and not pub_sat:
        return "same"
    if ours["verdict"] == "bounded" and pub_sat:
        return ("differs: published lasso was flagged spurious; the rate check proves every checked queue "
                "bounded (largest inflow < smallest capacity), so no lasso exists")
    if ours["verdict"] == "none-up-to-k" and pub_sat:
        tag = "flagged spurious there; " if pub.get("readme_spurious") else ""
        return (f"differs: {tag}no sound lasso (clocks repeating) up to k = {ours['k']}; the published encoding "
                "did not make clocks repeat")
    if ours["verdict"] == "counterexample" and not pub_sat:
        return ("differs: certified lasso in which " + ", ".join(ours["growing"]) + " grows (the rate check says "
                "it may grow); the published run asked that every strictly monotonic queue ("
                + ", ".join(pub.get("strictly_monotonic_queues") or []) + ") grow at once, ours that some checked "
                "queue grows")
    return f"undecided within the time limit ({ours['verdict']})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per configuration")
    parser.add_argument("--only", help="run one configuration by name")
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    parser.add_argument("--emission", choices=["dvert", "exact", "both"], default="dvert",
                        help="emission rule to verify under (D-VerT's configurations mean 'dvert')")
    parser.add_argument("--one", nargs=4, metavar=("CONFIG", "K", "TIMEOUT", "EMISSION"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(Path(args.one[0]), int(args.one[1]), float(args.one[2]), args.one[3])))
        return 0
    rows = []
    emissions = ["dvert", "exact"] if args.emission == "both" else [args.emission]
    for (name, pub), emission in ((item, e) for e in emissions for item in published().items()):
        if args.only and name != args.only:
            continue
        config = DVERT / pub["config_file"]
        proc = subprocess.run([sys.executable, __file__, "--one", str(config), str(pub["k"]), str(args.timeout),
                               emission],
                              capture_output=True, text=True, cwd=ROOT)
        if proc.returncode != 0:
            print(f"{name}: failed: {proc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            continue
        ours = json.loads(proc.stdout)
        ratio = pub["readme_time_s"] / ours["first_s"] if ours["first_s"] > 0 else float("inf")
        pub_verdict = ("counterexample" + (" (spurious)" if pub.get("readme_spurious") else "")
                       if pub["readme_outcome"] == "SAT" else "none up to k")
        row = {"config": name, "emission": emission, "verdict": ours["verdict"], "k": ours["k"],
               "loop": ours["loop_start"], "growing": ",".join(ours["growing"]) or "-",
               "bolts": " ".join(f"{n}:{v}" for n, v in ours["bolts"].items()),
               "first_s": ours["first_s"], "seconds": ours["seconds"], "peak_mb": ours["peak_mb"],
               "published": pub_verdict, "published_s": pub["readme_time_s"], "ratio": round(ratio, 1),
               "target_50x": ours["first_s"] <= pub["readme_time_s"] / 50, "why": explain(name, pub, ours)}
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    if args.markdown:
        cols = ["config", "emission", "verdict", "bolts", "first_s", "seconds", "peak_mb", "published",
                "published_s", "ratio", "target_50x", "why"]
        print("| " + " | ".join(cols) + " |")
        print("|" + "---|" * len(cols))
        for r in rows:
            print("| " + " | ".join(str(r[c]) for c in cols) + " |")
    else:
        for r in rows:
            print(f"{r['config']:32} {r['emission']:5} {r['verdict']:15} k={r['k']} loop={r['loop']} "
                  f"grow={r['growing']} [{r['bolts']}] first {r['first_s']:.2f}s all {r['seconds']:.2f}s "
                  f"{r['peak_mb']}MB | published {r['published']} {r['published_s']}s "
                  f"ratio {r['ratio']}x | {r['why']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

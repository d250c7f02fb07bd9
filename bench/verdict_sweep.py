"""The sweep: every checked bolt's answer over the published configurations, models/ and random topologies.

Usage: .venv/bin/python bench/verdict_sweep.py [--random 300] [--timeout S] [--seed N] [--skip-published]
       [--only I,J,..] [--skip-random] [--out FILE.jsonl]

Verifies, every bolt checked, each configuration of tests/data/dvert (failures off, and on when it has failing
bolts), each document of models/ (as it is, and with failures on when it has failing bolts) and `--random` small
random topologies with declared streams, cycles, failing bolts and every replay mode (paced, at-once, none),
near their capacity. `--timeout` is the time limit of one whole verification (all its bolts), not of one bolt:
a bolt left `unknown` there had at most that long. Prints one line per topology and, per group and in all, the
count of each bolt verdict and the share of `unknown`; the user's answers are `bounded`, `counterexample`
(grows) and `unbounded`. Wall-clock on a shared 2-core machine: noisy. Not run by the tests. `--out` appends one
JSON line per verification (its label, wall and CPU seconds, and each bolt's verdict, method and message), to
compare two trees bolt by bolt.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

ORDER = ("bounded", "counterexample", "unbounded", "no-repeating-growth", "none-up-to-k", "unknown")


def random_doc(rng: random.Random) -> dict[str, Any]:
    """2-5 bolts near their capacity: joins, a declared stream, sometimes a cycle, sometimes failing bolts with a
    random replay mode, τ 0, 0.1 or 0.2, both emission rules."""
    n = rng.randint(2, 5)
    names = [f"B{i}" for i in range(n)]
    rate, tau = rng.choice([1.0, 2.0]), rng.choice([0.0, 0.1, 0.2])
    subs = [("S", names[0], None)] + [(rng.choice(["S", *names[:i]]), names[i], None) for i in range(1, n)]
    bolts: list[dict[str, Any]] = []
    inflow: dict[str, float] = {}
    for name in names:
        got = sum(rate if s == "S" else inflow.get(s, rate) for s, d, _ in subs if d == name)
        inflow[name] = got
        bolts.append({"name": name, "alpha": max(round(1 / (got * rng.uniform(0.9, 1.5)), 3), 0.01),
                      "sigma": rng.choice([1.0, 1.0, 0.5, 2.0]), "parallelism": rng.choice([1, 1, 2])})
    if n > 2 and rng.random() < 0.4:  # a declared stream from one bolt to a later one
        i = rng.randrange(0, n - 2)
        bolts[i]["streams"] = ["side"]
        bolts[i]["stream_sigma"] = {"side": 0.5}
        subs.append((names[i], names[rng.randrange(i + 1, n)], "side"))
    if n > 2 and rng.random() < 0.3:  # a back edge: a cycle
        i = rng.randrange(1, n)
        subs.append((names[i], names[rng.randrange(0, i)], None))
    settings: dict[str, Any] = {"tolerance": tau, "max_idle_time": rng.choice([0, 0.05]),
                                "emission": rng.choice(["exact", "dvert"])}
    if rng.random() < 0.4:
        for b in rng.sample(bolts, rng.randint(1, 2)):
            b["min_ttf"] = rng.choice([3.0, 20.0, 200.0])
        settings.update(failures=True, min_reboot_time=1, max_reboot_time=2,
                        replay=rng.choice(["paced", "at-once", "none"]))
    unique = {(s, d, st) for s, d, st in subs}
    return {"schema_version": 1, "name": "sweep", "spouts": [{"name": "S", "rate": rate, "burst": 1}],
            "bolts": bolts, "settings": settings,
            "subscriptions": [{"source": s, "target": d, **({"stream": st} if st else {})}
                              for s, d, st in sorted(unique, key=str)]}


OUT: Path | None = None  # `--out`: one JSON line per verification


def verdicts(label: str, topo: Any, timeout: float) -> Counter[str]:
    from app.core.tcn.search import SearchOptions, verify

    checked = topo.model_copy(update={"verification": topo.verification.model_copy(update={"checked": []})})
    started, cpu = time.monotonic(), time.process_time()
    result = verify(checked, SearchOptions(timeout_s=timeout))
    counts = Counter(v.verdict for v in result.bolts.values())
    wall, used = time.monotonic() - started, time.process_time() - cpu
    print(f"{label}: {dict(sorted(counts.items()))} {wall:.1f} s ({used:.1f} CPU s)", flush=True)
    if OUT is not None:
        with OUT.open("a") as out:
            out.write(json.dumps({"label": label, "wall_s": round(wall, 2), "cpu_s": round(used, 2),
                                  "bolts": {n: [v.verdict, v.method, v.message] for n, v in result.bolts.items()}})
                      + "\n")
    for name, v in result.bolts.items():
        if v.verdict in ("unknown", "none-up-to-k"):
            print(f"    {name} {v.verdict}: {v.message}", flush=True)
    return counts


def summary(label: str, counts: Counter[str]) -> None:
    total = sum(counts.values())
    parts = ", ".join(f"{k} {counts[k]}" for k in ORDER if counts[k])
    print(f"== {label}: {total} bolts: {parts}; unknown {100 * counts['unknown'] / max(1, total):.1f} %", flush=True)


def with_failures(topo: Any) -> Any | None:
    if not any(b.min_ttf is not None for b in topo.bolts) or topo.settings.failures:
        return None
    return topo.model_copy(update={"settings": topo.settings.model_copy(update={"failures": True})})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--random", type=int, default=300)
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--seed", type=int, default=46)
    parser.add_argument("--skip-published", action="store_true")
    parser.add_argument("--skip-random", action="store_true", help="only the published configurations and models/")
    parser.add_argument("--out", type=Path, default=None, help="append one JSON line per verification to this file")
    parser.add_argument("--only", type=str, default=None,
                        help="comma-separated indices of the random topologies to verify (the others are drawn, "
                             "not verified)")
    args = parser.parse_args()
    global OUT
    OUT = args.out
    from app.cli.inputs import read_topology
    from app.core.topology import parse_topology

    groups: dict[str, Counter[str]] = {}
    if not args.skip_published:
        for group, paths in (("published", sorted((ROOT / "tests/data/dvert").glob("*.json"))),
                             ("models", sorted((ROOT / "models").glob("*.storm.json")))):
            groups[group] = Counter()
            for path in paths:
                if "expected" in path.name:
                    continue
                topo = read_topology(str(path))
                groups[group] += verdicts(path.name, topo, args.timeout)
                failing = with_failures(topo)
                if failing is not None:
                    groups[group] += verdicts(f"{path.name} (failures on)", failing, args.timeout)
            summary(group, groups[group])
    if args.skip_random:
        summary("all", sum(groups.values(), Counter()))
        return
    rng = random.Random(args.seed)
    groups["random"] = Counter()
    only = None if args.only is None else {int(i) for i in args.only.split(",")}
    for i in range(args.random):
        doc = random_doc(rng)
        if only is None or i in only:
            groups["random"] += verdicts(f"random #{i}", parse_topology(doc), args.timeout)
    summary("random", groups["random"])
    summary("all", sum(groups.values(), Counter()))


if __name__ == "__main__":
    main()

"""Where the joint cycle of several failing bolts on one paced spout applies: every bolt it proves unbounded.

Usage: .venv/bin/python bench/joint_cycles.py [--random 300] [--seed 46] [--skip-published] [--runs N]

Walks the sweep's topologies (bench/verdict_sweep.py: the published configurations of tests/data/dvert and models/
with failures on, and `--random` random ones drawn as the sweep draws them) and, for every bolt, asks
`paced.prove_paced` on its cone; prints each certificate that needs other failing bolts (`others`, docs/boundedness.md,
"Unbounded: several failing bolts on one paced spout"), whether its checker accepts it, the rate check's status of
the bolt (and per cone) and the search time. Only these bolts can change verdict with the joint proof: without
`others` the certificate is the single paced backlog's, as before. `--runs N`: also build each one's threshold run
past N and time it. Not run by the tests.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def _report(label: str, topo: Any, runs: int | None) -> int:
    from app.core.rates import rate_check
    from app.core.tcn.check.storm import check_storm_certificate
    from app.core.tcn.cones import bounded_in_cones
    from app.core.tcn.network import build_network
    from app.core.tcn.paced import prove_paced
    from app.core.tcn.paced_run import build_paced_run

    if not topo.settings.failures or topo.settings.replay != "paced":
        return 0
    found = 0
    report = None
    for bolt in topo.bolts:
        cone = build_network(topo, [bolt.name]).topology
        start = time.process_time()
        cert = prove_paced(cone, bolt.name)
        took = time.process_time() - start
        if cert is None or not cert.others:
            continue
        report = report or rate_check(topo)
        status = report.bolts[bolt.name].status if bolt.name in report.bolts else "-"
        per_cone = bounded_in_cones(topo, report, [bolt.name])[0].bolts[bolt.name].status
        others = ", ".join(f"{o.bolt} every {o.every} loses {o.loss}" for o in cert.others)
        print(f"{label} {bolt.name}: F {cert.failing} up {cert.up} r {cert.reboot} m {cert.emissions} g {cert.gap} "
              f"δ {cert.growth}; {others}; checker {check_storm_certificate(cone, cert) or 'accepts'}; rate check "
              f"{status} (per cone {per_cone}); search {took:.3f} s", flush=True)
        if runs:
            start = time.process_time()
            run = build_paced_run(cone, cert, runs)
            print(f"  threshold run past {runs}: {run if isinstance(run, str) else f'reached {run[1]}'} "
                  f"({time.process_time() - start:.1f} s)", flush=True)
        found += 1
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--random", type=int, default=300)
    parser.add_argument("--seed", type=int, default=46)
    parser.add_argument("--skip-published", action="store_true")
    parser.add_argument("--runs", type=int, default=None)
    args = parser.parse_args()
    from verdict_sweep import random_doc, with_failures

    from app.cli.inputs import read_topology
    from app.core.topology import parse_topology

    total = 0
    if not args.skip_published:
        for path in sorted([*(ROOT / "tests/data/dvert").glob("*.json"), *(ROOT / "models").glob("*.storm.json")]):
            if "expected" in path.name:
                continue
            topo = read_topology(str(path))
            for label, t in ((path.name, topo), (f"{path.name} (failures on)", with_failures(topo))):
                if t is not None:
                    total += _report(label, t, args.runs)
    rng = random.Random(args.seed)
    for i in range(args.random):
        total += _report(f"random #{i}", parse_topology(random_doc(rng)), args.runs)
    print(f"{total} bolts proven unbounded by a joint cycle")


if __name__ == "__main__":
    main()

"""Time the linear program over one loop pass (app/core/tcn/linear.py) on the published configurations.

Usage: .venv/bin/python bench/lp_step.py [--markdown] [--repeat N]

For every model in models/*.storm.json and every ICFEM configuration of tests/data/dvert (failures
off, and on where the document has min_ttf), for every checked bolt: the rate check's status, whether
the LP proves that no repeating run grows (`proof`) or has a solution (`feasible`), the rows, the
multipliers of the certificate and its size, the milliseconds to build the rows on the cone and solve
the dual with z3 (median of --repeat runs), and the milliseconds the independent checker
(app/core/tcn/check/linear.py) takes to accept the certificate. Wall-clock on a shared machine: noisy.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core.formats import load_topology  # noqa: E402
from app.core.rates import rate_check  # noqa: E402
from app.core.results import LinearCertificate  # noqa: E402
from app.core.tcn.check.content import content_hash  # noqa: E402
from app.core.tcn.check.linear import check_certificate  # noqa: E402
from app.core.tcn.linear import build_rows, farkas  # noqa: E402
from app.core.tcn.network import build_network  # noqa: E402
from app.core.topology import Topology, parse_topology  # noqa: E402

DVERT = ROOT / "tests" / "data" / "dvert"


def failures(topo: Topology, on: bool) -> Topology:
    data = topo.model_dump(mode="json")
    data["settings"]["failures"] = on
    return parse_topology(data)


def measure(topo: Topology, bolt: str, repeat: int) -> dict[str, object]:
    times = []
    multipliers = None
    rows = []
    for _ in range(repeat):
        started = time.perf_counter()
        net = build_network(topo, [bolt])
        rows = build_rows(net, bolt)
        multipliers = farkas(rows)
        times.append((time.perf_counter() - started) * 1000)
    out: dict[str, object] = {"rows": len(rows), "lp_ms": statistics.median(times),
                              "answer": "proof" if multipliers else "feasible", "multipliers": "", "bytes": "",
                              "check_ms": ""}
    if multipliers:
        net = build_network(topo, [bolt])
        cert = LinearCertificate(target=bolt, content_hash=content_hash(net.topology),
                                 rows={n: str(y) for n, y in multipliers.items()})
        started = time.perf_counter()
        problems = check_certificate(net.document(), cert)
        out.update(multipliers=len(multipliers), bytes=len(cert.model_dump_json()),
                   check_ms=f"{(time.perf_counter() - started) * 1000:.1f}" + (" REJECTED" if problems else ""))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    parser.add_argument("--repeat", type=int, default=3, help="runs per bolt (median)")
    args = parser.parse_args()
    models = sorted((ROOT / "models").glob("*.storm.json"))
    configs = [(p.name.removesuffix(".storm.json"), load_topology(p)) for p in models]
    published = sorted(DVERT.glob("icfem-*-cfg-*.json")) + [DVERT / "icfem-focused-crawler-complete.json"]
    configs += [(p.stem, load_topology(p)) for p in published]
    header = ["config", "failures", "bolt", "rate check", "LP", "rows", "multipliers", "cert bytes", "LP ms",
              "check ms"]
    table = [header]
    for name, topo in configs:
        variants = [("off", failures(topo, False))]
        if any(b.min_ttf is not None for b in topo.bolts):
            variants.append(("on", failures(topo, True)))
        for label, variant in variants:
            report = rate_check(variant, suggest=False)
            for bolt in variant.checked_bolts():
                m = measure(variant, bolt.name, args.repeat)
                table.append([name, label, bolt.name, report.bolts[bolt.name].status, str(m["answer"]),
                              str(m["rows"]), str(m["multipliers"]), str(m["bytes"]), f"{m['lp_ms']:.1f}",
                              str(m["check_ms"])])
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for row in table[1:]:
            print("| " + " | ".join(row) + " |")
    else:
        widths = [max(len(r[i]) for r in table) for i in range(len(header))]
        for row in table:
            print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
    lp = [float(r[8]) for r in table[1:]]
    print(f"\n{len(lp)} LPs: median {statistics.median(lp):.1f} ms, max {max(lp):.1f} ms; "
          f"{sum(r[4] == 'proof' for r in table[1:])} proofs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Joins (docs/model.md section 11): what they cost the rate check and the verification (bench/RESULTS.md, "Joins").

Rows: Metron's enrichment topology as its real Flux file imports (tests/data/joins/, geo at 5 ms: bounded; at
20 ms: the join's cache grows), and a fan of n enrichment branches between a splitter and one join (n = 10, 100,
1,000), one branch slow. Each row times the rate check (`rate_check`: a join's figures included) and `verify` (the
simulation's certified lasso through the join, when it grows), and the same topology with the join's field removed
(the ordinary bolt the model read before section 11) as the baseline.

    .venv/bin/python bench/joins.py [--sizes 10 100 1000]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.core.rates import rate_check  # noqa: E402
from app.core.tcn.options import SearchOptions  # noqa: E402
from app.core.tcn.search import verify  # noqa: E402
from app.core.topology import parse_topology  # noqa: E402


def fan(n: int, slow: bool) -> dict[str, Any]:
    """A splitter sending each message to n enrichments and to the join, which waits for all n + 1 parts."""
    streams = [f"e{i}" for i in range(n)]
    bolts = [{"name": "split", "alpha": 0.0001, "sigma": 1, "parallelism": 1, "streams": streams,
              "stream_sigma": dict.fromkeys(streams, 1)}]
    bolts += [{"name": f"e{i}", "alpha": 0.02 if slow and i == 0 else 0.001, "sigma": 1, "parallelism": 1}
              for i in range(n)]
    bolts.append({"name": "join", "alpha": 0.001, "sigma": 1, "parallelism": 1, "join": {"kind": "all"}})
    subs = [{"source": "kafka", "target": "split"}, {"source": "split", "target": "join"}]
    subs += [{"source": "split", "target": f"e{i}", "stream": f"e{i}"} for i in range(n)]
    subs += [{"source": f"e{i}", "target": "join"} for i in range(n)]
    return {"schema_version": 5, "name": f"fan-{n}", "settings": {"tolerance": 0, "max_idle_time": 0},
            "spouts": [{"name": "kafka", "rate": 100}], "bolts": bolts, "subscriptions": subs,
            "verification": {"checked": ["join"]}}


def metron(geo: float) -> dict[str, Any]:
    data = json.loads((ROOT / "tests" / "data" / "joins" / "metron-enrichment-geo-20ms.storm.json").read_text())
    for b in data["bolts"]:
        if b["name"] == "geoEnrichmentBolt":
            b["alpha"] = geo
    data["verification"] = {"checked": [b["id"] for b in data["bolts"] if b["name"] == "enrichmentJoinBolt"]}
    return data


def timed(data: dict[str, Any]) -> tuple[float, float, str]:
    topo = parse_topology(data)
    start = time.perf_counter()
    report = rate_check(topo)
    rates = time.perf_counter() - start
    start = time.perf_counter()
    result = verify(topo, SearchOptions(timeout_s=120))
    search = time.perf_counter() - start
    checked = [topo.name_of(c) for c in topo.verification.checked]
    verdicts = ", ".join(f"{report.bolts[n].status}/{result.bolts[n].verdict}" for n in checked)
    return rates, search, verdicts


def without_join(data: dict[str, Any]) -> dict[str, Any]:
    plain = json.loads(json.dumps(data))
    for b in plain["bolts"]:
        b.pop("join", None)
    return plain


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[10, 100, 1000])
    args = parser.parse_args()
    rows = [("Metron, geo 5 ms", metron(0.005)), ("Metron, geo 20 ms", metron(0.02))]
    rows += [(f"fan of {n}, one slow", fan(n, True)) for n in args.sizes]
    print(f"{'topology':24} {'check s':>8} {'verify s':>9}  {'verdict (check/verify)':28} | ordinary bolt: "
          f"{'check s':>8} {'verify s':>9}  verdict")
    for name, data in rows:
        r, s, v = timed(data)
        r0, s0, v0 = timed(without_join(data))
        print(f"{name:24} {r:8.3f} {s:9.3f}  {v:28} | {'':15}{r0:8.3f} {s0:9.3f}  {v0}")


if __name__ == "__main__":
    main()

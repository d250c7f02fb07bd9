"""Duration windows in the search (docs/model.md section 10.3): what the timer's rule costs the verification
(bench/RESULTS.md, "Duration windows in the search").

Rows: storm-starter's sliding sum on arrival time as its real Flux file imports
(tests/data/flux/storm-starter/sliding-duration-topology.yaml; 10 integers/s, 0.5 s an evaluation, one sum per 10
tuples), its printer slow (20 s a tuple: it grows) or fast (0.5 s: bounded); a chain of n duration windows in a row
above a slow bolt (n = 1, 5, 20); and a tumbling 1 s window feeding a bolt at half its inflow, searched by the
solver alone (--no-simulate). Each row times `verify` and says its verdict and method, and for the growing ones the
linear program on the same cone with the bolt made to keep up (its proof and its check) and the timeout witness.

    .venv/bin/python bench/duration_lassos.py
"""

from __future__ import annotations

import json
import sys
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.core.latency.witness import timeout_witness  # noqa: E402
from app.core.results import LinearCertificate  # noqa: E402
from app.core.storm.flux.builder import import_flux  # noqa: E402
from app.core.tcn.check.content import content_hash  # noqa: E402
from app.core.tcn.check.linear import check_certificate  # noqa: E402
from app.core.tcn.linear import build_rows, farkas  # noqa: E402
from app.core.tcn.network import build_network  # noqa: E402
from app.core.tcn.options import SearchOptions  # noqa: E402
from app.core.tcn.search import verify  # noqa: E402
from app.core.topology import Topology, parse_topology  # noqa: E402


def sliding(printer_alpha: float) -> Topology:
    doc = import_flux(ROOT / "tests/data/flux/storm-starter/sliding-duration-topology.yaml").topology.model_dump(
        mode="json")
    doc["spouts"][0].update(rate=10, burst=1, unannotated=[])
    doc["bolts"][0].update(alpha=0.5, sigma=0.1, unannotated=[])
    doc["bolts"][1].update(alpha=printer_alpha, unannotated=[])
    return parse_topology(doc)


def chain(n: int, last_alpha: float) -> Topology:
    """S (10/s) -> W1 -> ... -> Wn (duration windows of 3 s, σ 1) -> P."""
    bolts: list[dict[str, Any]] = [{"name": f"W{i}", "alpha": 0.1, "sigma": 1, "parallelism": 1,
                                    "window": {"kind": "duration", "length": 5, "slide": 3}} for i in range(1, n + 1)]
    bolts.append({"name": "P", "alpha": last_alpha, "sigma": 0, "parallelism": 1})
    names = ["S"] + [b["name"] for b in bolts]
    return parse_topology({"schema_version": 5, "name": f"chain{n}", "spouts": [{"name": "S", "rate": 10}],
                           "bolts": bolts, "subscriptions": [{"source": a, "target": b}
                                                             for a, b in zip(names, names[1:], strict=False)],
                           "settings": {"tolerance": 0.1, "max_idle_time": 0},
                           "verification": {"checked": ["P"]}})


def tumbling(p_alpha: float) -> Topology:
    return parse_topology({"schema_version": 5, "name": "tumbling", "spouts": [{"name": "S", "rate": 2}],
                           "bolts": [{"name": "W", "alpha": 0.1, "sigma": 1, "parallelism": 1,
                                      "window": {"kind": "duration", "length": 1}},
                                     {"name": "P", "alpha": p_alpha, "sigma": 0, "parallelism": 1}],
                           "subscriptions": [{"source": "S", "target": "W"}, {"source": "W", "target": "P"}],
                           "settings": {"tolerance": 0, "max_idle_time": 0}, "verification": {"checked": ["P"]}})


def row(label: str, topo: Topology, target: str, options: SearchOptions) -> None:
    started = time.perf_counter()
    result = verify(topo, options)
    took = time.perf_counter() - started
    v = result.bolts[target]
    print(f"{label:48s} verify {took:6.2f} s  {v.verdict:15s} {v.method or '':12s} "
          f"{len(result.traces[0].positions) if result.traces else 0:5d} positions")


def linear_row(label: str, topo: Topology, target: str) -> None:
    net = build_network(topo, [target])
    started = time.perf_counter()
    found = farkas(build_rows(net, target))
    took = time.perf_counter() - started
    if found is None:
        print(f"{label:48s} linear {took:6.3f} s  feasible (no proof)")
        return
    cert = LinearCertificate(target=target, content_hash=content_hash(net.topology),
                             rows={k: str(v) for k, v in found.items()})
    started = time.perf_counter()
    problems = check_certificate(net.topology, cert)
    print(f"{label:48s} linear {took:6.3f} s  proof of {len(found)} rows, checked in "
          f"{time.perf_counter() - started:.3f} s: {'accepted' if not problems else problems[0]}")


def witness_row(label: str, topo: Topology, target: str) -> None:
    started = time.perf_counter()
    w = timeout_witness(topo, target, Fraction(30))
    took = time.perf_counter() - started
    print(f"{label:48s} witness {took:5.2f} s  " + ("none" if w is None else
                                                   f"waits {float(w.wait):.1f} s in pass {w.loop_pass}"))


def main() -> None:
    options = SearchOptions(k_max=8)
    row("sliding-duration, printer 20 s (grows)", sliding(20.0), "printer", options)
    row("sliding-duration, printer 0.5 s (bounded)", sliding(0.5), "printer", options)
    witness_row("sliding-duration, printer 20 s", sliding(20.0), "printer")
    for n in (1, 5, 20):
        row(f"chain of {n} duration windows, P 0.2 s (grows)", chain(n, 0.2), "P", options)
        linear_row(f"chain of {n} duration windows, P 0.05 s", chain(n, 0.05), "P")
    row("tumbling 1 s, P 1 s, solver only (grows)", tumbling(1.0), "P",
        SearchOptions(k_max=10, simulate=False, timeout_s=120))
    linear_row("tumbling 1 s, P 0.4 s", tumbling(0.4), "P")
    print(json.dumps({"python": sys.version.split()[0]}))


if __name__ == "__main__":
    main()

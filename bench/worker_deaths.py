"""The headroom (check's capacity block) with worker deaths against the same without (bench/RESULTS.md, "Worker
deaths in the rate check"), and verify's worker-death phase (docs/model.md 9.4: the linear program with the deaths,
per checked bolt) against the same programs without the deaths (bench/RESULTS.md, "Worker deaths in the search").

Rows: StormCrawler's annotated archetype (tests/unit/test_async_bolts.py, 20 URLs/s, one worker) and layered
chains of n bolts on 4 workers, each with and without `storm.worker_min_ttf`. Each row times `headroom` (the rate
check, the factors, Storm's response and, with the field, `worker_check`) in this process, without the field first
(the baseline, same run), and gives the ratio and the verdict.

The second table: StormCrawler's archetype, the D-VerT model of the focused crawler (models/, on 2 workers) and
chains of n bolts on 4 workers; per row the seconds of one program per checked bolt without the deaths, then with
them (`search_deaths.death_proofs`, its checker included), and how many bolts each proves. The third: a whole
`verify` (default options) without and with the field, the chains with a death at most every minute, and rows with an
explicit `storm.assignment`, in which the simulation plays worker deaths (docs/model.md 9.5): the acker's worker of
tests/data/workers/acker-death.storm.json (a certified lasso with deaths) and chains whose last worker runs only the
acker and whose other workers, but the spout's, run whole bolts. The fourth: `verify` with the simulation off
(`--no-simulation`), where the solver alone plays the deaths (app/core/tcn/encode_deaths.py) for a bolt no other
phase decided: CPU seconds and which bolts get a certified lasso with deaths.

    .venv/bin/python bench/worker_deaths.py [--sizes 300 1000] [--search-sizes 30 100]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "unit"))

from app.core.headroom import headroom  # noqa: E402
from app.core.topology import parse_topology  # noqa: E402


def chain(n: int) -> dict[str, Any]:
    bolts = [{"name": f"b{i}", "alpha": 0.01, "sigma": 0.5 if i % 3 == 0 else 1, "parallelism": 2}
             for i in range(n)]
    subs = [{"source": "s", "target": "b0"}] + [{"source": f"b{i - 1}", "target": f"b{i}"} for i in range(1, n)]
    return {"schema_version": 4, "name": f"chain-{n}", "spouts": [{"name": "s", "rate": 10}], "bolts": bolts,
            "subscriptions": subs,
            "settings": {"tolerance": 0.1, "max_idle_time": 0, "min_reboot_time": 10, "max_reboot_time": 60},
            "storm": {"workers": 4, "max_spout_pending": 100, "message_timeout_secs": 30}}


def crawler() -> dict[str, Any]:
    from test_async_bolts import annotated_crawler

    data = annotated_crawler(20)
    data["schema_version"] = 4
    data["settings"].update(min_reboot_time=10, max_reboot_time=60)
    return data


def timed(data: dict[str, Any]) -> tuple[float, str]:
    topo = parse_topology(data)
    start = time.perf_counter()
    room = headroom(topo)
    took = time.perf_counter() - start
    c = room.worker_check
    return took, "-" if c is None else {True: "survives", False: "does not survive", None: "not proven"}[c.survives]


def model(name: str, workers: int) -> dict[str, Any]:
    import json

    data = json.loads((ROOT / "models" / name).read_text(encoding="utf-8"))
    data["schema_version"] = 4
    data.setdefault("storm", {})["workers"] = workers
    data["storm"].setdefault("message_timeout_secs", 30)
    data["settings"].update(min_reboot_time=10, max_reboot_time=60)
    return data


def searched(data: dict[str, Any]) -> tuple[float, int, int]:
    """Seconds of the worker-death phase (or, without the field, of the same programs without deaths), the bolts
    proven, the bolts checked."""
    from app.core.tcn.linear import build_rows, farkas
    from app.core.tcn.network import build_network
    from app.core.tcn.search_deaths import death_proofs

    topo = parse_topology(data)
    checked = [b.name for b in topo.bolts]
    start = time.process_time()  # CPU: z3 solves in this process; the machine is shared
    if topo.storm.worker_min_ttf is None:
        proven = sum(farkas(build_rows(build_network(topo, [n]), n)) is not None for n in checked)
    else:
        proven = len(death_proofs(topo, checked, lambda: False, budget_s=600)[1])
    return time.process_time() - start, proven, len(checked)


def search_table(sizes: list[int]) -> None:
    rows = [("StormCrawler archetype, 1 worker", crawler(), 3600),
            ("focused crawler (models/), 2 workers", model("focused-crawler-complete.storm.json", 2), 3600)]
    rows += [(f"chain of {n} bolts, 4 workers", chain(n), 3600) for n in sizes]
    head = f"{'no deaths (CPU s)':>17} {'proven':>7} {'deaths (CPU s)':>14} {'proven':>7} {'ratio':>6}"
    print(f"\n{'topology':38} {head}")
    for name, data, ttf in rows:
        base, base_proven, n = searched(data)
        data["storm"]["worker_min_ttf"] = ttf
        took, proven, _ = searched(data)
        print(f"{name:38} {base:17.3f} {base_proven:>4}/{n:<3}{took:14.3f} {proven:>4}/{n:<3}{took / base:6.2f}")


def assigned(n: int) -> dict[str, Any]:
    """`chain(n)` with an explicit assignment: the spout and every third bolt on worker 0, the others whole on workers
    1 and 2, the one acker on worker 3 (workers 1, 2 and 3 may die in a trace, docs/model.md 9.5)."""
    data = chain(n)
    rows = {"s": [1, 0, 0, 0], "__acker": [0, 0, 0, 1]}
    for i in range(n):
        rows[f"b{i}"] = [2 if w == i % 3 else 0 for w in range(4)]
    data["storm"].update(assignment=rows, acker_executors=1)
    return data


def acker_death(name: str = "acker-death") -> dict[str, Any]:
    import json

    return json.loads((ROOT / "tests" / "data" / "workers" / f"{name}.storm.json").read_text(encoding="utf-8"))


def verified(data: dict[str, Any], simulate: bool = True) -> tuple[float, str]:
    """CPU seconds of a whole `verify` (its default options, or the simulation off) and its worker-death note's
    verdicts in short."""
    from app.core.tcn.search import SearchOptions, verify

    topo = parse_topology(data)
    start = time.process_time()
    result = verify(topo, SearchOptions(simulate=simulate))
    took = time.process_time() - start
    note = next((n for n in result.notes if n.startswith("worker deaths in the search")), None)
    said = "-" if note is None else note.split("proves or not): ", 1)[-1][:70]
    lassos = getattr(result, "worker_death_lassos", {})  # (absent before the lassos with deaths)
    return took, said + (f"; lasso with deaths: {', '.join(lassos)}" if lassos else "")


def verify_table(sizes: list[int]) -> None:
    rows = [("StormCrawler archetype, 1 worker", crawler(), 3600),
            ("focused crawler (models/), 2 workers", model("focused-crawler-complete.storm.json", 2), 3600)]
    rows += [(f"chain of {n} bolts, 4 workers", chain(n), 60) for n in sizes]
    from test_worker_search import cycle

    rows.append(("σ-½ cycle (test_worker_search), 2 workers", cycle(200), 200))
    rows.append(("acker's worker dies (tests/data/workers)", acker_death(), 10))
    rows += [(f"chain of {n} bolts, explicit assignment", assigned(n), 60) for n in sizes]
    print(f"\n{'verify':38} {'no deaths (CPU s)':>17} {'deaths (CPU s)':>14} {'ratio':>6}  worker-death phase")
    for name, data, ttf in rows:
        data["storm"].pop("worker_min_ttf", None)
        base, _ = verified(data)
        data["storm"]["worker_min_ttf"] = ttf
        took, said = verified(data)
        print(f"{name:38} {base:17.3f} {took:14.3f} {took / base:6.2f}  {said}")


def solver_table() -> None:
    """`verify --no-simulation` on the documents whose workers may die in a trace: the solver's lassos with deaths."""
    rows = [("acker's worker dies (tests/data/workers)", acker_death()),
            ("acker-death-short (tests/data/workers)", acker_death("acker-death-short")),
            ("chain of 30 bolts, explicit assignment", {**assigned(30), "storm": {**assigned(30)["storm"],
                                                                                 "worker_min_ttf": 60}})]
    print(f"\n{'verify --no-simulation':42} {'CPU s':>7}  worker-death phase")
    for name, data in rows:
        took, said = verified(data, simulate=False)
        print(f"{name:42} {took:7.3f}  {said}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="*", default=[300, 1000])
    parser.add_argument("--search-sizes", type=int, nargs="*", default=[30, 100])
    parser.add_argument("--only-solver", action="store_true", help="only the fourth table")
    args = parser.parse_args()
    if args.only_solver:
        solver_table()
        return
    rows = [("StormCrawler archetype, 1 worker", crawler(), 3600)]
    rows += [(f"chain of {n} bolts, 4 workers", chain(n), 3600) for n in args.sizes]
    print(f"{'topology':36} {'without (s)':>11} {'with (s)':>9} {'ratio':>6}  verdict")
    for name, data, ttf in rows:
        base, _ = timed(data)
        data["storm"]["worker_min_ttf"] = ttf
        with_deaths, verdict = timed(data)
        print(f"{name:36} {base:11.3f} {with_deaths:9.3f} {with_deaths / base:6.2f}  {verdict}")
    search_table(args.search_sizes)
    verify_table(args.search_sizes)
    solver_table()


if __name__ == "__main__":
    main()

"""Where a verification's time goes: each phase of `Search.run` (app/core/tcn/search.py) with its start and end,
in seconds since the verification began, and the whole verification's wall time (what bench/verdict_sweep.py
measures). Usage: PYTHONPATH=. .venv/bin/python bench/phase_times.py FILE [--timeout S] [--flood-run N]"""

from __future__ import annotations

import argparse
import functools
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.core.tcn import search, search_lassos
from app.core.tcn.options import SearchOptions
from app.core.topology import parse_topology

PHASES = ("rate_phase", "plan", "rate_growth_phase", "storm_verdicts", "paced_verdicts", "flood_verdicts",
          "spill_verdicts", "trace_phase", "simulation_phase", "linear_phase", "failure_cycle_phase",
          "deepening_phase", "close_undecided", "threshold_runs", "storm_runs", "spill_runs", "summarise",
          "worker_death_phase")
#: with --detail, the steps of a simulated lasso (app/core/tcn/search_lassos.py) too
DETAIL = ("_round", "_searched", "_built", "_kept", "certified")


def _timed(name: str, fn: Callable[..., Any], started: list[float]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = time.monotonic()
        try:
            return fn(*args, **kwargs)
        finally:
            t1 = time.monotonic()
            print(f"{t0 - started[0]:8.2f} {t1 - started[0]:8.2f} {t1 - t0:7.2f}  {name}", flush=True)
    return wrapper


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("file")
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--flood-run", type=int, default=None)
    parser.add_argument("--detail", action="store_true", help="time each lasso's simulation and certification too")
    args = parser.parse_args()
    topo = parse_topology(json.loads(Path(args.file).read_text()))
    topo = topo.model_copy(update={"verification": topo.verification.model_copy(update={"checked": []})})
    started = [0.0]
    for name in PHASES:
        if hasattr(search, name):
            setattr(search, name, _timed(name, getattr(search, name), started))
    for name in DETAIL if args.detail else ():
        setattr(search_lassos, name, _timed(f"  {name}", getattr(search_lassos, name), started))
    started[0] = time.monotonic()
    result = search.verify(topo, SearchOptions(timeout_s=args.timeout, flood_run=args.flood_run))
    wall = time.monotonic() - started[0]
    print(f"wall {wall:.2f} s (limit {args.timeout:g} s)")
    for name, v in result.bolts.items():
        print(f"  {name}: {v.verdict} ({v.method})")


if __name__ == "__main__":
    main()

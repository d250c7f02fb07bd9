"""CEP under the limits of docs/limits.md: matching time per event for growing logs, and compile time.

Part 1: for bounded patterns (a `within` window, a partition, a strict context, a large
unrolled repetition) the events/s must stay flat as the log grows (matching time linear
in events); the script prints events/s per CPU second for each size and the ratio of
the largest to the smallest log. Part 2: compile time of large patterns at the default
limits, and the time to refuse the patterns over them (they are refused before building).
Reproduce: `.venv/bin/python bench/cep_scaling.py` (`--sizes 40000 160000 640000`, `--json`).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cep_bench import storm_log  # noqa: E402  (the bench folder is a script folder, not a package)

from app.cep import CepEngine, Pattern, PatternError, compile_pattern, parse_text  # noqa: E402

BOUNDED = [
    ("(take(tuple) -> bolt_ack(tuple)) within 30", {}),
    ("take(comp, tuple) -> bolt_emit(comp) -> bolt_ack(comp, tuple)", {"by": ("comp",), "context": "strict"}),
    ("bolt_fail(comp) -> bolt_fail(comp)", {"by": ("comp",)}),
    ("(take -> bolt_emit){200}", {"context": "strict"}),
]
COMPILE = [
    "take{10000}",
    "(take OR bolt_ack){5000}",
    " OR ".join(f"a{i}" for i in range(5000)),
    "(a AND b AND c AND d AND e){16}",
    # refused before building (over automaton_size / repeat_count / pattern_depth):
    "take{100000}",
    "((take{50}){50}){50}",
    "(" * 30 + "a" + "".join(f" AND b{i})" for i in range(30)),
    "NOT " * 10000 + "a",
]


def per_event(text: str, options: dict, events: list[dict], repeats: int) -> dict:
    pattern = Pattern(id="p", ast=parse_text(text), text=text, **options)
    cpu_rates: list[float] = []
    wall_rates: list[float] = []
    found = 0
    for _ in range(repeats):
        engine = CepEngine([pattern])
        gc.collect()
        gc.disable()  # as in cep_bench: the collector's passes over the whole log would grow with its size
        start, cpu_start = time.perf_counter(), time.process_time()
        found = len(engine.run(events))
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu_start
        gc.enable()
        cpu_rates.append(len(events) / max(cpu, 1e-9))
        wall_rates.append(len(events) / max(wall, 1e-9))
    return {"events": len(events), "matches": found, "events_per_cpu_s": statistics.median(cpu_rates),
            "events_per_s": statistics.median(wall_rates)}


def compile_time(text: str) -> dict:
    start = time.process_time()
    try:
        automaton = compile_pattern(Pattern(id="p", ast=parse_text(text), text=text))
        outcome = f"{len(automaton.edges):,} transitions"
    except PatternError as err:
        outcome = "refused: " + str(err).split(": ", 1)[-1].split(" (raise")[0]
    return {"pattern": text if len(text) < 50 else text[:47] + "...", "cpu_s": time.process_time() - start,
            "outcome": outcome}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[40_000, 160_000, 640_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    logs = {n: storm_log(n) for n in args.sizes}
    scaling = []
    for text, options in BOUNDED:
        rows = [per_event(text, options, logs[n], args.repeats) for n in args.sizes]
        ratio = rows[-1]["events_per_cpu_s"] / rows[0]["events_per_cpu_s"]
        scaling.append({"pattern": text, "options": options, "rows": rows, "largest_vs_smallest": ratio})
    compiles = [compile_time(text) for text in COMPILE]
    if args.json:
        print(json.dumps({"python": platform.python_version(), "load_average": os.getloadavg(),
                          "scaling": scaling, "compile": compiles}, indent=2))
        return 0
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"CPython {platform.python_version()}, {os.cpu_count()} cores, load average {load}; "
          f"median of {args.repeats} runs; events/s per CPU second")
    header = " | ".join(f"{n:,} events" for n in args.sizes)
    print(f"| pattern | options | {header} | largest/smallest |")
    print("|---|---|" + "---:|" * (len(args.sizes) + 1))
    for row in scaling:
        rates = " | ".join(f"{r['events_per_cpu_s']:,.0f}" for r in row["rows"])
        opts = ", ".join(f"{k}={v if isinstance(v, str) else ','.join(v)}" for k, v in row["options"].items()) or "-"
        print(f"| `{row['pattern']}` | {opts} | {rates} | {row['largest_vs_smallest']:.2f} |")
    print()
    print("| pattern | compile CPU s | outcome |")
    print("|---|---:|---|")
    for row in compiles:
        print(f"| `{row['pattern']}` | {row['cpu_s']:.3f} | {row['outcome']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A long lasso through a failure cycle, step by step: random #188 of `bench/verdict_sweep.py` (seed 46), whose B0
and B2 grow in a lasso of 81,498 positions (B3 fails every 21 s, paced replays).

Usage: .venv/bin/python bench/long_lasso_steps.py [--steps | --rounds] [--verify N] [--tree PATH] [--timeout S]

`--steps` (in this process): CPU seconds of each step of B0's lasso: the simulation of its schedule, the compressed
writer (`simulate_trace.rows_lasso`), the certification (`certify`), and the failure-cycle rounds as `verify` plays
them (1, 2, 4 ... s each for B0 and B2, the simulation of a round resumed where the last one stopped, or restarted
from scratch on a tree without it), up to the lasso. `--verify N`: N times, two copies of
`python -m app verify DOC --timeout S` at once (a loaded machine: each copy shares the cores with the other and with
whatever else runs), printing each copy's wall and CPU seconds and B0's and B2's verdicts. `--tree PATH`: run the
verifications with another checkout's `app` (a `git archive` of an earlier commit), to compare before and after in
the same session. CPU and wall seconds on a shared 2-core machine: expect noise; the load is printed beside them.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INDEX, SEED = 188, 46


def document() -> dict:
    """Random #188 of the sweep, drawn as `bench/verdict_sweep.py` draws it."""
    sys.path.insert(0, str(ROOT / "bench"))
    from verdict_sweep import random_doc

    rng = random.Random(SEED)
    for _ in range(INDEX):
        random_doc(rng)
    return random_doc(rng)


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def steps() -> None:
    sys.path.insert(0, str(ROOT))
    from app.core.tcn import simulate
    from app.core.tcn.check.certify import certify
    from app.core.tcn.network import build_network
    from app.core.topology import parse_topology

    topo = parse_topology(document())
    net = build_network(topo, ["B0"])
    written: dict[str, float] = {}
    real = simulate.rows_lasso

    def timed(*args, **kwargs):  # type: ignore[no-untyped-def]
        cpu = time.process_time()
        out = real(*args, **kwargs)
        written["writer"] = time.process_time() - cpu
        return out

    simulate.rows_lasso = timed
    cpu = time.process_time()
    lasso = simulate.build_lasso(net, "B0", cannot_grow=frozenset({"B1", "B3"}))
    built = time.process_time() - cpu
    simulate.rows_lasso = real
    trace = lasso.trace
    assert trace is not None, lasso.message
    cpu = time.process_time()
    cert = certify(trace, checked=["B0"])
    certified = time.process_time() - cpu
    print(f"load {load()}: lasso of {trace.k} positions ({len(trace.positions)} items), certified {cert.ok}, "
          f"growth {cert.growth_per_loop}")
    print(f"  simulation {built - written['writer']:.2f} CPU s, writer {written['writer']:.2f} CPU s, "
          f"certification {certified:.2f} CPU s")
    rounds(net, topo)
    print(f"  peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MB")


def rounds(net: object, topo: object) -> None:
    """The failure-cycle rounds of B0 and B2 as `search_lassos.failure_cycle_phase` plays them (without the
    certification): 1 s each, then twice as long, until B0's schedule closes its lasso."""
    from app.core.tcn import simulate
    from app.core.tcn.network import build_network

    nets = {"B0": net, "B2": build_network(topo, ["B2"])}  # type: ignore[arg-type]
    kept: dict[str, dict] = {"B0": {}, "B2": {}}
    ended: dict[str, frozenset[int]] = {"B0": frozenset(), "B2": frozenset()}
    resumable = "paused" in inspect.signature(simulate.build_lasso).parameters
    share, cpu, closed = 1.0, time.process_time(), None
    while closed is None and share < 64:
        for target in ("B0", "B2"):
            extra = {"paused": kept[target]} if resumable else {}
            lasso = simulate.build_lasso(nets[target], target, cannot_grow=frozenset({"B1", "B3"}),
                                         deadline=time.monotonic() + share, skip=ended[target], **extra)
            ended[target] = lasso.ended
            if lasso.trace is not None:
                closed = f"{target}'s lasso of {lasso.trace.k} positions in the round of {share:g} s"
                break
        share *= 2
    print(f"  rounds ({'resumed' if resumable else 'from scratch'}): {closed}, "
          f"{time.process_time() - cpu:.2f} CPU s in all (writer included)")


def verify(times: int, tree: Path, timeout: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        doc = Path(tmp) / "r188.storm.json"
        doc.write_text(json.dumps(document()))
        env = {**os.environ, "PYTHONPATH": str(tree), "QT_QPA_PLATFORM": "offscreen"}
        for n in range(times):
            started, before = time.monotonic(), load()
            procs = [subprocess.Popen([sys.executable, "-c", _TIMED, str(doc), str(timeout)], env=env, cwd=tree,
                                      stdout=subprocess.PIPE, text=True) for _ in range(2)]
            for m, proc in enumerate(procs):
                out, _ = proc.communicate()
                got = json.loads(out.strip().splitlines()[-1])
                print(f"run {n + 1} copy {m + 1} (load {before}): wall {got['wall']:.2f} s, CPU {got['cpu']:.2f} s, "
                      f"B0 {got['B0']}, B2 {got['B2']}")
            print(f"  (the pair took {time.monotonic() - started:.1f} s)")


# one copy of `verify DOC --timeout S` (the CLI's own command and its text, per-bolt lines included), timed from its
# start, B0's and B2's answers read back from its lines
_TIMED = """
import json, resource, sys, time, io, contextlib
started = time.monotonic()
from app.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        main(["verify", sys.argv[1], "--timeout", sys.argv[2]])
    except SystemExit:
        pass
wall = time.monotonic() - started
use = resource.getrusage(resource.RUSAGE_SELF)
said = {line.split(":")[0].strip(): line.split(":")[1].split()[0] for line in out.getvalue().splitlines()
        if line.startswith("  B") and ":" in line}
print(json.dumps({"wall": wall, "cpu": use.ru_utime + use.ru_stime, **{n: said.get(n, "?") for n in ("B0", "B2")}}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", action="store_true")
    parser.add_argument("--rounds", action="store_true", help="only the rounds of --steps")
    parser.add_argument("--verify", type=int, default=0)
    parser.add_argument("--tree", type=Path, default=ROOT)
    parser.add_argument("--timeout", type=float, default=60)
    args = parser.parse_args()
    if args.steps:
        steps()
    elif args.rounds:
        sys.path.insert(0, str(ROOT))
        from app.core.tcn.network import build_network
        from app.core.topology import parse_topology

        topo = parse_topology(document())
        rounds(build_network(topo, ["B0"]), topo)
    if args.verify:
        verify(args.verify, args.tree.resolve(), args.timeout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

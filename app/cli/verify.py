"""`stormbound verify FILE`: decide whether a checked bolt's queue can grow without bound.

Exit codes: 0 no counterexample up to k or bounded, 1 certified counterexample,
2 bad input, 3 unknown (time limit) or internal error.
"""

from __future__ import annotations

import argparse
import json
import sys

from app.cli.common import EXIT_BAD_INPUT, EXIT_FOUND, EXIT_INTERNAL, EXIT_OK, UsageError


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got '{text}'") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got '{text}'") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def format_result(result) -> str:
    """The human report: verdict in words, growth, rate-check agreement, notes."""
    lines = [result.message]
    if result.verdict == "counterexample" and result.trace is not None and result.property == "growth":
        lines.append(f"loop: positions {result.loop_start}..{result.k} (position {result.k + 1} repeats "
                     f"{result.loop_start}), growth per pass: "
                     + ", ".join(f"{n} +{d}" for n, d in result.growth_per_loop.items()))
    for note in result.notes:
        lines.append(f"- {note}")
    lines.append(f"({result.elapsed_s:.2f} s)")
    return "\n".join(lines)


def cmd_verify(args: argparse.Namespace) -> int:
    from app.cli.common import read_topology
    from app.core.formats.trace import save_trace
    from app.core.tcn.search import verify

    if args.k is not None and args.k < 2:
        raise UsageError("--k must be at least 2")
    if args.k_max is not None and args.k_max < 2:
        raise UsageError("--k-max must be at least 2")
    topo = read_topology(args.file)
    if not topo.bolts:
        raise UsageError(f"{args.file}: the topology has no bolt to verify")

    def show(progress) -> None:
        if args.progress:
            print(f"  {progress.message} ({progress.elapsed_s:.1f} s)", file=sys.stderr, flush=True)

    result = verify(topo, k=args.k, k_max=args.k_max, timeout_s=args.timeout, force_search=args.force_search,
                    threshold=args.threshold, progress=show, widen_s=args.widen,
                    loop_clocks="region" if args.region_clocks else "equal")
    if args.trace_out:
        if result.trace is None:
            print(f"stormbound: no trace written to {args.trace_out}: the verdict is {result.verdict}",
                  file=sys.stderr)
        else:
            save_trace(result.trace, args.trace_out)
    if args.json:
        sys.stdout.write(json.dumps(result.to_public_json(), indent=2) + "\n")
    else:
        print(format_result(result))
        if args.trace_out and result.trace is not None:
            print(f"trace written to {args.trace_out}")
    return {"counterexample": EXIT_FOUND, "none-up-to-k": EXIT_OK, "bounded": EXIT_OK}.get(result.verdict, EXIT_INTERNAL)


def register(sub: argparse._SubParsersAction) -> None:
    """Add `verify` to the `stormbound` command line."""
    p = sub.add_parser("verify", help="search for a lasso in which a checked queue grows without bound")
    p.add_argument("file", help="a .storm.json document or a D-VerT JSON configuration")
    bound = p.add_mutually_exclusive_group()
    bound.add_argument("--k", type=_positive_int, help="search exactly this bound (positions of the lasso)")
    bound.add_argument("--k-max", type=_positive_int, dest="k_max", help="deepen the bound up to this value")
    p.add_argument("--timeout", type=_positive_float, help="give up after this many seconds (verdict unknown)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--trace-out", dest="trace_out", metavar="PATH", help="write the counterexample trace here")
    p.add_argument("--force-search", action="store_true", dest="force_search",
                   help="search even when the rate check proves every checked queue bounded")
    p.add_argument("--threshold", type=_positive_int, help="check instead: can some queue reach this size")
    p.add_argument("--widen", type=_positive_float, metavar="S",
                   help="after a lasso, spend up to S seconds looking for one where more checked queues grow together")
    p.add_argument("--progress", action="store_true", help="report each bound on stderr")
    p.add_argument("--region-clocks", action="store_true", dest="region_clocks",
                   help="let clocks repeat up to regions at the loop (finds more lassos, may be slower)")
    p.set_defaults(func=cmd_verify, file_args=("file",))


__all__ = ["register", "EXIT_BAD_INPUT"]

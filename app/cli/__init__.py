"""The headless front door: `stormbound COMMAND ...` over app.core, app.measure, app.diff, app.cep and app.spark.

Exit codes for every command: 0 done, 2 bad input or usage (one line on stderr,
`FILE: element.field: problem`), 3 internal error. `verify` adds 1 for a
counterexample and uses 3 for `unknown`. Heavy modules (z3, Qt, Spark) are
imported inside the command that needs them, so `check` starts fast.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable

from app import __version__
from app.core.topology import TopologyError

EXIT_OK = 0
EXIT_FOUND = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3


class UsageError(Exception):
    """Bad arguments or input that is not a topology problem; exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse would exit with its own code
        raise UsageError(message)


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2) + "\n")


def _load(path: str):
    from app.core.formats import load_topology

    return load_topology(path)


# ---- check / schema / convert -------------------------------------------


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows)


def format_rate_table(topo, report) -> str:
    """The human rate table printed by `check` (and by `make run` without a display)."""
    rows = [["bolt", "capacity min..max", "inflow min..max", "ρ", "status", "suggest"]]
    for name, b in report.bolts.items():
        sugg = report.suggested_parallelism.get(name)
        rows.append([
            name,
            f"{b.capacity_min:.3g}..{b.capacity_max:.3g}",
            f"{b.inflow_min:.3g}..{b.inflow_max:.3g}",
            f"{b.utilisation:.2f}",
            b.status,
            "-" if sugg is None else str(sugg),
        ])
    lines = [f"{topo.name}: valid topology, {len(topo.spouts)} spouts, {len(topo.bolts)} bolts, "
             f"{len(topo.subscriptions)} subscriptions (tolerance {topo.settings.tolerance})", "", _table(rows), ""]
    lines += [f"- {b.explanation}" for b in report.bolts.values()]
    return "\n".join(lines)


def cmd_check(args: argparse.Namespace) -> int:
    from app.core.rates import rate_check

    topo = _load(args.file)
    report = rate_check(topo)
    if args.json:
        _print_json(report.to_public_json())
    else:
        print(format_rate_table(topo, report))
    return EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    from app.core.topology import topology_json_schema

    _print_json(topology_json_schema())
    return EXIT_OK


def cmd_convert(args: argparse.Namespace) -> int:
    from app.core.formats import save_topology

    topo = _load(args.input)
    out = args.output
    if args.to == "dvert" and not out.endswith(".dvert.json"):
        from app.core.fileio import write_atomic
        from app.core.formats.dvert import to_dvert_bytes

        write_atomic(out, to_dvert_bytes(topo))
    elif args.to == "stormbound" and out.endswith(".dvert.json"):
        from app.core.fileio import write_atomic

        write_atomic(out, topo.to_json_bytes())
    else:
        save_topology(topo, out)
    print(f"wrote {out}")
    return EXIT_OK


def _add_core_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("check", help="validate a topology and print the rate check")
    p.add_argument("file")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_check, file_args=("file",))

    p = sub.add_parser("schema", help="print the JSON Schema of the .storm.json document")
    p.set_defaults(func=cmd_schema, file_args=())

    p = sub.add_parser("convert", help="convert between .storm.json and D-VerT JSON")
    p.add_argument("input")
    p.add_argument("output", help="OUT.storm.json, or OUT.dvert.json for D-VerT (newer dialect)")
    p.add_argument("--to", choices=["stormbound", "dvert"], help="force the output format")
    p.set_defaults(func=cmd_convert, file_args=("input",))


# Each feature registers its subcommands here (core, verifier, runs, GUI ...).
REGISTRARS: list[Callable[[argparse._SubParsersAction], None]] = [_add_core_commands]


def _optional_registrars() -> list[Callable[[argparse._SubParsersAction], None]]:
    found = []
    for module_name in ("app.cli.verify", "app.cli.run", "app.cli.diff", "app.cli.gui"):
        try:
            module = __import__(module_name, fromlist=["register"])
        except ModuleNotFoundError as err:
            if err.name == module_name:
                continue
            raise
        found.append(module.register)
    return found


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="stormbound", description="Verify Storm topologies for unbounded queue growth.")
    parser.add_argument("--version", action="version", version=f"stormbound {__version__}")
    parser.add_argument("--selftest", action="store_true",
                        help="headless check of an installation: example, rate check, verification, trace PNG")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    for register in REGISTRARS + _optional_registrars():
        register(sub)
    return parser


def _input_name(args: argparse.Namespace) -> str:
    for attr in getattr(args, "file_args", ()):
        value = getattr(args, attr, None)
        if value:
            return str(value)
    return "stormbound"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = build_parser()
        if not argv:
            argv = ["gui"] if "gui" in parser._subparsers._group_actions[0].choices else ["--help"]
        args = parser.parse_args(argv)
        if args.selftest:
            from app.selftest import run_selftest

            return run_selftest()
        if not getattr(args, "func", None):
            parser.print_help()
            return EXIT_BAD_INPUT
        return int(args.func(args))
    except TopologyError as err:
        name = _input_name(args) if "args" in locals() else "stormbound"
        for problem in err.problems:
            print(f"{name}: {problem}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except UsageError as err:
        print(f"stormbound: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("stormbound: interrupted", file=sys.stderr)
        return EXIT_INTERNAL
    except BrokenPipeError:
        return EXIT_OK
    except SystemExit as err:  # --help / --version
        return int(err.code or 0)
    except Exception as err:  # an internal error: one line, no traceback, exit 3
        print(f"stormbound: internal error: {type(err).__name__}: {err}", file=sys.stderr)
        if "STORMBOUND_DEBUG" in __import__("os").environ:
            raise
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())

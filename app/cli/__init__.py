"""The headless front door: `stormbound COMMAND ...`, one module of app/cli per subcommand.

Exit codes for every command: 0 done, 2 bad input or usage (one line on stderr,
`FILE: element.field: problem`), 3 internal error. `verify` adds 1 for a
counterexample and uses 3 for `unknown`; `diff` and `reliability` use 1 for "not
equivalent" / "violations found". Heavy modules (z3, Qt, Spark) are imported
inside the command that needs them, so `check` starts fast. The helpers the
subcommands share live in app/cli/common.py (public here too); no subcommand
imports another one's private names.
"""

from __future__ import annotations

import argparse
import os
import sys

from app import __version__
from app.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_FOUND,
    EXIT_INTERNAL,
    EXIT_OK,
    Parser,
    UsageError,
    add_log_options,
    add_spark_options,
    call_spark_host,
    choose_log_engine,
    log_arg,
    print_json,
    read_topology,
    require_log,
    run_topology,
    start_spark_host,
    table,
)
from app.core.topology import TopologyError

__all__ = [
    "EXIT_BAD_INPUT", "EXIT_FOUND", "EXIT_INTERNAL", "EXIT_OK", "UsageError", "add_log_options", "add_spark_options",
    "build_parser", "call_spark_host", "choose_log_engine", "log_arg", "main", "print_json", "read_topology",
    "require_log", "run_topology", "start_spark_host", "table",
]


# ---- the parser and main ---------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The `stormbound` parser with every subcommand (each module's `register`)."""
    from app.cli import (
        analyze,
        cep,
        check,
        compare,
        connect_server,
        convert,
        diff,
        gui,
        plot,
        reliability,
        run,
        schema,
        storm,
        verify,
    )

    parser = Parser(prog="stormbound", description="Verify Storm topologies for unbounded queue growth.")
    parser.add_argument("--version", action="version", version=f"stormbound {__version__}")
    parser.add_argument("--selftest", action="store_true",
                        help="headless check of an installation: example, rate check, verification, trace PNG")
    sub = parser.add_subparsers(dest="command", parser_class=Parser)
    for module in (check, schema, convert, verify, plot, run, analyze, compare, connect_server, reliability, diff,
                   cep, storm, gui):
        module.register(sub)
    return parser


def _input_name(args: argparse.Namespace) -> str:
    for attr in getattr(args, "file_args", ()):
        value = getattr(args, attr, None)
        if value:
            return str(value)
    return "stormbound"


def main(argv: list[str] | None = None) -> int:
    """Run one `stormbound` command line; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args: argparse.Namespace | None = None
    try:
        parser = build_parser()
        args = parser.parse_args(argv or ["gui"])
        if args.selftest:
            from app.selftest import run_selftest

            return run_selftest()
        if not getattr(args, "func", None):
            parser.print_help()
            return EXIT_BAD_INPUT
        return int(args.func(args))
    except TopologyError as err:
        name = _input_name(args) if args is not None else "stormbound"
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
        if "STORMBOUND_DEBUG" in os.environ:
            raise
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())

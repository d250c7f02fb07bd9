"""The headless front door: `stormbound COMMAND ...`, one module of app/cli per subcommand.

Exit codes (README.md, "Exit codes"): 0 done, 1 a finding (a counterexample, violations,
not equivalent, or what a --fail-on option asked about), 2 bad input or usage (one line on
stderr, `FILE: element.field: problem`), 3 internal error, 4 `verify` could not decide
(unknown). With --json every outcome, errors included, is one JSON document on stdout
carrying `"format": "stormbound-result/1"` and its `kind`. Global options (-v, --log-file,
-q) route the `stormbound` loggers. Heavy modules (z3, Qt, Spark) are imported inside the
command that needs them, so `check` starts fast. The helpers the subcommands share live in
app/cli/common.py (exit codes, usage error, parser, result documents), options.py, inputs.py,
outputs.py, spark_jobs.py, engine.py (the engine reading a run's log) and console.py (the main
ones public here too); no subcommand imports another one's private names.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
from collections.abc import Callable

from app import __version__
from app.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_FOUND,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_UNKNOWN,
    RESULT_FORMAT,
    Parser,
    UsageError,
    error_document,
    print_json,
    print_result,
    table,
)
from app.cli.console import setup_logging
from app.cli.engine import open_engine
from app.cli.inputs import add_log_options, log_arg, read_topology, require_log, run_topology
from app.cli.outputs import check_log_file
from app.cli.spark_jobs import add_spark_options, call_spark_host, start_spark_host
from app.core.errors import BadInput
from app.core.topology import TopologyError, one_line

__all__ = [
    "EXIT_BAD_INPUT", "EXIT_FOUND", "EXIT_INTERNAL", "EXIT_OK", "EXIT_UNKNOWN", "RESULT_FORMAT", "UsageError",
    "add_log_options", "add_spark_options", "build_parser", "call_spark_host", "log_arg", "main", "open_engine",
    "print_json", "print_result", "read_topology", "require_log", "run_topology", "start_spark_host", "table",
]

log = logging.getLogger("stormbound.cli")


# ---- the parser and main ---------------------------------------------------------


def _add_global_options(parser: argparse.ArgumentParser, default: object) -> None:
    """-v, --log-file and -q: before the subcommand (`default` set) or after it (`default` SUPPRESS,
    so a subcommand's parse does not reset what was given before it)."""
    group = parser.add_argument_group("output and logging")
    group.add_argument("-v", "--verbose", action="count", default=0 if default is None else default,
                       help="say more on stderr: -v what each step does (info), -vv everything (debug)")
    group.add_argument("--log-file", metavar="FILE", default=default,
                       help="append a timestamped debug log to FILE (the Spark host's output included)")
    group.add_argument("-q", "--quiet", action="store_true", default=False if default is None else default,
                       help="no progress on stderr (verify's status line, Spark job progress)")


def _subparsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """Every subcommand's parser, nested ones (`import flux`) included."""
    found: list[argparse.ArgumentParser] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):  # an alias maps to the same parser
                found += [child, *_subparsers(child)]
    return found


def build_parser() -> argparse.ArgumentParser:
    """The `stormbound` parser with every subcommand (each module's `register`)."""
    from app.cli import (
        analyze,
        annotate,
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
        storm_live,
        verify,
    )

    parser = Parser(prog="stormbound", description="Verify Storm topologies for unbounded queue growth.",
                    epilog="example:\n  stormbound check models/simple-DIA-cfg-1.storm.json\n"
                           "  stormbound COMMAND --help    (each command's options, units and an example)\n\n"
                           "exit codes: 0 done, 1 a finding, 2 bad input, 3 internal error,\n"
                           "            4 verify could not decide (README.md, Exit codes)")
    parser.add_argument("--version", action="version", version=f"stormbound {__version__}")
    parser.add_argument("--selftest", action="store_true",
                        help="headless check of an installation: example, rate check, verification, trace PNG")
    _add_global_options(parser, None)
    sub = parser.add_subparsers(dest="command", parser_class=Parser)
    for module in (check, schema, convert, verify, plot, run, analyze, compare, connect_server, reliability, diff,
                   cep, storm, storm_live, annotate, gui):
        module.register(sub)
    for child in _subparsers(parser):
        _add_global_options(child, argparse.SUPPRESS)
    return parser


def _input_name(args: argparse.Namespace | None) -> str | None:
    """The input file the command was given (the first of its `file_args` that is set)."""
    for attr in getattr(args, "file_args", ()):
        value = getattr(args, attr, None)
        if value:
            return str(value)
    return None


def _wants_json(args: argparse.Namespace | None, argv: list[str]) -> bool:
    """--json was asked for (read from argv when the command line itself could not be parsed)."""
    if args is not None:
        return bool(getattr(args, "json", False))
    return "--json" in argv[:argv.index("--")] if "--" in argv else "--json" in argv


_OPTION = re.compile(r"^(?:argument )?(--?[A-Za-z][\w-]*)")


def _report(args: argparse.Namespace | None, argv: list[str], code: int, problems: list[tuple[str | None, str]],
            file: str | None, prefix: str | None = None) -> int:
    """Print a failure: one line per problem on stderr, or one JSON error document on stdout with --json.
    Each problem is (field, message); the log file gets them too."""
    for field, message in problems:
        log.error("%s", f"{file or 'stormbound'}: " + (f"{field}: " if field else "") + message,
                  extra={"file_only": True})
    if _wants_json(args, argv):
        entries: list[dict[str, str | None]] = [{"file": file, "field": field or None, "message": message}
                                                for field, message in problems]
        first = entries[0]
        print_json(error_document(first["file"], first["field"], str(first["message"]), problems=entries,
                                  exit_code=code))
        return code
    for field, message in problems:
        head = prefix or file or "stormbound"
        shown = _without_name(field, head) if field else ""
        print(one_line(f"{head}: " + (f"{shown}: " if shown else "") + message), file=sys.stderr)
    return code


def _without_name(field: str, head: str) -> str:
    """`field` without a leading file name that the line's head already gives (`log.jsonl line 3` after
    `runs/log.jsonl: ` is `line 3`), so a message never names its file twice."""
    whole = head.rstrip("/")
    for name in (whole, os.path.basename(whole)):  # the path as given (`runs/x: runs/x: ...`), then its name
        if name and field.startswith(name + " ") and len(field) > len(name) + 1:
            return field[len(name) + 1:]
        if name and field.rstrip("/") == name:
            return ""
    return field


def _usage_field(err: UsageError) -> str | None:
    """The option a usage message is about: given, or its leading `--option` / argparse's `argument --option`."""
    if err.field:
        return err.field
    m = _OPTION.match(str(err))
    return m.group(1) if m else None


def _terminated(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # unwinds like Ctrl+C: a half-written output's temporary file is removed


def main(argv: list[str] | None = None) -> int:
    """Run one `stormbound` command line; returns the exit code. SIGTERM stops it as Ctrl+C does."""
    import signal
    import threading

    given = sys.argv[1:] if argv is None else argv
    if threading.current_thread() is not threading.main_thread() or not given or "gui" in given or \
            signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:  # the GUI's event loop handles its own
        return _main(argv)
    signal.signal(signal.SIGTERM, _terminated)
    try:
        return _main(argv)
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args: argparse.Namespace | None = None
    undo_logging: Callable[[], None] | None = None
    code = EXIT_INTERNAL
    try:
        parser = build_parser()
        args = parser.parse_args(argv or ["gui"])
        check_log_file(args)
        undo_logging = setup_logging(args.verbose, args.log_file)
        log.debug("stormbound %s: %s", __version__, " ".join(argv))
        if args.selftest:
            from app.selftest import run_selftest

            code = run_selftest()
        elif not getattr(args, "func", None):
            parser.print_help()
            code = EXIT_BAD_INPUT
        else:
            code = int(args.func(args))
    except TopologyError as err:
        file = getattr(err, "file", None)  # a reader that knows the file (a Flux include) names it
        name = file if isinstance(file, str) and file else _input_name(args)
        code = _report(args, argv, EXIT_BAD_INPUT, [(p.path, p.message) for p in err.problems] or [(None, str(err))],
                       name)
    except UsageError as err:
        message = str(err)
        field = _usage_field(err)
        if _wants_json(args, argv):
            code = _report(args, argv, EXIT_BAD_INPUT, [(field, message)], err.file)
        else:  # the message already names what it is about
            code = _report(args, argv, EXIT_BAD_INPUT, [(None, message)], None, prefix="stormbound")
    except BadInput as err:  # any other refusal the user can act on (docs: app/core/errors.py)
        code = _report(args, argv, EXIT_BAD_INPUT, [(err.field, str(err))], err.file or _input_name(args))
    except KeyboardInterrupt:
        code = _report(args, argv, EXIT_INTERNAL, [(None, "interrupted")], _input_name(args), prefix="stormbound")
    except BrokenPipeError:
        code = EXIT_OK
    except SystemExit as err:  # --help / --version
        code = int(err.code or 0)
    except Exception as err:  # an internal error: one line, no traceback, exit 3
        log.debug("internal error", exc_info=True)
        code = _report(args, argv, EXIT_INTERNAL, [(None, f"internal error: {type(err).__name__}: {err}")],
                       _input_name(args), prefix="stormbound")
        if "STORMBOUND_DEBUG" in os.environ:
            raise
    finally:
        log.debug("exit code %d", code)
        if undo_logging is not None:
            undo_logging()
    return code


if __name__ == "__main__":
    sys.exit(main())

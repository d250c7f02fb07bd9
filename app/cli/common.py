"""What the subcommands of `stormbound` share: exit codes, the usage error and the helpers (public in app.cli)."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from app.core.errors import StormboundError
from app.core.topology import Problem, TopologyError, one_line

if TYPE_CHECKING:
    from app.core.topology import Topology
    from app.measure.engine_choice import Choice
    from app.spark.client import SparkHost

# The exit codes of every subcommand (README.md, "Exit codes"): a pipeline can tell them apart.
EXIT_OK = 0
EXIT_FOUND = 1  # a finding: a counterexample, violations, a difference, or what a --fail-on option asked about
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3
EXIT_UNKNOWN = 4  # verify: no answer within the limits (time limit, solver gave up)

RESULT_FORMAT = "stormbound-result/1"  # the `format` of every --json document (docs/formats.md)
log = logging.getLogger("stormbound.cli")


class UsageError(StormboundError):
    """Bad arguments or input that is not a topology problem; exit code 2. `field` names the
    option or field at fault, `file` the input, when the message is about one."""

    def __init__(self, message: str, field: str | None = None, file: str | None = None):
        super().__init__(message)
        self.field = field
        self.file = file


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, except that an epilog of examples keeps its line breaks."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("example:"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


class Parser(argparse.ArgumentParser):
    """argparse that raises UsageError instead of exiting; its --help keeps the examples' line breaks."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:  # raises instead of exiting with argparse's own code
        raise UsageError(message)


def number(kind: type, low: float | None = None, high: float | None = None, *, above: bool = False,
           unit: str = "") -> Callable[[str], Any]:
    """An argparse `type` for a finite number of `kind` (int or float) in [low, high] (low excluded when
    `above`), `unit` named in the message: `--timeout nan`, `--ackers -1` or `--max-pending 0` is one line.
    A float option in seconds (`unit="s"`) also takes a time with a unit (2ms, 0.5s, 2min; app/core/units.py)."""
    units = f" ({unit})" if unit else ""

    def read(text: str, shown: str) -> Any:
        import math

        if kind is float and unit == "s":
            from app.core.units import UnitError, parse_duration

            try:
                return parse_duration(text)
            except (UnitError, ValueError, OverflowError) as err:
                raise argparse.ArgumentTypeError(one_line(str(err))) from None
        try:
            value = int(text) if kind is int else float(text)
        except (ValueError, OverflowError):
            what = "a whole number" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"expected {what}{units}, got '{shown}'") from None
        if kind is float and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"expected a finite number{units}, got '{shown}'")
        return value

    def parse(text: str) -> Any:
        shown = one_line(text)[:40]
        value = read(text, shown)
        if low is not None and (value <= low if above else value < low):
            bound = f"above {low:g}" if above else f"at least {low:g}"
            raise argparse.ArgumentTypeError(f"must be {bound}{units}, got {shown}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"must be at most {high:g}{units}, got {shown}")
        return value
    parse.__name__ = "whole number" if kind is int else "number"  # argparse names the type on errors
    return parse


#: the largest number of seconds an option takes (a year): a longer timeout or duration is a typo
MAX_SECONDS = 365 * 24 * 3600.0


def examples(*lines: str) -> str:
    """An `epilog` for a subcommand's --help: one or more example command lines."""
    return "example:\n" + "\n".join(f"  {line}" for line in lines)


# ---- helpers the subcommands share -----------------------------------------


def print_json(data: Any) -> None:
    """`data` as indented JSON on stdout."""
    sys.stdout.write(json.dumps(data, indent=2) + "\n")


def result_document(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """`data` as a --json result: `format` and `kind` first, then the subcommand's own keys."""
    return {"format": RESULT_FORMAT, "kind": kind, **data}


def print_result(kind: str, data: dict[str, Any]) -> None:
    """A subcommand's --json outcome: one JSON document on stdout (values JSON lacks, e.g. a date, as text)."""
    sys.stdout.write(json.dumps(result_document(kind, data), indent=2, default=str) + "\n")


def error_document(file: str | None, field: str | None, message: str, *,
                   problems: list[dict[str, str | None]] | None = None,
                   exit_code: int = EXIT_BAD_INPUT) -> dict[str, Any]:
    """The --json document of a failed command: the first problem as `error`, every one under `problems`."""
    error = {"file": file, "field": field or None, "message": message}
    return result_document("error", {"error": error, "problems": problems or [error], "exit_code": exit_code})


def positive_seconds(text: str) -> float:
    """argparse type of every time option: seconds, or a time with a unit (2ms, 0.5s, 2min), above 0, up to a year."""
    return float(number(float, 0, MAX_SECONDS, above=True, unit="s")(text))


def read_topology(path: str) -> Topology:
    """A topology file of any supported format; bad input raises TopologyError (exit 2)."""
    from app.core.formats import FormatError, load_topology

    try:
        topo = load_topology(path)
    except FormatError as err:
        problems = getattr(err, "problems", [])
        if problems and "is a Flux (YAML) file" in problems[0].message:  # the command with what the file needs
            from app.core.storm.flux.origin import import_command

            raise FormatError([Problem("file", "is a Flux (YAML) file, not JSON: import it first with "
                                               f"`{import_command(path)}`")]) from None
        raise
    log.info("read %s: %s, %d spouts, %d bolts, %d subscriptions", path, topo.name, len(topo.spouts), len(topo.bolts),
             len(topo.subscriptions))
    return topo


def add_failures_option(p: argparse.ArgumentParser) -> None:
    """`--failures on|off`: override the document's settings.failures for this run (docs/model.md 7.1)."""
    p.add_argument("--failures", choices=["on", "off"],
                   help="switch the failure model on or off for this run, whatever settings.failures says "
                        "(on: the bolts with a min_ttf may fail; docs/model.md section 7)")


def with_failures(topo: Topology, choice: str | None, file: str) -> Topology:
    """`topo` with settings.failures set by `--failures` (None: as the document says). `on` on a
    document in which no bolt has a min_ttf is bad input (exit 2): nothing could fail."""
    if choice is None:
        return topo
    if choice == "on" and not any(b.min_ttf is not None for b in topo.bolts):
        raise UsageError(f"--failures on: no bolt of {file} can fail: set bolts[].min_ttf on the bolts that may fail",
                         field="bolts[].min_ttf", file=file)
    from app.core import failures

    log.info("--failures %s: settings.failures overridden for this run", choice)
    return failures.with_failures(topo, choice == "on")  # failures on need the reboot bounds


STORM_VERSION_PATTERN = re.compile(r"^[0-9]+(\.[0-9A-Za-z-]+)*$")


def storm_version_arg(text: str) -> str:
    """A Storm version as `--storm-version` takes it: 2.6.1, 1.2, 2.x."""
    if not STORM_VERSION_PATTERN.match(text) or len(text) > 40:
        raise argparse.ArgumentTypeError(f"not a Storm version: {text!r} (e.g. 2.6.1, 1.2.3 or 2.x)")
    return text


def add_storm_version_option(p: argparse.ArgumentParser, what: str) -> None:
    """`--storm-version V`: the Storm release whose defaults the capacity estimates assume (docs/storm.md)."""
    p.add_argument("--storm-version", dest="storm_version", type=storm_version_arg, metavar="VERSION",
                   help=f"the cluster's Storm version (e.g. 2.6.1 or 1.2.3) {what}; it sets the defaults the "
                        "capacity estimates assume (receive queue size, backpressure); unset: the document's, "
                        "else 2.x")


def with_storm_version(topo: Topology, version: str | None) -> Topology:
    """`topo` with storm.storm_version set by `--storm-version` (None: as the document says)."""
    if version is None:
        return topo
    return topo.model_copy(update={"storm": topo.storm.model_copy(update={"storm_version": version})})


def rebased_document(topo: Topology, source: str | None, output: str) -> Topology:
    """`topo`, read from `source`, as written to `output`: the Flux file, filter and resources it was imported with
    stay found (relative paths are relative to the document's folder)."""
    from app.core.storm.flux.origin import relative_paths, resolved_paths

    return relative_paths(resolved_paths(topo, source), output)


def table(rows: list[list[str]]) -> str:
    """Rows as left-aligned text columns (the first row is the header); every cell on one printable
    line (a name's control characters and direction overrides escaped)."""
    from app.core.topology import one_line

    rows = [[one_line(cell) for cell in row] for row in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows)


def start_spark_host(master: str | None, driver_memory: str | None = None, conf: list[str] | None = None,
                     why: str = "") -> SparkHost:
    """A started Spark host process with the driver memory and Spark settings asked for; a missing
    Java or pyspark is a one-line UsageError (naming `why` this log needs Spark, when given)."""
    from app.measure.engine_choice import EngineError
    from app.spark.client import SparkHost
    from app.spark.memory import spark_host_env
    from app.spark.session import DEFAULT_MASTER, SPARK_MASTER_ENV, SparkUnavailable

    master = master or os.environ.get(SPARK_MASTER_ENV) or DEFAULT_MASTER
    try:
        env = spark_host_env(master, driver_memory, conf)
    except EngineError as err:
        raise UsageError(str(err)) from None
    host = SparkHost(master=master, env=env)
    log.info("starting the Spark host (master %s)", master)
    try:
        host.start()
    except SparkUnavailable as err:
        if why:
            raise UsageError(f"Spark: {err} (this log needs Spark: {why}; --engine embedded reads it in this "
                             f"process instead)") from None
        raise UsageError(f"Spark: {err}") from None
    return host


def quiet(args: argparse.Namespace) -> bool:
    """No progress on stderr: -q, or --json (a machine reads the output)."""
    return bool(getattr(args, "quiet", False) or getattr(args, "json", False))


def _progress(quiet: bool) -> Callable[[float, str], None]:
    def show(fraction: float, message: str) -> None:
        logging.getLogger("stormbound.spark").debug("%5.1f%%  %s", fraction * 100, message)
        if not quiet and sys.stderr.isatty():
            sys.stderr.write(f"\r{fraction * 100:5.1f}%  {message:<60}")
            sys.stderr.flush()
    return show


def call_spark_host(host: SparkHost, op: str, quiet: bool, **params: Any) -> dict[str, Any]:
    """One request to the Spark host with progress on a terminal's stderr; its errors become exit codes."""
    from app.spark.client import HostError

    log.info("Spark job %s on %s", op, getattr(host, "master", "Spark"))
    try:
        return host.request(op, on_progress=_progress(quiet), **params)
    except HostError as err:
        from app.measure.engine_choice import is_out_of_memory
        from app.spark.memory import out_of_memory_advice

        if err.kind == "cancelled":
            raise UsageError(str(err)) from None
        if is_out_of_memory(str(err), *getattr(host, "_stderr_tail", [])):
            raise UsageError(out_of_memory_advice(host.master, host.env)) from None
        if err.kind == "input":
            raise TopologyError([Problem("", str(err))]) from None
        raise RuntimeError(str(err)) from None
    finally:
        if not quiet and sys.stderr.isatty():
            sys.stderr.write("\n")


#: Storm's largest parallelism and task count (a Java int): larger values are refused, not clamped.
STORM_MAX_INT = 2**31 - 1


def bolt_count(item: str, expected: str) -> tuple[str, int]:
    """A `--parallelism BOLT=N` item (1 <= N <= 2^31-1) as (BOLT, N); anything else is a UsageError naming
    `expected`."""
    from app.core.topology import one_line

    name, sep, number = item.partition("=")
    number = number.strip()
    if not sep or not number.isascii() or not number.isdigit() or not number.lstrip("0"):
        raise UsageError(f"--parallelism {one_line(item)}: expected {expected}")
    if len(number.lstrip("0")) > 10 or int(number) > STORM_MAX_INT:
        raise UsageError(f"--parallelism {one_line(item)}: {one_line(number)[:30]} is over Storm's largest "
                         f"parallelism {STORM_MAX_INT} (2^31-1)")
    return name, int(number)


# ---- outputs: the one way a command writes a file (app/core/fileio.py) -----------------------------

#: the attributes of a command's arguments that name files it writes (never taken as its inputs)
OUTPUT_ATTRS = frozenset({"output", "out", "trace_out", "certificate_out", "calibrate", "report", "screenshot",
                          "log_file"})
#: attributes that are never paths
_NOT_PATHS = frozenset({"command", "source", "target", "func", "file_args", "verbose", "quiet"})


def command_inputs(args: argparse.Namespace) -> list[str]:
    """Every path the command may read: each string argument (or list of strings) naming an existing file
    or folder, outputs excepted. The log file counts too: no output may replace it."""
    found: list[str] = []
    for attr, value in vars(args).items():
        if attr in _NOT_PATHS or (attr in OUTPUT_ATTRS and attr != "log_file"):
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and item and "\0" not in item and len(item) < 4096:
                try:
                    if os.path.exists(item):
                        found.append(item)
                except (OSError, ValueError):
                    continue
    return found


def add_force_option(p: argparse.ArgumentParser) -> None:
    """`--force`: replace an existing output file (else an existing output is refused, exit 2)."""
    p.add_argument("--force", action="store_true",
                   help="replace an output file that exists (never one of the command's inputs)")


def check_output_file(args: argparse.Namespace, option: str, path: str, inputs: list[str] | None = None) -> Path:
    """The file `option PATH` will write, checked before any work (app/core/fileio.check_output); a refusal
    is a one-line UsageError naming the option and the path."""
    from app.core.fileio import OutputRefused, check_output
    from app.core.topology import one_line

    try:
        return check_output(path, inputs=command_inputs(args) + list(inputs or []),
                            force=bool(getattr(args, "force", False)))
    except OutputRefused as err:
        raise UsageError(f"{option} {one_line(path)}: {err}", field=option) from None


def write_output_file(args: argparse.Namespace, option: str, path: str, data: bytes,
                      inputs: list[str] | None = None) -> Path:
    """Write a command's output through the one writer (app/core/fileio.write_output): refused when it
    is an input, the log file, a folder, a pipe or device, or exists without --force; atomic; keeps the mode."""
    from app.core.fileio import OutputRefused, write_output
    from app.core.topology import one_line

    try:
        return write_output(path, data, inputs=command_inputs(args) + list(inputs or []),
                            force=bool(getattr(args, "force", False)))
    except OutputRefused as err:
        raise UsageError(f"{option} {one_line(path)}: {err}", field=option) from None


#: what a --log-file must not be named: the documents and logs the commands read
_NOT_A_LOG = (".json", ".yaml", ".yml", ".jsonl", ".csv", ".parquet", ".properties")


def check_log_file(args: argparse.Namespace) -> None:
    """--log-file appends to a log only: not an input of the command, not a JSON/YAML file, not a folder."""
    import stat

    from app.core.fileio import input_ids
    from app.core.topology import one_line

    path = getattr(args, "log_file", None)
    if not path:
        return
    head = f"--log-file {one_line(path)}"
    if path.lower().endswith(_NOT_A_LOG):
        raise UsageError(f"{head}: a log file is appended to; this name is a document or data file "
                         "(give a name such as stormbound.log)", field="--log-file")
    try:
        st = os.stat(path)
    except OSError:
        return  # a new file (an unwritable place is named when it is opened)
    if stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{head}: is a folder, not a file", field="--log-file")
    if stat.S_ISFIFO(st.st_mode):  # opening a pipe nobody reads would block forever
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK))
        except OSError:
            raise UsageError(f"{head}: is a named pipe that nobody reads", field="--log-file") from None
    inputs = [p for p in command_inputs(args) if p != path]
    same = input_ids(inputs).get((st.st_dev, st.st_ino))
    if same is not None:
        raise UsageError(f"{head}: is also an input of this command ({one_line(same)}): give another file",
                         field="--log-file")


def spark_request(args: argparse.Namespace, op: str, why: str = "", **params: Any) -> dict[str, Any]:
    """One request to a Spark host started for it from the options of `add_spark_options` (closed after)."""
    host = start_spark_host(args.master, args.driver_memory, args.conf, why)
    try:
        return call_spark_host(host, op, quiet(args), **params)
    finally:
        host.close()


def add_spark_options(p: argparse.ArgumentParser) -> None:
    """--master, --driver-memory, --conf and --json, for the subcommands that run a Spark job."""
    p.add_argument("--master", help="Spark master URL (local[*], spark://..., sc://...); "
                                    "default $STORMBOUND_SPARK_MASTER or local[*]")
    p.add_argument("--driver-memory", metavar="SIZE",
                   help="Spark driver memory for a JVM master, e.g. 4g (default $STORMBOUND_SPARK_DRIVER_MEMORY, "
                        "else a quarter of this machine's memory, 1g..8g)")
    p.add_argument("--conf", action="append", metavar="KEY=VALUE",
                   help="a Spark setting for a JVM master (repeatable), e.g. spark.executor.memory=8g")
    p.add_argument("--json", action="store_true", help="machine-readable output (one JSON document on stdout)")


def add_log_options(p: argparse.ArgumentParser) -> None:
    """The log argument, --topology, --time-unit and the engine options, for the subcommands that read a run's log."""
    p.add_argument("log", metavar="DIR|LOG",
                   help="a run folder or a log (.jsonl, .json, .csv, .parquet, Storm metrics .log); "
                        "or a URI Spark reads (hdfs://, s3a://, ...): a .jsonl, .csv or .parquet log")
    p.add_argument("--topology", help="the topology the log comes from (a run folder has its own)")
    p.add_argument("--time-unit", choices=["s", "ms"], default="s",
                   help="unit of the log's t field: seconds (default) or milliseconds")
    p.add_argument("--engine", choices=["auto", "embedded", "spark", "local"], default="auto",
                   help="auto (default): the embedded engine (DuckDB, in this process, no Java) for a log on this "
                        "machine, Spark for a URI or when --master is given; embedded or spark: always that one "
                        "(local: the former name of embedded)")
    p.add_argument("--local-max-events", type=number(int, 1), metavar="N",
                   help="auto: send logs of more records than N to Spark (default $STORMBOUND_LOCAL_MAX_EVENTS, "
                        "else no limit)")
    p.add_argument("--local-max-mb", type=number(float, 0, above=True, unit="MB"), metavar="MB",
                   help="auto: send logs larger than MB on disk to Spark (default $STORMBOUND_LOCAL_MAX_MB, "
                        "else no limit)")


def run_topology(path: Path, given: str | None) -> Topology | None:
    """The topology a log comes from: `given`, else the run folder's own topology.storm.json, else None."""
    if given:
        return read_topology(given)
    folder = path if path.is_dir() else None
    if folder is not None and (folder / "topology.storm.json").exists():
        return read_topology(str(folder / "topology.storm.json"))
    return None


def require_log(log: str | Path) -> None:
    """A missing log or run folder is bad input (exit 2); a URI (hdfs://, s3a://, ...) is Spark's to find."""
    from app.measure.eventlog import is_uri

    if isinstance(log, str) and is_uri(log):
        return
    path = Path(log)
    if not path.exists():
        raise TopologyError([Problem("", "no such file or folder")])
    if path.is_file() and path.stat().st_size == 0:
        raise TopologyError([Problem("", "is empty: a log has at least one event or queue sample")])
    from app.measure.eventlog import log_format, parquet_failures, parquet_row_count

    if log_format(path) == "parquet":
        try:
            rows: int | None = parquet_row_count(path)
        except ModuleNotFoundError:
            rows = None
        except parquet_failures():
            rows = None  # the reader names what is wrong with it
        if rows == 0:
            raise TopologyError([Problem("", "is empty (0 rows): a log has at least one event or queue sample")])
    if path.is_dir():
        logs = [p for p in path.iterdir() if p.is_file() and p.name.startswith(("events", "queues"))]
        if logs and all(p.stat().st_size == 0 for p in logs):
            raise TopologyError([Problem("", "the run's logs are empty: a log has at least one event or queue "
                                             "sample")])


def log_arg(log: str) -> str:
    """The log as the engines take it: a URI as given (Spark reads it), else an absolute path."""
    from app.measure.eventlog import is_uri

    return log if is_uri(log) else str(Path(log).resolve())


def choose_log_engine(args: argparse.Namespace) -> Choice:
    """The engine for the log of `args` (--engine, --master, --local-max-events/--local-max-mb); says
    which on a terminal's stderr."""
    from app.measure.engine_choice import EngineError, choose_engine

    try:
        choice = choose_engine(args.log, args.engine, spark_requested=args.master is not None,
                               max_events=args.local_max_events, max_mb=args.local_max_mb)
    except EngineError as err:
        raise UsageError(str(err)) from None
    where = "embedded (DuckDB, this process)" if choice.engine == "embedded" else "Spark"
    logging.getLogger("stormbound.engine").info("engine: %s (%s)", where, choice.reason)
    if not quiet(args) and not getattr(args, "verbose", 0) and sys.stderr.isatty():
        sys.stderr.write(f"engine: {where} ({choice.reason})\n")
    return choice


@contextlib.contextmanager
def engine_failures() -> Iterator[None]:
    """A failure of the engine running a log (app.measure.engine_choice.engine_failure: out of memory,
    DuckDB missing) becomes one line, exit 2; every other error passes."""
    try:
        yield
    except (TopologyError, UsageError):
        raise
    except Exception as err:
        from app.measure.engine_choice import engine_failure

        line = engine_failure(err)
        if line is None:
            raise
        raise UsageError(line) from None


# ---- logging and progress ---------------------------------------------------


LOG_FORMAT_FILE = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# Before main() routes it (or when the CLI's code runs inside a test), the hierarchy prints nothing by itself.
logging.getLogger("stormbound").addHandler(logging.NullHandler())


class _ConsoleFilter(logging.Filter):
    """Records marked `file_only` (an error main() has already printed) stay out of the terminal."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(record, "file_only", False)


def setup_logging(verbose: int, log_file: str | None) -> Callable[[], None]:
    """Route the `stormbound` logger hierarchy: warnings (-v: info, -vv: debug) to stderr, everything
    (debug and up) to `log_file` when given. Returns the function that undoes it."""
    logger = logging.getLogger("stormbound")
    console = logging.StreamHandler(sys.stderr)
    console.setLevel(logging.WARNING if verbose <= 0 else logging.INFO if verbose == 1 else logging.DEBUG)
    console.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    console.addFilter(_ConsoleFilter())
    handlers: list[logging.Handler] = [console]
    if log_file:
        from app.core.topology import one_line

        try:
            handler = _LogFile(log_file)
        except OSError as err:
            raise UsageError(f"--log-file {one_line(log_file)}: cannot write: {err.strerror or err}",
                             field="--log-file") from None
        handler.setLevel(logging.DEBUG)
        handler.setFormatter(logging.Formatter(LOG_FORMAT_FILE))
        # a first line written now: a log that cannot be written (a full disk, /dev/full) is refused up front
        handler.emit(logging.LogRecord("stormbound", logging.DEBUG, __file__, 0, "log opened", None, None))
        if handler.failure:
            with contextlib.suppress(OSError):
                handler.close()
            raise UsageError(f"--log-file {one_line(log_file)}: cannot write: {handler.failure}", field="--log-file")
        handler.quiet = False
        handlers.append(handler)
    old_level = logger.level
    logger.setLevel(min(h.level for h in handlers))
    for h in handlers:
        logger.addHandler(h)

    def undo() -> None:
        for h in handlers:
            logger.removeHandler(h)
            with contextlib.suppress(OSError):  # the last flush of a log on a full disk
                h.close()
        logger.setLevel(old_level)
    return undo


class _LogFile(logging.FileHandler):
    """--log-file: appended to; when a write fails (the disk filled up) one line says so on stderr and the
    log is off for the rest of the command, instead of logging's traceback for every record."""

    def __init__(self, path: str):
        super().__init__(path, mode="a", encoding="utf-8")
        self.failure = ""
        self.quiet = True  # the first write's failure is the caller's to report
        self.path = path

    def emit(self, record: logging.LogRecord) -> None:
        if not self.failure:
            super().emit(record)

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging's name
        err = sys.exc_info()[1]
        self.failure = (getattr(err, "strerror", None) or str(err) or type(err).__name__) if err else "write failed"
        if not self.quiet:
            from app.core.topology import one_line

            print(one_line(f"stormbound: note: --log-file {self.path}: cannot write ({self.failure}): the log is "
                           "off for the rest of this command"), file=sys.stderr)


class StatusLine:
    """A live one-line status on a terminal's stderr: the last message and the seconds since start,
    redrawn every `interval` s by a daemon thread until `stop()` clears it. Does nothing off a terminal."""

    def __init__(self, enabled: bool, interval: float = 0.5):
        import threading
        import time

        self.enabled = enabled
        self.interval = interval
        self.message = "starting"
        self._time = time.monotonic
        self._started = time.monotonic()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, daemon=True) if enabled else None
        self._width = 0

    def start(self) -> StatusLine:
        if self._thread is not None:
            self._thread.start()
        return self

    def update(self, message: str) -> None:
        self.message = message
        if self.enabled:
            self._draw()

    def _draw(self) -> None:
        text = f"  {self.message}  [{self._time() - self._started:.0f} s]"
        width = _terminal_width()
        if len(text) > width - 1:
            text = text[:width - 2] + "…"
        with self._lock:
            if self._stop.is_set():
                return
            sys.stderr.write("\r" + text.ljust(self._width))
            sys.stderr.flush()
            self._width = len(text)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._draw()

    def stop(self) -> None:
        """Stop redrawing and erase the line (so the report starts on a clean line)."""
        if not self.enabled:
            return
        with self._lock:
            self._stop.set()
            sys.stderr.write("\r" + " " * self._width + "\r")
            sys.stderr.flush()
        if self._thread is not None and self._thread.is_alive():
            self._thread.join(timeout=2)


def _terminal_width() -> int:
    import shutil

    return max(20, shutil.get_terminal_size((80, 24)).columns)


def add_limit_option(p: argparse.ArgumentParser) -> None:
    """`--limit NAME=N` (repeatable): raise a limit of the pattern/expression/stream readers (docs/limits.md)."""
    from app.expr.limits import LIMITS

    p.add_argument("--limit", action="append", default=[], metavar="NAME=N",
                   help="raise a reader limit for this run (repeatable; docs/limits.md): " + ", ".join(LIMITS))


def apply_limits(args: argparse.Namespace) -> None:
    """Check STORMBOUND_LIMITS and apply `--limit` values; a bad one is a UsageError naming it."""
    from app.expr.limits import LimitSettingError, check_env, parse_settings, set_limits

    values: dict[str, int] = {}
    try:
        check_env()
        for entry in getattr(args, "limit", None) or []:
            values.update(parse_settings(entry, "--limit"))
    except LimitSettingError as err:
        raise UsageError(str(err)) from None
    set_limits(values)

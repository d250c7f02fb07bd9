"""Outputs: the one way a command writes a file (app/core/fileio.py), the checks before any work, the
--log-file checks and a document rebased to where it is written."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from app.cli.common import UsageError

if TYPE_CHECKING:
    from app.core.topology import Topology


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


def rebased_document(topo: Topology, source: str | None, output: str) -> Topology:
    """`topo`, read from `source`, as written to `output`: the Flux file, filter and resources it was imported with
    stay found (relative paths are relative to the document's folder)."""
    from app.core.storm.flux.origin import relative_paths, resolved_paths

    return relative_paths(resolved_paths(topo, source), output)

"""The one boundary every reader of a file or a folder goes through (app/core/fileio.py, docs/limits.md):
what it refuses, and that no module of app/ reads a file another way."""

from __future__ import annotations

import ast
import gzip
import os
import re
import sys
from pathlib import Path

import pytest

from app.core import fileio


class Refused(ValueError):
    pass


def lines(path: Path, **limits: object) -> list[tuple[int, str]]:
    return list(fileio.iter_lines(path, Refused, **{"max_line_bytes": 1000, **limits}))  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["fifo", "folder", "device", "missing", "link to /dev/zero"])
def test_every_reader_refuses_what_is_not_a_regular_file(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "polls.jsonl"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "device":
        path = Path("/dev/null")
    elif kind == "link to /dev/zero":
        path.symlink_to("/dev/zero")
    says = {"fifo": "is a named pipe", "folder": "is a folder", "device": "is a device", "missing": "no such file",
            "link to /dev/zero": "is a device"}[kind]
    for read in (lambda: lines(path), lambda: fileio.read_bytes(path, Refused, 100),
                 lambda: fileio.read_text(path, Refused, 100)):
        with pytest.raises(Refused, match=says):
            read()


def test_lines_keep_numbers_skip_blanks_and_read_every_gzip_member(tmp_path: Path) -> None:
    plain = tmp_path / "a.txt"
    plain.write_bytes(b"a\n\nb\r\nc")
    assert lines(plain) == [(1, "a\n"), (3, "b\r\n"), (4, "c")]
    assert lines(plain, skip_blank=False) == [(1, "a\n"), (2, "\n"), (3, "b\r\n"), (4, "c")]
    packed = tmp_path / "a.gz"
    packed.write_bytes(gzip.compress(b"x\n") + gzip.compress(b"y\n"))
    assert lines(packed) == [(1, "x\n"), (2, "y\n")]


@pytest.mark.parametrize(("data", "limits", "says"), [
    (b"x" * 5000, {}, "line 1: is over 1000 bytes"),
    (b"ok\n" * 100, {"max_bytes": 200}, "is over 200 bytes"),
    (b"ok\n" * 100, {"max_lines": 50}, "has over 50 lines"),
    (b"ok\n\xe9\n", {}, "line 2: is not UTF-8 text: byte 0xe9"),
    # mtime=0: the same bytes, so the same test id, in every process (pytest-xdist's workers must agree)
    (gzip.compress(b"\0" * 100_000, mtime=0), {"max_bytes": 5000, "max_line_bytes": 10**6},
     "decompresses to over 5000"),
    (gzip.compress(b"ok\n" * 1000, mtime=0)[:30], {}, "not a readable gzip file"),
])
def test_line_limits_are_met_while_reading(tmp_path: Path, data: bytes, limits: dict, says: str) -> None:
    path = tmp_path / "f"
    path.write_bytes(data)
    with pytest.raises(Refused, match=says):
        lines(path, **limits)


def test_a_sparse_file_of_three_gigabytes_is_refused_at_its_first_line_limit(tmp_path: Path) -> None:
    path = tmp_path / "polls.jsonl"
    with open(path, "wb") as fh:
        fh.truncate(3 * 1024**3)
    with pytest.raises(Refused, match="line 1: is over 1000 bytes"):
        lines(path)


@pytest.mark.parametrize(("text", "says"), [
    ("a,b,a\n1,2,3\n", "line 1: the column 'a' is named twice"),
    ("a,b\n1,2,3\n", "line 2: 3 cells, the header names 2"),
    ("a,b\n1,2\n3," + "x" * 200_000 + "\n", "line 3: a cell is over 131072 characters"),
    ('a,b\n1,"' + "x" * 200_000 + '"\n', "line 2: a cell is over 131072 characters"),
])
def test_csv_tables_refuse_what_csv_takes_silently_or_crashes_on(text: str, says: str) -> None:
    with pytest.raises(Refused, match=says):
        list(fileio.csv_rows(text.splitlines(keepends=True), Refused))


def test_csv_rows_give_the_header_then_numbered_rows() -> None:
    rows = list(fileio.csv_rows(["t,value\n", "\n", "1,2\n", "3\n"], Refused))
    assert rows == [["t", "value"], (3, {"t": "1", "value": "2"}), (4, {"t": "3"})]


def test_files_below_a_folder_are_counted_and_links_to_folders_not_followed(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.csv").write_text("t\n")
    (tmp_path / "loop").symlink_to(tmp_path)
    assert fileio.files_below(tmp_path, Refused) == [tmp_path / "a" / "x.csv", tmp_path / "loop"]
    with pytest.raises(Refused, match="holds over 2 files and folders"):
        fileio.files_below(tmp_path, Refused, max_entries=2)


# ---- no module reads a file another way -----------------------------------------------------------------

APP = Path(__file__).resolve().parents[2] / "app"
BOUNDARY = "core/fileio.py"
#: calls that read a file, a folder or a URL: a builtin, or an attribute (method or module function)
READ_NAMES = frozenset({"open"})
READ_ATTRS = frozenset({"open", "read_text", "read_bytes", "fdopen", "GzipFile", "urlopen", "iterdir", "glob",
                        "rglob", "scandir", "walk", "listdir", "read_table", "read_schema", "read_metadata",
                        "dataset", "ParquetFile"})
LOADERS = frozenset({"json", "pickle", "marshal"})  # X.load(file): reads a file handle
SPARK_READS = frozenset({"json", "csv", "parquet", "text", "orc", "load"})  # spark.read....json(path)
SQL_READS = re.compile(r"\bread_(?:parquet|csv|csv_auto|json|json_auto|json_objects|ndjson|text|blob)\s*\(")

#: (module below app/, call as written) -> why it may read without the boundary. Each is either not a read of
#: user input (a write, an in-memory buffer, the app's own files), or a reader that the boundary has already
#: checked the path for (Parquet: eventlog.check_parquet_path names every part that is not a regular file).
ALLOWED = {
    ("cep/syntax.py", "fileio.read_text"): "the boundary itself, by its module name",
    ("cli/connect_server.py", "open"): "appends the Connect server's own log (an output)",
    ("cli/outputs.py", "os.open"): "opens an output for appending, not blocking (an output)",
    ("cli/gui.py", "buffer.open"): "a QBuffer in memory",
    ("gui/trace_plots.py", "buffer.open"): "a QBuffer in memory",
    ("cli/inputs.py", "path.iterdir"): "lists a run folder's file names; each file is read through the boundary",
    ("cli/storm_live.py", "out.iterdir"): "whether an output folder is empty (the first entry only)",
    ("measure/storm_run.py", "folder.iterdir"): "whether an output folder is empty (the first entry only)",
    ("measure/storm_run.py", "open"): "PollWriter: appends to polls.jsonl and cuts its partial last line, after "
                                      "check_regular (an output)",
    ("core/storm/flux/origin.py", "folder.iterdir"): "lists folder names for the Flux classpath search, no file read",
    ("core/storm/ui/client.py", "self._opener.open"): "the Storm UI client: the URL boundary, with its own "
                                                       "deadline and reply size limit (app/core/storm/ui/client.py)",
    ("gui/autosave.py", "folder.glob"): "lists the app's own autosave folder; each file read through the boundary",
    ("gui/resources.py", "path.read_text"): "the app's shipped resources (style sheets), not user input",
    ("spark/session.py", "package.rglob"): "hashes the app's own source files for the Spark workers",
    ("spark/session.py", "f.read_bytes"): "hashes the app's own source files for the Spark workers",
    ("spark/connect_server.py", "(home / 'jars').glob"): "looks for Spark's own jars in its installation",
    ("spark/host.py", "os.fdopen"): "the host process's stdout protocol (a pipe it owns)",
    ("measure/eventlog.py", "os.walk"): "check_parquet_path: the counted walk that checks every Parquet part",
    ("measure/eventlog.py", "p.glob"): "log_format: whether a folder holds Parquet parts (names only)",
    ("measure/eventlog.py", "pq.read_table"): "Parquet, after check_parquet_log",
    ("measure/eventlog.py", "pq.read_schema"): "Parquet, after check_parquet_path",
    ("measure/eventlog.py", "pq.read_metadata"): "Parquet, after check_parquet_path",
    ("measure/eventlog.py", "ds.dataset"): "Parquet, after check_parquet_path",
    ("measure/logstream.py", "ds.dataset"): "Parquet, after check_parquet_log",
    ("measure/logstream.py", "p.rglob"): "log_bytes: sizes on disk of a Parquet folder's parts (stat, no read)",
    ("measure/sql/embedded.py", "pq.ParquetFile"): "Parquet footers, after check_parquet_path",
    ("measure/sql/embedded.py", "folder.rglob"): "the parts of a Parquet folder checked by check_parquet_path",
    ("measure/sql/embedded.py", "read_parquet("): "DuckDB over Parquet parts checked by check_parquet_path",
    ("measure/storm_events.py", "d.glob"): "the names of rolled events.log files (three levels); each read "
                                           "through the boundary",
    ("spark/frames.py", "spark.read.schema(FLAT_DDL).option('mode', 'FAILFAST').json"):
        "Spark reads the log itself after logstream.sniff read its start through the boundary",
    ("spark/frames.py", "spark.read.schema(ddl).option('header', 'true').option('mode', 'FAILFAST').csv"):
        "Spark reads the log itself after logstream.sniff read its start through the boundary",
    ("spark/frames.py", "spark.read.parquet"): "Spark reads Parquet after check_parquet_log",
}


def reads_outside_the_boundary() -> set[tuple[str, str]]:
    """(module below app/, call as written) of every call in app/ that reads a file, a folder or a URL."""
    found: set[tuple[str, str]] = set()
    for path in sorted(APP.rglob("*.py")):
        module = path.relative_to(APP).as_posix()
        if module == BOUNDARY:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                fn = node.func
                if isinstance(fn, ast.Name) and fn.id in READ_NAMES:
                    found.add((module, fn.id))
                elif isinstance(fn, ast.Attribute):
                    owner = ast.unparse(fn.value)
                    spark = fn.attr in SPARK_READS and (owner.endswith(".read") or ".read." in owner)
                    if fn.attr in READ_ATTRS or spark or (fn.attr == "load" and owner in LOADERS):
                        found.add((module, ast.unparse(fn)))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL_READS.search(node.value):
                found.add((module, SQL_READS.search(node.value).group().replace(" ", "")))  # type: ignore[union-attr]
    return found


def test_every_reader_of_a_file_goes_through_the_boundary() -> None:
    """A new reader in app/ that opens a file, lists a folder or reads a URL itself fails here: route it through
    app/core/fileio.py (read_bytes, read_text, iter_lines, csv_rows, files_below, open_checked), or, when it is
    not a read of user input, add it to ALLOWED with the reason."""
    found = reads_outside_the_boundary()
    unexplained = sorted(found - set(ALLOWED))
    assert not unexplained, "reads that bypass app/core/fileio.py: " + ", ".join(f"{m}: {c}" for m, c in unexplained)
    stale = sorted(set(ALLOWED) - found)
    assert not stale, f"ALLOWED names reads that are gone: {stale}"


def test_the_scan_sees_a_reader_that_bypasses_the_boundary(tmp_path: Path, monkeypatch) -> None:
    """The scan itself: a module with `open(...)`, `Path.read_text`, `json.load` or a DuckDB read_csv is found."""
    fake = tmp_path / "app"
    (fake / "measure").mkdir(parents=True)
    (fake / "measure" / "new.py").write_text(
        "import json\nfrom pathlib import Path\n\ndef f(p):\n    open(p)\n    Path(p).read_text()\n"
        "    json.load(p)\n    return \"SELECT * FROM read_csv('x')\"\n")
    monkeypatch.setattr(sys.modules[__name__], "APP", fake)
    assert reads_outside_the_boundary() == {("measure/new.py", "open"), ("measure/new.py", "Path(p).read_text"),
                                            ("measure/new.py", "json.load"), ("measure/new.py", "read_csv(")}


def test_blank_megabytes_are_counted_not_split(tmp_path: Path) -> None:
    path = tmp_path / "blank.gz"
    path.write_bytes(gzip.compress(b"\n" * 3_000_000 + b"  \nlast\n"))
    assert lines(path, max_lines=1_100_000) == [(3_000_002, "last\n")]  # whole blank megabytes: not counted

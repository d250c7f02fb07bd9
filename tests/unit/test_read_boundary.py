"""The one boundary every reader of a file or a folder goes through (app/core/fileio.py, docs/limits.md):
what it refuses, and that no module of app/ reads a file another way."""

from __future__ import annotations

import gzip
import os
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
    (gzip.compress(b"\0" * 100_000), {"max_bytes": 5000, "max_line_bytes": 10**6}, "decompresses to over 5000"),
    (gzip.compress(b"ok\n" * 1000)[:30], {}, "not a readable gzip file"),
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

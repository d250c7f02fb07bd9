"""Fuzzing the commands' output paths and options (the friend of tests/unit/test_fuzz_readers.py).

Two classes of abuse, drawn by hypothesis and run through `stormbound` in this process:

* output paths: every writing command (export flux, convert, import flux -o, repair -o,
  analyze --calibrate, verify --trace-out, --log-file) given as its output the input itself, a
  symbolic or hard link to it, the log file, a folder, a named pipe, a missing folder, a file
  that exists (with and without --force), odd names (line breaks, direction overrides) or
  nothing at all;
* options: numeric options given NaN, infinities, negatives, zero, huge numbers, words and
  empty strings.

Whatever is drawn, the command ends with 0, 1 or 2 (never 3, an internal error), a refusal is
one printable line on stderr, and no input changes: every input file's checksum, and the pipe,
the links and their target, are the same before and after. CI runs a fixed (derandomised)
sample; `pytest -m fuzz` runs many more random ones.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.cli import main

ROOT = Path(__file__).resolve().parents[2]
CONTROL = re.compile(r"[\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]")
_COMMON = {"deadline": None, "database": None, "print_blob": True,
           "suppress_health_check": [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]}
CI = settings(max_examples=60, derandomize=True, **_COMMON)  # type: ignore[arg-type]
FUZZ = settings(max_examples=600, **_COMMON)  # type: ignore[arg-type]

OUTPUTS = ["input", "symlink", "hardlink", "log", "folder", "fifo", "missing-folder", "existing", "new", "odd", ""]


def _log_lines() -> str:
    lines = []
    for i in range(20):
        lines += [{"t": i, "ev": "spout_emit", "comp": "S", "msg": f"m{i}", "tuple": f"t{i}"},
                  {"t": i + 0.01, "ev": "take", "comp": "B", "tuple": f"t{i}"},
                  {"t": i + 0.11, "ev": "bolt_ack", "comp": "B", "tuple": f"t{i}"},
                  {"t": i + 0.5, "comp": "B", "queue": i % 2}]
    return "".join(json.dumps(line) + "\n" for line in lines)


def _workspace(base: Path) -> dict[str, Path]:
    """Fresh inputs: a topology, a Flux file, a run log and its topology, the pipe and links around them."""
    if base.exists():
        shutil.rmtree(base)
    base.mkdir(parents=True)
    files = {
        "topology": base / "T.storm.json",
        "flux": base / "wc.flux.yaml",
        "pair": base / "pair.storm.json",
        "log": base / "run.jsonl",
        "debug": base / "debug.log",
        "existing": base / "existing.out",
    }
    shutil.copy(ROOT / "models" / "getting-started.storm.json", files["topology"])
    shutil.copy(ROOT / "models" / "wordcount.flux.yaml", files["flux"])
    files["pair"].write_text(json.dumps({"name": "pair", "spouts": [{"name": "S", "rate": 1.0}],
                                         "bolts": [{"name": "B", "alpha": 0.1, "sigma": 0, "parallelism": 1}],
                                         "subscriptions": [{"source": "S", "target": "B"}]}))
    files["log"].write_text(_log_lines())
    files["debug"].write_text("earlier debug lines\n")
    files["existing"].write_text("a file the user keeps\n")
    os.mkfifo(base / "pipe")
    (base / "folder").mkdir()
    return files


def _state(base: Path) -> dict[str, object]:
    """Checksums of every regular file, the kind of every entry, and where every link points."""
    found: dict[str, object] = {}
    for entry in sorted(base.iterdir()):
        st_ = entry.lstat()
        if stat.S_ISLNK(st_.st_mode):
            found[entry.name] = ("link", os.readlink(entry))
        elif stat.S_ISREG(st_.st_mode):
            found[entry.name] = ("file", hashlib.sha256(entry.read_bytes()).hexdigest(), stat.S_IMODE(st_.st_mode))
        else:
            found[entry.name] = ("fifo" if stat.S_ISFIFO(st_.st_mode) else "folder",)
    return found


def _output(kind: str, base: Path, files: dict[str, Path], input_key: str) -> str:
    source = files[input_key]
    if kind == "input":
        return str(source)
    if kind == "symlink":
        link = base / "link.out"
        link.symlink_to(source.name)
        return str(link)
    if kind == "hardlink":
        link = base / "hard.out"
        os.link(source, link)
        return str(link)
    if kind == "log":
        return str(files["debug"])
    if kind == "folder":
        return str(base / "folder")
    if kind == "fifo":
        return str(base / "pipe")
    if kind == "missing-folder":
        return str(base / "no" / "such" / "out.json")
    if kind == "existing":
        return str(files["existing"])
    if kind == "odd":
        return str(base / "odd\nname\u202e.json")
    if kind == "new":
        return str(base / "new.out.json")
    return ""


COMMANDS = {  # command line given the workspace and the output; the key of the input it reads
    "export": (lambda f, out: ["export", "flux", str(f["topology"]), out], "topology"),
    "convert": (lambda f, out: ["convert", str(f["topology"]), out], "topology"),
    "import-flux": (lambda f, out: ["import", "flux", str(f["flux"]), "-o", out], "flux"),
    "repair": (lambda f, out: ["repair", str(f["flux"]), "--parallelism", "count=7", "-o", out], "flux"),
    "calibrate": (lambda f, out: ["analyze", str(f["log"]), "--topology", str(f["pair"]), "--engine", "local",
                                  "--calibrate", out], "pair"),
    "trace-out": (lambda f, out: ["verify", str(f["topology"]), "--k", "6", "--no-simulation", "--trace-out", out],
                  "topology"),
    "log-file": (lambda f, out: ["--log-file", out, "check", str(f["topology"])], "topology"),
}


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(argv)
    return code, capsys.readouterr().err


def _judge(code: int, err: str, argv: list[str]) -> None:
    assert code in (0, 1, 2), f"{argv}: exit {code}: {err}"
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1, f"{argv}: not one line: {err!r}"
        assert not CONTROL.search(lines[0]), f"{argv}: an unprintable character in {lines[0]!r}"


def _output_case(tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, kind: str, force: bool) -> None:
    base = tmp_path / "ws"
    files = _workspace(base)
    build, input_key = COMMANDS[command]
    out = _output(kind, base, files, input_key)
    argv = build(files, out) + (["--force"] if force and command != "log-file" else [])
    if kind == "log" and command != "log-file":  # the output is the command's own log file
        argv = ["--log-file", str(files["debug"]), *argv]
    before = _state(base)
    code, err = _run(capsys, argv)
    _judge(code, err, argv)
    after = _state(base)
    changed = {name for name in before if before[name] != after.get(name)}
    # the one file a command may change: an existing output it was told to replace (--force), or the
    # log it appends to
    allowed = set()
    if kind == "existing" and force and code in (0, 1):
        allowed.add("existing.out")
    if command == "log-file" and kind in ("log", "existing", "new") and code in (0, 1):
        allowed.add(Path(out).name)
    if kind == "log" or command == "log-file":
        allowed.add("debug.log")  # appended to, as a log is: the earlier lines stay
        assert files["debug"].read_text().startswith("earlier debug lines\n")
    if kind == "log" and command != "log-file":
        assert code == 2 and "is also an input" in err, f"{argv}: wrote over its log file: {err}"
    assert changed <= allowed, f"{argv}: exit {code} changed {sorted(changed - allowed)}: {err}"
    for key in ("topology", "flux", "pair", "log"):
        assert after[files[key].name] == before[files[key].name], f"{argv} changed the input {key}"
    assert stat.S_ISFIFO(os.lstat(base / "pipe").st_mode)


@CI
@given(command=st.sampled_from(sorted(COMMANDS)), kind=st.sampled_from(OUTPUTS), force=st.booleans())
def test_no_output_path_destroys_an_input(tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str,
                                          kind: str, force: bool) -> None:
    _output_case(tmp_path, capsys, command, kind, force)


@pytest.mark.fuzz
@FUZZ
@given(command=st.sampled_from(sorted(COMMANDS)), kind=st.sampled_from(OUTPUTS), force=st.booleans())
def test_no_output_path_destroys_an_input_long(tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str,
                                               kind: str, force: bool) -> None:
    _output_case(tmp_path, capsys, command, kind, force)


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("kind", OUTPUTS)
def test_every_output_kind_of_every_command(tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str,
                                            kind: str) -> None:
    """The whole grid once, without --force (the sample above adds --force)."""
    _output_case(tmp_path, capsys, command, kind, False)


# ---- options ---------------------------------------------------------------------------------

BAD_NUMBERS = ["nan", "NaN", "inf", "-inf", "1e400", "-1", "0", "-0", "1e-400", "99999999999999999999999",
               "1.5", "abc", "", " ", "0x10", "1_000", "２", "\u202e1"]
OPTIONS = {  # command line given the workspace and a value
    "reliability --timeout": lambda f, v: ["reliability", str(f["log"]), "--engine", "local", "--timeout", v],
    "reliability --max-pending": lambda f, v: ["reliability", str(f["log"]), "--engine", "local",
                                               "--max-pending", v],
    "reliability --ackers": lambda f, v: ["reliability", str(f["log"]), "--engine", "local", "--ackers", v],
    "reliability --limit": lambda f, v: ["reliability", str(f["log"]), "--engine", "local", "--limit", v],
    "analyze --bin": lambda f, v: ["analyze", str(f["log"]), "--engine", "local", "--bin", v],
    "analyze --growth-floor": lambda f, v: ["analyze", str(f["log"]), "--engine", "local", "--growth-floor", v],
    "analyze --local-max-mb": lambda f, v: ["analyze", str(f["log"]), "--local-max-mb", v],
    "import storm-ui --timeout": lambda f, v: ["import", "storm-ui", "http://127.0.0.1:9", "--topology", "x",
                                               "--timeout", v],
    "repair --parallelism": lambda f, v: ["repair", str(f["flux"]), "--parallelism", f"count={v}"],
    "verify --k": lambda f, v: ["verify", str(f["topology"]), "--k", v, "--max-k", "12"],
}


def _option_case(tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, value: str) -> None:
    base = tmp_path / "ws"
    files = _workspace(base)
    argv = OPTIONS[option](files, value)
    before = _state(base)
    code, err = _run(capsys, argv)
    _judge(code, err, argv)
    assert _state(base) == before, f"{argv} changed a file"


@CI
@given(option=st.sampled_from(sorted(OPTIONS)), value=st.one_of(st.sampled_from(BAD_NUMBERS), st.text(max_size=12),
                                                              st.integers().map(str), st.floats().map(str)))
def test_no_option_value_is_an_internal_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str,
                                              value: str) -> None:
    _option_case(tmp_path, capsys, option, value)


@pytest.mark.fuzz
@FUZZ
@given(option=st.sampled_from(sorted(OPTIONS)), value=st.one_of(st.sampled_from(BAD_NUMBERS), st.text(max_size=12),
                                                              st.integers().map(str), st.floats().map(str)))
def test_no_option_value_is_an_internal_error_long(tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str,
                                                   value: str) -> None:
    _option_case(tmp_path, capsys, option, value)

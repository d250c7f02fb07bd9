"""Regression tests: no command destroys its input, and every bad value is one line (exit 2).

One test per case of the third fuzz campaign: outputs that are inputs (directly, through links,
the log file), existing files without --force, pipes, devices, folders, unwritable places; the
options and file fields that used to end in an internal error; values beyond what Storm takes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from app.cli import main

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "models" / "getting-started.storm.json"
FLUX = ROOT / "models" / "wordcount.flux.yaml"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def work(tmp_path: Path) -> dict[str, Path]:
    files = {"T": tmp_path / "T.storm.json", "wc": tmp_path / "wc.flux.yaml"}
    shutil.copy(MODEL, files["T"])
    shutil.copy(FLUX, files["wc"])
    files["T"].chmod(0o644)
    return files


@pytest.mark.parametrize(("argv", "key", "words"), [
    (["export", "flux", "{T}", "{T}"], "T", "is also an input of this command"),
    (["import", "flux", "{wc}", "-o", "{wc}"], "wc", "is also an input of this command"),
    (["verify", "{T}", "--trace-out", "{T}"], "T", "is also an input of this command"),
    (["--log-file", "{T}", "check", "{T}"], "T", "--log-file"),
    (["check", "{T}", "--log-file", "{T}"], "T", "--log-file"),
    (["convert", "{T}", "{T}", "--force"], "T", "is also an input of this command"),
    (["repair", "{wc}", "--parallelism", "count=9", "-o", "{wc}", "--force"], "wc", "is also an input"),
])
def test_an_output_that_is_an_input_is_refused(capsys, work: dict[str, Path], argv: list[str], key: str,
                                               words: str) -> None:
    before = digest(work[key])
    code, _, err = run(capsys, *[a.format(**{k: str(v) for k, v in work.items()}) for a in argv])
    assert code == 2 and words in one_line(err)
    assert digest(work[key]) == before


def test_links_to_an_input_are_the_input(capsys, work: dict[str, Path], tmp_path: Path) -> None:
    soft, hard = tmp_path / "soft.yaml", tmp_path / "hard.yaml"
    soft.symlink_to(work["T"])
    os.link(work["T"], hard)
    before = digest(work["T"])
    for out in (soft, hard):
        code, _, err = run(capsys, "export", "flux", str(work["T"]), str(out), "--force")
        assert code == 2 and "is also an input" in one_line(err)
    assert digest(work["T"]) == before and soft.is_symlink()


def test_an_output_that_is_the_log_file_is_refused(capsys, work: dict[str, Path], tmp_path: Path) -> None:
    log = tmp_path / "debug.log"
    log.write_text("earlier\n")
    code, _, err = run(capsys, "--log-file", str(log), "export", "flux", str(work["T"]), str(log), "--force")
    assert code == 2 and "is also an input" in one_line(err)
    assert log.read_text().startswith("earlier\n")  # appended to, never replaced


def test_an_existing_output_needs_force_and_keeps_its_mode(capsys, work: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "out.yaml"
    out.write_text("mine\n")
    out.chmod(0o644)
    code, _, err = run(capsys, "export", "flux", str(work["T"]), str(out))
    assert code == 2 and "exists: give --force to replace it" in one_line(err)
    assert out.read_text() == "mine\n"
    assert run(capsys, "export", "flux", str(work["T"]), str(out), "--force")[0] == 0
    assert out.read_text() != "mine\n" and stat.S_IMODE(out.stat().st_mode) == 0o644


def test_a_symlink_output_writes_its_target(capsys, work: dict[str, Path], tmp_path: Path) -> None:
    target, link = tmp_path / "target.yaml", tmp_path / "link.yaml"
    target.write_text("old\n")
    link.symlink_to(target.name)
    assert run(capsys, "export", "flux", str(work["T"]), str(link), "--force")[0] == 0
    assert link.is_symlink() and "spouts" in target.read_text()


def test_a_pipe_and_a_device_are_never_replaced(capsys, work: dict[str, Path], tmp_path: Path) -> None:
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    for out in (str(pipe), "/dev/full", "/dev/null"):
        if not os.path.exists(out):
            continue
        code, _, err = run(capsys, "export", "flux", str(work["T"]), out, "--force")
        assert code == 2 and "not a regular file" in one_line(err), out
    assert stat.S_ISFIFO(os.lstat(pipe).st_mode)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    if os.path.exists("/dev/full"):
        assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


@pytest.mark.parametrize("argv", [
    ["import", "flux", "{wc}", "-o", "{out}"],
    ["export", "flux", "{T}", "{out}"],
    ["convert", "{T}", "{out}"],
    ["repair", "{wc}", "--parallelism", "count=9", "-o", "{out}"],
    ["verify", "{T}", "--trace-out", "{out}"],
])
@pytest.mark.parametrize("out", ["/proc/stormbound-x/out.json", ".", "{tmp}/missing/out.json"])
def test_unwritable_places_and_folders_are_one_line(capsys, work: dict[str, Path], tmp_path: Path,
                                                    argv: list[str], out: str) -> None:
    names = {k: str(v) for k, v in work.items()} | {"out": out.format(tmp=tmp_path)}
    before = digest(work["T"]), digest(work["wc"])
    code, _, err = run(capsys, *[a.format(**names) for a in argv])
    assert code == 2, err
    one_line(err)
    assert (digest(work["T"]), digest(work["wc"])) == before


def _run_folder(tmp_path: Path, settings: dict[str, object] | None = None, queue: float = 1) -> Path:
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "topology.storm.json").write_text(json.dumps({
        "name": "pair", "spouts": [{"name": "S", "rate": 1.0}],
        "bolts": [{"name": "B", "alpha": 0.1, "sigma": 0, "parallelism": 1}],
        "subscriptions": [{"source": "S", "target": "B"}]}))
    lines = []
    for i in range(30):
        lines += [{"t": i, "ev": "spout_emit", "comp": "S", "msg": f"m{i}", "tuple": f"t{i}"},
                  {"t": i + 0.01, "ev": "take", "comp": "B", "tuple": f"t{i}"},
                  {"t": i + 0.11, "ev": "bolt_ack", "comp": "B", "tuple": f"t{i}"},
                  {"t": i + 0.5, "comp": "B", "queue": queue if i == 10 else i % 2}]
    (folder / "events.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    if settings is not None:
        (folder / "run.json").write_text(json.dumps({"reliability": settings}))
    return folder


@pytest.mark.parametrize(("option", "value"), [("--max-pending", "0"), ("--timeout", "0"), ("--ackers", "-1"),
                                                ("--timeout", "nan"), ("--max-pending", "99999999999")])
def test_reliability_options_are_checked_at_the_parser(capsys, tmp_path: Path, option: str, value: str) -> None:
    code, _, err = run(capsys, "reliability", str(_run_folder(tmp_path)), "--engine", "local", option, value)
    assert code == 2 and one_line(err).startswith(f"stormbound: argument {option}: ")


@pytest.mark.parametrize(("settings", "words"), [
    ({"topology.message.timeout.secs": [1, 2]}, "timeout.secs: must be a number, not list"),
    ({"topology.message.timeout.secs": 0}, "out of range"),
    ({"topology.acker.executors": 1.5}, "must be a whole number"),
    ({"topology.max.spout.pending": 10**20}, "out of range"),
])
def test_run_json_settings_are_checked_by_the_reader(capsys, tmp_path: Path, settings: dict[str, object],
                                                     words: str) -> None:
    code, _, err = run(capsys, "reliability", str(_run_folder(tmp_path, settings)), "--engine", "local")
    assert code == 2 and "run.json: reliability." in one_line(err) and words in err


def test_a_queue_of_1e308_is_refused(capsys, tmp_path: Path) -> None:
    code, _, err = run(capsys, "compare", str(_run_folder(tmp_path, queue=1e308)), "--engine", "local")
    assert code == 2 and "queue: 1e+308 is over the largest count" in one_line(err)


def test_an_empty_log_is_refused(capsys, tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    for command in ("analyze", "reliability"):
        code, _, err = run(capsys, command, str(empty), "--engine", "local")
        assert code == 2 and "is empty" in one_line(err)


def test_repair_names_the_bad_topology_file(capsys, work: dict[str, Path], tmp_path: Path) -> None:
    bad = tmp_path / "bad.storm.json"
    bad.write_text(json.dumps({"name": "x", "spouts": [{"name": "S", "rate": -1}], "bolts": []}))
    code, _, err = run(capsys, "repair", str(work["wc"]), "--parallelism", "document", "--topology", str(bad))
    assert code == 2 and one_line(err).startswith(str(bad)) and str(work["wc"]) not in err


def test_parallelism_beyond_storm_is_refused(capsys, work: dict[str, Path], tmp_path: Path) -> None:
    code, _, err = run(capsys, "repair", str(work["wc"]), "--parallelism", "count=" + "1" + "0" * 20)
    assert code == 2 and "over Storm's largest parallelism 2147483647" in one_line(err)
    flux = tmp_path / "big.flux.yaml"
    huge = "parallelism: &splitters 100000000000000000000000"
    flux.write_text(work["wc"].read_text().replace("parallelism: &splitters 2", huge, 1))
    assert "100000000000000000000000" in flux.read_text()
    code, _, err = run(capsys, "import", "flux", str(flux))
    assert code == 2 and "over Storm's largest parallelism" in one_line(err)


def test_duplicate_keys_are_refused_naming_the_key(capsys, tmp_path: Path) -> None:
    doc = tmp_path / "dup.storm.json"
    doc.write_text(MODEL.read_text().replace('"name": "getting-started",',
                                             '"name": "getting-started", "name": "other",', 1))
    code, _, err = run(capsys, "check", str(doc))
    assert code == 2 and "duplicate key 'name'" in one_line(err)


def test_an_unknown_key_with_a_newline_and_an_escape_is_echoed_escaped(capsys, tmp_path: Path) -> None:
    data = json.loads(MODEL.read_text())
    data["bad\n\x1b[31mkey\u202e"] = 1
    doc = tmp_path / "odd.storm.json"
    doc.write_text(json.dumps(data))
    code, _, err = run(capsys, "check", str(doc))
    line = one_line(err)
    assert code == 2 and "\\n\\x1b[31mkey\\u202e" in line and "\x1b" not in line and "\u202e" not in line


def test_a_plot_of_a_trace_with_a_missing_bolt_or_a_refused_topology(capsys, tmp_path: Path) -> None:
    trace = tmp_path / "t.json"
    assert run(capsys, "verify", str(MODEL), "--k-max", "8", "--trace-out", str(trace))[0] == 1
    data = json.loads(trace.read_text())
    missing = json.loads(json.dumps(data))
    del missing["positions"][2]["bolts"]["split"]
    refused = json.loads(json.dumps(data))
    refused["topology"]["bolts"][0]["alpha"] = -1
    for doc, words in ((missing, "positions.2.bolts: split of the topology is missing"),
                       (refused, "topology.bolts.split.alpha")):
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(doc))
        code, _, err = run(capsys, "plot", str(path), "-o", str(tmp_path / "p.svg"), "--force")
        assert code == 2 and words in one_line(err)
        assert not (tmp_path / "p.svg").exists()

"""The CLI in scripts and CI jobs: exit codes (--fail-on options, verify's unknown), one
`stormbound-result/1` JSON document per --json outcome (errors included), progress on a terminal,
-v / --log-file through logging, help pages with units and an example, the max idle warning."""

from __future__ import annotations

import argparse
import json
import logging
import os
import pty
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "models"
CFG1 = MODELS / "simple-DIA-cfg-1.storm.json"  # B2 grows, B3 may-grow
CFG2 = MODELS / "simple-DIA-cfg-2.storm.json"  # bounded and may-grow; B3 unbounded (B2 floods it)
CFG6 = MODELS / "focused-crawler-reduced-cfg-6.storm.json"  # all bounded; max_idle_time 1 s, α down to 0.05 s
GETTING_STARTED = MODELS / "getting-started.storm.json"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv: str) -> tuple[int, dict[str, Any], str]:
    code, out, err = run(capsys, *argv, "--json")
    data = json.loads(out)  # the whole of stdout is one document
    assert data["format"] == "stormbound-result/1" and list(data)[:2] == ["format", "kind"]
    return code, data, err


# ---- exit codes ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("model", "fail_on", "code"), [
    (CFG1, None, 0), (CFG1, "grows", 1), (CFG1, "may-grow", 1),
    (CFG2, "grows", 1), (CFG2, "may-grow", 1),  # cfg-2: B3 unbounded, B2 flooding it (counts as grows)
    (CFG6, "grows", 0), (CFG6, "may-grow", 0),
])
def test_check_fail_on(capsys, model: Path, fail_on: str | None, code: int) -> None:
    argv = ["check", str(model)] + (["--fail-on", fail_on] if fail_on else [])
    assert run(capsys, *argv)[0] == code
    got, data, _ = run_json(capsys, *argv)
    assert got == code and data["kind"] == "check"
    if fail_on:
        worse = {"grows": {"grows"}, "may-grow": {"grows", "may-grow"}}[fail_on]
        assert data["fail_on"]["bolts"] == [n for n, b in data["bolts"].items()
                                            if b["status"] in worse or n in data["unbounded"]]  # as grows
        assert bool(data["fail_on"]["bolts"]) == (code == 1)


def test_check_fail_on_names_the_bolts_in_text(capsys) -> None:
    code, out, _ = run(capsys, "check", str(CFG1), "--fail-on", "may-grow")
    assert code == 1 and out.rstrip().endswith("--fail-on may-grow: B2, B3")
    assert run(capsys, "check", str(CFG1), "--fail-on", "never")[0] == 2


def _events(tmp_path: Path, kinds: list[str]) -> Path:
    path = tmp_path / "events.json"
    path.write_text(json.dumps([{"type": kind, "t": i} for i, kind in enumerate(kinds)]))
    return path


def test_cep_fail_on_match(tmp_path: Path, capsys) -> None:
    patterns = tmp_path / "p.cep"
    patterns.write_text("pair [strict]: a1 -> a2\n")
    matching, quiet = _events(tmp_path, ["a1", "a2"]), tmp_path / "quiet.json"
    quiet.write_text(json.dumps([{"type": "a2", "t": 0}, {"type": "a1", "t": 1}]))
    assert run(capsys, "cep", str(patterns), str(matching))[0] == 0  # reporting only, by default
    assert run(capsys, "cep", str(patterns), str(matching), "--fail-on-match")[0] == 1
    assert run(capsys, "cep", str(patterns), str(quiet), "--fail-on-match")[0] == 0
    code, data, _ = run_json(capsys, "cep", str(patterns), str(matching), "--fail-on-match")
    assert code == 1 and data["kind"] == "cep" and data["counts"] == {"pair": 1}


def _run_log(tmp_path: Path, growing: bool) -> tuple[Path, Path]:
    """120 s of a spout (1 tuple/s) feeding one fast bolt (α = 0.1 s, so the model says bounded) whose
    queue samples grow by one tuple per second, or stay flat."""
    topo = tmp_path / "pair.storm.json"
    topo.write_text(json.dumps({"name": "pair", "spouts": [{"name": "S", "rate": 1.0}],
                                "bolts": [{"name": "B", "alpha": 0.1, "sigma": 0, "parallelism": 1}],
                                "subscriptions": [{"source": "S", "target": "B"}]}))
    log = tmp_path / ("grow.jsonl" if growing else "flat.jsonl")
    lines = []
    for i in range(120):
        lines += [{"t": i, "ev": "spout_emit", "comp": "S", "msg": f"m{i}", "tuple": f"t{i}"},
                  {"t": i + 0.01, "ev": "take", "comp": "B", "tuple": f"t{i}"},
                  {"t": i + 0.11, "ev": "bolt_ack", "comp": "B", "tuple": f"t{i}"},
                  {"t": i + 0.5, "comp": "B", "queue": i if growing else i % 2}]
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return log, topo


def test_compare_fail_on_disagreement(tmp_path: Path, capsys) -> None:
    grow, topo = _run_log(tmp_path, growing=True)
    flat, _ = _run_log(tmp_path, growing=False)
    base = ["--topology", str(topo), "--engine", "local"]
    assert run(capsys, "compare", str(grow), *base)[0] == 0
    code, out, _ = run(capsys, "compare", str(grow), *base, "--fail-on-disagreement")
    assert code == 1 and "disagree on B" in out
    assert run(capsys, "compare", str(flat), *base, "--fail-on-disagreement")[0] == 0
    code, data, _ = run_json(capsys, "compare", str(grow), *base, "--fail-on-disagreement")
    assert code == 1 and data["kind"] == "compare" and data["disagreeing"] == ["B"]
    assert data["comparison"]["bolts"][0]["agrees"] is False
    code, data, _ = run_json(capsys, "analyze", str(flat), "--topology", str(topo), "--engine", "local")
    assert code == 0 and data["kind"] == "analyze" and data["disagreeing"] == []


def test_verify_exit_codes(monkeypatch, capsys) -> None:
    assert run(capsys, "verify", str(GETTING_STARTED), "--k-max", "8")[0] == 1
    assert run(capsys, "verify", str(CFG6))[0] == 0
    code, data, _ = run_json(capsys, "verify", str(CFG2), "--k", "20", "--timeout", "0.3")
    assert code == 4 and data["kind"] == "verify" and data["verdict"] == "unknown"
    import app.core.tcn.search

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("solver exploded")

    monkeypatch.setattr(app.core.tcn.search, "verify", broken)
    code, _, err = run(capsys, "verify", str(GETTING_STARTED))
    assert code == 3 and err == "stormbound: internal error: RuntimeError: solver exploded\n"


# ---- --json: every outcome one document -------------------------------------------------------------


def test_json_results_carry_format_and_kind(tmp_path: Path, capsys) -> None:
    left, right = tmp_path / "l.jsonl", tmp_path / "r.jsonl"
    left.write_text('{"key": 1}\n{"key": 2}\n')
    right.write_text('{"key": 2}\n{"key": 1}\n')
    assert run_json(capsys, "diff", str(left), str(right), "-d", "all")[:2][1]["kind"] == "diff"
    grow, topo = _run_log(tmp_path, growing=True)
    code, data, _ = run_json(capsys, "reliability", str(grow), "--engine", "local")
    assert data["kind"] == "reliability" and code in (0, 1)
    code, data, _ = run_json(capsys, "check", str(GETTING_STARTED))
    assert code == 0 and data["kind"] == "check" and data["bolts"]["count"]["status"] == "grows"


@pytest.mark.parametrize(("argv", "code", "field", "fragment"), [
    (["check", "{missing}"], 2, "file", "no such file"),
    (["check", "{bad}"], 2, "bolts.B.alpha", "greater than 0"),
    (["verify", str(GETTING_STARTED), "--k", "0"], 2, "--k", "at least 1"),
    (["verify", str(GETTING_STARTED), "--k-max", "1"], 2, "--k-max", "at least 2"),
    (["check"], 2, None, "required: file"),
    (["frobnicate"], 2, None, "invalid choice"),
    (["diff", "{bad}", "{bad}", "-d", "pairs:"], 2, None, ""),
])
def test_json_errors_are_one_document(tmp_path: Path, capsys, argv: list[str], code: int, field: str | None,
                                      fragment: str) -> None:
    bad = tmp_path / "bad.storm.json"
    bad.write_text('{"spouts": [{"name": "S", "rate": 1}], '
                   '"bolts": [{"name": "B", "alpha": 0, "sigma": 1, "parallelism": 1}]}')
    argv = [a.format(missing=tmp_path / "missing.json", bad=bad) for a in argv]
    got, data, err = run_json(capsys, *argv)
    assert got == code and data["kind"] == "error" and data["exit_code"] == code and err == ""
    assert set(data["error"]) == {"file", "field", "message"} and data["problems"][0] == data["error"]
    assert data["error"]["field"] == field and fragment in data["error"]["message"]
    if argv[0] == "check" and len(argv) > 1:
        assert data["error"]["file"] == argv[1]


def test_json_internal_error_exit_3(monkeypatch, capsys) -> None:
    import app.core.rates

    def broken(*_args: Any, **_kwargs: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(app.core.rates, "RateAnalysis", broken)  # check's one analysis of the document
    code, data, err = run_json(capsys, "check", str(CFG1))
    assert code == 3 and data["kind"] == "error" and data["exit_code"] == 3 and err == ""
    assert data["error"] == {"file": str(CFG1), "field": None, "message": "internal error: RuntimeError: boom"}


def test_json_cep_pattern_error_names_the_line(tmp_path: Path, capsys) -> None:
    patterns = tmp_path / "p.cep"
    patterns.write_text("p: a ->\n")
    code, data, _ = run_json(capsys, "cep", str(patterns), str(_events(tmp_path, ["a"])))
    assert code == 2 and data["error"]["field"].startswith("p.cep line 1 (p)")
    assert "expected an event type" in data["error"]["message"]


# ---- progress on a terminal ---------------------------------------------------------------------------


def _stderr_on_a_terminal(argv: list[str]) -> tuple[int, str, str]:
    """Run `python -m app ARGV` with stderr on a pseudo-terminal; (exit code, stdout, what the terminal got)."""
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "200"}
    proc = subprocess.Popen([sys.executable, "-m", "app", *argv], cwd=ROOT, stdout=subprocess.PIPE, stderr=slave,
                            stdin=subprocess.DEVNULL, env=env)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    out = proc.stdout.read().decode() if proc.stdout else ""
    return proc.wait(timeout=120), out, seen.decode(errors="replace")


def test_verify_shows_progress_on_a_terminal_and_q_silences_it() -> None:
    argv = ["verify", str(GETTING_STARTED), "--k-max", "8"]
    code, out, tty = _stderr_on_a_terminal(argv)
    assert code == 1 and out.startswith("counterexample")
    assert "verifying getting-started" in tty and "\r" in tty and re.search(r"\[\d+ s\]", tty)
    code, out, tty = _stderr_on_a_terminal([*argv, "-q"])
    assert code == 1 and out.startswith("counterexample") and tty == ""
    code, out, tty = _stderr_on_a_terminal(["-q", *argv, "--json"])  # -q before the subcommand too
    assert code == 1 and json.loads(out)["kind"] == "verify" and tty == ""


def test_verify_is_silent_on_a_pipe(capsys) -> None:
    done = subprocess.run([sys.executable, "-m", "app", "verify", str(GETTING_STARTED), "--k-max", "8"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and done.stderr == ""


# ---- -v and --log-file -------------------------------------------------------------------------------------


def test_verbose_logs_each_step_on_stderr(capsys) -> None:
    code, out, err = run(capsys, "verify", str(GETTING_STARTED), "--k-max", "8", "-v")
    assert code == 1 and out.startswith("counterexample")
    assert "stormbound.verify: verdict counterexample" in err
    assert f"stormbound.cli: read {GETTING_STARTED}: getting-started, 1 spouts, 2 bolts" in err
    assert "exit code" not in err  # debug lines need -vv
    code, _, err = run(capsys, "-vv", "check", str(GETTING_STARTED))
    assert code == 0 and "stormbound.cli: exit code 0" in err
    code, _, err = run(capsys, "check", str(GETTING_STARTED))
    assert code == 0 and err == ""


def test_log_file_gets_debug_lines_and_errors(tmp_path: Path, capsys) -> None:
    log = tmp_path / "run.log"
    code, out, err = run(capsys, "verify", str(GETTING_STARTED), "--k-max", "8", "--log-file", str(log))
    assert code == 1 and err == ""
    text = log.read_text()
    assert f"DEBUG stormbound.cli: stormbound {__import__('app').__version__}: verify" in text
    assert "INFO stormbound.verify: verdict counterexample" in text and "exit code 1" in text
    code, _, err = run(capsys, "check", str(tmp_path / "missing.json"), "--log-file", str(log))
    assert code == 2 and err.count("\n") == 1  # the error once on stderr, and once in the log
    assert "ERROR stormbound.cli: " in log.read_text() and "missing.json: file: no such file" in log.read_text()
    code, _, err = run(capsys, "check", str(GETTING_STARTED), "--log-file", str(tmp_path / "no" / "dir.log"))
    assert code == 2 and err.startswith("stormbound: --log-file ") and "cannot write" in err


def test_logging_is_undone_after_each_command(capsys) -> None:
    before = list(logging.getLogger("stormbound").handlers)
    run(capsys, "-vv", "check", str(GETTING_STARTED))
    assert logging.getLogger("stormbound").handlers == before


def test_spark_host_stderr_goes_to_the_debug_log(caplog) -> None:
    from app.spark.client import SparkHost

    class FakeProcess:
        stderr = iter(["25/11/23 WARN NativeCodeLoader: no native hadoop\n", "Spark ready\n"])

    host = SparkHost(master="local[1]")
    host.process = FakeProcess()  # type: ignore[assignment]  # only its stderr is read
    with caplog.at_level(logging.DEBUG, logger="stormbound.spark.host"):
        host._drain_stderr()
    assert [r.getMessage() for r in caplog.records if r.name == "stormbound.spark.host"] == [
        "25/11/23 WARN NativeCodeLoader: no native hadoop", "Spark ready"]
    assert all(r.levelno == logging.DEBUG for r in caplog.records)


# ---- help pages ------------------------------------------------------------------------------------------


def _every_command(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found.append((*prefix, name))
                found += _every_command(child, (*prefix, name))
    return found


def test_every_help_page_has_an_example(capsys) -> None:
    commands = _every_command(build_parser())
    assert {("check",), ("verify",), ("import", "flux"), ("export", "flux"), ("schema",)} <= set(commands)
    for command in [(), *commands]:
        code, out, _ = run(capsys, *command, "--help")
        assert code == 0, command
        assert "example:\n  stormbound " in out, f"stormbound {' '.join(command)} --help has no example"


def test_help_pages_give_units(capsys) -> None:
    units = {("verify",): ["--timeout", "seconds"], ("run",): ["--duration", "seconds"],
             ("analyze",): ["--bin", "seconds", "tuples/s"], ("reliability",): ["--timeout", "seconds"],
             ("import", "storm-ui"): ["--timeout", "seconds"], ("diff",): ["megabytes"]}
    for command, words in units.items():
        out = " ".join(run(capsys, *command, "--help")[1].split())
        for word in words:
            assert word in out, (command, word)
    out = run(capsys, "--help")[1]
    assert "--log-file" in out and "-v" in out and "exit codes" in out


# ---- the max idle warning ----------------------------------------------------------------------------


def test_check_warns_when_max_idle_time_is_large_against_alpha(tmp_path: Path, capsys) -> None:
    code, out, err = run(capsys, "check", str(CFG6))
    assert code == 0 and err.count("\n") == 1
    assert err.startswith(f"{CFG6}: warning: settings.max_idle_time: max_idle_time = 1 s is more than α/10 of ")
    assert "at most 0.005 s" in err and "articleExtraction (α = 0.05 s)" in err
    code, data, err = run_json(capsys, "check", str(CFG6))
    warning = data["warnings"][0]
    assert warning["field"] == "settings.max_idle_time" and warning["threshold_s"] == pytest.approx(0.005)
    assert warning["bolts"][:2] == ["articleExtraction", "mediaExtraction"] and "WpDeserializer" in warning["bolts"]
    # getting-started: 0.01 s against α = 1 s is well below α/10: no warning
    code, data, err = run_json(capsys, "check", str(GETTING_STARTED))
    assert data["warnings"] == [] and err == ""
    # the default 0.01 s against a 50-ms bolt: over α/10 = 0.005 s
    doc = json.loads(GETTING_STARTED.read_text())
    doc["bolts"][1]["alpha"] = 0.05
    fast = tmp_path / "fast.storm.json"
    fast.write_text(json.dumps(doc))
    code, _, err = run(capsys, "check", str(fast))
    assert code == 0 and "count (α = 0.05 s)" in err and "at most 0.005 s" in err and "split" not in err
    doc["settings"]["max_idle_time"] = 0.005  # at the threshold: fine
    fast.write_text(json.dumps(doc))
    assert run(capsys, "check", str(fast))[2] == ""


def test_status_line_redraws_while_waiting_and_clears_itself(monkeypatch) -> None:
    import io
    import time

    from app.cli.console import StatusLine

    screen = io.StringIO()
    monkeypatch.setattr(sys, "stderr", screen)
    status = StatusLine(True, interval=0.02).start()
    status.update("k = 12: solving")
    time.sleep(0.2)  # a solver call that takes long: the line keeps redrawing on its own
    status.stop()
    text = screen.getvalue()
    assert text.count("\r  k = 12: solving  [") >= 3
    assert text.endswith("\r" + " " * len("  k = 12: solving  [0 s]") + "\r")
    StatusLine(False).start().update("nothing")  # off a terminal: no thread, no output
    assert screen.getvalue() == text

"""The app on a real X server, driven by real mouse and keyboard events (xdotool).

The rest of the suite renders offscreen, which hides what only a real display shows (the
first fit running before the window has its size, clipped inspector fields). Here a private
Xvfb is started (or the display named by STORMBOUND_TEST_DISPLAY is used) and
tests/gui/real_display_driver.py runs the app in a subprocess with QT_QPA_PLATFORM=xcb:
it opens a model, verifies with F5, steps the trace, drags a bolt from the palette and
connects a port, reporting each step; the tests below judge one step each. Without Xvfb,
xdotool and the X libraries Qt's xcb plugin loads (the packages `.ci/run` installs, listed
in docs/install.md) they skip with the reason.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
DRIVER = HERE / "real_display_driver.py"
SCREEN = "1600x1000x24"
START_TIMEOUT_S = 60
DRIVER_TIMEOUT_S = 600  # every wait inside the driver has its own, shorter bound
pytestmark = pytest.mark.timeout(DRIVER_TIMEOUT_S + 120)  # whichever test runs the driver first


def _start_xvfb() -> tuple[subprocess.Popen[bytes], str]:
    """A private Xvfb on a free display number (Xvfb picks it and writes it to a pipe)."""
    read_end, write_end = os.pipe()
    proc = subprocess.Popen(["Xvfb", "-displayfd", str(write_end), "-screen", "0", SCREEN, "-nolisten", "tcp"],
                            pass_fds=(write_end,), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    os.close(write_end)
    written = b""
    deadline = time.monotonic() + START_TIMEOUT_S
    try:  # read up to the newline: closing the pipe before Xvfb wrote it all would end Xvfb
        while not written.endswith(b"\n") and time.monotonic() < deadline:
            ready, _, _ = select.select([read_end], [], [], max(0.0, deadline - time.monotonic()))
            chunk = os.read(read_end, 64) if ready else b""
            if not chunk:
                break
            written += chunk
    finally:
        os.close(read_end)
    number = written.decode().strip() if written.endswith(b"\n") else ""
    if not number:
        proc.kill()
        _, err = proc.communicate(timeout=10)
        pytest.skip(f"Xvfb did not start within {START_TIMEOUT_S} s: {err.decode(errors='replace').strip()[:200]}")
    return proc, f":{number}"


@pytest.fixture(scope="module")
def display() -> Iterator[str]:
    """An X display for the app: a private Xvfb, or STORMBOUND_TEST_DISPLAY; skips with the reason otherwise."""
    named = os.environ.get("STORMBOUND_TEST_DISPLAY")
    if named:
        yield named
        return
    if shutil.which("Xvfb") is None:
        pytest.skip("no real X display: Xvfb is not on PATH (apt-get install the packages .ci/run lists), "
                    "and STORMBOUND_TEST_DISPLAY is not set")
    proc, name = _start_xvfb()
    try:
        yield name
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def _environment(display: str, home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"QT_QPA_PLATFORM": "xcb", "DISPLAY": display, "HOME": str(home),
                "XDG_CONFIG_HOME": str(home / ".config"), "XDG_RUNTIME_DIR": str(home / "run"),
                "STORMBOUND_NO_DIALOGS": "1", "STORMBOUND_AUTOSAVE_DIR": str(home / "autosave")})
    (home / "run").mkdir(mode=0o700, parents=True, exist_ok=True)
    return env


@pytest.fixture(scope="module")
def run(display: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One run of the driver on simple-DIA-cfg-1: each step's findings by name."""
    home = tmp_path_factory.mktemp("real-display-home")
    env = _environment(display, home)
    probe = subprocess.run([sys.executable, "-c", "from PySide6.QtGui import QGuiApplication; QGuiApplication([])"],
                           env=env, capture_output=True, text=True, timeout=START_TIMEOUT_S)
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["no message"])[-1]
        pytest.skip(f"Qt cannot open {display} with the xcb platform (the X libraries of docs/install.md, "
                    f"as .ci/run installs them, missing?): {last}")
    out = home / "steps.json"
    root = HERE.parent.parent
    model = root / "models" / "simple-DIA-cfg-1.storm.json"
    try:
        done = subprocess.run([sys.executable, str(DRIVER), str(model), str(out), str(home / "window.png")],
                              env=env, cwd=root, capture_output=True, text=True, timeout=DRIVER_TIMEOUT_S)
    except subprocess.TimeoutExpired as err:
        seen = out.read_text() if out.exists() else "no step finished"
        pytest.fail(f"the driver ran over {DRIVER_TIMEOUT_S} s; steps so far: {seen}; stderr: {err.stderr!r}")
    if not out.exists():
        pytest.fail(f"the driver exited {done.returncode} without a report: {done.stderr.strip()[-2000:]}")
    steps: dict[str, Any] = json.loads(out.read_text())
    if done.returncode != 0:
        pytest.fail(f"the driver exited {done.returncode}: {done.stderr.strip()[-2000:]}; steps: {steps}")
    steps["_stderr"] = done.stderr
    return steps


def _step(run: dict[str, Any], name: str) -> dict[str, Any]:
    found = run.get(name)
    assert found is not None, f"the driver did not reach step '{name}' (steps: {sorted(run)})"
    if found.get("skip"):
        pytest.skip(found["skip"])
    assert found["ok"], f"step '{name}' failed: {found['detail']}"
    return found


def test_open_fits_the_nodes_into_the_shown_window(run: dict[str, Any]) -> None:
    found = _step(run, "open")
    fraction = found["fraction"]
    assert max(fraction["width"], fraction["height"]) >= 0.4 and not fraction["clipped"], fraction
    x, y, width, height = found["window"]
    sx, sy, swidth, sheight = found["screen"]
    assert sx <= x and sy <= y and x + width <= sx + swidth and y + height <= sy + sheight, \
        f"window {found['window']} is not inside the screen {found['screen']}"


def test_inspector_fields_are_not_clipped(run: dict[str, Any]) -> None:
    _step(run, "inspector")


def test_f5_verifies_until_a_verdict(run: dict[str, Any]) -> None:
    found = _step(run, "verify")
    assert "counterexample" in found["verdicts"], found


def test_trace_steps_with_the_next_button(run: dict[str, Any]) -> None:
    found = _step(run, "trace")
    assert found["position"].startswith("position 2 of"), found


def test_bolt_dragged_from_the_palette_lands_where_dropped(run: dict[str, Any]) -> None:
    found = _step(run, "drag")
    assert found["distance_px"] <= 60


def test_output_port_dragged_onto_a_bolt_connects_them(run: dict[str, Any]) -> None:
    found = _step(run, "connect")
    assert found["link"].startswith("S"), found


def _xdotool(env: dict[str, str], *args: str, timeout: float = 30) -> str:
    done = subprocess.run(["xdotool", *args], env=env, capture_output=True, text=True, timeout=timeout)
    return done.stdout.strip() if done.returncode == 0 else ""


def _window_names(env: dict[str, str]) -> list[str]:
    ids = _xdotool(env, "search", "--onlyvisible", "--name", ".").split()
    return [_xdotool(env, "getwindowname", wid) for wid in ids]


def _wait_for_window(env: dict[str, str], pattern: str, timeout_s: float = START_TIMEOUT_S) -> str:
    """The id of a visible window whose title matches `pattern` (a regular expression), or pytest.fail."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = _xdotool(env, "search", "--onlyvisible", "--name", pattern).split()
        if found:
            return found[0]
        time.sleep(0.2)
    pytest.fail(f"no window titled /{pattern}/ after {timeout_s:.0f} s; windows: {_window_names(env)}")


def test_restore_after_a_crash_with_a_file_on_the_command_line_keeps_the_work(display: str,
                                                                              tmp_path: Path) -> None:
    """`stormbound gui a.storm.json` after a crash, the real dialog answered with the keyboard: the
    restored work is the open document (modified), the file opens in a second window, nothing asks
    about unsaved changes, and after a second crash (kill -9) the restored work is still on disk."""
    if shutil.which("xdotool") is None:
        pytest.skip("xdotool is not on PATH")
    root = HERE.parent.parent
    home = tmp_path / "home"
    env = _environment(display, home)
    del env["STORMBOUND_NO_DIALOGS"]  # the real question box, answered with a real key press
    folder = Path(env["STORMBOUND_AUTOSAVE_DIR"])
    folder.mkdir(parents=True)
    original = tmp_path / "a.storm.json"
    original.write_bytes((root / "models" / "simple-DIA-cfg-1.storm.json").read_bytes())
    os.utime(original, (1_000_000, 1_000_000))
    before = original.read_bytes()
    work = json.loads(before)
    work["name"] = "restored-work"
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait(timeout=60)
    (folder / "crashed.lock").write_text(json.dumps({"pid": gone.pid}))
    (folder / "crashed.autosave.json").write_text(json.dumps(
        {"format": "stormbound-autosave/1", "original": str(original), "saved_at": time.time(), "topology": work}))
    app = subprocess.Popen([sys.executable, "-m", "app", "gui", str(original)], env=env, cwd=root,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        question = _wait_for_window(env, "^Restore unsaved work")
        _xdotool(env, "windowfocus", "--sync", question)
        _xdotool(env, "key", "--clearmodifiers", "Return")  # Yes is the default button
        _wait_for_window(env, r"^restored-work \(a\.storm\.json\)\*")  # restored, marked modified
        _wait_for_window(env, rf"^{json.loads(before)['name']} \(a\.storm\.json\) — Stormbound$")  # the file, beside it
        time.sleep(2)
        names = _window_names(env)
        assert not any(name.startswith("Unsaved changes") for name in names), names
        assert app.poll() is None, app.stderr.read().decode(errors="replace") if app.stderr else ""
    finally:
        app.kill()  # a second crash
        app.wait(timeout=30)
    kept = [json.loads(p.read_text()) for p in folder.glob("*.autosave.json")]
    assert any(doc["topology"]["name"] == "restored-work" for doc in kept), kept
    assert original.read_bytes() == before

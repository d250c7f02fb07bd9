"""Autosave snapshots and crash recovery through lock files (one pair per open window).

Each session writes `<session>.lock` (its pid) when it starts and
`<session>.autosave.json` a few seconds after each edit; a clean exit removes
both. At start, a lock whose process is gone next to an autosave that is newer
than the file it came from means unsaved work of a crashed session: offer it.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QStandardPaths

from app.core.fileio import read_text
from app.core.formats.limits import MAX_DOCUMENT_BYTES
from app.core.topology import Topology

AUTOSAVE_FORMAT = "stormbound-autosave/1"


def default_autosave_dir() -> Path:
    """`<AppDataLocation>/autosave`, or $STORMBOUND_AUTOSAVE_DIR when set (tests, portable installs)."""
    override = os.environ.get("STORMBOUND_AUTOSAVE_DIR")
    if override:
        return Path(override)
    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
    return Path(base or Path.home() / ".stormbound") / "autosave"


def write_bytes(path: Path, data: bytes) -> None:
    """Write through the one writer (app/core/fileio.write_output): a temporary file renamed over the
    target, its mode kept; a folder, pipe or device refused. Replacing is what the caller asked for
    (a dialog, an autosave); every failure is an OSError with one line."""
    from app.core.fileio import OutputRefused, write_output

    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        write_output(path, data, force=True)
    except OutputRefused as err:
        raise OSError(str(err)) from None


def process_alive(pid: int) -> bool:
    """Whether a process with this id is running (a permission error still means alive)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class Recoverable:
    """Unsaved work left by a session that did not exit cleanly."""

    session: str
    autosave: Path
    lock: Path | None
    original: Path | None
    saved_at: float
    topology_data: dict[str, Any]

    def describe(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.saved_at))
        name = self.topology_data.get("name") or "untitled"
        where = str(self.original) if self.original else "a new, never saved document"
        return f"Unsaved changes to '{name}' ({where}), autosaved {when}."

    def discard(self) -> None:
        for path in (self.autosave, self.lock):
            if path is not None:
                path.unlink(missing_ok=True)


class AutosaveSession:
    """The lock and autosave files of one window."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.session = uuid.uuid4().hex
        self.lock_path = self.folder / f"{self.session}.lock"
        self.autosave_path = self.folder / f"{self.session}.autosave.json"
        self.active = False

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        write_bytes(self.lock_path, json.dumps({"pid": os.getpid(), "started": time.time()}).encode())
        self.active = True

    def save_snapshot(self, topology: Topology, original: Path | None) -> None:
        if not self.active:
            return
        doc = {
            "format": AUTOSAVE_FORMAT,
            "original": str(original) if original else None,
            "saved_at": time.time(),
            "topology": topology.model_dump(mode="json"),
        }
        # unindented: the C encoder, half the time of an indented dump on the GUI thread (3,000 components: 0.19 s
        # before); the file is for recovery, not for reading
        write_bytes(self.autosave_path, json.dumps(doc).encode())

    def clear_snapshot(self) -> None:
        self.autosave_path.unlink(missing_ok=True)

    def stop(self) -> None:
        """A clean exit: nothing to recover."""
        self.clear_snapshot()
        self.lock_path.unlink(missing_ok=True)
        self.active = False


def find_recoverable(folder: Path, live_sessions: AbstractSet[str] = frozenset()) -> list[Recoverable]:
    """Autosaves of dead sessions that are newer than their original file, newest first."""
    found: list[Recoverable] = []
    if not folder.is_dir():
        return found
    for autosave in folder.glob("*.autosave.json"):
        session = autosave.name.removesuffix(".autosave.json")
        if session in live_sessions:
            continue
        lock = folder / f"{session}.lock"
        if lock.exists():
            try:
                pid = int(json.loads(read_text(lock, OSError, 4096)).get("pid", 0))
            except (OSError, ValueError, AttributeError):
                pid = 0
            if process_alive(pid) and pid != os.getpid():
                continue  # another running Stormbound owns it
        try:
            data = json.loads(read_text(autosave, OSError, MAX_DOCUMENT_BYTES))
        except (OSError, ValueError):
            continue
        if (not isinstance(data, dict) or data.get("format") != AUTOSAVE_FORMAT
                or not isinstance(data.get("topology"), dict)):
            continue
        original = Path(data["original"]) if data.get("original") else None
        saved_at = float(data.get("saved_at") or autosave.stat().st_mtime)
        if original is not None and original.exists() and original.stat().st_mtime >= saved_at:
            continue  # the file was saved after the snapshot: nothing newer to offer
        found.append(Recoverable(session, autosave, lock if lock.exists() else None, original, saved_at,
                                 data["topology"]))
    found.sort(key=lambda r: r.saved_at, reverse=True)
    return found

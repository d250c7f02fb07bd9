"""Talking to the Spark host process from the app or the CLI (no Spark, no Qt here).

`SparkHost.start()` spawns `python -m app.spark.host` with the Python found by
:func:`app.spark.session.spark_python`, waits for its `ready` line and turns a missing
pyspark or Java into :class:`SparkUnavailable` with one clear line. `request()` sends
one operation and blocks until its result, calling `on_progress` on the way; several
requests may be in flight from different threads; `cancel(id)` stops a run.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from app.core.errors import StormboundError
from app.spark.session import DEFAULT_MASTER, SPARK_MASTER_ENV, SparkUnavailable, has_pyspark, no_pyspark, spark_python

SOURCE_ROOT = str(Path(__file__).resolve().parent.parent.parent)
host_log = logging.getLogger("stormbound.spark.host")  # the host's stderr, line by line (`-vv`, --log-file)


class HostError(StormboundError, RuntimeError):
    """An operation failed in the host; `kind` is 'input', 'cancelled' or 'internal'."""

    def __init__(self, message: str, kind: str = "internal"):
        super().__init__(message)
        self.kind = kind


class SparkHost:
    """A running Spark host process and the requests in flight to it."""

    def __init__(self, python: str | None = None, master: str | None = None, env: Mapping[str, str] | None = None):
        self.env = dict(os.environ if env is None else env)
        self.python_setting = python
        self.master = master or self.env.get(SPARK_MASTER_ENV) or DEFAULT_MASTER
        self.process: subprocess.Popen[str] | None = None
        self.info: dict[str, Any] = {}
        self._ids = itertools.count(1)
        self._waiting: dict[int, queue.Queue[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self._reader: threading.Thread | None = None
        self._stderr_tail: list[str] = []

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self, timeout: float = 240.0) -> dict[str, Any]:
        """Spawn the host and wait until Spark is up; raises SparkUnavailable with the reason."""
        python = spark_python(self.python_setting, self.env)
        if not has_pyspark(python):
            raise no_pyspark(python)
        env = dict(self.env)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (SOURCE_ROOT, env.get("PYTHONPATH", "")) if p)
        env.setdefault("PYSPARK_PYTHON", python)
        try:
            self.process = subprocess.Popen(
                [python, "-m", "app.spark.host", "--master", self.master], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, bufsize=1)
        except OSError as err:
            raise SparkUnavailable(f"cannot start {python}: {err.strerror or err}") from None
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        first: queue.Queue[str] = queue.Queue()
        stdout = self.process.stdout
        assert stdout is not None  # stdout=PIPE
        threading.Thread(target=lambda: first.put(stdout.readline()), daemon=True).start()
        try:
            line = first.get(timeout=timeout)
        except queue.Empty:
            self.close()
            raise SparkUnavailable(f"Spark did not start within {timeout:.0f} s (master {self.master})") from None
        try:
            hello = json.loads(line) if line.strip() else {}
        except json.JSONDecodeError:
            hello = {}
        if hello.get("type") != "ready":
            self.close()
            message = hello.get("message") or ("the Spark host exited: " + " | ".join(self._stderr_tail[-3:]))
            raise SparkUnavailable(message)
        self.info = hello
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        return hello

    def _drain_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        for line in self.process.stderr:
            host_log.debug("%s", line.rstrip())
            if sys.flags.dev_mode or os.environ.get("STORMBOUND_DEBUG"):
                sys.stderr.write(line)
            self._stderr_tail = (self._stderr_tail + [line.strip()])[-20:]

    def _read(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        for line in self.process.stdout:
            try:
                message = json.loads(line)
            except json.JSONDecodeError:
                continue
            box = self._waiting.get(message.get("id"))
            if box is not None:
                box.put(message)
        for box in list(self._waiting.values()):  # the host died: wake every waiter
            box.put({"type": "error", "kind": "internal", "message": "the Spark host process exited"})

    def submit(self, op: str, **params: Any) -> int:
        """Send a request; returns its id (pass it to `wait` or `cancel`)."""
        if not self.running:
            raise HostError("Spark is not attached")
        ident = next(self._ids)
        self._waiting[ident] = queue.Queue()
        with self._lock:
            assert self.process is not None and self.process.stdin is not None
            self.process.stdin.write(json.dumps({"id": ident, "op": op, **params}) + "\n")
            self.process.stdin.flush()
        return ident

    def wait(self, ident: int, on_progress: Callable[[float, str], None] | None = None) -> dict[str, Any]:
        """Block until request `ident` finishes; its result, or HostError."""
        box = self._waiting[ident]
        try:
            while True:
                message = box.get()
                if message.get("type") == "progress":
                    if on_progress is not None:
                        on_progress(float(message.get("fraction", 0.0)), str(message.get("message", "")))
                    continue
                if message.get("type") == "result":
                    result: dict[str, Any] = message["result"]
                    return result
                raise HostError(str(message.get("message", "failed")), str(message.get("kind", "internal")))
        finally:
            self._waiting.pop(ident, None)

    def request(self, op: str, on_progress: Callable[[float, str], None] | None = None,
                **params: Any) -> dict[str, Any]:
        return self.wait(self.submit(op, **params), on_progress)

    def cancel(self, ident: int) -> None:
        if self.running:
            with self._lock:
                assert self.process is not None and self.process.stdin is not None
                self.process.stdin.write(json.dumps({"id": 0, "op": "cancel", "target": ident}) + "\n")
                self.process.stdin.flush()

    def close(self) -> None:
        """Stop the host (politely, then by force)."""
        proc, self.process = self.process, None
        if proc is None:
            return
        try:
            if proc.poll() is None and proc.stdin is not None:
                proc.stdin.write(json.dumps({"op": "shutdown"}) + "\n")
                proc.stdin.flush()
                proc.stdin.close()
            proc.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired, ValueError):
            proc.kill()
            proc.wait(timeout=10)

    def __enter__(self) -> SparkHost:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

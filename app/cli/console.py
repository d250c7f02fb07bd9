"""Logging and progress of the command line: -v, -q and --log-file route the `stormbound` loggers;
a live status line on a terminal."""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Callable

from app.cli.common import UsageError

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

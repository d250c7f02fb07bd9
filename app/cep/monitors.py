"""Monitor patterns shipped for Storm runs: repeated bolt failures, unacked takes, long queues.

The patterns live in `resources/patterns/storm-monitors.cep` (compact CEP form) so
users can read and copy them; their thresholds are `define` constants that callers
may override. The Runs panel and `stormbound cep` use the same functions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from app.cep.engine import Match, find_matches
from app.cep.events import events_from_log
from app.cep.nodes import Pattern
from app.cep.syntax import load_patterns
from app.datafiles import resources_dir

MONITORS_FILE = "storm-monitors.cep"


def monitors_path() -> Path:
    """Where the shipped monitor patterns are (checkout or PyInstaller bundle)."""
    return resources_dir() / "patterns" / MONITORS_FILE


def load_monitors(overrides: Mapping[str, Any] | None = None, path: str | Path | None = None) -> list[Pattern]:
    """The shipped monitor patterns; `overrides` replace `define` constants (e.g. {"ack_timeout": 10})."""
    return load_patterns(path or monitors_path(), overrides)


def run_monitors(log: Any, overrides: Mapping[str, Any] | None = None,
                 patterns: Sequence[Pattern] | None = None) -> list[Match]:
    """Matches of the monitors over a run: an EventLog, or events as dicts with `type`/`ev` and `t`."""
    events: Iterable[dict[str, Any]] = events_from_log(log)
    return find_matches(list(patterns) if patterns is not None else load_monitors(overrides), events)


def summarize(matches: Iterable[Match], patterns: Sequence[Pattern]) -> dict[str, int]:
    """How many matches each monitor reported (every monitor listed, zero included)."""
    counts = {p.id: 0 for p in patterns}
    for m in matches:
        counts[m.pattern] = counts.get(m.pattern, 0) + 1
    return counts

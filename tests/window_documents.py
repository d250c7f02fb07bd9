"""The windowed-bolt document the window tests share: S -> W (a count or duration window) -> P (ordinary);
tests/unit/test_windowed_bolts.py (count windows) and tests/unit/test_duration_windows.py (duration windows)."""

from __future__ import annotations

from typing import Any


def windowed(rate: float, alpha: float, length: float, slide: float | None, parallelism: int = 1, *,
             kind: str = "count", tolerance: float = 0, burst: int = 1, timeout: int | None = None,
             p_alpha: float = 0.001) -> dict[str, Any]:
    """S -> W (a `kind` window of `length`, sliding by `slide`, tumbling when None) -> P (α `p_alpha`)."""
    window: dict[str, Any] = {"kind": kind, "length": length}
    if slide is not None:
        window["slide"] = slide
    doc: dict[str, Any] = {
        "schema_version": 4, "name": "win" if kind == "count" else "timed",
        "spouts": [{"name": "S", "rate": rate, "burst": burst}],
        "bolts": [{"name": "W", "alpha": alpha, "sigma": 0.1, "parallelism": parallelism, "window": window},
                  {"name": "P", "alpha": p_alpha, "sigma": 0, "parallelism": 1}],
        "subscriptions": [{"source": "S", "target": "W"}, {"source": "W", "target": "P"}],
        "settings": {"tolerance": tolerance, "max_idle_time": 0}, "verification": {"checked": ["W"]}}
    if timeout is not None:
        doc["storm"] = {"message_timeout_secs": timeout}
    return doc

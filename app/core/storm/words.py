"""Numbers and lists in the words every capacity line uses (3 significant digits, durations in s/min/h)."""

from __future__ import annotations

from fractions import Fraction


def decimal(x: Fraction | float, digits: int = 3) -> str:
    """A figure for text: `digits` significant digits, no float noise, no exponent for everyday sizes."""
    v = float(x)
    if v == 0:
        return "0"
    if 1e-4 <= abs(v) < 1e9:
        text = f"{v:.{digits}g}"
        if "e" in text:
            text = f"{v:.0f}"
        return text
    return f"{v:.{digits}g}"


def duration(seconds: Fraction | float) -> str:
    """A duration for text: milliseconds below a second, seconds up to two minutes, then minutes or hours."""
    v = float(seconds)
    if v < 1:
        return f"{decimal(v * 1000)} ms"
    if v < 120:
        return f"{decimal(v)} s"
    if v < 7200:
        return f"{decimal(v / 60)} min"
    return f"{decimal(v / 3600)} h"


def factor_text(x: Fraction) -> str:
    return f"×{decimal(x)}"


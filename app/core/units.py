"""Times and rates with units, as people type them: `2ms`, `0.5 s`, `1500/s`, `90/min`.

One parser for every time and rate field of the command line and the app (docs/formats.md,
"Units"). The document still stores seconds and tuples per second; a bare number is in
those units. Shown back, a time below a second is in milliseconds (the Storm UI's unit).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

# seconds per unit, exact: "7ms" is the double nearest 7/1000, as "0.007" is; no bare "m": "20m" is a typo of
# "20ms" more often than 20 minutes
TIME_UNITS = {"ns": Fraction(1, 10**9), "us": Fraction(1, 10**6), "µs": Fraction(1, 10**6),
              "μs": Fraction(1, 10**6), "ms": Fraction(1, 1000), "s": Fraction(1), "sec": Fraction(1),
              "secs": Fraction(1), "min": Fraction(60), "h": Fraction(3600)}
_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_TIME = re.compile(rf"^\s*({_NUMBER})\s*([a-zµμ]*)\s*$", re.IGNORECASE)
_RATE = re.compile(rf"^\s*({_NUMBER})\s*(?:(?:tuples?)?\s*/\s*([a-zµμ]+))?\s*$", re.IGNORECASE)


class UnitError(ValueError):
    """A time or rate that cannot be read; the message says what is accepted."""


def _number(text: str, what: str) -> Fraction:
    if not math.isfinite(float(text)):
        raise UnitError(f"'{text}' is not a finite {what}")
    return Fraction(text)


def parse_duration(text: str) -> float:
    """Seconds from `2ms`, `0.5s`, `1.5 min`, `250us`, or a bare number of seconds."""
    m = _TIME.match(text)
    if not m:
        raise UnitError(f"'{text.strip()}' is not a time: write seconds (0.02) or a unit (20ms, 0.5s, 2min)")
    unit = m.group(2).lower()
    if unit and unit not in TIME_UNITS:
        raise UnitError(f"'{text.strip()}': unknown time unit '{m.group(2)}' (use ns, us, ms, s, min or h)")
    return float(_number(m.group(1), "time") * TIME_UNITS.get(unit, Fraction(1)))


def parse_rate(text: str) -> float:
    """Tuples per second from `1500/s`, `90/min`, `2/ms`, or a bare number of tuples per second."""
    m = _RATE.match(text)
    if not m:
        raise UnitError(f"'{text.strip()}' is not a rate: write tuples per second (1500) or with a unit "
                        "(1500/s, 90/min)")
    unit = (m.group(2) or "s").lower()
    if unit not in TIME_UNITS:
        raise UnitError(f"'{text.strip()}': unknown time unit '{m.group(2)}' (use /ms, /s, /min or /h)")
    return float(_number(m.group(1), "rate") / TIME_UNITS[unit])


def _digits(value: float, significant: int = 6) -> str:
    text = f"{value:.{significant}g}"
    if "e" in text:  # everyday sizes without an exponent
        text = f"{value:.{significant}f}".rstrip("0").rstrip(".")
    return text


def format_duration(seconds: float) -> str:
    """A time as text a parser reads back: milliseconds below a second (`20 ms`), else seconds (`1.5 s`)."""
    if seconds != 0 and abs(seconds) < 1:
        return f"{_digits(seconds * 1000)} ms"
    return f"{_digits(seconds)} s"

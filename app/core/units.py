"""Times and rates with units, as people type them: `2ms`, `0.5 s`, `1500/s`, `90/min`.

One parser for every time and rate field of the command line and the app (docs/formats.md,
"Units"). The document still stores seconds and tuples per second; a bare number is in
those units. Shown back, a time below a second is in milliseconds (the Storm UI's unit).
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from app.core.errors import BadInput

# seconds per unit, exact: "7ms" is the double nearest 7/1000, as "0.007" is; no bare "m": "20m" is a typo of
# "20ms" more often than 20 minutes
TIME_UNITS = {"ns": Fraction(1, 10**9), "us": Fraction(1, 10**6), "µs": Fraction(1, 10**6),
              "μs": Fraction(1, 10**6), "ms": Fraction(1, 1000), "s": Fraction(1), "sec": Fraction(1),
              "secs": Fraction(1), "min": Fraction(60), "h": Fraction(3600)}
_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_TIME = re.compile(rf"^\s*({_NUMBER})\s*([a-zµμ]*)\s*$", re.IGNORECASE)
_RATE = re.compile(rf"^\s*({_NUMBER})\s*(?:(?:tuples?)?\s*/\s*([a-zµμ]+))?\s*$", re.IGNORECASE)


class UnitError(BadInput, ValueError):
    """A time or rate that cannot be read; the message says what is accepted."""


#: the magnitudes a time (s), a rate (tuples/s) or a ratio (σ) may take besides 0: one nanosecond up to
#: about 31,700 years; anything outside is a typo, and the exact arithmetic of the rate check and the
#: encoding would overflow or take hours on it (docs/limits.md, "Magnitudes")
MIN_MAGNITUDE = 1e-9
MAX_MAGNITUDE = 1e12
#: the decimal exponent a typed number may have (`1e-99999999` would be built digit by digit)
MAX_EXPONENT = 64
#: how much of a value a message echoes
ECHO = 60


def shown(text: str) -> str:
    """`text` as a message echoes it: stripped, cut to 60 characters, control characters escaped."""
    text = text.strip()
    cut = len(text) > ECHO
    # on one printable line: control characters, line breaks and bidirectional marks escaped as repr does
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text[:ECHO])
    return text + ("…" if cut else "")


def magnitude_problem(value: float, unit: str) -> str | None:
    """Why `value` (in `unit`: 's', '/s' or '' for a ratio) is no time, rate or ratio the model takes,
    or None: not finite, or not 0 and outside 1e-9..1e12. The one guard of the document and the parsers."""
    if not math.isfinite(value):
        return f"{value} is not a finite number"
    if value != 0 and not MIN_MAGNITUDE <= abs(value) <= MAX_MAGNITUDE:
        return (f"{value:g}{' ' + unit if unit else ''} is outside the range the model takes "
                f"({MIN_MAGNITUDE:g} to {MAX_MAGNITUDE:g}{' ' + unit if unit else ''}; docs/limits.md)")
    return None


def _number(text: str, what: str) -> Fraction:
    """The exact value of a decimal `text`, refusing exponents that would build huge integers."""
    try:
        exact = Decimal(text)
    except InvalidOperation:
        raise UnitError(f"'{shown(text)}' is not a number") from None
    if not exact.is_finite():
        raise UnitError(f"'{shown(text)}' is not a finite {what}")
    if exact.is_zero():
        return Fraction(0)
    if abs(exact.adjusted()) > MAX_EXPONENT or len(text) > 100:
        raise UnitError(f"'{shown(text)}' is not a {what} the model takes (at most {MAX_EXPONENT} as the "
                        "decimal exponent, 100 characters)")
    return Fraction(exact)


def parse_duration(text: str) -> float:
    """Seconds from `2ms`, `0.5s`, `1.5 min`, `250us`, or a bare number of seconds."""
    m = _TIME.match(text)
    if not m:
        raise UnitError(f"'{shown(text)}' is not a time: write seconds (0.02) or a unit (20ms, 0.5s, 2min)")
    unit = m.group(2).lower()
    if unit and unit not in TIME_UNITS:
        raise UnitError(f"'{shown(text)}': unknown time unit '{m.group(2)}' (use ns, us, ms, s, min or h)")
    return _checked(float(_number(m.group(1), "time") * TIME_UNITS.get(unit, Fraction(1))), "s", text)


def parse_rate(text: str) -> float:
    """Tuples per second from `1500/s`, `90/min`, `2/ms`, or a bare number of tuples per second."""
    m = _RATE.match(text)
    if not m:
        raise UnitError(f"'{shown(text)}' is not a rate: write tuples per second (1500) or with a unit "
                        "(1500/s, 90/min)")
    unit = (m.group(2) or "s").lower()
    if unit not in TIME_UNITS:
        raise UnitError(f"'{shown(text)}': unknown time unit '{m.group(2)}' (use /ms, /s, /min or /h)")
    return _checked(float(_number(m.group(1), "rate") / TIME_UNITS[unit]), "/s", text)


def _checked(value: float, unit: str, text: str) -> float:
    problem = magnitude_problem(value, unit)
    if problem:
        raise UnitError(f"'{shown(text)}': {problem}")
    return value


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

"""Exact numbers as traces write them: times and carries as decimals or "p/q" strings, never floats."""

from __future__ import annotations

import re
from fractions import Fraction

from app.core.formats.limits import escape
from app.core.numbers import exact_text

#: a trace writes its times as exact decimals ("p/q" when there is none)
format_time = exact_text


def parse_carry(value: int | str) -> Fraction:
    """A trace's `buffer`: an integer or an exact "p/q" (or decimal) string."""
    if isinstance(value, bool):
        raise ValueError("expected an integer or a \"p/q\" string, not a boolean")
    if isinstance(value, int):
        return Fraction(value)
    if not isinstance(value, str) or len(value) > 64:
        raise ValueError("expected an integer or a \"p/q\" string")
    try:
        return exact_fraction(value)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"{escape(repr(value))} is not an exact number (an integer or \"p/q\")") from None


_EXPONENT = re.compile(r"[eE]\s*([+-]?\d+)")
MAX_EXPONENT = 64


_PLAIN = re.compile(r"(\d+)(?:\.(\d+)|/(\d*[1-9]\d*))?")  # "12", "12.5", "5/3": what format_time writes


def exact_fraction(text: str) -> Fraction:
    """`Fraction(text)`, refusing a decimal exponent beyond ±MAX_EXPONENT (`1e9999999` would take
    tens of seconds to build). The plain forms the project writes are read from their integers
    (the same value, without `Fraction`'s general parser: a long trace has one per position)."""
    plain = _PLAIN.fullmatch(text)
    if plain is not None:
        whole, decimals, denominator = plain.groups()
        if decimals is not None:
            return Fraction(int(whole + decimals), 10 ** len(decimals))
        return Fraction(int(whole), int(denominator) if denominator is not None else 1)
    m = _EXPONENT.search(text)
    if m and abs(int(m.group(1)[:8])) > MAX_EXPONENT:
        raise ValueError(f"exponent over {MAX_EXPONENT}")
    return Fraction(text)


def format_carry(value: Fraction) -> int | str:
    """The inverse of :func:`parse_carry`: an integer when it is one, else "p/q"."""
    value = Fraction(value)
    return value.numerator if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def checked_time(value: str) -> str:
    """A trace's time stamp as written, when it is an exact number of at most 64 characters."""
    if len(value) > 64:
        raise ValueError("a time stamp of more than 64 characters")
    try:
        exact_fraction(value)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"{escape(repr(value))} is not an exact time (\"1.25\" or \"5/3\")") from None
    return value

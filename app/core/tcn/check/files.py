"""Checking a certificate file: every entry by the independent checker of its kind.

`stormbound verify --certificate-out FILE` writes `stormbound-certificates/1` (built by
`app/core/tcn/certificates.py`): `{"format", "tool", "certificates": [{"topology": cone document,
"certificate": Farkas multipliers} | {"topology": ..., "growth_certificate": a schedule's exact rates} |
{"topology": ..., "flood_certificate": the drain inequality with the source's evidence}, ...]}`.
`stormbound check-certificate FILE` checks each entry here, with `linear.py`, `rate_growth.py` or `flood.py`;
files of the earlier format `stormbound-lp-certificate/1` (linear-program entries only) are read too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.core.tcn.check.flood import check_flood_certificate
from app.core.tcn.check.linear import check_certificate
from app.core.tcn.check.rate_growth import check_growth_certificate
from app.core.tcn.check.spill import check_spill_certificate
from app.core.tcn.check.storm import check_storm_certificate

CERTIFICATE_FORMAT = "stormbound-certificates/1"
EARLIER_FORMATS = ("stormbound-lp-certificate/1",)

#: an entry's key -> (what the verdict is called, its checker)
KINDS: dict[str, tuple[str, Callable[[Any, Any], list[str]]]] = {
    "certificate": ("linear program", check_certificate),
    "growth_certificate": ("rate proof", check_growth_certificate),
    "flood_certificate": ("flood proof", check_flood_certificate),
    "storm_certificate": ("storm proof", check_storm_certificate),
    "spill_certificate": ("storm proof", check_spill_certificate),
}

__all__ = ["CERTIFICATE_FORMAT", "EARLIER_FORMATS", "KINDS", "check_file"]


def check_file(data: Any) -> list[tuple[str, str, list[str]]]:
    """Every entry of a certificate file: (target, kind "linear program" / "rate proof" / "flood proof",
    problems); raises ValueError for a file of another format."""
    if not isinstance(data, dict) or data.get("format") not in (CERTIFICATE_FORMAT, *EARLIER_FORMATS):
        raise ValueError(f"not a {CERTIFICATE_FORMAT} file")
    entries = data.get("certificates")
    if not isinstance(entries, list) or not entries:
        raise ValueError("certificates: expected a non-empty list")
    out: list[tuple[str, str, list[str]]] = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            out.append((f"certificates[{i}]", "?", ["not an object"]))
            continue
        keys = [k for k in KINDS if k in entry] if data.get("format") == CERTIFICATE_FORMAT else ["certificate"]
        if len(keys) != 1:
            out.append((f"certificates[{i}]", "?", [f"expected exactly one of {', '.join(KINDS)}"]))
            continue
        kind, check = KINDS[keys[0]]
        cert = entry.get(keys[0])
        target = cert.get("target", f"certificates[{i}]") if isinstance(cert, dict) else f"certificates[{i}]"
        out.append((str(target), kind, check(entry.get("topology"), cert)))
    return out

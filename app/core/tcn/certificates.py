"""Certificate files: the proofs that no trace can show, each with the document it is about.

`stormbound verify --certificate-out FILE` writes `stormbound-certificates/1`: `{"format", "tool",
"certificates": [{"topology": cone document, "certificate": Farkas multipliers} | {"topology": ...,
"growth_certificate": a schedule's exact rates}, ...]}`, one entry per bolt the linear program proved free
of repeating growth (docs/verifier.md, "Linear program") or proved to grow by rates (docs/verifier.md,
"Growth proven by rates"). `stormbound check-certificate FILE` checks every entry with the independent
checker of its kind (`linear_check.py`, `rate_growth_check.py`); files of the earlier format
`stormbound-lp-certificate/1` (linear-program entries only) are read too.
"""

from __future__ import annotations

from typing import Any

from app import __version__
from app.core.results import BoltVerdict
from app.core.tcn.linear_check import check_certificate
from app.core.tcn.network import build_network
from app.core.tcn.rate_growth_check import check_growth_certificate
from app.core.topology import Topology

CERTIFICATE_FORMAT = "stormbound-certificates/1"
EARLIER_FORMATS = ("stormbound-lp-certificate/1",)

__all__ = ["CERTIFICATE_FORMAT", "certificate_file", "check_file"]


def certificate_file(topo: Topology, verdicts: dict[str, BoltVerdict]) -> dict[str, Any] | None:
    """The certificate file for the bolts of `verdicts` decided by the linear program or by rates: each
    certificate with the document of the cone it was derived on (its content hash is the certificate's).
    None when no bolt has a certificate."""
    entries = []
    for name, verdict in verdicts.items():
        for key in ("certificate", "growth_certificate"):
            cert = getattr(verdict, key)
            if cert is not None:
                entries.append({"topology": build_network(topo, [name]).document(), key: cert.model_dump()})
    if not entries:
        return None
    return {"format": CERTIFICATE_FORMAT, "tool": f"stormbound {__version__}", "certificates": entries}


def check_file(data: Any) -> list[tuple[str, str, list[str]]]:
    """Every entry of a certificate file: (target, kind "linear program" / "rate proof", problems); raises
    ValueError for a file of another format."""
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
        growth = "growth_certificate" in entry and data.get("format") == CERTIFICATE_FORMAT
        cert = entry.get("growth_certificate" if growth else "certificate")
        target = cert.get("target", f"certificates[{i}]") if isinstance(cert, dict) else f"certificates[{i}]"
        check = check_growth_certificate if growth else check_certificate
        out.append((str(target), "rate proof" if growth else "linear program", check(entry.get("topology"), cert)))
    return out

"""Certificate files: the proofs that no trace can show, each with the document it is about (the builder's
half; the checking half is the checker room's, app/core/tcn/check/files.py).

`stormbound verify --certificate-out FILE` writes `stormbound-certificates/1`, one entry per bolt the linear
program proved free of repeating growth (docs/verifier.md, "Linear program"), proved to grow by rates
(docs/verifier.md, "Growth proven by rates") or proved unbounded by a flood (docs/boundedness.md, "Unbounded: a
backlog that floods", with the source's lasso embedded when that is its evidence), and every bolt the linear
program proved free of repeating growth with worker deaths (docs/model.md 9.4), each with the document of its cone.
"""

from __future__ import annotations

from typing import Any

from app import __version__
from app.core.formats.trace import AnyTrace, trace_data
from app.core.results import BoltVerdict, LinearCertificate
from app.core.tcn.check.files import CERTIFICATE_FORMAT, KINDS
from app.core.tcn.network import build_network
from app.core.topology import Topology

__all__ = ["certificate_file"]


def certificate_file(topo: Topology, verdicts: dict[str, BoltVerdict], traces: list[AnyTrace] | None = None,
                     deaths: dict[str, LinearCertificate] | None = None) -> dict[str, Any] | None:
    """The certificate file for the bolts of `verdicts` decided by a certificate: each certificate with the
    document of the cone it was derived on (its content hash is the certificate's). `deaths`: the linear program's
    certificates with worker deaths (docs/model.md 9.4), one more entry each. None when no bolt has one."""
    entries = [{"topology": build_network(topo, [name]).document(), "certificate": cert.model_dump(mode="json")}
               for name, cert in (deaths or {}).items()]
    for name, verdict in verdicts.items():
        for key in KINDS:
            cert = getattr(verdict, key, None)
            if cert is None:
                continue
            data = cert.model_dump(mode="json")
            if key in ("flood_certificate", "spill_certificate") and cert.evidence.trace_index is not None and traces:
                data["evidence"]["trace"] = trace_data(traces[cert.evidence.trace_index])
            if key in ("flood_certificate", "storm_certificate", "spill_certificate") and cert.run is not None \
                    and cert.run.trace_index is not None and traces:
                data["run"]["trace"] = trace_data(traces[cert.run.trace_index])
            entries.append({"topology": build_network(topo, [name]).document(), key: data})
    if not entries:
        return None
    return {"format": CERTIFICATE_FORMAT, "tool": f"stormbound {__version__}", "certificates": entries}

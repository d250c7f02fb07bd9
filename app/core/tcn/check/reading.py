"""What every certificate checker of this room reads first (`linear.py`, `rate_growth.py`, `flood.py`): the
embedded document as a valid, annotated topology, the certificate as its model, and whether the certificate's
content hash (`content.py`) is the document's; and the two ways they read numbers (a document's decimal, a
certificate's "p/q"). Shared by the checkers only, never by the builders they check."""

from __future__ import annotations

from fractions import Fraction
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from app.core.tcn.check.content import content_hash
from app.core.topology import Bolt, Topology, TopologyError, parse_topology, unannotated_problems

CertificateT = TypeVar("CertificateT", bound=BaseModel)


def take_bound(bolt: Bolt) -> int:
    """C_TAKE as the checkers read it (docs/model.md sections 8 and 10): a bolt's executors, times an asynchronous
    bolt's threads per executor or a count window's sliding interval; restated here, not read from the builders'
    `Bolt.take_max`."""
    window = bolt.window
    per = bolt.threads if bolt.threads is not None else \
        int(window.slide if window.slide is not None else window.length) \
        if window is not None and window.kind == "count" else 1
    return bolt.parallelism * per


def windows_refused(topo: Topology) -> str:
    """Why a checker refuses a document with a windowed bolt (empty: it has none): the checkers of this room have no
    window rule yet (docs/model.md section 10), and never read a windowed bolt as an ordinary one."""
    windowed = [b.name for b in topo.bolts if b.window is not None]
    if not windowed:
        return ""
    return (f"the embedded topology has the windowed bolt{'s' if len(windowed) > 1 else ''} {', '.join(windowed)}, "
            "and this checker has no window rule (docs/model.md section 10)")


def fraction_of(text: str) -> Fraction | None:
    """A certificate's exact figure ("p/q" or a decimal); None when it is not one."""
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError, TypeError):
        return None


def read_certificate(document: Any, certificate: Any, model: type[CertificateT],
                     what: str) -> tuple[Topology, CertificateT, list[str]] | list[str]:
    """(topology, certificate, problems so far: a hash that is not the document's) or, when either cannot be
    read, the reason why the certificate is refused; `what` names the certificate in that reason."""
    try:
        topo = document if isinstance(document, Topology) else parse_topology(document)
    except TopologyError as exc:
        return [f"the embedded topology is not a valid document: {exc}"]
    try:
        cert = certificate if isinstance(certificate, model) else model.model_validate(certificate)
    except ValidationError as exc:
        return [f"not {what}: {exc.errors()[0]['msg']}"]
    missing = unannotated_problems(topo)
    if missing:
        return [f"the embedded topology is not annotated: {missing[0]}"]
    windowed = windows_refused(topo)
    if windowed:
        return [windowed]
    problems: list[str] = []
    if getattr(cert, "content_hash", None) != content_hash(topo):
        problems.append("content_hash is not the embedded topology's (the document changed after the proof)")
    return topo, cert, problems

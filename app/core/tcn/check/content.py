"""The content hash: the one definition of which document a proof, a trace or a verified file is about.

SHA-256, in lowercase hex, of the canonical JSON of `Topology.semantics()` (app/core/topology/document.py): the
semantic fields only (no layout, ids or description), keys sorted, separators "," and ":" with no spaces,
non-ASCII characters written as themselves (not \\u escapes), UTF-8, no NaN or infinity. docs/verifier.md,
"Content hash", says how an outside checker recomputes it. Certificates (`LinearCertificate`,
`RateGrowthCertificate`, `FloodCertificate`) and `stormbound-verified/1` (app/core/formats/verified.py) record
it; the builders call `content_hash` from here, and the checkers compare with it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from app.core.topology import Topology

__all__ = ["canonical_json", "content_hash"]


def canonical_json(data: Any) -> bytes:
    """Sorted keys, no spaces, UTF-8: the same data always gives the same bytes."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def content_hash(topo: Topology) -> str:
    """SHA-256 (hex) of the canonical JSON of the topology's semantics."""
    return hashlib.sha256(canonical_json(topo.semantics())).hexdigest()

"""Our document format, `.storm.json`: the pydantic Topology serialised as JSON."""

from __future__ import annotations

import os
from typing import Any

from app.core.fileio import write_atomic
from app.core.formats.schema import without_schema_key
from app.core.topology import Topology, parse_topology


def from_data(data: Any) -> Topology:
    """Validate a decoded `.storm.json` document (a `"$schema"` key naming its schema is allowed)."""
    return parse_topology(without_schema_key(data))


def dumps(topo: Topology) -> bytes:
    return topo.to_json_bytes()


def save(topo: Topology, path: str | os.PathLike[str]) -> None:
    """Serialise to bytes first, then write atomically."""
    write_atomic(path, dumps(topo))

"""Readers and writers: our `.storm.json` document and D-VerT's JSON (both dialects).

`load_topology` detects the format; every reader raises :class:`FormatError` (or
:class:`~app.core.topology.TopologyError`) with a message naming the problem.
"""

from __future__ import annotations

import os
from typing import Any

from app.core.formats.jsonfile import FormatError, read_json
from app.core.topology import Topology

__all__ = ["FormatError", "detect_format", "load_topology", "load_topology_kind", "read_json", "topology_from_data"]


def detect_format(data: Any) -> str:
    """'stormbound', 'dvert' or 'trace' for a decoded JSON document."""
    if isinstance(data, dict):
        if data.get("format") in ("stormbound-trace/1", "stormbound-trace/2"):
            return "trace"
        topo = data.get("topology")
        if isinstance(topo, dict) and ("bolts" in topo or "spouts" in topo) and "schema_version" not in data:
            return "dvert"
    return "stormbound"


def topology_from_data(data: Any) -> Topology:
    """A Topology from any decoded supported document."""
    from app.core.formats import document, dvert

    kind = detect_format(data)
    if kind == "dvert":
        return dvert.from_dvert(data)
    if kind == "trace":  # the topology a (whole) trace runs on
        from app.core.formats.trace import trace_topology

        return document.from_data(trace_topology(data))
    return document.from_data(data)


def load_topology(path: str | os.PathLike[str]) -> Topology:
    """Read our format or D-VerT JSON (detected from the content)."""
    return load_topology_kind(path)[0]


def load_topology_kind(path: str | os.PathLike[str]) -> tuple[Topology, str]:
    """The topology of a file and what the file is (`detect_format`: a trace file gives the topology it runs on)."""
    data = read_json(path)
    return topology_from_data(data), detect_format(data)

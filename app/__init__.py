"""Stormbound: verify Storm topologies for unbounded queue growth before deployment."""

__version__ = "0.1.0"

"""`stormbound schema`: the JSON Schema of the .storm.json document."""

from __future__ import annotations

import argparse

from app.cli.common import EXIT_OK, print_json


def register(sub: argparse._SubParsersAction) -> None:
    """Add `schema` to the `stormbound` command line."""
    p = sub.add_parser("schema", help="print the JSON Schema of the .storm.json document")
    p.set_defaults(func=cmd_schema, file_args=())


def cmd_schema(args: argparse.Namespace) -> int:
    """Print the schema."""
    from app.core.topology import topology_json_schema

    print_json(topology_json_schema())
    return EXIT_OK

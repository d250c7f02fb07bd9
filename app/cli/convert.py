"""`stormbound convert IN OUT [--to stormbound|dvert]`: between .storm.json and D-VerT JSON."""

from __future__ import annotations

import argparse

from app.cli.common import EXIT_OK, examples, read_topology


def register(sub: argparse._SubParsersAction) -> None:
    """Add `convert` to the `stormbound` command line."""
    p = sub.add_parser("convert", help="convert between .storm.json and D-VerT JSON",
                       description="Convert a topology between our .storm.json document and D-VerT JSON.",
                       epilog=examples("stormbound convert icfem-simple-DIA-cfg-2.json cfg2.storm.json",
                                       "stormbound convert cfg2.storm.json cfg2.dvert.json"))
    p.add_argument("input", help="a .storm.json document or a D-VerT JSON configuration")
    p.add_argument("output", help="OUT.storm.json, or OUT.dvert.json for D-VerT (newer dialect)")
    p.add_argument("--to", choices=["stormbound", "dvert"], help="force the output format")
    p.set_defaults(func=cmd_convert, file_args=("input",))


def cmd_convert(args: argparse.Namespace) -> int:
    """Write INPUT in the format that OUTPUT's name (or --to) asks for."""
    from app.core.fileio import write_atomic
    from app.core.formats import save_topology

    topo = read_topology(args.input)
    out = args.output
    if args.to == "dvert" and not out.endswith(".dvert.json"):
        from app.core.formats.dvert import to_dvert_bytes

        write_atomic(out, to_dvert_bytes(topo))
    elif args.to == "stormbound" and out.endswith(".dvert.json"):
        write_atomic(out, topo.to_json_bytes())
    else:
        save_topology(topo, out)
    print(f"wrote {out}")
    return EXIT_OK

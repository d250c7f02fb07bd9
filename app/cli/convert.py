"""`stormbound convert IN OUT [--to stormbound|dvert]`: between .storm.json and D-VerT JSON."""

from __future__ import annotations

import argparse

from app.cli.common import EXIT_OK, examples
from app.cli.inputs import read_topology
from app.cli.outputs import add_force_option, check_output_file, write_output_file
from app.core.topology import one_line


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `convert` to the `stormbound` command line."""
    p = sub.add_parser("convert", help="convert between .storm.json and D-VerT JSON",
                       description="Convert a topology between our .storm.json document and D-VerT JSON.",
                       epilog=examples("stormbound convert icfem-simple-DIA-cfg-2.json cfg2.storm.json",
                                       "stormbound convert cfg2.storm.json cfg2.dvert.json"))
    p.add_argument("input", help="a .storm.json document or a D-VerT JSON configuration")
    p.add_argument("output", help="OUT.storm.json, or OUT.dvert.json for D-VerT (newer dialect)")
    p.add_argument("--to", choices=["stormbound", "dvert"], help="force the output format")
    add_force_option(p)
    p.set_defaults(func=cmd_convert, file_args=("input",))


def cmd_convert(args: argparse.Namespace) -> int:
    """Write INPUT in the format that OUTPUT's name (or --to) asks for."""
    from app.core.formats.dvert import to_dvert_bytes

    out = args.output
    check_output_file(args, "OUT", out)
    topo = read_topology(args.input)
    dvert = args.to == "dvert" or (args.to is None and out.endswith(".dvert.json"))
    if not dvert:
        from app.cli.outputs import rebased_document

        topo = rebased_document(topo, args.input, out)
    write_output_file(args, "OUT", out, to_dvert_bytes(topo) if dvert else topo.to_json_bytes())
    print(f"wrote {one_line(str(out))}")
    return EXIT_OK

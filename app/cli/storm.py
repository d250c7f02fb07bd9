"""`stormbound import flux | storm-ui`, `export flux`, `repair`: in and out of a Storm project.

* `import flux FILE.yaml [--filter P] [--env] [--resources DIR] [-o OUT.storm.json] [--json]`
* `import storm-ui URL --topology ID|NAME [--window 600|10800|86400|all] [--onto DOC] [-o OUT]`
* `export flux IN.storm.json OUT.yaml [--skeleton]`
* `repair FILE.yaml --parallelism suggested|document|BOLT=N ... [--topology DOC] [--in-place | -o OUT]`

Bad input (a Flux file, a Storm UI that cannot be read, an unknown bolt) is one line on
stderr naming the file (or URL), the line and the field, and exit 2; nothing is written.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from app.cli.common import EXIT_BAD_INPUT, EXIT_OK, UsageError, examples
from app.cli.options import add_storm_version_option, add_target_option, bolt_count, number, with_storm_version
from app.cli.outputs import add_force_option, check_output_file, write_output_file
from app.core.topology import Problem, Topology, TopologyError, one_line

if TYPE_CHECKING:
    from app.core.storm.flux.yaml_text import FluxOptions


def _usage(message: str) -> Exception:
    return UsageError(message)


def _flux_options(args: argparse.Namespace) -> FluxOptions:
    from app.core.storm.flux.yaml_text import FluxOptions

    for folder in args.resources or []:
        if not Path(folder).is_dir():
            raise _usage(f"--resources {folder}: no such folder")
    return FluxOptions(filter=Path(args.filter) if args.filter else None, env=bool(args.env),
                       resources=[Path(r) for r in args.resources or []])


def _report_error(err: Exception) -> int:
    print(str(err), file=sys.stderr)
    return EXIT_BAD_INPUT


def _write(args: argparse.Namespace, option: str, path: str, data: bytes, inputs: list[str] | None = None) -> None:
    """Through the one writer: never an input, the log file, a folder or device; an existing file only with --force."""
    write_output_file(args, option, path, data, inputs)


def _onto_itself(args: argparse.Namespace) -> argparse.Namespace:
    """`import storm-ui --onto DOC -o DOC` annotates DOC in place (the documented overwrite): the
    arguments the writer sees then have no --onto input and --force; any other output as given."""
    import os

    try:
        same = bool(args.onto and args.output and os.path.samefile(args.onto, args.output))
    except OSError:
        same = False
    if not same or args.onto.endswith((".yaml", ".yml")):  # a Flux file is never replaced by a document
        return args
    return argparse.Namespace(**{**vars(args), "onto": None, "force": True})


def _included(topo: Topology) -> list[str]:
    """The Flux files a document was read from (the file and its includes): inputs an output must not replace."""
    storm = topo.storm
    files = [storm.flux_file] if getattr(storm, "flux_file", None) else []
    return [str(f) for f in files + list(getattr(storm, "flux_includes", None) or []) if f]


def _summary(topo: Topology, notes: list[str], stream: TextIO) -> None:
    from app.core.topology import unannotated_problems

    print(f"{one_line(topo.name)}: {len(topo.spouts)} spouts, {len(topo.bolts)} bolts, {len(topo.subscriptions)} "
          f"subscriptions", file=stream)
    missing = unannotated_problems(topo)
    if missing:
        print(f"{len(missing)} values not annotated (verify refuses until they are set: import them from the "
              "Storm UI with --onto, calibrate them from a run, or type them):", file=stream)
        for problem in missing:
            print(f"  {problem}", file=stream)
    for note in notes:
        print(f"note: {note}", file=stream)


# ---- import flux ---------------------------------------------------------------------


def cmd_import_flux(args: argparse.Namespace) -> int:
    from app.core.storm.flux.builder import import_flux
    from app.core.storm.flux.yaml_text import FluxError

    if args.output:
        check_output_file(args, "-o", args.output)
    try:
        result = import_flux(args.file, _flux_options(args))
    except FluxError as err:
        if args.json:
            raise  # main() prints it as the JSON error document
        return _report_error(err)
    result.topology = with_storm_version(result.topology, args.storm_version)
    if args.output:  # the Flux file, filter and resources relative to the document: a moved folder keeps them
        from app.core.storm.flux.origin import relative_paths

        result.topology = relative_paths(result.topology, args.output)
    data = result.topology.to_json_bytes()
    if args.json:
        from app.cli.common import print_result
        from app.core.topology import unannotated_problems

        if args.output:
            _write(args, "-o", args.output, data, _included(result.topology))
        print_result("import-flux", {"topology": json.loads(data), "notes": result.notes,
                                     "unannotated": [str(p) for p in unannotated_problems(result.topology)],
                                     "output": args.output})
        return EXIT_OK
    if args.output:
        _write(args, "-o", args.output, data, _included(result.topology))
        _summary(result.topology, result.notes, sys.stdout)
        print(f"wrote {one_line(str(args.output))}")
    else:
        sys.stdout.write(data.decode("utf-8"))
        _summary(result.topology, result.notes, sys.stderr)
    return EXIT_OK


# ---- import storm-ui -----------------------------------------------------------------------


def _load_document(path: str, args: argparse.Namespace) -> Topology:
    """A .storm.json / D-VerT document, or a Flux file imported on the fly."""
    if path.endswith((".yaml", ".yml")):
        from app.core.storm.flux.builder import import_flux

        return import_flux(path, _flux_options(args)).topology
    from app.core.formats import load_topology
    from app.core.storm.flux.origin import resolved_paths

    try:
        return resolved_paths(load_topology(path), path)
    except TopologyError as err:
        raise TopologyError([Problem(f"{path}: {p.path}" if p.path else path, p.message) for p in err.problems]) \
            from None


def cmd_import_storm_ui(args: argparse.Namespace) -> int:
    from app.core.storm.flux.yaml_text import FluxError
    from app.core.storm.ui.client import Credentials, StormUIError
    from app.core.storm.ui.reader import annotate, onto_notes, read_storm_ui

    if args.output:
        check_output_file(_onto_itself(args), "-o", args.output)
    try:
        onto = _load_document(args.onto, args) if args.onto else None
        measured = read_storm_ui(args.url, args.topology, args.window, Credentials.resolve(args.user, None, args.token),
                                 args.timeout, args.cacert, lag_interval=args.lag_interval)
    except (StormUIError, FluxError) as err:
        if args.json:
            raise  # main() prints it as the JSON error document
        return _report_error(err)
    topo, notes = measured.topology, list(measured.notes)
    if onto is not None:
        topo, more = annotate(onto, measured)
        notes = onto_notes(measured) + more
    topo = with_storm_version(topo, args.storm_version)
    if args.output:
        from app.core.storm.flux.origin import relative_paths

        topo = relative_paths(topo, args.output)
    if args.json:
        out = {"topology": json.loads(topo.to_json_bytes()), "derived": [d.model_dump() for d in measured.derived],
               "notes": notes}
        if args.output:
            _write(_onto_itself(args), "-o", args.output, topo.to_json_bytes())
        from app.cli.common import print_result

        print_result("import-storm-ui", out)
        return EXIT_OK
    stream = sys.stdout if args.output else sys.stderr
    print(f"{measured.topology.name} ({measured.topology_id}) on {measured.url}, window {args.window}:", file=stream)
    from app.cli.common import table as _table

    rows = [["value", "", "from"]]
    rows += [[d.path, f"{d.value:.6g}", d.source] for d in measured.derived]
    print(_table(rows), file=stream)
    _summary(topo, notes, stream)
    if args.output:
        _write(_onto_itself(args), "-o", args.output, topo.to_json_bytes())
        print(f"wrote {one_line(str(args.output))}")
    else:
        sys.stdout.write(topo.to_json_bytes().decode("utf-8"))
    return EXIT_OK


# ---- export flux ----------------------------------------------------------------------------


def cmd_export_flux(args: argparse.Namespace) -> int:
    from app.core.formats import load_topology
    from app.core.formats.limits import escape
    from app.core.storm.flux.export import placeholder_classes, to_flux_bytes
    from app.core.storm.flux.origin import missing_flux_files, resolved_paths
    from app.core.storm.flux.repair import export_original, why_skeleton
    from app.core.storm.flux.yaml_text import FluxError
    from app.core.words import listed

    if args.out is not None and args.output is not None and args.out != args.output:
        raise UsageError(f"export flux: two output files ({one_line(args.output)} and -o {one_line(args.out)}): "
                         "give one", field="-o")
    if args.out is None and args.output is None:
        raise UsageError("export flux: give the file to write: -o OUT.yaml", field="-o")
    args.output = args.output if args.out is None else args.out
    check_output_file(args, "OUT.yaml", args.output)
    topo = resolved_paths(load_topology(args.input), args.input)
    missing = [] if args.skeleton else missing_flux_files(topo)
    if missing:  # a skeleton in its place would drop constructorArgs, components, ...: never silently
        def cut(path: str) -> str:  # its end names the file: keep that
            text = one_line(path)
            return text if len(text) <= 160 else "…" + text[-60:]

        shown = "; ".join(f"{field} {cut(path)}" for field, path in missing)
        print(f"{one_line(args.input)}: the files it was imported from are not there: {shown} (relative paths are "
              "relative to the document's folder): put them back, import the Flux file again, or give --skeleton "
              "to write a skeleton from the document alone", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        original = None if args.skeleton else export_original(topo)
        why = "" if original is not None or args.skeleton else why_skeleton(topo)
    except FluxError as err:
        return _report_error(err)
    sources = [args.input, *_included(topo), *([topo.storm.flux_filter] if topo.storm.flux_filter else [])]
    if original is not None:  # its Flux file and includes are inputs too: never replaced, even with --force
        _write(args, "OUT.yaml", args.output, original.text.encode("utf-8"), [*sources, str(original.source)])
        # each change and note cut, and at most 8 changes listed: 5,000 of them were one line of 465,227 characters
        changed = (f": {listed([escape(c, 200) for c in original.changes], 8, '; ')}" if original.changes
                   else ": no value changed")
        print(f"wrote {one_line(str(args.output))}: {escape(original.source.name, 200)} as it is{changed}")
        for note in original.notes:
            print(f"note: {escape(note, 600)}", file=sys.stderr)
        return EXIT_OK
    _write(args, "OUT.yaml", args.output, to_flux_bytes(topo), sources)
    print(f"wrote {one_line(str(args.output))}: a skeleton" + (f" ({why})" if why else ""))
    placeholders = placeholder_classes(topo)
    if placeholders:
        print(f"note: placeholder classes (stormbound.placeholder.*) to replace before deploying: "
              f"{listed([escape(p, 200) for p in placeholders], 8)}", file=sys.stderr)
    print("note: constructorArgs, configMethods, properties and components are not in the document: add what "
          "your classes need", file=sys.stderr)
    return EXIT_OK


# ---- repair -----------------------------------------------------------------------------------


def wanted_parallelism(items: list[str], document: Topology | None, flux_topology: Topology,
                       target: float | None = None) -> tuple[dict[str, int], list[str]]:
    """Bolt -> parallelism from `suggested` (at the target capacity, app.core.rates.at_target), `document` and
    `BOLT=N` items (later items win)."""
    values: dict[str, int] = {}
    notes: list[str] = []
    for item in items:
        if item in ("suggested", "document"):
            source = document if document is not None else flux_topology
            if item == "document" and document is None:
                raise _usage("--parallelism document needs --topology DOC (the document whose parallelism to write)")
            if item == "suggested":
                from app.core.rates import TARGET_CAPACITY, at_target, no_parallelism_reason, rate_check

                report = rate_check(source)
                suggested = at_target(source, report.suggested_parallelism, target or TARGET_CAPACITY)
                for name, n in suggested.items():
                    if n is None:
                        notes.append(f"bolts.{name}: no parallelism keeps its queue bounded "
                                     f"({no_parallelism_reason(report)}): left as it is")
                    else:
                        values[name] = n
            else:
                values.update({b.name: b.parallelism for b in source.bolts})
            continue
        name, count = bolt_count(item, "suggested, document, or BOLT=N with N >= 1")
        values[name.strip()] = count
    return values, notes


def cmd_repair(args: argparse.Namespace) -> int:
    """`repair`; with --in-place under the Flux file's lock (read, changed and written back by one command)."""
    if not args.in_place:
        return _repair(args)
    import contextlib

    from app.core.fileio import FileBusy, locked

    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(locked(args.file))
        except FileBusy as err:
            raise _usage(f"--in-place {one_line(args.file)}: {err}") from None
        except (OSError, ValueError):
            pass  # missing, a folder, a long name: the reader names it
        return _repair(args)
    raise AssertionError("unreachable")  # ExitStack does not swallow exceptions


def _repair(args: argparse.Namespace) -> int:
    from app.core.storm.flux.builder import import_flux
    from app.core.storm.flux.origin import options_of
    from app.core.storm.flux.repair import plan_repair
    from app.core.storm.flux.yaml_text import FluxError
    from app.core.storm.rebalance import as_running, rebalance_lines, running_from_flux

    if args.in_place and args.output:
        raise _usage("give --in-place or -o OUT, not both")
    if args.output:
        check_output_file(args, "-o", args.output)
    document = None
    if args.topology:
        from app.core.formats import load_topology
        from app.core.storm.flux.origin import resolved_paths

        try:
            document = resolved_paths(load_topology(args.topology), args.topology)
        except TopologyError as err:  # named as the --topology file's problems, not the Flux file's
            err.file = args.topology  # main() names a reader's file
            raise
    try:
        options = _flux_options(args)
        if document is not None and not (args.filter or args.env or args.resources) \
                and document.storm.flux_file and Path(document.storm.flux_file) == Path(args.file).resolve():
            options = options_of(document)  # read the file the way it was imported
        imported = import_flux(args.file, options)
        flux_topology = imported.topology
        wanted, notes = wanted_parallelism(args.parallelism, document, flux_topology, args.target_capacity)
        edits = plan_repair(args.file, wanted, options)
    except FluxError as err:
        return _report_error(err)
    from app.core.formats.limits import escape

    for note in notes:
        print(f"note: {escape(note, 600)}", file=sys.stderr)
    if not edits:
        print(f"{args.file}: every bolt already has the wanted parallelism; nothing to change")
        return EXIT_OK
    main = Path(args.file).resolve()
    if args.output and any(e.path.resolve() != main for e in edits):
        included = ", ".join(e.path.name for e in edits if e.path.resolve() != main)
        raise _usage(f"bolts defined in included files ({included}) can only be repaired --in-place")
    for edit in edits:
        for change in edit.changes:  # one line each, a value echoed cut
            print(f"{one_line(str(edit.path))}: {escape(change, 300)}")
    running = running_from_flux(imported.document)
    if document is not None:  # what the cluster runs, when the document was annotated from its Storm UI
        running = as_running(running, document)
    raised = {c: n for e in edits for c, n in e.raised_tasks.items()}
    commands = rebalance_lines(flux_topology.name, running, wanted, raised)
    if commands:
        print("on the running topology, without a redeploy:")
        for line in commands:
            print(f"  {line}")
    if args.in_place:  # the documented overwrite: the Flux file itself, atomically, its mode kept
        from app.core.fileio import OutputRefused, write_output

        for edit in edits:
            try:
                write_output(edit.path, edit.after.encode("utf-8"), force=True)
            except OutputRefused as err:
                raise _usage(f"--in-place {edit.path}: {err}") from None
            print(f"wrote {one_line(str(edit.path))}")
    elif args.output:
        _write(args, "-o", args.output, edits[0].after.encode("utf-8"), [str(e.path) for e in edits])
        print(f"wrote {one_line(str(args.output))}")
    else:
        for edit in edits:
            sys.stdout.write(edit.diff())
        print("(a dry run: --in-place writes the file, -o OUT a copy)", file=sys.stderr)
    return EXIT_OK


# ---- registration ---------------------------------------------------------------------------


def _flux_reading(p: argparse.ArgumentParser) -> None:
    p.add_argument("--filter", metavar="FILE.properties",
                   help="substitute ${name} from this properties file (Flux's --filter)")
    p.add_argument("--env", action="store_true",
                   help="substitute ${ENV-NAME} from the environment (Flux's --env-filter)")
    p.add_argument("--resources", action="append", metavar="DIR",
                   help="folder holding classpath resources for `resource: true` includes (repeatable)")


def _needs(usage: str) -> Callable[[argparse.Namespace], int]:
    def handler(args: argparse.Namespace) -> int:
        raise _usage(f"say what: {usage}")
    return handler


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `import`, `export` and `repair`."""
    p = sub.add_parser("import", help="bring a topology in from a Flux file or a running cluster's Storm UI",
                       epilog=examples("stormbound import flux models/wordcount.flux.yaml -o wc.storm.json"))
    p.set_defaults(func=_needs("import flux FILE.yaml | import storm-ui URL --topology ID | "
                               "import metrics DIR --out RUNDIR"), file_args=())
    kinds = p.add_subparsers(dest="source", metavar="{flux,storm-ui,metrics}")
    q = kinds.add_parser("flux", help="import a Flux YAML file (spouts, bolts, streams, config, includes)",
                         epilog=examples("stormbound import flux models/wordcount.flux.yaml -o wc.storm.json "
                                         "--filter dev.properties"))
    q.add_argument("file", metavar="FILE.yaml")
    _flux_reading(q)
    add_storm_version_option(q, "(else stormbound.storm_version in the Flux config)")
    q.add_argument("-o", "--output", "--out", metavar="OUT.storm.json", help="write the document here (else to stdout)")
    q.add_argument("--json", action="store_true",
                   help="the document, what is not annotated and the import's notes as one JSON document")
    add_force_option(q)
    q.set_defaults(func=cmd_import_flux, file_args=("file",))

    q = kinds.add_parser("storm-ui", help="import a running topology from the Storm UI's REST API",
                         description="Read a running topology's structure and its measured rates (tuples/s), "
                                     "α (s) and σ from the Storm UI's REST API.",
                         epilog=examples("stormbound import storm-ui http://nimbus:8080 --topology wordcount "
                                         "--onto wc.storm.json -o wc.storm.json"))
    q.add_argument("url", metavar="URL", help="the Storm UI, e.g. http://nimbus.example.org:8080")
    q.add_argument("--topology", required=True, metavar="ID|NAME", help="the running topology's id or name")
    q.add_argument("--window", choices=list(("600", "10800", "86400", "all")), default="600",
                   help="seconds of statistics to read (default 600; all = since the topology started)")
    q.add_argument("--onto", metavar="DOC", help="annotate this document (.storm.json, D-VerT or Flux .yaml) "
                                                 "instead of building one from the UI alone")
    q.add_argument("--user", metavar="USER[:PASSWORD]",
                   help="basic auth (default $STORMBOUND_UI_USER; password from $STORMBOUND_UI_PASSWORD)")
    q.add_argument("--token", help="bearer token (default $STORMBOUND_UI_TOKEN)")
    q.add_argument("--cacert", metavar="FILE", help="trust this CA bundle for https (verification stays on)")
    q.add_argument("--timeout", type=number(float, 0, 3600, above=True, unit="s"), default=10.0, metavar="S",
                   help="how long each request may take in all: connecting, headers and body "
                        "(seconds or with a unit: 2s, 500ms; default 10 s)")
    q.add_argument("--lag-interval", type=number(float, 0, 600, unit="s"), default=0.0, metavar="S",
                   dest="lag_interval",
                   help="read the lag endpoint twice, S seconds apart, and add the lag's growth to each spout's rate "
                        "(what the source offered beyond what backpressure let through; default 0: one reading)")
    _flux_reading(q)
    add_storm_version_option(q, "(else the Storm UI's stormVersion)")
    q.add_argument("-o", "--output", metavar="OUT.storm.json", help="write the document here (else to stdout)")
    add_force_option(q)
    q.add_argument("--json", action="store_true", help="the document, each derived value's source, and notes as JSON")
    q.set_defaults(func=cmd_import_storm_ui, file_args=("url",))
    from app.cli.storm_live import register_import

    register_import(kinds)

    p = sub.add_parser("export", help="write a document in another tool's format",
                       epilog=examples("stormbound export flux wc.storm.json -o wc-model.yaml"))
    p.set_defaults(func=_needs("export flux IN.storm.json -o OUT.yaml"), file_args=())
    kinds = p.add_subparsers(dest="target", metavar="{flux}")
    q = kinds.add_parser("flux", help="write a Flux YAML file: the document's own Flux file with only its changed "
                                      "parallelism replaced, else a skeleton (the model's timing under stormbound.*)",
                         epilog=examples("stormbound export flux wc.storm.json -o wc-model.yaml"))
    q.add_argument("input", metavar="IN.storm.json")
    q.add_argument("output", metavar="OUT.yaml", nargs="?",
                   help="where to write (the same as -o; kept for the command lines that give it so)")
    q.add_argument("-o", "--out", "--output", dest="out", metavar="OUT.yaml",
                   help="write the Flux file here (as import's -o)")
    q.add_argument("--skeleton", action="store_true",
                   help="write a fresh Flux file from the document alone (placeholder classes, the model's timing "
                        "under stormbound.*), even when its own Flux file is there")
    add_force_option(q)
    q.set_defaults(func=cmd_export_flux, file_args=("input",))

    p = sub.add_parser("repair", help="write parallelism into your own Flux file, changing nothing else",
                       epilog=examples("stormbound repair models/wordcount.flux.yaml --parallelism suggested "
                                       "--topology wc.storm.json --in-place"))
    p.add_argument("file", metavar="FILE.yaml")
    p.add_argument("--parallelism", nargs="+", required=True, metavar="suggested|document|BOLT=N",
                   help="the rate check's suggestion, the --topology document's values, or BOLT=N")
    add_target_option(p)
    p.add_argument("--topology", metavar="DOC", help="the annotated document (e.g. after import storm-ui --onto); "
                                                    "default: the Flux file itself")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--in-place", action="store_true", help="rewrite the Flux file (and included files) atomically")
    where.add_argument("-o", "--output", metavar="OUT.yaml", help="write the repaired file here")
    add_force_option(p)
    _flux_reading(p)
    p.set_defaults(func=cmd_repair, file_args=("file",))


"""`stormbound annotate FILE COMPONENT key=value ...`: set a component's values without editing JSON.

Keys: a spout's `rate` (tuples/s: `1500`, `1500/s`, `90/min`), `burst` and `parallelism` (its executors);
a bolt's `alpha` (a time: `20ms`, `0.02`, `0.5s`), `sigma`, `parallelism`, `min_ttf` (a time: it may fail) and
`threads` (asynchronous: threads per executor);
per declared output stream a bolt's `sigma.STREAM` and a spout's `ratio.STREAM` (docs/formats.md, "Streams").
The component `settings` sets `min_reboot_time`, `max_reboot_time`, `failures` (on/off), `replay`,
`tolerance` and `max_idle_time` (docs/model.md section 7). Setting a value
clears it from the component's `unannotated`. The document is checked as a whole before it is
written, atomically; it keeps seconds and tuples per second. Exit 0, or 2 with one line naming
the component and the key.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from app.cli.common import EXIT_OK, UsageError, examples, print_result
from app.core.topology import one_line


def _value(kind: str, text: str, where: str) -> float | int:
    """The value of `text` for a field of `kind` (time, rate, count or number); a refusal names `where`."""
    from app.core.formats.timings import TimingsError, parse_value

    try:
        return parse_value(kind, text)
    except TimingsError as err:
        raise UsageError(f"{where}: {err}", field=where) from None


SETTINGS_KEYS = {"min_reboot_time": "time", "max_reboot_time": "time", "max_idle_time": "time",
                 "tolerance": "number", "failures": "on/off", "replay": "paced/at-once/none"}


def _plan_settings(data: dict[str, Any], items: list[str]) -> list[str]:
    """`settings KEY=VALUE ...`: the topology's timing and failure settings (docs/model.md sections 1 and 7)."""
    from app.core.formats.timings import shown_before
    from app.core.units import format_duration

    settings = data.setdefault("settings", {})
    if not isinstance(settings, dict):
        raise UsageError("settings: not an object in the document")
    changes = []
    for item in items:
        key, sep, text = (x.strip() for x in item.partition("="))
        if not sep or not text:
            raise UsageError(f"{one_line(item)!r}: write KEY=VALUE, e.g. min_reboot_time=10s")
        kind = SETTINGS_KEYS.get(key)
        if kind is None:
            raise UsageError(f"settings.{one_line(key)}: annotate sets {', '.join(SETTINGS_KEYS)}")
        value: Any
        if kind == "on/off":
            if text not in ("on", "off", "true", "false"):
                raise UsageError(f"settings.failures: '{one_line(text)}' is not on or off")
            value = text in ("on", "true")
        elif "/" in kind:
            if text not in kind.split("/"):
                raise UsageError(f"settings.{key}: '{one_line(text)}' is not one of {', '.join(kind.split('/'))}")
            value = text
        else:
            value = _value(kind, text, f"settings.{key}")
        old = settings.get(key)
        settings[key] = value

        def shown(x: Any, unit: str = kind) -> str:
            if x is None:
                return "unset"
            if unit == "time":
                return shown_before(x, lambda v: format_duration(float(v)))
            if isinstance(x, (bool, int, float, str)) and len(str(x)) <= 60:
                return str(x).lower()
            return shown_before(x, str)

        changes.append(f"settings.{key}: {shown(old)} -> {shown(value)}")
    return changes


def plan(data: dict[str, Any], component: str, items: list[str]) -> list[str]:
    """Apply `key=value` items to `component` in the decoded document (in place); one line per change.
    The component `settings` (when no spout or bolt has that name) sets the topology's settings."""
    from app.core.formats.timings import TimingsError, apply_values

    named = {c.get("name") for key in ("spouts", "bolts") for c in data.get(key) or [] if isinstance(c, dict)}
    if component == "settings" and component not in named:
        return _plan_settings(data, items)
    pairs = []
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not text.strip():
            raise UsageError(f"{one_line(item)!r}: write KEY=VALUE, e.g. alpha=20ms")
        pairs.append((key, text))
    try:
        return apply_values(data, component, pairs)
    except TimingsError as err:
        raise UsageError(str(err)) from None


def _from_files(args: argparse.Namespace, data: dict[str, Any]) -> tuple[dict[str, Any], list[str], list[str]]:
    """The document with every `--from` file's values (timings files, Storm UI tables), as decoded JSON."""
    from app.core.formats.timings import TimingsError, annotate_from_files
    from app.core.topology import parse_topology

    try:
        topo, changes, notes = annotate_from_files(parse_topology(data), list(args.from_files))
    except TimingsError as err:
        raise UsageError(str(err)) from None
    return topo.model_dump(mode="json"), changes, notes


def cmd_annotate(args: argparse.Namespace) -> int:
    """Read, change and write back under the file's lock: two annotates at once both keep their change."""
    import contextlib

    from app.core.fileio import FileBusy, locked

    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(locked(args.file))
        except FileBusy as err:
            raise UsageError(f"{one_line(args.file)}: {err}", file=args.file) from None
        except (OSError, ValueError):
            pass  # missing, a folder, a long name: the reader names it
        return _annotate(args)
    raise AssertionError("unreachable")  # ExitStack does not swallow exceptions


def _annotate(args: argparse.Namespace) -> int:
    from app.core.fileio import OutputRefused, write_output
    from app.core.formats import detect_format, read_json
    from app.core.topology import TopologyError, parse_topology

    data = read_json(args.file)
    if detect_format(data) != "stormbound":
        raise UsageError(f"{args.file}: not a .storm.json document (annotate writes that format only: "
                         "`stormbound convert` it first)", file=args.file)
    if args.component is None and not args.from_files:
        raise UsageError("give COMPONENT KEY=VALUE ..., or --from FILE (a timings file or the Storm UI's tables)")
    if args.component is not None and not args.values:
        raise UsageError(f"{one_line(args.component)}: give KEY=VALUE ..., e.g. alpha=20ms")
    changes: list[str] = []
    notes: list[str] = []
    if args.from_files:
        data, changes, notes = _from_files(args, data)
    if args.component is not None:
        try:
            changes += plan(data, args.component, args.values)
        except UsageError as err:  # one line naming the file and the field
            raise UsageError(f"{one_line(args.file)}: {err}", field=err.field, file=args.file) from None
    try:  # the whole document must still be valid (exit 2 naming the field otherwise)
        topo = parse_topology(data)
    except TopologyError as err:
        reboot = [p for p in err.problems
                  if p.path.startswith(("settings.min_reboot_time", "settings.max_reboot_time"))]
        if reboot and any(v.partition("=")[0].strip() == "min_ttf" for v in args.values):
            # a bolt's first min_ttf before the reboot bounds: say the command that sets them
            raise UsageError(f"{one_line(args.file)}: {reboot[0]}; set them first, e.g. stormbound annotate "
                             f"{one_line(args.file)} settings min_reboot_time=10s max_reboot_time=2min",
                             field=reboot[0].path, file=args.file) from None
        raise
    try:  # the documented overwrite (the file itself), through the one writer: atomic, its mode kept
        write_output(args.file, topo.to_json_bytes(), force=True)
    except OutputRefused as err:
        raise UsageError(f"{one_line(args.file)}: {err}", file=args.file) from None
    if args.json:
        print_result("annotate", {"file": args.file, "component": args.component, "changes": changes,
                                  "notes": notes, "unannotated": [str(p) for p in _missing(topo)]})
    else:
        for line in changes:
            print(f"{args.file}: {line}")
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
        missing = _missing(topo)
        if missing:
            print(f"{len(missing)} value{'' if len(missing) == 1 else 's'} still not annotated")
    return EXIT_OK


def _missing(topo: Any) -> list[Any]:
    from app.core.topology import unannotated_problems

    return unannotated_problems(topo)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `annotate` to the `stormbound` command line."""
    p = sub.add_parser(
        "annotate", help="set a spout's or bolt's values (units allowed) and clear them from 'not annotated'",
        description="Set values of one component in a .storm.json document, written atomically: a spout's rate "
                    "(tuples/s; 1500, 1500/s, 90/min), burst and parallelism (executors); a bolt's alpha (a time: "
                    "20ms, 0.02, 0.5s), sigma and parallelism; per declared output stream a bolt's sigma.STREAM and a "
                    "spout's ratio.STREAM. Each value set is cleared from the component's 'unannotated'. The "
                    "document keeps seconds and tuples per second.",
        epilog=examples("stormbound annotate wordcount.storm.json count alpha=20ms sigma=0 parallelism=4",
                        "stormbound annotate wordcount.storm.json sentences rate=1500/s burst=10",
                        "stormbound annotate crawler.storm.json fetcher alpha=80ms sigma=1 sigma.status=0.05",
                        "stormbound annotate crawler.storm.json fetcher min_ttf=10min",
                        "stormbound annotate crawler.storm.json settings min_reboot_time=10s max_reboot_time=2min",
                        "stormbound annotate crawler.storm.json --from timings.yaml --from storm-ui-page.json"))
    p.add_argument("file", metavar="FILE.storm.json")
    p.add_argument("component", metavar="COMPONENT", nargs="?", help="the spout's or bolt's name, or settings")
    p.add_argument("values", nargs="*", metavar="KEY=VALUE",
                   help="rate, burst, alpha, sigma, parallelism, min_ttf, threads (bolt); sigma.STREAM (bolt), "
                        "ratio.STREAM (spout); for COMPONENT settings: min_reboot_time, max_reboot_time, failures, "
                        "replay, tolerance, max_idle_time")
    p.add_argument("--from", dest="from_files", action="append", default=[], metavar="FILE",
                   help="every component's values from a timings file (YAML: {component: {alpha: 20ms, sigma: 1, "
                        "sigma.status: 0.05}}; CSV: a header component,alpha,sigma,...,rate) or from the Storm UI's "
                        "topology page (its JSON, or its Spouts and Bolts tables copied as text); repeatable, a "
                        "later file wins; COMPONENT KEY=VALUE apply after them")
    p.add_argument("--json", action="store_true", help="the changes and what is still not annotated as JSON")
    p.set_defaults(func=cmd_annotate, file_args=("file",))

"""Write parallelism back into the user's own Flux file, changing nothing else.

ruamel.yaml's round-trip parser locates each bolt's `parallelism` value (its event
marks give the exact characters, also through anchors and aliases), and only those
characters are replaced; a bolt without `parallelism` gets one line after its `id`.
Dumping the round-trip tree instead would reformat the file: on the 14 Flux files of
Storm's examples it changes 15 to 25 lines each (the licence header above `---`,
indentation of nested lists), which is not a repair the user asked for.

Before anything is written, both versions are parsed again and compared: apart from
the repaired `parallelism` values they must hold the same YAML document, else the
repair is refused. A bolt defined in an included file is repaired in that file.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.storm.flux.origin import options_of
from app.core.storm.flux.parser import read_flux
from app.core.storm.flux.ticks import TICK_PREFIX, is_tick
from app.core.storm.flux.yaml_text import (
    MAX_BYTES,
    FluxError,
    FluxOptions,
    load_yaml,
    parse_yaml,
    plain,
    read_flux_text,
    read_properties,
    substitute,
    yaml_events,
)
from app.core.topology import Topology


@dataclass
class FileEdit:
    """The new text of one Flux file and what changed in it."""

    path: Path
    before: str
    after: str
    changes: list[str] = field(default_factory=list)
    # component -> the numTasks the edit raises it to (with its parallelism: Storm runs no more executors than tasks)
    raised_tasks: dict[str, int] = field(default_factory=dict)

    def diff(self) -> str:
        """A unified diff of the edit (what `repair` prints without --in-place)."""
        return "".join(difflib.unified_diff(self.before.splitlines(keepends=True), self.after.splitlines(keepends=True),
                                            fromfile=str(self.path), tofile=str(self.path)))


@dataclass
class _Item:
    """What the events say about one spout or bolt mapping."""

    start: Any
    flow: bool
    keys: dict[str, Any] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)
    end: Any = None


_COMPLEX_KEY = object()


def _walk(text: str) -> Iterator[tuple[str, tuple[Any, ...], Any]]:
    """(role, path, event) for every node event: role is 'key', 'value' or 'end' (of a collection)."""
    stack: list[dict[str, Any]] = []

    def done() -> None:
        if not stack:
            return
        parent = stack[-1]
        if parent["kind"] == "map":
            parent["expect_key"] = not parent["expect_key"]
        else:
            parent["index"] += 1

    for ev in yaml_events(text):  # the events of the tree read already: no second parse
        name = type(ev).__name__
        if name in ("StreamStartEvent", "StreamEndEvent", "DocumentStartEvent", "DocumentEndEvent"):
            continue
        if name in ("MappingEndEvent", "SequenceEndEvent"):
            frame = stack.pop()
            yield "end", frame["path"], ev
            done()
            continue
        parent = stack[-1] if stack else None
        if parent is not None and parent["kind"] == "map" and parent["expect_key"]:
            parent["key"] = ev.value if name == "ScalarEvent" else _COMPLEX_KEY
            role, path = "key", parent["path"] + (parent["key"],)
        elif parent is not None and parent["kind"] == "map":
            role, path = "value", parent["path"] + (parent["key"],)
        elif parent is not None:
            role, path = "value", parent["path"] + (parent["index"],)
        else:
            role, path = "value", ()
        yield role, path, ev
        if name == "MappingStartEvent":
            stack.append({"kind": "map", "path": path, "expect_key": True, "key": None})
        elif name == "SequenceStartEvent":
            stack.append({"kind": "seq", "path": path, "index": 0})
        else:
            done()


def _offsets(text: str) -> list[int]:
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)
    return starts


def _value_span(text: str, ev: Any) -> tuple[int, int]:
    """The characters of a plain scalar's value (after any anchor or tag)."""
    end = ev.end_mark.index
    start = end - len(ev.value)
    if ev.style is not None or text[start:end] != ev.value:
        start = ev.start_mark.index  # quoted or unusual: replace the whole node
        while text[start] in "&!":
            while start < end and text[start] not in " \t":
                start += 1
            while start < end and text[start] in " \t":
                start += 1
    return start, end


def _placeholder_source(raw_line: str, properties: Path | None) -> str:
    """Where a `parallelism: ${...}` value comes from, named for the user: the property key and its file (with its
    line), or the environment variable."""
    match = re.search(r"parallelism\s*:\s*\$\{([^}]*)\}", raw_line)
    key = match.group(1) if match else "?"
    if key.startswith("ENV-"):
        return (f"comes from the environment variable {key[4:]} (${{{key}}}): change it there, not in the Flux file")
    if properties is None:
        return f"is ${{{key}}}, from a properties file (none was given with --filter): change {key} there"
    number = None
    try:
        from app.core.fileio import read_bytes

        text = read_bytes(properties, OSError, MAX_BYTES).decode("latin-1")
        for i, line in enumerate(text.splitlines(), 1):
            if re.match(rf"\s*{re.escape(key)}\s*[=:\s]", line):
                number = i
    except OSError:
        pass
    where = f"{properties}" + (f" line {number}" if number is not None else "")
    return f"comes from ${{{key}}}: change {key} in the properties file {where}"


@dataclass
class _Scan:
    """The parsing events of one file: its spouts' and bolts' mappings (by ("spouts" or "bolts", index)), the
    anchored values and the aliases (each with its path)."""

    items: dict[tuple[str, int], _Item] = field(default_factory=dict)
    anchors: dict[str, tuple[tuple[Any, ...], Any]] = field(default_factory=dict)
    aliases: list[tuple[tuple[Any, ...], Any]] = field(default_factory=list)

    @classmethod
    def of(cls, text: str) -> _Scan:
        scan = cls()
        items = scan.items
        for role, path_, ev in _walk(text):
            name = type(ev).__name__
            in_list = len(path_) >= 2 and path_[0] in ("spouts", "bolts") and isinstance(path_[1], int)
            if role == "value" and len(path_) == 2 and in_list and name == "MappingStartEvent":
                items[(path_[0], path_[1])] = _Item(ev, bool(ev.flow_style))
            elif role == "end" and len(path_) == 2 and (path_[0], path_[1]) in items:
                items[(path_[0], path_[1])].end = ev
            elif len(path_) == 3 and in_list and (path_[0], path_[1]) in items:
                item = items[(path_[0], path_[1])]
                (item.keys if role == "key" else item.values)[str(path_[2])] = ev
            if role == "value" and getattr(ev, "anchor", None) and name != "AliasEvent":
                scan.anchors[ev.anchor] = (path_, ev)
            if name == "AliasEvent":
                scan.aliases.append((path_, ev))
        return scan

    @staticmethod
    def ident(item: _Item) -> str | None:
        ev = item.values.get("id")
        return ev.value if ev is not None and type(ev).__name__ == "ScalarEvent" else None

    def by_id(self) -> dict[tuple[str, str], _Item]:
        """The mappings by ("spouts" or "bolts", id)."""
        where: dict[tuple[str, str], _Item] = {}
        for (key, _index), item in self.items.items():
            name = self.ident(item)
            if name is not None:
                where[(key, name)] = item
        return where

    def owner(self, path_: tuple[Any, ...]) -> tuple[str, str] | None:
        """The component whose `parallelism` is at `path_`, if it is one."""
        if len(path_) == 3 and path_[2] == "parallelism" and (path_[0], path_[1]) in self.items:
            name = self.ident(self.items[(path_[0], path_[1])])
            return (path_[0], name) if name is not None else None
        return None


def _plan_file(path: Path, raw: str, text: str, wanted: dict[tuple[str, str], int],
               current: dict[tuple[str, str], int], properties: Path | None = None,
               raised: dict[str, int] | None = None) -> tuple[str, list[str]]:
    """The repaired raw text of one file: `wanted` parallelism for its spouts and bolts (by ("spouts" or "bolts",
    id)); `current` holds every component's value in the file."""
    edits, changes = _edits(path, text, _Scan.of(text), wanted, current, raised)
    return _apply_to_raw(path, raw, text, edits, properties), changes


def _edits(path: Path, text: str, scan: _Scan, wanted: dict[tuple[str, str], int],
           current: dict[tuple[str, str], int],
           raised: dict[str, int] | None) -> tuple[list[tuple[int, int, str]], list[str]]:
    """The edits of the substituted text (start, end, replacement) that give each component its `wanted`
    parallelism (and an alias of a changed anchor its own value), with the changes they make."""
    where = scan.by_id()

    def final(kind: str, name: str) -> int:
        return wanted.get((kind, name), current.get((kind, name), 1))

    edits: list[tuple[int, int, str]] = []
    changes: list[str] = []
    for (kind_of, bolt), n in wanted.items():
        item = where.get((kind_of, bolt))
        if item is None:
            raise FluxError(path, None, f"{kind_of}.{bolt}", "not found in this file")
        ev = item.values.get("parallelism")
        label = f"{kind_of}.{bolt}.parallelism"
        old = current.get((kind_of, bolt), 1)
        if _raise_tasks(path, text, item, f"{kind_of}.{bolt}", n, edits, changes) and raised is not None:
            raised[bolt] = n
        if ev is None:
            edits.append(_added_parallelism(text, item, n))
            changes.append(f"{label}: {old} -> {n} (added)")
            continue
        kind = type(ev).__name__
        line = ev.start_mark.line + 1
        if kind == "AliasEvent":
            anchor = scan.anchors.get(ev.anchor)
            held = scan.owner(anchor[0]) if anchor else None
            shared = final(*held) if held is not None else None
            if shared != n:
                edits.append((ev.start_mark.index, ev.end_mark.index, str(n)))
            changes.append(f"{label}: {old} -> {n}")
            continue
        if kind != "ScalarEvent":
            raise FluxError(path, line, label, "is not a number: edit it by hand")
        start, end = _value_span(text, ev)
        edits.append((start, end, str(n)))
        changes.append(f"{label}: {old} -> {n}")
        if ev.anchor:
            for alias_path, alias in scan.aliases:
                if alias.anchor != ev.anchor:
                    continue
                held = scan.owner(alias_path)
                if held is None:
                    shown = ".".join(str(p) for p in alias_path)
                    raise FluxError(path, alias.start_mark.line + 1, shown,
                                    f"uses the anchor &{ev.anchor} of {label}; repairing it would change this value "
                                    "too: edit it by hand")
                if held == (kind_of, bolt) or final(*held) == n:
                    continue
                edits.append((alias.start_mark.index, alias.end_mark.index, str(final(*held))))
    return edits, changes


def _added_parallelism(text: str, item: _Item, n: int) -> tuple[int, int, str]:
    """The edit that gives a mapping without `parallelism` one: in a flow mapping at its end, else a line after its
    `id`."""
    if item.flow:
        at = item.end.start_mark.index
        return (at, at, f", parallelism: {n}")
    id_end = item.values["id"].end_mark.line
    column = item.keys["id"].start_mark.column
    starts = _offsets(text)
    at = starts[id_end + 1] if id_end + 1 < len(starts) else len(text)
    prefix = "" if at == 0 or text[at - 1] == "\n" else "\n"
    return (at, at, f"{prefix}{' ' * column}parallelism: {n}\n")


def _apply_to_raw(path: Path, raw: str, text: str, edits: list[tuple[int, int, str]],
                  properties: Path | None) -> str:
    """The raw file with the edits found in the substituted text: the raw file must agree on their lines (a value
    from ${...} is named with where it comes from)."""
    lines = text.splitlines()
    raw_lines = raw.splitlines()
    starts = _offsets(text)
    raw_starts = _offsets(raw)

    def line_of(index: int) -> int:
        lo, hi = 0, len(starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if starts[mid] <= index:
                lo = mid
            else:
                hi = mid - 1
        return lo

    mapped: list[tuple[int, int, str]] = []
    for start, end, replacement in edits:
        number = line_of(start)
        raw_line = raw_lines[number] if number < len(raw_lines) else ""
        here = lines[number] if number < len(lines) else ""
        if raw_line != here:
            placeholder = re.search(r"parallelism\s*:\s*\$\{", raw_line) is not None
            what = _placeholder_source(raw_line, properties) if placeholder \
                else "shares its line with a ${...} substitution: edit it by hand"
            raise FluxError(path, number + 1, "parallelism", what)
        offset = raw_starts[number] if number < len(raw_starts) else len(raw)
        mapped.append((offset + start - starts[number], offset + end - starts[number], replacement))
    after = raw
    for start, end, replacement in sorted(mapped, reverse=True):
        after = after[:start] + replacement + after[end:]
    return after


def _raise_tasks(path: Path, text: str, item: _Item, label: str, n: int, edits: list[tuple[int, int, str]],
                 changes: list[str]) -> bool:
    """A `numTasks` below the new parallelism is raised to it: Storm runs no more executors than tasks, so the
    repaired file would still run the old count. Whether it was raised."""
    ev = item.values.get("numTasks")
    if ev is None:
        return False
    if type(ev).__name__ != "ScalarEvent" or ev.anchor:
        raise FluxError(path, ev.start_mark.line + 1, f"{label}.numTasks",
                        f"must be raised to at least {n} with the parallelism, but it is shared or not a plain "
                        "number: edit it by hand")
    try:
        tasks = int(ev.value)
    except ValueError:
        return False  # a ${...} left as it is: the repair's line check names it
    if tasks >= n:
        return False
    start, end = _value_span(text, ev)
    edits.append((start, end, str(n)))
    changes.append(f"{label}.numTasks: {tasks} -> {n} (raised with the parallelism: Storm runs no more "
                   "executors than tasks)")
    return True


def _without_parallelism(tree: Any) -> tuple[Any, dict[tuple[str, str], int], dict[tuple[str, str], Any]]:
    data = plain(tree)
    values: dict[tuple[str, str], int] = {}
    tasks: dict[tuple[str, str], Any] = {}
    for key in ("spouts", "bolts"):
        for item in data.get(key) or []:
            if isinstance(item, dict):
                values[(key, str(item.get("id")))] = item.pop("parallelism", 1)
                tasks[(key, str(item.get("id")))] = item.pop("numTasks", None)
    return data, values, tasks


def plan_repair(flux_path: str | Path, wanted: dict[str, int], options: FluxOptions | None = None,
                spouts: dict[str, int] | None = None) -> list[FileEdit]:
    """The edits that give each named bolt (and each spout of `spouts`) its new parallelism (files whose components
    already have it are left out)."""
    options = options or FluxOptions()
    doc = read_flux(flux_path, options)
    props = read_properties(options.filter) if options.filter is not None else None
    by_file: dict[Path, dict[tuple[str, str], int]] = {}
    for kind, values, vertices in (("bolts", wanted, doc.bolts), ("spouts", spouts or {}, doc.spouts)):
        for name, n in values.items():
            vertex = vertices.get(name)
            if vertex is None:
                known = ", ".join(vertices) or "none"
                raise FluxError(flux_path, None, f"{kind}.{name}",
                                f"no such {kind[:-1]} in the Flux file (its {kind}: {known})")
            if n < 1:
                raise FluxError(flux_path, vertex.line, f"{kind}.{name}.parallelism", f"must be at least 1, not {n}")
            if (vertex.parallelism or 1) != n:
                by_file.setdefault(vertex.file, {})[(kind, name)] = n
    edits: list[FileEdit] = []
    for file, values_here in by_file.items():
        raw = read_flux_text(file)
        text = substitute(raw, props, options, file)
        current = {("bolts", b.id): (b.parallelism or 1) for b in doc.bolts.values() if b.file == file}
        current.update({("spouts", s.id): (s.parallelism or 1) for s in doc.spouts.values() if s.file == file})
        raised: dict[str, int] = {}
        after, changes = _plan_file(file, raw, text, values_here, current, options.filter, raised)
        _check_only_parallelism(file, text, substitute(after, props, options, file), values_here, options)
        edits.append(FileEdit(file, raw, after, changes, raised))
    return edits


def _check_only_parallelism(file: Path, before: str, after: str, wanted: dict[tuple[str, str], int],
                            options: FluxOptions) -> None:
    old_tree = parse_yaml(before, file)
    new_tree, _ = load_yaml(after, file, options)  # its limits; ${...} left unresolved stay as they are
    old, old_values, old_tasks = _without_parallelism(old_tree)
    new, new_values, new_tasks = _without_parallelism(new_tree)
    expected = dict(old_values)
    expected.update(wanted)
    tasks_ok = all(new_tasks.get(k) == t or (k in wanted and new_tasks.get(k) == wanted[k])
                   for k, t in old_tasks.items())
    if old != new or new_values != expected or not tasks_ok:
        raise RuntimeError(f"{file}: the repair would change more than parallelism values; nothing was written")


@dataclass
class OriginalExport:
    """The document's own Flux file with only the values the document changed (`export flux`)."""

    source: Path
    text: str
    changes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _structure_differs(topo: Topology, flux_path: Path, options: FluxOptions) -> str | None:
    """Why the document is no longer the Flux file's topology (None when only values differ)."""
    doc = read_flux(flux_path, options)
    names = {c.id: c.name for c in topo.components}
    spouts = {s.name for s in topo.spouts if not s.name.startswith(TICK_PREFIX)}
    bolts = {b.name for b in topo.bolts}
    fed = {s.target for s in doc.streams}
    flux_bolts = {b for b in doc.bolts if b in fed}
    if spouts != set(doc.spouts) or bolts != flux_bolts:
        added = sorted((spouts | bolts) - set(doc.spouts) - flux_bolts)
        gone = sorted((set(doc.spouts) | flux_bolts) - spouts - bolts)
        parts = ([f"new {', '.join(added)}"] if added else []) + ([f"no {', '.join(gone)}"] if gone else [])
        return "; ".join(parts)
    edges = {(names[s.source], names[s.target], s.stream) for s in topo.subscriptions
             if not names[s.source].startswith(TICK_PREFIX)}
    flux_edges = {(s.source, s.target, s.stream_id) for s in doc.streams if not is_tick(s.source, s.stream_id)}
    if edges != flux_edges:
        return "its subscriptions differ"
    windows = [b.name for b in topo.bolts if (b.window.model_dump(exclude_none=True) if b.window else None)
               != doc.bolts[b.name].window_field]  # (an export rewrites parallelism only, never configMethods)
    if windows:
        return f"the window of {', '.join(windows)} differs"
    joins = [b.name for b in topo.bolts if (b.join.model_dump(exclude_none=True) if b.join else None)
             != doc.bolts[b.name].join_field]
    if joins:
        return f"the join of {', '.join(joins)} differs"
    return None


def _flux_file(topo: Topology) -> Path | None:
    """The document's Flux file when it is there (a name too long for the system, or holding a NUL, is not)."""
    flux = topo.storm.flux_file
    try:
        return Path(flux) if flux and Path(flux).is_file() else None
    except (OSError, ValueError):
        return None


def export_original(topo: Topology) -> OriginalExport | None:
    """The Flux file the document was imported from, with only its changed parallelism replaced; everything
    else (comments, anchors, constructorArgs, components, includes, ${...}) byte for byte.

    None when there is no such file to start from, or the document's structure is no longer the file's
    (then a skeleton is the honest export)."""
    flux = _flux_file(topo)
    if flux is None:
        return None
    options = options_of(topo)
    source = flux.resolve()
    if _structure_differs(topo, source, options) is not None:
        return None
    spouts = {s.name: s.executors for s in topo.spouts if not s.name.startswith(TICK_PREFIX) and s.executors}
    edits = plan_repair(source, {b.name: b.parallelism for b in topo.bolts}, options, spouts)
    out = OriginalExport(source, read_flux_text(source))
    for edit in edits:
        if edit.path.resolve() == source:
            out.text = edit.after
            out.changes += edit.changes
        else:
            out.notes.append(f"{edit.path.name}: {', '.join(edit.changes)}: defined in an included file, which an "
                             "export does not rewrite (stormbound repair --in-place does bolts; edit a spout by hand)")
    return out


def why_skeleton(topo: Topology) -> str:
    """Why `export flux` writes a skeleton rather than the document's own Flux file."""
    flux = topo.storm.flux_file
    if not flux:
        return "the document did not come from a Flux file"
    found = _flux_file(topo)
    if found is None:
        shown = flux if len(flux) <= 60 else flux[:60] + "…"
        return f"its Flux file {shown} is not there any more"
    why = _structure_differs(topo, found.resolve(), options_of(topo))
    return f"the document's topology is not its Flux file's any more ({why})" if why else ""

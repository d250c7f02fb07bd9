"""Annotating a whole topology in one go: a timings file, or the Storm UI's component tables.

A **timings file** gives each component's values with units, as `stormbound annotate` takes them
(docs/storm.md, "Timings files"):

* YAML: a mapping from component to its values, `fetcher: {alpha: 80ms, sigma: 1, sigma.status: 0.05}`,
  or a list of mappings with a `component` key;
* CSV (or tab-separated): a header `component,alpha,sigma,sigma.status,rate,...`, a row per component;
  an empty cell leaves that value as it is.

Keys: a spout's `rate` (`1500/s`, `90/min`), `burst`, `parallelism` (its executors) and `ratio.STREAM`;
a bolt's `alpha` (a time: `20ms`), `sigma`, `sigma.STREAM`, `parallelism`, `min_ttf` and `threads` (an asynchronous
bolt's threads per executor: docs/model.md section 8).

The **Storm UI's component tables** are read too: the JSON of `/api/v1/topology/<id>` saved to a file,
or its Spouts and Bolts tables copied from the page as tab- or comma-separated text (headers `Id`,
`Executors`, `Emitted`, `Execute latency (ms)`, `Executed`, ...): they go through the same mapping as
`import storm-ui` (app/core/storm/ui/reader.py) over the page's window (600 s unless the JSON says).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.core.errors import BadInput
from app.core.topology import Topology, one_line, still_unannotated

KEYS = {
    "spout": {"rate": "rate", "burst": "count", "parallelism": "count"},
    "bolt": {"alpha": "time", "sigma": "number", "parallelism": "count", "min_ttf": "time", "threads": "count"},
}
FIELD = {"spout": {"parallelism": "executors"}, "bolt": {}}
# a value per declared output stream: KEY.STREAM=VALUE
STREAM_KEYS = {"spout": ("ratio", "stream_ratio"), "bolt": ("sigma", "stream_sigma")}
MAX_TIMINGS_BYTES = 2_000_000
UI_TABLE_HEADERS = {"execute latency (ms)", "complete latency (ms)"}


class TimingsError(BadInput, ValueError):
    """A value, key, component or file that cannot be used: one line naming it."""


def parse_value(kind: str, text: str) -> float | int:
    """A value of a timings key: a time (`20ms`), a rate (`90/min`), a whole count or a number."""
    from app.core.units import UnitError, magnitude_problem, parse_duration, parse_rate, shown

    try:
        if kind == "time":
            return parse_duration(text)
        if kind == "rate":
            return parse_rate(text)
        value = float(text)
        if kind == "count":
            if not value.is_integer():
                raise UnitError(f"'{shown(text)}' is not a whole number")
            return int(value)
        problem = magnitude_problem(value, "")
        if problem:
            raise UnitError(f"'{shown(text)}': {problem}")
        return value
    except (ValueError, OverflowError) as err:
        message = str(err) if isinstance(err, UnitError) else f"'{shown(text)}' is not a number"
        raise TimingsError(message) from None


def shown_before(value: Any, show: Callable[[Any], str]) -> str:
    """A value the document held before, as shown in a change line: any JSON value, even a malformed one."""
    from app.core.units import shown

    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return show(value)
        except (ValueError, OverflowError):
            pass
    return repr(shown(one_line(json.dumps(value, default=str))))  # (str: a repr is one)


def _stream_value(c: dict[str, Any], kind: str, component: str, key: str, text: str) -> str:
    per, field = STREAM_KEYS[kind]
    base, _, stream = key.partition(".")
    where = f"{kind}s.{one_line(component)}.{one_line(key)}"
    if base != per or not stream:
        raise TimingsError(f"{where}: a {kind}'s value per stream is written {per}.STREAM=VALUE")
    declared = c.get("streams") or []
    if stream not in declared:
        listed = ", ".join(one_line(str(d)) for d in declared) or "none besides default"
        raise TimingsError(f"{where}: {one_line(component)} declares no stream '{one_line(stream)}' "
                           f"(its streams: {listed})")
    try:
        value = parse_value("number", text)
    except TimingsError as err:
        raise TimingsError(f"{kind}s.{one_line(component)}.{field}.{one_line(stream)}: {err}") from None
    values = c.get(field)
    values = dict(values) if isinstance(values, dict) else {}
    old = values.get(stream)
    values[stream] = value
    c[field] = values
    return (f"{kind}s.{component}.{field}.{stream}: "
            f"{'not annotated' if old is None else shown_before(old, lambda x: f'{x:g}')} -> {value:g}")


def apply_values(data: dict[str, Any], component: str, items: list[tuple[str, str]]) -> list[str]:
    """Set (key, value text) items on `component` in the decoded document (in place); one line per change.
    Setting a value clears it from the component's `unannotated`."""
    from app.core.units import format_duration

    for key in ("spouts", "bolts"):
        for c in data.get(key) or []:
            if isinstance(c, dict) and c.get("name") == component:
                kind = key[:-1]
                break
        else:
            continue
        break
    else:
        names = [c.get("name") for key in ("spouts", "bolts") for c in data.get(key) or [] if isinstance(c, dict)]
        raise TimingsError(f"no component '{one_line(component)}' (the document has "
                           f"{', '.join(one_line(str(n)) for n in names) or 'none'})")
    changes = []
    for key, text in items:
        key, text = key.strip(), text.strip()
        base, dot, stream = key.partition(".")
        if dot and not (kind == "bolt" and base == "sigma" and stream == "default"):
            changes.append(_stream_value(c, kind, component, key, text))
            continue
        key = base
        if key not in KEYS[kind]:
            per = STREAM_KEYS[kind][0]
            raise TimingsError(f"{kind}s.{one_line(component)}.{one_line(key)}: a {kind} has "
                               f"{', '.join(KEYS[kind])} and {per}.STREAM")
        unit = KEYS[kind][key]
        try:
            value = parse_value(unit, text)
        except TimingsError as err:
            raise TimingsError(f"{kind}s.{one_line(component)}.{one_line(key)}: {err}") from None
        field = FIELD[kind].get(key, key)
        if field == "threads" and isinstance(data.get("schema_version", 1), int) and data.get("schema_version", 1) < 3:
            from app.core.topology.migrate import upgrade  # threads need version 3: read the file as it meant it

            changes += upgrade(data)
        old = c.get(field)
        c[field] = value
        unannotated = c.get("unannotated")
        unannotated = unannotated if isinstance(unannotated, list) else []
        was_missing = field in unannotated
        if was_missing:
            c["unannotated"] = still_unannotated(unannotated, [field])

        def shown(x: float | int, unit: str = unit) -> str:
            if unit == "time":
                return format_duration(float(x))
            return f"{x:g} tuples/s" if unit == "rate" else f"{x:g}"

        before = "not annotated" if was_missing else ("unset" if old is None else shown_before(old, shown))
        changes.append(f"{kind}s.{component}.{field}: {before} -> {shown(value)}")
    return changes


# ---- reading files ------------------------------------------------------------------------------


def _text(path: Path) -> str:
    """The file's text through the read boundary (app/core/fileio.py): a pipe, a device or a folder is refused
    before it is opened and a file over MAX_TIMINGS_BYTES before it is read, so the app never waits on one."""
    from app.core.fileio import read_bytes

    raw = read_bytes(path, lambda reason: TimingsError(f"{one_line(str(path))}: {reason}"), MAX_TIMINGS_BYTES)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise TimingsError(f"{one_line(str(path))}: not UTF-8 text") from None
    if not text.strip():  # an empty file annotates nothing: refused, as an empty document is
        raise TimingsError(f"{one_line(str(path))}: is empty")
    return text


def _json(text: str, path: Path) -> Any:
    """A JSON page through the bounded decoder (nesting, digits, finite numbers)."""
    from app.core.formats.limits import FormatError, load_json_text

    try:
        return load_json_text(text, one_line(str(path)))
    except FormatError as err:
        raise TimingsError(str(err.problems[0]) if err.problems else str(err)) from None


def _rows(text: str, path: Path) -> list[dict[str, str]]:
    """CSV or tab-separated rows by header (the delimiter the header line uses), through the read boundary's
    CSV reader (a column named twice, a cell over csv's field limit, a row longer than the header: refused)."""
    from app.core.fileio import csv_rows

    first = text.splitlines()[0] if text.strip() else ""
    delimiter = "\t" if "\t" in first else ";" if first.count(";") > first.count(",") else ","
    name = one_line(str(path))
    rows = csv_rows(text.splitlines(keepends=True), lambda reason: TimingsError(f"{name}: {reason}"),
                    delimiter=delimiter)
    next(rows)
    return [{k.strip(): v.strip() for k, v in row.items()} for _, row in rows]


def _plain(value: Any) -> str:
    return "true" if value is True else "false" if value is False else str(value)


def read_timings(path: str | os.PathLike[str]) -> list[tuple[str, list[tuple[str, str]]]]:
    """(component, [(key, value text)]) in the file's order, from a YAML or CSV timings file."""
    p = Path(path)
    text = _text(p)
    if p.suffix.lower() in (".csv", ".tsv", ".txt"):
        header = text.splitlines()[0].replace("\t", ",").replace(";", ",").split(",")
        if "component" not in {h.strip().lower() for h in header}:
            raise TimingsError(f"{one_line(str(p))}: line 1: the header needs a `component` column "
                               "(component,rate,burst,alpha,sigma,...)")
        out = []
        for number, row in enumerate(_rows(text, p), 2):
            name = row.pop("component", None) or row.pop("Component", None)
            if not name:
                raise TimingsError(f"{one_line(str(p))}: line {number}: no component (the header needs a "
                                   "`component` column)")
            out.append((name, [(k, v) for k, v in row.items() if v]))
        return out
    from app.core.storm.flux.yaml_text import FluxError, load_yaml, plain

    try:  # the Flux reader's loader: its limits (an alias bomb among them) hold before aliases are expanded
        data = plain(load_yaml(text, p)[0])
    except FluxError as err:
        raise TimingsError(str(err)) from None
    entries: list[tuple[str, Any]]
    if isinstance(data, dict):
        entries = list(data.items())
    elif isinstance(data, list) and all(isinstance(e, dict) and "component" in e for e in data):
        entries = [(e["component"], {k: v for k, v in e.items() if k != "component"}) for e in data]
    else:
        raise TimingsError(f"{one_line(str(p))}: expected a mapping from component to its values, or a list of "
                           "mappings with a `component` key")
    out = []
    for name, values in entries:
        if not isinstance(values, dict):
            raise TimingsError(f"{one_line(str(p))}: {one_line(str(name))}: expected its values as a mapping, e.g. "
                               "{alpha: 20ms, sigma: 1}")
        items: list[tuple[str, str]] = []
        for key, value in values.items():
            if isinstance(value, dict):  # sigma: {default: 1, status: 0.05}
                items += [(str(key) if s == "default" else f"{key}.{s}", _plain(v)) for s, v in value.items()]
            else:
                items.append((str(key), _plain(value)))
        out.append((str(name), items))
    return out


def is_storm_ui_table(path: str | os.PathLike[str]) -> bool:
    """Whether a file is the Storm UI's topology page (its JSON) or its component tables copied as text."""
    p = Path(path)
    text = _text(p)
    if p.suffix.lower() == ".json":
        data = _json(text, p)  # a .json file the bounded decoder refuses is refused with its reason, not read as YAML
        page = isinstance(data, dict) and isinstance(data.get("bolts"), list) and isinstance(data.get("spouts"), list)
        if page and all(isinstance(e, dict) and ("spoutId" in e or "boltId" in e)
                        for e in data["spouts"] + data["bolts"]):
            return True
        if isinstance(data, dict) and ({"spouts", "bolts", "topology", "schema_version"} & data.keys()):
            raise TimingsError(f"{one_line(str(p))}: is a topology document, not a timings file or the Storm UI's "
                               "topology page (its spouts and bolts have no spoutId / boltId): give it as the "
                               "document to annotate, or open it with check or verify")
        return False
    header = {h.strip().lower() for h in (text.splitlines()[0] if text.strip() else "").replace("\t", ",").split(",")}
    return "id" in header and bool(header & UI_TABLE_HEADERS)


def _table_page(text: str, path: Path) -> dict[str, Any]:
    """A topology page from copied Spouts/Bolts tables: a blank line or a new header starts the next table."""
    page: dict[str, Any] = {"spouts": [], "bolts": [], "name": "topology", "id": "topology"}
    blocks: list[list[str]] = []
    block: list[str] = []
    for line in text.splitlines():
        lowered = line.lower()
        if not line.strip() or (block and lowered.startswith("id") and ("latency" in lowered)):
            if block:
                blocks.append(block)
            block = [line] if line.strip() else []
            continue
        block.append(line)
    if block:
        blocks.append(block)
    for lines in blocks:
        rows = _rows("\n".join(lines), path)
        for row in rows:
            low = {k.lower(): v.replace(",", "") if k.lower() != "id" else v for k, v in row.items()}
            name = low.get("id")
            if not name:
                continue
            entry = {"executors": low.get("executors"), "tasks": low.get("tasks"), "emitted": low.get("emitted"),
                     "transferred": low.get("transferred"), "acked": low.get("acked"), "failed": low.get("failed")}
            if "execute latency (ms)" in low:
                capacity = next((v for k, v in low.items() if k.startswith("capacity")), None)
                entry.update({"boltId": name, "executeLatency": low.get("execute latency (ms)"),
                              "executed": low.get("executed"), "capacity": capacity})
                page["bolts"].append(entry)
            else:
                entry.update({"spoutId": name, "completeLatency": low.get("complete latency (ms)")})
                page["spouts"].append(entry)
    return page


def read_storm_ui_table(path: str | os.PathLike[str]) -> Any:
    """The Storm UI's topology page (its JSON, or its tables copied as text) mapped as `import storm-ui` maps it
    (a StormUIImport); the counts cover the page's window (600 s, the UI's default, unless the JSON says)."""
    from app.core.storm.ui.client import StormUIError
    from app.core.storm.ui.reader import from_storm_ui
    from app.core.storm.ui.replies import StormUISnapshot

    p = Path(path)
    text = _text(p)
    page = _json(text, p) if p.suffix.lower() == ".json" else _table_page(text, p)
    if not isinstance(page, dict):
        raise TimingsError(f"{one_line(str(p))}: expected the Storm UI's topology page (an object)")
    window = str(page.get("window") or "600")
    window = {"600": "600", "10800": "10800", "86400": "86400", ":all-time": "all"}.get(window, "600")
    snapshot = StormUISnapshot(url=str(p), topology_id=str(page.get("id") or p.stem), window=window, topology=page)
    try:
        return from_storm_ui(snapshot)
    except StormUIError as err:
        raise TimingsError(f"{one_line(str(p))}: {err}") from None


def annotate_from_files(topo: Topology, paths: list[str | os.PathLike[str]]) -> tuple[Topology, list[str],
                                                                                        list[str]]:
    """`topo` with every file's values, in order (a later file wins): timings files and Storm UI tables.
    Returns (topology, changes, notes); a bad file, key, value or component raises TimingsError."""
    from app.core.storm.ui.reader import annotate, onto_notes
    from app.core.topology import TopologyError, parse_topology

    changes: list[str] = []
    notes: list[str] = []
    for path in paths:
        if is_storm_ui_table(path):
            measured = read_storm_ui_table(path)
            before = {c.name: c for c in topo.components}
            topo, more = annotate(topo, measured)
            notes += [f"{Path(path).name}: {n}" for n in onto_notes(measured) + more
                      if not n.startswith(("saturated", "lag:"))]
            changes += [f"{c.kind}s.{c.name}: from the Storm UI's table ({Path(path).name})" for c in topo.components
                        if before.get(c.name) != c]
            continue
        data = topo.model_dump(mode="json")
        for component, items in read_timings(path):
            try:
                changes += apply_values(data, component, items)
            except TimingsError as err:
                raise TimingsError(f"{one_line(str(path))}: {err}") from None
        try:
            topo = parse_topology(data)
        except TopologyError as err:
            raise TimingsError(f"{one_line(str(path))}: {err.problems[0] if err.problems else err}") from None
    return topo, changes, notes

"""Flux YAML, Apache Storm's topology files: import into a Topology and export back.

What is read, as Flux reads it (see docs/storm.md for the whole mapping):

* `name`, `config` (the four Storm settings Stormbound uses are taken out, the rest is
  kept for export), `spouts` and `bolts` (`id`, `className`, `parallelism`, default 1),
  `streams` (`from`, `to`, `grouping` with `type`, `args`, `streamId`, `customClass`);
* `includes`: files or classpath resources (`resource: true`), merged with Flux's rules
  (`override`; streams are appended); like Flux, includes inside an included file are not
  followed, but a cycle among them is refused;
* `${name}` from a properties file (`--filter`), `${name[i]}` for an element of a list
  property, `${ENV-NAME}` from the environment (`--env`), substituted in the text before
  it is parsed. A placeholder left unresolved is refused (Flux would pass it on verbatim);
* a file with `topologySource` (its topology is built in Java) or without any Flux
  section is refused with one line saying why.

Flux has no timing: spout rates and bursts and bolt α and σ become placeholders listed in
each component's `unannotated` (a bolt nobody subscribes to gets σ = 0: it feeds no
queue). An export keeps the model's values in each component's `config` under
`stormbound.*` (Storm ignores keys it does not know), so import -> export -> import
returns the same topology.

Every problem is a :class:`FluxError` naming the file, the line and the field. The YAML
is parsed as YAML 1.1 (as Flux's SnakeYAML does), with limits on size, nesting and the
number of nodes reached through aliases (YAML bombs).
"""

from __future__ import annotations

import io
import math
import os
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from app.core.formats import FormatError
from app.core.formats.flux_ticks import (
    SYSTEM_COMPONENT,
    TICK_FREQ,
    TICK_PREFIX,
    TICK_STREAM,
    is_tick,
    tick_name,
    tick_spouts,
)
from app.core.formats.limits import MAX_INT_DIGITS, escape
from app.core.topology import Problem, Topology, new_settings, parse_topology

MAX_BYTES = 2_000_000
MAX_DEPTH = 40  # nesting of YAML collections (Flux files need about 8)
MAX_NODES = 50_000  # nodes visited with aliases expanded (Flux files have hundreds)
MAX_INDENT = 160  # columns of block indentation before a line counts as nested too deeply

GROUPINGS: dict[str, str] = {
    "SHUFFLE": "shuffle", "FIELDS": "fields", "ALL": "all", "GLOBAL": "global", "NONE": "none",
    "LOCAL_OR_SHUFFLE": "local_or_shuffle", "DIRECT": "direct", "CUSTOM": "custom",
}
FLUX_GROUPING = {model: flux for flux, model in GROUPINGS.items()}
TOP_LEVEL = ("name", "config", "components", "spouts", "bolts", "streams", "includes", "workerHooks",
             "topologySource")
STORM_SETTINGS: dict[str, str] = {
    "topology.workers": "workers",
    "topology.acker.executors": "acker_executors",
    "topology.max.spout.pending": "max_spout_pending",
    "topology.message.timeout.secs": "message_timeout_secs",
}
# the model's values, kept in each component's `config` by an export
ANNOTATION_KEYS = {"spout": ("rate", "burst"), "bolt": ("alpha", "sigma")}
ANNOTATION_PREFIX = "stormbound."
# per declared stream: a bolt's σ, a spout's ratio (a mapping {stream: number} in the component's config)
STREAM_ANNOTATIONS = {"spout": "stream_ratio", "bolt": "stream_sigma"}
# Storm's executors take the next tuple as soon as they finish one: an import idles for no time
IMPORT_SETTINGS: dict[str, Any] = {"max_idle_time": new_settings().max_idle_time}
SETTINGS_KEYS = ("tolerance", "max_idle_time", "init_queues", "emission")
UNKNOWN_SPOUT_CLASS = "stormbound.placeholder.SpoutClass"
UNKNOWN_BOLT_CLASS = "stormbound.placeholder.BoltClass"
UNKNOWN_GROUPING_CLASS = "stormbound.placeholder.GroupingClass"
PLACEHOLDER_VALUE = 1.0

_PLACEHOLDER = re.compile(r"\$\{([^}]*)\}")
_LIST_PLACEHOLDER = re.compile(r"^(?P<list>.+)\[(?P<index>\d+)\]$")

#: Storm takes parallelism and task counts as a Java int: larger values are refused
STORM_MAX_INT = 2**31 - 1


class FluxError(FormatError):
    """A Flux file that cannot be imported: `str()` is one line `FILE: line N: field: problem`."""

    def __init__(self, file: str | os.PathLike[str], line: int | None, field: str, message: str):
        self.file = str(file)
        self.line = line
        self.field = field
        self.message = message
        where = f"line {line}: " if line else ""
        super().__init__([Problem(f"{where}{field}" if field else where.rstrip(": "), message)])

    def __str__(self) -> str:
        return f"{self.file}: {self.problems[0]}"


@dataclass
class FluxOptions:
    """How to read a Flux file: Flux's `--filter`, `--env`, and where resource includes live."""

    filter: Path | None = None
    env: bool = False
    resources: list[Path] = field(default_factory=list)
    environ: Mapping[str, str] | None = None  # None = os.environ


@dataclass
class Vertex:
    """One spout or bolt definition and the file it was read from."""

    kind: str
    id: str
    class_name: str | None
    parallelism: int | None  # None: not given (Flux uses 1)
    file: Path
    line: int
    annotations: dict[str, Any] = field(default_factory=dict)
    num_tasks: int | None = None  # numTasks: None when not given (Storm makes one task per executor)
    tick_secs: Any = None  # its own config's topology.tick.tuple.freq.secs, if any


@dataclass
class Stream:
    """One `streams` entry."""

    source: str
    target: str
    grouping: str
    fields: list[str]
    stream_id: str | None
    custom_class: str | None
    file: Path
    line: int
    label: str


@dataclass
class FluxDocument:
    """A Flux file with its includes merged, as Flux would build it."""

    path: Path
    name: str | None
    config: dict[str, Any]
    spouts: dict[str, Vertex]
    bolts: dict[str, Vertex]
    streams: list[Stream]
    files: list[Path]
    notes: list[str]


@dataclass
class FluxImport:
    """The imported topology, what the import noticed, and the merged Flux document."""

    topology: Topology
    notes: list[str]
    document: FluxDocument


# ---- properties and substitution --------------------------------------------


def read_properties(path: str | os.PathLike[str]) -> dict[str, str]:
    """A Java `.properties` file (ISO-8859-1, `key=value`, `key: value` or `key value`, `\\` continuations)."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise FluxError(p, None, "", "no such properties file") from None
    except IsADirectoryError:
        raise FluxError(p, None, "", "is a folder, not a properties file") from None
    except OSError as err:
        raise FluxError(p, None, "", err.strerror or str(err)) from None
    lines = raw.decode("latin-1").splitlines()
    props: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i].lstrip(" \t\f")
        i += 1
        if not line or line[0] in "#!":
            continue
        while _continues(line) and i < len(lines):
            line = line[:-1] + lines[i].lstrip(" \t\f")
            i += 1
        if _continues(line):
            line = line[:-1]
        key, value = _split_property(line)
        props[key] = value
    return props


def _continues(line: str) -> bool:
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1


def _split_property(line: str) -> tuple[str, str]:
    key_chars: list[str] = []
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == "\\" and i + 1 < len(line):
            key_chars.append(line[i:i + 2])
            i += 2
            continue
        if ch in "=: \t\f":
            break
        key_chars.append(ch)
        i += 1
    rest = line[i:].lstrip(" \t\f")
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(" \t\f")
    return _unescape("".join(key_chars)), _unescape(rest)


def _unescape(text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch != "\\" or i + 1 >= len(text):
            out.append(ch)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[i + 2:i + 6] or ""):
            out.append(chr(int(text[i + 2:i + 6], 16)))
            i += 6
            continue
        out.append({"t": "\t", "n": "\n", "r": "\r", "f": "\f"}.get(nxt, nxt))
        i += 2
    return "".join(out)


def _list_element(value: str, index: int) -> str | None:
    """Flux's `${list[i]}`: element i of a property written like `["a", "b"]`."""
    items = value.strip()[1:-1].split(",")
    if index >= len(items):
        return None
    item = items[index].strip()
    return item[1:-1] if len(item) >= 2 else item


def _resolve(var: str, props: dict[str, str] | None, options: FluxOptions) -> str | None:
    if var.startswith("ENV-") and options.env:
        environ = os.environ if options.environ is None else options.environ
        return environ.get(var[4:])
    if props is None:
        return None
    listed = _LIST_PLACEHOLDER.match(var)
    if listed and listed["list"] in props:
        return _list_element(props[listed["list"]], int(listed["index"]))
    return props.get(var)


def substitute(text: str, props: dict[str, str] | None, options: FluxOptions) -> str:
    """Replace every resolvable `${...}` (Flux substitutes the text before parsing it); others stay."""
    def replace(m: re.Match[str]) -> str:
        value = _resolve(m.group(1), props, options)
        return m.group(0) if value is None else value

    return _PLACEHOLDER.sub(replace, text)


def _placeholder_problem(var: str, options: FluxOptions) -> str:
    if var.startswith("ENV-"):
        if not options.env:
            return f"${{{var}}} needs --env (environment variable substitution)"
        return f"${{{var}}}: environment variable {var[4:]} is not set"
    if options.filter is None:
        return f"${{{var}}} is not defined: give --filter FILE.properties"
    return f"${{{var}}} is not defined in {options.filter.name}"


# ---- safe YAML ---------------------------------------------------------------


def _yaml():
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt", pure=True)
    yaml.version = (1, 1)  # Flux reads with SnakeYAML: YAML 1.1 (yes/no booleans, 010 octal)
    yaml.allow_duplicate_keys = False
    return yaml


def _top_key_at(text: str, line: int) -> str:
    """The top-level key whose block holds `line` (1-based), for naming a field in a syntax error."""
    lines = text.splitlines()
    for i in range(min(line, len(lines)) - 1, -1, -1):
        m = re.match(r"^([A-Za-z_][\w.-]*)\s*:", lines[i])
        if m:
            return m.group(1)
    return ""


def _check_nesting(text: str, file: Path) -> None:
    """Refuse nesting deeper than the parser can take before it is parsed (it recurses per level)."""
    depth = 0
    quote = ""
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.lstrip(" -")
        if len(line) - len(stripped) > MAX_INDENT and stripped and not stripped.startswith("#"):
            raise FluxError(file, number, _top_key_at(text, number), f"nested too deeply (more than {MAX_INDENT} "
                                                                     "columns of indentation)")
        i = 0
        while i < len(line):
            ch = line[i]
            if quote:
                if ch == "\\" and quote == '"':
                    i += 1
                elif ch == quote:
                    quote = ""
            elif ch == "#" and (i == 0 or line[i - 1] in " \t"):
                break
            elif ch in "\"'" and (i == 0 or line[i - 1] in " \t[{,:"):
                quote = ch
            elif ch in "[{":
                depth += 1
                if depth > MAX_DEPTH:
                    raise FluxError(file, number, _top_key_at(text, number),
                                    f"nested too deeply (more than {MAX_DEPTH} levels of brackets)")
            elif ch in "]}":
                depth = max(0, depth - 1)
            i += 1
        if quote == "'":
            quote = ""  # single-quoted scalars rarely span lines; do not let one stray quote hide the rest


def parse_yaml(text: str, file: Path, options: FluxOptions | None = None) -> Any:
    """The round-trip YAML tree of a Flux file (line numbers kept), or FluxError naming the line.

    A `${...}` left in the text can itself break the YAML (inside `[...]` or `{...}`); then
    the missing substitution is what gets reported.
    """
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    if len(text) > MAX_BYTES:
        raise FluxError(file, None, "", f"is larger than {MAX_BYTES // 1_000_000} MB: not a Flux file")
    if not text.strip():
        raise FluxError(file, None, "", "is empty")
    _check_nesting(text, file)
    _refuse_json_document(text, file)
    try:
        with warnings.catch_warnings():  # ruamel's multi-line warnings (a reused anchor...) are not for the user
            warnings.simplefilter("ignore")
            return _yaml().load(text)
    except RecursionError:
        raise FluxError(file, None, "", "nested too deeply to be a Flux file") from None
    except ValueError as err:  # Python's integer digit limit, met while ruamel converts a scalar
        if "digits" not in str(err):
            raise
        m = re.search(rf"\d{{{MAX_INT_DIGITS + 1},}}", text)
        line = text.count("\n", 0, m.start()) + 1 if m else None
        raise FluxError(file, line, _top_key_at(text, line) if line else "",
                        f"integer is too large (limit {MAX_INT_DIGITS} digits)") from None
    except MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = mark.line + 1 if mark is not None else None
        opened = err.context_mark.line + 1 if err.context_mark is not None else line
        problem = (err.problem or err.context or "invalid").strip()
        if "duplicate key" in problem:
            problem = problem.split(" with value")[0]
        elif opened and line and opened != line:
            problem += f" (in what starts on line {opened})"
        field = _top_key_at(text, opened) if opened else ""
        lines = text.splitlines()
        for number in dict.fromkeys(n for n in (opened, line) if n):
            found = _PLACEHOLDER.search(lines[number - 1]) if number <= len(lines) else None
            if found:
                raise FluxError(file, number, _top_key_at(text, number),
                                _placeholder_problem(found.group(1), options or FluxOptions())) from None
        if "expected a single document" in str(err) or "but found another document" in str(err):
            problem, field = "holds more than one YAML document (Flux reads one)", ""
        raise FluxError(file, line, field, f"not valid YAML: {problem}") from None
    except YAMLError as err:
        raise FluxError(file, None, "", f"not valid YAML: {str(err).splitlines()[0]}") from None


def _refuse_json_document(text: str, file: Path) -> None:
    """A Stormbound document or a D-VerT configuration given to the Flux reader: one line saying what to do."""
    if text.lstrip()[:1] != "{":
        return
    import json

    try:
        data = json.loads(text)
    except ValueError:
        return  # YAML flow mappings are not JSON: let the YAML parser read (or refuse) it
    if isinstance(data, dict) and ("spouts" in data or "bolts" in data or "topology" in data
                                   or "schema_version" in data):
        raise FluxError(file, 1, "", "is a JSON topology document, not a Flux file: check, verify and the app "
                                     "read it as it is (nothing to import)")


def _line_of(container: Any, key: Any) -> int | None:
    """1-based line of a key in a round-trip mapping or an item of a round-trip sequence."""
    lc = getattr(container, "lc", None)
    if lc is None:
        return None
    try:
        if isinstance(container, dict):
            return lc.key(key)[0] + 1
        return lc.item(key)[0] + 1
    except (KeyError, IndexError, TypeError, AttributeError):
        return getattr(lc, "line", None) + 1 if getattr(lc, "line", None) is not None else None


def _own_line(container: Any) -> int | None:
    lc = getattr(container, "lc", None)
    return lc.line + 1 if lc is not None and lc.line is not None else None


def _item_label(path: str, index: int, item: Any) -> str:
    ident = item.get("id") if isinstance(item, dict) else None
    if isinstance(ident, (str, int)) and not isinstance(ident, bool) and str(ident):
        return f"{path}.{ident}"
    return f"{path}[{index}]"


@dataclass(frozen=True)
class Unresolved:
    """A `${...}` that no substitution resolved: Flux passes it on verbatim, and so does the import."""

    file: Path
    line: int | None
    path: str
    var: str

    def note(self, options: FluxOptions) -> str:
        where = f"{self.file.name} line {self.line}" if self.line else self.file.name
        why = _placeholder_problem(self.var, options)
        return f"{where}: {self.path}: ${{{self.var}}} is left as it is, as Flux leaves it ({why})"


def unresolved_notes(found: list[Unresolved], options: FluxOptions, each: int = 3) -> list[str]:
    """A note per unresolved `${...}`, or one per file when it has more than `each`."""
    by_file: dict[Path, list[Unresolved]] = {}
    for u in found:
        by_file.setdefault(u.file, []).append(u)
    notes: list[str] = []
    for file, items in by_file.items():
        if len(items) <= each:
            notes += [u.note(options) for u in items]
            continue
        why = sorted({_placeholder_problem(u.var, options).split(" ", 1)[1] for u in items})
        where = ", ".join(f"line {u.line} ${{{u.var}}}" if u.line else f"${{{u.var}}}" for u in items)
        notes.append(f"{file.name}: {len(items)} placeholders are left as they are, as Flux leaves them "
                     f"({'; '.join(why)}): {where}")
    return notes


def check_tree(root: Any, file: Path, options: FluxOptions) -> list[Unresolved]:
    """Walk every node once in document order (aliases expanded) with limits; return the unresolved `${...}`."""
    stack: list[tuple[Any, str, int, int | None]] = [(root, "", 0, _own_line(root))]
    visited = 0
    unresolved: list[Unresolved] = []
    while stack:
        node, path, depth, line = stack.pop()
        visited += 1
        if visited > MAX_NODES:
            raise FluxError(file, line, path.split("[")[0] or "document",
                            f"expands to more than {MAX_NODES} YAML nodes (an alias bomb?)")
        if depth > MAX_DEPTH:
            raise FluxError(file, line, path or "document", f"nested too deeply (more than {MAX_DEPTH} levels)")
        children: list[tuple[Any, str, int, int | None]] = []
        if isinstance(node, str):
            unresolved += [Unresolved(file, line, path or "document", m.group(1)) for m in _PLACEHOLDER.finditer(node)]
        elif isinstance(node, float) and not math.isfinite(node):  # .nan/.inf: a saved document could not keep it
            raise FluxError(file, line, path or "document", f"must be a finite number, not {node}")
        elif isinstance(node, dict):
            for key, value in node.items():
                label = f"{path}.{key}".lstrip(".")
                if isinstance(key, str):
                    unresolved += [Unresolved(file, _line_of(node, key), label, m.group(1))
                                   for m in _PLACEHOLDER.finditer(key)]
                children.append((value, label, depth + 1, _line_of(node, key) or line))
        elif isinstance(node, list):
            for i, value in enumerate(node):
                children.append((value, _item_label(path, i, value), depth + 1, _line_of(node, i) or line))
        stack.extend(reversed(children))
    return unresolved


def plain(node: Any) -> Any:
    """A round-trip YAML value as plain JSON-able Python (call after :func:`check_tree`)."""
    import datetime

    if isinstance(node, dict):
        return {str(k): plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [plain(v) for v in node]
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, (datetime.date, datetime.datetime)):
        return node.isoformat()
    if isinstance(node, bytes):
        return node.decode("latin-1")
    return str(node)


# ---- reading one file and its includes ----------------------------------------


def _read(path: Path, what: str = "") -> str:
    from app.core.fileio import check_regular

    check_regular(path, lambda reason: FluxError(path, None, what, reason))
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise FluxError(path, None, what, "no such file") from None
    except IsADirectoryError:
        raise FluxError(path, None, what, "is a folder, not a Flux file") from None
    except OSError as err:
        raise FluxError(path, None, what, err.strerror or str(err)) from None
    if len(raw) > MAX_BYTES:
        raise FluxError(path, None, "", f"is larger than {MAX_BYTES // 1_000_000} MB: not a Flux file")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise FluxError(path, line, "",
                        f"is not UTF-8 text: byte 0x{raw[err.start]:02x} at offset {err.start}") from None


@dataclass
class _Parsed:
    path: Path
    text: str
    root: Any
    unresolved: list[Unresolved] = field(default_factory=list)
    unsubstituted_env: Any = None  # the tree with ${ENV-...} kept as written (None: no ${ENV-...} was substituted)


def load_tree(path: Path, options: FluxOptions, props: dict[str, str] | None) -> _Parsed:
    """Read, substitute, parse and check one Flux file (no includes)."""
    raw = _read(path)
    text = substitute(raw, props, options)
    root = parse_yaml(text, path, options)
    if root is None:
        raise FluxError(path, None, "", "is empty")
    if not isinstance(root, dict):
        raise FluxError(path, 1, "", f"not a Flux file: expected a mapping of {', '.join(TOP_LEVEL[:6])}, ..., "
                                     f"found a {type(plain(root)).__name__}")
    unresolved = check_tree(root, path, options)
    kept = None
    if options.env and "${ENV-" in raw:  # the references themselves, for the config the document keeps
        try:
            kept = parse_yaml(substitute(raw, props, replace(options, env=False)), path, options)
        except FluxError:
            kept = None
    return _Parsed(path, text, root, unresolved, kept)


def _require_flux(parsed: _Parsed, included: bool = False) -> None:
    root, path = parsed.root, parsed.path
    if "topologySource" in root and not included:
        source = root.get("topologySource")
        cls = source.get("className") if isinstance(source, dict) else None
        raise FluxError(path, _line_of(root, "topologySource"), "topologySource",
                        f"the topology is built by Java code{f' ({cls})' if cls else ''}, which Stormbound "
                        "cannot read: import it from the Storm UI while it runs, or describe it with spouts, bolts "
                        "and streams")
    wanted = TOP_LEVEL if included else ("spouts", "bolts", "streams", "includes")  # an include may hold config only
    if not any(k in root for k in wanted):
        raise FluxError(path, 1, "", f"not a Flux file: no {', '.join(wanted[:-1])} or {wanted[-1]}")
    for key in root:
        if key not in TOP_LEVEL:
            raise FluxError(path, _line_of(root, key), str(key),
                            f"unknown field (Flux reads {', '.join(TOP_LEVEL)}; it would refuse this file)")


def _resolve_include(include: Any, including: Path, options: FluxOptions, line: int | None,
                     label: str) -> Path:
    if not isinstance(include, dict):
        raise FluxError(including, line, label, "expected a mapping with `file` (and `resource`, `override`)")
    name = include.get("file")
    if not isinstance(name, str) or not name.strip():
        raise FluxError(including, _line_of(include, "file") or line, f"{label}.file", "missing or not a string")
    resource = include.get("resource", False)
    if not isinstance(resource, bool):
        raise FluxError(including, _line_of(include, "resource") or line, f"{label}.resource", "must be true or false")
    if resource:
        rel = name.lstrip("/")
        candidates = [Path(d) / rel for d in options.resources]
        candidates += [including.parent / rel, including.parent / Path(rel).name]
        for candidate in candidates:
            if candidate.is_file():
                return candidate.resolve()
        looked = ", ".join(dict.fromkeys(str(c.parent) for c in candidates))
        raise FluxError(including, _line_of(include, "file") or line, f"{label}.file",
                        f"resource {name} not found (looked in {looked}; give --resources DIR)")
    candidate = Path(name)
    tries = [candidate] if candidate.is_absolute() else [including.parent / candidate, Path.cwd() / candidate]
    for c in tries:
        if c.is_file():
            return c.resolve()
    raise FluxError(including, _line_of(include, "file") or line, f"{label}.file",
                    f"included file {name} not found (looked beside {including.name} and in the working folder)")


def _includes(parsed: _Parsed) -> list[tuple[Any, int | None, str]]:
    items = parsed.root.get("includes")
    if items is None:
        return []
    if not isinstance(items, list):
        raise FluxError(parsed.path, _line_of(parsed.root, "includes"), "includes", "must be a list")
    return [(inc, _line_of(items, i), f"includes[{i}]") for i, inc in enumerate(items)]


def _string(value: Any, path: Path, line: int | None, label: str, required: bool = True) -> str | None:
    if value is not None and not isinstance(value, (str, int)) and isinstance(plain(value), str):
        value = plain(value)  # an explicitly tagged scalar (`!!str s`) is a string all the same
    if value is None:
        if required:
            raise FluxError(path, line, label, "missing")
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise FluxError(path, line, label, f"must be a string, not {type(plain(value)).__name__}")
    text = str(value)
    if required and not text.strip():
        raise FluxError(path, line, label, "must not be empty")
    return text


def _vertices(parsed: _Parsed, key: str) -> list[Vertex]:
    root, path = parsed.root, parsed.path
    items = root.get(key)
    if items is None:
        return []
    if not isinstance(items, list):
        raise FluxError(path, _line_of(root, key), key, "must be a list of definitions")
    kind = key[:-1]
    out: list[Vertex] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(items):
        line = _line_of(items, i)
        if not isinstance(item, dict):
            raise FluxError(path, line, f"{key}[{i}]", "expected a mapping with id and className")
        ident = _string(item.get("id"), path, _line_of(item, "id") or line, f"{key}[{i}].id")
        assert ident is not None
        label = f"{key}.{ident}"
        if ident in seen:
            raise FluxError(path, line, f"{label}.id",
                            f"duplicate id '{ident}' (also line {seen[ident]}; Flux would keep only the last)")
        seen[ident] = line or 0
        class_name = _string(item.get("className"), path, _line_of(item, "className") or line, f"{label}.className")
        parallelism, num_tasks = item.get("parallelism"), item.get("numTasks")
        for key, value in (("parallelism", parallelism), ("numTasks", num_tasks)):
            if value is not None:
                if isinstance(value, str) and (var := _PLACEHOLDER.search(value)):
                    raise FluxError(path, _line_of(item, key), f"{label}.{key}",
                                    _placeholder_problem(var.group(1), FluxOptions()))
                if isinstance(value, bool) or not isinstance(value, int):
                    raise FluxError(path, _line_of(item, key), f"{label}.{key}",
                                    f"must be a whole number, not {plain(value)!r}")
                if value < 1:
                    raise FluxError(path, _line_of(item, key), f"{label}.{key}",
                                    f"must be at least 1 (Storm refuses {value})")
                if value > STORM_MAX_INT:
                    raise FluxError(path, _line_of(item, key), f"{label}.{key}",
                                    f"{value:.3g} is over Storm's largest {key} {STORM_MAX_INT} (2^31-1)")
        annotations: dict[str, Any] = {}
        config = item.get("config")
        tick_secs = plain(config.get(TICK_FREQ)) if isinstance(config, dict) else None
        if isinstance(config, dict):
            for name in (*ANNOTATION_KEYS[kind], "checked", STREAM_ANNOTATIONS[kind]):
                if f"{ANNOTATION_PREFIX}{name}" in config:
                    annotations[name] = (plain(config[f"{ANNOTATION_PREFIX}{name}"]),
                                         _line_of(config, f"{ANNOTATION_PREFIX}{name}"))
        elif config is not None:
            raise FluxError(path, _line_of(item, "config"), f"{label}.config", "must be a mapping")
        out.append(Vertex(kind, ident, class_name, int(parallelism) if parallelism is not None else None,
                          path, line or 0, annotations, int(num_tasks) if num_tasks is not None else None,
                          tick_secs))
    return out


def _streams(parsed: _Parsed) -> list[Stream]:
    root, path = parsed.root, parsed.path
    items = root.get("streams")
    if items is None:
        return []
    if not isinstance(items, list):
        raise FluxError(path, _line_of(root, "streams"), "streams", "must be a list")
    out: list[Stream] = []
    for i, item in enumerate(items):
        line = _line_of(items, i)
        label = f"streams[{i}]"
        if not isinstance(item, dict):
            raise FluxError(path, line, label, "expected a mapping with from, to and grouping")
        source = _string(item.get("from"), path, _line_of(item, "from") or line, f"{label}.from")
        target = _string(item.get("to"), path, _line_of(item, "to") or line, f"{label}.to")
        if "streamId" in item:
            raise FluxError(path, _line_of(item, "streamId"), f"{label}.streamId",
                            "belongs under grouping (grouping.streamId), where Flux reads it")
        grouping = item.get("grouping")
        gline = _line_of(item, "grouping") or line
        if not isinstance(grouping, dict):
            raise FluxError(path, gline, f"{label}.grouping", "missing (a mapping with type)")
        kind = grouping.get("type")
        if kind is not None and not isinstance(kind, str) and isinstance(plain(kind), str):
            kind = plain(kind)  # `type: !!str SHUFFLE`
        tline = _line_of(grouping, "type") or gline
        if kind is None:
            raise FluxError(path, tline, f"{label}.grouping.type", f"missing (one of {', '.join(GROUPINGS)})")
        if not isinstance(kind, str) or kind not in GROUPINGS:
            hint = f"; Flux reads it in capitals: {str(kind).upper()}" if str(kind).upper() in GROUPINGS else ""
            raise FluxError(path, tline, f"{label}.grouping.type",
                            f"unknown grouping '{plain(kind)}' (expected one of {', '.join(GROUPINGS)}){hint}")
        args = plain(grouping.get("args"))  # plain strings, also when tagged (`!!str`)
        fields: list[str] = []
        if kind == "FIELDS":
            if not isinstance(args, list) or not args or not all(isinstance(a, str) and a for a in args):
                raise FluxError(path, _line_of(grouping, "args") or tline, f"{label}.grouping.args",
                                "a FIELDS grouping needs a list of field names")
            fields = [str(a) for a in args]
        stream_id = _string(grouping.get("streamId"), path, _line_of(grouping, "streamId") or tline,
                            f"{label}.grouping.streamId", required=False)
        custom_class = None
        if kind == "CUSTOM":
            custom = grouping.get("customClass")
            cline = _line_of(grouping, "customClass") or tline
            if not isinstance(custom, dict):
                raise FluxError(path, cline, f"{label}.grouping.customClass",
                                "a CUSTOM grouping needs customClass with its className")
            custom_class = _string(custom.get("className"), path, _line_of(custom, "className") or cline,
                                   f"{label}.grouping.customClass.className")
        assert source is not None and target is not None
        out.append(Stream(source, target, GROUPINGS[kind], fields, stream_id, custom_class, path, line or 0, label))
    return out


def _config(parsed: _Parsed) -> dict[str, Any]:
    config = parsed.root.get("config")
    if config is None:
        return {}
    if not isinstance(config, dict):
        raise FluxError(parsed.path, _line_of(parsed.root, "config"), "config", "must be a mapping")
    out = {str(k): (v, _line_of(config, k)) for k, v in config.items()}
    written = parsed.unsubstituted_env.get("config") if isinstance(parsed.unsubstituted_env, dict) else None
    if isinstance(written, dict):
        for key, value in written.items():  # ${ENV-...} stays a reference: never a secret or a broker list
            if str(key) in out and str(key) not in STORM_SETTINGS and "${ENV-" in str(plain(value)):
                out[str(key)] = (value, out[str(key)][1])
    return out


def read_flux(path: str | os.PathLike[str], options: FluxOptions | None = None) -> FluxDocument:
    """A Flux file with its includes merged the way Flux merges them."""
    options = options or FluxOptions()
    main_path = Path(path)
    props = read_properties(options.filter) if options.filter is not None else None
    main = load_tree(main_path, options, props)
    _require_flux(main)
    notes: list[str] = []
    files = [main_path.resolve()]
    name = main.root.get("name")
    name_line = _line_of(main.root, "name")
    config = _config(main)
    spouts = {v.id: v for v in _vertices(main, "spouts")}
    bolts = {v.id: v for v in _vertices(main, "bolts")}
    streams = _streams(main)
    unresolved = list(main.unresolved)
    for include, line, label in _includes(main):
        target = _resolve_include(include, main_path, options, line, label)
        if target in files:
            raise FluxError(main_path, line, f"{label}.file", f"cyclic include: {target.name} is already being read")
        override = include.get("override", False)
        if not isinstance(override, bool):
            raise FluxError(main_path, _line_of(include, "override") or line, f"{label}.override",
                            "must be true or false")
        inc = load_tree(target, options, props)
        _require_flux(inc, included=True)
        files.append(target)
        unresolved += inc.unresolved
        if "topologySource" in inc.root:
            notes.append(f"{target.name}: its topologySource is not merged, as Flux does not merge it")
        for nested, nline, nlabel in _includes(inc):
            try:
                again = _resolve_include(nested, target, options, nline, nlabel)
            except FluxError:
                continue  # Flux does not follow it, so a missing one does not matter
            if again in files:
                raise FluxError(target, nline, f"{nlabel}.file",
                                f"cyclic include: {again.name} includes {target.name}, which includes it again")
            notes.append(f"{target.name}: its own includes are not followed, as Flux does not follow them")
        inc_name = inc.root.get("name")
        if inc_name is not None and (name is None or override):
            name, name_line = inc_name, _line_of(inc.root, "name")
        for key, value in _config(inc).items():
            if override or key not in config:
                config[key] = value
        for table, found in ((spouts, _vertices(inc, "spouts")), (bolts, _vertices(inc, "bolts"))):
            for vertex in found:
                if vertex.id not in table or override:
                    table[vertex.id] = vertex
                else:
                    notes.append(f"{target.name}: {vertex.kind} '{vertex.id}' is already defined and the include "
                                 "does not override: ignored, as Flux ignores it")
        streams.extend(_streams(inc))
    notes += unresolved_notes(unresolved, options)
    topo_name = _string(name, main_path, name_line, "name", required=False) if name is not None else None
    plain_config = {key: plain(value) for key, (value, _line) in config.items()}
    doc = FluxDocument(main_path, topo_name, plain_config, spouts, bolts, streams, files, notes)
    _check_graph(doc, {key: line for key, (_value, line) in config.items()})
    return doc


def _check_graph(doc: FluxDocument, config_lines: dict[str, int | None]) -> None:
    for ident in doc.spouts:
        if ident in doc.bolts:
            bolt = doc.bolts[ident]
            raise FluxError(bolt.file, bolt.line, f"bolts.{ident}.id", f"'{ident}' is both a spout and a bolt")
    components = ", ".join([*doc.spouts, *doc.bolts])
    fed = {s.target for s in doc.streams}
    for s in doc.streams:
        if is_tick(s.source, s.stream_id):
            if s.target not in doc.bolts:
                raise FluxError(s.file, s.line, f"{s.label}.to", f"unknown bolt '{s.target}' (known: {components})")
            continue
        if s.source not in doc.spouts and s.source not in doc.bolts:
            hint = ("; tick tuples come from __system on the stream __tick" if s.source == SYSTEM_COMPONENT else "")
            raise FluxError(s.file, s.line, f"{s.label}.from",
                            f"unknown component '{s.source}' (known: {components}){hint}")
        if s.target in doc.spouts:
            raise FluxError(s.file, s.line, f"{s.label}.to", f"'{s.target}' is a spout: streams go into bolts")
        if s.target not in doc.bolts:
            raise FluxError(s.file, s.line, f"{s.label}.to", f"unknown bolt '{s.target}' (known: {components})")
        if s.source in doc.bolts and s.source not in fed:
            raise FluxError(s.file, s.line, f"{s.label}.from",
                            f"bolt '{s.source}' receives no stream, so Flux never declares it and Storm refuses "
                            "a subscription to it")
    for key, attr in STORM_SETTINGS.items():
        value = doc.config.get(key)
        if value is None:
            continue
        least = 0 if attr == "acker_executors" else 1
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise FluxError(doc.path, config_lines.get(key), f"config.{key}",
                            f"must be a whole number of at least {least}, not {value!r}")


# ---- Flux -> Topology ----------------------------------------------------------

def _annotation(vertex: Vertex, key: str, kind: type) -> Any:
    if key not in vertex.annotations:
        return None
    value, line = vertex.annotations[key]
    label = f"{vertex.kind}s.{vertex.id}.config.{ANNOTATION_PREFIX}{key}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise FluxError(vertex.file, line or vertex.line, label, f"must be a number, not {escape(repr(value))}")
    if not math.isfinite(value):
        raise FluxError(vertex.file, line or vertex.line, label, f"must be a finite number, not {value}")
    try:
        return kind(value)
    except OverflowError:
        raise FluxError(vertex.file, line or vertex.line, label, "number is too large") from None


def _stream_values(vertex: Vertex) -> dict[str, float]:
    """The `stormbound.stream_sigma` (bolt) or `stormbound.stream_ratio` (spout) mapping of a component."""
    key = STREAM_ANNOTATIONS[vertex.kind]
    if key not in vertex.annotations:
        return {}
    value, line = vertex.annotations[key]
    label = f"{vertex.kind}s.{vertex.id}.config.{ANNOTATION_PREFIX}{key}"
    if not isinstance(value, dict):
        raise FluxError(vertex.file, line or vertex.line, label, "must be a mapping of stream names to numbers")
    out: dict[str, float] = {}
    for stream, number in value.items():
        if isinstance(number, bool) or not isinstance(number, (int, float)) or not math.isfinite(number) \
                or number < 0:
            raise FluxError(vertex.file, line or vertex.line, f"{label}.{stream}",
                            f"must be a finite number of at least 0, not {escape(repr(number))}")
        out[str(stream)] = float(number)
    return out


def _declared_streams(doc: FluxDocument, vertex: Vertex) -> tuple[list[str], dict[str, float]]:
    """Every `streamId` the file's streams read from `vertex` (and every stream its annotation names),
    besides 'default', with the σ (ratio) annotated for it; the others stay unannotated."""
    values = _stream_values(vertex)
    names = {s.stream_id for s in doc.streams if s.source == vertex.id and s.stream_id not in (None, "default")}
    names |= set(values) - {"default"}
    return sorted(n for n in names if n is not None), {k: v for k, v in values.items() if k != "default"}


def to_topology(doc: FluxDocument) -> FluxImport:
    """The Stormbound topology Flux would deploy; timing Flux lacks stays unannotated."""
    from app.core.layout import layered_layout

    notes = list(doc.notes)
    fed = {s.target for s in doc.streams}
    feeding = {s.source for s in doc.streams if s.stream_id in (None, "default")}  # its default stream is read
    spouts: list[dict[str, Any]] = []
    for v in doc.spouts.values():
        rate, burst = _annotation(v, "rate", float), _annotation(v, "burst", int)
        spouts.append({"name": v.id, "rate": rate if rate is not None else PLACEHOLDER_VALUE,
                       "burst": burst if burst is not None else 1,
                       "class_name": None if v.class_name == UNKNOWN_SPOUT_CLASS else v.class_name,
                       "executors": v.parallelism if v.parallelism is not None else 1,
                       "unannotated": [k for k, x in (("rate", rate), ("burst", burst)) if x is None]})
        spouts[-1]["streams"], spouts[-1]["stream_ratio"] = _declared_streams(doc, v)
    bolts: list[dict[str, Any]] = []
    checked: list[str] = []
    for v in doc.bolts.values():
        if v.id not in fed:
            notes.append(f"bolts.{v.id}: no stream goes into it, so Flux does not add it to the topology: left out")
            continue
        alpha, sigma = _annotation(v, "alpha", float), _annotation(v, "sigma", float)
        missing = [] if alpha is not None else ["alpha"]
        if sigma is None and v.id in feeding:
            missing.append("sigma")
        bolts.append({"name": v.id, "alpha": alpha if alpha is not None else PLACEHOLDER_VALUE,
                      "sigma": sigma if sigma is not None else (PLACEHOLDER_VALUE if v.id in feeding else 0.0),
                      "parallelism": v.parallelism if v.parallelism is not None else 1,
                      "class_name": None if v.class_name == UNKNOWN_BOLT_CLASS else v.class_name,
                      "tasks": v.num_tasks, "unannotated": missing})
        bolts[-1]["streams"], bolts[-1]["stream_sigma"] = _declared_streams(doc, v)
        if v.annotations.get("checked", (False, None))[0] is True:
            checked.append(v.id)
    ticks = tick_spouts(doc, notes, PLACEHOLDER_VALUE)
    spouts += ticks
    subscriptions: dict[tuple[str, str, str | None], dict[str, Any]] = {}
    for s in doc.streams:
        if is_tick(s.source, s.stream_id):
            s = replace(s, source=tick_name(s.target))
        key = (s.source, s.target, s.stream_id)
        if key in subscriptions:
            notes.append(f"{s.label}: {s.source} -> {s.target} is declared again; Storm keeps only the last grouping")
        subscriptions[key] = {"source": s.source, "target": s.target, "grouping": s.grouping, "fields": s.fields,
                              "stream": s.stream_id,
                              "custom_class": None if s.custom_class == UNKNOWN_GROUPING_CLASS else s.custom_class}
        if s.grouping in ("all", "global", "direct", "custom"):
            notes.append(f"{s.label}: {FLUX_GROUPING[s.grouping]} grouping into {s.target}: the model spreads "
                         "tuples evenly over its tasks (see docs/storm.md)")
    storm: dict[str, Any] = {attr: doc.config[key] for key, attr in STORM_SETTINGS.items()
                             if doc.config.get(key) is not None}
    settings: dict[str, Any] = dict(IMPORT_SETTINGS)
    rest: dict[str, Any] = {}
    for key, value in doc.config.items():
        if key in STORM_SETTINGS:
            continue
        short = key.removeprefix(ANNOTATION_PREFIX)
        if key.startswith(ANNOTATION_PREFIX) and short in SETTINGS_KEYS:
            settings[short] = value
        else:
            rest[key] = value
    storm["config"] = rest
    data = {
        "name": doc.name or doc.path.stem,
        "spouts": spouts,
        "bolts": bolts,
        "subscriptions": list(subscriptions.values()),
        "settings": settings,
        "verification": {"checked": checked},
        "storm": storm,
    }
    try:
        topo = parse_topology(data)
    except FormatError:
        raise
    except Exception as err:  # a value the model refuses (say a negative annotation): name the file
        problems = getattr(err, "problems", None)
        first = problems[0] if problems else Problem("", str(err))
        raise FluxError(doc.path, None, first.path, first.message) from None
    return FluxImport(topo.model_copy(update={"layout": layered_layout(topo)}), notes, doc)


def import_flux(path: str | os.PathLike[str], options: FluxOptions | None = None) -> FluxImport:
    """Read a Flux file (with includes and substitutions) into a Topology; remembers where it came from."""
    options = options or FluxOptions()
    doc = read_flux(path, options)
    result = to_topology(doc)
    storm = result.topology.storm.model_copy(update={
        "flux_file": str(Path(path).resolve()),
        "flux_filter": str(options.filter.resolve()) if options.filter is not None else None,
        "flux_env": options.env,
        "flux_resources": [str(Path(r).resolve()) for r in options.resources],
    })
    result.topology = result.topology.model_copy(update={"storm": storm})
    return result


def options_of(topo: Topology) -> FluxOptions:
    """The options a document was imported with (to read its Flux file again)."""
    s = topo.storm
    return FluxOptions(filter=Path(s.flux_filter) if s.flux_filter else None, env=s.flux_env,
                       resources=[Path(r) for r in s.flux_resources])


# ---- Topology -> Flux ------------------------------------------------------------


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() and abs(value) < 1e15 else float(value)


def to_flux_data(topo: Topology) -> dict[str, Any]:
    """The Flux document (plain data) for a topology, with the model's values under `stormbound.*`."""
    names = {c.id: c.name for c in topo.components}
    config: dict[str, Any] = {}
    for key, attr in STORM_SETTINGS.items():
        value = getattr(topo.storm, attr)
        if value is not None:
            config[key] = value
    config.update(topo.storm.config)
    defaults = type(topo.settings)(**IMPORT_SETTINGS)  # what an import of the file would assume
    for key in SETTINGS_KEYS:
        value = getattr(topo.settings, key)
        if value != getattr(defaults, key):
            config[f"{ANNOTATION_PREFIX}{key}"] = value if isinstance(value, str) else _number(value)
    checked = set(topo.verification.checked)

    def annotations(c: Any, keys: tuple[str, ...]) -> dict[str, Any]:
        out = {f"{ANNOTATION_PREFIX}{k}": _number(getattr(c, k)) for k in keys if k not in c.unannotated}
        values = c.stream_sigma if c.kind == "bolt" else c.stream_ratio
        if values:
            out[f"{ANNOTATION_PREFIX}{STREAM_ANNOTATIONS[c.kind]}"] = {n: _number(x) for n, x in values.items()}
        if c.id in checked:
            out[f"{ANNOTATION_PREFIX}checked"] = True
        return out

    spouts = []
    for s in topo.spouts:
        if s.name.startswith(TICK_PREFIX):  # a timer: written as the stream from __system below
            continue
        entry: dict[str, Any] = {"id": s.name, "className": s.class_name or UNKNOWN_SPOUT_CLASS,
                                 "parallelism": s.executors or 1}
        extra = annotations(s, ANNOTATION_KEYS["spout"])
        if extra:
            entry["config"] = extra
        spouts.append(entry)
    bolts = []
    for b in topo.bolts:
        entry = {"id": b.name, "className": b.class_name or UNKNOWN_BOLT_CLASS, "parallelism": b.parallelism}
        if b.tasks is not None:  # never fewer tasks than executors: Storm would cap the executors there
            entry["numTasks"] = max(b.tasks, b.parallelism)
        extra = annotations(b, ANNOTATION_KEYS["bolt"])
        if extra:
            entry["config"] = extra
        bolts.append(entry)
    streams = []
    for sub in topo.subscriptions:
        grouping: dict[str, Any] = {"type": FLUX_GROUPING[sub.grouping]}
        if sub.grouping == "fields":
            grouping["args"] = list(sub.fields)
        if sub.stream is not None:
            grouping["streamId"] = sub.stream
        if sub.grouping == "custom":
            grouping["customClass"] = {"className": sub.custom_class or UNKNOWN_GROUPING_CLASS}
        source = names[sub.source]
        if source.startswith(TICK_PREFIX) and sub.stream == TICK_STREAM:
            source = SYSTEM_COMPONENT
        streams.append({"name": f"{source} --> {names[sub.target]}", "from": source,
                        "to": names[sub.target], "grouping": grouping})
    data: dict[str, Any] = {"name": topo.name}
    if config:
        data["config"] = config
    data["spouts"] = spouts
    data["bolts"] = bolts
    data["streams"] = streams
    return data


def placeholder_classes(topo: Topology) -> list[str]:
    """The fields of a skeleton export that hold a stormbound.placeholder.* class."""
    names = {c.id: c.name for c in topo.components}
    found = [f"spouts.{s.name}.className" for s in topo.spouts
             if not s.class_name and not s.name.startswith(TICK_PREFIX)]
    found += [f"bolts.{b.name}.className" for b in topo.bolts if not b.class_name]
    found += [f"streams.{names[s.source]}->{names[s.target]}.grouping.customClass.className"
              for s in topo.subscriptions if s.grouping == "custom" and not s.custom_class]
    return found


def skeleton_header(topo: Topology) -> list[str]:
    """The comment lines above a skeleton export: what it holds, and what to fill in before deploying."""
    lines = [f"{topo.name}: written by Stormbound from the document alone.",
             "Flux has no timing: each component's config keeps the model's values under stormbound.*",
             "(Storm ignores them).",
             "Not in the document, so not here: constructorArgs, configMethods, properties, components and",
             "includes: add what your classes need before deploying."]
    placeholders = placeholder_classes(topo)
    if placeholders:
        shown = ", ".join(placeholders[:8]) + (f" and {len(placeholders) - 8} more" if len(placeholders) > 8 else "")
        lines.append(f"Placeholder classes (stormbound.placeholder.*) to replace: {shown}.")
    return lines


def to_flux_bytes(topo: Topology) -> bytes:
    """A Flux YAML file for the topology (className placeholders where the document has none)."""
    yaml = _yaml()
    yaml.version = None
    yaml.explicit_start = True
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 4096
    buf = io.StringIO()
    buf.write("".join(f"# {line}\n" for line in skeleton_header(topo)))
    yaml.dump(to_flux_data(topo), buf)
    return buf.getvalue().encode("utf-8")

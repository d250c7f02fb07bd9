"""Flux files as text: properties (`--filter`), `${...}` substitution, safe YAML and the checks of a parsed tree.

The layer under app/core/storm/flux/parser.py (which reads a Flux document, built into a
Topology by builder.py) and app/core/storm/flux/repair.py (which edits the text in place): the YAML is
parsed as YAML 1.1, as Flux's SnakeYAML does, with limits on size, nesting and the number of
nodes reached through aliases (YAML bombs); every problem is a :class:`FluxError` naming the
file, the line and the field.
"""

from __future__ import annotations

import math
import os
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.formats import FormatError
from app.core.formats.limits import MAX_INT_DIGITS
from app.core.topology import Problem

if TYPE_CHECKING:
    from ruamel.yaml import YAML

MAX_BYTES = 2_000_000
MAX_DEPTH = 40  # nesting of YAML collections (Flux files need about 8)
MAX_NODES = 50_000  # nodes visited with aliases expanded (Flux files have hundreds)
MAX_INDENT = 160  # columns of block indentation before a line counts as nested too deeply
PLACEHOLDER = re.compile(r"\$\{([^}]*)\}")
LIST_PLACEHOLDER = re.compile(r"^(?P<list>.+)\[(?P<index>\d+)\]$")


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



# ---- properties and substitution --------------------------------------------


def read_properties(path: str | os.PathLike[str]) -> dict[str, str]:
    """A Java `.properties` file (ISO-8859-1, `key=value`, `key: value` or `key value`, `\\` continuations)."""
    from app.core.fileio import read_bytes

    p = Path(path)

    def refused(reason: str) -> FluxError:
        reason = {"no such file": "no such properties file",
                  "is a folder, not a file": "is a folder, not a properties file"}.get(reason, reason)
        return FluxError(p, None, "", reason)

    # a regular file of at most 2 MB: a pipe would block, /dev/zero would fill the memory
    raw = read_bytes(p, refused, MAX_BYTES)
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
    listed = LIST_PLACEHOLDER.match(var)
    if listed and listed["list"] in props:
        if len(listed["index"]) > 9:  # no list has a billion elements (and int() refuses 4,300 digits)
            return None
        return _list_element(props[listed["list"]], int(listed["index"]))
    return props.get(var)


def substitute(text: str, props: dict[str, str] | None, options: FluxOptions, file: Path | None = None) -> str:
    """Replace every resolvable `${...}` (Flux substitutes the text before parsing it); others stay.
    The text is refused as soon as it grows past the Flux size limit (2 MB), before that memory is spent."""
    parts: list[str] = []
    size = 0
    end = 0
    for m in PLACEHOLDER.finditer(text):
        value = _resolve(m.group(1), props, options)
        piece = text[end:m.start()] + (m.group(0) if value is None else value)
        size += len(piece)
        if size > MAX_BYTES:
            line = text.count("\n", 0, m.start()) + 1
            raise FluxError(file or Path("flux"), line, "", f"is larger than {MAX_BYTES // 1_000_000} MB once "
                            "${...} is substituted: not a Flux file")
        parts.append(piece)
        end = m.end()
    parts.append(text[end:])
    return "".join(parts)


def placeholder_problem(var: str, options: FluxOptions) -> str:
    if var.startswith("ENV-"):
        if not options.env:
            return f"${{{var}}} needs --env (environment variable substitution)"
        return f"${{{var}}}: environment variable {var[4:]} is not set"
    if options.filter is None:
        return f"${{{var}}} is not defined: give --filter FILE.properties"
    return f"${{{var}}} is not defined in {options.filter.name}"


# ---- safe YAML ---------------------------------------------------------------


def yaml_parser() -> YAML:
    """ruamel.yaml's round-trip reader, set to read as Flux does."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt", pure=True)
    yaml.version = (1, 1)  # Flux reads with SnakeYAML: YAML 1.1 (yes/no booleans, 010 octal)
    yaml.allow_duplicate_keys = False
    return yaml


def _recording_parser(events: list[Any]) -> YAML:
    """`yaml_parser()` whose parser also keeps every event it hands to the tree's composer, in order: the events
    `yaml_events` gives without a second parse of the same text (`repair` reads both of one file)."""
    from ruamel.yaml.parser import RoundTripParser

    class Recording(RoundTripParser):
        def get_event(self) -> Any:
            event = super().get_event()
            events.append(event)
            return event

    yaml = yaml_parser()
    yaml.Parser = Recording
    return yaml


def yaml_events(text: str) -> list[Any]:
    """The parsing events of `text` (ruamel's, as `yaml_parser().parse` gives them): those kept when
    :func:`parse_yaml` read it in this process, else parsed now. Read them, never change them."""
    if text in _EVENTS:
        return _EVENTS[text]
    return list(yaml_parser().parse(text))


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

    if text in _PARSED:  # read already in this process (`repair` reads a file to import it, to plan, to check)
        return _PARSED[text]
    if len(text) > MAX_BYTES:
        raise FluxError(file, None, "", f"is larger than {MAX_BYTES // 1_000_000} MB: not a Flux file")
    if not text.strip():
        raise FluxError(file, None, "", "is empty")
    _check_nesting(text, file)
    _refuse_json_document(text, file)
    try:
        with warnings.catch_warnings():  # ruamel's multi-line warnings (a reused anchor...) are not for the user
            warnings.simplefilter("ignore")
            events: list[Any] = []
            tree = _recording_parser(events).load(text)
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
            found = PLACEHOLDER.search(lines[number - 1]) if number <= len(lines) else None
            if found:
                raise FluxError(file, number, _top_key_at(text, number),
                                placeholder_problem(found.group(1), options or FluxOptions())) from None
        if "expected a single document" in str(err) or "but found another document" in str(err):
            problem, field = "holds more than one YAML document (Flux reads one)", ""
        raise FluxError(file, line, field, f"not valid YAML: {problem}") from None
    except YAMLError as err:
        raise FluxError(file, None, "", f"not valid YAML: {str(err).splitlines()[0]}") from None
    _PARSED[text], _EVENTS[text] = tree, events
    while len(_PARSED) > 4:
        _EVENTS.pop(next(iter(_PARSED)), None)
        del _PARSED[next(iter(_PARSED))]
    return tree


#: the last trees parse_yaml built, by text (read-only to every caller: they read the tree, never change it)
_PARSED: dict[str, Any] = {}
#: the parsing events of those trees, by text (`yaml_events`)
_EVENTS: dict[str, list[Any]] = {}


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


def line_of(container: Any, key: Any) -> int | None:
    """1-based line of a key in a round-trip mapping or an item of a round-trip sequence."""
    lc = getattr(container, "lc", None)
    if lc is None:
        return None
    found: int
    try:
        found = lc.key(key)[0] if isinstance(container, dict) else lc.item(key)[0]
    except (KeyError, IndexError, TypeError, AttributeError):
        own: int | None = getattr(lc, "line", None)
        return own + 1 if own is not None else None
    return found + 1


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
        why = placeholder_problem(self.var, options)
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
        why = sorted({placeholder_problem(u.var, options).split(" ", 1)[1] for u in items})
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
            unresolved += [Unresolved(file, line, path or "document", m.group(1)) for m in PLACEHOLDER.finditer(node)]
        elif isinstance(node, float) and not math.isfinite(node):  # .nan/.inf: a saved document could not keep it
            raise FluxError(file, line, path or "document", f"must be a finite number, not {node}")
        elif isinstance(node, dict):
            for key, value in node.items():
                label = f"{path}.{key}".lstrip(".")
                if isinstance(key, str):
                    unresolved += [Unresolved(file, line_of(node, key), label, m.group(1))
                                   for m in PLACEHOLDER.finditer(key)]
                children.append((value, label, depth + 1, line_of(node, key) or line))
        elif isinstance(node, list):
            for i, value in enumerate(node):
                children.append((value, _item_label(path, i, value), depth + 1, line_of(node, i) or line))
        stack.extend(reversed(children))
    return unresolved


def load_yaml(text: str, file: Path, options: FluxOptions | None = None) -> tuple[Any, list[Unresolved]]:
    """The one YAML loader with limits, for Flux files and timings files alike: the round-trip tree of `text`
    (:func:`parse_yaml`: size, nesting, syntax) walked once by :func:`check_tree` (nodes reached through
    aliases, depth, non-finite numbers) before anything expands it, and its unresolved `${...}`. FluxError
    naming the line otherwise (an alias bomb: "expands to more than 50000 YAML nodes")."""
    options = options or FluxOptions()
    tree = parse_yaml(text, file, options)
    return tree, check_tree(tree, file, options)


def plain(node: Any) -> Any:
    """A round-trip YAML value as plain JSON-able Python (call after :func:`check_tree`, as :func:`load_yaml`
    does: the limits hold before aliases are expanded here)."""
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


def read_flux_text(path: Path, what: str = "") -> str:
    from app.core.fileio import read_bytes

    def refused(reason: str) -> FluxError:
        if reason.startswith(("is ", "over")) and "bytes" in reason:  # the size, before any of it is read
            return FluxError(path, None, "", f"is larger than {MAX_BYTES // 1_000_000} MB: not a Flux file")
        return FluxError(path, None, what, "is a folder, not a Flux file" if reason == "is a folder, not a file"
                         else reason)

    raw = read_bytes(path, refused, MAX_BYTES)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise FluxError(path, line, "",
                        f"is not UTF-8 text: byte 0x{raw[err.start]:02x} at offset {err.start}") from None

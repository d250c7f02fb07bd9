"""Reading a decoded JSON document into a :class:`Topology`: every problem named by element and field
(`bolts.B2.alpha`), one line per bad input rather than per consequence; and the document's JSON Schema."""

from __future__ import annotations

import copy
import re
from typing import Any

from pydantic import ValidationError

from app.core.topology.document import Topology
from app.core.topology.migrate import CURRENT, upgrade
from app.core.topology.problems import Problem, TopologyError
from app.core.topology.settings import WORKER_FIELDS
from app.core.words import listed


def _element_label(raw: Any, loc: tuple[Any, ...]) -> str:
    """Turn a pydantic location like ('bolts', 1, 'alpha') into 'bolts.B2.alpha'."""
    parts: list[str] = []
    node = raw
    for item in loc:
        if isinstance(item, int) and isinstance(node, list):
            elem = node[item] if 0 <= item < len(node) else None
            name = elem.get("name") if isinstance(elem, dict) else None
            if isinstance(name, str) and name:
                parts.append(name)
            else:
                parts[-1:] = [f"{parts[-1]}[{item}]"] if parts else [f"[{item}]"]
            node = elem
        else:
            parts.append(str(item))
            node = node.get(item) if isinstance(node, dict) else None
    return ".".join(parts)


def _friendly(msg: str) -> str:
    msg = msg.removeprefix("Value error, ")
    return msg[0].lower() + msg[1:] if msg else msg


def _copied(value: Any) -> Any:
    """A copy of decoded JSON's dicts and lists (the values shared: they are immutable), many times faster
    than `copy.deepcopy` on 20,000 subscriptions; nesting is bounded by the JSON reader's depth limit, and
    anything else is deep-copied."""
    if isinstance(value, dict):
        return {key: _copied(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copied(item) for item in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return copy.deepcopy(value)


#: the bolt fields a schema_version added, and the version: asynchronous bolts and the import's mark (3), windows (4),
#: joins (5); a window's `slide_kind` (6, mixed windows) is checked beside them
_BOLT_FIELDS_SINCE: dict[str, int] = {"threads": 3, "unmodelled": 3, "window": 4, "join": 5}


def parse_topology(data: Any) -> Topology:
    """Validate a decoded JSON document; raise :class:`TopologyError` naming each problem."""
    if not isinstance(data, dict):
        raise TopologyError([Problem("document", f"expected a JSON object, got {type(data).__name__}")])
    version = data.get("schema_version", 1)
    if version not in range(1, CURRENT + 1) or isinstance(version, bool):
        raise TopologyError([Problem("schema_version", f"{version!r} is not a version this program reads (1 to "
                                                       f"{CURRENT}): a newer version wrote it, or it is damaged")])
    bolts = data.get("bolts")
    named = [(b, key, since) for b in bolts if isinstance(b, dict) for key, since in _BOLT_FIELDS_SINCE.items()
             if key in b and version < since] if isinstance(bolts, list) else []
    named += [(b, "window.slide_kind", 6) for b in bolts if isinstance(b, dict) and isinstance(b.get("window"), dict)
              and "slide_kind" in b["window"] and version < 6] if isinstance(bolts, list) else []
    storm = data.get("storm")
    workers = [key for key in WORKER_FIELDS if isinstance(storm, dict) and key in storm and version < 4]
    if named or workers:  # a field an earlier version did not have: that version did not write it (migrate.py)
        raise TopologyError([Problem(f"bolts.{b.get('name', b.get('id'))}.{key}",
                                     f"{key.rsplit('.', 1)[-1]} needs schema_version {since} (this document says "
                                     f"{version})")
                             for b, key, since in named]
                            + [Problem(f"storm.{key}", f"{key} needs schema_version 4 (this document says {version})")
                               for key in workers])
    data = _copied(data)
    notes = upgrade(data)  # an earlier version's document, read as it meant it
    raw = data  # left as it is: the model validates a copy (its name resolution changes what it is given)
    try:
        return Topology.model_validate(_copied(data)).with_read_notes(notes)
    except ValidationError as err:
        problems: list[Problem] = []
        for e in err.errors():
            loc = tuple(e.get("loc", ()))
            msg = str(e.get("msg", "invalid"))
            if not loc:
                for line in _friendly(msg).split("\n"):
                    path, _, text = line.partition(": ")
                    problems.append(Problem(path, text))
                continue
            if e.get("type") == "extra_forbidden":
                msg = "unknown field"
                if len(loc) == 3 and loc[0] == "spouts" and loc[2] == "min_ttf":
                    msg = "a spout never fails in the model: only bolts take min_ttf (docs/model.md section 7)"
            path = _element_label(raw, loc) if loc else "topology"
            problems.append(Problem(path, _friendly(msg)))
        raise TopologyError(_one_per_field(problems)) from None


_ITEM = re.compile(r"\[\d+\]$")
_UNKNOWN = re.compile(r"unknown component '([^']*)'")


def _family(index: int, problem: Problem) -> tuple[Any, ...]:
    """What a problem is a consequence of: one bad list (its elements), one element (the fields it lacks),
    one component that is gone (every reference to it); otherwise itself."""
    gone = _UNKNOWN.search(problem.message)
    if gone:
        return ("gone", gone.group(1))
    listed = _ITEM.sub("", problem.path)
    if listed != problem.path:
        return ("list", listed, problem.message)
    if problem.message == "field required":
        return ("element", problem.path.rpartition(".")[0])
    return ("own", index)


def _one_per_field(problems: list[Problem]) -> list[Problem]:
    """One line per bad input, not per consequence (`_family`): the first place, then the others (up to
    three, then how many more)."""
    families: dict[tuple[Any, ...], list[Problem]] = {}
    for index, problem in enumerate(problems):
        families.setdefault(_family(index, problem), []).append(problem)
    merged: list[Problem] = []
    for same in families.values():
        others = [p.path for p in same[1:]]
        also = ""
        if others:
            also = f" (also {listed(others, 3)})"
        merged.append(Problem(same[0].path, same[0].message + also))
    return merged


def topology_json_schema() -> dict[str, Any]:
    """The JSON Schema of the `.storm.json` document."""
    return Topology.model_json_schema()

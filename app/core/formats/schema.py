"""JSON Schemas of our documents: the `$id` scheme, the `$schema` key a document may carry,
and the schemas derived from the pydantic models of the topology and the trace.

Every schema `stormbound schema --kind KIND` prints has `"$schema"` (JSON Schema 2020-12) and
`"$id": "https://stormbound.dev/schema/KIND/VERSION"`, VERSION being the format's own version
(`schema_version` 1 of `.storm.json`, `stormbound-trace/1`, `stormbound-result/1`, ...); see
docs/formats.md, "JSON Schemas". A document may name its schema with a `"$schema"` string key;
readers accept it and otherwise ignore it.
"""

from __future__ import annotations

import copy
from typing import Any

from app.core.topology import Problem, TopologyError

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_BASE = "https://stormbound.dev/schema"
SCHEMA_KINDS: tuple[str, ...] = ("topology", "trace", "result", "event", "pattern")


def schema_id(kind: str, version: int = 1) -> str:
    """The `$id` of a schema kind, e.g. https://stormbound.dev/schema/topology/1."""
    return f"{SCHEMA_BASE}/{kind}/{version}"


def with_ids(schema: dict[str, Any], kind: str, title: str | None = None, version: int = 1) -> dict[str, Any]:
    """`schema` with `$schema` and `$id` first, and a `"$schema"` string property allowed at the top,
    so that documents naming their schema validate against it."""
    body = copy.deepcopy(schema)
    if title:
        body["title"] = title
    if isinstance(body.get("properties"), dict):
        body["properties"] = {"$schema": {"type": "string", "description": "the schema this document follows "
                                                                         "(ignored by the readers)"},
                              **body["properties"]}
    return {"$schema": JSON_SCHEMA_DIALECT, "$id": schema_id(kind, version), **body}


def without_schema_key(data: Any, where: str = "$schema") -> Any:
    """A decoded document without its optional `"$schema"` key (a string naming its schema); a
    `"$schema"` that is not a string is a TopologyError naming the field."""
    if not isinstance(data, dict) or "$schema" not in data:
        return data
    if not isinstance(data["$schema"], str):
        raise TopologyError([Problem(where, "expected a string: the URL or path of the document's JSON Schema")])
    return {k: v for k, v in data.items() if k != "$schema"}


def topology_schema() -> dict[str, Any]:
    """The schema of the `.storm.json` document, from the pydantic Topology."""
    from app.core.topology import topology_json_schema

    return with_ids(topology_json_schema(), "topology", "Stormbound topology (.storm.json)")

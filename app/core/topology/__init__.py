"""The Storm topology document: spouts, bolts, subscriptions, settings and layout.

Pydantic v2 models at the boundary of every file, CLI call and worker. Semantic
fields (what the verifier reads) are kept apart from the canvas layout, and every
element carries a stable uuid4 id; subscriptions and checked bolts refer to ids.
Hand-written files may use component *names* where ids are expected; the loader
resolves them (see :func:`parse_topology`).

This package's public face is this module: import the document's names from
`app.core.topology`. Its modules, each importing only those above it:

- fields.py      the number and stream field types, `new_id`, the strict base model
- components.py  Spout, Bolt, Subscription (the edges), Position; the stream names
- settings.py    TopologySettings (timing, failures), VerificationSettings, StormSettings
- problems.py    Problem, TopologyError, NotAnnotated, `one_line`
- checks.py      the rules across elements (names, references, streams, failure settings,
                 placeholders), on a document's parts: `DocumentParts`, which a Topology is
- document.py    Topology: name resolution, the checks on validation, the queries, `semantics()`
- parse.py       `parse_topology` (problems named by element and field), the JSON Schema
"""

from app.core.topology.checks import (
    DocumentParts,
    failure_problems,
    graph_problems,
    require_annotated,
    still_unannotated,
    unannotated_problems,
)
from app.core.topology.components import (
    ASYNC_CLASSES,
    DEFAULT_STREAM,
    TICK_STREAM,
    Bolt,
    Component,
    Grouping,
    Join,
    Position,
    Spout,
    Subscription,
    Window,
)
from app.core.topology.document import SCHEMA_VERSION, Topology, new_topology
from app.core.topology.fields import STORM_MAX_INT, new_id
from app.core.topology.parse import parse_topology, topology_json_schema
from app.core.topology.problems import NotAnnotated, Problem, TopologyError, one_line
from app.core.topology.settings import (
    DEFAULT_MESSAGE_TIMEOUT,
    Replay,
    StormObserved,
    StormSettings,
    TopologySettings,
    VerificationSettings,
    new_settings,
)

__all__ = [
    "ASYNC_CLASSES", "DEFAULT_MESSAGE_TIMEOUT", "DEFAULT_STREAM", "SCHEMA_VERSION", "STORM_MAX_INT", "TICK_STREAM",
    "Bolt", "Component", "DocumentParts", "Grouping", "Join", "NotAnnotated", "Position", "Problem", "Replay", "Spout",
    "StormObserved", "StormSettings", "Subscription", "Topology", "TopologyError", "TopologySettings",
    "VerificationSettings", "Window",
    "failure_problems", "graph_problems", "new_id", "new_settings", "new_topology", "one_line", "parse_topology",
    "require_annotated", "still_unannotated", "topology_json_schema", "unannotated_problems",
]

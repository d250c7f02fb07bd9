"""The JSON Schema of a JSON pattern file, written from the reader's rules (app/cep/syntax.py and app/cep/nodes.py:
`parse_pattern_json`, `pattern_from_json`, `parse_ast`, `_options`; docs/cep.md). The compact
text form (`.cep`) is a grammar, not JSON, and has no schema."""

from __future__ import annotations

from typing import Any

from app.cep.nodes import COMPARATORS, CONTEXT_ALIASES, SKIPS

# Spellings `_options` accepts besides the canonical ones (it lower-cases and drops `EventContext.`).
SKIP_ALIASES = ("skip_to_next", "skip_past_last_event", "past_last_event")
NAMES = {"type": "string", "minLength": 1}
ONE_OR_MORE_NAMES = {"anyOf": [NAMES, {"type": "array", "items": NAMES}]}


def _node_schema() -> dict[str, Any]:
    """A pattern in the JSON (`ast`) form: an atom or an operator over patterns."""
    node = {"$ref": "#/$defs/node"}
    atom = {
        "type": "object", "required": ["atom"],
        "properties": {
            "atom": {**NAMES, "description": "the event type"},
            "params": {"anyOf": [{"type": "object", "additionalProperties": {"type": "string"}},
                                 {"type": "array", "items": {"type": "string"}}],
                       "description": "{attribute: parameter}, or names shared by attribute and parameter"},
            "tests": {"type": "array", "description": "[attribute, comparator, constant]",
                      "items": {"type": "array", "minItems": 3, "maxItems": 3,
                                "prefixItems": [{"type": "string"}, {"enum": list(COMPARATORS)}, {}]}},
        },
    }
    many = {"type": "object", "required": ["op", "args"],
            "properties": {"op": {"enum": ["follows", "or", "and"]},
                           "args": {"type": "array", "minItems": 2, "items": node}}}
    one = {"type": "object", "required": ["op", "arg"],
           "properties": {"op": {"enum": ["star", "plus", "not"]}, "arg": node}}
    times = {"type": "object", "required": ["op", "arg", "n"],
             "properties": {"op": {"const": "times"}, "arg": node, "n": {"type": "integer", "minimum": 1}}}
    within = {"type": "object", "required": ["op", "arg", "window"],
              "properties": {"op": {"const": "within"}, "arg": node,
                             "window": {"type": "number", "description": "seconds of event time"}}}
    holds = {"type": "object", "required": ["op", "arg", "duration"],
             "properties": {"op": {"const": "holdsFor"}, "arg": node,
                            "duration": {"type": "number", "description": "seconds of event time"}}}
    return {"anyOf": [atom, many, one, times, within, holds]}


def _options() -> dict[str, Any]:
    contexts = sorted(set(CONTEXT_ALIASES))
    return {
        "context": {"type": "string", "description": "matching context, case-insensitive: " + ", ".join(contexts)},
        "skip": {"type": "string", "description": "skip strategy, case-insensitive: "
                                                   + ", ".join((*SKIPS, *SKIP_ALIASES))},
        "by": {**ONE_OR_MORE_NAMES, "description": "attributes whose values partition the events"},
        "only": {**ONE_OR_MORE_NAMES, "description": "event types the pattern looks at"},
        "timeout": {"type": "boolean", "description": "also report partial matches cut by their window"},
    }


def pattern_file_schema() -> dict[str, Any]:
    """A list of pattern objects, or `{"context"?, "skip"?, "patterns": [...]}`."""
    pattern = {
        "type": "object",
        "description": "one pattern: an id and the pattern as compact text (`text`/`vepl`) or JSON (`ast`)",
        "anyOf": [{"required": ["id"]}, {"required": ["name"]}],
        "oneOf": [{"required": ["ast"]}, {"required": ["text"], "not": {"required": ["ast"]}},
                  {"required": ["vepl"], "not": {"anyOf": [{"required": ["ast"]}, {"required": ["text"]}]}}],
        "properties": {
            "id": NAMES, "name": NAMES,
            "text": {"type": "string", "description": "the compact form, e.g. \"a -> b within 10\" (docs/cep.md)"},
            "vepl": {"type": "string", "description": "the compact form (VIATRA-CEP's name for it)"},
            "ast": {"$ref": "#/$defs/node"},
            "description": {"type": "string"},
            **_options(),
        },
    }
    patterns = {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/pattern"}}
    return {
        "title": "Stormbound complex event patterns (JSON form)",
        "description": "A JSON pattern file for `stormbound cep` (docs/cep.md). Pattern ids are unique.",
        "anyOf": [patterns,
                  {"type": "object", "required": ["patterns"],
                   "properties": {"patterns": patterns, "context": _options()["context"],
                                  "skip": _options()["skip"]}}],
        "$defs": {"pattern": pattern, "node": _node_schema()},
    }

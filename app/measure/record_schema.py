"""The JSON Schema of one event-log record (a line of a `.jsonl` log, an item of a `.json` one),
derived from the pydantic records plus the rules the reader adds (app/measure/eventlog.py,
`record_from_dict`; docs/event-log.md)."""

from __future__ import annotations

from typing import Any

from app.measure.records import NEEDS_MSG, NEEDS_TUPLE, Event, QueueSample


def event_record_schema() -> dict[str, Any]:
    """An event (it has `ev`) or a queue sample (`queue` and no `ev`), as the reader accepts them."""
    event = Event.model_json_schema()
    event["allOf"] = [
        {"if": {"properties": {"ev": {"enum": list(NEEDS_TUPLE)}}},
         "then": {"required": ["tuple"], "properties": {"tuple": {"type": "string", "minLength": 1}}}},
        {"if": {"properties": {"ev": {"enum": list(NEEDS_MSG)}}},
         "then": {"required": ["msg"], "properties": {"msg": {"type": "string", "minLength": 1}}}},
        {"if": {"not": {"properties": {"ev": {"const": "bolt_emit"}}}},
         "then": {"properties": {"anchors": {"type": "null"}}}},
    ]
    sample = QueueSample.model_json_schema()
    return {
        "title": "Stormbound event-log record",
        "description": "One record of a run's event log: an event when it has `ev`, else a queue sample "
                       "(docs/event-log.md). A .jsonl log holds one per line; a .json log a list of them or "
                       "{\"events\": [...], \"queues\": [...]}.",
        "oneOf": [{"$ref": "#/$defs/Event"}, {"$ref": "#/$defs/QueueSample"}],
        "$defs": {"Event": event, "QueueSample": sample},
    }

"""The records of a measured-run event log: events, queue samples, Storm metrics, and the log.

Kept apart from the readers (app/measure/eventlog.py) so that every reader, including
the one for Storm's own events.log (app/measure/storm_events.py), builds the same types
without importing the dispatcher that calls it. See docs/event-log.md.
"""

from __future__ import annotations

import math
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.core.formats.limits import FormatError, load_json_text, on_one_line
from app.core.topology import Problem, TopologyError

EventKind = Literal["spout_emit", "take", "bolt_emit", "bolt_ack", "bolt_fail", "spout_ack", "spout_fail",
                    "bolt_down", "bolt_up", "bolt_lost"]
EVENT_KINDS: tuple[str, ...] = get_args(EventKind)
# Which events need which id (the readers, the SQL's bad-row test and the record schema say the same).
NEEDS_TUPLE: tuple[str, ...] = ("spout_emit", "take", "bolt_emit", "bolt_ack", "bolt_fail", "bolt_lost")
NEEDS_MSG: tuple[str, ...] = ("spout_emit", "spout_ack", "spout_fail")


class EventLogError(TopologyError):
    """A log that cannot be read; the message names the file, record and field."""

    def __init__(self, where: str, message: str):
        super().__init__([Problem(where, message)])


def json_value(text: str, where: str) -> Any:
    """One JSON value (a log line or a whole JSON log) within the limits of docs/limits.md, or an EventLogError."""
    try:
        return load_json_text(text, where)
    except FormatError as err:
        message = err.problems[0].message
        if "\n" not in text.rstrip():  # one line: its column is enough
            message = on_one_line(message)
        raise EventLogError(where, message) from None


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Event(_Record):
    """One thing a component did: emit, take, ack, fail or lose a tuple; a bolt's task going down or up."""

    t: float = Field(description="seconds since the start of the run")
    ev: EventKind
    comp: str = Field(min_length=1, description="component name")
    task: int = Field(default=0, ge=0)
    tuple: str | None = Field(default=None, description="tuple id (emit, take, bolt ack/fail/lost)")
    msg: str | None = Field(default=None, description="root message id (spout events); bolt_lost: the root tuple "
                                                       "of the lost tuple's tree (the tuple of its spout_emit)")
    anchors: list[str] | None = Field(default=None, description="bolt_emit: ids of the input tuples it is anchored to")
    reason: str | None = Field(default=None, description="spout_fail: TIMEOUT or FAILED; spout_emit: REPLAY for "
                                                          "a replayed message; bolt_lost: QUEUE, BATCH or DOWN")

    @model_validator(mode="after")
    def _needed_fields(self) -> Event:
        if not math.isfinite(self.t):
            raise ValueError("t: must be a finite number")
        if self.ev in NEEDS_TUPLE and not self.tuple:
            raise ValueError(f"tuple: a {self.ev} event needs a tuple id")
        if self.ev in NEEDS_MSG and not self.msg:
            raise ValueError(f"msg: a {self.ev} event needs a message id")
        if self.anchors is not None and self.ev != "bolt_emit":
            raise ValueError(f"anchors: only bolt_emit events carry anchors, not {self.ev}")
        return self


class QueueSample(_Record):
    """The number of tuples waiting in a component's receive queue at time `t`."""

    t: float
    comp: str = Field(min_length=1)
    task: int = Field(default=0, ge=0)
    queue: int = Field(ge=0, le=2**53)


class MetricSample(_Record):
    """One data point of Storm's LoggingMetricsConsumer (e.g. `__execute-latency`, key `split:default`)."""

    t: float
    comp: str
    task: int
    worker: str = ""
    name: str
    key: str = ""
    value: float


class EventLog(BaseModel):
    """A whole log: events sorted by time, queue samples, and Storm metrics when read from a metrics log."""

    events: list[Event] = Field(default_factory=list)
    queues: list[QueueSample] = Field(default_factory=list)
    metrics: list[MetricSample] = Field(default_factory=list)
    source: str = ""

    def components(self) -> list[str]:
        """Every component named in the log, in order of first appearance."""
        seen: dict[str, None] = {}
        records: list[Event | QueueSample | MetricSample] = [*self.events, *self.queues, *self.metrics]
        for rec in records:
            seen.setdefault(rec.comp, None)
        return list(seen)

    def duration(self) -> float:
        times = [e.t for e in self.events] + [q.t for q in self.queues] + [m.t for m in self.metrics]
        return (max(times) - min(times)) if times else 0.0



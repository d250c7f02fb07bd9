"""Storm's tick tuples in a Flux file: a stream `from: "__system"` with `grouping.streamId: "__tick"`.

Not a component but Storm's timer: every task of the subscribing bolt gets a tick every
`topology.tick.tuple.freq.secs`. The import gives the bolt a timer source `__tick:BOLT` (a spout
of the document) and a skeleton export writes it back as the stream from `__system`
(docs/storm.md, "Tick tuples").
"""

from __future__ import annotations

import math
from typing import Any

from app.core.storm.flux.model import FluxDocument

SYSTEM_COMPONENT = "__system"
TICK_STREAM = "__tick"
TICK_FREQ = "topology.tick.tuple.freq.secs"
TICK_PREFIX = "__tick:"  # the name of a bolt's timer source in the document: __tick:BOLT


def is_tick(source: str, stream_id: str | None) -> bool:
    """A stream of tick tuples: Storm's timer, from __system on the stream __tick."""
    return source == SYSTEM_COMPONENT and stream_id == TICK_STREAM


def tick_name(bolt: str) -> str:
    return f"{TICK_PREFIX}{bolt}"


def tick_spouts(doc: FluxDocument, notes: list[str], placeholder: float) -> list[dict[str, Any]]:
    """A timer source per bolt that subscribes to tick tuples: every task of the bolt gets one tick every
    `topology.tick.tuple.freq.secs` (its own config's, else the topology's), all at once."""
    out: list[dict[str, Any]] = []
    for bolt in dict.fromkeys(s.target for s in doc.streams if is_tick(s.source, s.stream_id)):
        v = doc.bolts[bolt]
        tasks = v.num_tasks or v.parallelism or 1
        secs = v.tick_secs if v.tick_secs is not None else doc.config.get(TICK_FREQ)
        known = isinstance(secs, (int, float)) and not isinstance(secs, bool) and math.isfinite(secs) and secs > 0
        if known:
            notes.append(f"bolts.{bolt}: tick tuples every {secs} s ({TICK_FREQ}) to each of its {tasks} task(s): "
                         f"a timer source {tick_name(bolt)} of {tasks}/{secs} tuples/s")
        else:
            notes.append(f"bolts.{bolt}: receives tick tuples (from {SYSTEM_COMPONENT}, stream {TICK_STREAM}), but no "
                         f"{TICK_FREQ} is set in the Flux file (the bolt may set it in Java): the rate of its timer "
                         f"source {tick_name(bolt)} is not annotated")
        rate = tasks / float(secs) if known and secs is not None else placeholder
        # its ticks go out on Storm's stream __tick (every emission once), which the bolt subscribes to
        out.append({"name": tick_name(bolt), "rate": rate, "burst": tasks,
                    "streams": [TICK_STREAM], "stream_ratio": {TICK_STREAM: 1.0},
                    "class_name": None, "executors": None, "unannotated": [] if known else ["rate"]})
    return out

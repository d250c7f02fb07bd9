"""Documents earlier versions wrote, read as they meant it (docs/formats.md, "Older documents").

`schema_version` 1 is every document written before declared streams gave each output stream its own σ: a
subscription could name any stream of its source (Flux's `streamId`: StormCrawler's `status`, `tika`,
`deletion`), and the subscriber received all the source emitted, as if from its default stream. Such a
document is read by declaring each stream its subscriptions name on the source, with the σ that meaning
implies: the bolt's own σ (left not annotated when its σ is), a spout's ratio 1. Documents that already
declare their streams (written by version 1 after the change) read unchanged. Reading says so in one line
(`upgrade` returns it); saving writes the current version, so it is said once.

`schema_version` 2 is every document written before asynchronous bolts (a bolt's `threads`, docs/model.md
section 8): every bolt of it is an ordinary one, which is what a version 3 bolt without `threads` is, so it reads
unchanged and without a note. A version 2 document that names `threads` was not written by a version 2 program:
it is refused, naming the field.

`schema_version` 3 is every document written before windowed bolts (a bolt's `window`, docs/model.md section
10): it reads unchanged and without a note, every bolt of it one without a window (a windowed bolt it came from
carries the `unmodelled` mark its import gave, and stays read as that mark says). A version 3 or earlier document
that names `window` is refused, naming the field. Version 4 also brought worker deaths (`storm.worker_min_ttf`,
`storm.assignment`, docs/model.md section 9): a version 3 or earlier document lets no worker die, and one that
names either field is refused, naming it.

`schema_version` 4 is every document written before joins (a bolt's `join`, docs/model.md section 11): it reads
unchanged and without a note, every bolt of it one without a join (a join it came from carries the `unmodelled` mark
its import gave, and stays read as that mark says). A version 4 or earlier document that names `join` is refused,
naming the field.

`schema_version` 5 is every document written before mixed windows (a window's `slide_kind`, docs/model.md section
10.4): it reads unchanged and without a note, every window of it one whose sliding interval has its length's kind (a
mixed window it came from carries the `unmodelled` mark its import gave, and stays read as that mark says). A version
5 or earlier document that names `slide_kind` in a bolt's `window` is refused, naming the field.
"""

from __future__ import annotations

from typing import Any, Final

from app.core.topology.components import DEFAULT_STREAM, TICK_STREAM

CURRENT: Final = 6  # the schema_version this version writes (app/core/topology/document.py)


def upgrade(data: dict[str, Any]) -> list[str]:
    """Bring a decoded document of an earlier `schema_version` to the current one, in place; the one-line notes
    of what was assumed (none when nothing was). A version this code does not know is left for the validator
    to refuse."""
    version = data.get("schema_version", 1)
    if version in (2, 3, 4, 5) and not isinstance(version, bool):
        data["schema_version"] = CURRENT
        return []
    if version != 1 or isinstance(version, bool):
        return []
    data["schema_version"] = CURRENT
    declared = _declare_named_streams(data)
    if not declared:
        return []
    listing = "; ".join(f"{stream} on {', '.join(sources)}" for stream, sources in declared.items())
    return [f"written by an earlier version (schema_version 1, before declared streams): the streams its "
            f"subscriptions name are declared, each carrying all its component emits, as that version read them "
            f"(σ = the bolt's σ, a spout's ratio 1): {listing}; saving writes schema_version {CURRENT}"]


def _declare_named_streams(data: dict[str, Any]) -> dict[str, list[str]]:
    """Declare on its source every stream a subscription names that the source does not declare; per stream, the
    names of the components it was declared on."""
    components = [c for key in ("spouts", "bolts") for c in _items(data, key) if isinstance(c, dict)]
    by_ref: dict[str, dict[str, Any]] = {}
    for c in components:  # a hand-written file may name components where ids are expected
        for key in ("id", "name"):
            if isinstance(c.get(key), str):
                by_ref.setdefault(c[key], c)
    declared: dict[str, list[str]] = {}
    known: dict[int, set[str]] = {}  # per source (by identity): its declared streams, read once
    for sub in _items(data, "subscriptions"):
        if not isinstance(sub, dict):
            continue
        ref = sub.get("source")
        stream, source = sub.get("stream"), by_ref.get(ref) if isinstance(ref, str) else None
        if (not isinstance(stream, str) or stream == DEFAULT_STREAM or source is None
                or (stream.startswith("__") and stream != TICK_STREAM)):
            continue  # Storm's own streams but the tick timers' are the validator's to refuse
        streams = source.get("streams")
        if streams is None:
            streams = source["streams"] = []
        if not isinstance(streams, list):
            continue
        names = known.get(id(source))
        if names is None:
            names = known[id(source)] = {s for s in streams if isinstance(s, str)}
        if stream in names:
            continue
        streams.append(stream)
        names.add(stream)
        spout = source.get("kind") == "spout" or "rate" in source
        values = source.setdefault("stream_ratio" if spout else "stream_sigma", {})
        unannotated = source.get("unannotated")
        annotated = not isinstance(unannotated, list) or "sigma" not in unannotated
        if isinstance(values, dict) and spout:
            values[stream] = 1
        elif isinstance(values, dict) and annotated and isinstance(source.get("sigma"), (int, float)):
            values[stream] = source["sigma"]
        declared.setdefault(stream, []).append(str(source.get("name", source.get("id"))))
    return declared


def _items(data: dict[str, Any], key: str) -> list[Any]:
    value = data.get(key)
    return value if isinstance(value, list) else []

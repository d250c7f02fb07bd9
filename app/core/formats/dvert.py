"""D-VerT JSON (the ICFEM 2016 prototype's input), both dialects.

* older (ICFEM): `verification_params.num_steps`, every spout's burst is
  `verification_params.base_quantity`; the prototype's template used τ = 0.1.
* newer: `time_bound` and/or a per-spout `parallelism` as burst; τ = 0.04.

Storm groupings, which D-VerT ignores, travel in a per-bolt `stormbound_groupings`
extension. Bolts give `alpha` directly or as `parallelism / max_proc_rate`. Component
references in `subs` are matched case-insensitively (the newer tools upper-cased
them) when no exact name matches. Export writes the newer dialect plus an explicit `tolerance`, so that
import -> export -> import keeps every semantic field.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from app.core.layout import layered_layout
from app.core.topology import Problem, Topology, TopologyError, new_id, parse_topology

OLD_TOLERANCE = 0.1
NEW_TOLERANCE = 0.04


def _fail(path: str, message: str) -> TopologyError:
    from app.core.formats.jsonfile import FormatError

    return FormatError([Problem(path, message)])


def dialect(data: dict[str, Any]) -> str:
    """'older' or 'newer' (see the module docstring)."""
    vp = data.get("verification_params")
    topo = data.get("topology")
    spouts = topo.get("spouts") if isinstance(topo, dict) else None
    if (isinstance(vp, dict) and "time_bound" in vp) or (
            isinstance(spouts, list) and any(isinstance(s, dict) and "parallelism" in s for s in spouts)):
        return "newer"
    return "older"


def _number(obj: dict[str, Any], key: str, path: str) -> Any:
    if key not in obj:
        raise _fail(f"{path}.{key}", "missing")
    return obj[key]


def _optional(obj: dict[str, Any], key: str, path: str, kind: type, default: Any) -> Any:
    """`obj[key]` when it is a `kind` (list or object), `default` when absent or null, else a field-named error."""
    value = obj.get(key)
    if value is None:
        return default
    if not isinstance(value, kind):
        from app.core.formats.limits import type_name

        want = "an array" if kind is list else "an object"
        raise _fail(f"{path}.{key}" if path else key, f"must be {want}, not {type_name(value)}")
    return value


def _name(obj: dict[str, Any], path: str) -> str:
    """A component's `id`: a string or an integer (D-VerT files use both)."""
    value = _number(obj, "id", path)
    if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
        raise _fail(f"{path}.id", "must be a non-empty string")
    return str(value)


def from_dvert(data: dict[str, Any]) -> Topology:
    """Convert a decoded D-VerT document into a validated Topology."""
    topo = data.get("topology")
    if not isinstance(topo, dict):
        raise _fail("topology", "missing or not an object")
    vp = _optional(data, "verification_params", "", dict, {})
    kind = dialect(data)
    spouts_in = _optional(topo, "spouts", "topology", list, [])
    bolts_in = _optional(topo, "bolts", "topology", list, [])
    ids: dict[str, str] = {}  # name -> id (exact names, then upper-cased ones)
    spouts = _spouts(spouts_in, kind, vp, ids)
    bolts, subs = _bolts(bolts_in, ids)
    lookup = _lookup(ids)
    subscriptions = []
    for bolt_name, ref, target, grouping in subs:
        source = lookup(ref)
        if source is None:
            raise _fail(f"bolts.{bolt_name}.subs", f"unknown component '{_echo(ref)}'")
        subscriptions.append({"source": source, "target": target, "grouping": grouping.get("grouping", "shuffle"),
                              "fields": grouping.get("fields", [])})
    settings, verification = _settings_and_verification(topo, vp, kind, lookup)
    doc = {
        "name": str(data.get("app_name") or "imported"),
        "description": str(data.get("description") or ""),
        "spouts": spouts,
        "bolts": bolts,
        "subscriptions": subscriptions,
        "settings": settings,
        "verification": verification,
    }
    result = parse_topology(doc)
    return result.model_copy(update={"layout": layered_layout(result)})


def _spouts(spouts_in: list[Any], kind: str, vp: dict[str, Any], ids: dict[str, str]) -> list[dict[str, Any]]:
    """The spouts (each name's new id added to `ids`); the burst is the newer dialect's spout parallelism, the
    older's base_quantity."""
    spouts: list[dict[str, Any]] = []
    for i, s in enumerate(spouts_in):
        if not isinstance(s, dict):
            raise _fail(f"spouts[{i}]", "not an object")
        name = _name(s, f"spouts[{i}]")
        ident = new_id()
        ids[name] = ident
        burst = s.get("parallelism", 1) if kind == "newer" else vp.get("base_quantity", 1)
        spouts.append({"id": ident, "name": name, "rate": _number(s, "avg_emit_rate", f"spouts.{name}"),
                       "burst": burst})
    return spouts


def _bolts(bolts_in: list[Any], ids: dict[str, str]) -> tuple[list[dict[str, Any]],
                                                              list[tuple[str, Any, str, dict[str, Any]]]]:
    """The bolts (each name's new id added to `ids`) and their subscriptions as written: (bolt, subscribed name,
    bolt id, grouping)."""
    bolts: list[dict[str, Any]] = []
    subs: list[tuple[str, Any, str, dict[str, Any]]] = []
    for i, b in enumerate(bolts_in):
        if not isinstance(b, dict):
            raise _fail(f"bolts[{i}]", "not an object")
        name = _name(b, f"bolts[{i}]")
        ident = new_id()
        ids[name] = ident
        parallelism = _number(b, "parallelism", f"bolts.{name}")
        if "alpha" in b:
            alpha = b["alpha"]
        elif "max_proc_rate" in b:
            rate = b["max_proc_rate"]
            if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 < rate < math.inf:
                raise _fail(f"bolts.{name}.max_proc_rate", "must be a positive finite number")
            alpha = parallelism
            if isinstance(parallelism, (int, float)) and not isinstance(parallelism, bool):
                try:
                    alpha = parallelism / rate
                except OverflowError:
                    raise _fail(f"bolts.{name}.parallelism", "number is too large") from None
        else:
            raise _fail(f"bolts.{name}.alpha", "missing (give alpha or max_proc_rate)")
        bolt = {"id": ident, "name": name, "alpha": alpha, "sigma": _number(b, "sigma", f"bolts.{name}"),
                "parallelism": parallelism}
        if "min_ttf" in b and b.get("stormbound_fails", True) is not False:  # our export marks bolts that never fail
            bolt["min_ttf"] = b["min_ttf"]
        bolts.append(bolt)
        groupings = _optional(b, "stormbound_groupings", f"bolts.{name}", dict, {})
        for ref in _optional(b, "subs", f"bolts.{name}", list, []):
            grouping = groupings.get(str(ref)) or {}
            if not isinstance(grouping, dict):
                raise _fail(f"bolts.{name}.stormbound_groupings.{ref}", "must be an object")
            subs.append((name, ref, ident, grouping))
    return bolts, subs


def _lookup(ids: dict[str, str]) -> Callable[[Any], str | None]:
    """The id of a referenced component: by its exact name, else by its upper-cased one."""
    upper: dict[str, str] = {}
    for name, ident in ids.items():
        upper.setdefault(name.upper(), ident)

    def lookup(ref: Any) -> str | None:
        return ids.get(str(ref)) or upper.get(str(ref).upper())

    return lookup


def _settings_and_verification(topo: dict[str, Any], vp: dict[str, Any], kind: str,
                               lookup: Callable[[Any], str | None]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The document's settings and verification from the topology's and verification_params' fields."""
    tolerance = topo.get("tolerance", vp.get("tolerance", OLD_TOLERANCE if kind == "older" else NEW_TOLERANCE))
    k = vp.get("time_bound", vp.get("num_steps"))
    checked_names = _optional(vp, "strictly_monotonic_queues", "verification_params", list, [])
    checked = []
    for ref in checked_names:
        bolt_id = lookup(ref)
        if bolt_id is None:
            raise _fail("verification_params.strictly_monotonic_queues", f"unknown bolt '{_echo(ref)}'")
        checked.append(bolt_id)
    threshold = topo.get("queue_threshold") or None
    # D-VerT rounds the kept carry up; a "emission" extension (written by our export) says otherwise
    settings = {"tolerance": tolerance, "emission": topo.get("emission", "dvert")}
    for key in ("max_idle_time", "init_queues", "min_reboot_time", "max_reboot_time", "replay"):
        if key in topo:
            settings[key] = topo[key]
    # every published run switched failures off: the fields are read, the failures stay off until asked for
    # (`--failures on`, or the document's settings.failures); a "failures" extension (our export) says otherwise
    settings["failures"] = topo.get("failures", False)
    verification: dict[str, Any] = {"checked": checked, "queue_threshold": threshold}
    if k is not None:
        verification["k"] = k
        if isinstance(k, int) and not isinstance(k, bool) and k >= 2:
            verification["k_max"] = max(k, 40)
    return settings, verification


def _echo(value: Any) -> str:
    from app.core.formats.limits import escape

    return escape(str(value))


def to_dvert(topo: Topology) -> dict[str, Any]:
    """The newer D-VerT dialect (time_bound, spout parallelism) plus explicit tolerance."""
    names = {c.id: c.name for c in topo.components}
    for c in topo.components:  # D-VerT has one output stream per component: refuse rather than merge them
        if c.streams:
            raise _fail(f"{c.kind}s.{c.name}.streams", "D-VerT JSON has one stream per component and cannot "
                        f"hold the declared streams {', '.join(c.streams)}: keep the .storm.json document")
    for b in topo.bolts:  # nor asynchronous bolts (docs/model.md section 8): refuse rather than lose the threads
        if b.threads is not None:
            raise _fail(f"bolts.{b.name}.threads", "D-VerT JSON has no asynchronous bolts (a bolt's threads): keep "
                        "the .storm.json document")
        if b.window is not None:  # nor windowed bolts (docs/model.md section 10)
            raise _fail(f"bolts.{b.name}.window", "D-VerT JSON has no windowed bolts (a bolt's window): keep the "
                        ".storm.json document")
        if b.join is not None:  # nor joins (docs/model.md section 11)
            raise _fail(f"bolts.{b.name}.join", "D-VerT JSON has no joins (a bolt's join): keep the .storm.json "
                        "document")
        if b.unmodelled is not None:  # the marker would be lost, and with it what the verdicts do not decide
            raise _fail(f"bolts.{b.name}.unmodelled", f"D-VerT JSON cannot say that the bolt is {b.unmodelled}: keep "
                        "the .storm.json document")
    bolts = []
    for b in topo.bolts:
        incoming = [s for s in topo.subscriptions if s.target == b.id]
        bolts.append({
            "id": b.name,
            "subs": [names[s.source] for s in incoming],
            # not read by D-VerT; keeps Storm groupings across a round trip
            "stormbound_groupings": {names[s.source]: {"grouping": s.grouping, "fields": s.fields} for s in incoming},
            "alpha": b.alpha,
            "sigma": b.sigma,
            "parallelism": b.parallelism,
            "d": 0.0,
            "min_ttf": b.min_ttf if b.min_ttf is not None else 0,
            **({} if b.min_ttf is not None else {"stormbound_fails": False}),  # not read by D-VerT
        })
    checked = [names[r] for r in topo.verification.checked]
    return {
        "app_name": topo.name,
        "description": topo.description,
        "version": "0.1",
        "topology": {
            "spouts": [{"id": s.name, "avg_emit_rate": s.rate, "parallelism": s.burst} for s in topo.spouts],
            "bolts": bolts,
            "max_idle_time": topo.settings.max_idle_time,
            "init_queues": topo.settings.init_queues,
            "tolerance": topo.settings.tolerance,
            "emission": topo.settings.emission,  # not read by D-VerT (which always rounds up: "dvert")
            "queue_threshold": topo.verification.queue_threshold or 0,
            "min_reboot_time": topo.settings.min_reboot_time or 10,
            "max_reboot_time": topo.settings.max_reboot_time or 100,
            "failures": topo.settings.failures,  # not read by D-VerT (its published runs had failures off)
            "replay": topo.settings.replay,  # not read by D-VerT
        },
        "verification_params": {
            "plugin": ["ae2sbvzot"],
            "time_bound": topo.verification.k or topo.verification.k_max,
            "periodic_queues": [b.name for b in topo.bolts],
            "strictly_monotonic_queues": checked,
            "max_time": 20000,
        },
    }


def to_dvert_bytes(topo: Topology) -> bytes:
    return (json.dumps(to_dvert(topo), indent=2) + "\n").encode("utf-8")

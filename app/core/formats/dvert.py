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
    vp = data.get("verification_params") or {}
    spouts = (data.get("topology") or {}).get("spouts") or []
    if "time_bound" in vp or any(isinstance(s, dict) and "parallelism" in s for s in spouts):
        return "newer"
    return "older"


def _number(obj: dict[str, Any], key: str, path: str) -> Any:
    if key not in obj:
        raise _fail(f"{path}.{key}", "missing")
    return obj[key]


def from_dvert(data: dict[str, Any]) -> Topology:
    """Convert a decoded D-VerT document into a validated Topology."""
    topo = data.get("topology")
    if not isinstance(topo, dict):
        raise _fail("topology", "missing or not an object")
    vp = data.get("verification_params") or {}
    if not isinstance(vp, dict):
        raise _fail("verification_params", "not an object")
    kind = dialect(data)
    spouts_in = topo.get("spouts") or []
    bolts_in = topo.get("bolts") or []
    if not isinstance(spouts_in, list) or not isinstance(bolts_in, list):
        raise _fail("topology", "spouts and bolts must be lists")

    ids: dict[str, str] = {}  # name -> id (exact names, then upper-cased ones)
    spouts: list[dict[str, Any]] = []
    for i, s in enumerate(spouts_in):
        if not isinstance(s, dict):
            raise _fail(f"spouts[{i}]", "not an object")
        name = str(_number(s, "id", f"spouts[{i}]"))
        ident = new_id()
        ids[name] = ident
        burst = s.get("parallelism", 1) if kind == "newer" else vp.get("base_quantity", 1)
        spouts.append({"id": ident, "name": name, "rate": _number(s, "avg_emit_rate", f"spouts.{name}"),
                       "burst": burst})

    bolts: list[dict[str, Any]] = []
    subs: list[tuple[str, Any, str, dict[str, Any]]] = []  # (bolt, subscribed name, bolt id, grouping)
    for i, b in enumerate(bolts_in):
        if not isinstance(b, dict):
            raise _fail(f"bolts[{i}]", "not an object")
        name = str(_number(b, "id", f"bolts[{i}]"))
        ident = new_id()
        ids[name] = ident
        parallelism = _number(b, "parallelism", f"bolts.{name}")
        if "alpha" in b:
            alpha = b["alpha"]
        elif "max_proc_rate" in b:
            rate = b["max_proc_rate"]
            if not isinstance(rate, (int, float)) or rate <= 0:
                raise _fail(f"bolts.{name}.max_proc_rate", "must be a positive number")
            alpha = parallelism / rate if isinstance(parallelism, (int, float)) else parallelism
        else:
            raise _fail(f"bolts.{name}.alpha", "missing (give alpha or max_proc_rate)")
        bolts.append({"id": ident, "name": name, "alpha": alpha, "sigma": _number(b, "sigma", f"bolts.{name}"),
                      "parallelism": parallelism})
        groupings = b.get("stormbound_groupings") or {}
        for ref in b.get("subs") or []:
            subs.append((name, ref, ident, groupings.get(str(ref)) or {}))

    upper: dict[str, str] = {}
    for name, ident in ids.items():
        upper.setdefault(name.upper(), ident)

    def lookup(ref: Any) -> str | None:
        return ids.get(str(ref)) or upper.get(str(ref).upper())

    subscriptions = []
    for bolt_name, ref, target, grouping in subs:
        source = lookup(ref)
        if source is None:
            raise _fail(f"bolts.{bolt_name}.subs", f"unknown component '{ref}'")
        subscriptions.append({"source": source, "target": target, "grouping": grouping.get("grouping", "shuffle"),
                              "fields": grouping.get("fields", [])})

    tolerance = topo.get("tolerance", vp.get("tolerance", OLD_TOLERANCE if kind == "older" else NEW_TOLERANCE))
    k = vp.get("time_bound", vp.get("num_steps"))
    checked_names = vp.get("strictly_monotonic_queues") or []
    checked = []
    for ref in checked_names:
        bolt_id = lookup(ref)
        if bolt_id is None:
            raise _fail("verification_params.strictly_monotonic_queues", f"unknown bolt '{ref}'")
        checked.append(bolt_id)
    threshold = topo.get("queue_threshold") or None
    # D-VerT rounds the kept carry up; a "emission" extension (written by our export) says otherwise
    settings = {"tolerance": tolerance, "emission": topo.get("emission", "dvert")}
    for key in ("max_idle_time", "init_queues"):
        if key in topo:
            settings[key] = topo[key]
    verification: dict[str, Any] = {"checked": checked, "queue_threshold": threshold}
    if k is not None:
        verification["k"] = k
        if isinstance(k, int) and k >= 2:
            verification["k_max"] = max(k, 40)
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


def to_dvert(topo: Topology) -> dict[str, Any]:
    """The newer D-VerT dialect (time_bound, spout parallelism) plus explicit tolerance."""
    names = {c.id: c.name for c in topo.components}
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
            "min_ttf": 0,
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
            "min_reboot_time": 10,
            "max_reboot_time": 100,
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

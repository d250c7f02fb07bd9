"""The "verified configuration" file, `stormbound-verified/1`: a topology with its verdicts.

Written by File > Export verified configuration. It records what was verified (the
whole document, its verification settings), what was found (one verdict per
property, with the bound the solver reached) and a SHA-256 content hash of the
canonical JSON of `Topology.semantics()` (app/core/tcn/check/content.py, the one
definition), so a deployment pipeline can check that the configuration it ships is
the one that was verified (layout, ids and description do not change the hash; any
semantic field does).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from app import __version__
from app.core.results import BoltVerdict, VerifyResult
from app.core.tcn.check.content import canonical_json as canonical_json
from app.core.tcn.check.content import content_hash as content_hash
from app.core.topology import Problem, Topology, TopologyError, parse_topology
from app.core.words import listed

VERIFIED_FORMAT = "stormbound-verified/1"


def _verdict_entry(result: VerifyResult, topo: Topology) -> dict[str, Any]:
    """One property's verdict in words and figures (the trace itself is not embedded)."""
    if result.property == "threshold":
        subject = f"some queue reaches {result.threshold}"
    else:
        names = result.checked or [b.name for b in topo.checked_bolts()]
        subject = "unbounded growth of " + ", ".join(names)
    entry = result.to_public_json()
    entry["subject"] = subject
    entry["verdict_words"] = verdict_words(result)
    return entry


def verdict_words(result: VerifyResult) -> str:
    """The verdict as the verification panel says it."""
    if result.verdict == "counterexample":
        return f"counterexample (k = {result.k})" if result.k is not None else "counterexample"
    if result.verdict == "none-up-to-k":
        return f"no counterexample up to k = {result.k}" if result.k is not None else "no counterexample up to k"
    if result.verdict == "unbounded":
        stormed = any(v.storm_certificate is not None or v.spill_certificate is not None
                      for v in result.bolts.values() if v.verdict == "unbounded")
        return f"unbounded ({'storm' if stormed else 'flood'} proof, certified)"
    if result.verdict == "bounded":
        return "bounded (rate proof)"
    if result.verdict == "no-repeating-growth":
        methods = {v.method for v in result.bolts.values() if v.verdict == "no-repeating-growth"}
        how = ("rate proof and linear program" if methods >= {"rate check", "linear program"}
               else "linear program" if "linear program" in methods else "rate proof")
        return f"no repeating run grows ({how}; not proven bounded in every run)"
    return "unknown"


def bolt_verdict_words(verdict: BoltVerdict) -> str:
    """One checked bolt's verdict as the verification panel's row for it says it."""
    if verdict.verdict == "counterexample" and verdict.method == "rate proof":
        return "grows (proven by rates, certified)"
    if verdict.verdict == "counterexample":
        how = f", {verdict.method}" if verdict.method not in ("none", "rate check") else ""
        return f"grows: lasso {(verdict.trace_index or 0) + 1} (k = {verdict.k}{how})"
    storm = verdict.storm_certificate
    if verdict.verdict == "unbounded" and storm is not None and storm.replay == "paced":
        whose = " and ".join([storm.failing, *(o.bolt for o in storm.others)])
        return (f"unbounded: {storm.spout}'s paced replays of {whose}'s losses pile up, then flood it "
                "(storm proof, certified)")
    if verdict.verdict == "unbounded" and storm is not None:
        return f"unbounded: {storm.failing}'s at-once replays outgrow it every failure cycle (storm proof, certified)"
    if verdict.verdict == "unbounded" and verdict.spill_certificate is not None:
        spill = verdict.spill_certificate
        return (f"unbounded: {spill.failing} backs up, fails once, and {spill.spout} replays it all at once "
                "(storm proof, certified)")
    if verdict.verdict == "unbounded" and verdict.flood_certificate is not None:
        return f"unbounded: {verdict.flood_certificate.source} backs up, then floods it (flood proof, certified)"
    if verdict.verdict == "none-up-to-k":
        return f"no lasso up to k = {verdict.k}"
    if verdict.verdict == "bounded":
        bound = f", queue < {verdict.queue_bound:.4g}" if verdict.queue_bound is not None else ""
        return f"bounded (rate proof{bound})"
    if verdict.verdict == "no-repeating-growth":
        how = "linear program, certified" if verdict.method == "linear program" else "rate proof"
        return f"no repeating run grows ({how}; not proven bounded in every run)"
    return "unknown"


# The headline names the checked bolts by verdict, worst first: (kind, words for one bolt, words for several,
# whether the bolts are named). A kind missing here is counted under its own name, after these.
HEADLINE_KINDS: tuple[tuple[str, str, str, bool], ...] = (
    ("counterexample", "grows", "grow", True),
    ("unbounded", "unbounded", "unbounded", True),
    ("unknown", "unknown", "unknown", False),
    ("none-up-to-k", "no lasso up to k", "no lasso up to k", False),
    ("no-repeating-growth", "no repeating growth", "no repeating growth", False),
    ("bounded", "bounded", "bounded", False),
)
HEADLINE_NAMES = 3  # growing bolts named before "and N more"


def _named(names: list[str]) -> str:
    """"a", "a and b", "a, b, c and 2 more"."""
    if len(names) > HEADLINE_NAMES:
        return listed(names, HEADLINE_NAMES)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def headline(verdicts: dict[str, BoltVerdict], checked: list[str], *, searching: bool = False) -> str:
    """What the checked bolts' verdicts say at a glance, what grows first: "status grows; 9 bounded",
    "all 4 bounded", "status grows; 9 bounded; 1 searching…" (`searching`: the bolts without a verdict yet)."""
    names = [n for n in checked if n in verdicts] + [n for n in verdicts if n not in checked]
    by_kind: dict[str, list[str]] = {}
    for name in names:
        by_kind.setdefault(verdicts[name].verdict, []).append(name)
    known = [k for k, *_ in HEADLINE_KINDS]
    rows = list(HEADLINE_KINDS) + [(k, k, k, False) for k in by_kind if k not in known]
    parts = []
    for kind, one, several, named in rows:
        group = by_kind.get(kind, [])
        if not group:
            continue
        words = one if len(group) == 1 else several
        parts.append(f"{_named(group)} {words}" if named or len({*checked, *names}) == 1 else f"{len(group)} {words}")
    waiting = len([n for n in checked if n not in verdicts])
    if waiting and searching:
        parts.append(f"{waiting} searching…")
    if len(parts) == 1 and not by_kind.get("counterexample") and len(names) > 1 and not waiting:
        return f"all {parts[0]}"
    return "; ".join(parts)


def result_headline(result: VerifyResult) -> str:
    """A result at a glance: the checked bolts by verdict for the growth property ("status grows; 9 bounded"),
    the verdict in words otherwise (a threshold, or a result without per-bolt verdicts)."""
    if result.property != "growth" or not result.bolts:
        return verdict_words(result)
    return headline(result.bolts, result.checked or list(result.bolts))


def build_verified(topo: Topology, results: list[VerifyResult], *, created: datetime | None = None) -> dict[str, Any]:
    """The verified-configuration document for `topo` and the verdicts found for it.

    Raises TopologyError when the topology is not a valid document or no verdict is given
    (a configuration without verdicts is not a verified one).
    """
    checked = parse_topology(topo.model_dump(mode="json"))
    if not results:
        raise TopologyError([Problem("verdicts", "no verification results: run Verify first")])
    bounds = [r.k for r in results if r.k is not None]
    when = (created or datetime.now(UTC)).astimezone(UTC)
    return {
        "format": VERIFIED_FORMAT,
        "tool": f"stormbound {__version__}",
        "created": when.isoformat(timespec="seconds").replace("+00:00", "Z"),
        "content_hash": {"algorithm": "sha256", "of": "canonical JSON of the topology semantics",
                         "value": content_hash(checked)},
        "topology": checked.model_dump(mode="json"),
        "verification": checked.verification.model_dump(mode="json"),
        "solver_bound": {"k": max(bounds) if bounds else None, "k_max": checked.verification.k_max,
                         "k_setting": checked.verification.k},
        "verdicts": [_verdict_entry(r, checked) for r in results],
        "latency": _latency(checked),
    }


def _latency(topo: Topology) -> dict[str, Any] | None:
    """Per spout the proven answer against the message timeout (docs/latency.md; proofs only: no witness and no
    max.spout.pending bisection here), None when the topology is not annotated."""
    from app.core.latency.report import latency_report

    try:
        return latency_report(topo, witnesses=False, pending=False).model_dump()
    except TopologyError:
        return None


def verified_bytes(topo: Topology, results: list[VerifyResult], *, created: datetime | None = None) -> bytes:
    """The document serialised (indented JSON), what the GUI writes through app/core/fileio.write_output."""
    text = json.dumps(build_verified(topo, results, created=created), indent=2, ensure_ascii=False)
    return (text + "\n").encode("utf-8")


def check_verified(data: Any) -> Topology:
    """Validate a decoded verified configuration and its hash; return its topology.

    Raises TopologyError naming the field when the format is wrong or the hash does not
    match the embedded topology (the file was edited after verification).
    """
    if not isinstance(data, dict) or data.get("format") != VERIFIED_FORMAT:
        raise TopologyError([Problem("format", f"not a {VERIFIED_FORMAT} document")])
    topo = parse_topology(data.get("topology"))
    recorded = (data.get("content_hash") or {}).get("value") if isinstance(data.get("content_hash"), dict) else None
    if not isinstance(recorded, str):
        raise TopologyError([Problem("content_hash.value", "missing")])
    actual = content_hash(topo)
    if recorded != actual:
        why = f"does not match the topology (recorded {recorded[:12]}…, actual {actual[:12]}…)"
        raise TopologyError([Problem("content_hash.value", why)])
    return topo

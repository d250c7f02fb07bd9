"""What every certificate checker of this room reads first (`linear.py`, `rate_growth.py`, `flood.py`): the
embedded document as a valid, annotated topology, the certificate as its model, and whether the certificate's
content hash (`content.py`) is the document's; and the two ways they read numbers (a document's decimal, a
certificate's "p/q"). Shared by the checkers only, never by the builders they check."""

from __future__ import annotations

from fractions import Fraction
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from app.core.numbers import exact
from app.core.tcn.check.content import content_hash
from app.core.topology import Bolt, Topology, TopologyError, parse_topology, unannotated_problems

CertificateT = TypeVar("CertificateT", bound=BaseModel)


def take_bound(bolt: Bolt) -> int:
    """C_TAKE as the checkers read it (docs/model.md sections 8 and 10): a bolt's executors, times an asynchronous
    bolt's threads per executor or a count window's sliding interval; restated here, not read from the builders'
    `Bolt.take_max`."""
    return bolt.parallelism * (bolt.threads if bolt.threads is not None else slide_bound(bolt))


def slide_bound(bolt: Bolt) -> int:
    """A count window's sliding interval as the certifier reads it (docs/model.md section 10): the bolt takes whole
    slides only, and tuples fewer than one slide do not wait; 1 for any other bolt. Restated from the document: the
    slide's kind decides (a mixed `withWindow(Duration L, Count S)` takes whole slides of S too, section 10.4)."""
    window = bolt.window
    if window is None or (window.slide_kind or window.kind) != "count":
        return 1
    return int(window.slide if window.slide is not None else window.length)


def timer_bound(bolt: Bolt, tolerance: Fraction) -> Fraction | None:
    """A duration window's G = (1+τ)·max(S, α) as the certifier reads it (docs/model.md section 10.3): its timer
    takes every waiting tuple at most G after its last run; None for any other bolt. Restated from the document,
    not read from the network or the rate check. The slide's kind decides (a mixed `withWindow(Count L, Duration S)` is
    a timer too, section 10.4)."""
    window = bolt.window
    if window is None or (window.slide_kind or window.kind) != "duration":
        return None
    slide = window.slide if window.slide is not None else window.length
    return (1 + tolerance) * max(exact(slide), exact(bolt.alpha))


def join_branches(topo: Topology, bolt: Bolt) -> list[tuple[str, str]] | None:
    """A join's branches as the certifier reads them (docs/model.md section 11): the input streams (component name,
    stream) of a bolt whose `join` waits for all, each once; None for any other bolt (Storm's JoinBolt is its
    window's rule). Restated from the document, not read from `Bolt.waits_for_all` or the network."""
    if bolt.join is None or bolt.join.kind != "all":
        return None
    names = {c.id: c.name for c in topo.components}
    return sorted({(names[s.source], s.stream or "default") for s in topo.subscriptions if s.target == bolt.id})


def joins_refused(topo: Topology) -> str:
    """Why a checker without the join rule refuses a document with a join that waits for every branch (empty:
    none): the default of `read_certificate`, so that a checker never reads a join as an ordinary bolt; the
    certifier, the linear checker, growth by rates' checker and the flood checker have the rule (`join_branches`,
    docs/model.md section 11)."""
    joins = [b.name for b in topo.bolts if join_branches(topo, b) is not None]
    if not joins:
        return ""
    return (f"the embedded topology has the join{'s' if len(joins) > 1 else ''} {', '.join(joins)}, and this checker "
            "has no join rule (docs/model.md section 11)")


def windows_refused(topo: Topology, count_windows: bool = False, duration_windows: bool = False) -> str:
    """Why a checker refuses a document with a windowed bolt (empty: it has none, or only the kinds it has the rule
    of: count windows when `count_windows`, duration windows when `duration_windows`), so that no checker reads a
    windowed bolt as an ordinary one (docs/model.md section 10). The certifier has both rules (`slide_bound`,
    `timer_bound`); the linear checker, growth by rates' checker and the flood checker both kinds
    (docs/verifier.md). The trigger (the slide's kind) is the rule a checker needs: a mixed window's eviction only
    decides its acks (section 10.4)."""
    windowed = [b.name for b in topo.bolts if b.window is not None
                and not (count_windows and (b.window.slide_kind or b.window.kind) == "count")
                and not (duration_windows and (b.window.slide_kind or b.window.kind) == "duration")]
    if not windowed:
        return ""
    return (f"the embedded topology has the windowed bolt{'s' if len(windowed) > 1 else ''} {', '.join(windowed)}, "
            "and this checker has no window rule (docs/model.md section 10)")


def fraction_of(text: str) -> Fraction | None:
    """A certificate's exact figure ("p/q" or a decimal); None when it is not one."""
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError, TypeError):
        return None


def read_certificate(document: Any, certificate: Any, model: type[CertificateT], what: str,
                     count_windows: bool = False, duration_windows: bool = False, joins: bool = False
                     ) -> tuple[Topology, CertificateT, list[str]] | list[str]:
    """(topology, certificate, problems so far: a hash that is not the document's) or, when either cannot be
    read, the reason why the certificate is refused; `what` names the certificate in that reason.
    `count_windows`, `duration_windows`: the checker's rules hold for bolts with such windows (docs/model.md
    sections 10.2, 10.3); a window of another kind is refused (`windows_refused`). `joins`: the checker has the
    join rule (the linear one's rows hold for a join's lassos, docs/model.md section 11); else a join is refused."""
    try:
        topo = document if isinstance(document, Topology) else parse_topology(document)
    except TopologyError as exc:
        return [f"the embedded topology is not a valid document: {exc}"]
    try:
        cert = certificate if isinstance(certificate, model) else model.model_validate(certificate)
    except ValidationError as exc:
        return [f"not {what}: {exc.errors()[0]['msg']}"]
    missing = unannotated_problems(topo)
    if missing:
        return [f"the embedded topology is not annotated: {missing[0]}"]
    windowed = windows_refused(topo, count_windows, duration_windows) or ("" if joins else joins_refused(topo))
    if windowed:
        return [windowed]
    problems: list[str] = []
    if getattr(cert, "content_hash", None) != content_hash(topo):
        problems.append("content_hash is not the embedded topology's (the document changed after the proof)")
    return topo, cert, problems


def stated_terms(terms: list[Any], ceilings: dict[tuple[str, str], tuple[Fraction, Fraction]], target: str,
                 senders: str) -> tuple[list[Fraction], set[tuple[str, str]], list[str]]:
    """A certificate's input terms of `target` (each a sender, a stream, a rate and a ratio) against the ceilings
    the checker derived for them: the accepted terms' rate × ratio, the streams stated and the problems. A term
    must name an input stream of the target from `senders` once, with rate and ratio fractions p/q ≥ 0 at most
    their ceilings."""
    values: list[Fraction] = []
    seen: set[tuple[str, str]] = set()
    problems: list[str] = []
    for t in terms:
        key, rate, ratio = (t.sender, t.stream), fraction_of(t.rate), fraction_of(t.ratio)
        if key not in ceilings or key in seen:
            problems.append(f"term {t.sender}/{t.stream}: not an input stream of {target} from {senders}, or named "
                            "twice")
        elif rate is None or ratio is None or rate < 0 or ratio < 0:
            problems.append(f"term {t.sender}/{t.stream}: rate and ratio must be fractions p/q ≥ 0")
        elif rate > ceilings[key][0] or ratio > ceilings[key][1]:
            problems.append(f"term {t.sender}/{t.stream}: rate {t.rate} × ratio {t.ratio} is above the derived "
                            f"{ceilings[key][0]} × {ceilings[key][1]}")
        else:
            values.append(rate * ratio)
        seen.add(key)
    return values, seen, problems

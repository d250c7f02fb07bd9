"""What the rate check says of one bolt, and why, in words (docs/boundedness.md).

Four answers, from strongest to weakest proof of safety:

* `bounded`: in every run the queue stays below `queue_bound` (an every-run proof);
* `no-repeating-growth`: no repeating run (lasso) makes the queue grow, but some run that is not
  repeating may push it past any bound (an upstream bolt backs up, recovers and floods it);
* `may-grow`: some timing may let the queue grow (the search decides);
* `grows`: at nominal timing (τ = 0, no idling) its inflow exceeds its capacity (an estimate).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Literal

from app.core.numbers import exact
from app.core.rates.flows import RateFigures, keeps_up
from app.core.rates.joins import branch_name, join_figures
from app.core.rates.windows import duration_note, window_note
from app.core.topology import ASYNC_CLASSES, DEFAULT_STREAM, Bolt

Status = Literal["bounded", "no-repeating-growth", "may-grow", "grows"]
#: the words a user reads for each status
STATUS_WORDS: dict[str, str] = {"bounded": "bounded", "no-repeating-growth": "no repeating run grows",
                                "may-grow": "may grow", "grows": "grows"}
#: the same, short enough for a bolt on the canvas
STATUS_SHORT: dict[str, str] = {**STATUS_WORDS, "no-repeating-growth": "no loop grows"}


def status_of(e: RateFigures, ident: str) -> Status:
    """The rate check's answer for one bolt (by id); a join's is also its cache's (docs/model.md section 11)."""
    bolt = e.by_id[ident]
    j = join_figures(e, bolt) if isinstance(bolt, Bolt) else None
    if j is not None and j.grows:
        return "grows"
    if j is not None and j.cache_bound is None:
        return "grows" if keeps_up(e.cap_nominal[ident], e.in_nominal[ident]) else "may-grow"
    return status_of_queue(e, ident)


def status_of_queue(e: RateFigures, ident: str) -> Status:
    """The rate check's answer for one bolt's queue alone (a join's cache aside)."""
    if e.bounded(ident):
        return "bounded"
    if keeps_up(e.cap_nominal[ident], e.in_nominal[ident]):
        return "grows"
    if e.no_repeating_growth(ident):
        return "no-repeating-growth"
    return "may-grow"


def fmt(x: Fraction | float) -> str:
    return f"{float(x):.3g}"


def explain(name: str, e: RateFigures, ident: str, status: Status) -> str:
    """One explanation from the very figures that decided `status`."""
    bolt = e.by_id[ident]
    window = window_note(e, bolt) + duration_note(e, bolt) + join_note(e, bolt) if isinstance(bolt, Bolt) else ""
    return (_explain_rates(name, e, ident, status) + _async_note(e, ident) + window + _ratio_note(e, ident)
            + _own_ratio(e, ident))


def _async_note(e: RateFigures, ident: str) -> str:
    """An asynchronous bolt's capacity in threads; a bolt of a class Storm runs asynchronously that the document
    models as an ordinary one, said (docs/model.md section 8)."""
    bolt = e.by_id[ident]
    if not isinstance(bolt, Bolt):
        return ""
    if bolt.not_modelled is not None:
        return (f"; it is {bolt.not_modelled}, which the model does not have yet: this verdict reads it as an ordinary "
                "bolt (one FIFO queue, α per batch, σ per tuple) and does not decide its windows or joins "
                "(docs/model.md section 10)" + (_slowest_branch(e, ident) if bolt.not_modelled.startswith("a join")
                                                else ""))
    if bolt.threads is not None:
        executors = f"{bolt.parallelism} executor{'s' if bolt.parallelism != 1 else ''}"
        return (f"; it is asynchronous: {executors} × {bolt.threads} threads, each "
                f"{fmt(exact(bolt.alpha))} s per tuple, {bolt.take_max} tuples in work at once")
    if bolt.class_name in ASYNC_CLASSES:
        key = ASYNC_CLASSES[bolt.class_name][0]
        return (f"; its class {bolt.class_name.rsplit('.', 1)[-1]} is asynchronous in Storm (execute only enqueues, "
                f"{key} threads fetch), but this document models it as an ordinary bolt: give it its threads "
                "(docs/model.md section 8)")
    return ""


def _slowest_branch(e: RateFigures, ident: str) -> str:
    """A join's busiest input bolt at nominal timing: the branch its output waits for (docs/model.md section 10)."""
    branches = {p for p, _ in e.inputs[ident] if p in e.cap_nominal and p != ident}
    if not branches:
        return ""
    rho = {p: e.in_nominal[p] / e.cap_nominal[p] for p in branches}
    slowest = max(sorted(branches, key=lambda p: e.names[p]), key=lambda p: rho[p])
    return (f"; its output waits for its slowest branch, {e.names[slowest]} (utilisation {fmt(rho[slowest])} at "
            "nominal timing), and meanwhile holds the other branches' parts")


def join_note(e: RateFigures, bolt: Bolt) -> str:
    """The explanation's words for a join that waits for every branch (empty for any other bolt)."""
    j = join_figures(e, bolt)
    if j is None:
        return ""
    slow = branch_name(e, j.slowest)
    text = (f"; it is a join waiting for a part from each of its {len(j.nominal)} branches, so it completes the "
            f"messages of its slowest branch, {slow}: {fmt(j.nominal[j.slowest])} per second at nominal timing")
    if j.grows:
        fastest = max(j.nominal, key=lambda k: j.nominal[k])
        text += (f", while {branch_name(e, fastest)} delivers {fmt(j.nominal[fastest])}: its cache grows by about "
                 f"{fmt(j.growth)} parts/s on the faster branches, without bound")
        if j.max_cache is not None:
            text += (f" (Metron's maxCacheSize {j.max_cache} is full after about {fmt(j.max_cache / j.growth)} s; it "
                     f"then evicts about {fmt(j.growth)} messages/s, whose trees time out and are replayed: "
                     "eviction is not in the model, docs/model.md section 11)")
        return text
    if j.cache_bound is None:
        return text + f"; its cache is not proven bounded: {j.why_not}"
    text += (f"; its cache holds at most {fmt(j.cache_bound)} messages in every run (the parts in flight on its "
             f"branches from {e.names[j.fork] if j.fork else '?'})")
    if j.max_cache is not None and j.cache_bound > j.max_cache:
        text += (f", which may exceed Metron's maxCacheSize {j.max_cache} (it then evicts, and the evicted trees time "
                 "out and are replayed)")
    if j.wait_nominal is not None:
        text += (f"; at nominal timing a message's parts wait about {fmt(j.wait_nominal)} s in it for the slowest "
                 "branch")
    return text


def _ratio_note(e: RateFigures, ident: str) -> str:
    """Says which upstream bolts pass on more (or less) than σ per processed tuple."""
    notes = []
    for p, stream in e.inputs[ident]:
        sigma, lo, hi = e.streams[p].get(stream, (Fraction(0),) * 3)
        if p in e.sigma and (lo, hi) != (sigma, sigma):
            span = str(hi) if lo == hi else f"{lo}..{hi}"
            on = "" if stream == DEFAULT_STREAM else f" on stream '{stream}'"
            notes.append(f"{e.names[p]} emits {span}{on} per processed tuple in the long run, not its "
                         f"σ = {sigma} (emission 'dvert' rounds its carry up)")
    return ("; " + "; ".join(notes)) if notes else ""


def _own_ratio(e: RateFigures, ident: str) -> str:
    lo, hi = e.sigma_lo[ident], e.sigma_hi[ident]
    if lo == hi == e.sigma[ident]:
        return ""
    span = str(hi) if lo == hi else f"{lo}..{hi}"
    return (f"; it passes on {span} tuples per processed tuple in the long run, not σ = {e.sigma[ident]} "
            "(emission 'dvert' rounds its carry up)")


def flooding(e: RateFigures, ident: str) -> list[str]:
    """The names of the upstream bolts not proven bounded that may flood `ident` after a backlog."""
    return [e.names[p] for p, stream in e.inputs[ident]
            if p in e.pinned and p != ident and e.carries(p, stream)]


def _explain_rates(name: str, e: RateFigures, ident: str, status: Status) -> str:
    bolt = e.by_id[ident]
    j = join_figures(e, bolt) if isinstance(bolt, Bolt) else None
    if j is not None and status != "bounded" and (j.grows or j.cache_bound is None) and (
            status_of_queue(e, ident) != status):
        said = {"grows": "grows", "may-grow": "may grow"}.get(status, status)
        return (f"{name}'s cache {said}, whatever its queue does: it can process {fmt(e.cap_nominal[ident])} "
                f"messages/s at nominal timing and completes {fmt(e.in_nominal[ident])}, its queue "
                + ("not proven bounded" if (bound := e.queue_bound[ident]) is None else
                   f"below {fmt(bound)} messages in every run"))
    if status == "bounded":
        bound = e.queue_bound[ident]
        assert bound is not None  # bounded means a bound was derived
        if ident in e.timed:  # a duration window: a timer takes whatever arrived (docs/model.md section 10.3)
            return (f"{name} takes whatever arrived at each evaluation of its timer, at most "
                    f"{fmt(e.timed[ident])} s apart, and receives at most {fmt(e.in_max[ident])} tuples/s in any "
                    f"long window of any run, so it holds below {fmt(bound)} tuples not yet in an evaluated window")
        return (f"{name} can process at least {fmt(e.cap_min[ident])} tuples/s and receives at most "
                f"{fmt(e.in_max[ident])} in any long window of any run, so its queue stays below "
                f"{fmt(bound)} tuples")
    if status == "grows":
        return (f"{name} can process {fmt(e.cap_nominal[ident])} tuples/s at nominal timing but receives "
                f"{fmt(e.in_nominal[ident])}: its queue grows by about "
                f"{fmt(e.in_nominal[ident] - e.cap_nominal[ident])} tuples/s")
    upstream = flooding(e, ident)
    timed = [e.names[j] for j in (ident, *(p for p, _ in e.inputs[ident])) if j in e.timed and j in e.pinned]
    if timed:  # a duration window inside a cycle: no figure of its "capacity" (2^62) means anything here
        return (f"{name} is not proven bounded: {', '.join(dict.fromkeys(timed))} "
                f"{'is a duration window' if len(set(timed)) == 1 else 'are duration windows'} inside a cycle, whose "
                "timer bound the rate check does not carry around cycles (docs/model.md section 10.3)")
    if status == "no-repeating-growth":
        return (f"no repeating run makes {name}'s queue grow: in the long run it receives at most "
                f"{fmt(e.in_long[ident])} tuples/s and processes at least {fmt(e.cap_min[ident])}; but it is not "
                f"proven bounded: {', '.join(upstream) or 'an upstream bolt'} may back up and then drain "
                f"its backlog at full speed, {fmt(e.in_max[ident])} tuples/s into {name}, for as long as the "
                "backlog lasts")
    flood = (f"; {', '.join(upstream)} may also drain a backlog into it at full speed, up to "
             f"{fmt(e.in_max[ident])} tuples/s" if upstream and e.in_long[ident] != e.in_max[ident] else "")
    return (f"{name} can process at most {fmt(e.cap_min[ident])} tuples/s in its slowest timing "
            f"but may receive {fmt(e.in_long[ident])} in the long run: some timings let its queue grow{flood}")

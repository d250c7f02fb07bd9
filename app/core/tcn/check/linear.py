"""An independent checker for the linear program's certificates: plain Python, exact fractions, no z3.

It shares no code with the builder (`app/core/tcn/linear.py`), in the spirit of the trace certifier
(`app/core/tcn/check/certify.py`): from the topology document alone it recomputes every constant and states
every row of one loop pass again (docs/verifier.md, "Linear program"), with the certifier's own impact
Imp(j, s) (`certify_failures.py`) and the room's own output ratio bounds σ_lo, σ_hi (`ratios.py`).
A certificate is accepted when its content hash is the document's, its target is a bolt of it, every
row it names exists, every inequality's multiplier is ≥ 0, and the weighted sum of the rows is
`Σ c_v·v + c ≥ 0` with every c_v ≤ 0 (every variable is ≥ 0) and c < 0: no point satisfies the rows.

A certificate file (`stormbound verify --certificate-out FILE`, `files.py`) holds one
entry per bolt the linear program decided, each with the topology document its rows are built from (the
bolt's cone of influence) and the certificate.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from typing import Any

from app.core.numbers import exact
from app.core.results import LinearCertificate
from app.core.tcn.check.certify_failures import FailureRules, failure_rules
from app.core.tcn.check.linear_deaths import DeathRows, death_rows
from app.core.tcn.check.ratios import ratio_bounds
from app.core.tcn.check.reading import fraction_of, join_branches, read_certificate, slide_bound, take_bound
from app.core.topology import Bolt, Spout, Topology
from app.core.words import listed

_Row = tuple[str, dict[str, Fraction], Fraction]  # kind ("ge" / "eq"), coefficients, constant



def label(*names: str) -> str:
    """The bracketed part of a variable's or a row's name: `[B1]`, `[B1/default]`, or JSON (`["a/b"]`)
    when a name holds `[`, `]`, `/`, `"` or a backslash: different components or streams never share a
    variable, whatever their names."""
    if any(ch in name for name in names for ch in '[]/"\\'):
        return json.dumps(list(names), ensure_ascii=False)
    return "[" + "/".join(names) + "]"


def _round_excess(sigma: Fraction) -> Fraction:
    """A `"dvert"` emit of E = ⌊σ·t⌋ keeps ⌈t − E/σ⌉: E exceeds σ·(t − kept) by σ·(⌈x⌉ − x), x = t − E/σ
    = j/num(σ) for some j < den(σ): nothing when σ or 1/σ is whole, else below σ·(1 − 1/num(σ))."""
    if sigma.denominator == 1 or sigma.numerator <= 1:
        return Fraction(0)
    return sigma - sigma / sigma.numerator


def _row(rows: dict[str, _Row], name: str, kind: str, constant: Fraction | int = 0) -> dict[str, Fraction]:
    """A new row of `rows`, its coefficients to fill with `_put`."""
    coefficients: dict[str, Fraction] = {}
    rows[name] = (kind, coefficients, Fraction(constant))
    return coefficients


def _put(coefficients: dict[str, Fraction], *terms: tuple[str, Fraction | int]) -> None:
    for var, value in terms:
        coefficients[var] = coefficients.get(var, Fraction(0)) + Fraction(value)


def _spout_rows(rows: dict[str, _Row], sp: Spout, tau: Fraction, restarts: list[str]) -> None:
    """Fresh emissions N within M bursts of at most `burst`, one burst per period 1/rate (± tau); after a death of
    a worker that may run it (`restarts`, their X) one burst may come early, and while it is down none need come
    (docs/model.md 9.4)."""
    s = sp.name
    a = 1 / exact(sp.rate)
    fresh, count = f"N{label(s)}", f"M{label(s)}"
    c = _row(rows, f"emissions{label(s)}", "ge")
    _put(c, (fresh, 1), (count, -1))
    c = _row(rows, f"burst{label(s)}", "ge")
    _put(c, (count, sp.burst), (fresh, -1))
    c = _row(rows, f"period-lo{label(s)}", "ge")
    _put(c, ("T", 1), (fresh, -a), (count, a * tau), *((x, a * sp.burst) for x in restarts))
    if restarts:
        return
    c = _row(rows, f"period-hi{label(s)}", "ge")
    _put(c, (fresh, a), (count, a * tau), ("T", -1))


def _replay_rows(rows: dict[str, _Row], s: str, fed_back: list[str], paced: bool, died: bool) -> None:
    """Spout `s`'s replay backlog, fed by the losses of the bolts `fed_back` (and by the workers' deaths, Gw, when
    `died`), sent paced or at once."""
    c = _row(rows, f"backlog{label(s)}", "eq")
    _put(c, (f"dR{label(s)}", 1), (f"G{label(s)}", -1), (f"R{label(s)}", 1))
    c = _row(rows, f"replays-in{label(s)}", "eq")
    _put(c, (f"G{label(s)}", 1))
    for j in fed_back:
        _put(c, (f"r{label(j, s)}", -1))
    if died:
        _put(c, (f"Gw{label(s)}", -1))
    if paced:
        c = _row(rows, f"paced{label(s)}", "ge")
        _put(c, (f"N{label(s)}", 1), (f"R{label(s)}", -1))
    else:
        c = _row(rows, f"at-once{label(s)}", "eq")
        _put(c, (f"dR{label(s)}", 1))


def _spout_stream_rows(rows: dict[str, _Row], sp: Spout, emitted: list[str], listened: set[tuple[str, str]],
                       dvert: bool, fed_back: bool) -> None:
    """Each listened declared stream of a spout against what it `emitted` on its default stream."""
    s = sp.name
    fresh, count = f"N{label(s)}", f"M{label(s)}"
    for st in sp.streams:
        if (s, st) not in listened:
            continue
        ratio, out = exact(sp.stream_ratio[st]), f"E{label(s, st)}"
        if not dvert:
            c = _row(rows, f"ratio{label(s, st)}", "eq")
            _put(c, (out, 1))
            for v in emitted:
                _put(c, (v, -ratio))
            continue
        c = _row(rows, f"ratio-round-lo{label(s, st)}", "ge")
        _put(c, (out, 1))
        for v in emitted:
            _put(c, (v, -ratio))
        c = _row(rows, f"ratio-round-hi{label(s, st)}", "ge")
        _put(c, (out, -1), (count, _round_excess(ratio)))
        for v in emitted:
            _put(c, (v, ratio))
        if not fed_back:
            lo, hi = ratio_bounds(ratio, sp.burst, "dvert")
            c = _row(rows, f"ratio-lo{label(s, st)}", "ge")
            _put(c, (out, 1), (fresh, -lo))
            c = _row(rows, f"ratio-hi{label(s, st)}", "ge")
            _put(c, (fresh, hi), (out, -1))


def _put_carried(c: dict[str, Fraction], u: str, st: str, spout_names: list[str], replaying: set[str],
                 sign: int) -> None:
    """What stream (u, st) carries in a pass, `sign` times: a spout's default stream its fresh emissions and
    replays, any other stream its count."""
    if u in spout_names and st == "default":
        _put(c, (f"N{label(u)}", sign))
        if u in replaying:
            _put(c, (f"R{label(u)}", sign))
    else:
        _put(c, (f"E{label(u, st)}", sign))


def _bolt_rows(rows: dict[str, _Row], bo: Bolt, received: list[tuple[str, str]], spout_names: list[str],
               replaying: set[str], branches: list[tuple[str, str]] | None = None) -> None:
    """A bolt takes K batches of P tuples in all; A tuples arrive from what it `received` (a spout's
    default stream: fresh emissions, and replays from a spout of `replaying`); a join's `branches` each deliver at
    least A parts instead."""
    j = bo.name
    takes, taken, came = f"K{label(j)}", f"P{label(j)}", f"A{label(j)}"
    c = _row(rows, f"takes{label(j)}", "ge")
    _put(c, (taken, 1), (takes, -1))
    if not _timed(bo):  # (a duration window's run takes all it holds: no bound per batch)
        c = _row(rows, f"batch{label(j)}", "ge")
        _put(c, (takes, take_bound(bo)), (taken, -1))
    if branches is not None:  # a join (docs/model.md section 11): every branch delivers at least A parts a pass
        for u, st in branches:
            c = _row(rows, f"cache{label(j, u, st)}", "ge")
            _put(c, (came, -1))
            _put_carried(c, u, st, spout_names, replaying, 1)
        return
    c = _row(rows, f"arrivals{label(j)}", "eq")
    _put(c, (came, 1))
    for u, st in received:
        _put_carried(c, u, st, spout_names, replaying, -1)


def _steady_bolt_rows(rows: dict[str, _Row], bo: Bolt, tau: Fraction) -> None:
    """A bolt that never fails: its queue grows by what arrives less what it takes, each batch takes time."""
    j = bo.name
    takes, taken, came, grew = f"K{label(j)}", f"P{label(j)}", f"A{label(j)}", f"d{label(j)}"
    c = _row(rows, f"queue{label(j)}", "eq")
    _put(c, (grew, 1), (came, -1), (taken, 1))
    c = _row(rows, f"busy{label(j)}", "ge")
    _put(c, ("T", 1), (takes, -exact(bo.alpha) * (1 - tau)))
    if _timed(bo):  # every run of a duration window empties its queue, so no lasso makes it grow (section 10.3)
        c = _row(rows, f"timer{label(j)}", "eq")
        _put(c, (grew, 1))


def _timed(bo: Bolt) -> bool:
    """Whether a timer triggers the bolt's window (docs/model.md section 10.3: a duration slide, also under a count
    length, 10.4), read from the document."""
    return bo.window is not None and (bo.window.slide_kind or bo.window.kind) == "duration"


def _window_count(rate_per_gap: Fraction, gap: Fraction) -> tuple[Fraction, Fraction]:
    """A sender whose emits are at least `gap` apart makes at most w/gap + 1 of them in a closed window of length
    w: as (per second, plus), times `rate_per_gap` tuples each."""
    return rate_per_gap / gap, rate_per_gap


def _stream_window(sigma: Fraction, most: Fraction, gap: Fraction, extra: Fraction,
                   dvert: bool) -> tuple[Fraction, Fraction]:
    """(per second, plus): a stream of ratio σ, whose sender hands the emit rule at most `most` tuples per emit
    (emits at least `gap` apart) and at most most·w/gap + `extra` in a window, carries in any window of length w at
    most σ times that, plus the carry kept before the window (σ·c < 1 under "exact"; c ≤ ⌈1/σ⌉ under "dvert")
    and, under "dvert", each emit's rounding."""
    if not sigma:
        return Fraction(0), Fraction(0)
    per_second, plus = sigma * most / gap, sigma * extra
    if not dvert:
        return per_second, plus + 1
    rounding = _round_excess(sigma)
    return per_second + rounding / gap, plus + rounding + sigma * math.ceil(1 / sigma)


def arrival_window(topo: Topology, bo: Bolt, received: list[tuple[str, str]], replaying: set[str],
                   rules: FailureRules | None) -> tuple[Fraction, Fraction] | None:
    """(per second, plus): in any window of length w of any run at most per_second·w + plus tuples arrive at
    `bo` (docs/verifier.md, "Losses bounded by time"); None when that is not shown: `bo` or a bolt it receives
    from has a count window over several tuples, or a spout it receives from replays at once."""
    tau = exact(topo.settings.tolerance)
    if slide_bound(bo) > 1 or tau >= 1:
        return None
    dvert = topo.settings.emission == "dvert"
    spouts = {sp.name: sp for sp in topo.spouts}
    bolts = {b.name: b for b in topo.bolts}
    per_second, plus = Fraction(0), Fraction(0)
    for u, st in received:
        if u in spouts:
            sp = spouts[u]
            copies = Fraction(1)
            if u in replaying:
                if rules is None or rules.mode not in ("paced", "none"):
                    return None
                if rules.mode == "paced":
                    copies = Fraction(2)  # a replay per fresh tuple at most
            gap = (1 - tau) / exact(sp.rate)
            fresh = (copies / gap, copies * sp.burst)
            got = fresh if st == "default" else _stream_window(exact(sp.stream_ratio[st]), copies, gap,
                                                                copies * sp.burst, dvert)
        else:
            sender = bolts[u]
            if slide_bound(sender) > 1 or _timed(sender):  # a window's output comes per window, not per tuple
                return None
            size = Fraction(take_bound(sender))
            gap = exact(sender.alpha) * (1 - tau)
            emits = _window_count(size, gap)
            got = _stream_window(exact(sender.output_streams()[st] or 0), size, gap, emits[1], dvert)
        per_second, plus = per_second + got[0], plus + got[1]
    return per_second, plus


def _failing_bolt_rows(rows: dict[str, _Row], bo: Bolt, tau: Fraction, rules: FailureRules, tree: list[str],
                       hitting: list[str], window: tuple[Fraction, Fraction] | None = None,
                       idle: Fraction = Fraction(0)) -> None:
    """A bolt that may fail F times, down D in all: its queue loses L tuples, replayed by the spouts of `tree`.
    When dying workers may run it (`hitting`, their X), F is its own failures Fo and their deaths' hits, and its
    losses are no longer bounded by its replays (docs/model.md 9.4). With at most `window` = (per second, plus)
    tuples arriving in any window, each failure loses what piles up since its queue was last empty, and what
    arrives while it is down."""
    j = bo.name
    size = take_bound(bo)
    takes, taken, came, grew = f"K{label(j)}", f"P{label(j)}", f"A{label(j)}", f"d{label(j)}"
    fails, down, lost = f"F{label(j)}", f"D{label(j)}", f"L{label(j)}"
    own = f"Fo{label(j)}" if hitting else fails
    shortest = exact(bo.alpha) * (1 - tau)
    in_batches = f"Lb{label(j)}"  # lost with the batch in progress at a failure: taken (in P) and lost (in L)
    c = _row(rows, f"queue{label(j)}", "eq")
    _put(c, (grew, 1), (came, -1), (taken, 1), (lost, 1), (in_batches, -1))
    c = _row(rows, f"batch-lost{label(j)}", "ge")
    _put(c, (fails, size), (in_batches, -1))
    c = _row(rows, f"batch-in-lost{label(j)}", "ge")
    _put(c, (lost, 1), (in_batches, -1))
    c = _row(rows, f"busy{label(j)}", "ge")
    _put(c, ("T", 1), (down, -1), (takes, -shortest), (fails, shortest))
    c = _row(rows, f"ttf{label(j)}", "ge")
    _put(c, ("T", 1), (down, -1), (own, -rules.min_ttf[j]))
    c = _row(rows, f"down-lo{label(j)}", "ge")
    _put(c, (down, 1), (own, -rules.min_reboot))
    c = _row(rows, f"down-hi{label(j)}", "ge")
    _put(c, (own, rules.max_reboot), (down, -1))
    if hitting:
        c = _row(rows, f"hit{label(j)}", "ge")
        _put(c, (fails, -1), (own, 1), *((x, 1) for x in hitting))
    if window is not None:
        per_second, plus = window
        # while its queue is never empty it takes `size` tuples at least once per α(1+τ) + max_idle
        least = size / (exact(bo.alpha) * (1 + tau) + idle)
        surplus = max(Fraction(0), per_second - least)
        c = _row(rows, f"lost-time{label(j)}", "ge")
        _put(c, ("T", surplus), (down, per_second - surplus), (fails, 2 * plus + size), (lost, -1), (in_batches, 1))
        if per_second > least:
            # U, the time its queue piles up before its failures, costs at least least·U − size·F taken tuples (in
            # P), so U ≤ (P + size·F) / least in what piles up: (per_second − least)·U + per_second·D + (2·plus +
            # size)·F
            k = per_second / least
            c = _row(rows, f"lost-takes{label(j)}", "ge")
            _put(c, (taken, k - 1), (down, per_second), (fails, 2 * plus + size + (k - 1) * size), (lost, -1),
                 (in_batches, 1))
    if tree:
        c = _row(rows, f"lost-lo{label(j)}", "ge")
        _put(c, (lost, 1))
        for s in tree:
            _put(c, (f"r{label(j, s)}", -1))
        imps = [rules.impact[j][s] for s in tree]
        if not hitting and all(imp is not None for imp in imps):
            c = _row(rows, f"lost-hi{label(j)}", "ge")
            _put(c, (lost, -1))
            for s in tree:
                _put(c, (f"r{label(j, s)}", Fraction(rules.impact[j][s] or 0)))


def _bolt_stream_rows(rows: dict[str, _Row], bo: Bolt, listened: set[tuple[str, str]], dvert: bool,
                      may_fail: bool) -> None:
    """Each listened stream of a bolt against the P tuples it took (and its failures, when it may fail)."""
    j = bo.name
    size = take_bound(bo)
    takes, taken, fails = f"K{label(j)}", f"P{label(j)}", f"F{label(j)}"
    for st, value in bo.output_streams().items():
        if (j, st) not in listened:
            continue
        sigma, out, tag = exact(value or 0), f"E{label(j, st)}", label(j, st)
        if may_fail:
            completed = ((taken, sigma), (f"Lb{label(j)}", -sigma))  # σ·(P − Lb): the batches it finishes
            if dvert:
                c = _row(rows, f"ratio-round{tag}", "ge")
                _put(c, *completed, (takes, _round_excess(sigma)), (out, -1))
                kept = sigma * math.ceil(1 / sigma) if sigma else Fraction(0)
            else:
                c = _row(rows, f"ratio-hi{tag}", "ge")
                _put(c, *completed, (out, -1))
                kept = Fraction(1)
            if sigma:
                c = _row(rows, f"ratio-lo{tag}", "ge")
                _put(c, (out, 1), *((v, -x) for v, x in completed), (fails, kept))
        elif not dvert:
            c = _row(rows, f"ratio{tag}", "eq")
            _put(c, (out, 1), (taken, -sigma))
        elif _timed(bo):  # batches of any size: a rounded-up carry is at least the exact one, so E ≥ σ·P a pass
            c = _row(rows, f"ratio-lo{tag}", "ge")
            _put(c, (out, 1), (taken, -sigma))
            c = _row(rows, f"ratio-round{tag}", "ge")
            _put(c, (taken, sigma), (takes, _round_excess(sigma)), (out, -1))
        else:
            lo, hi = ratio_bounds(sigma, size, "dvert")
            c = _row(rows, f"ratio-lo{tag}", "ge")
            _put(c, (out, 1), (taken, -lo))
            c = _row(rows, f"ratio-hi{tag}", "ge")
            _put(c, (taken, hi), (out, -1))
            c = _row(rows, f"ratio-round{tag}", "ge")
            _put(c, (taken, sigma), (takes, _round_excess(sigma)), (out, -1))


def _hit_bolt_rows(rows: dict[str, _Row], bo: Bolt, tau: Fraction, hitting: list[str], target: bool) -> None:
    """A bolt a dying worker may run (`hitting`: those workers' X): it may lose any tuples, a batch per death,
    its phases still do not overlap; the target may take late while such a worker is down (D ≤ Σ Y)."""
    j = bo.name
    takes, taken, came, grew = f"K{label(j)}", f"P{label(j)}", f"A{label(j)}", f"d{label(j)}"
    hits, lost, in_batches = f"F{label(j)}", f"L{label(j)}", f"Lb{label(j)}"
    shortest = exact(bo.alpha) * (1 - tau)
    c = _row(rows, f"queue{label(j)}", "eq")
    _put(c, (grew, 1), (came, -1), (taken, 1), (lost, 1), (in_batches, -1))
    if not _timed(bo):  # (the run in progress of a duration window holds any number of tuples)
        c = _row(rows, f"batch-lost{label(j)}", "ge")
        _put(c, (hits, take_bound(bo)), (in_batches, -1))
    else:  # a run or a death empties a duration window's queue: no lasso makes it grow, deaths or not (10.3, 9.5)
        c = _row(rows, f"timer{label(j)}", "eq")
        _put(c, (grew, 1))
    c = _row(rows, f"batch-in-lost{label(j)}", "ge")
    _put(c, (lost, 1), (in_batches, -1))
    c = _row(rows, f"busy{label(j)}", "ge")
    _put(c, ("T", 1), (takes, -shortest), (hits, shortest))
    c = _row(rows, f"hit{label(j)}", "ge")
    _put(c, (hits, -1), *((x, 1) for x in hitting))
    if target:
        c = _row(rows, f"hit-down{label(j)}", "ge")
        _put(c, (f"D{label(j)}", -1), *(("Y" + x[1:], 1) for x in hitting))


def _growth_rows(rows: dict[str, _Row], bo: Bolt, tau: Fraction, idle: Fraction, hit: bool) -> None:
    """The target's queue grows by at least one, its batches are full and it is never idle for long (but while a
    worker that may run it is down, D, when `hit`)."""
    j = bo.name
    takes, taken, grew = f"K{label(j)}", f"P{label(j)}", f"d{label(j)}"
    c = _row(rows, f"grows{label(j)}", "ge", -1)
    _put(c, (grew, 1))
    if _timed(bo):  # (its `timer` row says it never grows)
        return
    c = _row(rows, f"full{label(j)}", "eq")
    _put(c, (taken, 1), (takes, -take_bound(bo)))
    c = _row(rows, f"never-idle{label(j)}", "ge")
    _put(c, (takes, exact(bo.alpha) * (1 + tau) + idle), ("T", -1), *([(f"D{label(j)}", 1)] if hit else []))


def _join_case_rows(rows: dict[str, _Row], j: str, branches: list[tuple[str, str]], slowest: tuple[str, str],
                    spout_names: list[str], replaying: set[str]) -> None:
    """Target join `j`'s cache grows in the pass while the branch `slowest` sets every min: that branch's cache is
    as it was (it carries exactly the A messages completed), the other branches' caches gain at least one part."""
    c = _row(rows, f"slowest{label(j, *slowest)}", "eq")
    _put(c, (f"A{label(j)}", -1))
    _put_carried(c, *slowest, spout_names, replaying, 1)
    c = _row(rows, f"caches-grow{label(j)}", "ge", -1)
    for u, st in branches:
        if (u, st) != slowest:
            _put(c, (f"A{label(j)}", -1))
            _put_carried(c, u, st, spout_names, replaying, 1)


def pass_rows(topo: Topology, target: str, slowest: tuple[str, str] | None = None) -> dict[str, _Row]:
    """Every row of one loop pass of `topo` in which bolt `target` grows, keyed by name: per spout its
    emissions, its replays and its streams; per bolt its takes and arrivals, its queue (failures and
    losses when it may fail) and its streams; the target's growth. With `slowest` (a join target's branch), the
    target's cache grows instead, that branch's does not, and every other bolt's queue is level."""
    rows: dict[str, _Row] = {}
    tau = exact(topo.settings.tolerance)
    idle = exact(topo.settings.max_idle_time)
    dvert = topo.settings.emission == "dvert"
    name_of = {c.id: c.name for c in topo.components}
    received = {name_of[b]: [(name_of[u], st) for u, st in pairs] for b, pairs in topo.inputs().items()}
    listened = {pair for pairs in received.values() for pair in pairs}
    rules = failure_rules(topo)
    down_bolts = {} if rules is None else {j: v for j, v in rules.min_ttf.items() if j != target}
    spout_names = [s.name for s in topo.spouts]
    trees: dict[str, list[str]] = {}  # failing bolt -> spouts replaying its losses
    for j in down_bolts:
        reach = (rules.impact.get(j, {}) if rules is not None and rules.mode != "none" else {})
        trees[j] = [s for s in spout_names if s in reach]
    replaying = {s for ss in trees.values() for s in ss}
    deaths: DeathRows | None = death_rows(topo, target, rows, label)
    if deaths is not None:
        replaying |= deaths.replaying
    hitting = {} if deaths is None else deaths.hitting

    for sp in topo.spouts:
        fed_back = sorted(j for j, ss in trees.items() if sp.name in ss)
        _spout_rows(rows, sp, tau, hitting.get(sp.name, []))
        if sp.name in replaying:
            died = deaths is not None and sp.name in deaths.replaying
            _replay_rows(rows, sp.name, fed_back, topo.settings.replay == "paced", died)
        emitted = [f"N{label(sp.name)}"] + ([f"R{label(sp.name)}"] if sp.name in replaying else [])
        _spout_stream_rows(rows, sp, emitted, listened, dvert, sp.name in replaying)

    for bo in topo.bolts:
        hit = bool(hitting.get(bo.name))
        _bolt_rows(rows, bo, received.get(bo.name, []), spout_names, replaying, join_branches(topo, bo))
        if bo.name in down_bolts:
            assert rules is not None
            window = None if deaths is not None else arrival_window(topo, bo, received.get(bo.name, []), replaying,
                                                                    rules)  # section 7's failures only
            _failing_bolt_rows(rows, bo, tau, rules, trees[bo.name], hitting.get(bo.name, []), window, idle)
        elif hit:
            _hit_bolt_rows(rows, bo, tau, hitting[bo.name], bo.name == target)
        else:
            _steady_bolt_rows(rows, bo, tau)
        _bolt_stream_rows(rows, bo, listened, dvert, bo.name in down_bolts or hit)
        if bo.name == target and slowest is None:
            _growth_rows(rows, bo, tau, idle, hit)
        elif bo.name == target and slowest is not None:
            _join_case_rows(rows, bo.name, join_branches(topo, bo) or [], slowest, spout_names, replaying)
        elif slowest is not None:  # held level: a bolt that grows is its own verdict's
            c = _row(rows, f"level{label(bo.name)}", "eq")
            _put(c, (f"d{label(bo.name)}", 1))
    return rows



def check_certificate(document: Any, certificate: Any) -> list[str]:
    """Why `certificate` does not prove that no lasso of `document` makes its target grow; [] = accepted."""
    read = read_certificate(document, certificate, LinearCertificate, "a certificate", count_windows=True,
                            duration_windows=True, joins=True)
    if isinstance(read, list):
        return read
    topo, cert, problems = read
    if not any(isinstance(c, Bolt) and c.name == cert.target for c in topo.components):
        return problems + [f"target {cert.target!r} is not a bolt of the topology"]
    branches = join_branches(topo, topo.bolt_by_name(cert.target))
    cases = {label(u, st): (u, st) for u, st in branches or []}
    if set(cert.cases) != set(cases):  # a join's cache may grow: a case per branch set slowest, none for a bolt
        missing, extra = sorted(set(cases) - set(cert.cases)), sorted(set(cert.cases) - set(cases))
        return problems + [f"target {cert.target}" + (f" is a join, whose cache may grow: no case for the branches "
                                                     f"{listed(missing, 5)} (docs/model.md section 11)" if missing
                                                     else f" has no branch {listed(extra, 5)}")]
    problems += _contradiction(pass_rows(topo, cert.target), cert.rows, cert.target, "")
    for key, branch in cases.items():
        problems += _contradiction(pass_rows(topo, cert.target, branch), cert.cases[key], cert.target,
                                   f"case {key}: ")
    return problems


def _contradiction(rows: dict[str, _Row], multipliers: dict[str, str], target: str, where: str) -> list[str]:
    """Why the `multipliers` do not weigh `rows` into a contradiction ([] = they do)."""
    problems: list[str] = []
    total: dict[str, Fraction] = {}
    constant = Fraction(0)
    for name, text in multipliers.items():
        y = fraction_of(text)
        if y is None:
            problems.append(f"{where}row {name}: multiplier {text!r} is not a fraction p/q")
            continue
        if name not in rows:
            problems.append(f"{where}row {name}: no such row for target {target}")
            continue
        kind, coefficients, c0 = rows[name]
        if kind == "ge" and y < 0:
            problems.append(f"{where}row {name}: an inequality's multiplier must be ≥ 0, got {text}")
        for var, c in coefficients.items():
            total[var] = total.get(var, Fraction(0)) + y * c
        constant += y * c0
    if problems:
        return problems
    positive = sorted(v for v, c in total.items() if c > 0)
    if positive:
        problems.append(f"{where}the weighted sum keeps a positive coefficient on {listed(positive, 5)}: "
                        "no contradiction")
    if constant >= 0:
        problems.append(f"{where}the weighted sum's constant is {constant}, not negative: no contradiction")
    return problems

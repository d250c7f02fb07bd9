"""Applies each mutation the checker room's tests must kill, one at a time, to a copy of the tree, and runs
the test file that must kill it there (tests/unit/test_checker_room.py, tests/unit/test_flood.py,
tests/unit/test_flood_run.py, tests/unit/test_rate_growth_cycles.py, tests/unit/test_flood_others.py,
tests/unit/test_rate_growth_joins.py, tests/unit/test_flood_joins.py, tests/unit/test_linear_losses.py,
tests/unit/test_death_lassos.py, tests/unit/test_duration_lassos.py, tests/unit/test_flood_timers.py,
tests/unit/test_storm.py, tests/unit/test_paced_flood.py, tests/unit/test_joint_paced.py,
tests/unit/test_death_timers.py, tests/unit/test_linear_joins.py,
tests/unit/test_witness_joins.py): a mutation is
killed when some test fails.

Usage: .venv/bin/python bench/mutate_checkers.py [--keep] [--only TEXT]

The mutations (docs/verifier.md, "The checker room"): the linear program's checker accepting a negative multiplier on
an inequality; its `constant >= 0` turned into `> 0` (a certificate with no rows passes); the rate proof's checker
comparing the claimed least inflow with the derived most; the same checker accepting a bolt that "keeps up" with an
inflow equal to its capacity; through a join, the same checker reading the join's inflow as the sum of its branches,
accepting a tie of its branches or of its queue as its cache's growth, or a branch's least rate above the derived one;
the flood checker reading a join's least rate, or a flooded join's drain, as the sum of its branches, accepting a
join's branch left out or a join as the source; through a cycle, the same checker's rounds from below started at the
capacities (a fixpoint merely reproduced), or run to its own limit instead of the stated rounds;
app/core/emission.py's fine-σ fallback [σ, 2σ] narrowed to [σ, σ]; and the flood checker accepting a tie, a ratio
above the derived one, evidence about another document or of another bolt, another input counted at its largest
capacity instead of its least rate, or a bolt on a cycle given a least rate; the threshold run's checker certifying
the run for any checked bolt instead of the target, skipping the run's document check, or accepting a certificate
whose run has no trace; the nested certificate of a chain of floods left unchecked; the certifier's "queue reaches
N" turned into "passes N"; and the linear checker's worker-death rows (tests/unit/test_worker_search.py) forgetting
the trees a spout emits while a worker restarts, doubling the time between deaths, or letting no worker die in the
target's loop; and its `lost-time` row (tests/unit/test_linear_losses.py) counting paced replays once, giving a spout
that replays at once a curve, dropping the bursts per failure, measuring what piles up against the fastest take, or
taking a "dvert" carry below one tuple; and its `lost-takes` row losing one more tuple per tuple taken, or dropping
the takes a failure may cut short; and the certifier's worker-death rule (tests/unit/test_death_lassos.py)
accepting a death before worker_min_ttf, replays beyond the tuples in flight, an acker's death that breaks only its own
worker's trees, a worker with one acker among several breaking every tree, a bolt of the dead worker left up,
replays released before the timeout or at the death, or a dying bolt's loss other than what it held, and
(tests/unit/test_death_partial.py) a spout's replays beyond its trees' tuples in flight, a bolt run in part losing
its share rounded down or taking on every executor at its worker's death, a spout emitting while its worker is down
or timed from its last emission after the restart, or its dead executors' share of its trees dropped; and through a
duration window (tests/unit/test_duration_lassos.py) the certifier reading a timer's run as an ordinary take,
bounding its wait by max_idle_time, starting its clock at the tuples' arrival instead of its last run, or taking G
from the sliding interval alone or without the jitter, and the linear checker dropping its timer row, bounding its
batches, or reading its "dvert" ratio from bounded batches; and the flood checker (tests/unit/test_flood_timers.py)
capping a timer's least rate at C/α, reading its ratio from bounded batches, accepting a timer as source or target,
or accepting evidence proven with another timer; and the linear checker's worker-death rows
(tests/unit/test_death_timers.py) dropping the timer row of a duration window a dying worker may run; and a mixed
window (tests/unit/test_mixed_windows.py) read by its length's kind instead of its slide's, by the certifier (its
whole slides, its timer), the linear checker (its timer row) or growth by rates' checker (its timers); and with a
join as the target (tests/unit/test_linear_joins.py) accepting a certificate without its cache's cases, reading every
branch as delivering exactly the messages completed, checking only the first case, or counting the other caches'
growth without the messages completed; and the timeout witness's checker through a join
(tests/unit/test_witness_joins.py) following a message through any emit of a branch, or reading a hop into a join as
an arrival at that position, and for a part in a join's cache claiming a position where its branch sends nothing,
following it through any send, counting the join's completions before the loop in its first pass only, or
completing its message one message early; and the storm checker's paced part (tests/unit/test_paced_flood.py)
accepting a paced certificate on an at-once document, leaving its failure cycle or its threshold run unchecked, a
duration window or a join as its target, the spout above a fresh tuple and a replay per gap, another spout at that
rate, a ratio above the stream's, a term stated twice, no term from the spout, a capacity below the smallest, or a
tie; and its joint part (tests/unit/test_joint_paced.py) leaving the other failing bolts unchecked, accepting them
under at-once replays, a growth below 1 without them, an up below min_ttf, a loss above the derived one, a replay at
any emission, the tuples lost while down counted with one more emission, a failure sooner than min_ttf, an offset past
the fastest batch, a reboot outside the bounds, the failing bolt or a bolt twice among them, a bolt that does not
receive the spout's default stream or never fails, or a joint growth of 0; and the certifier's later passes over a
compressed lasso, rebuilt from the first's steps (tests/unit/test_compressed_lasso.py), not raising a repeat's
queues; and the flood checker's lost backlog
(tests/unit/test_lost_flood.py) accepting at-once replays or a source that never fails, a spout whose trees do not
reach the source, its rate above a fresh tuple and a replay per least gap, a ratio above the stream's, a term twice,
no term from the spout, a capacity below the smallest, a tie, or leaving the source's evidence unchecked; and the
record of lassos certified within one verification (tests/unit/test_lasso_record.py) answering for a lasso of other
content, remembering a rejection, or answering for other checked bolts. Prints one line per mutation; exits 1 when
one survives.
Not run by the tests (it runs a test file once per mutation).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

ROOM, FLOOD, RUN = "tests/unit/test_checker_room.py", "tests/unit/test_flood.py", "tests/unit/test_flood_run.py"
CYCLES, OTHERS = "tests/unit/test_rate_growth_cycles.py", "tests/unit/test_flood_others.py"
JOINS, FLOOD_JOINS = "tests/unit/test_rate_growth_joins.py", "tests/unit/test_flood_joins.py"
WORKERS = "tests/unit/test_worker_search.py"
LOSSES = "tests/unit/test_linear_losses.py"
DEATHS = "tests/unit/test_death_lassos.py"
PARTIAL = "tests/unit/test_death_partial.py"
TIMERS = "tests/unit/test_duration_lassos.py"
FLOOD_TIMERS = "tests/unit/test_flood_timers.py"
DEATH_TIMERS = "tests/unit/test_death_timers.py"
MIXED = "tests/unit/test_mixed_windows.py"
LINEAR_JOINS = "tests/unit/test_linear_joins.py"
WITNESS_JOINS = "tests/unit/test_witness_joins.py"
STORM = "tests/unit/test_storm.py"
SPILL = "tests/unit/test_spill.py"
LASSOS = "tests/unit/test_lasso_record.py"
COMPRESSED = "tests/unit/test_compressed_lasso.py"
PACED = "tests/unit/test_paced_flood.py"
JOINT = "tests/unit/test_joint_paced.py"
LOST = "tests/unit/test_lost_flood.py"
MUTATIONS = [  # (name, file, original text, mutated text, the test file that must kill it)
    ("negative multiplier accepted", "app/core/tcn/check/linear.py",
     'if kind == "ge" and y < 0:', 'if kind == "ge" and y < 0 and False:', ROOM),
    ("constant >= 0 -> > 0", "app/core/tcn/check/linear.py", "if constant >= 0:", "if constant > 0:", ROOM),
    ("least inflow compared with the derived most", "app/core/tcn/check/rate_growth.py",
     "if c_low > low:", "if c_low > high:", ROOM),
    ("keeps up with inflow equal to capacity", "app/core/tcn/check/rate_growth.py",
     'role == "keeps up" and not c_high < capacity[name]', 'role == "keeps up" and not c_high <= capacity[name]',
     ROOM),
    ("rate proof through a cycle: rounds from below started at the capacities", "app/core/tcn/check/rate_growth.py",
     "low_through = {b: Fraction(0) for b in received}", "low_through = dict(capacity)", CYCLES),
    ("rate proof through a cycle: the stated rounds ignored", "app/core/tcn/check/rate_growth.py",
     "derived = _rounds(received, ratios, rate, capacity, cert.rounds)",
     "derived = _rounds(received, ratios, rate, capacity, ROUND_LIMIT)", CYCLES),
    ("fine-σ fallback [σ, σ]", "app/core/emission.py", "return sigma, 2 * sigma", "return sigma, sigma", ROOM),
    ("flood: a tie accepted", "app/core/tcn/check/flood.py", "elif not total > capacity:",
     "elif not total >= capacity:", FLOOD),
    ("flood: a ratio above the derived accepted", "app/core/tcn/check/reading.py",
     "elif rate > ceilings[key][0] or ratio > ceilings[key][1]:", "elif rate > ceilings[key][0]:", FLOOD),
    ("flood: evidence about another document accepted", "app/core/tcn/check/flood.py",
     "return problems or part_of(proven_on, source, topo)", "return problems", FLOOD),
    ("flood: evidence of another bolt accepted", "app/core/tcn/check/flood.py",
     "if target != source:", "if False:", FLOOD),
    ("flood: another input at its largest capacity, not its least rate", "app/core/tcn/check/flood.py",
     "else min(inflow, take_bound(bolts[b]) / (exact(bolts[b].alpha) * (1 - tau)))",
     "else take_bound(bolts[b]) / (exact(bolts[b].alpha) * (1 - tau))", OTHERS),
    ("flood: a bolt on a cycle given a least rate", "app/core/tcn/check/flood.py",
     "                 and sigma.get((u, st), Fraction(0)) > 0}", "                 and False}", OTHERS),
    ("threshold run: certified for any checked bolt", "app/core/tcn/check/parts.py",
     "found = certify(witness, checked=[target], threshold=run.threshold)",
     "found = certify(witness, threshold=run.threshold)", RUN),
    ("threshold run: its document not checked", "app/core/tcn/check/parts.py",
     'return part_of(parse_topology(document), target, topo, "threshold run")', "return []", RUN),
    ("threshold run: no trace accepted", "app/core/tcn/check/parts.py",
     'return ["threshold run: no trace"]', "return []", RUN),
    ("flood: a chain's nested certificate not checked", "app/core/tcn/check/flood.py",
     "lambda on: check_flood_certificate(on, flood))", "lambda on: [])", RUN),
    ("worker deaths: the trees emitted while a worker restarts forgotten", "app/core/tcn/check/linear_deaths.py",
     "during = Fraction(0) if runs_all(x, n) else", "during = Fraction(0) if True else", WORKERS),
    ("worker deaths: twice the time between deaths", "app/core/tcn/check/linear_deaths.py",
     'f"X{_w(x)}": -ttf}', 'f"X{_w(x)}": -2 * ttf}', WORKERS),
    ("worker deaths: no worker dies in the target's loop", "app/core/tcn/check/linear_deaths.py",
     "if runs_all(x, target):", "if True:", WORKERS),
    ("death lasso: a worker dying before worker_min_ttf accepted", "app/core/tcn/check/certify_deaths.py",
     "elif t - st.up_since[w] < min_ttf:", "elif t - st.up_since[w] < 0:", DEATHS),
    ("death lasso: replays beyond the tuples in flight accepted", "app/core/tcn/check/certify_deaths.py",
     "if total > most:", "if total > 10 * most:", DEATHS),
    ("death lasso: a spout's replays beyond its trees' tuples in flight accepted",
     "app/core/tcn/check/certify_deaths.py",
     "        if r > cap:", "        if r > 10 * cap:", PARTIAL),
    ("death lasso: the acker's death breaking only its own worker's trees", "app/core/tcn/check/certify_deaths.py",
     "counted = dict(flight) if rule.acker else", "counted = dict(flight) if False else", DEATHS),
    ("death lasso: a worker with one acker among several breaking every tree", "app/core/tcn/check/certify_deaths.py",
     "ackers > 0 and ackers == sum(rows.get(ACKERS, []))", "ackers > 0", DEATHS),
    ("death lasso: a bolt of the dead worker left up", "app/core/tcn/check/certify_deaths.py",
     'if bo["fail"] != death:', 'if bo["fail"] and not death:', DEATHS),
    ("death lasso: replays released before the timeout", "app/core/tcn/check/certify_deaths.py",
     "if w in st.due and t >= st.due[w]:", "if w in st.due and t >= st.due[w] - timeout // 2:", DEATHS),
    ("death lasso: replays released at the death", "app/core/tcn/check/certify_deaths.py",
     "st.due[w] = t + timeout", "st.due[w] = t", DEATHS),
    ("death lasso: part of a bolt losing its share rounded down", "app/core/tcn/check/certify_deaths.py",
     "lost += -(-(r + x) // p) - (r > 0)", "lost += (r + x) // p", PARTIAL),
    ("death lasso: part of a bolt taking on every executor at its worker's death",
     "app/core/tcn/check/certify_deaths.py",
     "return lost, size - dead", "return lost, size", PARTIAL),
    ("death lasso: a spout emitting while its worker is down", "app/core/tcn/check/certify_replay.py",
     'if emitted[default_key[name]] or sp["emit"]:', "if False:", PARTIAL),
    ("death lasso: a restarted spout timed from its last emission", "app/core/tcn/check/certify_deaths.py",
     "                        last_emit[s] = (t, 1)", "                        pass", PARTIAL),
    ("death lasso: a spout's dead executors' share of its trees dropped", "app/core/tcn/check/certify_deaths.py",
     "in dl.reach.get(b, set())) + k * f[s] // e)", "in dl.reach.get(b, set())))", PARTIAL),
    ("death lasso: a dying bolt's own loss unchecked", "app/core/tcn/check/certify_failures.py",
     'if bo["lost"] != want:', 'if bo["lost"] > want + 1:', DEATHS),
    ("compressed lasso: a later pass's repeats not raising the queues", "app/core/tcn/check/certify_source.py",
     "_shifted(source, source.time + shift, rep.queue, rep.backlog, n)",
     "_shifted(source, source.time + shift, {}, rep.backlog, n)", COMPRESSED),
    ("threshold: reaches N -> passes N", "app/core/tcn/check/certify.py",
     'any(s.bolts[n]["queue"] >= threshold for n in checked)', 'any(s.bolts[n]["queue"] > threshold for n in checked)',
     RUN),
    ("rate proof through a join: its inflow the sum of its branches", "app/core/tcn/check/rate_growth.py",
     "low = min(flows.get(key, (Fraction(0), Fraction(0)))[0] for key in joins[name])",
     "low = sum(flows.get(key, (Fraction(0), Fraction(0)))[0] for key in joins[name])", JOINS),
    ("rate proof through a join: a tie of its branches accepted as cache growth", "app/core/tcn/check/rate_growth.py",
     "if not problems and not max(lows) > min(highs):", "if not problems and not max(lows) >= min(highs):", JOINS),
    ("rate proof through a join: a branch's least rate above the derived accepted", "app/core/tcn/check/rate_growth.py",
     "if low > derived[0]:", "if False:", JOINS),
    ("rate proof through a join: a tie of its queue accepted", "app/core/tcn/check/rate_growth.py",
     "if not (c_high < capacity or c_low > capacity):", "if not (c_high <= capacity or c_low > capacity):", JOINS),
    ("flood through a join: a join's least rate the sum of its branches", "app/core/tcn/check/flood.py",
     "inflow = min(parts) if len(parts) == len(inputs_of.get(b, [])) else Fraction(0)", "inflow = sum(parts)",
     FLOOD_JOINS),
    ("flood through a join: a flooded join's drain the sum of its branches", "app/core/tcn/check/flood.py",
     "        total = min(values, default=Fraction(0))", "        pass", FLOOD_JOINS),
    ("flood through a join: a branch left out", "app/core/tcn/check/flood.py", "        if missing:",
     "        if False:", FLOOD_JOINS),
    ("flood through a join: a join as the source", "app/core/tcn/check/flood.py",
     "if join_branches(topo, bolts[cert.source]) is not None:", "if False:", FLOOD_JOINS),
    ("lost-time: paced replays counted once", "app/core/tcn/check/linear.py",
     "copies = Fraction(2)  # a replay per fresh tuple at most", "copies = Fraction(1)", LOSSES),
    ("lost-time: a spout replaying at once given a curve", "app/core/tcn/check/linear.py",
     'if rules is None or rules.mode not in ("paced", "none"):', "if rules is None:", LOSSES),
    ("lost-time: the bursts per failure dropped", "app/core/tcn/check/linear.py",
     "(fails, 2 * plus + size)", "(fails, size)", LOSSES),
    ("lost-time: piling up against the fastest take", "app/core/tcn/check/linear.py",
     "least = size / (exact(bo.alpha) * (1 + tau) + idle)", "least = size / (exact(bo.alpha) * (1 - tau))", LOSSES),
    ("lost-takes: what piles up paid by no takes", "app/core/tcn/check/linear.py",
     "_put(c, (taken, k - 1), (down, per_second)", "_put(c, (taken, k), (down, per_second)", LOSSES),
    ("lost-takes: the takes missed per failure dropped", "app/core/tcn/check/linear.py",
     "(fails, 2 * plus + size + (k - 1) * size)", "(fails, 2 * plus + size)", LOSSES),
    ("lost-time: a dvert carry below one tuple", "app/core/tcn/check/linear.py",
     "plus + rounding + sigma * math.ceil(1 / sigma)", "plus + rounding + 1", LOSSES),
    ("duration window: a run taking what an ordinary take would", "app/core/tcn/check/certify_replay.py",
     "want = avail if name in timer else min(cap, avail - avail % per)",
     "want = min(cap, avail - avail % per)", TIMERS),
    ("duration window: waiting bounded by max_idle_time, not G", "app/core/tcn/check/certify_waits.py",
     "if since is not None and t - since > timer.get(name, idle):", "if since is not None and t - since > idle:",
     TIMERS),
    ("duration window: the clock from the tuples' arrival, not the last run", "app/core/tcn/check/certify_waits.py",
     "waiting_since[name] = take_time[name] if was_processing else t", "waiting_since[name] = t", TIMERS),
    ("duration window: G from the sliding interval alone", "app/core/tcn/check/reading.py",
     "return (1 + tolerance) * max(exact(slide), exact(bolt.alpha))", "return (1 + tolerance) * exact(slide)", TIMERS),
    ("duration window: G without the jitter", "app/core/tcn/check/reading.py",
     "return (1 + tolerance) * max(exact(slide), exact(bolt.alpha))", "return max(exact(slide), exact(bolt.alpha))",
     TIMERS),
    ("linear: no timer row", "app/core/tcn/check/linear.py",
     "    if _timed(bo):  # every run of a duration window", "    if False:  # every run of a duration window", TIMERS),
    ("linear: a duration window's batches bounded", "app/core/tcn/check/linear.py",
     "    if not _timed(bo):  # (a duration window's run", "    if True:  # (a duration window's run", TIMERS),
    ("linear: a duration window's dvert ratio from bounded batches", "app/core/tcn/check/linear.py",
     "        elif _timed(bo):  # batches of any size", "        elif False:  # batches of any size", TIMERS),
    ("flood: a timer's least rate capped at C/α", "app/core/tcn/check/flood.py",
     "least[b] = inflow if timed else min(", "least[b] = min(", FLOOD_TIMERS),
    ("flood: a timer's ratio from bounded batches", "app/core/tcn/check/flood.py",
     "batches = take_bound(bolt) if timer_bound(bolt, tau) is None else max(1, sigma.denominator)",
     "batches = take_bound(bolt)", FLOOD_TIMERS),
    ("flood: a timer accepted as source or target", "app/core/tcn/check/flood.py",
     "    if timed:\n        return problems + [f\"{timed[0]} has a duration window",
     "    if False:\n        return problems + [f\"{timed[0]} has a duration window", FLOOD_TIMERS),
    ("flood: evidence with another timer accepted", "app/core/tcn/check/parts.py",
     "take_bound(b), timer_bound(b, tau), join_branches", "take_bound(b), None, join_branches", FLOOD_TIMERS),
    ("linear: a timer hit by deaths without its timer row", "app/core/tcn/check/linear.py",
     "    else:  # a run or a death empties a duration window's queue", "    elif False:  # a run or a death empties",
     DEATH_TIMERS),
    ("mixed window: the certifier's whole slides read by the length's kind", "app/core/tcn/check/reading.py",
     'if window is None or (window.slide_kind or window.kind) != "count":',
     'if window is None or window.kind != "count":', MIXED),
    ("mixed window: the certifier's timer read by the length's kind", "app/core/tcn/check/reading.py",
     'if window is None or (window.slide_kind or window.kind) != "duration":',
     'if window is None or window.kind != "duration":', MIXED),
    ("growth by rates: a mixed window's timer read by the length's kind", "app/core/tcn/check/rate_growth.py",
     "timers = {b.name for b in topo.bolts if timer_bound(b, Fraction(0)) is not None}",
     'timers = {b.name for b in topo.bolts if b.window is not None and b.window.kind == "duration"}', MIXED),
    ("linear: a mixed window's timer read by the length's kind", "app/core/tcn/check/linear.py",
     'return bo.window is not None and (bo.window.slide_kind or bo.window.kind) == "duration"',
     'return bo.window is not None and bo.window.kind == "duration"', MIXED),
    ("linear: a join target without its cache's cases", "app/core/tcn/check/linear.py",
     "if set(cert.cases) != set(cases):", "if set(cert.cases) - set(cases):", LINEAR_JOINS),
    ("linear: a join's branches each deliver exactly the messages completed", "app/core/tcn/check/linear.py",
     'c = _row(rows, f"cache{label(j, u, st)}", "ge")', 'c = _row(rows, f"cache{label(j, u, st)}", "eq")',
     LINEAR_JOINS),
    ("linear: only a join's first case checked", "app/core/tcn/check/linear.py",
     "for key, branch in cases.items():", "for key, branch in list(cases.items())[:1]:", LINEAR_JOINS),
    ("linear: a join's other caches growing without the messages completed", "app/core/tcn/check/linear.py",
     "        if (u, st) != slowest:\n            _put(c, (f\"A{label(j)}\", -1))",
     "        if (u, st) != slowest:\n            _put(c, (f\"A{label(j)}\", 0))", LINEAR_JOINS),
    ("witness: a join's tuple followed through any emit of a branch", "app/core/tcn/check/latency_witness.py",
     "if at > arrival or not any(", "if at > arrival or False and not any(", WITNESS_JOINS),
    ("witness: a hop into a join read as an arrival at that position", "app/core/tcn/check/latency_witness.py",
     "        if name in joins:  # the messages", "        if False:  # the messages", WITNESS_JOINS),
    ("witness: a part in a join's cache claimed at a position where its branch sends nothing",
     "app/core/tcn/check/latency_witness.py", "    if _sent(lasso.row(source, u), stream) == 0:",
     "    if False:", WITNESS_JOINS),
    ("witness: a part in a join's cache followed through any send", "app/core/tcn/check/latency_witness.py",
     "        if hops[-1] != (part, arrival):", "        if False:", WITNESS_JOINS),
    ("witness: a join's completions before the loop counted in its first pass only",
     "app/core/tcn/check/latency_witness.py", "        total += done[j]\n",
     "        total += done[j] if j >= lasso.start or passes == 0 else 0\n", WITNESS_JOINS),
    ("witness: a part's message completing one message early", "app/core/tcn/check/latency_witness.py",
     "        if total >= number and (j >= lasso.start", "        if total >= number - 1 and (j >= lasso.start",
     WITNESS_JOINS),
    ("storm: paced replays or failures off accepted", "app/core/tcn/check/storm.py",
     "if not topo.settings.failures or topo.settings.replay != cert.replay:", "if False:", STORM),
    ("storm: a target that does not receive the spout accepted", "app/core/tcn/check/storm.py",
     '((cert.spout, "default") not in inputs[cert.target]', "(False", STORM),
    ("storm: a reboot outside its bounds accepted", "app/core/tcn/check/storm.py",
     "if not low <= reboot <= high:", "if False:", STORM),
    ("storm: gaps that are not the cycle accepted", "app/core/tcn/check/storm.py",
     "if cert.emissions * gap != ttf + reboot:", "if False:", STORM),
    ("storm: a gap the spout cannot keep accepted", "app/core/tcn/check/storm.py",
     "if not period * (1 - tau) <= gap <= period * (1 + tau):", "if False:", STORM),
    ("storm: a wait of a gap for a bolt with another input", "app/core/tcn/check/storm.py",
     "if cert.waits and any(", "if False and any(", STORM),
    ("storm: a growth of 0 accepted", "app/core/tcn/check/storm.py", "elif growth < 1:", "elif growth < 0:", STORM),
    ("storm: growth not recomputed", "app/core/tcn/check/storm.py",
     "elif cert.growth != growth:", "elif False:", STORM),
    ("storm: threshold run's document not checked", "app/core/tcn/check/parts.py",
     'return part_of(parse_topology(document), target, topo, "threshold run")', "return []", STORM),
    ("flood: a storm as the source's evidence not checked", "app/core/tcn/check/flood.py",
     "lambda on: check_storm_certificate(on, storm))", "lambda on: [])", STORM),
    ("storm: threshold run without a trace accepted", "app/core/tcn/check/parts.py",
     'return ["threshold run: no trace"]', "return []", STORM),
    ("spill: paced replays or failures off accepted", "app/core/tcn/check/spill.py",
     'if not topo.settings.failures or topo.settings.replay != "at-once":', "if False:", SPILL),
    ("spill: a failing bolt without min_ttf accepted", "app/core/tcn/check/spill.py",
     "if g.min_ttf is None:", "if False:", SPILL),
    ("spill: a spout whose trees do not reach the failing bolt accepted", "app/core/tcn/check/spill.py",
     "if not _reaches(topo, cert.spout, cert.failing):", "if False:", SPILL),
    ("spill: the failing bolt as its own target accepted", "app/core/tcn/check/spill.py",
     "if (cert.target == cert.failing or ", "if (False or ", SPILL),
    ("spill: a target the spout does not feed accepted", "app/core/tcn/check/spill.py",
     '(cert.spout, "default") not in inputs[cert.target]', "False", SPILL),
    ("spill: the failing bolt's evidence not checked", "app/core/tcn/check/spill.py",
     "problems += evidence_problems(cert.evidence, cert.failing, topo, evidence_trace)", "problems += []", SPILL),
    ("spill: threshold run without a trace accepted", "app/core/tcn/check/parts.py",
     'return ["threshold run: no trace"]', "return []", SPILL),
    ("paced: a paced certificate on an at-once document accepted", "app/core/tcn/check/storm.py",
     "if not topo.settings.failures or topo.settings.replay != cert.replay:", "if not topo.settings.failures:", PACED),
    ("paced: the failure cycle not checked", "app/core/tcn/check/storm.py",
     "return problems + _cycle_problems(topo, cert) + joint + paced_problems(topo, cert) or",
     "return problems + joint + paced_problems(topo, cert) or", PACED),
    ("paced: the threshold run not checked", "app/core/tcn/check/storm.py",
     "or threshold_run_problems(\n            cert.target, cert.run, topo, run_trace)", "or []", PACED),
    ("paced: a duration window or a join as the target", "app/core/tcn/check/paced.py",
     "if join_branches(topo, j) is not None or timer_bound(j, tau) is not None:", "if False:", PACED),
    ("paced: the spout's rate above a fresh tuple and a replay per gap", "app/core/tcn/check/paced.py",
     "rate = 2 / gap if sender == spout else", "rate = 4 / gap if sender == spout else", PACED),
    ("paced: another spout at the paced rate", "app/core/tcn/check/paced.py",
     "rate = 2 / gap if sender == spout else exact(spouts[sender].rate) / (1 + tau)", "rate = 2 / gap", PACED),
    ("paced: a ratio above the stream's", "app/core/tcn/check/reading.py",
     "elif rate > ceilings[key][0] or ratio > ceilings[key][1]:", "elif rate > ceilings[key][0]:", PACED),
    ("paced: a term stated twice", "app/core/tcn/check/reading.py",
     "if key not in ceilings or key in seen:", "if key not in ceilings:", PACED),
    ("paced: no term from the spout", "app/core/tcn/check/paced.py",
     "if not any(sender == cert.spout for sender, _ in seen):", "if False:", PACED),
    ("paced: a capacity below the smallest", "app/core/tcn/check/paced.py",
     "if capacity != derived:", "if capacity > derived:", PACED),
    ("paced: a tie accepted", "app/core/tcn/check/paced.py",
     "elif not problems and inflow <= derived:", "elif not problems and inflow < derived:", PACED),
    ("joint: the other bolts not checked", "app/core/tcn/check/storm.py",
     "joint = joint_problems(topo, cert) if cert.others else []", "joint = []", JOINT),
    ("joint: other bolts under at-once replays accepted", "app/core/tcn/check/storm.py",
     'if cert.others and cert.replay != "paced":', "if False:", JOINT),
    ("joint: a growth below 1 accepted without others", "app/core/tcn/check/storm.py",
     "elif growth < 1 and not cert.others:", "elif growth < 1 and False:", JOINT),
    ("joint: up below min_ttf accepted", "app/core/tcn/check/storm.py",
     "if up is None or up < ttf:", "if up is None:", JOINT),
    ("joint: the stated loss not recomputed", "app/core/tcn/check/joint.py",
     "if loss is not None and o.loss != loss:", "if loss is not None and o.loss < loss:", JOINT),
    ("joint: a replay at any emission", "app/core/tcn/check/joint.py",
     "held = 2 if o.emission <= math.floor(own / g) - 1 else 1", "held = 2", JOINT),
    ("joint: one emission more while down", "app/core/tcn/check/joint.py",
     "return held + 2 * (math.ceil((offset + reboot) / g) - 1), problems",
     "return held + 2 * math.ceil((offset + reboot) / g), problems", JOINT),
    ("joint: a failure sooner than min_ttf", "app/core/tcn/check/joint.py",
     "if o.every < 1 or o.every * cycle - reboot < max(exact(b.min_ttf), offset):", "if o.every < 1:", JOINT),
    ("joint: an offset past the fastest batch", "app/core/tcn/check/joint.py",
     "if o.emission < 1 or not 0 < offset < min(exact(b.alpha) * (1 - tau), g):",
     "if o.emission < 1 or not 0 < offset < g:", JOINT),
    ("joint: a reboot outside the bounds", "app/core/tcn/check/joint.py",
     "if low is None or high is None or not exact(low) <= reboot <= exact(high):", "if low is None or high is None:",
     JOINT),
    ("joint: the failing bolt or a bolt twice among the others", "app/core/tcn/check/joint.py",
     "if o.bolt == cert.failing or o.bolt not in bolts or o.bolt in {p.bolt for p in cert.others[:index]}:",
     "if o.bolt not in bolts:", JOINT),
    ("joint: a bolt that does not receive the spout's default stream", "app/core/tcn/check/joint.py",
     'if (cert.spout, "default") not in received(topo)[o.bolt]:', "if False:", JOINT),
    ("joint: a bolt that never fails", "app/core/tcn/check/joint.py",
     "if b.min_ttf is None or b.window is not None", "if b.window is not None", JOINT),
    ("joint: a joint growth of 0 accepted", "app/core/tcn/check/joint.py", "if growth < 1:", "if growth < 0:", JOINT),
    ("lost: at-once replays or a source that never fails accepted", "app/core/tcn/check/flood.py",
     'if not settings.failures or settings.replay != "paced" or bolts[cert.source].min_ttf is None:', "if False:",
     LOST),
    ("lost: a spout whose trees do not reach the source", "app/core/tcn/check/flood.py",
     "if cert.via not in spouts or cert.via not in reach:", "if cert.via not in spouts:", LOST),
    ("lost: the spout's rate above a fresh tuple and a replay per least gap", "app/core/tcn/check/flood.py",
     "ceilings = {(u, st): (2 * exact(spouts[u].rate) / (1 - tau)", "ceilings = {(u, st): (3 * exact(spouts[u].rate)",
     LOST),
    ("lost: a ratio above the stream's", "app/core/tcn/check/reading.py",
     "elif rate > ceilings[key][0] or ratio > ceilings[key][1]:", "elif rate > ceilings[key][0]:", LOST),
    ("lost: a term stated twice", "app/core/tcn/check/reading.py",
     "if key not in ceilings or key in seen:", "if key not in ceilings:", LOST),
    ("lost: no term from the spout", "app/core/tcn/check/flood.py",
     "if not any(u == cert.via for u, _ in seen):", "if False:", LOST),
    ("lost: a capacity below the smallest", "app/core/tcn/check/flood.py",
     "    if fraction_of(cert.capacity) != capacity:\n        problems.append(f\"capacity {cert.capacity} is not "
     "{cert.target}'s smallest, {capacity}\")\n    elif not problems and not total > capacity:",
     "    if fraction_of(cert.capacity) > capacity:\n        problems.append(f\"capacity {cert.capacity} is not "
     "{cert.target}'s smallest, {capacity}\")\n    elif not problems and not total > capacity:", LOST),
    ("lost: a tie accepted", "app/core/tcn/check/flood.py",
     "elif not problems and not total > capacity:", "elif not problems and total < capacity:", LOST),
    ("lost: the evidence not checked", "app/core/tcn/check/flood.py",
     "                or evidence_problems(cert.evidence, cert.source, topo, trace)\n                or threshold_run",
     "                or []\n                or threshold_run", LOST),
    ("lassos: a lasso of other content answered from the record", "app/core/tcn/check/lassos.py",
     "if a.digest == digest:", "if True:", LASSOS),
    ("lassos: a rejection remembered", "app/core/tcn/check/lassos.py",
     "if record is not None and answer.ok:", "if record is not None:", LASSOS),
    ("lassos: the checked bolts ignored", "app/core/tcn/check/lassos.py",
     "same = [a for a in record.accepted if a.checked == checked]", "same = list(record.accepted)", LASSOS),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="keep the mutated copies (printed)")
    parser.add_argument("--only", metavar="TEXT", help="only the mutations whose name contains TEXT")
    args = parser.parse_args()
    survived = 0
    for name, rel, before, after, tests in MUTATIONS:
        if args.only and args.only not in name:
            continue
        work = Path(tempfile.mkdtemp(prefix="mutant-"))
        for part in ("app", "tests", "models", "pyproject.toml"):
            src = ROOT / part
            (shutil.copytree if src.is_dir() else shutil.copy)(src, work / part)
        target = work / rel
        text = target.read_text(encoding="utf-8")
        if text.count(before) != 1:
            print(f"{name}: the original text is not found once in {rel}: update this script")
            return 2
        target.write_text(text.replace(before, after), encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": str(work), "QT_QPA_PLATFORM": "offscreen"}
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", tests],
                              cwd=work, env=env, capture_output=True, text=True, check=False)
        failed = [ln for ln in done.stdout.splitlines() if ln.startswith("FAILED")]
        killed = done.returncode != 0 and bool(failed)
        survived += not killed
        print(f"{'killed  ' if killed else 'SURVIVED'} {name}: {failed[0][7:] if failed else done.stdout[-200:]}",
              flush=True)
        if args.keep:
            print(f"  copy: {work}")
        else:
            shutil.rmtree(work)
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())

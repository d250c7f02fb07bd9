"""An independent checker for storm certificates ("unbounded": at-once replays a failing bolt cannot keep up with).

It shares no code with the builder (`app/core/tcn/storm.py`, which reads the network): from the target's cone
document alone it restates the failure cycle of docs/boundedness.md, "Unbounded: a replay storm", and accepts when

* the content hash is the document's; failures are on and `settings.replay` is the certificate's `replay`;
* the failing bolt has `min_ttf`, is an ordinary bolt (no window, no join) and receives the spout's default
  stream; the target is the failing bolt, or another bolt that receives the spout's default stream and is not a
  join or a duration window;
* the reboot r lies within the reboot bounds, the cycle min_ttf + r is `emissions` × `gap`, the gap is a legal
  spout gap for one tuple, a(1−τ) ≤ g ≤ a(1+τ), and no longer than min_ttf;
* `waits` only when every input stream of the failing bolt is the spout's;
* `up` (min_ttf when absent) is at least min_ttf, and the cycle is up + r rather than min_ttf + r below;
* `completions` is k = ⌊(min_ttf − g)/(max_idle + α(1+τ))⌋ (waits) or ⌈min_ttf/(max_idle + α(1+τ))⌉ − 1, and
  `growth` = emissions − C_TAKE·k ≥ 1 (C_TAKE by the room's own `take_bound`); with other failing bolts
  (`others`, paced only) the growth may be below 1 and their joint growth is checked instead (`check/joint.py`);
* with `replay` "paced" (the document's mode): the drain into the target instead of the at-once target rule
  (`check/paced.py`);
* with a threshold run (`run`): the trace certifier accepts its trace as a threshold witness for the target and
  the run's threshold, and the trace's document is part of this one for the target (`parts.threshold_run_problems`).
"""

from __future__ import annotations

import math
from typing import Any

from app.core.formats.trace import Trace
from app.core.numbers import exact
from app.core.results import StormCertificate
from app.core.tcn.check.joint import joint_problems
from app.core.tcn.check.paced import paced_problems
from app.core.tcn.check.parts import received, threshold_run_problems
from app.core.tcn.check.reading import fraction_of, join_branches, read_certificate, take_bound, timer_bound
from app.core.topology import Topology

__all__ = ["check_storm_certificate"]


def _cycle_problems(topo: Topology, cert: StormCertificate) -> list[str]:
    """Why the certificate's failure cycle is not one of the document's, or does not grow by its `growth`."""
    bolts, spouts = {b.name: b for b in topo.bolts}, {s.name: s for s in topo.spouts}
    f = bolts[cert.failing]
    ttf = exact(f.min_ttf) if f.min_ttf is not None else None
    if ttf is None:
        return [f"{cert.failing} has no min_ttf: it never fails"]
    up = fraction_of(cert.up) if cert.up is not None else ttf
    if up is None or up < ttf:
        return [f"up {cert.up} must be a fraction p/q, at least min_ttf = {ttf}"]
    tau, idle = exact(topo.settings.tolerance), exact(topo.settings.max_idle_time)
    reboot, gap = fraction_of(cert.reboot), fraction_of(cert.gap)
    if reboot is None or gap is None or cert.emissions < 1:
        return ["reboot and gap must be fractions p/q, emissions at least 1"]
    if topo.settings.min_reboot_time is None or topo.settings.max_reboot_time is None:
        return ["the document has no reboot bounds"]
    low, high = exact(topo.settings.min_reboot_time), exact(topo.settings.max_reboot_time)
    problems = []
    if not low <= reboot <= high:
        problems.append(f"reboot {cert.reboot} is not within the reboot bounds [{low}, {high}]")
    if cert.emissions * gap != up + reboot:
        problems.append(f"{cert.emissions} gaps of {cert.gap} s are not the cycle up + reboot = {up + reboot}")
    period = 1 / exact(spouts[cert.spout].rate)
    if not period * (1 - tau) <= gap <= period * (1 + tau):
        problems.append(f"gap {cert.gap} is not a legal gap of {cert.spout} for one tuple")
    if gap > up:
        problems.append(f"gap {cert.gap} is longer than up: the backlog may never reach {cert.failing}'s queue")
    if cert.waits and any(u != cert.spout for u, _ in received(topo)[cert.failing]):
        problems.append(f"waits, but {cert.failing} receives from another component than {cert.spout}")
    if problems:
        return problems
    slowest = idle + exact(f.alpha) * (1 + tau)
    k = math.floor((up - gap) / slowest) if cert.waits else math.ceil(up / slowest) - 1
    growth = cert.emissions - take_bound(f) * k
    if cert.completions != k:
        problems.append(f"completions {cert.completions}: {cert.failing} completes up to {k} batches per cycle")
    elif cert.growth != growth:
        problems.append(f"growth {cert.growth} is not emissions − C_TAKE × completions = {growth}")
    elif growth < 1 and not cert.others:  # (with others the joint growth counts: check/joint.py)
        problems.append(f"the pending tuples grow by {growth} per cycle, not at least 1")
    return problems


def check_storm_certificate(document: Any, certificate: Any, run_trace: Trace | None = None) -> list[str]:
    """Why `certificate` does not prove that its target's queue passes every bound in some run of `document`;
    [] = accepted. `run_trace`: the threshold run's trace (a certificate in memory refers to it by index)."""
    read = read_certificate(document, certificate, StormCertificate, "a storm certificate", count_windows=True,
                            duration_windows=True, joins=True)
    if isinstance(read, list):
        return read
    topo, cert, problems = read
    if not topo.settings.failures or topo.settings.replay != cert.replay:
        return problems + [f"the document's failures are off or its replays are not {cert.replay}"]
    bolts, inputs = {b.name: b for b in topo.bolts}, received(topo)
    if cert.failing not in bolts or cert.target not in bolts or cert.spout not in {s.name for s in topo.spouts}:
        return problems + ["failing and target must be bolts, spout a spout of the document"]
    f, j, tau = bolts[cert.failing], bolts[cert.target], exact(topo.settings.tolerance)
    if f.window is not None or join_branches(topo, f) is not None:
        return problems + [f"{cert.failing} is a windowed bolt or a join: the storm's rule is an ordinary bolt's"]
    if (cert.spout, "default") not in inputs[cert.failing]:
        return problems + [f"{cert.failing} does not receive {cert.spout}'s default stream"]
    if cert.others and cert.replay != "paced":
        return problems + ["other failing bolts (others) are a paced storm's only"]
    if cert.replay == "paced":  # phase 2: the backlog's drain into the target (check/paced.py), after other bolts'
        joint = joint_problems(topo, cert) if cert.others else []  # losses (check/joint.py)
        return problems + _cycle_problems(topo, cert) + joint + paced_problems(topo, cert) or threshold_run_problems(
            cert.target, cert.run, topo, run_trace)
    if cert.target != cert.failing and ((cert.spout, "default") not in inputs[cert.target]
                                        or join_branches(topo, j) is not None or timer_bound(j, tau) is not None):
        return problems + [f"{cert.target} is not the failing bolt, nor an ordinary bolt that receives "
                           f"{cert.spout}'s default stream"]
    return problems + _cycle_problems(topo, cert) or threshold_run_problems(cert.target, cert.run, topo, run_trace)


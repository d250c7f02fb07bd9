"""Storm's JoinBolt over a duration window (docs/model.md sections 10.3 and 11): storm-starter's JoinBoltExample
(tests/data/flux/storm-starter/join-bolt-example.yaml, `withTumblingWindow(Duration(10, SECONDS))`) imports as a
modelled join, its window's timer over the sum of its two inputs; bounded while its evaluations keep up, with a
certified lasso at the printer below it when the joined tuples outrun it, both against the independent simulation
of Storm's window manager on processing time (tests/unit/test_duration_windows.py)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

from test_duration_windows import storm_duration_window

from app.core.rates import rate_check
from app.core.storm.flux.builder import import_flux
from app.core.topology import Topology, parse_topology

EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "flux" / "storm-starter" / "join-bolt-example.yaml"
GENDER, AGE = 4.0, 6.0  # tuples/s of the two FeederSpouts (annotations: the example feeds them by hand)
JOIN_ALPHA, JOINED = 0.5, 0.5  # one execute(TupleWindow); one joined tuple per two received (one id of each spout)


def example(printer_alpha: float) -> Topology:
    """The imported example, annotated."""
    result = import_flux(EXAMPLE)
    data: dict[str, Any] = result.topology.model_dump(mode="json")
    rates = {"genderSpout": GENDER, "ageSpout": AGE}
    for s in data["spouts"]:
        s.update(rate=rates[s["name"]], burst=1, unannotated=[])
    figures = {"joiner": (JOIN_ALPHA, JOINED), "printer": (printer_alpha, 0)}
    for b in data["bolts"]:
        b.update(alpha=figures[b["name"]][0], sigma=figures[b["name"]][1], unannotated=[])
    data["storm"]["message_timeout_secs"] = 30
    data["verification"]["checked"] = ["joiner", "printer"]
    return parse_topology(data)


def test_the_join_bolt_example_imports_as_a_timer_join() -> None:
    result = import_flux(EXAMPLE)
    joiner = result.topology.bolt_by_name("joiner")
    assert joiner.unmodelled is None and joiner.not_modelled is None
    assert joiner.join is not None and joiner.join.kind == "window" and not joiner.waits_for_all
    assert joiner.window is not None and joiner.window.model_dump(exclude_none=True) == {"kind": "duration",
                                                                                          "length": 10}
    assert joiner.duration_window is not None  # a timer (section 10.3)
    assert any(n.startswith("bolts.joiner: Storm's JoinBolt joins what its window holds and waits for nothing")
               for n in result.notes)


def test_the_skeleton_export_writes_the_join_bolt_and_its_window_back(tmp_path: Path) -> None:
    from app.core.storm.flux.export import to_flux_bytes

    data = example(printer_alpha=0.01).model_dump(mode="json")
    data["storm"].pop("flux_file", None)  # (the skeleton export, not the original file's)
    path = tmp_path / "back.yaml"
    path.write_bytes(to_flux_bytes(parse_topology(data)))
    again = import_flux(path).topology.bolt_by_name("joiner")
    assert again.class_name == "org.apache.storm.bolt.JoinBolt" and again.join is not None
    assert again.join.kind == "window" and again.window is not None
    assert again.window.model_dump(exclude_none=True) == {"kind": "duration", "length": 10}


def test_a_join_bolt_that_keeps_up_is_bounded_within_storms_counts() -> None:
    """The rate check's timer figures hold the independent simulation's counts of a JoinBolt fed by both spouts:
    unevaluated tuples, tuples pending (not acked) and each tuple's hold; the search answers bounded for both."""
    from app.core.tcn.search import SearchOptions, verify

    topo = example(printer_alpha=0.01)
    report = rate_check(topo)
    joiner = report.bolts["joiner"]
    assert joiner.status == "bounded" and joiner.window_timer == 10 and report.bolts["printer"].status == "bounded"
    assert "execute(TupleWindow) every 10 s on whatever arrived" in joiner.explanation
    played = storm_duration_window((GENDER, AGE), JOIN_ALPHA, 10, 10, 1, 40)
    assert played.holds and played.unevaluated_max > 90  # a window's worth of both spouts: 10 s × 10 tuples/s
    assert joiner.queue_bound is not None and played.unevaluated_max <= joiner.queue_bound
    assert joiner.window_pending is not None and played.pending_max <= joiner.window_pending
    assert joiner.window_hold_max is not None and max(played.holds) <= joiner.window_hold_max + 1e-9
    assert joiner.window_hold_nominal == 20 and 10 - 1e-9 <= min(played.holds) <= max(played.holds) <= 20 + 1e-9
    found = verify(topo, SearchOptions(k_max=4))
    assert found.bolts["joiner"].verdict == "bounded" and found.bolts["printer"].verdict == "bounded"


def test_a_printer_that_cannot_keep_up_gets_a_certified_lasso() -> None:
    """The printer, one tuple per 0.5 s, receives σ 0.5 of 10 tuples/s through the join's timer: a lasso, which
    the certifier accepts by the timer's rule and rejects once the joiner is read as an ordinary bolt (its tuples
    then wait longer than an ordinary bolt may); in Storm's window manager the printer's queue grows at about 3
    tuples/s."""
    from app.core.tcn.check.certify import certify
    from app.core.tcn.search import SearchOptions, verify

    topo = example(printer_alpha=0.5)
    report = rate_check(topo)
    assert report.bolts["joiner"].status == "bounded" and report.bolts["printer"].status == "grows"
    found = verify(topo, SearchOptions(k_max=8))
    assert found.bolts["joiner"].verdict == "bounded" and found.bolts["printer"].verdict == "counterexample"
    (lasso,) = found.traces  # (the printer's: the joiner is bounded)
    trace = lasso.model_dump(mode="json")
    assert certify(trace).ok
    joiner = next(b for b in trace["topology"]["bolts"] if b["name"] == "joiner")
    joiner["window"] = joiner["join"] = None  # an ordinary bolt: no timer lets its tuples wait between its runs
    rejected = certify(trace)
    assert not rejected.ok and any("bolt joiner" in p for p in rejected.problems)
    played = storm_duration_window((GENDER, AGE), JOIN_ALPHA, 10, 10, 1, 200, counts=False)
    queue, carry, free, at = 0, Fraction(0), 0.0, []
    for end, k in sorted(played.taken):  # the printer: σ 0.5 per tuple a run took, one served per 0.5 s
        while queue and free + 0.5 <= end:
            free, queue = free + 0.5, queue - 1
        free = max(free, end) if not queue else free
        carry += Fraction(JOINED) * k
        queue, carry = queue + int(carry), carry - int(carry)
        at.append((end, queue))
    early = max(q for t, q in at if t <= 50)
    late = max(q for t, q in at if t <= 200)
    assert late - early >= 3 * 150 * 0.8  # (5 − 2) tuples/s over 150 s, up to a window's phase

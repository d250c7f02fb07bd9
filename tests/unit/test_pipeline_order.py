"""The order of verify's phases (docs/verifier.md, "Pipeline"): the proofs by rates (growth by rates, through cycles
too, and the floods their evidence proves) answer before any search, so a bolt they decide never waits on a
simulation or the solver; the search's time goes to the bolts they leave; the lassos that give the bolts proven by
rates a trace come last, within what is left of the time limit."""

from __future__ import annotations

import threading
import time
from typing import Any

from app.core.tcn import search_lassos, simulate
from app.core.tcn.search import Search, SearchOptions, verify
from app.core.topology import parse_topology


def _checked(doc: dict[str, Any]) -> Any:
    return parse_topology({**doc, "verification": {"checked": []}})


# random topology #78 of bench/verdict_sweep.py (seed 46), τ = 0: B0 ⇄ B1 is a cycle whose members' periods make the
# aligned lasso of B2 and B3 as long as their least common multiple, which no simulation closes in its budget; the
# rates prove all four grow at once. Beside it S → U → J: U grows (proven by rates), J keeps up in every repeating
# run (its long-run inflow 1 < 200/197) but U's backlog drains into J at 50/49 > 200/197: a flood.
CYCLE_AND_FLOOD: dict[str, Any] = {
    "schema_version": 1, "name": "cycle and flood", "spouts": [{"name": "S", "rate": 1.0, "burst": 1}],
    "bolts": [{"name": "B0", "alpha": 0.836, "sigma": 2.0, "parallelism": 1},
              {"name": "B1", "alpha": 1.08, "sigma": 0.5, "parallelism": 1, "streams": ["side"],
               "stream_sigma": {"side": 0.5}},
              {"name": "B2", "alpha": 0.739, "sigma": 2.0, "parallelism": 1},
              {"name": "B3", "alpha": 1.034, "sigma": 2.0, "parallelism": 1},
              {"name": "U", "alpha": 0.98, "sigma": 1.0, "parallelism": 1},
              {"name": "J", "alpha": 0.935, "sigma": 0.0, "parallelism": 1}],
    "settings": {"tolerance": 0.0, "max_idle_time": 0.05, "emission": "dvert"},
    "subscriptions": [{"source": "B0", "target": "B1"}, {"source": "B1", "target": "B0"},
                      {"source": "B1", "target": "B2", "stream": "side"}, {"source": "B2", "target": "B3"},
                      {"source": "S", "target": "B0"}, {"source": "S", "target": "B2"},
                      {"source": "S", "target": "U"}, {"source": "U", "target": "J"}],
}


def test_bolts_decided_by_rates_do_not_wait_on_the_search() -> None:
    """With one second for the whole verification every bolt is answered: before, the simulation of the first
    bolts took the second and left the rest `unknown`, and J's flood (found after every search) was never tried."""
    result = verify(_checked(CYCLE_AND_FLOOD), SearchOptions(timeout_s=1.0))
    verdicts = {n: v.verdict for n, v in result.bolts.items()}
    assert verdicts == {"B0": "counterexample", "B1": "counterexample", "B2": "counterexample",
                        "B3": "counterexample", "U": "counterexample", "J": "unbounded"}, result.message
    assert all(v.certified for v in result.bolts.values())
    assert result.bolts["J"].method == "flood proof" and result.bolts["J"].flood_certificate is not None
    assert result.elapsed_s < 30  # the lassos for traces stop at the time limit (generous: a loaded machine)


def test_the_search_time_goes_to_the_bolts_the_rates_leave(monkeypatch: Any) -> None:
    """The proofs by rates answer every bolt here, so no simulation runs before the lassos for traces (which run
    last, one per bolt proven by rates, each within what is left)."""
    simulated: list[str] = []
    real = simulate.build_lasso

    def spy(net: Any, target: str, **kw: Any) -> Any:
        simulated.append(target)
        return real(net, target, **kw)

    monkeypatch.setattr(search_lassos, "build_lasso", spy)
    said: list[str] = []
    verify(_checked(CYCLE_AND_FLOOD), SearchOptions(timeout_s=1.0),
           progress=lambda p: said.append(p.doing or p.message or ""))
    proofs = [i for i, s in enumerate(said) if "grows (proven by rates)" in s]
    lassos = [i for i, s in enumerate(said) if "a lasso by simulation, for a trace" in s]
    assert len(proofs) == 5 and lassos and max(proofs) < min(lassos)
    assert not any("building a lasso by simulation" in s for s in said)  # no first-pass simulation was needed
    assert simulated and set(simulated) <= {"B0", "B1", "B2", "B3", "U"}


def test_a_cancel_while_simulating_for_a_trace_keeps_the_proof() -> None:
    """Cancelled while the lasso for a trace is simulated, the bolts proven by rates keep their answer."""
    search = Search(_checked(CYCLE_AND_FLOOD), SearchOptions(timeout_s=60))
    out: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: out.update(result=search.run()))
    thread.start()
    time.sleep(0.5)
    search.cancel()
    thread.join(30)
    assert not thread.is_alive()
    verdicts = {n: v.verdict for n, v in out["result"].bolts.items()}
    assert verdicts["J"] == "unbounded" and all(verdicts[n] == "counterexample" for n in ("B0", "B1", "B2", "B3", "U"))


def test_an_undecided_bolt_bounded_without_failures_says_why_rates_prove_no_growth() -> None:
    """Random topology #157 of bench/verdict_sweep.py (seed 46): B1, B2 and B3 are bounded when nothing fails, so
    a proof by rates (a run without failures) cannot show them growing; an `unknown` says so, not "a cycle"."""
    doc = {"schema_version": 1, "name": "sweep", "spouts": [{"name": "S", "rate": 2.0, "burst": 1}],
           "bolts": [{"name": "B0", "alpha": 0.377, "sigma": 1.0, "parallelism": 2, "min_ttf": 3.0},
                     {"name": "B1", "alpha": 0.465, "sigma": 0.5, "parallelism": 2},
                     {"name": "B2", "alpha": 0.524, "sigma": 0.5, "parallelism": 2},
                     {"name": "B3", "alpha": 0.498, "sigma": 0.5, "parallelism": 1, "min_ttf": 200.0}],
           "settings": {"tolerance": 0.0, "max_idle_time": 0, "emission": "dvert", "failures": True,
                        "min_reboot_time": 1, "max_reboot_time": 2, "replay": "at-once"},
           "subscriptions": [{"source": "B1", "target": "B3"}, {"source": "S", "target": "B0"},
                             {"source": "S", "target": "B1"}, {"source": "S", "target": "B2"}]}
    # 0.05 s: at 0.5 s the search now answers every bolt (B1 grows by a lasso, B3 is flooded by it, B0 and B2 by
    # B3's storm), and what is tested is the words of the bolts it leaves
    result = verify(_checked(doc), SearchOptions(timeout_s=0.05))
    left = [v for v in result.bolts.values() if v.verdict in ("unknown", "none-up-to-k")]
    assert left and all("without failures the rate check bounds it" in (v.message or "") for v in left)
    assert not any("a cycle that does not settle" in (v.message or "") for v in left)

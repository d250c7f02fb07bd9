"""Growth proven by rates (docs/verifier.md, "Growth proven by rates"): the fixed schedule, its certificate,
the independent checker (app/core/tcn/check/rate_growth.py), and its soundness against runs played by an
independent simulator (tests/adversary.py) and against the linear program's proofs."""

from __future__ import annotations

import copy
import json
import random
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.core.tcn.certificates import certificate_file
from app.core.tcn.check.files import check_file
from app.core.tcn.check.rate_growth import check_growth_certificate
from app.core.tcn.options import SearchOptions
from app.core.tcn.search import verify
from app.core.topology import parse_topology
from tests.rate_growth_documents import growth_certificate, growth_doc, played_growth, proven_targets

# B gains one tuple every 10^6 s: its shortest lasso has millions of positions, past what the simulation builds
SLOW_GROWTH = growth_doc([("U", 0.5, 1.0, 1), ("B", 1.000001, 0.0, 1)], [("S", "U"), ("U", "B")])





def test_a_growth_too_slow_for_any_lasso_search_is_proven_by_rates_and_checked() -> None:
    cone, cert = growth_certificate(SLOW_GROWTH, "B")
    assert cert is not None
    assert cert.bolts["U"].role == "keeps up" and cert.bolts["B"].role == "target"
    b = cert.bolts["B"]
    assert Fraction(b.inflow_low) == 1 and Fraction(b.capacity) == Fraction(10**6, 10**6 + 1)
    assert check_growth_certificate(cone, cert) == []
    result = verify(parse_topology(SLOW_GROWTH), SearchOptions(timeout_s=60))
    b = result.bolts["B"]
    assert result.verdict == "counterexample" and b.verdict == "counterexample" and b.method == "rate proof"
    assert b.certified and b.trace_index is None and b.growth_certificate is not None and not result.traces
    assert "proven by rates" in result.message and result.bolts["U"].verdict == "bounded"


def test_ties_prove_nothing() -> None:  # cycles: tests/unit/test_rate_growth_cycles.py
    tie = copy.deepcopy(SLOW_GROWTH)
    tie["bolts"][1]["alpha"] = 1.0  # B receives exactly what it can process
    assert growth_certificate(tie, "B")[1] is None
    # U's inflow = its capacity
    upstream_tie = growth_doc([("U", 1.0, 1.0, 1), ("B", 2.0, 0.0, 1)], [("S", "U"), ("U", "B")])
    assert growth_certificate(upstream_tie, "B")[1] is None
    saturated = growth_doc([("U", 1.5, 1.0, 1), ("B", 2.0, 0.0, 1)], [("S", "U"), ("U", "B")])  # U saturated, B slower
    cone, cert = growth_certificate(saturated, "B")
    assert cert is not None and cert.bolts["U"].role == "saturated" and check_growth_certificate(cone, cert) == []


MUTATIONS = {
    "target inflow raised": lambda c: c["bolts"]["B"].update(inflow_low="3/1"),
    "keeps-up inflow lowered": lambda c: c["bolts"]["U"].update(inflow_high="1/2"),
    "capacity changed": lambda c: c["bolts"]["B"].update(capacity="1/2"),
    "role swapped": lambda c: c["bolts"]["U"].update(role="saturated"),
    "target renamed": lambda c: c.update(target="U"),
    "bolt left out": lambda c: c["bolts"].pop("U"),
    "spout rate": lambda c: c["spouts"].update(S="2/1"),
    "hash": lambda c: c.update(content_hash="0" * 64),
    "not a fraction": lambda c: c["bolts"]["B"].update(inflow_low="one"),
}


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_the_checker_rejects_a_mutated_certificate(mutation: str) -> None:
    cone, cert = growth_certificate(SLOW_GROWTH, "B")
    assert cert is not None
    data = cert.model_dump()
    MUTATIONS[mutation](data)
    assert check_growth_certificate(cone, data) != []


def test_the_checker_rejects_a_document_changed_after_the_proof() -> None:
    cone, cert = growth_certificate(SLOW_GROWTH, "B")
    changed = copy.deepcopy(cone)
    changed["bolts"][1]["alpha"] = 0.9  # B now keeps up; the hash and the inequality both fail
    problems = check_growth_certificate(changed, cert)
    assert any("content_hash" in p for p in problems) and any("not above" in p or "capacity" in p for p in problems)


def test_certificate_file_and_check_certificate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "slow.storm.json"
    source.write_text(json.dumps(SLOW_GROWTH))
    out = tmp_path / "slow.cert.json"
    assert main(["verify", str(source), "--timeout", "60", "--certificate-out", str(out)]) == 1
    text = capsys.readouterr().out
    assert "B: grows (proven by rates" in text and "1 proven by rates" in text
    written = json.loads(out.read_text())
    assert written["format"] == "stormbound-certificates/1"
    assert [(t, kind, p) for t, kind, p in check_file(written)] == [("B", "rate proof", [])]
    assert main(["check-certificate", str(out)]) == 0
    assert "B: accepted (rate proof)" in capsys.readouterr().out
    written["certificates"][0]["growth_certificate"]["bolts"]["B"]["inflow_low"] = "5/1"
    out.write_text(json.dumps(written))
    assert main(["check-certificate", str(out)]) == 1
    assert "B: rejected (rate proof)" in capsys.readouterr().out
    topo = parse_topology(SLOW_GROWTH)
    assert certificate_file(topo, verify(topo, SearchOptions(timeout_s=60)).bolts) is not None


def subs_of(doc: dict[str, Any]) -> list[tuple[str, str]]:
    return [(s["source"], s["target"]) for s in doc["subscriptions"]]


def _random_chain(rng: random.Random) -> dict[str, Any]:
    n = rng.randint(1, 3)
    names = [f"B{i}" for i in range(n)]
    bolts = [(name, rng.choice([0.2, 0.45, 0.6, 0.9, 1.3]), rng.choice([0.5, 1.0, 1.0, 2.0]) if i < n - 1 else 0.0,
              rng.choice([1, 1, 2])) for i, name in enumerate(names)]
    subs = [("S", names[0])] + [(rng.choice(["S", *names[:i]]), name) for i, name in enumerate(names[1:], start=1)]
    return growth_doc(bolts, sorted(set(subs)), rate=rng.choice([1.0, 2.0, 3.0]), tolerance=rng.choice([0.0, 0.1]),
                idle=rng.choice([0.0, 0.05]), emission=rng.choice(["exact", "exact", "dvert"]))


def test_the_schedule_makes_the_queue_grow_in_runs_played_independently() -> None:
    """Whenever a certificate is written, the independent simulator plays its schedule (spouts fastest, the target
    slowest and idling as long as allowed, every other bolt fastest): the target's queue grows at least at the
    certified rate between two horizons, and the run is a legal one by the product's certifier. The checker
    accepts every certificate written, and the linear program never proves such a target free of growth."""
    rng = random.Random(2026_11_27)
    played = proofs = 0
    for doc, target, cert in proven_targets(_random_chain(rng) for _ in range(80)):
        proofs += 1
        if doc["settings"]["emission"] != "exact":
            continue  # the simulator plays the exact rule only
        line = cert.bolts[target]
        gain = Fraction(line.inflow_low) - Fraction(line.capacity)
        if gain < Fraction(1, 20):
            continue  # too slow to see within the horizon
        played_growth(doc, target, cert)
        played += 1
    assert proofs >= 20 and played >= 8, (proofs, played)


def test_a_failing_bolt_below_the_target_receives_what_the_slow_target_passes_on() -> None:
    """With failures the cone keeps a failing bolt the spout feeds, here through the target: under the schedule
    the target processes at its smallest capacity, so that is what it passes on (not its largest)."""
    doc = growth_doc([("B", 1.0, 1.0, 1), ("F", 1.05, 0.0, 1)], [("S", "B"), ("B", "F")], rate=2.0, tolerance=0.1)
    doc["bolts"][1]["min_ttf"] = 10
    doc["settings"].update(min_reboot_time=1, max_reboot_time=2, failures=True)
    cone, cert = growth_certificate(doc, "B")
    assert cert is not None and "F" in cert.bolts
    assert Fraction(cert.bolts["F"].inflow_low) == Fraction(10, 11)  # B's smallest capacity 1/(1·1.1)
    assert cert.bolts["F"].role == "keeps up" and check_growth_certificate(cone, cert) == []
    data = cert.model_dump()
    data["bolts"]["F"].update(inflow_low="10/9", inflow_high="10/9", role="saturated")  # B at its largest
    assert check_growth_certificate(cone, data) != []

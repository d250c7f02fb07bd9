"""Floods from a source proven to grow by rates answer before the search (docs/verifier.md, step 2a): random #54
of the sweep (tests/data/lost/README.md), whose B1 `check` proves unbounded at once (a backlog lost into a paced
spout), was left `unknown` by a 60 s verification under load: the search spent the limit on B1's 70,495-position
lasso and the flood pass in the overtime never reached it."""

from __future__ import annotations

import json
from pathlib import Path

from app.core.results import Progress
from app.core.tcn.search import SearchOptions, verify
from app.core.topology import parse_topology

R54 = json.loads((Path(__file__).resolve().parents[1] / "data" / "lost" / "random-54.storm.json").read_text())


def test_a_lost_backlog_from_a_rate_proof_answers_before_any_search() -> None:
    seen: list[Progress] = []
    result = verify(parse_topology(R54), SearchOptions(timeout_s=3), progress=seen.append)
    b1 = result.bolts["B1"]
    assert b1.verdict == "unbounded" and b1.flood_certificate is not None
    assert b1.flood_certificate.via == "S" and b1.flood_certificate.evidence.growth_certificate is not None
    # never searched: answered before the simulation, the linear program and the solver
    searched = [p.doing for p in seen if p.doing.startswith("B1:") and "for a trace" not in p.doing
                and "proof of growth" not in p.doing]
    assert searched == [], searched
    # a lasso, where the trace passes find one, answers instead (it says more: a repeating run); else the flood
    assert result.bolts["B0"].verdict == "counterexample"
    assert result.bolts["B2"].verdict in ("counterexample", "unbounded")

"""Worker deaths through a duration window in the linear program (docs/model.md 9.4 and 10.3): a bolt a dying worker
may run loses what it holds and its run in progress, of any size for a timer (no `batch-lost` row), and a timer's
queue still never grows in a lasso (its `timer` row: each run and each death empties it). The builder's rows and the
checker's own copy; the search's note proves the bolt below the timer instead of refusing."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from app.core.results import LinearCertificate
from app.core.tcn.check.content import content_hash
from app.core.tcn.check.linear import check_certificate
from app.core.tcn.linear import build_rows, farkas
from app.core.tcn.network import build_network
from app.core.tcn.search_deaths import death_proofs
from app.core.topology import parse_topology
from tests.unit.test_worker_check import replays


def _doc(worker_min_ttf: float) -> dict[str, Any]:
    """The worker example's S -> A (90 % busy) -> D with a duration window W (every 2 s, α 0.5 s) between S and A,
    every bolt on two workers that die at most every `worker_min_ttf` s."""
    data = replays(workers=2, pending=2, a_executors=1)
    data["schema_version"] = 5
    data["bolts"][1].pop("min_ttf")
    data["bolts"].append({"name": "W", "alpha": 0.5, "sigma": 1, "parallelism": 1,
                          "window": {"kind": "duration", "length": 4, "slide": 2}})
    data["subscriptions"] = [{"source": "S", "target": "W"}, {"source": "W", "target": "A"},
                             {"source": "S", "target": "C"}, {"source": "A", "target": "D"}]
    data["storm"]["worker_min_ttf"] = worker_min_ttf
    return data


def _proof(data: dict[str, Any], target: str) -> tuple[Any, dict[str, Fraction] | None]:
    net = build_network(parse_topology(data), [target])
    return net, farkas(build_rows(net, target))


def _checked(net: Any, y: dict[str, Fraction], target: str) -> list[str]:
    cert = LinearCertificate(target=target, content_hash=content_hash(net.topology),
                             rows={n: str(v) for n, v in y.items()})
    return check_certificate(net.document(), cert.model_dump(mode="json"))


def test_rare_deaths_through_a_timer_are_proven_and_checked() -> None:
    net, y = _proof(_doc(200), "A")
    assert y is not None
    assert "worker-ttf[w0]" in y and not any(r.startswith("batch-lost[W") for r in y)
    assert _checked(net, y, "A") == []
    names = {r.name for r in build_rows(net, "A")}
    assert "timer[W]" in names and "batch-lost[W]" not in names and "batch-lost[A]" in names


def test_a_timer_hit_by_deaths_never_grows() -> None:
    net, y = _proof(_doc(200), "W")
    assert y is not None and "timer[W]" in y
    assert _checked(net, y, "W") == []
    assert _checked(net, {**y, "timer[W]": Fraction(0)}, "W") != []


def test_the_search_note_proves_the_bolt_below_the_timer() -> None:
    note, proven = death_proofs(parse_topology(_doc(200)), ["A"], lambda: False, budget_s=20)
    assert note is not None and "A" in proven, note
    assert "proves nothing" not in note

"""The linear program with a join as its target (docs/verifier.md, "A join as the target"): the queue's case and one
case per branch taken as the slowest, with the other caches growing and every other bolt of the cone held level;
the independent checker writes the rows itself and rejects a certificate without every case, a forged one, and
one whose case a join's real rule leaves feasible; the search gives the verdict only with the cone's other bolts
proven not to grow. Against an independent simulation of the two spouts' parts."""

from __future__ import annotations

from fractions import Fraction
from types import SimpleNamespace
from typing import Any

from app.core.results import BoltVerdict, LinearCertificate
from app.core.tcn.check import linear as checker
from app.core.tcn.check.content import content_hash
from app.core.tcn.linear import build_cases, build_rows, farkas
from app.core.tcn.network import build_network
from app.core.tcn.options import SearchOptions
from app.core.tcn.search import verify
from app.core.tcn.search_proofs import join_not_ready
from app.core.topology import parse_topology


def two(tau: float = 0, rate_b: float = 10, sigma: float = 1) -> dict[str, Any]:
    """Spout a's tuples through u (σ), spout b's directly: the join waits for one part from each."""
    return {"schema_version": 5, "name": "two", "settings": {"tolerance": tau, "max_idle_time": 0},
            "spouts": [{"name": "a", "rate": 10}, {"name": "b", "rate": rate_b}],
            "bolts": [{"name": "u", "alpha": 0.01, "sigma": sigma, "parallelism": 1},
                      {"name": "join", "alpha": 0.01, "sigma": 1, "parallelism": 1, "join": {"kind": "all"}}],
            "subscriptions": [{"source": "a", "target": "u"}, {"source": "u", "target": "join"},
                              {"source": "b", "target": "join"}]}


def certificate(net: Any) -> LinearCertificate | None:
    found = {key: farkas(rows) for key, rows in build_cases(net, "join").items()}
    if any(v is None for v in found.values()):
        return None
    texts = {key: {n: str(y) for n, y in v.items()} for key, v in found.items() if v is not None}
    return LinearCertificate(target="join", content_hash=content_hash(net.topology), rows=texts.pop("queue"),
                             cases=texts)


def most_parts_waiting(rate_a: Fraction, rate_b: Fraction, alpha_u: Fraction, seconds: int, every: int = 1) -> int:
    """An independent simulation: a's tuples pass u (FIFO, α each, passing on one in `every`) and b's come directly;
    the join pairs the n-th of each, and the most parts one side ever holds unmatched."""
    done_u, free = [], Fraction(0)
    for n in range(int(rate_a * seconds)):
        free = max(free, n / rate_a) + alpha_u
        if n % every == every - 1:
            done_u.append(free)
    events = sorted([(t, 0) for t in done_u] + [(n / rate_b, 1) for n in range(int(rate_b * seconds))])
    held, most = [0, 0], 0
    for _, side in events:
        held[side] += 1
        pair = min(held)
        held = [held[0] - pair, held[1] - pair]
        most = max(most, *held)
    return most


def test_a_join_of_two_spouts_at_one_rate_is_proven_by_its_cases_and_the_simulation_agrees() -> None:
    """τ = 0: both spouts emit every 0.1 s and u keeps up, so the cache never holds more than a part; the rate check
    cannot say so (its branches come from two components), the linear program's cases do, the checker accepts, and
    verify gives no-repeating-growth naming the case rows and u held level."""
    net = build_network(parse_topology(two()), ["join"])
    cases = build_cases(net, "join")
    assert set(cases) == {"queue", "[u/default]", "[b/default]"}
    assert {r.name for r in cases["[b/default]"]} >= {"slowest[join/b/default]", "caches-grow[join]", "level[u]"}
    assert not any(r.name.startswith("level") for r in cases["queue"])
    for key, rows in cases.items():  # the builder's rows are the checker's
        branch = None if key == "queue" else ("u" if "u/" in key else "b", "default")
        mine = checker.pass_rows(net.topology, "join", branch)
        assert {r.name: (r.kind, r.coefficients, r.constant) for r in rows} == \
            {n: (k, {v: c for v, c in co.items() if c}, c0) for n, (k, co, c0) in mine.items()}
    cert = certificate(net)
    assert cert is not None and checker.check_certificate(net.topology, cert) == []
    assert most_parts_waiting(Fraction(10), Fraction(10), Fraction(1, 100), 60) == 1
    result = verify(parse_topology(two()), SearchOptions(timeout_s=20))
    verdict = result.bolts["join"]
    assert (verdict.verdict, verdict.method) == ("no-repeating-growth", "linear program")
    assert verdict.certificate is not None and set(verdict.certificate.cases) == {"[u/default]", "[b/default]"}
    assert "nor its cache of parts waiting for the slowest branch" in verdict.message
    assert "u held level" in verdict.message


def test_a_cache_that_grows_leaves_its_case_feasible_and_forgeries_are_rejected() -> None:
    """u passes on one tuple in two (σ ½): b's parts pile up, as the simulation shows, and the case with u's branch
    the slowest has a solution. A certificate without that case, one forged from rows in which every branch delivers
    exactly the messages completed, and one with only the queue's case checked are each rejected."""
    net = build_network(parse_topology(two(sigma=0.5)), ["join"])
    cases = build_cases(net, "join")
    assert farkas(cases["[u/default]"]) is None and farkas(cases["queue"]) is not None
    assert most_parts_waiting(Fraction(10), Fraction(10), Fraction(1, 100), 60, every=2) >= 299
    good_b = farkas(cases["[b/default]"])
    assert good_b is not None
    queue = {n: str(y) for n, y in (farkas(cases["queue"]) or {}).items()}
    bare = LinearCertificate(target="join", content_hash=content_hash(net.topology), rows=queue)
    assert "no case for the branches" in checker.check_certificate(net.topology, bare)[0]
    exact = [r if not r.name.startswith("cache[") else type(r)(r.name, "eq", r.coefficients, r.constant)
             for r in cases["[u/default]"]]
    forged_u = farkas(exact)
    assert forged_u is not None  # every branch delivering exactly A: no cache can grow
    forged = bare.model_copy(update={"cases": {"[u/default]": {n: str(y) for n, y in forged_u.items()},
                                               "[b/default]": {n: str(y) for n, y in good_b.items()}}})
    problems = checker.check_certificate(net.topology, forged)
    assert problems and problems[0].startswith("case [u/default]: ")
    swapped = bare.model_copy(update={"cases": {"[u/default]": {n: str(y) for n, y in good_b.items()},
                                                "[b/default]": {n: str(y) for n, y in good_b.items()}}})
    assert checker.check_certificate(net.topology, swapped) != []


def test_the_join_waits_for_the_other_bolts_of_its_cone_and_build_rows_refuses_it() -> None:
    """The cache's cases hold u level: without a proof that u does not grow (the rate check's, or the linear
    program's), the search does not count them, and says which bolt it waits for."""
    net = build_network(parse_topology(two()), ["join"])
    search = SimpleNamespace(topo=parse_topology(two()))
    unproven = SimpleNamespace(steady=frozenset(), verdicts={})
    assert "u is not" in join_not_ready(search, unproven, net, "join", [])  # type: ignore[arg-type]
    growing = SimpleNamespace(steady=frozenset(), verdicts={"u": BoltVerdict(verdict="counterexample")})
    assert "u is not" in join_not_ready(search, growing, net, "join", [])  # type: ignore[arg-type]
    assert join_not_ready(search, SimpleNamespace(steady=frozenset({"u"}), verdicts={}), net, "join",  # type: ignore[arg-type]
                          []) == ""
    assert join_not_ready(search, unproven, net, "join", ["u"]) == ""  # type: ignore[arg-type]
    try:
        build_rows(net, "join")
    except ValueError as e:
        assert "build_cases" in str(e)
    else:
        raise AssertionError("build_rows gave a join's queue case alone")

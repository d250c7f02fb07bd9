"""Joins that wait for every branch (docs/model.md section 11): the document field, the rate check's figures against
an independent message-by-message simulation of Metron's enrichment join, the simulation's certified lassos, the
certifier's own copy of the rule (mutations rejected), and the checkers without a join rule refusing one."""

from __future__ import annotations

import heapq
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from app.core.rates import RateFigures, rate_check
from app.core.rates.joins import join_figures
from app.core.tcn.check.certify import certify
from app.core.tcn.check.reading import read_certificate
from app.core.tcn.network import build_network
from app.core.tcn.options import SearchOptions
from app.core.tcn.search import verify
from app.core.tcn.simulate import build_lasso
from app.core.topology import Bolt, TopologyError, parse_topology


def enrichment(geo: float = 0.005, rate: float = 100, **join: Any) -> dict[str, Any]:
    """Metron's split-join in small: the splitter sends each message to the join (`default`) and to the geo and host
    enrichments (their streams), whose results are the join's other two branches; one executor each, τ = 0."""
    return {
        "schema_version": 5, "name": "enrichment", "settings": {"tolerance": 0, "max_idle_time": 0},
        "spouts": [{"name": "kafka", "rate": rate}],
        "bolts": [
            {"name": "split", "alpha": 0.001, "sigma": 1, "parallelism": 1, "streams": ["geo", "host"],
             "stream_sigma": {"geo": 1, "host": 1}},
            {"name": "geo", "alpha": geo, "sigma": 1, "parallelism": 1},
            {"name": "host", "alpha": 0.001, "sigma": 1, "parallelism": 1},
            {"name": "join", "alpha": 0.003, "sigma": 1, "parallelism": 1, "join": {"kind": "all", **join}}],
        "subscriptions": [
            {"source": "kafka", "target": "split"}, {"source": "split", "target": "geo", "stream": "geo"},
            {"source": "split", "target": "host", "stream": "host"}, {"source": "split", "target": "join"},
            {"source": "geo", "target": "join"}, {"source": "host", "target": "join"}]}


def metron_by_message(data: dict[str, Any], seconds: int) -> dict[str, Any]:
    """An independent simulation of the enrichment join, message by message and by key, as Metron runs it: each
    bolt a FIFO executor working α on one tuple at a time; the join caches each message's parts under its key until
    all three came, then queues the complete message for its own α. Exact times; gives the cache's entries over
    time, the largest, and each complete message's wait for its last part."""
    alpha = {b["name"]: Fraction(str(b["alpha"])) for b in data["bolts"]}
    period = 1 / Fraction(str(data["spouts"][0]["rate"]))
    events: list[tuple[Fraction, int, str, int]] = []  # (time, order, where, message)
    order = 0

    def at(t: Fraction, where: str, message: int) -> None:
        nonlocal order
        order += 1
        heapq.heappush(events, (t, order, where, message))

    free = {name: Fraction(0) for name in alpha}  # when each executor is next free (FIFO: one tuple at a time)
    cache: dict[int, dict[str, Fraction]] = {}
    entries: list[tuple[Fraction, int]] = []
    waits: list[Fraction] = []
    end = Fraction(seconds)
    m = 0
    while m * period < end:
        at(m * period, "split", m)
        m += 1
    while events:
        t, _, where, message = heapq.heappop(events)
        if t > end:
            break
        if where in ("split", "geo", "host"):
            done = max(t, free[where]) + alpha[where]
            free[where] = done
            if where == "split":
                at(done, "geo", message)
                at(done, "host", message)
                at(done, "part:message", message)
            else:
                at(done, f"part:{where}", message)
        elif where.startswith("part:"):
            parts = cache.setdefault(message, {})
            parts[where] = t
            if len(parts) == 3:  # every branch delivered: joined, acked, dropped from the cache
                waits.append(max(parts.values()) - min(parts.values()))
                del cache[message]
            entries.append((t, len(cache)))
    return {"entries": entries, "largest": max(n for _, n in entries), "waits": waits}


def test_a_join_is_a_schema_5_field_an_earlier_version_may_not_name() -> None:
    topo = parse_topology(enrichment(max_cache=100000, max_time=10))
    join = topo.bolt_by_name("join")
    assert join.waits_for_all and join.join is not None and join.join.max_cache == 100000
    again = parse_topology(json.loads(topo.to_json_bytes()))
    assert again.bolt_by_name("join").join == join.join and again.semantics() == topo.semantics()
    old = enrichment()
    old["schema_version"] = 4
    with pytest.raises(TopologyError) as err:
        parse_topology(old)
    assert err.value.problems[0].path == "bolts.join.join" and "schema_version 5" in err.value.problems[0].message


@pytest.mark.parametrize(("change", "said"), [
    (lambda d: d["subscriptions"].__delitem__(slice(3, 6)), "needs two input streams at least"),
    (lambda d: d["bolts"][3]["join"].update(kind="window"), "give the bolt its `window`"),
    (lambda d: d["bolts"][3].update(threads=4), "leave `window` and `threads` out of it"),
])
def test_a_join_the_model_cannot_read_is_refused_naming_the_field(change: Any, said: str) -> None:
    data = enrichment()
    change(data)
    with pytest.raises(TopologyError, match="join") as err:
        parse_topology(data)
    assert said in str(err.value)


def test_balanced_branches_bound_the_cache_and_the_wait_is_the_slowest_branchs() -> None:
    """Every branch keeps up (geo 5 ms: 200/s against 100 messages/s): the join is bounded, its cache bound holds in
    the independent simulation, and a message's parts wait for the geo part exactly geo's α, 5 ms: the figure an
    engineer checks by hand (the message part leaves the splitter when geo and host get theirs)."""
    data = enrichment(geo=0.005)
    topo = parse_topology(data)
    e = RateFigures(topo)
    j = join_figures(e, topo.bolt_by_name("join"))
    assert j is not None and not j.grows and j.cache_bound is not None
    assert e.names[j.slowest[0]] == "geo" and j.wait_nominal == Fraction(5, 1000)
    run = metron_by_message(data, 3)
    assert run["largest"] <= j.cache_bound
    assert max(run["waits"]) == j.wait_nominal  # the geo part, 5 ms after the message part, every time
    report = rate_check(topo).bolts["join"]
    assert report.status == "bounded" and report.join_slowest == "geo" and report.join_wait_nominal == 0.005
    assert "a message's parts wait about 0.005 s in it for the slowest branch" in report.explanation


def test_a_slow_branch_grows_the_cache_as_the_rate_check_says_and_verify_certifies_it() -> None:
    """geo at 20 ms (50/s) against 100 messages/s: the join completes 50 messages/s and its cache gains 50 messages a
    second, in the independent simulation as in the rate check; verify answers with a certified lasso in which the
    join's cache grows, built by simulation."""
    data = enrichment(geo=0.02, max_cache=100000)
    topo = parse_topology(data)
    j = join_figures(RateFigures(topo), topo.bolt_by_name("join"))
    assert j is not None and j.grows and j.growth == 50
    entries = metron_by_message(data, 4)["entries"]
    (t1, n1), (t2, n2) = next(x for x in entries if x[0] >= 1), entries[-1]
    assert abs(Fraction(n2 - n1) / (t2 - t1) - j.growth) < 2  # messages waiting for their geo part
    report = rate_check(topo).bolts["join"]
    assert report.status == "grows" and report.join_slowest == "geo"
    assert "its cache grows by about 50 parts/s" in report.explanation and "maxCacheSize 100000" in report.explanation
    result = verify(parse_topology({**data, "verification": {"checked": ["join"]}}), SearchOptions(timeout_s=30))
    verdict = result.bolts["join"]
    assert verdict.verdict == "counterexample" and verdict.certified and verdict.method == "simulation"
    assert "join's queue and cache gain" in (verdict.message or "")


def lasso_of(data: dict[str, Any]) -> Any:
    net = build_network(parse_topology(data), ["join"])
    lasso = build_lasso(net, "join")
    assert lasso.trace is not None, lasso.message
    return lasso.trace


def test_the_certifier_has_its_own_join_rule_and_rejects_mutations(monkeypatch: pytest.MonkeyPatch) -> None:
    trace = lasso_of(enrichment(geo=0.02))
    cert = certify(trace, checked=["join"])
    assert cert.ok, cert.problems
    assert cert.growth_per_loop["join"] > 0  # its cache grows (its queue need not)
    data = trace.model_dump(mode="json")
    # the join's arrivals read as the sum of its inputs (the old single-queue bolt): rejected
    at = next(i for i, p in enumerate(data["positions"]) if p["bolts"]["join"]["arrivals"] > 0)
    wrong = json.loads(json.dumps(data))
    wrong["positions"][at]["bolts"]["join"]["arrivals"] += 1
    assert any("its branches complete" in p for p in certify(wrong, checked=["join"]).problems)
    # a certifier without the rule (a join read as an ordinary bolt) rejects the lasso it accepts
    from app.core.tcn.check import certify_rules

    original = certify_rules.join_branches
    monkeypatch.setattr(certify_rules, "join_branches", lambda topo, bolt: None)
    assert not certify(trace, checked=["join"]).ok
    monkeypatch.setattr(certify_rules, "join_branches", original)
    assert certify(trace, checked=["join"]).ok


def test_a_lasso_is_no_witness_for_a_bolt_that_does_not_grow_in_it() -> None:
    """The join's lasso claimed for the splitter, which keeps up in it: the certifier finds no checked growth."""
    cert = certify(lasso_of(enrichment(geo=0.02)), checked=["split"])
    assert not cert.ok and any("no checked queue grows" in p for p in cert.problems)


def test_the_checkers_without_a_join_rule_refuse_a_join() -> None:
    from app.core.results import LinearCertificate

    topo = parse_topology(enrichment())
    refused = read_certificate(topo, {"target": "join", "content_hash": "x", "rows": {}}, LinearCertificate,
                               "a linear certificate")
    assert refused == ["the embedded topology has the join join, and this checker has no join rule "
                       "(docs/model.md section 11)"]


def small(alpha: float) -> dict[str, Any]:
    """S (10/s) feeds J directly and through A (α `alpha`): J's cache grows when A falls behind."""
    return {"schema_version": 5, "name": "small", "settings": {"tolerance": 0, "max_idle_time": 0},
            "spouts": [{"name": "S", "rate": 10}],
            "bolts": [{"name": "A", "alpha": alpha, "sigma": 1, "parallelism": 1},
                      {"name": "J", "alpha": 0.01, "sigma": 1, "parallelism": 1, "join": {"kind": "all"}}],
            "subscriptions": [{"source": "S", "target": "A"}, {"source": "A", "target": "J"},
                              {"source": "S", "target": "J"}],
            "verification": {"checked": ["J"]}}


def test_the_solver_has_the_join_rule_and_its_lassos_certify() -> None:
    """Without the simulation (--no-simulate) the solver finds the lasso in which J's cache grows (A at 5/s against
    10/s), and the certifier accepts it; with A at 20/s, forced past the rate check's bound, no lasso up to k = 8."""
    grows = verify(parse_topology(small(0.2)), SearchOptions(timeout_s=60, simulate=False)).bolts["J"]
    assert grows.verdict == "counterexample" and grows.method == "solver" and grows.certified
    keeps = verify(parse_topology(small(0.05)), SearchOptions(timeout_s=60, force_search=True, k_max=8)).bolts["J"]
    assert keeps.verdict == "none-up-to-k"


def test_a_bolt_of_the_join_class_stays_a_bolt() -> None:
    assert Bolt(name="b", alpha=1, sigma=1, parallelism=1).join is None


def metron_real(geo: float) -> dict[str, Any]:
    """Metron's real split-join Flux file (tests/data/flux/metron/, from Apache Metron), annotated: 100 messages/s,
    every bolt 1 ms but geo, σ 1 (the output bolts 0), τ 0, max_idle 0."""
    from app.core.storm.flux.builder import import_flux
    from app.core.storm.flux.yaml_text import FluxOptions

    folder = Path(__file__).resolve().parents[1] / "data" / "flux" / "metron"
    data = import_flux(folder / "remote-splitjoin.yaml",
                       FluxOptions(filter=folder / "enrichment-test.properties")).topology.model_dump(mode="json")
    for s in data["spouts"]:
        s.update(rate=100, burst=1, unannotated=[])
    for b in data["bolts"]:
        b.update(alpha=geo if b["name"] == "geoEnrichmentBolt" else 0.001, unannotated=[],
                 sigma=0 if b["name"].endswith("OutputBolt") else 1)
        b["stream_sigma"] = {k: 1 for k in b.get("streams", [])}
    data["settings"].update(tolerance=0, max_idle_time=0)
    return data


def test_metrons_enrichment_join_waits_for_its_slowest_branch_as_an_engineer_computes_it() -> None:
    """By hand: the splitter sends the message part to the join as it sends the geo, host, HBase and Stellar parts
    out; each enrichment takes its α, geo 5 ms the longest (200/s against 100 messages/s: it keeps up). So a
    message's parts wait 5 ms in the join's cache for the geo part, every branch delivers 100 parts/s and the cache
    stays bounded; with geo at 20 ms (50/s) the join completes 50 messages/s and its cache grows by 50 a second."""
    report = rate_check(parse_topology(metron_real(0.005))).bolts["enrichmentJoinBolt"]
    assert report.status == "bounded" and report.join_wait_nominal == 0.005 and report.join_cache_growth == 0
    assert report.join_slowest == "geoEnrichmentBolt (stream 'geo')" and report.join_cache_bound is not None
    slow = rate_check(parse_topology(metron_real(0.02))).bolts["enrichmentJoinBolt"]
    assert slow.status == "grows" and slow.join_cache_growth == 50 and slow.inflow_nominal == 50


def test_metrons_joins_export_and_import_back(tmp_path: Path) -> None:
    from app.core.storm.flux.builder import import_flux
    from app.core.storm.flux.export import to_flux_bytes

    topo = parse_topology(metron_real(0.005))
    path = tmp_path / "metron.yaml"
    path.write_bytes(to_flux_bytes(topo))
    again = import_flux(path).topology
    for name in ("enrichmentJoinBolt", "threatIntelJoinBolt"):
        assert again.bolt_by_name(name).join == topo.bolt_by_name(name).join
    assert again.semantics() == topo.semantics()


def test_a_latency_bound_through_a_join_waits_for_the_slowest_branchs_path() -> None:
    """Balanced (geo 5 ms): each branch passes the splitter's tuples on one for one, so a message's parts are one
    tree's and its last comes by the slowest path: the spout's bound is split + geo + join, the geo path critical.
    With a branch of σ 1/2 (its parts are other trees'), and with geo behind (the cache grows), no bound, saying why;
    a witness in the join's queue counts no wait in its cache."""
    from app.core.latency.report import latency_report
    from app.core.tcn.check.latency_witness import check_witness

    report = latency_report(parse_topology(enrichment(geo=0.005)), witnesses=False, pending=False)
    hops = report.sojourn_bound
    assert report.spouts["kafka"].bound == pytest.approx(hops["split"] + hops["geo"] + hops["join"])
    assert report.spouts["kafka"].critical_path == ["split", "geo", "join"]
    halved = enrichment(geo=0.005)
    halved["bolts"][2]["sigma"] = 0.5  # host passes on one tuple in two: the cache grows (not one for one)
    report = latency_report(parse_topology(halved), witnesses=False, pending=False)
    assert report.spouts["kafka"].bound is None and report.sojourn_bound["join"] is None
    assert "join is a join waiting for every branch, and a part it holds is not proven to wait only for its own " \
           "tree's other parts" in report.spouts["kafka"].reason
    # the witness checker has the join rule (tests/unit/test_witness_joins.py), and counts waits in the join's FIFO
    # queue of complete messages: with geo behind, the parts wait in the cache, and no message waits in the queue
    lasso = lasso_of(enrichment(geo=0.02))
    waits = [check_witness(lasso, "join", 50, i, Fraction(1)) for i in range(lasso.loop_start, lasso.k + 1)]
    assert not any(w.ok for w in waits) and any("not more than the timeout" in w.problems[0] for w in waits)


def test_the_storm_terms_line_says_where_the_parts_wait_and_what_bounds_them() -> None:
    """Metron's file keeps max.spout.pending 500: Storm throttles the spout to geo's 50 messages/s, and the join's
    cache holds at most the 500 trees in flight, within Metron's maxCacheSize of 100,000."""
    from app.core.headroom import headroom
    from app.core.storm.lines import storm_lines

    lines = storm_lines(headroom(parse_topology(metron_real(0.02))))
    (line,) = [n for n in lines if n.startswith("enrichmentJoinBolt is a join")]
    assert "the cache gains 50 messages/s" in line and "holding what waits behind geoEnrichmentBolt" in line
    assert "max.spout.pending keeps at most 500 trees in flight" in line and "within Metron's maxCacheSize" in line


def test_a_run_on_spark_and_d_vert_json_refuse_a_join_naming_it() -> None:
    from app.core.formats import FormatError
    from app.core.formats.dvert import to_dvert
    from app.spark.run_job import windows_problem

    topo = parse_topology(enrichment())
    assert (windows_problem(topo) or "").startswith("bolts.join.join: a run on Spark has no joins yet")
    plain = enrichment()  # without declared streams (D-VerT has none): the splitter feeds all three on default
    plain["bolts"][0].update(streams=[], stream_sigma={})
    for s in plain["subscriptions"]:
        s.pop("stream", None)
    with pytest.raises(FormatError, match="bolts.join.join"):
        to_dvert(parse_topology(plain))


def test_the_linear_program_reads_a_join_below_and_its_checker_has_the_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sink below the join (τ = 0.1) serving 150 messages/s: fed the sum of the join's three branches (300/s) it
    would grow, fed the messages they complete (100/s at most) it cannot. The rows of one loop pass, with each branch
    delivering at least the messages the join completes (no cache shrinks in a lasso), prove that no lasso grows the
    sink, whether the join's cache grows or not; the checker restates the rows (a checker reading the join as an
    ordinary bolt rejects the certificate), and it refuses a certificate whose target is the join itself."""
    from app.core.results import LinearCertificate
    from app.core.tcn.check import linear as checker
    from app.core.tcn.check.content import content_hash
    from app.core.tcn.linear import build_rows, farkas

    for geo in (0.005, 0.02):
        data = enrichment(geo=geo)
        data["settings"]["tolerance"] = 0.1
        data["bolts"].append({"name": "sink", "alpha": 1 / 150, "sigma": 0, "parallelism": 1})
        data["subscriptions"].append({"source": "join", "target": "sink"})
        net = build_network(parse_topology(data), ["sink"])
        multipliers = farkas(build_rows(net, "sink"))
        assert multipliers is not None
        cert = LinearCertificate(target="sink", content_hash=content_hash(net.topology),
                                 rows={n: str(v) for n, v in multipliers.items()})
        assert checker.check_certificate(net.topology, cert) == []
        with monkeypatch.context() as m:
            m.setattr(checker, "join_branches", lambda topo, bolt: None)
            assert checker.check_certificate(net.topology, cert) != []
        own = cert.model_copy(update={"target": "join"})  # (its cases: tests/unit/test_linear_joins.py)
        assert "target join is a join, whose cache may grow" in checker.check_certificate(net.topology, own)[0]
    with pytest.raises(ValueError, match="a join's cache may grow too"):
        build_rows(build_network(parse_topology(enrichment()), ["join"]), "join")


def test_a_cache_no_rate_bounds_gets_no_headroom_and_no_suggestion() -> None:
    """host passing on one tuple in two: its branch delivers half the parts of the others, so the join's cache grows
    at any load and whatever its executors: no headroom factor and no suggested parallelism for it, said."""
    from app.core.headroom import headroom
    from app.core.storm.lines import capacity_lines

    data = enrichment(geo=0.005)
    data["bolts"][2]["sigma"] = 0.5
    topo = parse_topology(data)
    assert rate_check(topo).suggested_parallelism["join"] is None
    h = headroom(topo)
    assert h.headroom == 0 and h.limiting_bolts == ["join"]
    assert capacity_lines(h)[0].startswith("headroom: no load factor is proven bounded (the cache of join is not "
                                           "proven bounded at any rate")
    assert headroom(parse_topology(enrichment(geo=0.02))).headroom == Fraction(1, 2)  # geo's own margin: ×0.5


def test_the_storm_terms_line_says_what_eviction_does_by_hand() -> None:
    """geo at 20 ms, no max.spout.pending, maxCacheSize 10,000: the cache gains 100 − 50 = 50 messages/s, is full
    after 200 s, then evicts 50 messages/s; Metron's JoinBolt only reports an error for an evicted entry, so their
    trees time out after the 30 s default and are replayed; an entry stays 10,000 / 100 = 100 s, after which geo's
    late parts find their message evicted and nothing joins."""
    from app.core.headroom import headroom
    from app.core.storm.lines import storm_lines

    (line,) = [n for n in storm_lines(headroom(parse_topology(enrichment(geo=0.02, max_cache=10000))))
               if n.startswith("join is a join")]
    assert "after about 3.33 min unthrottled), and it then evicts about 50 messages/s, the oldest" in line
    assert "neither acks nor fails its parts, so their trees time out after topology.message.timeout.secs (30 s)" \
        in line
    assert "50 more messages/s on every branch, geo included" in line
    assert "once geo's parts come more than 100 s after the others" in line and "the join completes nothing" in line
    explanation = rate_check(parse_topology(enrichment(geo=0.02, max_cache=10000))).bolts["join"].explanation
    assert "maxCacheSize 10000 is full after about 200 s; it then evicts about 50 messages/s, whose trees time out " \
        "and are replayed: eviction is not in the model" in explanation

"""Asynchronous bolts (docs/model.md section 8): `execute` only enqueues, T threads per executor each work α on
one tuple, so C_TAKE = executors × threads and the capacity is executors × threads / α.

Every layer is compared with an independent simulation written here (threads taking tuples from one FIFO queue,
event by event, no code of the product), and the checkers' new rule (`take_bound`) is mutated to show they
depend on it."""

from __future__ import annotations

import heapq
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from app.core.formats.dvert import to_dvert
from app.core.headroom import headroom
from app.core.rates import rate_check
from app.core.storm.flux.builder import import_flux
from app.core.storm.flux.export import to_flux_bytes as export_flux_bytes
from app.core.storm.lines import capacity_lines
from app.core.tcn.check import certify_rules
from app.core.tcn.check import linear as check_linear
from app.core.tcn.check.certify import certify
from app.core.tcn.check.linear import check_certificate
from app.core.tcn.network import build_network
from app.core.tcn.search import SearchOptions, verify
from app.core.tcn.simulate import build_lasso
from app.core.topology import SCHEMA_VERSION, TopologyError, parse_topology
from tests.unit.test_linear import certificate_for

FLUX = Path(__file__).resolve().parents[1] / "data" / "flux"


def fetcher(rate: float, threads: int | None = 3, parallelism: int = 1, alpha: float = 0.5) -> dict[str, Any]:
    """S -> F (asynchronous: `threads` per executor, one fetch α) -> P (fast, ordinary)."""
    bolt: dict[str, Any] = {"name": "F", "alpha": alpha, "sigma": 1, "parallelism": parallelism}
    if threads is not None:
        bolt["threads"] = threads
    return {"schema_version": 3, "name": "fetch", "spouts": [{"name": "S", "rate": rate, "burst": 1}],
            "bolts": [bolt, {"name": "P", "alpha": 0.01, "sigma": 0, "parallelism": 1}],
            "subscriptions": [{"source": "S", "target": "F"}, {"source": "F", "target": "P"}],
            "settings": {"tolerance": 0, "max_idle_time": 0}, "verification": {"checked": ["F"]}}


def threads_queue(rate: Fraction, servers: int, alpha: Fraction, horizon: Fraction) -> tuple[int, int]:
    """An independent event simulation of an asynchronous bolt: tuples arrive every 1/rate s into one FIFO queue,
    `servers` threads each take the oldest waiting tuple the moment they are free and work `alpha` s on it.
    (the largest queue seen, the queue at `horizon`): tuples arrived and not yet started."""
    free = [Fraction(0)] * servers  # when each thread is next free
    heapq.heapify(free)
    started = 0
    largest = 0
    n = 0
    while True:
        t = n / rate
        if t > horizon:
            break
        n += 1  # tuple n arrives at t; start every tuple a thread is free for by then
        while started < n and free[0] <= t:
            at = heapq.heappop(free)
            arrival = started / rate
            heapq.heappush(free, max(at, arrival) + alpha)
            started += 1
        largest = max(largest, n - started)
    return largest, n - started


@pytest.mark.parametrize(("rate", "threads", "parallelism", "status"),
                         [(5, 3, 1, "bounded"), (8, 3, 1, "grows"), (11, 3, 2, "bounded"), (13, 3, 2, "grows")])
def test_the_rate_check_reads_the_threads_as_the_independent_simulation_does(rate: int, threads: int,
                                                                                parallelism: int, status: str) -> None:
    topo = parse_topology(fetcher(rate, threads, parallelism))
    assert topo.bolt_by_name("F").take_max == threads * parallelism
    assert rate_check(topo).bolts["F"].status == status
    horizon = Fraction(200)
    largest, last = threads_queue(Fraction(rate), threads * parallelism, Fraction(1, 2), horizon)
    capacity = Fraction(threads * parallelism) / Fraction(1, 2)
    if status == "bounded":
        assert largest <= threads * parallelism  # the queue never builds up
    else:  # it grows at the rate check's inflow − capacity per second
        assert abs(last - (rate - capacity) * horizon) <= threads * parallelism + 1
    # read as an ordinary bolt (the old single-queue reading, execute latency aside) it would grow at every rate
    ordinary = parse_topology(fetcher(rate, None, parallelism))
    assert rate_check(ordinary).bolts["F"].status == "grows"


def test_a_growing_fetcher_has_a_certified_lasso_with_batches_of_all_its_threads() -> None:
    net = build_network(parse_topology(fetcher(8)), ["F"])
    assert [b.take_max for b in net.bolts if b.name == "F"] == [3]
    trace = build_lasso(net, "F").trace
    assert trace is not None
    cert = certify(trace)
    assert cert.ok, cert.problems
    loop = trace.positions[trace.loop_start:trace.k + 1]
    batches = {p.bolts["F"].batch for p in loop if p.bolts["F"].take}
    assert batches == {3}  # in the loop every thread takes one tuple: a growing queue's batches are full
    # its growth per second is the independent simulation's: 8 arrive, 3 / 0.5 = 6 are fetched each second
    assert cert.loop_duration is not None
    assert Fraction(cert.growth_per_loop["F"]) / cert.loop_duration == 2
    _, last = threads_queue(Fraction(8), 3, Fraction(1, 2), Fraction(100))
    assert abs(last - 2 * 100) <= 4


def test_the_certifier_knows_the_threads_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    trace = build_lasso(build_network(parse_topology(fetcher(8)), ["F"]), "F").trace
    assert trace is not None and certify(trace).ok
    # the old single-queue reading of the same trace: one tuple per batch is all an executor takes
    single = json.loads(trace.model_dump_json())
    single["topology"]["bolts"][0].pop("threads")
    assert not certify(single).ok
    # a trace whose fetcher takes fewer tuples than its threads could is refused too
    fewer = json.loads(trace.model_dump_json())
    position = next(p for p in fewer["positions"] if p["bolts"]["F"]["take"])
    position["bolts"]["F"]["batch"] = 2
    problems = certify(fewer).problems
    assert any("takes 2 tuples" in p for p in problems), problems
    # mutation: a certifier that forgot the threads (C_TAKE = executors) rejects the genuine lasso
    monkeypatch.setattr(certify_rules, "take_bound", lambda bolt: bolt.parallelism)
    assert not certify(trace).ok


def test_verify_finds_the_growth_and_proves_the_bound() -> None:
    grows = verify(parse_topology(fetcher(8)), SearchOptions(k_max=12))
    assert grows.bolts["F"].verdict == "counterexample" and grows.bolts["F"].certified
    bounded = verify(parse_topology(fetcher(5)), SearchOptions(k_max=12))
    assert bounded.bolts["F"].verdict == "bounded"


def test_the_linear_programs_checker_knows_the_threads_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    found = certificate_for(parse_topology(fetcher(5)), "F")  # 5/s into 3 threads of 0.5 s: no repeating run grows
    assert found is not None
    document, cert = found
    assert check_certificate(document, cert) == []
    # mutation: a checker whose rows forgot the threads cannot follow the product's certificate
    monkeypatch.setattr(check_linear, "take_bound", lambda bolt: bolt.parallelism)
    assert check_certificate(document, cert) != []


def test_the_document_refuses_what_storm_cannot_run() -> None:
    data = fetcher(5, threads=2**20, parallelism=2**12)
    with pytest.raises(TopologyError, match="parallelism × threads"):
        parse_topology(data)
    with pytest.raises(TopologyError) as err:
        parse_topology(fetcher(5, threads=0))
    assert err.value.problems[0].path.endswith("threads")


def test_stormcrawler_fetchers_import_with_their_threads_and_export_them() -> None:
    """The real Flux files (tests/data/flux/README.md): StormCrawler's archetype sets fetcher.threads.number 50,
    news-crawl 80; each FetcherBolt is asynchronous with that many threads per executor."""
    for path, threads in (("stormcrawler/crawler.flux", 50), ("news-crawl/crawler.flux", 80)):
        result = import_flux(FLUX / path)
        bolt = result.topology.bolt_by_name("fetcher")
        assert bolt.threads == threads and bolt.take_max == threads * bolt.parallelism
        assert any(n.startswith("bolts.fetcher: FetcherBolt is asynchronous") and f"{threads} threads" in n
                   for n in result.notes)
        assert all(b.threads is None for b in result.topology.bolts if b.name != "fetcher")
        exported = export_flux_bytes(result.topology).decode()
        assert f"stormbound.threads: {threads}" in exported
    # an engineer's check by hand: 50 threads of 2 s fetches serve 25 URLs/s; fed 20/s the fetcher is bounded
    data = annotated_crawler(20)
    assert rate_check(parse_topology(data)).bolts["fetcher"].status == "bounded"
    assert rate_check(parse_topology(annotated_crawler(30))).bolts["fetcher"].status == "grows"


def annotated_crawler(rate: float) -> dict[str, Any]:
    """StormCrawler's archetype crawler (50 fetcher threads), fed `rate` URLs/s, fetches of 2 s, every other bolt
    1 ms, the status updates and the sinks emitting nothing further."""
    topo = import_flux(FLUX / "stormcrawler/crawler.flux").topology
    data = topo.model_dump(mode="json")
    for b in data["bolts"]:
        b.update(alpha=2 if b["name"] == "fetcher" else 0.001, unannotated=[])
        b["stream_sigma"] = {s: 1 for s in b.get("streams", [])}
        if b["name"] in ("status", "deleter", "index", "status_metrics"):
            b["sigma"], b["stream_sigma"] = 0, {s: 0 for s in b.get("streams", [])}
    for s in data["spouts"]:
        s.update(rate=rate if s["name"] == "spout" else 0.01, unannotated=[])
        s["stream_ratio"] = {k: 1 for k in s.get("streams", [])}
    return data


def test_storm_terms_say_where_an_asynchronous_bolt_grows() -> None:
    """A growing fetcher's receive queues never fill (execute enqueues all it receives): its internal queues grow,
    backpressure never starts, and its tuples time out in the internal queues."""
    data = annotated_crawler(30)
    text = "\n".join(capacity_lines(headroom(parse_topology(data))))
    assert "fetcher is asynchronous (1 executor × 50 threads)" in text
    assert "its internal queues gain 5 tuples/s" in text and "fetcher's receive queues" not in text
    # the archetype's max.spout.pending 100 on 10 spout tasks: 1000 URLs in flight, 40 s each at 25/s
    assert "max.spout.pending lets at most 1000 tuples ever reach it, a wait of 40 s" in text, text
    # without it, and with a 30 s timeout: after 30 s × 25 / 5 = 150 s a URL waits longer than the timeout
    data["storm"].update(max_spout_pending=None, message_timeout_secs=30)
    text = "\n".join(capacity_lines(headroom(parse_topology(data))))
    assert "after about 2.5 min a tuple waits in them longer than the message timeout (30 s)" in text, text
    assert "no receive queue fills (asynchronous bolts enqueue all they receive), so backpressure never starts" in text


def test_d_vert_json_cannot_hold_an_asynchronous_bolt() -> None:
    from app.core.formats import FormatError

    with pytest.raises(FormatError) as err:
        to_dvert(parse_topology(fetcher(5)))
    assert "bolts.F.threads" in str(err.value)


def test_the_explanation_gives_the_threads_and_names_a_fetcher_modelled_as_ordinary() -> None:
    report = rate_check(parse_topology(annotated_crawler(30)))
    assert report.bolts["fetcher"].explanation.endswith(
        "its queue grows by about 5 tuples/s; it is asynchronous: 1 executor × 50 threads, each 2 s per tuple, "
        "50 tuples in work at once")
    # the same crawler as an earlier version wrote it: its FetcherBolt an ordinary bolt, and said to be one
    old = parse_topology(json.loads((FLUX.parent / "old-documents" / "b5be14b-crawler-annotated.storm.json")
                                    .read_text()))
    assert old.bolt_by_name("fetcher").threads is None
    assert ("its class FetcherBolt is asynchronous in Storm (execute only enqueues, fetcher.threads.number threads "
            "fetch), but this document models it as an ordinary bolt: give it its threads"
            in rate_check(old).bolts["fetcher"].explanation)


def test_annotate_gives_an_earlier_versions_bolt_threads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`stormbound annotate FILE fetcher threads=50` on a version 2 document: saved as the current version."""
    from app.cli import main

    path = tmp_path / "crawler.storm.json"
    path.write_bytes((FLUX.parent / "old-documents" / "b5be14b-crawler-annotated.storm.json").read_bytes())
    assert main(["annotate", str(path), "fetcher", "threads=50"]) == 0
    assert "bolts.fetcher.threads: unset -> 50" in capsys.readouterr().out
    data = json.loads(path.read_text())
    assert data["schema_version"] == SCHEMA_VERSION and parse_topology(data).bolt_by_name("fetcher").take_max == 50
    assert main(["annotate", str(path), "fetcher", "threads=0"]) == 2
    assert "bolts.fetcher.threads: input should be greater than or equal to 1" in capsys.readouterr().err


FETCH_FLUX = """
name: "fetch"
config:
  fetcher.threads.number: {threads}
spouts:
  - id: "urls"
    className: "org.example.UrlSpout"
bolts:
  - id: "fetcher"
    className: "org.apache.stormcrawler.bolt.FetcherBolt"
    parallelism: 2
    numTasks: {tasks}
  - id: "parser"
    className: "org.example.Parser"
    config:
      stormbound.threads: 4
streams:
  - {{from: "urls", to: "fetcher", grouping: {{type: SHUFFLE}}}}
  - {{from: "fetcher", to: "parser", grouping: {{type: SHUFFLE}}}}
"""


@pytest.mark.parametrize(("tasks", "threads", "note"), [(2, 20, "20 threads per executor (fetcher.threads.number 20)"),
                                                         (4, 40, "4 tasks on 2 executors"),
                                                         (5, 40, "a lower capacity than Storm's")])
def test_each_task_runs_its_own_threads(tmp_path: Path, tasks: int, threads: int, note: str) -> None:
    """StormCrawler starts fetcher.threads.number threads in every task (each its own bolt object): an executor
    running two tasks has twice the threads; unequal task counts give every executor the fewest's."""
    path = tmp_path / "fetch.yaml"
    path.write_text(FETCH_FLUX.format(threads=20, tasks=tasks))
    result = import_flux(path)
    assert result.topology.bolt_by_name("fetcher").threads == threads
    assert any(note in n for n in result.notes), result.notes
    # any bolt becomes asynchronous with stormbound.threads (what the export writes)
    assert result.topology.bolt_by_name("parser").threads == 4


@pytest.mark.parametrize("value", ["ten", 0, 2.5])
def test_a_threads_number_that_is_not_one_is_refused_naming_it(tmp_path: Path, value: object) -> None:
    from app.core.storm.flux.yaml_text import FluxError

    path = tmp_path / "fetch.yaml"
    path.write_text(FETCH_FLUX.format(threads=json.dumps(value), tasks=2))
    with pytest.raises(FluxError, match="config.fetcher.threads.number: must be a whole number of threads"):
        import_flux(path)


def test_the_schema_shows_the_threads() -> None:
    from app.core.formats.schema import topology_schema

    schema = json.dumps(topology_schema(), ensure_ascii=False)
    assert "fetcher.threads.number" in schema and "parallelism × threads" in schema


def test_the_solver_alone_finds_the_fetchers_growth_and_the_certifier_accepts_it() -> None:
    """The z3 encoding (no simulation): its lasso takes batches of all three threads and is certified."""
    result = verify(parse_topology(fetcher(8)), SearchOptions(k_max=10, simulate=False, timeout_s=120))
    bolt = result.bolts["F"]
    assert bolt.verdict == "counterexample" and bolt.certified and bolt.method != "rate proof", bolt
    trace = result.traces[0]
    assert certify(trace).ok
    loop = trace.positions[trace.loop_start:trace.k + 1]
    assert {p.bolts["F"].batch for p in loop if p.bolts["F"].take} == {3}


def test_a_failing_fetcher_loses_what_its_threads_hold_and_its_lasso_is_certified() -> None:
    """Section 7 with section 8: a failure of the asynchronous bolt loses its queue and the tuples its threads hold
    (up to executors × threads), replayed by the spout: the figures of an ordinary bolt with executors × threads
    executors; and a lasso with failures obeys every rule."""
    def failing(data: dict[str, Any]) -> dict[str, Any]:
        data["bolts"][0]["min_ttf"] = 20
        data["settings"].update(min_reboot_time=1, max_reboot_time=2)
        return data

    fetch = rate_check(parse_topology(failing(fetcher(2)))).bolts["F"]
    wide = rate_check(parse_topology(failing(fetcher(2, threads=None, parallelism=3)))).bolts["F"]
    assert fetch.status == wide.status == "bounded"
    assert (fetch.lost_per_failure, fetch.queue_bound, fetch.inflow_failures) == \
        (wide.lost_per_failure, wide.queue_bound, wide.inflow_failures) == (15, 5, pytest.approx(2 + 15 / 21))
    lasso = build_lasso(build_network(parse_topology(failing(fetcher(8))), ["F"]), "F")
    assert lasso.trace is not None and certify(lasso.trace).ok


def test_measured_runs_read_an_asynchronous_bolts_process_latency() -> None:
    """A Storm run's figures (record, watch, analyze, the GUI's live mode) give an asynchronous bolt the process
    latency as its α, never the execute latency of its enqueue; without one it keeps the document's."""
    from app.measure.analysis_model import ComponentStats
    from app.measure.storm_figures import BoltFigures, measured_topology

    topo = parse_topology(fetcher(5))
    figures = {"F": BoltFigures(name="F", alpha_s=0.0002, process_s=0.4),
               "P": BoltFigures(name="P", alpha_s=0.02, process_s=0.5)}
    measured = measured_topology(topo, {}, figures)
    assert measured.bolt_by_name("F").alpha == 0.4 and measured.bolt_by_name("P").alpha == 0.02
    kept = measured_topology(topo, {}, {"F": BoltFigures(name="F", alpha_s=0.0002)})
    assert kept.bolt_by_name("F").alpha == 0.5
    storm = ComponentStats(name="F", kind="bolt", alpha_mean=0.0002, alpha_is_execute=True, alpha_process=0.4)
    assert storm.alpha_for(3) == 0.4 and storm.alpha_for(None) == 0.0002
    spark = ComponentStats(name="F", kind="bolt", alpha_mean=0.5)  # a Spark run's batches are the model's
    assert spark.alpha_for(3) == 0.5


def test_a_spark_run_gives_an_asynchronous_bolt_batches_of_all_its_threads() -> None:
    """The Spark runs follow the model (docs/spark-runs.md): the plan's batch of an asynchronous bolt is C_TAKE."""
    from app.spark.run_job import RunSpec, plan_of

    plan = plan_of(RunSpec(topology=parse_topology(fetcher(5, threads=3, parallelism=2)), duration_s=1), 1)
    bolts = {c["name"]: c for c in plan["components"] if c["kind"] == "bolt"}
    assert bolts["F"]["parallelism"] == 6 and bolts["P"]["parallelism"] == 1


def test_growth_by_rates_is_checked_with_the_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """The growth-by-rates certificate of a fetcher fed above its threads' capacity (8 > 3 / 0.5 = 6) is accepted;
    a checker that forgot the threads (capacity 2) disagrees with its figures and rejects it."""
    from app.core.tcn.check import rate_growth as check_rate_growth
    from app.core.tcn.check.rate_growth import check_growth_certificate
    from app.core.tcn.rate_growth import prove_growth

    cone = build_network(parse_topology(fetcher(8)), ["F"]).document()
    cert = prove_growth(parse_topology(cone), "F")
    assert cert is not None and Fraction(cert.bolts["F"].capacity) == 6
    assert check_growth_certificate(cone, cert) == []
    monkeypatch.setattr(check_rate_growth, "take_bound", lambda bolt: bolt.parallelism)
    assert check_growth_certificate(cone, cert) != []


@pytest.mark.parametrize(("given", "said"), [
    ("stormbound.threads: 2.5", "bolts.parser.config.stormbound.threads: must be a whole number of threads, not 2.5"),
    ("stormbound.threads: 0", "bolts.parser.threads: input should be greater than or equal to 1")])
def test_an_annotated_thread_count_must_be_whole(tmp_path: Path, given: str, said: str) -> None:
    from app.core.storm.flux.yaml_text import FluxError

    path = tmp_path / "fetch.yaml"
    path.write_text(FETCH_FLUX.format(threads=20, tasks=2).replace("stormbound.threads: 4", given))
    with pytest.raises(FluxError) as err:
        import_flux(path)
    assert said in str(err.value)
    huge = tmp_path / "huge.yaml"
    huge.write_text(FETCH_FLUX.format(threads=10**12, tasks=2))
    with pytest.raises(FluxError, match="bolts.fetcher.threads: input should be less than or equal to 2147483647"):
        import_flux(huge)


def test_the_suggested_executors_count_each_executors_threads() -> None:
    """At a capacity target the executors suggested for an asynchronous bolt count its threads: 2 tuples/s of
    1 s each need 2 / 0.7 → 3 threads, one executor of 8 (an ordinary bolt would need 3 executors)."""
    from app.core.rates.suggest import at_target

    doc = json.loads((Path(__file__).resolve().parents[2] / "models" / "getting-started.storm.json").read_text())
    doc["schema_version"] = 3
    split = next(b for b in doc["bolts"] if b["name"] == "split")
    assert (split["alpha"], split["parallelism"]) == (1.0, 4)
    plain = parse_topology(doc)
    split["threads"] = 8
    threaded = parse_topology(doc)
    least = {"split": 1, "count": 1}
    assert at_target(plain, least, 0.7)["split"] == 3
    assert at_target(threaded, least, 0.7)["split"] == 1
    assert at_target(threaded, least, 0.7)["count"] == at_target(plain, least, 0.7)["count"] == 6

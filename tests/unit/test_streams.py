"""Declared output streams: one count of what a bolt receives everywhere, a σ and a carry per stream
(docs/model.md sections 1 and 2), and bad stream input as one line naming the field."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.core.formats.trace import load_trace
from app.core.rates import rate_check
from app.core.tcn.check.certify import certify
from app.core.tcn.network import build_network
from app.core.tcn.search import SearchOptions, verify
from app.core.topology import Topology, parse_topology


def crawler(idle: float = 0) -> dict[str, Any]:
    """StormCrawler's shape in small: fetch and parse send a `status` stream (a fraction of their tuples)
    to one updater, parse has a `tika` side stream, the spout a `deletion` stream."""
    return {
        "schema_version": 2, "name": "crawler",
        "spouts": [{"name": "urls", "rate": 4, "burst": 1, "streams": ["deletion"],
                    "stream_ratio": {"deletion": 0.25}}],
        "bolts": [
            {"name": "fetch", "alpha": 0.1, "sigma": 1, "parallelism": 1, "streams": ["status"],
             "stream_sigma": {"status": 0.5}},
            {"name": "parse", "alpha": 0.1, "sigma": 1, "parallelism": 1, "streams": ["status", "tika"],
             "stream_sigma": {"status": 0.25, "tika": 0.5}},
            {"name": "tika", "alpha": 0.2, "sigma": 0, "parallelism": 1},
            {"name": "index", "alpha": 0.1, "sigma": 0, "parallelism": 1},
            {"name": "status", "alpha": 0.5, "sigma": 0, "parallelism": 1},
            {"name": "deleter", "alpha": 0.1, "sigma": 0, "parallelism": 1},
        ],
        "subscriptions": [
            {"source": "urls", "target": "fetch"},
            {"source": "fetch", "target": "parse"},
            {"source": "parse", "target": "index"},
            {"source": "parse", "target": "tika", "stream": "tika"},
            {"source": "fetch", "target": "status", "stream": "status"},
            {"source": "parse", "target": "status", "stream": "status"},
            {"source": "urls", "target": "deleter", "stream": "deletion"},
        ],
        "settings": {"tolerance": 0.1, "max_idle_time": idle},
    }


def test_one_function_says_what_a_bolt_receives_and_both_the_rate_check_and_the_network_use_it(
        monkeypatch) -> None:
    topo = parse_topology(crawler())
    calls: list[list[str]] = []
    original = Topology.inputs

    def spy(self: Topology) -> dict[str, list[tuple[str, str]]]:
        found = original(self)
        calls.append([self.name_of(ident) for ident in found])
        return found

    monkeypatch.setattr(Topology, "inputs", spy)
    rate_check(topo)
    assert any("status" in bolts for bolts in calls)
    calls.clear()
    net = build_network(topo, ["status"])
    assert any("status" in bolts for bolts in calls)
    assert dict(zip([b.name for b in net.bolts], [b.sources for b in net.bolts], strict=True))["status"] == (
        ("fetch", "status"), ("parse", "status"))


def test_a_repeated_subscription_counts_once_and_two_streams_of_one_source_count_both() -> None:
    doc = crawler()
    # the default stream twice (unnamed and by name) and the status stream: parse -> index receives
    # parse's default stream once, plus its status stream
    doc["subscriptions"] += [{"source": "parse", "target": "index", "stream": "default"},
                             {"source": "parse", "target": "index", "stream": "status"}]
    topo = parse_topology(doc)
    index = topo.bolt_by_name("index")
    assert sorted(stream for _, stream in topo.inputs_of(index.id)) == ["default", "status"]
    report = rate_check(topo)
    parse_out = min(report.bolts["parse"].inflow_max, report.bolts["parse"].capacity_max)
    assert report.bolts["index"].inflow_max == pytest.approx(parse_out * 1.25)


def test_changing_one_streams_sigma_changes_only_its_subscribers_inflow() -> None:
    before = rate_check(parse_topology(crawler())).bolts
    doc = crawler()
    doc["bolts"][1]["stream_sigma"]["tika"] = 1.5
    after = rate_check(parse_topology(doc)).bolts
    changed = {n for n in before if before[n].inflow_max != after[n].inflow_max}
    assert changed == {"tika"}
    assert after["tika"].inflow_max == pytest.approx(3 * before["tika"].inflow_max)


@pytest.mark.parametrize("emission", ["exact", "dvert"])
def test_a_stream_lasso_is_certified_and_records_every_stream(emission: str) -> None:
    doc = crawler()
    doc["settings"]["emission"] = emission
    doc["bolts"][4]["alpha"] = 2  # the updater is too slow for the status streams
    topo = parse_topology(doc)
    assert rate_check(topo).bolts["status"].status == "grows"
    for options in (SearchOptions(),):
        result = verify(topo.model_copy(update={"verification": topo.verification.model_copy(
            update={"checked": [topo.bolt_by_name("status").id]})}), options)
        assert result.verdict == "counterexample" and result.certified, result.message
        trace = result.traces[0]
        assert certify(trace).ok
        step = trace.positions[1].bolts["parse"]
        assert step.emitted_by_stream is not None and set(step.emitted_by_stream) == {"default", "status", "tika"}
        assert trace.positions[0].spouts["urls"].emitted_by_stream is not None
        # the updater receives exactly what fetch and parse put on their status streams
        for p in trace.positions:
            sent = sum(p.bolts[n].emitted_by_stream["status"] for n in ("fetch", "parse")  # type: ignore[index]
                       if n in p.bolts)
            assert p.bolts["status"].arrivals == sent


@pytest.mark.parametrize("emission", ["exact", "dvert"])
def test_the_solver_finds_a_certified_lasso_through_two_streams_of_one_source(emission: str) -> None:
    """S (1/s) -> A, whose default and `err` streams (σ 1 each) both go to U: U receives 2 tuples per
    tuple of S and processes about 1.25 per second; counted once it would keep up."""
    topo = parse_topology({
        "spouts": [{"name": "S", "rate": 1, "burst": 1}],
        "bolts": [{"name": "A", "alpha": 0.1, "sigma": 1, "parallelism": 1, "streams": ["err"],
                   "stream_sigma": {"err": 1}},
                  {"name": "U", "alpha": 0.8, "sigma": 0, "parallelism": 1}],
        "subscriptions": [{"source": "S", "target": "A"}, {"source": "A", "target": "U"},
                          {"source": "A", "target": "U", "stream": "err"}],
        "settings": {"tolerance": 0.1, "max_idle_time": 0, "emission": emission},
        "verification": {"checked": ["U"]}})
    assert rate_check(topo).bolts["U"].status == "grows"
    result = verify(topo, SearchOptions(simulate=False, k_max=16))
    assert result.verdict == "counterexample" and result.bolts["U"].method == "solver", result.message
    trace = result.traces[0]
    assert certify(trace).ok
    assert trace.positions[-1].bolts["A"].emitted_by_stream is not None
    for p in trace.positions:
        assert p.bolts["U"].arrivals == p.bolts["A"].emitted  # both streams, each once
    # the trace view plots each input stream apart: together they are the bolt's arrivals
    from app.core.trace_series import trace_series

    series = next(b for b in trace_series(trace).bolts if b.bolt == "U")
    assert [a.label for a in series.arrivals] == ["from A", "from A (err)"]
    assert sum(sum(a.counts) for a in series.arrivals) == sum(p.bolts["U"].arrivals for p in trace.positions)


def test_a_trace_that_counts_a_stream_twice_is_rejected() -> None:
    doc = crawler()
    doc["bolts"][4]["alpha"] = 2
    doc["subscriptions"].append({"source": "parse", "target": "status", "stream": "status"})
    doc["subscriptions"][-1]["grouping"] = "fields"
    doc["subscriptions"][-1]["fields"] = ["url"]
    doc["verification"] = {"checked": ["status"]}
    with pytest.raises(ValueError, match="duplicate subscription"):
        parse_topology(doc)
    doc["subscriptions"][-1] = {"source": "parse", "target": "status", "stream": "status"}
    doc["subscriptions"][5]["stream"] = None  # parse's default stream, once
    topo = parse_topology(doc)
    result = verify(topo)
    assert result.verdict == "counterexample"
    data = json.loads(result.traces[0].model_dump_json())
    damaged = copy.deepcopy(data)
    for p in damaged["positions"]:  # arrivals counted as if the status stream came twice
        p["bolts"]["status"]["arrivals"] += p["bolts"]["parse"]["emitted_by_stream"]["status"]
    assert not certify(damaged).ok


def test_sigma_zero_streams_feed_nothing_and_the_bolt_they_feed_never_has_to_take() -> None:
    doc = crawler()
    doc["bolts"][1]["stream_sigma"]["tika"] = 0
    doc["bolts"][4]["alpha"] = 2
    topo = parse_topology(doc)
    report = rate_check(topo)
    assert report.bolts["tika"].inflow_max == 0 and report.bolts["tika"].status == "bounded"
    result = verify(topo, SearchOptions(force_search=True, k_max=8))
    assert result.bolts["status"].verdict == "counterexample"
    trace = result.traces[result.bolts["status"].trace_index or 0]
    if "tika" in trace.positions[0].bolts:
        assert not any(p.bolts["tika"].take for p in trace.positions)
    assert certify(trace).ok


@pytest.mark.parametrize("change,field", [
    (lambda d: d["bolts"][0]["stream_sigma"].update(status=-0.5), "bolts.fetch.stream_sigma.status"),
    (lambda d: d["bolts"][0]["stream_sigma"].update(status="nan"), "stream_sigma.status"),
    (lambda d: d["bolts"][0]["stream_sigma"].update(errors=0.5), "bolts.fetch.stream_sigma.errors"),
    (lambda d: d["spouts"][0]["stream_ratio"].update(other=1), "spouts.urls.stream_ratio.other"),
    (lambda d: d["subscriptions"][0].update(stream="nope"), "subscriptions.urls->fetch.stream"),
    (lambda d: d["bolts"][0]["stream_sigma"].clear(), "bolts.fetch.stream_sigma.status"),
])
def test_bad_stream_input_is_one_line_naming_the_field(tmp_path: Path, capsys, change: Any, field: str) -> None:
    doc = crawler()
    change(doc)
    path = tmp_path / "bad.storm.json"
    path.write_text(json.dumps(doc).replace('"nan"', "NaN"))
    for command in ("check", "verify"):
        code = main([command, str(path)])
        out, err = capsys.readouterr()
        assert code == 2 and out == "", err
        assert len(err.strip().splitlines()) == 1 and field in err and "Traceback" not in err


def test_documents_without_streams_save_as_before_and_streams_round_trip(tmp_path: Path) -> None:
    plain = parse_topology({"spouts": [{"name": "S", "rate": 1}],
                            "bolts": [{"name": "B", "alpha": 1, "sigma": 1, "parallelism": 1}],
                            "subscriptions": [{"source": "S", "target": "B"}]})
    text = plain.to_json_bytes().decode()
    assert "stream" not in text
    topo = parse_topology(crawler())
    again = parse_topology(json.loads(topo.to_json_bytes()))
    assert again.semantics() == topo.semantics()
    assert again.bolt_by_name("parse").stream_sigma == {"status": 0.25, "tika": 0.5}


def test_trace_files_keep_the_stream_fields(tmp_path: Path) -> None:
    doc = crawler()
    doc["bolts"][4]["alpha"] = 2
    doc["verification"] = {"checked": ["status"]}
    path = tmp_path / "c.storm.json"
    path.write_text(json.dumps(doc))
    out = tmp_path / "lasso.json"
    assert main(["verify", str(path), "--trace-out", str(out), "-q"]) == 1
    trace = load_trace(out)
    assert certify(trace).ok and trace.positions[0].bolts["fetch"].buffer_by_stream is not None


# ---- imports: Storm UI (per-stream outputStats) and Flux (streamId) -------------------------------


def ui_snapshot(capacity_of_updater: float) -> Any:
    """A healthy crawler on a cluster over 600 s: sub-millisecond latencies, capacities below 0.5;
    the updater's load (executed × latency / window) is `capacity_of_updater`."""
    from app.core.storm.ui.replies import StormUISnapshot

    window = 600.0
    fetched = 600_000  # 1000 tuples/s

    def out(**streams: float) -> list[dict[str, Any]]:
        return [{"stream": "__metrics", "emitted": 5}] + [{"stream": s, "emitted": n} for s, n in streams.items()]

    def bolt(inputs: list[tuple[str, str, float]], latency_ms: float, outputs: list[dict[str, Any]]) -> dict:
        return {"componentType": "bolt", "executors": 1, "outputStats": outputs,
                "inputStats": [{"component": c, "stream": s, "executed": n, "executeLatency": f"{latency_ms:.3f}"}
                               for c, s, n in inputs]}

    status_in = 0.2 * fetched + 0.1 * fetched
    updater_latency = capacity_of_updater * window * 1000 / status_in
    components = {
        "urls": {"componentType": "spout", "executors": 1, "outputStats": out(default=fetched)},
        "fetch": bolt([("urls", "default", fetched)], 0.2, out(default=fetched, status=0.2 * fetched)),
        "parse": bolt([("fetch", "default", fetched)], 0.1, out(default=fetched, status=0.1 * fetched)),
        "index": bolt([("parse", "default", fetched)], 0.05, out()),
        "status": bolt([("fetch", "status", 0.2 * fetched), ("parse", "status", 0.1 * fetched)], updater_latency,
                       out()),
    }
    page = {"name": "crawler", "id": "crawler-1", "uptimeSeconds": 3600,
            "spouts": [{"spoutId": "urls", "executors": 1}],
            "bolts": [{"boltId": name, "executors": 1} for name in ("fetch", "parse", "index", "status")]}
    return StormUISnapshot(url="http://ui", topology_id="crawler-1", window=str(int(window)), topology=page,
                           components=components)


def test_a_healthy_storm_ui_import_is_bounded_and_an_overloaded_bolt_a_certified_counterexample() -> None:
    from app.core.storm.ui.reader import from_storm_ui

    healthy = from_storm_ui(ui_snapshot(0.42)).topology
    assert healthy.settings.max_idle_time == 0
    assert healthy.bolt_by_name("fetch").stream_sigma == {"status": 0.2}
    assert healthy.bolt_by_name("fetch").sigma == 1
    result = verify(healthy)
    assert result.verdict == "bounded", result.message
    overloaded = from_storm_ui(ui_snapshot(1.3)).topology
    result = verify(overloaded)
    assert result.verdict == "counterexample" and result.growing == ["status"], result.message
    assert result.bolts["status"].certified and certify(result.traces[0]).ok
    assert {n for n, v in result.bolts.items() if v.verdict == "bounded"} == {"fetch", "parse", "index"}


def test_crawler_flux_imports_with_per_stream_sigma_and_verifies(tmp_path: Path, capsys) -> None:
    from app.core.storm.flux.builder import import_flux
    from app.core.storm.flux.export import to_flux_bytes

    source = Path(__file__).resolve().parents[1] / "data" / "crawler-streams.flux.yaml"
    topo = import_flux(source).topology
    assert topo.settings.max_idle_time == 0
    assert topo.bolt_by_name("shunt").streams == ["tika"] and topo.bolt_by_name("shunt").stream_sigma == {"tika": 0.1}
    assert topo.bolt_by_name("status").streams == ["deletion"]
    updater = topo.bolt_by_name("status")
    assert sorted(topo.name_of(u) for u, s in topo.inputs_of(updater.id) if s == "status") == [
        "fetcher", "index", "parse", "sitemap", "tika"]
    assert verify(topo).verdict == "bounded"
    again = import_flux(_written(tmp_path, to_flux_bytes(topo))).topology
    assert again.semantics() == topo.semantics()
    # one stream's σ changes only what its subscribers receive
    before = rate_check(topo).bolts
    shunt = topo.bolt_by_name("shunt")
    bolts = [b.model_copy(update={"stream_sigma": {"tika": 0.5}}) if b.id == shunt.id else b for b in topo.bolts]
    after = rate_check(topo.model_copy(update={"bolts": bolts})).bolts
    assert {n for n in before if before[n].inflow_max != after[n].inflow_max} == {"tika", "index", "status",
                                                                                   "deleter"}
    assert before["tika"].inflow_max * 5 == pytest.approx(after["tika"].inflow_max)


def _written(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "again.flux.yaml"
    path.write_bytes(data)
    return path


def test_d_vert_export_refuses_declared_streams_in_one_line(tmp_path: Path, capsys) -> None:
    source = tmp_path / "crawler.storm.json"
    source.write_text(json.dumps(crawler()))
    target = tmp_path / "crawler.dvert.json"
    code = main(["convert", str(source), str(target), "--to", "dvert"])
    _, err = capsys.readouterr()
    assert code == 2 and not target.exists()
    assert len(err.strip().splitlines()) == 1 and "spouts.urls.streams" in err

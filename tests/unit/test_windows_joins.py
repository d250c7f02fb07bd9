"""Windows and joins (docs/model.md section 10) are recognised by the Flux import and never read silently as ordinary
bolts: a window on arrival time becomes the bolt's `window` (Storm's JoinBolt over it is that window's rule),
anything else is kept as the import found it (`unmodelled`), and the import, every command reading the document and
the rate check's explanation say what the model does not have."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from app.core.rates import rate_check
from app.core.storm.flux.builder import import_flux
from app.core.topology import TopologyError, parse_topology

EXAMPLES = Path(__file__).resolve().parents[1] / "data" / "flux" / "storm-examples"
JOIN_FLUX = """
name: "joins"
components:
  - id: "tumbling"
    className: "org.apache.storm.topology.base.BaseWindowedBolt$Duration"
    constructorArgs: [10, "SECONDS"]
spouts:
  - id: "orders"
    className: "org.example.OrderSpout"
  - id: "users"
    className: "org.example.UserSpout"
bolts:
  - id: "join"
    className: "org.apache.storm.bolt.JoinBolt"
    constructorArgs: ["users", "userId"]
    configMethods:
      - name: "withTumblingWindow"
        args: [ref: "tumbling"]
  - id: "enrich"
    className: "org.apache.metron.enrichment.bolt.EnrichmentJoinBolt"
  - id: "sink"
    className: "org.example.Sink"
streams:
  - {from: "orders", to: "join", grouping: {type: SHUFFLE}}
  - {from: "users", to: "join", grouping: {type: SHUFFLE}}
  - {from: "join", to: "enrich", grouping: {type: SHUFFLE}}
  - {from: "enrich", to: "sink", grouping: {type: SHUFFLE}}
"""


def annotated(topo_data: dict) -> dict:
    for s in topo_data["spouts"]:
        s.update(rate=10, burst=1, unannotated=[])
    for b in topo_data["bolts"]:
        b.update(alpha=0.001, sigma=0.5, unannotated=[])
    return topo_data


def test_storms_sliding_window_example_imports_its_window_and_says_so(tmp_path: Path, capsys) -> None:
    result = import_flux(EXAMPLES / "simple_windowing.yaml")
    bolt = result.topology.bolt_by_name("bolt-1")
    assert bolt.window is not None and bolt.window.model_dump() == {"kind": "count", "length": 5, "slide": 3}
    assert bolt.unmodelled is None and result.topology.bolt_by_name("bolt-2").window is None
    assert any(n.startswith("bolts.bolt-1: a windowed bolt (withWindow(Count(5), Count(3))): its count window is its "
                            "window; the rate check has it") for n in result.notes)
    data = annotated(result.topology.model_dump(mode="json"))
    explanation = rate_check(parse_topology(data)).bolts["bolt-1"].explanation
    assert "it is a windowed bolt (withWindow(Count(5), Count(3))): its executor runs execute(TupleWindow) once per " \
           "3 tuples" in explanation
    assert "which the model does not have yet" not in explanation
    path = tmp_path / "win.storm.json"
    path.write_bytes(parse_topology(data).to_json_bytes())
    assert main(["check", str(path)]) == 0
    err = capsys.readouterr().err
    assert "bolts.bolt-1 has a count window (withWindow(Count(5), Count(3))): the rate check, the simulation, the " \
           "solver, growth by rates, the linear program and the certifier have its window rule, and so do the flood " \
           "proofs and the timeout witnesses of the bolts below it; the latency bounds do not" in err


COUNT4, COUNT2 = '{ref: "count4"}', '{ref: "count2"}'
SEC10, SEC2 = '{ref: "sec10"}', '{ref: "sec2"}'


@pytest.mark.parametrize(("calls", "window", "mark"), [
    ([("withTumblingWindow", [COUNT4])], {"kind": "count", "length": 4}, None),
    ([("withWindow", [COUNT4])], {"kind": "count", "length": 4, "slide": 1}, None),
    ([("withWindow", [SEC10, SEC2])], {"kind": "duration", "length": 10, "slide": 2}, None),
    ([("withWindow", [COUNT4, SEC2])], {"kind": "count", "length": 4, "slide": 2, "slide_kind": "duration"}, None),
    ([("withWindow", [SEC10, COUNT4])], {"kind": "duration", "length": 10, "slide": 4, "slide_kind": "count"}, None),
    ([("withWindow", [COUNT2, SEC10])], {"kind": "count", "length": 2, "slide": 10, "slide_kind": "duration"}, None),
    ([("withWindow", [SEC10])], {"kind": "duration", "length": 10, "slide": 1, "slide_kind": "count"}, None),
    ([("withWindow", [COUNT2, COUNT4])], None,
     "a windowed bolt (withWindow(Count(2), Count(4))): a window sliding further than its length"),
    ([("withTumblingWindow", [COUNT4]), ("withTimestampField", ['"ts"'])], None,
     "a windowed bolt (withTumblingWindow(Count(4)), withTimestampField('ts')): a window on event time")])
def test_the_windows_the_document_holds_and_those_it_marks(tmp_path: Path, calls: list[tuple[str, list[str]]],
                                                          window: dict | None, mark: str | None) -> None:
    """A window on arrival time of Count or Duration components, its interval at most its length when both are of one
    kind, is the bolt's `window`, a mixed one with its slide's kind (docs/model.md section 10.4); one sliding further
    than its length and an event-time one stay marked."""
    methods = "".join(f"      - name: \"{name}\"\n        args: [{', '.join(args)}]\n" for name, args in calls)
    flux = tmp_path / "w.yaml"
    flux.write_text(f"""name: w
components:
  - {{id: count4, className: "org.apache.storm.topology.base.BaseWindowedBolt$Count", constructorArgs: [4]}}
  - {{id: count2, className: "org.apache.storm.topology.base.BaseWindowedBolt$Count", constructorArgs: [2]}}
  - {{id: sec10, className: "org.apache.storm.topology.base.BaseWindowedBolt$Duration", constructorArgs: [10, SECONDS]}}
  - {{id: sec2, className: "org.apache.storm.topology.base.BaseWindowedBolt$Duration", constructorArgs: [2, SECONDS]}}
spouts:
  - {{id: s, className: org.example.S}}
bolts:
  - id: w
    className: org.example.W
    configMethods:
{methods}streams:
  - {{from: s, to: w, grouping: {{type: SHUFFLE}}}}
""")
    bolt = import_flux(flux).topology.bolt_by_name("w")
    assert (bolt.window.model_dump(exclude_none=True) if bolt.window else None) == window
    assert bolt.unmodelled == mark


def test_a_window_goes_back_to_flux_and_returns() -> None:
    """The skeleton export writes a window as Storm's configMethods with Count or Duration components; importing it
    gives the same window (count and duration, sliding and tumbling)."""
    from app.core.storm.flux.export import to_flux_bytes

    for window in ({"kind": "count", "length": 5, "slide": 3}, {"kind": "count", "length": 4},
                   {"kind": "duration", "length": 2.5, "slide": 0.5}, {"kind": "duration", "length": 60},
                   {"kind": "count", "length": 4, "slide": 2.5, "slide_kind": "duration"},
                   {"kind": "duration", "length": 10, "slide": 3, "slide_kind": "count"}):
        data = annotated(import_flux(EXAMPLES / "simple_windowing.yaml").topology.model_dump(mode="json"))
        data["bolts"][0 if data["bolts"][0]["name"] == "bolt-1" else 1]["window"] = window
        data["storm"].pop("flux_file", None)
        topo = parse_topology(data)
        text = to_flux_bytes(topo)
        assert b"BaseWindowedBolt$" in text
        import tempfile

        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "back.yaml"
            path.write_bytes(text)
            again = import_flux(path).topology.bolt_by_name("bolt-1").window
        assert again is not None and again.model_dump(exclude_none=True) == window


def test_an_export_of_the_original_file_is_refused_when_the_window_changed() -> None:
    """An imported document's export rewrites only parallelism in its Flux file: a changed window makes it a
    skeleton instead (why_skeleton says so), never the old window silently."""
    from app.core.storm.flux.repair import export_original, why_skeleton

    data = annotated(import_flux(EXAMPLES / "simple_windowing.yaml").topology.model_dump(mode="json"))
    assert export_original(parse_topology(data)) is not None
    bolt = next(b for b in data["bolts"] if b["name"] == "bolt-1")
    bolt["window"] = {"kind": "count", "length": 6, "slide": 3}
    topo = parse_topology(data)
    assert export_original(topo) is None and "the window of bolt-1 differs" in why_skeleton(topo)


def test_joins_are_recognised_by_class_with_their_window(tmp_path: Path) -> None:
    flux = tmp_path / "joins.yaml"
    flux.write_text(JOIN_FLUX)
    topo = import_flux(flux).topology
    join = topo.bolt_by_name("join")  # over a duration window: its window's rule, a timer (docs/model.md 10.3, 11)
    assert join.unmodelled is None and join.join is not None and join.join.kind == "window"
    assert join.window is not None and join.window.model_dump(exclude_none=True) == {"kind": "duration", "length": 10}
    event_time = tmp_path / "event-time.yaml"  # a JoinBolt over a window on event time stays marked
    event_time.write_text(JOIN_FLUX.replace('args: [ref: "tumbling"]',
                                            'args: [ref: "tumbling"]\n      - name: "withTimestampField"\n'
                                            '        args: ["ts"]'))
    marked = import_flux(event_time).topology.bolt_by_name("join")
    assert marked.join is None and marked.window is None and marked.unmodelled == \
        "a join (Storm's JoinBolt, withTumblingWindow(Duration(10, SECONDS)), withTimestampField('ts'))"
    # a Metron join of one input stream: the model has no join of one branch (docs/model.md section 11)
    assert topo.bolt_by_name("enrich").unmodelled == "a join (Metron's enrichment join) of one branch"
    assert topo.bolt_by_name("enrich").join is None and topo.bolt_by_name("sink").unmodelled is None
    report = rate_check(parse_topology(annotated(topo.model_dump(mode="json"))))
    assert "it is a join (Metron's enrichment join) of one branch, which the model does not have yet" in \
        report.bolts["enrich"].explanation


def test_an_earlier_version_may_not_name_it(tmp_path: Path) -> None:
    flux = tmp_path / "joins.yaml"
    flux.write_text(JOIN_FLUX)
    data = annotated(import_flux(flux).topology.model_dump(mode="json"))
    data["schema_version"] = 2
    with pytest.raises(TopologyError) as err:
        parse_topology(json.loads(json.dumps(data)))
    assert [p.path for p in err.value.problems] == ["bolts.join.window", "bolts.join.join", "bolts.enrich.unmodelled"]
    windows = annotated(import_flux(EXAMPLES / "simple_windowing.yaml").topology.model_dump(mode="json"))
    windows["schema_version"] = 3
    with pytest.raises(TopologyError) as err:
        parse_topology(json.loads(json.dumps(windows)))
    assert err.value.problems[0].path == "bolts.bolt-1.window"


def test_d_vert_json_cannot_carry_the_marker() -> None:
    from app.core.formats import FormatError
    from app.core.formats.dvert import to_dvert

    topo = parse_topology(annotated(import_flux(EXAMPLES / "simple_windowing.yaml").topology.model_dump(mode="json")))
    with pytest.raises(FormatError) as err:
        to_dvert(topo)
    assert "bolts.bolt-1.window" in str(err.value)


def test_metrons_enrichment_joins_import_from_its_real_flux_file() -> None:
    """Metron's split-join enrichment topology (tests/data/flux/README.md): the enrichment join waits for the
    message and its four enrichment branches, the threat intelligence join for its two; both are recognised with
    their caches, and `topology.workers` is kept (its deaths are said not to be modelled: model.md section 9)."""
    from app.core.storm.flux.yaml_text import FluxOptions

    folder = EXAMPLES.parent / "metron"
    result = import_flux(folder / "remote-splitjoin.yaml",
                         FluxOptions(filter=folder / "enrichment-test.properties"))
    topo = result.topology
    assert [b.name for b in topo.bolts if b.unmodelled is not None] == []  # both joins modelled (model.md 11)
    joins = {b.name: b.join.model_dump(exclude_none=True) for b in topo.bolts if b.join is not None}
    assert joins == {"enrichmentJoinBolt": {"kind": "all", "max_cache": 100000, "max_time": 10},
                     "threatIntelJoinBolt": {"kind": "all", "max_cache": 100000, "max_time": 10}}
    into = sorted(topo.name_of(s.source) for s in topo.subscriptions if topo.name_of(s.target) == "enrichmentJoinBolt")
    assert into == ["enrichmentSplitBolt", "geoEnrichmentBolt", "hostEnrichmentBolt", "simpleHBaseEnrichmentBolt",
                    "stellarEnrichmentBolt"]
    assert topo.storm.workers == 2
    assert sum(n.startswith("bolts.") and "a join waiting for every branch (Metron's" in n for n in result.notes) == 2


def test_a_joins_answer_names_the_branch_it_waits_for() -> None:
    """Metron's enrichment join fed 100 messages/s with a geo enrichment of 20 ms (50/s: utilisation 2) and every
    other bolt at 1 ms: the join's explanation names the geo bolt as the branch its output waits for."""
    from app.core.storm.flux.yaml_text import FluxOptions

    folder = EXAMPLES.parent / "metron"
    data = import_flux(folder / "remote-splitjoin.yaml",
                       FluxOptions(filter=folder / "enrichment-test.properties")).topology.model_dump(mode="json")
    for s in data["spouts"]:
        s.update(rate=100, burst=1, unannotated=[])
    for b in data["bolts"]:
        b.update(alpha=0.02 if b["name"] == "geoEnrichmentBolt" else 0.001, unannotated=[],
                 sigma=0 if b["name"].endswith("OutputBolt") else 1)
        b["stream_sigma"] = {k: 1 for k in b.get("streams", [])}
    report = rate_check(parse_topology(data))
    assert report.bolts["geoEnrichmentBolt"].status == "grows"
    join = report.bolts["enrichmentJoinBolt"]  # geo completes 50 messages/s, the other four branches deliver 100
    assert join.status == "grows" and join.join_cache_growth == 50
    assert join.join_slowest == "geoEnrichmentBolt (stream 'geo')"
    assert ("so it completes the messages of its slowest branch, geoEnrichmentBolt (stream 'geo'): 50 per second at "
            "nominal timing" in join.explanation)
    assert "Metron's maxCacheSize 100000 is full after about 2e+03 s" in join.explanation


@pytest.mark.parametrize(("config", "said"), [
    ("", None),  # 10 s + 10 s within Storm's default timeout of 30 s
    ("config:\n  topology.message.timeout.secs: 15\n",
     "Storm refuses this window when the bolt starts: its duration (length + sliding interval) 20 s is more than "
     "topology.message.timeout.secs 15 s"),
    ("config:\n  topology.message.timeout.secs: 15\n  topology.enable.message.timeouts: false\n", None),
])
def test_a_window_storm_refuses_is_said(tmp_path: Path, config: str, said: str | None) -> None:
    """Storm's WindowedBoltExecutor refuses, when the bolt starts, a window whose durations exceed the message
    timeout (with timeouts on), and one whose counts exceed topology.max.spout.pending."""
    flux = tmp_path / "joins.yaml"
    flux.write_text(JOIN_FLUX.replace('name: "joins"\n', 'name: "joins"\n' + config))
    notes = [n for n in import_flux(flux).notes if "refuses" in n]
    assert notes == ([] if said is None else [f"bolts.join: {said}"])


def test_a_count_window_above_max_spout_pending_is_said(tmp_path: Path) -> None:
    text = (EXAMPLES / "simple_windowing.yaml").read_text()
    flux = tmp_path / "w.yaml"
    flux.write_text(text.replace("topology.workers: 1", "topology.workers: 1\n  topology.max.spout.pending: 5"))
    assert [n for n in import_flux(flux).notes if "refuses" in n] == [
        "bolts.bolt-1: Storm refuses this window when the bolt starts: its count (length + sliding interval) 8 is "
        "more than topology.max.spout.pending 5"]
    assert [n for n in import_flux(EXAMPLES / "simple_windowing.yaml").notes if "refuses" in n] == []


def windowed(window: dict, **bolt: object) -> dict:
    """A spout feeding one bolt with `window` (schema_version 4)."""
    return {"schema_version": 4, "name": "win", "spouts": [{"name": "S", "rate": 10, "burst": 1}],
            "bolts": [{"name": "W", "alpha": 0.01, "sigma": 0.2, "parallelism": 1, "window": window, **bolt}],
            "subscriptions": [{"source": "S", "target": "W"}], "settings": {"max_idle_time": 0}}


def test_the_window_field_and_its_refusals() -> None:
    bolt = parse_topology(windowed({"kind": "count", "length": 5, "slide": 3})).bolt_by_name("W")
    assert bolt.window is not None and bolt.window.phrase() == "withWindow(Count(5), Count(3))"
    tumbling = parse_topology(windowed({"kind": "duration", "length": 2.5})).bolt_by_name("W").window
    assert tumbling is not None and tumbling.interval == 2.5
    assert tumbling.phrase() == "withTumblingWindow(Duration(2.5 s))"
    saved = json.loads(parse_topology(windowed({"kind": "count", "length": 5})).to_json_bytes())
    assert saved["bolts"][0]["window"] == {"kind": "count", "length": 5}  # whole tuples stay whole
    for window, extra, field, words in [
            ({"kind": "count", "length": 2.5}, {}, "bolts.W.window", "a whole number of tuples"),
            ({"kind": "count", "length": 3, "slide": 5}, {}, "bolts.W.window", "above the window's length"),
            ({"kind": "duration", "length": 0}, {}, "bolts.W.window.length", "greater than 0"),
            ({"kind": "tuples", "length": 3}, {}, "bolts.W.window.kind", "'count' or 'duration'"),
            ({"kind": "count", "length": 3}, {"threads": 4}, "bolts.W", "`window` or `threads`, not both")]:
        with pytest.raises(TopologyError) as err:
            parse_topology(windowed(window, **extra))
        problem = err.value.problems[0]
        assert problem.path.startswith(field) and words in problem.message, (problem.path, problem.message)

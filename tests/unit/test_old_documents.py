"""Every document an earlier version wrote opens with the verdicts that version gave, or with one line saying what
was assumed (tests/data/old-documents/README.md: one file per format change)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.formats import load_topology
from app.core.rates import rate_check
from app.core.topology import SCHEMA_VERSION, TopologyError, parse_topology
from app.core.topology.checks import unannotated_problems

OLD = Path(__file__).resolve().parents[1] / "data" / "old-documents"
EXPECTED = json.loads((OLD / "expected.json").read_text())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_an_old_document_opens_with_the_verdicts_its_version_gave(name: str) -> None:
    topo = load_topology(OLD / name)
    expected = EXPECTED[name]
    if "error" in expected:  # that version refused to check it for values still to annotate: so does this one
        assert [p.path for p in unannotated_problems(topo)][:3] == expected["error"]
    else:
        assert {n: b.status for n, b in rate_check(topo).bolts.items()} == expected
    before_streams = name.startswith("b360b52")
    assert len(topo.read_notes) == (1 if before_streams else 0), topo.read_notes
    if before_streams:
        (note,) = topo.read_notes
        assert "schema_version 1, before declared streams" in note and "\n" not in note
        assert "tika on shunt" in note and "deletion on status" in note
    # saved, it is a current document: read again, it says nothing more and means the same
    again = parse_topology(json.loads(topo.to_json_bytes()))
    assert again.schema_version == SCHEMA_VERSION == 6 and again.read_notes == []
    assert again.semantics() == topo.semantics()


def test_the_pre_streams_crawler_gets_the_sigma_its_version_implied() -> None:
    topo = load_topology(OLD / "b360b52-crawler-annotated.storm.json")
    shunt, status, fetcher = (topo.bolt_by_name(n) for n in ("shunt", "status", "fetcher"))
    assert shunt.streams == ["tika"] and shunt.stream_sigma == {"tika": shunt.sigma}
    assert status.stream_sigma == {"deletion": status.sigma} and fetcher.stream_sigma == {"status": 1}
    # not annotated in the raw import: its streams' σ stays not annotated too (no placeholder taken for a value)
    raw = load_topology(OLD / "b360b52-crawler-import-flux.storm.json")
    assert raw.bolt_by_name("shunt").streams == ["tika"] and raw.bolt_by_name("shunt").stream_sigma == {}
    assert raw.spouts[1].stream_ratio == {"status": 1}


def test_a_version_this_program_does_not_know_is_refused_naming_the_field() -> None:
    data = json.loads((OLD / "a607fda-simple-DIA-cfg-1.storm.json").read_text())
    data["schema_version"] = 7
    with pytest.raises(TopologyError) as err:
        parse_topology(data)
    assert err.value.problems[0].path == "schema_version" and "newer version" in err.value.problems[0].message
    # a current document that names a stream it does not declare is still refused
    current = json.loads((OLD / "1c402b2-crawler-annotated.storm.json").read_text())
    current["schema_version"] = 4
    current["subscriptions"][0]["stream"] = "typo"
    with pytest.raises(TopologyError, match="'typo' is not a declared stream"):
        parse_topology(current)


def test_a_version_2_document_reads_unchanged_and_may_not_name_threads() -> None:
    """Version 2 had no asynchronous bolts (app/core/topology/migrate.py): it reads without a note, every bolt an
    ordinary one; a version 2 file that names `threads` was not written by version 2 and is refused, naming it."""
    data = json.loads((OLD / "b5be14b-crawler-annotated.storm.json").read_text())
    assert data["schema_version"] == 2
    topo = parse_topology(data)
    assert topo.read_notes == [] and all(b.threads is None and b.take_max == b.parallelism for b in topo.bolts)
    data["bolts"][0]["threads"] = 10
    with pytest.raises(TopologyError) as err:
        parse_topology(data)
    assert err.value.problems[0].path == f"bolts.{data['bolts'][0]['name']}.threads"
    assert "schema_version 3" in err.value.problems[0].message
    data["schema_version"] = 3  # the same bolt in a current document: asynchronous, C_TAKE = executors × threads
    bolt = parse_topology(data).bolt_by_name(data["bolts"][0]["name"])
    assert bolt.threads == 10 and bolt.take_max == 10 * bolt.parallelism


def test_a_version_3_document_reads_unchanged_and_may_not_name_a_window() -> None:
    """Version 3 had no windowed bolts (app/core/topology/migrate.py): it reads without a note, its windowed bolt
    keeping the import's `unmodelled` mark; a version 3 file that names `window` is refused, naming it."""
    data = json.loads((OLD / "43d8243-simple-windowing-annotated.storm.json").read_text())
    assert data["schema_version"] == 3
    topo = parse_topology(data)
    assert topo.read_notes == [] and all(b.window is None for b in topo.bolts)
    assert topo.bolt_by_name("bolt-1").unmodelled == "a windowed bolt (withWindow(Count(5), Count(3)))"
    bolt = next(b for b in data["bolts"] if b["name"] == "bolt-1")
    del bolt["unmodelled"]
    bolt["window"] = {"kind": "count", "length": 5, "slide": 3}
    with pytest.raises(TopologyError) as err:
        parse_topology(data)
    assert err.value.problems[0].path == "bolts.bolt-1.window"
    assert err.value.problems[0].message == "window needs schema_version 4 (this document says 3)"
    data["schema_version"] = 4  # the same bolt in a current document: a sliding count window
    window = parse_topology(data).bolt_by_name("bolt-1").window
    assert window is not None and (window.kind, window.length, window.interval) == ("count", 5, 3)


def test_a_version_5_document_reads_unchanged_and_may_not_name_a_slide_kind() -> None:
    """Version 5 had no mixed windows (app/core/topology/migrate.py): it reads without a note, its mixed window
    keeping the import's `unmodelled` mark; a version 5 file whose window names `slide_kind` is refused, naming it."""
    data = json.loads((OLD / "3904db4-mixed-count-timer-annotated.storm.json").read_text())
    assert data["schema_version"] == 5
    topo = parse_topology(data)
    assert topo.read_notes == [] and all(b.window is None for b in topo.bolts)
    assert "a mixed window" in (topo.bolt_by_name("slidingsum").unmodelled or "")
    bolt = next(b for b in data["bolts"] if b["name"] == "slidingsum")
    del bolt["unmodelled"]
    bolt["window"] = {"kind": "count", "length": 30, "slide": 3, "slide_kind": "duration"}
    with pytest.raises(TopologyError) as err:
        parse_topology(data)
    assert err.value.problems[0].path == "bolts.slidingsum.window.slide_kind"
    assert err.value.problems[0].message == "slide_kind needs schema_version 6 (this document says 5)"
    data["schema_version"] = 6  # the same bolt in a current document: a count eviction on a timer
    window = parse_topology(data).bolt_by_name("slidingsum").window
    assert window is not None and window.mixed and window.trigger == "duration"

"""Flux YAML: import (with includes and substitutions), export, repair, and refusals of bad input."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.storm.flux.builder import import_flux
from app.core.storm.flux.export import to_flux_bytes
from app.core.storm.flux.repair import plan_repair
from app.core.storm.flux.yaml_text import FluxError, FluxOptions, read_properties
from app.core.topology import NotAnnotated, Topology, require_annotated, unannotated_problems

ROOT = Path(__file__).resolve().parents[2]
FLUX = ROOT / "tests" / "data" / "flux" / "storm-examples"
MODELS = ROOT / "models"

# how each of the shared Flux files fares (docs/storm.md lists the same)
EXPECTED = {
    "component-config-test.yaml": ("imports", 1, 1),
    "config-methods-test.yaml": ("imports", 1, 1),
    "existing-topology.yaml": ("refused", "topologySource: the topology is built by Java code"),
    "hdfs_test.yaml": ("imports", 1, 0),
    "include_test.yaml": ("imports", 1, 3),
    "kafka_spout.yaml": ("imports", 1, 3),
    "kafka_test.yaml": ("imports", 1, 3),
    "multilang.yaml": ("imports", 1, 3),
    "shell_test.yaml": ("imports", 1, 3),
    "simple_hdfs.yaml": ("imports", 1, 2),  # ${hdfs.*} left as they are without --filter, as Flux leaves them
    "simple_stateful_wordcount.yaml": ("imports", 1, 2),
    "simple_windowing.yaml": ("imports", 1, 2),
    "simple_wordcount.yaml": ("imports", 1, 2),
    "worker_hook.yaml": ("imports", 1, 1),
}


@pytest.fixture(scope="module")
def flux_dir() -> Path:
    if not FLUX.exists():
        pytest.skip("tests/data/flux/storm-examples is missing")
    return FLUX


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


WORDCOUNT = """\
# a word count in Flux
name: "wordcount"
config:
  topology.workers: 2
  topology.max.spout.pending: 500
  topology.message.timeout.secs: 45
  topology.acker.executors: 1
  topology.debug: false
spouts:
  - id: "sentences"
    className: "org.example.SentenceSpout"
    parallelism: 2
bolts:
  - id: "split"
    className: "org.example.SplitBolt"
    parallelism: 2
  - id: "count"
    className: "org.example.CountBolt"
    parallelism: 3
  - id: "report"
    className: "org.example.ReportBolt"
streams:
  - from: "sentences"
    to: "split"
    grouping:
      type: LOCAL_OR_SHUFFLE
  - from: "split"
    to: "count"
    grouping:
      type: FIELDS
      args: ["word"]
  - from: "count"
    to: "report"
    grouping:
      type: GLOBAL
      streamId: "totals"
"""


# ---- the shared Flux files ------------------------------------------------------------


def test_every_shared_flux_file_imports_or_is_refused_with_a_reason(flux_dir: Path) -> None:
    files = sorted(p.name for p in flux_dir.glob("*.yaml"))
    assert files == sorted(EXPECTED)
    for name, expected in EXPECTED.items():
        if expected[0] == "refused":
            with pytest.raises(FluxError) as err:
                import_flux(flux_dir / name)
            assert expected[1] in str(err.value), name
            assert str(err.value).startswith(str(flux_dir / name) + ": line ")
            assert "\n" not in str(err.value)
            continue
        result = import_flux(flux_dir / name)
        topo = result.topology
        assert (len(topo.spouts), len(topo.bolts)) == expected[1:], name
        assert all(s.unannotated == ["rate", "burst"] for s in topo.spouts), name
        assert all("alpha" in b.unannotated for b in topo.bolts), name


def test_simple_hdfs_imports_with_its_properties(flux_dir: Path) -> None:
    result = import_flux(flux_dir / "simple_hdfs.yaml", FluxOptions(filter=flux_dir / "hdfs_bolt.properties"))
    assert [b.name for b in result.topology.bolts] == ["bolt-1", "bolt-2"]
    assert result.topology.storm.flux_filter == str((flux_dir / "hdfs_bolt.properties").resolve())


def test_include_resource_resolves_beside_the_including_file(flux_dir: Path) -> None:
    topo = import_flux(flux_dir / "include_test.yaml").topology
    assert topo.name == "include-topology"  # override: false keeps the including file's name
    assert [b.name for b in topo.bolts] == ["splitsentence", "log", "count"]
    split = topo.bolt_by_name("splitsentence")
    assert split.class_name == "org.apache.storm.flux.wrappers.bolts.FluxShellBolt"
    assert topo.storm.workers == 1


def test_properties_files_read_like_java(flux_dir: Path) -> None:
    props = read_properties(flux_dir / "test.properties")
    assert props["topology.name"] == "substitution-topology"
    assert props["a.list.property"] == '["A string list"]'
    assert props["some.other.property"] == "foo bar"
    assert read_properties(flux_dir / "hdfs_bolt.properties")["hdfs.url"] == "hdfs://hadoop:54310"


def test_shared_files_unannotated_listing(flux_dir: Path) -> None:
    topo = import_flux(flux_dir / "simple_wordcount.yaml").topology
    assert [str(p) for p in unannotated_problems(topo)] == [
        "spouts.spout-1.rate: not annotated", "spouts.spout-1.burst: not annotated",
        "bolts.bolt-1.alpha: not annotated", "bolts.bolt-1.sigma: not annotated",
        "bolts.bolt-2.alpha: not annotated"]
    with pytest.raises(NotAnnotated):
        require_annotated(topo)


def test_hdfs_test_leaves_out_the_bolt_without_a_stream(flux_dir: Path) -> None:
    result = import_flux(flux_dir / "hdfs_test.yaml")
    assert result.topology.bolts == []
    assert any("bolt-1" in note and "no stream" in note for note in result.notes)


# ---- our own fixtures ---------------------------------------------------------------------


def test_wordcount_maps_every_flux_field(tmp_path: Path) -> None:
    result = import_flux(write(tmp_path, "wc.yaml", WORDCOUNT))
    topo = result.topology
    assert topo.name == "wordcount"
    storm = topo.storm
    settings = (storm.workers, storm.max_spout_pending, storm.message_timeout_secs, storm.acker_executors)
    assert settings == (2, 500, 45, 1)
    assert storm.config == {"topology.debug": False}
    assert storm.flux_file == str((tmp_path / "wc.yaml").resolve())
    assert topo.spouts[0].executors == 2 and topo.spouts[0].class_name == "org.example.SentenceSpout"
    assert {b.name: b.parallelism for b in topo.bolts} == {"split": 2, "count": 3, "report": 1}
    report = topo.bolt_by_name("report")
    assert report.unannotated == ["alpha"] and report.sigma == 0  # a sink's σ feeds no queue
    subs = {(topo.name_of(s.source), topo.name_of(s.target)): s for s in topo.subscriptions}
    assert subs[("sentences", "split")].grouping == "local_or_shuffle"
    assert subs[("split", "count")].grouping == "fields" and subs[("split", "count")].fields == ["word"]
    assert subs[("count", "report")].grouping == "global" and subs[("count", "report")].stream == "totals"
    assert any("GLOBAL grouping into report" in note for note in result.notes)


def test_includes_override_and_stream_appending(tmp_path: Path) -> None:
    write(tmp_path, "base.yaml", WORDCOUNT)
    write(tmp_path, "more.yaml", """\
name: "other-name"
config:
  topology.workers: 9
  topology.eventlogger.executors: 1
bolts:
  - id: "count"
    className: "org.example.BetterCount"
    parallelism: 7
""")
    main = write(tmp_path, "main.yaml", "includes:\n  - file: base.yaml\n  - file: more.yaml\n    override: true\n")
    topo = import_flux(main).topology
    assert topo.name == "other-name"  # the including file has none, and the include overrides
    assert topo.storm.workers == 9 and topo.storm.config["topology.eventlogger.executors"] == 1
    assert topo.bolt_by_name("count").class_name == "org.example.BetterCount"
    assert topo.bolt_by_name("count").parallelism == 7
    write(tmp_path, "keep.yaml", "includes:\n  - file: base.yaml\n  - file: more.yaml\n")
    keep = import_flux(tmp_path / "keep.yaml")
    assert keep.topology.bolt_by_name("count").parallelism == 3
    assert any("already defined" in note for note in keep.notes)


def test_an_include_may_hold_config_only(tmp_path: Path) -> None:
    write(tmp_path, "prod.yaml", "config:\n  topology.workers: 8\n  topology.max.spout.pending: 2000\n")
    main = write(tmp_path, "main.yaml", WORDCOUNT + "includes:\n  - file: prod.yaml\n    override: true\n")
    storm = import_flux(main).topology.storm
    assert (storm.workers, storm.max_spout_pending, storm.message_timeout_secs) == (8, 2000, 45)


def test_substitution_from_properties_lists_and_environment(tmp_path: Path) -> None:
    props = write(tmp_path, "dev.properties", "# dev\ntopology.name: from-props\nsplit.parallelism=4\n"
                  "hosts: [\"a:1\", \"b:2\"]\nlong = one \\\n    two\n")
    text = WORDCOUNT.replace('name: "wordcount"', 'name: "${topology.name}"') \
        .replace("parallelism: 3", "parallelism: ${ENV-COUNT_PAR}") \
        .replace('className: "org.example.SplitBolt"', 'className: "${hosts[1]}"') \
        .replace("    parallelism: 2\n  - id: \"count\"", "    parallelism: ${split.parallelism}\n  - id: \"count\"")
    flux = write(tmp_path, "sub.yaml", text)
    topo = import_flux(flux, FluxOptions(filter=props, env=True, environ={"COUNT_PAR": "6"})).topology
    assert topo.name == "from-props"
    assert topo.bolt_by_name("split").parallelism == 4
    assert topo.bolt_by_name("split").class_name == "b:2"
    assert topo.bolt_by_name("count").parallelism == 6
    assert read_properties(props)["long"] == "one two"


def test_export_then_import_keeps_annotations(tmp_path: Path) -> None:
    topo = import_flux(write(tmp_path, "wc.yaml", WORDCOUNT)).topology
    split = topo.bolt_by_name("split").model_copy(update={"alpha": 0.004, "sigma": 6.5, "unannotated": []})
    bolts = [split if b.name == "split" else b for b in topo.bolts]
    topo = topo.model_copy(update={"bolts": bolts, "settings": topo.settings.model_copy(update={"tolerance": 0.05})})
    out = write(tmp_path, "out.yaml", to_flux_bytes(topo).decode())
    again = import_flux(out).topology
    assert flux_view(again) == flux_view(topo)
    assert again.bolt_by_name("split").unannotated == []
    assert again.settings.tolerance == 0.05


def test_export_of_a_drawn_topology_round_trips(tmp_path: Path) -> None:
    from app.core.formats import load_topology

    topo = load_topology(MODELS / "simple-DIA-cfg-1.storm.json")
    out = write(tmp_path, "dia.yaml", to_flux_bytes(topo).decode())
    again = import_flux(out).topology
    assert again.semantics() == topo.semantics()
    assert "stormbound.placeholder.SpoutClass" in out.read_text()
    assert again.spouts[0].class_name is None


def flux_view(topo: Topology) -> dict:
    """Everything an import reads from a Flux file, by name (ids and layout differ per import)."""
    names = {c.id: c.name for c in topo.components}
    return {
        "semantics": topo.semantics(),
        "classes": sorted((c.name, c.class_name or "") for c in topo.components),
        "unannotated": sorted((c.name, tuple(c.unannotated)) for c in topo.components),
        "executors": sorted((s.name, s.executors or 1) for s in topo.spouts),
        "streams": sorted((names[s.source], names[s.target], s.stream or "", s.custom_class or "")
                          for s in topo.subscriptions),
        "storm": topo.storm.model_dump(exclude={"flux_file", "flux_filter", "flux_env", "flux_resources"}),
        "name": topo.name,
    }


IDENT = st.text(alphabet="abcdefghijklmnopqrstuvwxyz-_", min_size=1, max_size=8)
GROUPING_TYPES = ["SHUFFLE", "FIELDS", "ALL", "GLOBAL", "NONE", "LOCAL_OR_SHUFFLE", "DIRECT", "CUSTOM"]


@st.composite
def flux_files(draw) -> str:
    """Random Flux files: spouts, bolts fed by streams, groupings of every kind, config and annotations."""
    names = draw(st.lists(IDENT, min_size=2, max_size=7, unique=True))
    n_spouts = draw(st.integers(1, max(1, len(names) - 1)))
    spouts, bolts = names[:n_spouts], names[n_spouts:]
    lines = [f'name: "{draw(IDENT)}"', "config:"]
    for key in ("topology.workers", "topology.max.spout.pending", "topology.message.timeout.secs"):
        if draw(st.booleans()):
            lines.append(f"  {key}: {draw(st.integers(1, 1000))}")
    lines.append(f"  topology.acker.executors: {draw(st.integers(0, 4))}")
    lines.append(f'  custom.key: "{draw(IDENT)}"')
    lines.append("spouts:")
    for s in spouts:
        lines += [f'  - id: "{s}"', f'    className: "org.x.{s.replace("-", "_")}"',
                  f"    parallelism: {draw(st.integers(1, 9))}"]
        if draw(st.booleans()):
            lines += ["    config:", f"      stormbound.rate: {draw(st.integers(1, 500))}"]
    lines.append("bolts:")
    for b in bolts:
        lines += [f'  - id: "{b}"', f'    className: "org.x.{b.replace("-", "_")}"']
        if draw(st.booleans()):
            lines.append(f"    parallelism: {draw(st.integers(1, 64))}")
        if draw(st.booleans()):
            lines += ["    config:", f"      stormbound.alpha: {draw(st.sampled_from(['0.01', '0.5', '2']))}"]
    lines.append("streams:")
    seen = set()
    for i, b in enumerate(bolts):
        sources = [*spouts, *bolts[:i]]
        for src in draw(st.lists(st.sampled_from(sources), min_size=1, max_size=2, unique=True)):
            kind = draw(st.sampled_from(GROUPING_TYPES))
            stream = draw(st.sampled_from([None, "default", "other"]))
            if (src, b, stream) in seen:
                continue
            seen.add((src, b, stream))
            lines += [f'  - from: "{src}"', f'    to: "{b}"', "    grouping:", f"      type: {kind}"]
            if kind == "FIELDS":
                lines.append(f'      args: ["{draw(IDENT)}"]')
            if kind == "CUSTOM":
                lines += ["      customClass:", '        className: "org.x.Grouping"']
            if stream is not None:
                lines.append(f'      streamId: "{stream}"')
    return "\n".join(lines) + "\n"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=flux_files())
def test_import_export_import_is_the_identity(tmp_path: Path, text: str) -> None:
    first = import_flux(write(tmp_path, "in.yaml", text)).topology
    out = write(tmp_path, "out.yaml", to_flux_bytes(first).decode())
    second = import_flux(out).topology
    assert flux_view(second) == flux_view(first)


# ---- refusals ------------------------------------------------------------------------------


BAD_INPUTS = [
    ("malformed.yaml", "name: t\nspouts: [ {id: s, className: S\nbolts: []\n",
     "line 3: spouts: not valid YAML"),
    ("bomb.yaml", "name: t\nspouts:\n  - {id: s, className: S}\nconfig:\n"
     '  a: &a ["x","x","x","x","x","x","x","x","x"]\n  b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n'
     "  c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n  d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
     "  e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n  f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
     "  g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n", "config.e: expands to more than 50000 YAML nodes"),
    ("deep.yaml", "name: t\nspouts:\n  - {id: s, className: S}\nconfig:\n  x: " + "[" * 3000 + "]" * 3000 + "\n",
     "line 5: config: nested too deeply"),
    ("deepblock.yaml", "name: t\nspouts: []\nconfig:\n" + "".join(" " * (i + 2) + f"k{i}:\n" for i in range(60))
     + " " * 70 + "v\n", "config.k0.k1"),
    ("grouping.yaml", "name: t\nspouts:\n  - {id: s, className: S}\nbolts:\n  - {id: b, className: B}\n"
     "streams:\n  - from: s\n    to: b\n    grouping:\n      type: ROUND_ROBIN\n",
     "line 10: streams[0].grouping.type: unknown grouping 'ROUND_ROBIN'"),
    ("cyclic.yaml", "name: t\nincludes:\n  - file: cyclic.yaml\n", "line 3: includes[0].file: cyclic include"),
    ("missing.yaml", "name: t\nincludes:\n  - resource: true\n    file: /configs/absent.yaml\n",
     "line 4: includes[0].file: resource /configs/absent.yaml not found"),
    ("unknown.yaml", 'name: t\nspouts:\n  - id: s\n    className: S\n    parallelism: "${who.knows}"\n',
     "line 5: spouts.s.parallelism: ${who.knows} is not defined: give --filter FILE.properties"),
    ("env.yaml", "name: t\nspouts:\n  - {id: s, className: S, parallelism: ${ENV-PAR}}\n",
     "line 3: spouts: ${ENV-PAR} needs --env"),
    ("java.yaml", "name: t\ntopologySource:\n  className: org.x.Builder\n", "line 2: topologySource"),
    ("compose.yaml", "version: '3'\nservices: {}\n", "line 1: not a Flux file"),
    ("list.yaml", "- a\n- b\n", "not a Flux file"),
    ("empty.yaml", "# nothing\n", "is empty"),
    ("zero.yaml", "name: t\nspouts:\n  - {id: s, className: S}\nbolts:\n  - {id: b, className: B, parallelism: 0}\n",
     "line 5: bolts.b.parallelism: must be at least 1"),
    ("dupe.yaml", "name: t\nname: u\nspouts: []\n", "line 2: name: not valid YAML: found duplicate key"),
    ("typo.yaml", "name: t\nspout:\n  - {id: s, className: S}\nbolts: []\n", "line 2: spout: unknown field"),
    ("tospout.yaml", "name: t\nspouts:\n  - {id: s, className: S}\n  - {id: r, className: R}\n"
     "streams:\n  - {from: s, to: r, grouping: {type: SHUFFLE}}\n", "line 6: streams[0].to: 'r' is a spout"),
]


@pytest.mark.parametrize(("name", "text", "message"), BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_bad_input_is_one_line_naming_file_line_and_field(tmp_path: Path, name: str, text: str, message: str) -> None:
    path = write(tmp_path, name, text)
    with pytest.raises(FluxError) as err:
        import_flux(path)
    line = str(err.value)
    assert "\n" not in line
    assert line.startswith(f"{path}: ")
    assert message in line


def test_cycle_through_an_included_file(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", "name: a\nincludes:\n  - file: b.yaml\n")
    write(tmp_path, "b.yaml", "name: b\nspouts:\n  - {id: s, className: S}\nincludes:\n  - file: a.yaml\n")
    with pytest.raises(FluxError, match=r"b.yaml: line 5: includes\[0\].file: cyclic include"):
        import_flux(tmp_path / "a.yaml")


# ---- repair -----------------------------------------------------------------------------------


def changed_lines(before: str, after: str) -> list[str]:
    return [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def test_repair_changes_only_parallelism_values_of_every_shared_file(flux_dir: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "flux"
    shutil.copytree(flux_dir, copy)
    repaired = 0
    for path in sorted(copy.glob("*.yaml")):
        options = FluxOptions(filter=copy / "hdfs_bolt.properties")
        try:
            topo = import_flux(path, options).topology
        except FluxError:
            continue
        wanted = {b.name: b.parallelism + 3 for b in topo.bolts}
        for edit in plan_repair(path, wanted, options):
            lines = changed_lines(edit.before, edit.after)
            assert lines and all("parallelism:" in line for line in lines), lines
            assert len(edit.before.splitlines()) == len(edit.after.splitlines())
            edit.path.write_text(edit.after)
            repaired += 1
        again = import_flux(path, options).topology
        assert {b.name: b.parallelism for b in again.bolts} == wanted
    assert repaired >= 11


ANCHORS = """\
# a Flux file with anchors and flow mappings
---
name: "anchors"   # keep me
spouts:
  - id: "s"
    className: "S"
    parallelism: &one 1
bolts:
  - id: "a"
    className: "A"
    parallelism: &par 2   # shared
  - {id: "b", className: "B", parallelism: *par}
  - id: "c"
    className: "C"
    parallelism: *par
  - id: "d"
    className: "D"
  - {id: "e", className: "E"}
  - id: "f"
    className: "F"
    parallelism: *one
streams:
  - {from: s, to: a, grouping: {type: SHUFFLE}}
  - {from: a, to: b, grouping: {type: FIELDS, args: [w]}}
  - {from: b, to: c, grouping: {type: SHUFFLE}}
  - {from: c, to: d, grouping: {type: SHUFFLE}}
  - {from: c, to: e, grouping: {type: SHUFFLE}}
  - {from: c, to: f, grouping: {type: SHUFFLE}}
"""


@pytest.mark.parametrize("wanted", [{"a": 5}, {"a": 5, "b": 5, "c": 5}, {"b": 7}, {"d": 3, "e": 4, "f": 6}])
def test_repair_through_anchors_aliases_and_flow_mappings(tmp_path: Path, wanted: dict[str, int]) -> None:
    path = write(tmp_path, "anchors.yaml", ANCHORS)
    before = {b.name: b.parallelism for b in import_flux(path).topology.bolts}
    (edit,) = plan_repair(path, wanted)
    lines = changed_lines(edit.before, edit.after)
    assert all("parallelism" in line for line in lines if line.startswith("+"))
    assert all(line.startswith(("+", "-  - {id: ")) or "parallelism" in line for line in lines)
    assert edit.after.startswith("# a Flux file with anchors and flow mappings\n---\n")
    path.write_text(edit.after)
    assert {b.name: b.parallelism for b in import_flux(path).topology.bolts} == {**before, **wanted}


def test_repair_refuses_an_anchor_shared_with_other_settings(tmp_path: Path) -> None:
    path = write(tmp_path, "shared.yaml", "name: t\nspouts:\n  - {id: s, className: S}\nbolts:\n"
                 "  - {id: b, className: B, parallelism: &w 2}\nconfig:\n  topology.workers: *w\n"
                 "streams:\n  - {from: s, to: b, grouping: {type: SHUFFLE}}\n")
    with pytest.raises(FluxError, match=r"line 7: config.topology.workers: uses the anchor &w of bolts.b.parallelism"):
        plan_repair(path, {"b": 4})


def test_repair_refuses_parallelism_from_a_property(tmp_path: Path) -> None:
    props = write(tmp_path, "p.properties", "par=2\n")
    path = write(tmp_path, "p.yaml", WORDCOUNT.replace("parallelism: 3", "parallelism: ${par}"))
    with pytest.raises(FluxError, match=r"comes from \$\{par\}: change par in the properties file .*p.properties line"):
        plan_repair(path, {"count": 5}, FluxOptions(filter=props))


def test_repair_edits_the_included_file_that_defines_the_bolt(flux_dir: Path, tmp_path: Path) -> None:
    import shutil

    for name in ("include_test.yaml", "shell_test.yaml"):
        shutil.copy(flux_dir / name, tmp_path / name)
    (edit,) = plan_repair(tmp_path / "include_test.yaml", {"count": 4})
    assert edit.path.name == "shell_test.yaml"
    assert edit.changes == ["bolts.count.parallelism: 1 -> 4"]


def test_repair_unknown_bolt(tmp_path: Path) -> None:
    path = write(tmp_path, "wc.yaml", WORDCOUNT)
    with pytest.raises(FluxError, match="bolts.nope: no such bolt in the Flux file"):
        plan_repair(path, {"nope": 2})


def test_environment_is_not_read_without_env(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PAR", "3")
    path = write(tmp_path, "env.yaml", WORDCOUNT.replace("parallelism: 3", "parallelism: ${ENV-PAR}"))
    with pytest.raises(FluxError, match="needs --env"):
        import_flux(path)
    assert import_flux(path, FluxOptions(env=True)).topology.bolt_by_name("count").parallelism == 3
    assert os.environ["PAR"] == "3"

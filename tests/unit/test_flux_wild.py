"""Flux files as found in the wild: StormCrawler crawlers and Azure HDInsight's Event Hubs sample
(tests/data/flux/, see its README for origins) and Storm's own examples (tests/data/flux/storm-examples). Each
imports, verifies once annotated, repairs and exports, and an export differs from its source only in
the changed parallelism values (checked with a diff)."""

from __future__ import annotations

import difflib
import json
import shutil
from pathlib import Path

import pytest

from app.cli import main
from app.core.formats import load_topology
from app.core.storm.flux.builder import import_flux
from app.core.storm.flux.yaml_text import FluxOptions
from app.core.topology import parse_topology

ROOT = Path(__file__).resolve().parents[2]
WILD = ROOT / "tests" / "data" / "flux"
SHARED_FLUX = ROOT / "tests" / "data" / "flux" / "storm-examples"  # Apache Storm's Flux examples

# file, spouts (a ticked bolt's timer source included), bolts
CRAWLERS = [("stormcrawler/crawler.flux", 3, 11), ("news-crawl/crawler.flux", 1, 6),
            ("linkchecker/linkchecker.flux", 2, 4)]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def changed_lines(before: str, after: str) -> list[str]:
    return [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def annotated(doc: Path, out: Path) -> Path:
    """Every placeholder value filled in, as a Storm UI or a calibration would: spouts 60 tuples/s, bolts 20 ms
    and σ 1/2 (below one, so the linkchecker's redirect cycle has a gain below one), a tenth of the tuples on
    each declared side stream (status, tika, deletion, ...)."""
    data = json.loads(doc.read_text())
    for s in data["spouts"]:
        s.update({"rate": 60.0 if "rate" in s.get("unannotated", []) else s["rate"], "burst": 1, "unannotated": []})
        s["stream_ratio"] = {name: s.get("stream_ratio", {}).get(name, 0.1) for name in s.get("streams", [])}
    for b in data["bolts"]:
        b.update({"alpha": 0.02, "sigma": 0.5 if b["sigma"] else 0.0, "unannotated": []})
        b["stream_sigma"] = {name: b.get("stream_sigma", {}).get(name, 0.1) for name in b.get("streams", [])}
    out.write_text(json.dumps(parse_topology(data).model_dump(mode="json")))
    return out


@pytest.mark.parametrize(("name", "spouts", "bolts"), CRAWLERS)
def test_crawler_imports_verifies_repairs_and_exports(capsys, tmp_path: Path, name: str, spouts: int,
                                                      bolts: int) -> None:
    folder = tmp_path / Path(name).parent.name
    shutil.copytree(WILD / Path(name).parent, folder)
    flux = folder / Path(name).name
    source = flux.read_text(encoding="utf-8")
    doc = tmp_path / "crawler.storm.json"
    code, out, err = run(capsys, "import", "flux", str(flux), "-o", str(doc), "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["kind"] == "import-flux" and result["unannotated"]
    topo = load_topology(doc)
    assert (len(topo.spouts), len(topo.bolts)) == (spouts, bolts)
    assert any("${version} is left as it is, as Flux leaves it" in n for n in result["notes"])
    # unchanged: the export is the source, byte for byte
    out_yaml = tmp_path / "same.flux"
    code, out, err = run(capsys, "export", "flux", str(doc), str(out_yaml))
    assert code == 0 and out_yaml.read_text(encoding="utf-8") == source, err
    # verify, once annotated
    ready = annotated(doc, tmp_path / "ready.storm.json")
    code, out, err = run(capsys, "check", str(ready), "--json")
    assert code == 0, err
    assert json.loads(out)["headroom"]["headroom"] is not None
    code, out, err = run(capsys, "verify", str(ready), "--k-max", "6", "--timeout", "60")
    assert code in (0, 1, 4), err
    # repair: the suggested parallelism, a copy
    repaired = folder / "repaired.flux"  # beside its includes
    code, out, err = run(capsys, "repair", str(flux), "--parallelism", "suggested", "--topology", str(ready),
                         "-o", str(repaired))
    assert code == 0, err
    changes = changed_lines(source, repaired.read_text(encoding="utf-8"))
    assert changes and all("parallelism:" in line for line in changes)
    # the same parallelism in the document: its export is the repaired file exactly
    suggested = import_flux(repaired).topology
    data = json.loads(ready.read_text())
    for b in data["bolts"]:
        b["parallelism"] = suggested.bolt_by_name(b["name"]).parallelism
    moved = tmp_path / "moved.storm.json"
    moved.write_text(json.dumps(data))
    exported = tmp_path / "exported.flux"
    code, out, err = run(capsys, "export", "flux", str(moved), str(exported))
    assert code == 0, err
    assert exported.read_text(encoding="utf-8") == repaired.read_text(encoding="utf-8")
    assert all("parallelism:" in line for line in changed_lines(source, exported.read_text(encoding="utf-8")))


def test_tick_tuples_are_a_timer_source_of_the_bolt(tmp_path: Path) -> None:
    topo = import_flux(WILD / "stormcrawler" / "crawler.flux").topology
    tick = next(s for s in topo.spouts if s.name == "__tick:status_metrics")
    assert tick.unannotated == ["rate"] and tick.burst == 1  # the bolt sets its frequency in Java
    sub = next(s for s in topo.subscriptions if s.source == tick.id)
    assert topo.component(sub.target).name == "status_metrics" and sub.stream == "__tick"
    text = (WILD / "stormcrawler" / "crawler.flux").read_text().replace(
        'className: "com.digitalpebble.stormcrawler.opensearch.metrics.StatusMetricsBolt"\n    parallelism: 1',
        'className: "com.digitalpebble.stormcrawler.opensearch.metrics.StatusMetricsBolt"\n    parallelism: 2\n'
        '    config:\n      topology.tick.tuple.freq.secs: 10')
    shutil.copytree(WILD / "stormcrawler", tmp_path / "sc")
    (tmp_path / "sc" / "crawler.flux").write_text(text)
    result = import_flux(tmp_path / "sc" / "crawler.flux")
    tick = next(s for s in result.topology.spouts if s.name == "__tick:status_metrics")
    assert tick.unannotated == [] and tick.rate == 0.2 and tick.burst == 2  # 2 tasks, a tick each every 10 s
    assert any("tick tuples every 10 s" in n for n in result.notes)
    skeleton = tmp_path / "skeleton.flux"
    doc = tmp_path / "sc.storm.json"
    doc.write_bytes(result.topology.to_json_bytes())
    assert main(["export", "flux", str(doc), str(skeleton), "--skeleton"]) == 0
    written = skeleton.read_text()
    assert "__tick:" not in written and "from: __system" in written and "streamId: __tick" in written
    again = import_flux(skeleton).topology
    assert {s.name for s in again.spouts} == {s.name for s in result.topology.spouts}


def test_env_references_stay_references(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--env resolves ${ENV-...} for reading, but the document and its export keep the reference."""
    monkeypatch.setenv("DATABASE_PASSWORD", "s3cret")
    monkeypatch.setenv("HTTP_TIMEOUT", "98765")
    shutil.copytree(WILD / "linkchecker", tmp_path / "lc")
    flux = tmp_path / "lc" / "linkchecker.flux"
    result = import_flux(flux, FluxOptions(env=True))
    config = result.topology.storm.config
    assert config["SPRING"]["spring.datasource.password"] == "${ENV-DATABASE_PASSWORD}"
    assert config["http.timeout"] == "${ENV-HTTP_TIMEOUT}"
    assert "s3cret" not in result.topology.to_json_bytes().decode()
    doc = tmp_path / "lc.storm.json"
    doc.write_bytes(result.topology.to_json_bytes())
    for extra in ([], ["--skeleton"]):
        out = tmp_path / f"out{len(extra)}.flux"
        assert main(["export", "flux", str(doc), str(out), *extra]) == 0
        assert "s3cret" not in out.read_text() and "98765" not in out.read_text()
    assert result.topology.storm.max_spout_pending == 5000 and result.topology.storm.message_timeout_secs == 3600


def test_skeleton_names_its_placeholders(capsys, tmp_path: Path) -> None:
    doc = tmp_path / "m.storm.json"
    doc.write_text(json.dumps({"name": "m", "spouts": [{"name": "s", "rate": 1}],
                               "bolts": [{"name": "b", "alpha": 0.1, "sigma": 0, "parallelism": 2,
                                          "class_name": "org.x.B"}],
                               "subscriptions": [{"source": "s", "target": "b"}]}))
    out = tmp_path / "m.flux"
    code, stdout, err = run(capsys, "export", "flux", str(doc), str(out))
    assert code == 0 and "a skeleton (the document did not come from a Flux file)" in stdout
    assert "spouts.s.className" in err and "bolts.b.className" not in err
    assert "Placeholder classes (stormbound.placeholder.*) to replace: spouts.s.className." in out.read_text()


def _storm_examples() -> list[Path]:
    return sorted(p for p in SHARED_FLUX.glob("*.yaml") if p.name != "existing-topology.yaml")


@pytest.mark.parametrize("example", _storm_examples(), ids=lambda p: p.name)
def test_storm_examples_export_only_their_changed_parallelism(tmp_path: Path, example: Path) -> None:
    shutil.copytree(SHARED_FLUX, tmp_path / "flux")
    flux = tmp_path / "flux" / example.name
    source = flux.read_text(encoding="utf-8")
    topo = import_flux(flux).topology
    doc = tmp_path / "doc.storm.json"
    doc.write_bytes(topo.to_json_bytes())
    same = tmp_path / "same.yaml"
    assert main(["export", "flux", str(doc), str(same)]) == 0
    assert same.read_text(encoding="utf-8") == source
    if not topo.bolts:
        return
    raised = topo.model_copy(update={"bolts": [b.model_copy(update={"parallelism": b.parallelism + 3})
                                               for b in topo.bolts]})
    doc.write_bytes(raised.to_json_bytes())
    out = tmp_path / "raised.yaml"
    assert main(["export", "flux", str(doc), str(out)]) == 0
    changes = changed_lines(source, out.read_text(encoding="utf-8"))
    defined_here = [b for b in import_flux(flux).document.bolts.values() if b.file == flux.resolve()]
    if defined_here:
        assert changes and all("parallelism" in line for line in changes)
    else:  # include_test.yaml: its bolts live in the included file, which an export does not rewrite
        assert changes == []


def test_yaml_and_json_mistakes_are_one_line_with_the_fix(capsys, tmp_path: Path) -> None:
    tagged = tmp_path / "tagged.yaml"
    tagged.write_text("name: !!str t\nspouts:\n  - id: !!str s\n    className: !!str S\nbolts:\n"
                      "  - {id: b, className: !!str B}\nstreams:\n"
                      "  - {from: s, to: b, grouping: {type: !!str FIELDS, args: [!!str w]}}\n")
    topo = import_flux(tagged).topology
    assert topo.name == "t" and topo.spouts[0].class_name == "S" and topo.subscriptions[0].fields == ["w"]
    code, out, err = run(capsys, "import", "flux", str(ROOT / "models" / "getting-started.storm.json"),
                         "-o", str(tmp_path / "x.storm.json"))
    assert code == 2 and err.count("\n") == 1
    assert "is a JSON topology document, not a Flux file: check, verify and the app read it as it is" in err
    for command in ("check", "verify"):
        code, out, err = run(capsys, command, str(ROOT / "models" / "wordcount.flux.yaml"))
        assert code == 2 and err.count("\n") == 1 and "not valid JSON" not in err
        assert "is a Flux (YAML) file, not JSON: import it first with `stormbound import flux" in err


# Azure HDInsight's Event Hubs sample: parallelism from ${eventhub.partitions} of a properties file (--filter)
HDINSIGHT = [("reader.yaml", "eventhub-spout", {"eventhub-spout": ("rate=1000/s", "burst=10")},
              {"parser-bolt": ("alpha=0.5ms", "sigma=1"), "log-bolt": ("alpha=3ms",)}),
             ("writer.yaml", "device-emulator-spout", {"device-emulator-spout": ("rate=500/s", "burst=5")},
              {"eventhub-bolt": ("alpha=1ms", "sigma=0"), "log-bolt": ("alpha=4ms",)})]


@pytest.mark.parametrize(("name", "spout", "spouts", "bolts"), HDINSIGHT)
def test_hdinsight_flux_files_import_verify_repair_and_export(capsys, tmp_path: Path, name: str, spout: str,
                                                               spouts: dict, bolts: dict) -> None:
    folder = tmp_path / "hdinsight"
    shutil.copytree(WILD / "hdinsight-eventhub", folder)
    flux, props = folder / name, folder / "dev.properties"
    source = flux.read_text(encoding="utf-8")
    doc = tmp_path / "doc.storm.json"
    code, out, err = run(capsys, "import", "flux", str(flux), "--filter", str(props), "-o", str(doc))
    assert code == 0, err
    assert load_topology(doc).spouts[0].executors == 2  # eventhub.partitions = 2, substituted
    code, out, err = run(capsys, "export", "flux", str(doc), str(tmp_path / "same.yaml"))
    assert code == 0 and (tmp_path / "same.yaml").read_text(encoding="utf-8") == source, err
    for component, values in {**spouts, **bolts}.items():
        assert run(capsys, "annotate", str(doc), component, *values)[0] == 0
    code, out, err = run(capsys, "verify", str(doc))
    assert code == 1 and "log-bolt: grows" in out, out + err  # the slow logger: a certified lasso
    # the repair changes log-bolt's literal parallelism only; ${eventhub.partitions} stays in the file
    repaired = folder / "repaired.yaml"
    code, out, err = run(capsys, "repair", str(flux), "--filter", str(props), "--parallelism", "log-bolt=8",
                         "--topology", str(doc), "-o", str(repaired))
    assert code == 0, err
    changes = changed_lines(source, repaired.read_text(encoding="utf-8"))
    assert changes == ["-    parallelism: 1", "+    parallelism: 8"]
    assert "log-bolt: has 1 task" in out and "numTasks: 8 or more on log-bolt" in out  # Storm's side of it
    fixed = json.loads(doc.read_text())
    next(b for b in fixed["bolts"] if b["name"] == "log-bolt")["parallelism"] = 8
    moved = tmp_path / "fixed.storm.json"
    moved.write_text(json.dumps(fixed))
    exported = tmp_path / "exported.yaml"
    assert run(capsys, "export", "flux", str(moved), str(exported))[0] == 0
    assert exported.read_text(encoding="utf-8") == repaired.read_text(encoding="utf-8")
    code, out, _ = run(capsys, "verify", str(moved))
    assert code == 0 and "bounded" in out
    # a value that comes from the properties file is not rewritten in the Flux file: the line says where it is
    code, out, err = run(capsys, "repair", str(flux), "--filter", str(props), "--parallelism",
                         f"{'parser-bolt' if name == 'reader.yaml' else 'eventhub-bolt'}=4", "--topology", str(doc),
                         "-o", str(tmp_path / "refused.yaml"))
    assert code == 2 and "change eventhub.partitions in the properties file" in err
    assert err.count("\n") == 1 and not (tmp_path / "refused.yaml").exists()

"""Issue 32: every line in Storm's terms true on today's clusters (docs/storm.md, "Storm versions").

Real files: the D-VerT configuration simple-DIA-cfg-1 (models/), StormCrawler's crawler.flux and Azure
HDInsight's Event Hubs reader (tests/data/flux/, see its README), with figures computed by hand for Storm 2.x's
defaults (receive queues of 32768 tuples per executor, backpressure always on, message timeout 30 s)."""

from __future__ import annotations

import json
import shutil
from fractions import Fraction
from pathlib import Path

import pytest

from app.cli import main
from app.core.formats import load_topology
from app.core.headroom import headroom
from app.core.storm.flux.builder import import_flux
from app.core.storm.forecast import storm_defaults
from app.core.storm.lines import storm_lines
from app.core.topology import Topology, parse_topology

ROOT = Path(__file__).resolve().parents[2]
WILD = ROOT / "tests" / "data" / "flux"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_storm_versions_set_the_defaults() -> None:
    two = storm_defaults(None)
    assert (two.version, two.given, two.receive_buffer, two.buffer_unit) == ("2.x", False, 32768, "tuples")
    assert two.backpressure_default and not two.backpressure_configurable
    assert storm_defaults("2.6.1").line == "Storm 2.x" and storm_defaults("2.6.1").given
    one_two = storm_defaults("1.2.3")
    assert (one_two.receive_buffer, one_two.buffer_unit, one_two.backpressure_default) == (1024, "slots", False)
    assert one_two.backpressure_configurable and one_two.line == "Storm 1.2"
    assert storm_defaults("1.0.2").backpressure_default  # on by default in 1.0 only
    assert not storm_defaults("0.9.2-incubating-SNAPSHOT").backpressure_default  # none before 1.0


def test_cfg1_fills_in_109_hours_on_storm_2_and_3_41_on_storm_1(capsys) -> None:
    """B2 gains 0.5 tuples/s over 6 executors: 6 × 32768 / 0.5 = 393216 s = 109.2 h on Storm 2.x (3.41 h with
    Storm 1.x's 1024 slots: 12288 s, a lower bound since a slot holds a batch)."""
    cfg1 = str(ROOT / "models" / "simple-DIA-cfg-1.storm.json")
    h = headroom(load_topology(cfg1))
    assert h.storm is not None
    (b2,) = h.storm.queues
    assert (b2.bolt, b2.executors, b2.growth, b2.slots) == ("B2", 6, Fraction(1, 2), 6 * 32768)
    assert b2.seconds_to_full == 393216
    code, out, _ = run(capsys, "check", cfg1)
    assert code == 0
    assert "assuming Storm 2.x (no version given" in out and "backpressure always on (Storm 2.x)" in out
    assert "B2's receive queues (6 executors × 32768 tuples, Storm 2.x's default) fill in about 109 h" in out
    assert "surely growing above ×0.75 at nominal timing" in out
    code, out, _ = run(capsys, "check", cfg1, "--storm-version", "1.2.3")
    assert code == 0 and "assuming Storm 1.2.3:" in out
    assert "B2's receive queues (6 executors × 1024 slots, Storm 1.2's default) fill in at least about 3.41 h" in out
    assert "backpressure is off" in out  # 1.1 and 1.2: off unless the config turns it on
    code, out, _ = run(capsys, "check", cfg1, "--json", "--storm-version", "2.6.1")
    storm = json.loads(out)["headroom"]["storm"]
    assert storm["storm_version"] == "2.6.1" and storm["storm_version_given"] and storm["receive_buffer"] == 32768
    assert run(capsys, "check", cfg1, "--storm-version", "two")[0] == 2


def _crawler(acker_executors: int | None = None) -> Topology:
    """StormCrawler's crawler.flux (max.spout.pending 100, 10 spout executors, message timeout 300 s), timed
    so that the status bolt (10 ms a tuple, 100 tuples/s) is the one overloaded bolt. Tuples of one spout
    tuple's tree at status, σ along the paths: fetcher 0.1 + sitemap 0.05 + parse 26 (a status per outlink)
    + tika 0.1 × 0.2 + index (0.9 + 0.1) × 1 = 27.17; the filespout's trees bring 1 each (filter)."""
    topo = import_flux(WILD / "stormcrawler" / "crawler.flux").topology
    data = topo.model_dump(mode="json")
    sigma = {"partitioner": (1, {}), "fetcher": (1, {"status": 0.1}), "sitemap": (1, {"status": 0.05}),
             "parse": (1, {"status": 26}), "shunt": (0.9, {"tika": 0.1}), "tika": (1, {"status": 0.2}),
             "index": (0, {"status": 1}), "status": (0, {"deletion": 0.01}), "filter": (0, {"status": 1}),
             "deleter": (0, {}), "status_metrics": (0, {})}
    for s in data["spouts"]:
        s.update({"rate": {"spout": 10, "filespout": 1}.get(s["name"], 0.1), "burst": 1, "unannotated": []})
        if s["name"] == "filespout":
            s["stream_ratio"] = {"status": 1}
    for b in data["bolts"]:
        value, streams = sigma[b["name"]]
        b.update({"alpha": 0.01 if b["name"] in ("status", "fetcher") else 0.001, "sigma": value,
                  "stream_sigma": streams, "unannotated": []})
    data["storm"]["acker_executors"] = acker_executors
    return parse_topology(data)


def test_the_crawler_says_which_limit_binds_first() -> None:
    """1000 spout trees × 27.17 + 100 filespout trees × 1 = 27270 tuples can ever be queued at status, below its
    32768: its queue never fills, so max.spout.pending throttles, not backpressure. Status takes 100/s of
    10 × 27.17 + 1 × 1 = 272.7: ×100/272.7 = 0.3667; Little's law: 1000 in flight at 3.667/s -> 272.7 s, within
    the 300 s timeout, as is a tuple's wait at status (27270 / 100 = 272.7 s)."""
    h = headroom(_crawler())
    f = h.storm
    assert f is not None and h.grows_at == Fraction(1000, 2727) and h.first_to_saturate == ["status"]
    (status,) = f.queues
    assert status.per_tree["spout"] == (1000, Fraction(2717, 100)) and status.per_tree["filespout"] == (100, 1)
    assert status.pending_bound == 27270 and status.never_fills and f.throttle == "max.spout.pending"
    assert status.wait_when_full == Fraction(2727, 10) and not status.times_out
    text = "\n".join(storm_lines(h))
    assert "max.spout.pending binds first" in text and "with backpressure" not in text
    assert ("status's receive queues (1 executor × 32768 tuples, Storm 2.x's default) never fill: max.spout.pending "
            "lets at most 27270 tuples ever reach them (1000 spout trees × 27.2 + 100 filespout trees × 1 tuples "
            "per tree, assuming every emit is anchored") in text
    assert "spout keeps 1000 tuples in flight at 3.67 tuples/s, so each waits about 4.54 min" in text


def test_without_ackers_max_spout_pending_throttles_nothing() -> None:
    """topology.acker.executors: 0 (as Metron's enrichment topology sets it): Storm acks at emit, so there is no
    max.spout.pending line, no tree bound and no timeout; backpressure throttles, and status's queue fills in
    32768 / (272.7 - 100) = 189.7 s."""
    h = headroom(_crawler(acker_executors=0))
    f = h.storm
    assert f is not None and not f.acking and f.acking_source == "off" and f.pending == []
    (status,) = f.queues
    assert status.pending_bound is None and not status.never_fills and not status.times_out
    assert f.throttle == "backpressure" and status.seconds_to_full == Fraction(32768) / Fraction(1727, 10)
    text = "\n".join(storm_lines(h))
    assert "max.spout.pending 100" not in text and "in flight" not in text
    assert "acking off (topology.acker.executors: 0: Storm acks every tuple at emit" in text
    assert "status's receive queues (1 executor × 32768 tuples, Storm 2.x's default) fill in about 3.16 min" in text


def test_the_hdinsight_reader_warns_that_every_tree_times_out(capsys, tmp_path: Path) -> None:
    """The Event Hubs reader has no max.spout.pending: log-bolt (5 ms, 1 executor: 200 tuples/s) receives 300/s;
    once its 32768 tuples are queued each waits 32768 / 200 = 163.84 s against the 30 s default timeout."""
    folder = tmp_path / "hdinsight"
    shutil.copytree(WILD / "hdinsight-eventhub", folder)
    doc = tmp_path / "reader.storm.json"
    assert run(capsys, "import", "flux", str(folder / "reader.yaml"), "--filter", str(folder / "dev.properties"),
               "--storm-version", "2.6.1", "-o", str(doc))[0] == 0
    assert load_topology(doc).storm.storm_version == "2.6.1"
    for component, values in {"eventhub-spout": ("rate=300/s", "burst=1"), "parser-bolt": ("alpha=0.5ms", "sigma=1"),
                              "log-bolt": ("alpha=5ms", "sigma=0")}.items():
        assert run(capsys, "annotate", str(doc), component, *values)[0] == 0
    h = headroom(load_topology(doc))
    assert h.storm is not None and h.storm.max_spout_pending is None and h.storm.pending == []
    (log_bolt,) = h.storm.queues
    assert log_bolt.service_rate == 200 and log_bolt.wait_when_full == Fraction(32768, 200) and log_bolt.times_out
    code, out, _ = run(capsys, "check", str(doc))
    assert code == 0 and "assuming Storm 2.6.1: receive queues of 32768 tuples per executor" in out
    assert ("then each tuple waits 2.73 min in them (at 200 tuples/s), longer than the message timeout (30 s): "
            "every tree through log-bolt times out and its replay piles on") in out


def test_the_version_comes_from_the_flux_config_and_goes_back(tmp_path: Path) -> None:
    from app.core.storm.flux.export import to_flux_bytes

    flux = tmp_path / "t.yaml"
    flux.write_text('name: t\nconfig:\n  stormbound.storm_version: "1.2.3"\n  topology.acker.executors: 0\n'
                    "spouts:\n  - {id: s, className: S}\nbolts:\n  - {id: b, className: B}\n"
                    "streams:\n  - {from: s, to: b, grouping: {type: SHUFFLE}}\n")
    topo = import_flux(flux).topology
    assert topo.storm.storm_version == "1.2.3" and "stormbound.storm_version" not in topo.storm.config
    again = tmp_path / "again.yaml"
    again.write_bytes(to_flux_bytes(topo))
    assert import_flux(again).topology.storm.storm_version == "1.2.3"


# ---- point 8: a round trip that cannot deploy the wrong thing ----------------------------------------------


def _crawler_project(tmp_path: Path) -> Path:
    """StormCrawler's crawler as a project lays it out: crawler-default.yaml is a classpath resource in
    src/main/resources, not beside crawler.flux."""
    project = tmp_path / "project"
    (project / "src" / "main" / "resources").mkdir(parents=True)
    for name in ("crawler.flux", "crawler-conf.yaml", "opensearch-conf.yaml"):
        shutil.copy(WILD / "stormcrawler" / name, project / name)
    shutil.copy(WILD / "stormcrawler" / "crawler-default.yaml", project / "src" / "main" / "resources")
    return project


def test_check_of_a_flux_file_gives_the_resources_it_needs(capsys, tmp_path: Path) -> None:
    project = _crawler_project(tmp_path)
    code, _, err = run(capsys, "check", str(project / "crawler.flux"))
    resources = project / "src" / "main" / "resources"
    assert code == 2 and f"stormbound import flux {project / 'crawler.flux'} --resources {resources} -o " in err
    code, _, err = run(capsys, "check", str(WILD / "hdinsight-eventhub" / "reader.yaml"))
    assert code == 2 and "--filter FILE.properties -o reader.storm.json" in err  # parallelism: ${eventhub.partitions}


def test_a_moved_folder_keeps_export_flux_a_faithful_round_trip(capsys, tmp_path: Path) -> None:
    project = _crawler_project(tmp_path)
    resources = project / "src" / "main" / "resources"
    doc = project / "crawler.storm.json"
    assert run(capsys, "import", "flux", str(project / "crawler.flux"), "--resources", str(resources),
               "-o", str(doc))[0] == 0
    stored = json.loads(doc.read_text())["storm"]
    assert stored["flux_file"] == "crawler.flux" and stored["flux_resources"] == ["src/main/resources"]
    moved = tmp_path / "elsewhere" / "project"
    moved.parent.mkdir()
    shutil.move(project, moved)
    data = json.loads((moved / "crawler.storm.json").read_text())
    next(s for s in data["spouts"] if s["name"] == "spout")["executors"] = 12  # a changed spout parallelism
    (moved / "crawler.storm.json").write_text(json.dumps(data))
    out_yaml = tmp_path / "out.yaml"
    code, out, err = run(capsys, "export", "flux", str(moved / "crawler.storm.json"), str(out_yaml))
    assert code == 0 and "a skeleton" not in out, out + err
    source = (moved / "crawler.flux").read_text()
    assert out_yaml.read_text() == source.replace("    parallelism: 10", "    parallelism: 12", 1)
    assert "spouts.spout.parallelism: 10 -> 12" in out
    (moved / "crawler.flux").unlink()  # the Flux file gone: refused, naming it, nothing written
    code, out, err = run(capsys, "export", "flux", str(moved / "crawler.storm.json"), str(tmp_path / "gone.yaml"))
    assert code == 2 and f"storm.flux_file {moved / 'crawler.flux'}" in err and "--skeleton" in err
    assert not (tmp_path / "gone.yaml").exists()
    code, out, _ = run(capsys, "export", "flux", str(moved / "crawler.storm.json"), str(tmp_path / "sk.yaml"),
                       "--skeleton")
    assert code == 0 and "a skeleton" in out


DIAMOND = """name: diamond
spouts:
  - id: source
    className: org.example.Source
    parallelism: 2
bolts:
  - id: left
    className: org.example.Left
    parallelism: 2
    numTasks: 4
  - id: right
    className: org.example.Right
    parallelism: 2
    numTasks: 8
  - id: join
    className: org.example.Join
    parallelism: 1
streams:
  - {from: source, to: left, grouping: {type: SHUFFLE}}
  - {from: source, to: right, grouping: {type: SHUFFLE}}
  - {from: left, to: join, grouping: {type: FIELDS, args: [key]}}
  - {from: right, to: join, grouping: {type: FIELDS, args: [key]}}
"""


def test_repair_raises_num_tasks_with_the_parallelism(capsys, tmp_path: Path) -> None:
    """A diamond whose bolts set numTasks: left 2 -> 6 exceeds its 4 tasks, so numTasks goes to 6 as well
    (Storm would run 4 executors otherwise); right 2 -> 6 stays within its 8 tasks."""
    flux = tmp_path / "diamond.yaml"
    flux.write_text(DIAMOND)
    out = tmp_path / "repaired.yaml"
    code, text, err = run(capsys, "repair", str(flux), "--parallelism", "left=6", "right=6", "-o", str(out))
    assert code == 0, err
    assert "bolts.left.numTasks: 4 -> 6 (raised with the parallelism: Storm runs no more executors than tasks)" \
        in text
    assert out.read_text() == DIAMOND.replace("parallelism: 2\n    numTasks: 4", "parallelism: 6\n    numTasks: 6") \
        .replace("parallelism: 2\n    numTasks: 8", "parallelism: 6\n    numTasks: 8")
    assert "left: has 4 tasks, and rebalance cannot raise its executors above that: redeploy the repaired file, " \
        "which raises its numTasks to 6" in text and "storm rebalance diamond -e right=6" in text
    again = import_flux(out).topology
    assert {b.name: (b.parallelism, b.tasks) for b in again.bolts}["left"] == (6, 6)


def test_a_refused_placeholder_repair_names_the_key_and_its_file(capsys, tmp_path: Path) -> None:
    folder = tmp_path / "hdinsight"
    shutil.copytree(WILD / "hdinsight-eventhub", folder)
    props = folder / "dev.properties"
    code, _, err = run(capsys, "repair", str(folder / "reader.yaml"), "--filter", str(props), "--parallelism",
                       "parser-bolt=4", "-o", str(tmp_path / "x.yaml"))
    assert code == 2 and err.count("\n") == 1
    assert f"comes from ${{eventhub.partitions}}: change eventhub.partitions in the properties file {props} line 6" \
        in err


# ---- point 6: a saturated topology on the Storm UI ------------------------------------------------------


def _server():
    import sys

    sys.path.insert(0, str(ROOT / "tests"))
    from storm_ui_server import SATURATED_LAG_GROWTH, StormUIServer

    return StormUIServer, SATURATED_LAG_GROWTH


def test_a_saturated_storm_ui_is_flagged_overloaded_with_the_lags_growth(capsys, tmp_path: Path) -> None:
    """The stand-in UI (127.0.0.1, stopped on leaving the block) shows count at capacity 0.996 with 9000 failed
    tuples and a 24.8 s complete latency; its measured rates put count at ρ 1.00 (40 sentences/s, σ 5: 200/s
    against 1/5 ms = 200/s). Read twice 0.5 s apart, the Kafka lag grows by about 10 tuples/s: the offered load
    is about 50/s, count receives about 250/s and grows above ×200/250 = 0.8."""
    server, growth = _server()
    throttled, offered = tmp_path / "throttled.storm.json", tmp_path / "offered.storm.json"
    with server("saturated") as ui:
        code, out, err = run(capsys, "import", "storm-ui", ui.url, "--topology", "wordcount", "-o", str(throttled))
        assert code == 0, err
        assert ("saturated: count's capacity is 0.996 (the Storm UI's capacity, the model's ρ); 9000 spout tuples "
                "failed over the last 600 s (15/s, 0.273 of the tuples acked or failed; timeouts count as failures)"
                "; the complete latency is 24.8 s "
                "against the 30 s message timeout") in out
        assert "give --lag-interval S" in out
        code, out, err = run(capsys, "import", "storm-ui", ui.url, "--topology", "wordcount", "--lag-interval", "0.5",
                             "-o", str(offered))
        assert code == 0, err
        lag_reads = [path for path, _ in ui.requests if path.endswith("/lag")]
    assert len(lag_reads) == 3  # one reading, then two: bounded
    topo = load_topology(throttled)
    assert topo.storm.storm_version == "2.4.0" and topo.storm.observed is not None
    assert topo.storm.observed.failed == 9000 and topo.storm.observed.complete_latency_ms == 24800
    code, out, _ = run(capsys, "check", str(throttled))
    count_row = next(line.split() for line in out.splitlines() if line.startswith("count "))
    assert count_row[3:5] == ["1.00", "may-grow"]  # what the throttled rates alone say
    assert "the Storm UI shows a saturated topology" in out and "the load offered is higher" in out
    doc = load_topology(offered)
    observed = doc.storm.observed
    assert observed is not None and abs(observed.lag_growth["sentences"] - growth) < 2
    assert abs(doc.spouts[0].rate - (40 + observed.lag_growth["sentences"])) < 1e-4
    h = headroom(doc)
    assert h.overloaded and h.first_to_saturate == ["count"] and h.grows_at is not None
    assert abs(float(h.grows_at) - 200 / (5 * doc.spouts[0].rate)) < 1e-6  # about 0.8
    code, out, _ = run(capsys, "check", str(offered))
    assert "grows" in out and "the source's lag grows by" in out and "the offered load, at least" in out


def test_a_handful_of_failures_on_a_busy_healthy_page_is_not_saturation(capsys, tmp_path: Path) -> None:
    """3 spout tuples failed of 240,003 (a complete latency of 12.4 ms, count's capacity 0.42): noise, not the
    thousands a saturated topology times out; the saturated page's 9000 of 32,990 still are."""
    from app.core.storm.forecast import saturation_signs
    from app.core.topology.settings import StormObserved

    server, _ = _server()
    with server("fewfailures") as ui:
        code, out, err = run(capsys, "import", "storm-ui", ui.url, "--topology", "wordcount", "-o",
                             str(tmp_path / "wc.storm.json"))
    assert code == 0, err
    assert "saturated" not in out + err
    topo = load_topology(tmp_path / "wc.storm.json")
    assert topo.storm.observed is not None and topo.storm.observed.failed == 3
    assert saturation_signs(topo.storm.observed, 30) == []
    many = topo.storm.observed.model_copy(update={"failed": 9000, "acked": 23990})
    assert saturation_signs(many, 30) == ["9000 spout tuples failed over the last 600 s (15/s, 0.273 of the tuples "
                                          "acked or failed; timeouts count as failures)"]
    assert saturation_signs(StormObserved(window_seconds=600, failed=3), 30)  # without acked: all that is known


def test_onto_a_flux_file_rebalances_from_the_running_executors(capsys, tmp_path: Path) -> None:
    """The Flux file asks for 6 split executors; the cluster runs 2 (2 tasks). The rebalance lines start from the
    cluster's 2: the suggested 1 scales split down and frees one executor; the groupings are the file's, so the
    import does not say shuffle was assumed."""
    server, _ = _server()
    flux = tmp_path / "wordcount.yaml"
    flux.write_text((ROOT / "models" / "wordcount.flux.yaml").read_text().replace("&splitters 2", "&splitters 6"))
    doc = tmp_path / "wc.storm.json"
    with server("saturated") as ui:
        code, out, err = run(capsys, "import", "storm-ui", ui.url, "--topology", "wordcount", "--onto", str(flux),
                             "-o", str(doc))
    assert code == 0, err
    assert "groupings: the Storm UI does not report them" not in out + err
    assert "bolts.split.parallelism: 6 in the document, 2 executors on the cluster" in out
    topo = load_topology(doc)
    assert topo.storm.running_executors["split"] == 2
    from app.core.storm.rebalance import running_from_document

    assert running_from_document(topo)["split"].executors == 2
    code, out, _ = run(capsys, "check", str(doc), "--json")
    lines = json.loads(out)["rebalance"]
    assert lines[0] == "storm rebalance wordcount -e split=1"
    assert lines[1].startswith("split: scales down from 2 to 1 executor: frees 1 executor thread")


def test_repair_onto_the_running_topology_starts_from_the_running_executors(capsys, tmp_path: Path) -> None:
    server, _ = _server()
    flux = tmp_path / "wordcount.yaml"
    flux.write_text((ROOT / "models" / "wordcount.flux.yaml").read_text().replace("&splitters 2", "&splitters 6"))
    doc = tmp_path / "wc.storm.json"
    with server("saturated") as ui:
        assert run(capsys, "import", "storm-ui", ui.url, "--topology", "wordcount", "--onto", str(flux),
                   "-o", str(doc))[0] == 0
    code, out, err = run(capsys, "repair", str(flux), "--parallelism", "split=1", "--topology", str(doc))
    assert code == 0, err
    assert "storm rebalance wordcount -e split=1" in out and "split: scales down from 2 to 1 executor" in out


def test_check_speaks_storms_words(capsys) -> None:
    """Point 7: the Storm UI's capacity is ρ; the tuples/s column is a service rate; the suggestion is executors."""
    code, out, _ = run(capsys, "check", str(ROOT / "models" / "getting-started.storm.json"))
    header = out.splitlines()[2].split()
    assert code == 0 and " ".join(header) == ("bolt service rate min..max (tuples/s) inflow min..max (tuples/s) "
                                              "capacity ρ status queue bound suggest executors")
    assert "count  2.7..3.33" in out and "1.33        grows" in out


# ---- point 10: annotating a real topology in one command ----------------------------------------------------

CRAWLER_TIMINGS = """# StormCrawler's crawler, timed as in _crawler()
spout: {rate: 10/s, burst: 1}
filespout: {rate: 1/s, burst: 1, ratio.status: 1}
__tick:status_metrics: {rate: 0.1, burst: 1}
filter: {alpha: 1ms, sigma: 0, sigma.status: 1}
partitioner: {alpha: 1ms, sigma: 1}
fetcher: {alpha: 10ms, sigma: {default: 1, status: 0.1}}
sitemap: {alpha: 1ms, sigma: 1, sigma.status: 0.05}
parse: {alpha: 1ms, sigma: 1, sigma.status: 26}
shunt: {alpha: 1ms, sigma: 0.9, sigma.tika: 0.1}
tika: {alpha: 1ms, sigma: 1, sigma.status: 0.2}
index: {alpha: 1ms, sigma: 0, sigma.status: 1}
status: {alpha: 10ms, sigma: 0, sigma.deletion: 0.01}
deleter: {alpha: 1ms, sigma: 0}
status_metrics: {alpha: 1ms, sigma: 0}
"""


def test_a_timings_file_annotates_the_whole_crawler_in_one_command(capsys, tmp_path: Path) -> None:
    doc = tmp_path / "crawler.storm.json"
    assert run(capsys, "import", "flux", str(WILD / "stormcrawler" / "crawler.flux"), "-o", str(doc))[0] == 0
    timings = tmp_path / "timings.yaml"
    timings.write_text(CRAWLER_TIMINGS)
    code, out, err = run(capsys, "annotate", str(doc), "--from", str(timings))
    assert code == 0, err
    assert "bolts.fetcher.alpha: not annotated -> 10 ms" in out and "still not annotated" not in out
    topo = load_topology(doc)
    expected = _crawler()
    mine = {c.name: (c.model_dump(exclude={"id", "unannotated"})) for c in topo.components}
    assert mine == {c.name: c.model_dump(exclude={"id", "unannotated"}) for c in expected.components}
    h = headroom(topo)
    assert h.storm is not None and h.storm.queues[0].pending_bound == 27270  # the figures of point 3 again


def test_a_csv_and_a_bad_value_name_their_line(capsys, tmp_path: Path) -> None:
    folder = tmp_path / "hdinsight"
    shutil.copytree(WILD / "hdinsight-eventhub", folder)
    doc = tmp_path / "reader.storm.json"
    assert run(capsys, "import", "flux", str(folder / "reader.yaml"), "--filter", str(folder / "dev.properties"),
               "-o", str(doc))[0] == 0
    timings = tmp_path / "timings.csv"
    timings.write_text("component,rate,burst,alpha,sigma\neventhub-spout,300/s,1,,\nparser-bolt,,,0.5ms,1\n"
                       "log-bolt,,,5ms,0\n")
    code, out, err = run(capsys, "annotate", str(doc), "--from", str(timings))
    assert code == 0, err
    (log_bolt,) = headroom(load_topology(doc)).storm.queues  # type: ignore[union-attr]
    assert log_bolt.wait_when_full == Fraction(32768, 200)  # point 4's figure, from one command
    timings.write_text("component,alpha\nlog-bolt,5 parsecs\n")
    code, _, err = run(capsys, "annotate", str(doc), "--from", str(timings))
    assert code == 2 and err.count("\n") == 1 and "bolts.log-bolt.alpha" in err and str(timings) in err


def test_the_storm_ui_tables_annotate_a_flux_import(capsys, tmp_path: Path) -> None:
    """The Storm UI's topology page saved as JSON, or its Bolts and Spouts tables copied from the page: the
    sentences spout emitted 24020 tuples in 10 min (40.03/s); split executed 24000 in 5 ms each, emitting 5 per
    sentence."""
    doc = tmp_path / "wc.storm.json"
    assert run(capsys, "import", "flux", str(ROOT / "models" / "wordcount.flux.yaml"), "-o", str(doc))[0] == 0
    page = tmp_path / "page.json"
    shutil.copy(ROOT / "tests" / "data" / "storm-ui" / "topology.json", page)
    code, out, err = run(capsys, "annotate", str(doc), "--from", str(page))
    assert code == 0, err
    topo = load_topology(doc)
    split = topo.bolt_by_name("split")
    assert abs(topo.spouts[0].rate - 24020 / 600) < 1e-6 and split.alpha == 0.005 and split.sigma == 5
    copied = tmp_path / "tables.tsv"
    copied.write_text("Id\tExecutors\tTasks\tEmitted\tTransferred\tComplete latency (ms)\tAcked\tFailed\n"
                      "sentences\t1\t1\t30,000\t30,000\t31.250\t23,990\t0\n\n"
                      "Id\tExecutors\tTasks\tEmitted\tTransferred\tCapacity (last 10m)\tExecute latency (ms)\t"
                      "Executed\tProcess latency (ms)\tAcked\tFailed\n"
                      "split\t2\t2\t120,000\t120,000\t0.100\t4.000\t30,000\t5.212\t24,000\t0\n")
    code, out, err = run(capsys, "annotate", str(doc), "--from", str(copied))
    assert code == 0, err
    topo = load_topology(doc)
    assert topo.spouts[0].rate == 50 and topo.bolt_by_name("split").alpha == 0.004
    assert topo.bolt_by_name("split").sigma == 4


SHARED_FLUX = ROOT / "tests" / "data" / "flux" / "storm-examples"  # Apache Storm's Flux examples


def _storm_examples() -> list[Path]:
    return sorted(p for p in SHARED_FLUX.glob("*.yaml") if p.name != "existing-topology.yaml")


@pytest.mark.parametrize("example", _storm_examples(), ids=lambda p: p.name)
def test_storm_examples_export_a_changed_spout_parallelism_from_a_moved_folder(capsys, tmp_path: Path,
                                                                               example: Path) -> None:
    """Point 8 on Storm's own Flux examples: imported with -o into the folder, the folder moved, every spout's
    executors raised by 2: export flux writes the file with only those spouts' parallelism changed (a spout
    without `parallelism` gets the line)."""
    shutil.copytree(SHARED_FLUX, tmp_path / "flux")
    flux = tmp_path / "flux" / example.name
    doc = tmp_path / "flux" / "doc.storm.json"
    args = ["import", "flux", str(flux), "-o", str(doc)]
    if example.name == "simple_hdfs.yaml":
        args += ["--filter", str(tmp_path / "flux" / "hdfs_bolt.properties")]
    assert run(capsys, *args)[0] == 0
    moved = tmp_path / "moved"
    shutil.move(tmp_path / "flux", moved)
    data = json.loads((moved / "doc.storm.json").read_text())
    for s in data["spouts"]:
        if not s["name"].startswith("__tick:"):
            s["executors"] = (s.get("executors") or 1) + 2
    (moved / "doc.storm.json").write_text(json.dumps(data))
    out = tmp_path / "out.yaml"
    code, text, err = run(capsys, "export", "flux", str(moved / "doc.storm.json"), str(out))
    assert code == 0 and "a skeleton" not in text, text + err
    source = (moved / example.name).read_text(encoding="utf-8")
    changes = changed_lines(source, out.read_text(encoding="utf-8"))
    here = [v for v in import_flux(moved / example.name, options_of_doc(moved / "doc.storm.json")).document
            .spouts.values() if v.file == (moved / example.name).resolve()]
    if not here:  # include_test.yaml: its spout lives in the included file, which an export leaves alone (noted)
        assert changes == [] and "defined in an included file" in err
        return
    assert changes and all("parallelism" in line for line in changes), changes
    again = import_flux(out, options_of_doc(moved / "doc.storm.json")).topology
    assert {s.name: s.executors for s in again.spouts} == {s["name"]: s["executors"] for s in data["spouts"]
                                                           if not s["name"].startswith("__tick:")}


def changed_lines(before: str, after: str) -> list[str]:
    import difflib

    return [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def options_of_doc(doc: Path):  # noqa: ANN201 - FluxOptions
    from app.core.storm.flux.origin import options_of, resolved_paths

    return options_of(resolved_paths(load_topology(doc), doc))


def test_a_bounded_queue_whose_wait_exceeds_the_timeout_is_warned(capsys, tmp_path: Path) -> None:
    """Point 4 where the rate check gives a queue bound (failures on): models/failover with C failing every 100 s
    at the soonest proves A bounded with its queue below 9.82 tuples; at A's 1/0.9 = 1.11 tuples/s a tuple
    waits up to 9.82 × 0.9 = 8.84 s: over a 5 s message timeout, within the default 30 s."""
    data = json.loads((ROOT / "models" / "failover.storm.json").read_text())
    data["bolts"][1]["min_ttf"] = 100
    doc = tmp_path / "fo.storm.json"
    doc.write_text(json.dumps(data))
    assert headroom(load_topology(doc)).timeout_risks == []  # 30 s, Storm's default
    data.setdefault("storm", {})["message_timeout_secs"] = 5
    doc.write_text(json.dumps(data))
    (risk,) = headroom(load_topology(doc)).timeout_risks
    assert risk.bolt == "A" and abs(float(risk.wait) - float(risk.queue_bound) * 0.9) < 1e-9
    assert 8.8 < float(risk.wait) < 8.9
    code, out, _ = run(capsys, "check", str(doc))
    assert code == 0 and "A's queue stays below 9.82 tuples, but a tuple may wait up to 8.84 s in it" in out
    data["settings"]["replay"] = "none"  # no acking: nothing times out
    doc.write_text(json.dumps(data))
    assert headroom(load_topology(doc)).timeout_risks == []



def test_a_timeout_risk_the_latency_proof_rules_out_is_not_said(capsys, tmp_path: Path) -> None:
    """The queue bound drained at the smallest service rate is one bound on a tuple's stay (A: 9.82 tuples at
    1.11 tuples/s, 8.84 s, over an 8 s timeout); the sojourn bound of docs/latency.md is a sharper one (A: 7.9 s).
    `check` and `verify` must not say trees through A can time out where the latency block proves they cannot."""
    data = json.loads((ROOT / "tests" / "data" / "workers" / "acker-death.storm.json").read_text())
    data["storm"]["message_timeout_secs"] = 8
    doc = tmp_path / "acker-death-8.storm.json"
    doc.write_text(json.dumps(data))
    (risk,) = headroom(load_topology(doc)).timeout_risks  # the estimate alone would warn
    assert risk.bolt == "A" and risk.wait > risk.timeout == 8
    code, out, _ = run(capsys, "check", "--json", str(doc))
    data = json.loads(out)
    assert Fraction(data["latency"]["sojourn_exact"]["A"]) <= 8
    assert "timeouts" not in data["headroom"]
    for command in ("check", "verify"):
        code, out, _ = run(capsys, command, str(doc))
        # (A's stay is proven within 8 s; the whole tree, 8.11 s, is not, and the latency block says so)
        assert "may wait up to" not in out and "trees through A can time out" not in out, command
    room = headroom(load_topology(doc)).within_sojourns({"A": "11"})  # a proof above the timeout keeps the risk
    assert [r.bolt for r in room.timeout_risks] == ["A"]

SPLIT_JOIN = """# a split-join enrichment topology in the shape of Apache Metron's (written for this test)
name: "enrichment"
config:
  topology.workers: ${enrichment.workers}
  topology.acker.executors: ${enrichment.acker.executors}
  topology.max.spout.pending: ${enrichment.max.spout.pending}
spouts:
  - id: "kafkaSpout"
    className: "org.apache.storm.kafka.spout.KafkaSpout"
    parallelism: ${kafka.spout.parallelism}
bolts:
  - id: "enrichmentSplitBolt"
    className: "org.example.SplitBolt"
    parallelism: 1
  - id: "geoEnrichmentBolt"
    className: "org.example.GeoBolt"
    parallelism: 1
  - id: "hostEnrichmentBolt"
    className: "org.example.HostBolt"
    parallelism: 1
  - id: "enrichmentJoinBolt"
    className: "org.example.JoinBolt"
    parallelism: 1
streams:
  - {from: kafkaSpout, to: enrichmentSplitBolt, grouping: {type: LOCAL_OR_SHUFFLE}}
  - {from: enrichmentSplitBolt, to: geoEnrichmentBolt, grouping: {type: FIELDS, args: [key], streamId: geo}}
  - {from: enrichmentSplitBolt, to: hostEnrichmentBolt, grouping: {type: FIELDS, args: [key], streamId: host}}
  - {from: enrichmentSplitBolt, to: enrichmentJoinBolt, grouping: {type: FIELDS, args: [key], streamId: message}}
  - {from: geoEnrichmentBolt, to: enrichmentJoinBolt, grouping: {type: FIELDS, args: [key], streamId: geo}}
  - {from: hostEnrichmentBolt, to: enrichmentJoinBolt, grouping: {type: FIELDS, args: [key], streamId: host}}
"""


def test_a_split_join_with_zero_ackers_from_its_properties_has_no_max_spout_pending_line(capsys,
                                                                                         tmp_path: Path) -> None:
    """Point 2 with the settings from a properties file (--filter): 0 ackers, max.spout.pending 500 over 1 spout
    executor. The join (2 ms, 500 tuples/s) receives 3 tuples per message (message, geo, host) of 200/s: 600/s,
    so it grows above ×500/600; Storm acks at emit, so no "500 tuples in flight" line, no timeout."""
    flux, props = tmp_path / "enrichment.yaml", tmp_path / "enrichment.properties"
    flux.write_text(SPLIT_JOIN)
    props.write_text("enrichment.workers=1\nenrichment.acker.executors=0\nenrichment.max.spout.pending=500\n"
                     "kafka.spout.parallelism=1\n")
    doc = tmp_path / "enrichment.storm.json"
    assert run(capsys, "import", "flux", str(flux), "--filter", str(props), "-o", str(doc))[0] == 0
    timings = tmp_path / "timings.yaml"
    timings.write_text("kafkaSpout: {rate: 200/s, burst: 1}\n"
                       "enrichmentSplitBolt: {alpha: 1ms, sigma: 0, sigma.geo: 1, sigma.host: 1, sigma.message: 1}\n"
                       "geoEnrichmentBolt: {alpha: 1ms, sigma: 0, sigma.geo: 1}\n"
                       "hostEnrichmentBolt: {alpha: 1ms, sigma: 0, sigma.host: 1}\n"
                       "enrichmentJoinBolt: {alpha: 2ms, sigma: 1}\n")
    assert run(capsys, "annotate", str(doc), "--from", str(timings))[0] == 0
    topo = load_topology(doc)
    assert topo.storm.acker_executors == 0 and topo.storm.max_spout_pending == 500
    h = headroom(topo)
    assert h.grows_at == Fraction(5, 6) and h.first_to_saturate == ["enrichmentJoinBolt"]
    assert h.storm is not None and not h.storm.acking and h.storm.pending == [] and h.storm.throttle == "backpressure"
    code, out, _ = run(capsys, "check", str(doc))
    assert "tuples in flight" not in out and "max.spout.pending 500" not in out
    assert "acking off (topology.acker.executors: 0: Storm acks every tuple at emit" in out

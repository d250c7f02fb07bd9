"""`stormbound import flux | storm-ui`, `export flux`, `repair`: exit codes, one-line errors, nothing written on
failure, and the whole way round: a Flux file and a running cluster in, verified, repaired, back into the Flux file."""

from __future__ import annotations

import difflib
import json
import shutil
from pathlib import Path

import pytest
from storm_ui_server import StormUIServer

from app.cli import main
from app.core.formats import load_topology
from app.core.storm.flux.builder import import_flux

ROOT = Path(__file__).resolve().parents[2]
WORDCOUNT_FLUX = ROOT / "models" / "wordcount.flux.yaml"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def changed_lines(before: str, after: str) -> list[str]:
    return [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]


@pytest.fixture()
def flux_copy(tmp_path: Path) -> Path:
    target = tmp_path / "wordcount.yaml"
    shutil.copy(WORDCOUNT_FLUX, target)
    return target


def test_import_flux_writes_a_document_marking_what_flux_lacks(capsys, flux_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "wc.storm.json"
    code, stdout, err = run(capsys, "import", "flux", str(flux_copy), "-o", str(out))
    assert code == 0, err
    assert "spouts.sentences.rate: not annotated" in stdout and f"wrote {out}" in stdout
    data = json.loads(out.read_text())
    # relative to the document: a folder moved with both keeps them (docs/storm.md, "Export")
    assert data["storm"]["max_spout_pending"] == 1000 and data["storm"]["flux_file"] == "wordcount.yaml"
    assert {b["name"]: b["unannotated"] for b in data["bolts"]} == {
        "split": ["alpha", "sigma"], "count": ["alpha", "sigma"], "report": ["alpha"]}


def test_import_flux_without_output_prints_the_document(capsys, flux_copy: Path) -> None:
    code, stdout, err = run(capsys, "import", "flux", str(flux_copy))
    assert code == 0 and json.loads(stdout)["name"] == "wordcount"
    assert "not annotated" in err


def test_check_lists_and_verify_refuses_unannotated_values(capsys, flux_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "wc.storm.json"
    assert run(capsys, "import", "flux", str(flux_copy), "-o", str(out))[0] == 0
    code, stdout, err = run(capsys, "check", str(out))
    assert code == 2 and stdout == ""
    assert f"{out}: bolts.split.alpha: not annotated\n" in err
    assert err.count("not annotated") == 7
    code, _, err = run(capsys, "verify", str(out))
    assert code == 2 and f"{out}: bolts.count.alpha: not annotated" in err
    code, _, err = run(capsys, "repair", str(flux_copy), "--parallelism", "suggested")
    assert code == 2 and "bolts.split.alpha: not annotated" in err


@pytest.mark.parametrize(("text", "message"), [
    ("name: t\nspouts: [ {id: s\n", "line 3: spouts: not valid YAML"),
    ("name: t\nspouts:\n  - {id: s, className: S}\nbolts:\n  - {id: b, className: B}\nstreams:\n"
     "  - {from: s, to: b, grouping: {type: BROADCAST}}\n", "line 7: streams[0].grouping.type: unknown grouping"),
    ("name: t\nincludes:\n  - file: bad.yaml\n", "line 3: includes[0].file: cyclic include"),
    ("name: t\nincludes:\n  - file: absent.yaml\n", "line 3: includes[0].file: included file absent.yaml not found"),
    ("name: t\nspouts:\n  - {id: s, className: S}\nbolts:\n  - id: b\n    className: B\n    parallelism: ${nobody}\n"
     "streams:\n  - {from: s, to: b, grouping: {type: SHUFFLE}}\n",
     "line 7: bolts.b.parallelism: ${nobody} is not defined"),
    ("name: t\nspouts: []\nconfig:\n  deep: " + "[" * 500 + "]" * 500 + "\n", "line 4: config: nested too deeply"),
    ("config:\n  x: &a [*a, *a]\n" + "".join(f"  y{i}: &y{i} [" + ", ".join([f"*y{i-1}" if i else "*a"] * 10) + "]\n"
                                             for i in range(8)) + "spouts: []\n", "expands to more than"),
])
def test_bad_flux_is_one_line_exit_2_and_nothing_written(capsys, tmp_path: Path, text: str, message: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    out = tmp_path / "out.storm.json"
    code, stdout, err = run(capsys, "import", "flux", str(bad), "-o", str(out))
    assert code == 2 and stdout == ""
    assert err.count("\n") == 1 and err.startswith(f"{bad}: ") and message in err
    assert not out.exists()


def test_import_with_filter_env_and_resources(capsys, tmp_path: Path, monkeypatch) -> None:
    resources = tmp_path / "res" / "configs"
    resources.mkdir(parents=True)
    shutil.copy(WORDCOUNT_FLUX, resources / "wordcount.yaml")
    (tmp_path / "main.yaml").write_text("name: ${topo.name}\nconfig:\n  topology.workers: ${ENV-WORKERS}\n"
                                        "includes:\n  - resource: true\n    file: /configs/wordcount.yaml\n")
    (tmp_path / "p.properties").write_text("topo.name = from-properties\n")
    monkeypatch.setenv("WORKERS", "5")
    out = tmp_path / "o.storm.json"
    code, _, err = run(capsys, "import", "flux", str(tmp_path / "main.yaml"),
                       "--filter", str(tmp_path / "p.properties"),
                       "--env", "--resources", str(tmp_path / "res"), "-o", str(out))
    assert code == 0, err
    topo = load_topology(out)
    assert topo.name == "from-properties" and topo.storm.workers == 5 and len(topo.bolts) == 3
    code, _, err = run(capsys, "import", "flux", str(tmp_path / "main.yaml"), "--resources", str(tmp_path / "nowhere"))
    assert code == 2 and "--resources" in err and "no such folder" in err


def test_export_flux_then_import(capsys, tmp_path: Path) -> None:
    out = tmp_path / "dia.yaml"
    code, stdout, err = run(capsys, "export", "flux", str(ROOT / "models" / "simple-DIA-cfg-1.storm.json"), str(out))
    assert code == 0 and f"wrote {out}" in stdout and "stormbound.placeholder" in err
    model = load_topology(ROOT / "models" / "simple-DIA-cfg-1.storm.json")
    assert import_flux(out).topology.semantics() == model.semantics()


def test_export_and_import_flux_both_take_o_and_out(capsys, tmp_path: Path) -> None:
    """`export flux` takes its output as import's does (-o / --out); the positional OUT.yaml still works."""
    model = str(ROOT / "models" / "simple-DIA-cfg-1.storm.json")
    for option in ("-o", "--out", "--output"):
        out = tmp_path / f"dia{option}.yaml"
        code, stdout, err = run(capsys, "export", "flux", model, option, str(out))
        assert code == 0 and f"wrote {out}" in stdout and out.exists(), err
        back = tmp_path / f"back{option}.storm.json"
        code, _, err = run(capsys, "import", "flux", str(out), option, str(back))
        assert code == 0 and back.exists(), err
    code, _, err = run(capsys, "export", "flux", model, str(tmp_path / "a.yaml"), "-o", str(tmp_path / "b.yaml"))
    assert code == 2 and "two output files" in err and not (tmp_path / "a.yaml").exists()
    code, _, err = run(capsys, "export", "flux", model)
    assert code == 2 and "-o OUT.yaml" in err


def test_repair_dry_run_copy_and_errors(capsys, flux_copy: Path, tmp_path: Path) -> None:
    before = flux_copy.read_text()
    code, stdout, err = run(capsys, "repair", str(flux_copy), "--parallelism", "count=4", "report=2")
    assert code == 0 and "+    parallelism: 4    # one counter: the bottleneck" in stdout and "dry run" in err
    assert flux_copy.read_text() == before
    copy = tmp_path / "copy.yaml"
    assert run(capsys, "repair", str(flux_copy), "--parallelism", "count=4", "-o", str(copy))[0] == 0
    assert changed_lines(before, copy.read_text()) == ["-    parallelism: 1    # one counter: the bottleneck",
                                                       "+    parallelism: 4    # one counter: the bottleneck"]
    code, _, err = run(capsys, "repair", str(flux_copy), "--parallelism", "nope=3", "--in-place")
    assert code == 2 and err.startswith(f"{flux_copy}: bolts.nope: no such bolt") and flux_copy.read_text() == before
    code, _, err = run(capsys, "repair", str(flux_copy), "--parallelism", "count=zero")
    assert code == 2 and "expected suggested, document, or BOLT=N" in err
    code, _, err = run(capsys, "repair", str(flux_copy), "--parallelism", "document")
    assert code == 2 and "needs --topology" in err


def test_flux_and_storm_ui_in_verified_repaired_and_back_into_the_flux_file(capsys, flux_copy: Path,
                                                                             tmp_path: Path) -> None:
    """The whole way: Flux file (3 bolts) + the running cluster's Storm UI -> verify -> repair -> Flux file."""
    doc = tmp_path / "wordcount.storm.json"
    before = flux_copy.read_text()
    assert run(capsys, "import", "flux", str(flux_copy), "-o", str(doc))[0] == 0
    assert run(capsys, "verify", str(doc))[0] == 2  # refused: no timing yet
    with StormUIServer() as ui:
        code, stdout, err = run(capsys, "import", "storm-ui", ui.url, "--topology", "wordcount", "--onto", str(doc),
                                "-o", str(doc))
    assert code == 0, err
    assert "bolts.count.alpha           0.02   20 ms executeLatency" in stdout
    annotated = load_topology(doc)
    assert all(not c.unannotated for c in annotated.components)
    code, stdout, _ = run(capsys, "verify", str(doc))
    assert code == 1 and "count" in stdout  # a certified lasso: count's queue grows
    code, stdout, err = run(capsys, "repair", str(flux_copy), "--parallelism", "suggested", "--topology", str(doc),
                            "--in-place")
    assert code == 0, err
    # count at 200 tuples/s and α 20 ms is 4 executors' work: 5 keep it bounded, 6 keep its capacity at or below
    # the default --target-capacity 0.7 (max_idle_time 0: the imports' default)
    assert f"{flux_copy}: bolts.count.parallelism: 1 -> 6" in stdout
    # Storm's commands beside the edit: rebalance reaches split (2 tasks) but not count (1 task); report keeps its
    # one executor, so nothing is said of it
    assert "  storm rebalance wordcount -e split=1\n" in stdout
    assert ("  count: has 1 task, and rebalance cannot raise its executors above that: redeploy the repaired "
            "file, with numTasks: 6 or more on count to leave room for later rebalances") in stdout
    assert "report" not in stdout.split("storm rebalance", 1)[1]
    after = flux_copy.read_text()
    assert all("parallelism:" in line for line in changed_lines(before, after))
    assert len(before.splitlines()) == len(after.splitlines())
    repaired = import_flux(flux_copy).topology
    wanted = {"split": 1, "count": 6, "report": 1}
    assert {b.name: b.parallelism for b in repaired.bolts} == wanted
    # the repaired parallelism with the measured timing: nothing grows any more
    bolts = [b.model_copy(update={"parallelism": wanted[b.name]}) for b in annotated.bolts]
    fixed = tmp_path / "fixed.storm.json"
    fixed.write_bytes(annotated.model_copy(update={"bolts": bolts}).to_json_bytes())
    code, stdout, _ = run(capsys, "verify", str(fixed))
    assert code == 0 and "bounded" in stdout


def test_run_and_reliability_take_the_documents_storm_settings(capsys, flux_copy: Path, tmp_path: Path,
                                                                monkeypatch) -> None:
    import argparse

    from app.cli import reliability as reliability_cli
    from app.cli import spark_jobs

    doc = tmp_path / "wc.storm.json"
    topo = import_flux(flux_copy).topology
    bolts = [b.model_copy(update={"alpha": 0.01, "sigma": 1.0, "unannotated": []}) for b in topo.bolts]
    spouts = [s.model_copy(update={"rate": 10.0, "unannotated": []}) for s in topo.spouts]
    doc.write_bytes(topo.model_copy(update={"bolts": bolts, "spouts": spouts}).to_json_bytes())
    seen: dict = {}

    class FakeHost:
        def request(self, op, on_progress=None, **params):  # noqa: ANN001, ANN003  # a stand-in for the host client
            seen.update(params["spec"])
            return {"master": "local", "workers": 2, "events": 0, "queue_samples": 0, "out_dir": params["out"]}

        def close(self) -> None:
            pass

    monkeypatch.setattr(spark_jobs, "start_spark_host", lambda master, *a, **k: FakeHost())
    assert run(capsys, "run", str(doc), "--duration", "1", "--out", str(tmp_path / "run"))[0] == 0
    settings = (seen["workers"], seen["acking"], seen["message_timeout_s"], seen["max_spout_pending"])
    assert settings == (2, True, 30.0, 1000)
    assert run(capsys, "run", str(doc), "--duration", "1", "--out", str(tmp_path / "run"), "--ackers", "0",
               "--max-pending", "7")[0] == 0
    assert (seen["acking"], seen["max_spout_pending"]) == (False, 7)
    log = tmp_path / "events.jsonl"
    log.write_text("")
    args = argparse.Namespace(topology=str(doc), timeout=None, max_pending=None, ackers=None)
    config = reliability_cli._reliability_config(args, log)
    assert (config.message_timeout_s, config.max_spout_pending, config.ackers) == (30, 1000, 1)
    unannotated = tmp_path / "raw.storm.json"
    unannotated.write_bytes(topo.to_json_bytes())
    code, _, err = run(capsys, "run", str(unannotated), "--duration", "1", "--out", str(tmp_path / "run2"))
    assert code == 2 and "spouts.sentences.rate: not annotated" in err

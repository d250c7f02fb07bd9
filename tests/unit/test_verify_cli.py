"""`stormbound verify`: exit codes, JSON shape, trace file, bad input in one line."""

from __future__ import annotations

import json
from pathlib import Path

from app.cli import main
from app.core.formats.trace import load_trace
from app.core.tcn.check.certify import certify

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "models"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_counterexample_exit_1_json_and_trace(tmp_path: Path, capsys) -> None:
    trace_path = tmp_path / "lasso.trace.json"
    code, out, err = run(capsys, "verify", str(MODELS / "getting-started.storm.json"), "--k-max", "8",
                         "--json", "--trace-out", str(trace_path))
    assert code == 1, err
    data = json.loads(out)
    assert data["verdict"] == "counterexample" and data["certified"] is True
    assert data["growing"] == ["count"] and data["growth_per_loop"]["count"] > 0
    assert {"k", "loop_start", "elapsed_s", "rate_check"} <= set(data)
    raw = json.loads(trace_path.read_text())
    assert raw["format"] == "stormbound-trace/1" and len(raw["positions"]) == raw["k"] + 2
    assert set(raw["positions"][0]["bolts"]["count"]) == {"queue", "arrivals", "take", "batch", "emit", "emitted",
                                                          "buffer", "phase"}
    assert certify(load_trace(trace_path)).ok


def test_bounded_exit_0_in_words(capsys) -> None:
    code, out, _ = run(capsys, "verify", str(MODELS / "focused-crawler-reduced-cfg-6.storm.json"))
    assert code == 0 and out.startswith("bounded:")


def test_none_up_to_k_exit_0_never_says_bounded(capsys) -> None:
    code, out, _ = run(capsys, "verify", str(MODELS / "focused-crawler-reduced-cfg-6.storm.json"), "--force-search",
                       "--k", "6", "--json")
    data = json.loads(out)
    assert code == 0 and data["verdict"] == "none-up-to-k" and data["k"] == 6
    assert "bounded" not in data["message"].replace("boundedness", "")


def test_reads_dvert_json(capsys) -> None:
    dvert = ROOT / "tests" / "data" / "dvert" / "icfem-focused-crawler-reduced-cfg-5.json"
    if not dvert.exists():
        return
    code, out, _ = run(capsys, "verify", str(dvert), "--json")
    assert code == 0 and json.loads(out)["verdict"] == "bounded"


def test_unknown_exit_4(capsys) -> None:
    code, out, _ = run(capsys, "verify", str(MODELS / "simple-DIA-cfg-2.storm.json"), "--k", "20", "--timeout", "0.3")
    assert code == 4 and out.startswith("unknown")


def test_bad_input_exit_2_one_line(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.storm.json"
    bad.write_text('{"spouts": [{"name": "S", "rate": -1}], '
                   '"bolts": [{"name": "B", "alpha": 1, "sigma": 1, "parallelism": 1}]}')
    code, out, err = run(capsys, "verify", str(bad))
    assert code == 2 and out == "" and "spouts.S.rate" in err and len(err.strip().splitlines()) == 1
    for argv in (["--k", "0"], ["--k", "x"], ["--timeout", "-1"], ["--k", "4", "--k-max", "8"]):
        code, _, err = run(capsys, "verify", str(MODELS / "getting-started.storm.json"), *argv)
        assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    code, _, err = run(capsys, "verify", str(tmp_path / "missing.json"))
    assert code == 2 and "no such file" in err


def test_threshold_property_and_progress(tmp_path: Path, capsys) -> None:
    trace_path = tmp_path / "reach.trace.json"
    code, out, err = run(capsys, "verify", str(MODELS / "getting-started.storm.json"), "--threshold", "3",
                         "--k-max", "8", "--progress", "--trace-out", str(trace_path))
    assert code == 1 and out.startswith("counterexample: the queue of") and "reaches 3" in out
    assert "k = 4" in err  # progress lines go to stderr
    trace = load_trace(trace_path)
    assert trace.loop_start == trace.k + 1  # a prefix witness: no loop
    assert certify(trace, threshold=3).ok


def test_region_clocks_flag_finds_a_certified_lasso(tmp_path: Path, capsys) -> None:
    trace_path = tmp_path / "lasso.trace.json"
    code, out, err = run(capsys, "verify", str(MODELS / "getting-started.storm.json"), "--k-max", "8",
                         "--region-clocks", "--json", "--trace-out", str(trace_path))
    assert code == 1, err
    data = json.loads(out)
    assert data["verdict"] == "counterexample" and data["certified"] is True and data["growing"] == ["count"]
    assert certify(load_trace(trace_path)).ok


def _two_into_one(tmp_path: Path, rate: float) -> Path:
    """A spout of `rate` tuples/s into a bolt that processes one per second (α 1, parallelism 1), max idle 0."""
    doc = {"name": "two-into-one", "spouts": [{"name": "S", "rate": rate, "burst": 1}],
           "bolts": [{"name": "B", "alpha": 1, "sigma": 1, "parallelism": 1}],
           "subscriptions": [{"source": "S", "target": "B"}],
           "settings": {"tolerance": 0.1, "max_idle_time": 0}}
    path = tmp_path / f"two-{rate}.storm.json"
    path.write_text(json.dumps(doc))
    return path


def test_max_idle_0_overload_is_a_certified_counterexample_and_check_agrees(tmp_path: Path, capsys) -> None:
    path = _two_into_one(tmp_path, 2)
    code, out, err = run(capsys, "check", str(path), "--json")
    assert code == 0 and json.loads(out)["bolts"]["B"]["status"] == "grows"
    trace_path = tmp_path / "lasso.json"
    code, out, err = run(capsys, "verify", str(path), "--json", "--trace-out", str(trace_path))
    assert code == 1, err
    assert json.loads(out)["verdict"] == "counterexample" and json.loads(out)["traces"] == [str(trace_path)]
    trace = load_trace(trace_path)
    assert certify(trace).ok
    # back-to-back: with max_idle_time 0 the bolt takes at the very position of its emit
    assert any(p.bolts["B"].take and p.bolts["B"].emit for p in trace.positions)


def test_max_idle_0_overload_is_found_by_the_solver_alone(tmp_path: Path, capsys) -> None:
    code, out, err = run(capsys, "verify", str(_two_into_one(tmp_path, 2)), "--json", "--no-simulation",
                         "--k-max", "8")
    assert code == 1, err
    assert json.loads(out)["bolts"]["B"]["method"] == "solver"


def test_max_idle_0_underload_is_bounded_and_check_agrees(tmp_path: Path, capsys) -> None:
    path = _two_into_one(tmp_path, 0.7)
    code, out, _ = run(capsys, "check", str(path), "--json")
    assert code == 0 and json.loads(out)["bolts"]["B"]["status"] == "bounded"
    code, out, _ = run(capsys, "verify", str(path), "--json")
    assert code == 0 and json.loads(out)["verdict"] == "bounded"
    code, out, _ = run(capsys, "verify", str(path), "--json", "--force-search", "--k-max", "10")
    assert code == 0 and json.loads(out)["verdict"] == "none-up-to-k"


def test_trace_out_without_a_trace_writes_nothing_and_lists_nothing(tmp_path: Path, capsys) -> None:
    trace_path = tmp_path / "lasso.json"
    for argv, verdict in ((["--json"], "bounded"), (["--json", "--force-search", "--k-max", "6"], "none-up-to-k"),
                          (["--json", "--force-search", "--timeout", "0.001"], "unknown")):
        code, out, err = run(capsys, "verify", str(_two_into_one(tmp_path, 0.7)), "--trace-out", str(trace_path),
                             *argv)
        assert code in (0, 4), err
        data = json.loads(out)
        assert data["verdict"] == verdict and data["traces"] == []
        assert not trace_path.exists()
        assert "no trace written" in err


def test_a_large_trace_file_gets_the_hint_to_write_it_gzipped(tmp_path, capsys, monkeypatch) -> None:
    from app.cli import verify as verify_cli

    monkeypatch.setattr(verify_cli, "LARGE_TRACE_BYTES", 100)  # StormCrawler's lasso: 11 MB plain, 97 kB gzipped
    model = str(MODELS / "getting-started.storm.json")
    assert main(["verify", model, "--trace-out", str(tmp_path / "t.json")]) == 1
    assert "a name ending in .gz" in capsys.readouterr().err
    assert main(["verify", model, "--trace-out", str(tmp_path / "t.json.gz")]) == 1
    assert "a name ending in .gz" not in capsys.readouterr().err

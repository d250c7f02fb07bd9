"""The headless front door: exit codes, one-line messages, JSON output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main

ROOT = Path(__file__).resolve().parents[2]
CFG1 = ROOT / "models" / "simple-DIA-cfg-1.storm.json"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_check_prints_table_and_explanations(capsys) -> None:
    code, out, err = run(capsys, "check", str(CFG1))
    assert code == 0 and err == ""
    assert "B2" in out and "grows" in out and "B2 can process 1.5 tuples/s" in out


def test_check_json_shape(capsys) -> None:
    code, out, _ = run(capsys, "check", str(CFG1), "--json")
    data = json.loads(out)
    assert code == 0
    assert data["bolts"]["B2"]["status"] == "grows"
    assert data["least_bounded_parallelism"]["B2"] == 10  # the least proven bounded; suggested: at capacity 0.7
    assert data["suggested_parallelism"]["B2"] == 12 and data["target_capacity"] == 0.7


def test_check_reads_dvert(capsys, dvert_dir: Path) -> None:
    code, out, _ = run(capsys, "check", str(dvert_dir / "icfem-focused-crawler-complete.json"), "--json")
    assert code == 0 and json.loads(out)["bolts"]["expander"]["status"] == "grows"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "file: is empty"),
        ("{not json", "file: not valid JSON"),
        ("[]", "document: expected a JSON object"),
        ('{"spouts": [{"name": "S", "rate": "x"}], "bolts": []}', "spouts.S.rate: input should be a valid number"),
        ('{"spouts": [{"name": "S", "rate": 1}], "bolts": [{"name": "B", "alpha": 0, "sigma": 1, "parallelism": 1}]}',
         "bolts.B.alpha: input should be greater than 0"),
        ('{"spouts": [{"name": "S", "rate": 1}], "bolts": [{"name": "B", "alpha": 1, "sigma": 1, "parallelism": 1}], '
         '"subscriptions": [{"source": "B", "target": "S"}]}', "'S' is a spout"),
    ],
)
def test_bad_input_exit_2_with_one_line(tmp_path: Path, capsys, content: str, message: str) -> None:
    path = tmp_path / "bad.storm.json"
    path.write_text(content)
    code, out, err = run(capsys, "check", str(path))
    assert code == 2 and out == ""
    assert err.startswith(f"{path}: ") and message in err
    assert "Traceback" not in err


def test_missing_file_and_usage_errors(capsys, tmp_path: Path) -> None:
    code, _, err = run(capsys, "check", str(tmp_path / "nope.json"))
    assert code == 2 and "no such file" in err
    code, _, err = run(capsys, "check")
    assert code == 2 and "stormbound:" in err
    code, _, err = run(capsys, "frobnicate")
    assert code == 2


def test_schema_is_json_schema(capsys) -> None:
    code, out, _ = run(capsys, "schema")
    data = json.loads(out)
    assert code == 0 and data["$id"] == "https://stormbound.dev/schema/topology/1"
    assert {"spouts", "bolts", "settings", "$schema"} <= set(data["properties"])


def test_convert_both_ways(tmp_path: Path, capsys, dvert_dir: Path) -> None:
    src = dvert_dir / "icfem-simple-DIA-cfg-2.json"
    ours = tmp_path / "cfg2.storm.json"
    assert run(capsys, "convert", str(src), str(ours))[0] == 0
    back = tmp_path / "cfg2.dvert.json"
    assert run(capsys, "convert", str(ours), str(back))[0] == 0
    data = json.loads(back.read_text())
    assert data["verification_params"]["time_bound"] == 15
    assert data["topology"]["tolerance"] == 0.1
    forced = tmp_path / "plain.json"
    assert run(capsys, "convert", str(ours), str(forced), "--to", "dvert")[0] == 0
    assert "verification_params" in json.loads(forced.read_text())


def test_internal_error_exit_3(monkeypatch, capsys) -> None:
    import app.core.rates

    def broken(_topo):
        raise RuntimeError("boom")

    monkeypatch.setattr(app.core.rates, "RateAnalysis", broken)
    code, _, err = run(capsys, "check", str(CFG1))
    assert code == 3 and "internal error: RuntimeError: boom" in err


def test_python_dash_m_entry_point() -> None:
    proc = subprocess.run([sys.executable, "-m", "app", "check", str(CFG1), "--json"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["bolts"]["B2"]["status"] == "grows"

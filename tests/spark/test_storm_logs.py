"""`analyze` and `compare` from Storm's own events.log, through the Spark host (the CLI as users run it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.storm.flux.builder import import_flux
from tests.conftest import MODELS, ROOT
from tests.unit.test_storm_events import events_log


def _cli(args: list[str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=ROOT, env=dict(os.environ), capture_output=True,
                          text=True, timeout=timeout)


@pytest.mark.spark
def test_spark_host_output_goes_to_the_log_file(tmp_path: Path) -> None:
    """-vv / --log-file: the host's own stderr (the JVM's and Spark's lines) reaches the `stormbound.spark.host`
    logger, and the --json result stays the only thing on stdout."""
    pytest.importorskip("pyspark")
    log = tmp_path / "events.log"
    log.write_text(events_log())
    trail = tmp_path / "stormbound.log"
    done = _cli(["analyze", str(log), "--engine", "spark", "--master", "local[1]", "--json", "--log-file", str(trail)])
    if done.returncode == 2 and ("Java" in done.stdout or "pyspark" in done.stdout):
        pytest.skip(json.loads(done.stdout)["error"]["message"])
    assert done.returncode == 0, done.stdout
    assert json.loads(done.stdout)["kind"] == "analyze"
    text = trail.read_text()
    assert "INFO stormbound.cli: starting the Spark host (master local[1])" in text
    assert "INFO stormbound.cli: Spark job analyze on local[1]" in text
    host_lines = [line for line in text.splitlines() if " DEBUG stormbound.spark.host: " in line]
    assert any("log4j" in line or "WARN" in line for line in host_lines), text[-2000:]


@pytest.mark.spark
def test_analyze_and_compare_an_events_log(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    log = tmp_path / "events.log"
    log.write_text(events_log())
    topo = import_flux(MODELS / "wordcount.flux.yaml").topology
    annotated = topo.model_copy(update={
        "spouts": [s.model_copy(update={"rate": 4.0, "unannotated": []}) for s in topo.spouts],
        "bolts": [b.model_copy(update={"alpha": 0.01, "sigma": 3.0, "unannotated": []}) for b in topo.bolts]})
    doc = tmp_path / "wc.storm.json"
    doc.write_bytes(annotated.to_json_bytes())
    done = _cli(["compare", str(log), "--topology", str(doc), "--json"])  # analyze + the model beside it
    if done.returncode == 2 and ("Java" in done.stdout or "pyspark" in done.stdout):  # --json: the error on stdout
        pytest.skip(json.loads(done.stdout)["error"]["message"])
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    analysis, comparison = out["analysis"], out["comparison"]
    assert analysis["components"]["sentences"]["rate_out"] == pytest.approx(4.0)
    assert analysis["components"]["split"]["sigma"] is None
    assert any("no takes and no acks" in note for note in analysis["notes"])
    rows = {(r["component"], r["parameter"]): r["measured"] for r in comparison["parameters"]}
    assert rows[("sentences", "rate")] == pytest.approx(4.0) and rows[("split", "alpha")] is None

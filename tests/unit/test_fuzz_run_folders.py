"""Fuzzing the readers of Storm run folders (docs/storm-runs.md, docs/limits.md): `polls.jsonl` with odd
values in any poll's pages (the Storm UI's number shapes, from poll 3 on too) or damaged bytes, `queues.jsonl`
samples, `storm-run.json`, and metrics-v2 CSV and Graphite files. `analyze`'s reader of a run folder
(app.measure.storm_figures.storm_run_figures) and `import metrics` must each return a result or refuse with
one printable line (a TopologyError or BadInput), within SLOW_S. CI runs a fixed sample; `make fuzz`
(`pytest -m fuzz`) runs many more random ones."""

from __future__ import annotations

import copy
import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.errors import BadInput
from app.core.topology import TopologyError
from app.measure.storm_figures import storm_run_figures
from app.measure.storm_run import write_metrics_run
from tests.unit.test_fuzz_readers import (
    CONTROL,
    RAW,
    SLOW_S,
    TMP,
    UI_SHAPES,
    WRONG,
    _parent,
    damaged,
    iter_paths,
)
from tests.unit.test_fuzz_readers import SMALL_CI as CI
from tests.unit.test_fuzz_readers import SMALL_FUZZ as FUZZ


def _pages(t: float) -> dict[str, Any]:
    n = round(100 * t)
    return {"topology": {"spouts": [{"spoutId": "s", "executors": 1, "emitted": n, "acked": n, "failed": 0}],
                         "bolts": [{"boltId": "b", "executors": 1, "executed": n, "emitted": n,
                                    "executeLatency": "1.000", "capacity": "0.100"}]},
            "components": {"s": {"outputStats": [{"stream": "default", "emitted": n, "acked": n, "failed": 0}]},
                           "b": {"inputStats": [{"component": "s", "stream": "default", "executed": n,
                                                 "executeLatency": "1.000"}],
                                 "outputStats": [{"stream": "default", "emitted": n}]}},
            "lag": {"s": {"spoutId": "s", "spoutLagResult": {"t": {"0": {"lag": 5}}}}}}


POLLS = [{"poll": i, "t": 1.7e9 + 30 * i, "ok": True, **_pages(30.0 * i)} for i in range(1, 7)]
HEADER = {"format": "stormbound-storm-run/1", "source": "storm-ui", "url": "http://ui:8080", "topology": "t",
          "topology_id": "t-1", "every_s": 30}
QUEUES = [{"t": float(i), "comp": "b", "task": 1, "queue": 2 * i} for i in range(8)]


def _one_line(err: Exception) -> None:
    text = str(err)
    assert "\n" not in text and not CONTROL.search(text) and len(text) < 600, text[:300]
    assert "validation error" not in text, text[:300]


@st.composite
def run_folder(draw: st.DrawFn) -> dict[str, bytes]:
    """A run folder's files: one to three values of any poll (its pages, the lag too) or of a queue sample
    replaced by an odd shape or raw text, or a file's bytes damaged."""
    polls, queues, header = copy.deepcopy(POLLS), copy.deepcopy(QUEUES), dict(HEADER)
    raw: str | None = None
    for _ in range(draw(st.integers(1, 3))):
        root = draw(st.sampled_from([*polls, *queues, header]))
        path = draw(st.sampled_from([p for p in iter_paths(root) if p]))
        shape = draw(st.sampled_from(["ui", "wrong", "raw"]))
        if shape == "raw" and raw is None:
            raw = draw(st.sampled_from(RAW))
            _parent(root, path)[path[-1]] = "\x01raw\x01"
        else:
            _parent(root, path)[path[-1]] = copy.deepcopy(draw(st.sampled_from(UI_SHAPES if shape == "ui" else WRONG)))

    def lines(items: list[Any]) -> bytes:
        text = "".join(json.dumps(item) + "\n" for item in items)
        return (text.replace('"\\u0001raw\\u0001"', raw, 1) if raw is not None else text).encode("utf-8",
                                                                                                  "surrogatepass")

    files = {"storm-run.json": json.dumps(header).encode(), "polls.jsonl": lines(polls),
             "queues.jsonl": lines(queues)}
    name = draw(st.sampled_from(sorted(files)))
    files[name] = draw(damaged(files[name]))
    return files


def _analyze(files: dict[str, bytes]) -> None:
    folder = Path(TMP) / "run-folder"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    for name, data in files.items():
        (folder / name).write_bytes(data)
    start = time.monotonic()
    try:
        storm_run_figures(str(folder))
    except (TopologyError, BadInput) as err:
        _one_line(err)
    assert time.monotonic() - start < SLOW_S


def test_run_folders_refuse_cleanly_or_read() -> None:
    CI(given(run_folder())(_analyze))()


@pytest.mark.fuzz
def test_run_folders_refuse_cleanly_or_read_long() -> None:
    FUZZ(given(run_folder())(_analyze))()


METRIC = "storm.topology.wc-1.host.count.3.6700-receive-queue.population"
ODD = ["nan", "NaN", "1e400", "1e308", "-5", "2.5", "", "abc", "9" * 5000, "-0", "1e19", "\x1b", "x" * 200_000]


@st.composite
def metrics_source(draw: st.DrawFn) -> tuple[str, bytes]:
    """A metrics CSV (header t,value) or Graphite file with an odd cell, a repeated column or damaged bytes."""
    rows = [[str(1_700_000_000 + s), str(s % 7)] for s in range(12)]
    row = draw(st.integers(0, len(rows) - 1))
    rows[row][draw(st.integers(0, 1))] = draw(st.sampled_from(ODD))
    if draw(st.booleans()):
        header = draw(st.sampled_from(["t,value", "t,value,value", "t,t", "value,t", "t", "t,count,mean"]))
        text = header + "\n" + "".join(",".join(r) + "\n" for r in rows)
        return "csv", draw(damaged(text.encode("utf-8", "surrogatepass")))
    text = "".join(f"{METRIC} {v} {t}\n" for t, v in rows)
    return "graphite", draw(damaged(text.encode("utf-8", "surrogatepass")))


def _import(source: tuple[str, bytes]) -> None:
    kind, data = source
    folder = Path(TMP) / "metrics-src"
    out = Path(TMP) / "metrics-run"
    for f in (folder, out):
        shutil.rmtree(f, ignore_errors=True)
    folder.mkdir()
    (folder / (f"{METRIC}.csv" if kind == "csv" else "lines.txt")).write_bytes(data)
    start = time.monotonic()
    try:
        write_metrics_run(folder, out)
        storm_run_figures(str(out))
    except (TopologyError, BadInput) as err:
        _one_line(err)
    assert time.monotonic() - start < SLOW_S


def test_metrics_files_refuse_cleanly_or_read() -> None:
    CI(given(metrics_source())(_import))()


@pytest.mark.fuzz
def test_metrics_files_refuse_cleanly_or_read_long() -> None:
    FUZZ(given(metrics_source())(_import))()

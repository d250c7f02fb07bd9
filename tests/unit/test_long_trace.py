"""A trace's plot series read without its positions (app/core/long_trace.py), compressed or `/1`, are the
series `trace_series` builds from the expanded trace, and bad compressed files are refused naming the item."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.core.formats.trace import CompressedTrace, ExpandError, Trace, expanded_trace, load_trace
from app.core.formats.trace_compress import compress_positions
from app.core.long_trace import read_long_trace
from app.core.tcn.network import build_network
from app.core.tcn.simulate import build_lasso
from app.core.topology import parse_topology
from app.core.trace_series import TraceSeries, trace_series

ROOT = Path(__file__).resolve().parents[2]
TRACES = sorted((ROOT / "tests" / "data" / "traces").glob("*.trace.json"))


def compressed(trace: Trace) -> dict[str, Any]:
    data = trace.model_dump(mode="json")
    return {**data, "format": "stormbound-trace/2", "positions": compress_positions(data["positions"])}


def flat(pairs: list[tuple[float, float]]) -> list[float]:
    return [x for pair in pairs for x in pair]


def same_series(long: TraceSeries, full: TraceSeries) -> None:
    assert long.times == pytest.approx(full.times, rel=1e-12, abs=1e-9)
    assert long.step_times == pytest.approx(full.step_times, rel=1e-12, abs=1e-9)
    assert flat(long.loop_passes) == pytest.approx(flat(full.loop_passes), rel=1e-12, abs=1e-9)
    assert long.senders == full.senders
    assert [b.bolt for b in long.bolts] == [b.bolt for b in full.bolts]
    for mine, theirs in zip(long.bolts, full.bolts, strict=True):
        assert (mine.queue, mine.in_process, mine.growth_per_loop) == (theirs.queue, theirs.in_process,
                                                                      theirs.growth_per_loop), mine.bolt
        assert [(a.label, a.source, a.counts) for a in mine.arrivals] == [(a.label, a.source, a.counts)
                                                                          for a in theirs.arrivals]
        for a, b in zip(mine.arrivals, theirs.arrivals, strict=True):
            assert a.times == pytest.approx(b.times, abs=1e-9)
        assert flat(mine.failed) == pytest.approx(flat(theirs.failed), abs=1e-9)
        assert mine.lost.counts == theirs.lost.counts
    assert [(s.spout, s.backlog, s.replayed.counts) for s in long.spouts] == [
        (s.spout, s.backlog, s.replayed.counts) for s in full.spouts]


@pytest.mark.parametrize("path", TRACES, ids=[p.name for p in TRACES])
@pytest.mark.parametrize("passes", [0, 3])
def test_the_series_of_every_shipped_trace_compressed_are_those_of_the_trace(path: Path, passes: int) -> None:
    trace = load_trace(path)
    full = trace_series(trace, passes)
    long = read_long_trace(compressed(trace), passes)
    same_series(long.series, full)
    assert long.growth_per_loop == trace.growth_per_loop() and long.k == trace.k
    plain = read_long_trace(trace.model_dump(mode="json"), passes)  # a /1 trace: `plot` reads it so too
    same_series(plain.series, full)
    assert plain.names == [*trace.positions[0].spouts, *trace.positions[0].bolts]


def test_a_long_lasso_with_thousands_of_repeats_reads_the_same() -> None:
    doc = {"schema_version": 1, "name": "slow",
           "spouts": [{"id": "s", "name": "S", "rate": 1}],
           "bolts": [{"id": "u", "name": "U", "alpha": 0.5, "sigma": 1, "parallelism": 1},
                     {"id": "b", "name": "B", "alpha": 1.0005, "sigma": 0, "parallelism": 1}],
           "subscriptions": [{"source": "s", "target": "u"}, {"source": "u", "target": "b"}],
           "settings": {"tolerance": 0, "max_idle_time": 0}}
    lasso = build_lasso(build_network(parse_topology(doc), ["B"]), "B")
    assert isinstance(lasso.trace, CompressedTrace) and lasso.trace.k > 10_000  # kept compressed as simulated
    data = lasso.trace.document()
    assert sum("repeat" in item for item in data["positions"]) > 1000  # thousands of repeat items
    assert data["positions"] == compressed(expanded_trace(lasso.trace))["positions"]  # as the writer finds them
    long = read_long_trace(data, 2)
    same_series(long.series, trace_series(expanded_trace(lasso.trace), 2))
    assert long.growth_per_loop["B"] == 1


BAD = {
    "period before the start": (lambda d: d["positions"].insert(1, {"repeat": {"period": 9, "count": 1, "time": "1"}}),
                                "positions.1.repeat.period"),
    "unknown bolt in a repeat": (lambda d: d["positions"].append({"repeat": {"period": 1, "count": 1, "time": "1",
                                                                            "queue": {"nobody": 1}}}),
                                 "positions"),
    "a queue made negative": (lambda d: (d["positions"].append({"repeat": {"period": 1, "count": 1, "time": "1",
                                                                          "queue": {"count": -10**6}}}),
                                         d.update(k=d["k"] + 1)),
                              "negative"),
    "a position without a bolt": (lambda d: d["positions"][0]["bolts"].pop("count"), "positions.0.bolts"),
    "a bad patch": (lambda d: d["positions"].insert(1, {"patch": {"time": "x"}}), "positions.1"),
    "too many": (lambda d: d["positions"].append({"repeat": {"period": 1, "count": 10**9, "time": "1"}}),
                 "more than"),
    "unknown field": (lambda d: d.update(extra=1), "extra"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_broken_compressed_trace_is_refused_naming_the_place(case: str) -> None:
    data = compressed(load_trace(ROOT / "tests" / "data" / "traces" / "getting-started.1.trace.json"))
    data = copy.deepcopy(data)
    change, words = BAD[case]
    change(data)
    with pytest.raises(ExpandError, match=words.replace(".", r"\.")):
        read_long_trace(data)


def test_plot_draws_a_compressed_trace_from_its_series(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = load_trace(ROOT / "tests" / "data" / "traces" / "failure-paced.trace.json")
    source = tmp_path / "t.trace.json"
    source.write_text(json.dumps(compressed(trace)))
    out = tmp_path / "t.png"
    assert main(["plot", str(source), "-o", str(out), "--unroll", "2"]) == 0
    assert out.stat().st_size > 1000 and "loop passes shaded" in capsys.readouterr().out

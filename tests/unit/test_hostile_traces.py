"""Hostile input, round five, on traces, timings YAML and Flux (docs/limits.md, docs/trace-format.md): each
class from its smallest reproducer is refused with exit 2 and one line naming the field, or read whole."""

from __future__ import annotations

import gzip
import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from app.core.formats import FormatError, load_topology
from app.core.formats.trace import ExpandError, expand_trace_data, load_trace, trace_problems
from app.core.formats.trace_compress import compress_positions
from app.core.long_trace import read_long_trace
from tests.unit.test_hostile_inputs import refused, run

ROOT = Path(__file__).resolve().parents[2]
TRACE = ROOT / "tests" / "data" / "traces" / "getting-started.1.trace.json"


def plain_trace() -> dict[str, Any]:
    return json.loads(TRACE.read_text(encoding="utf-8"))


def compressed_trace() -> dict[str, Any]:
    """getting-started's lasso as `stormbound-trace/2`: a position, four patches and a repeat item."""
    data = load_trace(TRACE).model_dump(mode="json")
    items = compress_positions(data["positions"])
    assert any("repeat" in item for item in items)
    return {**data, "format": "stormbound-trace/2", "positions": items}


def repeat_index(data: dict[str, Any]) -> int:
    return next(i for i, item in enumerate(data["positions"]) if "repeat" in item)


def put(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def plot(capsys, trace: Path, tmp_path: Path, says: str, names: str | None = None) -> str:
    return refused(capsys, "plot", str(trace), "-o", str(tmp_path / "out.svg"), says=says, names=names)


# ---- /2 items that crashed the plot (IndexError, OverflowError): exit 2 naming the field ------------------


def test_a_repeat_count_of_minus_one_is_refused_naming_it(capsys, tmp_path: Path) -> None:
    data = compressed_trace()
    i = repeat_index(data)
    data["positions"][i]["repeat"]["count"] = -1
    path = put(tmp_path / "t.json", data)
    plot(capsys, path, tmp_path, says="greater than or equal to 1", names=f"positions.{i}.repeat.count")
    with pytest.raises(FormatError, match=rf"positions\.{i}\.repeat\.count"):
        load_trace(path)


@pytest.mark.parametrize("where", ["repeat.backlog", "repeat.queue", "position.backlog", "position.queue"])
def test_a_count_of_4000_digits_is_refused_naming_it(capsys, tmp_path: Path, where: str) -> None:
    data = compressed_trace()
    i = repeat_index(data)
    if where == "repeat.backlog":
        data["positions"][i]["repeat"]["backlog"] = {"sentences": 10**4000}
        field = f"positions.{i}.repeat.backlog.sentences"
    elif where == "repeat.queue":
        data["positions"][i]["repeat"]["queue"] = {"count": 10**4000}
        field = f"positions.{i}.repeat.queue.count"
    elif where == "position.backlog":
        data["positions"][0]["spouts"]["sentences"]["backlog"] = 10**4000
        field = "positions.0.spouts.sentences.backlog"
    else:
        data["positions"][0]["bolts"]["count"]["queue"] = 2**63 - 1  # past int64 too, not only past 4,000 digits
        field = "positions.0.bolts.count.queue"
    path = put(tmp_path / "t.json", data)
    plot(capsys, path, tmp_path, says="less than or equal to 10000000000", names=field)
    with pytest.raises(FormatError, match=field.replace(".", r"\.")):
        load_trace(path)


# ---- times that go backwards ----------------------------------------------------------------------------


def test_a_plot_of_times_going_backwards_is_refused_naming_the_position(capsys, tmp_path: Path) -> None:
    data = plain_trace()
    data["positions"][2]["time"] = "0"
    path = put(tmp_path / "t.json", data)
    line = plot(capsys, path, tmp_path, says="never go backwards", names="positions.2.time")
    assert "position 1" in line
    problems = trace_problems(load_trace(path))  # the certifier's structural rules say it too
    assert problems and problems[0].path == "positions.2.time"


def test_a_repeat_shifting_times_back_is_refused_naming_it(capsys, tmp_path: Path) -> None:
    data = compressed_trace()
    i = repeat_index(data)
    data["positions"][i]["repeat"]["time"] = "-1"
    path = put(tmp_path / "t.json", data)
    plot(capsys, path, tmp_path, says="is negative", names=f"positions.{i}.repeat.time")
    with pytest.raises(FormatError, match="is negative"):
        load_trace(path)


# ---- .gz: every member read -----------------------------------------------------------------------------


def test_a_two_member_gzip_trace_is_read_whole(capsys, tmp_path: Path) -> None:
    text = json.dumps(compressed_trace()).encode("utf-8")
    path = tmp_path / "t.trace.json.gz"
    half = len(text) // 2
    path.write_bytes(gzip.compress(text[:half]) + gzip.compress(text[half:]))  # `cat a.gz b.gz`
    assert load_trace(path).model_dump() == load_trace(TRACE).model_dump()
    code, out, _err = run(capsys, "plot", str(path), "-o", str(tmp_path / "out.svg"))
    assert code == 0 and "wrote" in out


def test_bytes_after_a_gzip_member_are_refused(capsys, tmp_path: Path) -> None:
    path = tmp_path / "t.trace.json.gz"
    path.write_bytes(gzip.compress(TRACE.read_bytes()) + b"not gzip")
    refused(capsys, "plot", str(path), "-o", str(tmp_path / "out.svg"), says="bytes that are not gzip")


# ---- a trace opened as a topology -----------------------------------------------------------------------


def test_a_broken_trace_checked_as_a_topology_is_refused_as_a_trace(capsys, tmp_path: Path) -> None:
    data = compressed_trace()
    data["positions"][repeat_index(data)]["repeat"]["count"] = -1
    path = put(tmp_path / "t.json", data)
    line = refused(capsys, "check", str(path), says="the file is a stormbound-trace/2 trace, not a topology")
    assert "valid topology" not in line
    with pytest.raises(FormatError, match="trace"):
        load_topology(path)


def test_a_whole_trace_checked_says_it_is_a_trace(capsys, tmp_path: Path) -> None:
    path = put(tmp_path / "t.json", compressed_trace())
    code, out, err = run(capsys, "check", str(path))
    assert code == 0 and "a trace file: reading the topology it runs on" in err and "valid topology" in out


# ---- memory: limits count cells (positions x components), before anything is expanded ----------------------


def wide_trace(bolts: int, count: int) -> dict[str, Any]:
    """One spout feeding `bolts` bolts: two written positions and a repeat item of `count` raising every queue."""
    topology = {"schema_version": 1, "name": "wide",
                "spouts": [{"kind": "spout", "id": "s", "name": "s", "rate": 1.0, "burst": 1}],
                "bolts": [{"kind": "bolt", "id": f"b{i}", "name": f"b{i}", "alpha": 1.0, "sigma": 1.0,
                           "parallelism": 1} for i in range(bolts)],
                "subscriptions": [{"id": f"e{i}", "source": "s", "target": f"b{i}", "grouping": "shuffle",
                                   "fields": []} for i in range(bolts)]}

    def position(t: int) -> dict[str, Any]:
        return {"time": str(t), "spouts": {"s": {"emit": True, "emitted": 1}},
                "bolts": {f"b{i}": {"queue": t, "arrivals": 1, "take": False, "batch": 0, "emit": False,
                                    "emitted": 0, "buffer": 0, "phase": "idle"} for i in range(bolts)}}

    items = [position(0), position(1), {"repeat": {"period": 1, "count": count, "time": "1",
                                                   "queue": {f"b{i}": 1 for i in range(bolts)}}}]
    return {"format": "stormbound-trace/2", "topology": topology, "k": count, "loop_start": count - 1,
            "positions": items}


def test_200_bolts_of_repeats_are_refused_by_cells_before_they_are_expanded(capsys, tmp_path: Path) -> None:
    data = wide_trace(200, 199_991)  # 46 kB that stood for 2.5 GB of plot
    tracemalloc.start()
    with pytest.raises(ExpandError, match="cells, positions x components, with 201 components"):
        read_long_trace(data)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 50 * 2**20  # refused before the positions: a few MB, not gigabytes
    with pytest.raises(ExpandError, match="more than 1000000 cells"):
        expand_trace_data(data)  # what load_trace and the certifier read: its own, smaller limit
    plot(capsys, put(tmp_path / "t.json", data), tmp_path, says="STORMBOUND_MAX_LONG_CELLS", names="positions")


def test_a_wide_trace_within_the_cells_limit_is_plotted(capsys, tmp_path: Path) -> None:
    data = wide_trace(20, 500)
    long = read_long_trace(data, cells=21 * 502)
    assert len(long.series.bolts) == 20 and len(long.series.times) == 502
    assert long.growth_per_loop["b3"] == 2  # a loop of two positions, each one more
    with pytest.raises(ExpandError, match="more than 501 positions"):
        read_long_trace(data, cells=21 * 501)


# ---- timings YAML: the Flux reader's alias limit --------------------------------------------------------


BOMB = "\n".join(["a: &a [x, x, x, x, x, x, x, x, x]"] + [
    f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]" for p, c in zip("abcdef", "bcdefg", strict=True)]) + "\n"


def test_a_timings_alias_bomb_is_refused_as_import_flux_refuses_it(capsys, tmp_path: Path) -> None:
    from app.core.formats.timings import TimingsError, read_timings

    bomb = tmp_path / "t.yaml"
    bomb.write_text(BOMB, encoding="utf-8")
    assert len(BOMB) < 400
    with pytest.raises(TimingsError, match="an alias bomb"):
        read_timings(bomb)
    doc = tmp_path / "d.storm.json"
    doc.write_text((ROOT / "models" / "getting-started.storm.json").read_text(encoding="utf-8"), encoding="utf-8")
    refused(capsys, "annotate", str(doc), "--from", str(bomb), says="an alias bomb")


# ---- Flux: class path resources, repeated parses, echoed values ------------------------------------------


FLUX = """name: t
{includes}spouts:
  - id: s
    className: org.S
    parallelism: 1
    config: {{stormbound.rate: 10.0}}
bolts:
{bolts}streams:
{streams}"""


def flux_text(bolts: list[str], includes: str = "") -> str:
    return FLUX.format(includes=includes,
                       bolts="".join(f"  - id: {b}\n    className: org.B\n    parallelism: 1\n    config: "
                                     "{stormbound.alpha: 0.01, stormbound.sigma: 1.0}\n" for b in bolts),
                       streams="".join(f"  - from: s\n    to: {b}\n    grouping:\n      type: SHUFFLE\n"
                                       for b in bolts))


def test_a_class_path_resource_leaving_the_resources_is_refused(capsys, tmp_path: Path) -> None:
    (tmp_path / "res").mkdir()
    flux = tmp_path / "t.yaml"
    flux.write_text(flux_text(["b"], "includes:\n  - resource: true\n    file: \"/../../etc/passwd\"\n"),
                    encoding="utf-8")
    refused(capsys, "import", "flux", str(flux), "--resources", str(tmp_path / "res"), "-o",
            str(tmp_path / "o.storm.json"), says="leaves the class path", names="includes[0].file")


def test_repair_parses_each_text_once(capsys, tmp_path: Path, monkeypatch) -> None:
    from app.core.storm.flux import yaml_text

    loads: list[int] = []
    real = yaml_text.yaml_parser

    def counting() -> Any:
        parser = real()
        load = parser.load
        parser.load = lambda text: (loads.append(len(text)), load(text))[1]  # type: ignore[method-assign]
        return parser

    monkeypatch.setattr(yaml_text, "yaml_parser", counting)
    monkeypatch.setattr(yaml_text, "_PARSED", {})
    flux = tmp_path / "t.yaml"
    flux.write_text(flux_text(["b0", "b1"]), encoding="utf-8")
    code, _out, err = run(capsys, "repair", str(flux), "--parallelism", "b0=3", "-o", str(tmp_path / "r.yaml"))
    assert code == 0, err
    assert len(loads) == 2  # the file and its repaired text; it was 4 (import, plan, check before, after)


def test_export_flux_lists_some_changes_each_cut(capsys, tmp_path: Path) -> None:
    names = [f"b{i}_" + "x" * 300 for i in range(30)]
    flux = tmp_path / "t.yaml"
    flux.write_text(flux_text(names), encoding="utf-8")
    doc = tmp_path / "t.storm.json"
    assert run(capsys, "import", "flux", str(flux), "-o", str(doc))[0] == 0
    data = json.loads(doc.read_text(encoding="utf-8"))
    for bolt in data["bolts"]:
        bolt["parallelism"] = 2
    doc.write_text(json.dumps(data), encoding="utf-8")
    code, out, err = run(capsys, "export", "flux", str(doc), str(tmp_path / "out.yaml"))
    assert code == 0, err
    assert "and 22 more" in out and max(len(line) for line in (out + err).splitlines()) < 3000


# ---- 20,000 declared streams: the work done once, not per stream or per copy ------------------------------


def test_20000_declared_streams_work_out_each_distinct_ratio_once(monkeypatch) -> None:
    import copy as copy_module

    from app.core.rates import flows
    from app.core.rates.report import rate_check
    from app.core.topology import parse_topology
    from tests.unit.test_hostile_inputs import document

    data = document()
    n = 20_000
    data["spouts"][0]["streams"] = [f"s{i}" for i in range(n)]
    data["spouts"][0]["stream_ratio"] = {f"s{i}": 1.0 for i in range(n)}
    data["subscriptions"] += [{"source": "sentences", "target": "split", "stream": f"s{i}"} for i in range(n)]
    monkeypatch.setattr(copy_module, "deepcopy", lambda *_: pytest.fail("a deep copy of the document"))
    topo = parse_topology(data)
    calls: list[Any] = []
    real = flows.sigma_bounds
    monkeypatch.setattr(flows, "sigma_bounds", lambda *args: (calls.append(args), real(*args))[1])
    figures = flows.RateFigures(topo)
    assert len(calls) <= 4  # one per distinct (ratio, batch) of the document, not 20,000
    assert sum(1 for key in figures.streams[topo.spouts[0].id]) == n + 1
    assert rate_check(topo).bolts["split"].inflow_max > 0

"""`stormbound-trace/2`: a long lasso written with its repeating runs as repeat items and expanded back
into exactly the same positions (docs/trace-format.md, "Compressed traces")."""

from __future__ import annotations

import json
import random
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.core.formats import detect_format, load_topology
from app.core.formats.jsonfile import FormatError
from app.core.formats.trace import (
    COMPRESSED_FORMAT,
    TRACE_FORMAT,
    CompressedTrace,
    ExpandError,
    Trace,
    compress_positions,
    expand_trace_data,
    expanded_trace,
    format_time,
    load_trace,
    trace_bytes,
)
from app.core.tcn.check.certify import certify
from app.core.topology import parse_topology

ROOT = Path(__file__).resolve().parents[2]
TRACES = ROOT / "tests" / "data" / "traces"


def round_trip(trace: Trace) -> Trace:
    """The trace compressed (positions and repeat items) and expanded again, through JSON text."""
    data = trace.model_dump(mode="json")
    packed = {**data, "format": COMPRESSED_FORMAT, "positions": compress_positions(data["positions"])}
    return Trace.model_validate(expand_trace_data(json.loads(json.dumps(packed))))


def same_positions(a: Trace, b: Trace) -> None:
    assert (a.k, a.loop_start, a.kept, a.topology) == (b.k, b.loop_start, b.kept, b.topology)
    assert len(a.positions) == len(b.positions)
    for i, (p, q) in enumerate(zip(a.positions, b.positions, strict=True)):
        assert p == q, f"position {i}"
        assert p.model_dump(mode="json") == q.model_dump(mode="json"), f"position {i}"


@pytest.mark.parametrize("path", sorted(TRACES.glob("*.trace.json")), ids=lambda p: p.name)
def test_the_published_lassos_expand_to_themselves(path: Path) -> None:
    trace = load_trace(path)
    same_positions(round_trip(trace), trace)


@pytest.fixture(scope="module")
def cfg4_failures() -> list[Trace]:
    """focused-crawler cfg-4 with D-VerT's failure fields (every bolt min_ttf 1000 s, reboots 10..100 s) and
    failures on: two lassos of about 15k and 23k positions. expander's lasso comes from the failure-cycle rounds;
    since its flood from WpDeserializer's growth by rates answers it before the search (docs/verifier.md step 2a),
    the early floods are switched off here, where what is tested is how long lassos are written."""
    from app.core.tcn.search import Search, verify

    data = load_topology(ROOT / "models" / "focused-crawler-reduced-cfg-4.storm.json").model_dump(mode="json")
    data["settings"].update({"failures": True, "min_reboot_time": 10, "max_reboot_time": 100})
    for bolt in data["bolts"]:
        bolt["min_ttf"] = 1000
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Search, "_early_floods", lambda self, run: None)
        result = verify(parse_topology(data))
    long = [t for t in result.traces if t.k + 2 > 10_000]
    assert len(long) == 2 and all(isinstance(t, CompressedTrace) for t in long)  # kept compressed as simulated
    return [expanded_trace(t) for t in long]


def test_cfg4_with_failures_is_written_compressed_and_reads_back_exactly(cfg4_failures: list[Trace],
                                                                          tmp_path: Path) -> None:
    for n, trace in enumerate(cfg4_failures):
        plain = trace_bytes(trace, compress=False)
        packed = trace_bytes(trace)
        assert json.loads(plain)["format"] == TRACE_FORMAT
        raw = json.loads(packed)
        assert raw["format"] == COMPRESSED_FORMAT and raw["k"] == trace.k
        assert len(packed) * 10 < len(plain), (len(packed), len(plain))  # measured: 24x and 61x smaller
        path = tmp_path / f"t{n}.json"
        path.write_bytes(packed)
        same_positions(load_trace(path), trace)
        if n == 0:  # the certifier replays the positions the file stands for (the trace's, above): genuine
            cert = certify(raw)
            assert cert.ok and cert.problems == []


def test_the_certifier_rejects_a_broken_compressed_trace_naming_the_item(cfg4_failures: list[Trace]) -> None:
    raw = json.loads(trace_bytes(cfg4_failures[0]))
    index, item = next((i, p) for i, p in enumerate(raw["positions"]) if "repeat" in p and p["repeat"]["count"] > 5)
    period = item["repeat"]["period"]
    item["repeat"]["period"] = 10**9
    cert = certify(raw)
    assert not cert.ok and cert.problems[0].startswith(f"trace format: positions.{index}.repeat.period: ")
    item["repeat"]["period"] = period
    item["repeat"]["time"] = "0"  # times no longer increase: the replay of the expanded positions says so
    cert = certify(raw)
    assert not cert.ok and "time" in " ".join(cert.problems)


def random_positions(rnd: random.Random, n: int) -> list[dict[str, Any]]:
    """Positions of a made-up run: a few shapes recurring, times and counters mostly shifting by constants."""
    shapes = [{"emit": rnd.random() < 0.5, "take": rnd.random() < 0.5, "batch": rnd.randrange(3)} for _ in range(4)]
    period = rnd.randrange(1, 9)
    out: list[dict[str, Any]] = []
    t, queue, backlog = Fraction(0), 0, 0
    for i in range(n):
        shape = shapes[(i % period) % len(shapes)] if rnd.random() < 0.9 else rnd.choice(shapes)
        t += rnd.choice([Fraction(1, 3), Fraction(1, 4), Fraction(5, 7), Fraction(1)]) if rnd.random() < 0.2 \
            else Fraction(1, 2)
        queue = max(0, queue + rnd.choice([0, 1, 1, 2, -1]))
        backlog = max(0, backlog + rnd.choice([0, 0, 1, -1]))
        spout: dict[str, Any] = {"emit": shape["emit"], "emitted": int(shape["emit"])}
        if backlog:
            spout["backlog"] = backlog
        bolt = {"queue": queue, "arrivals": int(shape["emit"]), "take": shape["take"], "batch": shape["batch"],
                "emit": False, "emitted": 0, "buffer": 0, "phase": "processing" if shape["batch"] else "idle"}
        other = dict(bolt)
        if rnd.random() < 0.1:  # a field only some positions have (a failure field is left out where it is 0)
            other["lost"] = rnd.randrange(1, 4)
        out.append({"time": format_time(t), "spouts": {"S": spout}, "bolts": {"B": bolt, "C": other}})
    return out


@pytest.mark.parametrize("seed", range(40))
def test_random_positions_expand_to_themselves(seed: int) -> None:
    rnd = random.Random(seed)
    positions = random_positions(rnd, rnd.randrange(1, 400))
    items = compress_positions(positions)
    assert len(items) <= len(positions)
    doc = {"format": COMPRESSED_FORMAT, "topology": {}, "k": len(positions) - 2, "loop_start": 1,
           "positions": json.loads(json.dumps(items))}
    assert expand_trace_data(doc)["positions"] == positions


def greedy_items(positions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The writer's greedy rule as it was first written (each candidate's run extended by comparing the shapes and the
    value differences of every position), the reference the faster `compress_runs` must equal item for item."""
    from app.core.formats.trace_compress import CANDIDATES, _patch_fields, _repeat_fields, _shapes

    shapes, values, scale = _shapes(positions)
    bolts, spouts = list(positions[0]["bolts"]), list(positions[0]["spouts"])
    seen: dict[Any, list[int]] = {}
    items: list[dict[str, Any]] = []
    n, i = len(shapes), 0
    while i < n:
        best, period, shift = 0, 0, values[i]
        for q in reversed(seen.get(shapes[i], [])[-CANDIDATES:]):
            p = i - q
            d = tuple(a - b for a, b in zip(values[i], values[q], strict=True))
            j = i + 1
            while j < n and shapes[j] == shapes[j - p] and tuple(
                    a - b for a, b in zip(values[j], values[j - p], strict=True)) == d:
                j += 1
            if j - i > best:
                best, period, shift = j - i, p, d
        run = max(1, best)
        item = {"repeat": _repeat_fields(bolts, spouts, period, run, format_time(Fraction(shift[0]) / scale),
                                         shift[1:])} if best else positions[i]
        if run == 1 and i > 0:
            patch = _patch_fields(positions[i - 1], positions[i])
            if patch is not None and len(json.dumps(patch)) < len(json.dumps(item)):
                item = patch
        items.append(item)
        for j in range(i, i + run):
            seen.setdefault(shapes[j], []).append(j)
        i += run
    return items


@pytest.mark.parametrize("seed", range(12))
def test_the_writer_gives_the_items_of_the_plain_greedy_rule(seed: int) -> None:
    """`compress_runs` extends a run one integer comparison a position and skips candidates whose run cannot beat
    the best (bench/RESULTS.md, "A long lasso through a failure cycle"): the very items the plain rule gives."""
    rnd = random.Random(seed)
    positions = random_positions(rnd, rnd.randrange(2, 600))
    assert compress_positions(positions) == greedy_items(positions)


def test_a_position_unlike_any_before_is_a_patch_of_the_previous_one() -> None:
    positions = random_positions(random.Random(7), 2)
    before, after = positions
    after["bolts"]["C"] = {**after["bolts"]["C"], "lost": 2, "batch": 7}
    before["bolts"]["C"] = {**before["bolts"]["C"], "replays": {"S": 2}}
    items = compress_positions(positions)
    assert items[0] == before and "patch" in items[1]
    assert items[1]["patch"]["bolts"]["C"]["replays"] is None and items[1]["patch"]["bolts"]["C"]["lost"] == 2
    doc = {"format": COMPRESSED_FORMAT, "topology": {}, "k": 0, "loop_start": 1, "positions": items}
    assert expand_trace_data(json.loads(json.dumps(doc)))["positions"] == positions


def test_a_steady_run_is_one_repeat_item() -> None:
    positions = [{"time": format_time(Fraction(i, 3)), "spouts": {"S": {"emit": True, "emitted": 1}},
                  "bolts": {"B": {"queue": 2 * i, "arrivals": 1, "take": False, "batch": 0, "emit": False,
                                  "emitted": 0, "buffer": 0, "phase": "idle"}}} for i in range(1000)]
    items = compress_positions(positions)
    assert items == [positions[0], {"repeat": {"period": 1, "count": 999, "time": "1/3", "queue": {"B": 2}}}]


def test_short_traces_stay_uncompressed_and_the_old_format_reads_unchanged() -> None:
    trace = load_trace(TRACES / "failure-paced.trace.json")
    assert json.loads(trace_bytes(trace))["format"] == TRACE_FORMAT  # fewer than COMPRESS_FROM positions
    assert trace_bytes(trace) == trace_bytes(trace, compress=False)


def write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data))
    return path


def packed_getting_started() -> dict[str, Any]:
    trace = load_trace(TRACES / "getting-started.1.trace.json")
    data = trace.model_dump(mode="json")
    return {**data, "format": COMPRESSED_FORMAT, "positions": compress_positions(data["positions"])}


def test_bad_repeat_items_are_one_line_naming_the_item(tmp_path: Path) -> None:
    good = packed_getting_started()
    index = next(i for i, p in enumerate(good["positions"]) if "repeat" in p)
    assert load_trace(write(tmp_path, good)) == load_trace(TRACES / "getting-started.1.trace.json")
    assert detect_format(good) == "trace"
    cases = [({"period": 0}, f"positions.{index}.repeat.period", "greater than or equal to 1"),
             ({"period": 10**6}, f"positions.{index}.repeat.period", "reaches before the first position"),
             ({"count": 10**9}, "positions", "more than 200000 positions once expanded"),
             ({"time": "soon"}, f"positions.{index}.repeat.time", "is not an exact time"),
             ({"queue": {"nobody": 1}}, f"positions.{index}.repeat.queue.nobody", "no bolt nobody"),
             ({"colour": 1}, f"positions.{index}.repeat.colour", "Extra inputs")]
    for change, where, words in cases:
        data = json.loads(json.dumps(good))
        data["positions"][index]["repeat"].update(change)
        with pytest.raises(FormatError) as err:
            load_trace(write(tmp_path, data))
        problem = err.value.problems[0]
        assert (problem.path, words in problem.message) == (where, True), problem
    patched = next(i for i, p in enumerate(good["positions"]) if "patch" in p)
    for change, where, words in [({"bolts": {"nobody": {"queue": 1}}}, f"positions.{patched}.patch.bolts.nobody",
                                  "no bolt nobody in the position before it"),
                                 ({"time": 3}, f"positions.{patched}.patch.time", "Input should be a valid string"),
                                 ({"period": 2}, f"positions.{patched}.patch.period", "Extra inputs")]:
        data = json.loads(json.dumps(good))
        data["positions"][patched]["patch"].update(change)
        with pytest.raises(FormatError) as err:
            load_trace(write(tmp_path, data))
        problem = err.value.problems[0]
        assert (problem.path, words in problem.message) == (where, True), problem
    data = json.loads(json.dumps(good))
    data["positions"] = [data["positions"][patched], *data["positions"]]
    with pytest.raises(FormatError) as err:
        load_trace(write(tmp_path, data))
    assert (err.value.problems[0].path, err.value.problems[0].message) == ("positions.0.patch",
                                                                           "no position before it to change")
    data = json.loads(json.dumps(good))
    data["positions"][index]["repeat"]["queue"] = {"count": -10**6}  # a queue below 0 once expanded
    with pytest.raises(FormatError) as err:
        load_trace(write(tmp_path, data))
    assert "queue" in err.value.problems[0].path and "greater than or equal to 0" in err.value.problems[0].message
    with pytest.raises(ExpandError):
        expand_trace_data({**good, "positions": "many"})


def test_plot_and_check_read_a_compressed_trace(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, packed_getting_started())
    out = tmp_path / "t.svg"
    assert main(["plot", str(path), "-o", str(out)]) == 0 and out.exists()
    assert main(["check", str(path)]) in (0, 1)  # the trace's topology, as for a /1 trace
    capsys.readouterr()
    data = packed_getting_started()
    data["positions"].append({"repeat": {"period": 1, "count": 10**7, "time": "1"}})
    assert main(["plot", str(write(tmp_path, data)), "-o", str(out), "--force"]) == 2
    # plot reads it without its positions (app/core/long_trace.py), up to its own limit
    assert "more than 2000000 positions once expanded" in capsys.readouterr().err


def test_the_trace_schema_describes_both_formats(capsys) -> None:
    from tests.unit.test_cli_schema import errors

    assert main(["schema", "--kind", "trace"]) == 0
    schema = json.loads(capsys.readouterr().out)
    repeat = schema["$defs"]["Repeat"]["properties"]
    assert {"period", "count", "time", "queue", "backlog"} <= set(repeat)
    assert set(schema["$defs"]["Patch"]["properties"]) == {"time", "spouts", "bolts"}
    packed = packed_getting_started()
    assert errors(packed, schema, schema) == []
    assert errors(json.loads((TRACES / "getting-started.1.trace.json").read_text()), schema, schema) == []
    assert errors({**packed, "$schema": schema["$id"]}, schema, schema) == []
    index = next(i for i, p in enumerate(packed["positions"]) if "repeat" in p)
    packed["positions"][index]["repeat"]["period"] = 0
    assert errors(packed, schema, schema)


def test_times_of_unrelated_denominators_are_compared_as_fractions(monkeypatch) -> None:
    import app.core.formats.trace_compress as trace_format

    monkeypatch.setattr(trace_format, "MAX_SCALE_BITS", 0)  # every common denominator counts as too large
    for seed in range(10):
        rnd = random.Random(seed)
        positions = random_positions(rnd, 300)
        doc = {"format": COMPRESSED_FORMAT, "topology": {}, "k": 298, "loop_start": 1,
               "positions": json.loads(json.dumps(compress_positions(positions)))}
        assert expand_trace_data(doc)["positions"] == positions
    trace = load_trace(TRACES / "failure-paced.trace.json")
    same_positions(round_trip(trace), trace)


def test_a_trace_named_gz_is_written_gzipped_and_read_back(tmp_path) -> None:
    """`--trace-out lasso.json.gz`: the same trace, gzip-compressed; every JSON reader reads gzip files, within
    the document limit once decompressed (a gzip bomb is refused before it fills the memory)."""
    import gzip as gz

    from app.core.formats import load_topology
    from app.core.formats.jsonfile import FormatError
    from app.core.formats.trace import load_trace, save_trace
    from app.core.tcn.options import SearchOptions
    from app.core.tcn.search import verify
    from tests.conftest import MODELS

    result = verify(load_topology(MODELS / "simple-DIA-cfg-1.storm.json"), SearchOptions(timeout_s=60))
    trace = result.traces[0]
    save_trace(trace, tmp_path / "t.json.gz")
    raw = (tmp_path / "t.json.gz").read_bytes()
    assert raw[:2] == b"\x1f\x8b" and load_trace(tmp_path / "t.json.gz") == trace
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(gz.compress(b" " * (70 * 2**20)))
    with pytest.raises(FormatError, match="once decompressed"):
        load_trace(bomb)
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(FormatError):
        load_trace(cut)

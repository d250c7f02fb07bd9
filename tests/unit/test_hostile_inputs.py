"""Hostile input to the file readers: each case is refused with exit 2 and one line naming the
file, the line or field and the problem (docs/limits.md), or read correctly where it is valid."""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
from pathlib import Path

import pytest

from app.cli import main
from app.core.formats import FormatError, load_topology, topology_from_data
from app.core.formats.limits import MAX_DEPTH, escape, load_json_text
from app.core.topology import TopologyError, parse_topology
from app.measure import logstream
from app.measure.eventlog import EventLogError, read_log

ROOT = Path(__file__).resolve().parents[2]
GETTING_STARTED = ROOT / "models" / "getting-started.storm.json"
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")

TAKE = {"t": 1.0, "ev": "take", "comp": "B", "task": 1, "tuple": "x1"}


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def refused(capsys, *argv: str, says: str, names: str | None = None) -> str:
    """Run a command that must refuse its input: exit 2, one line on stderr saying `says`."""
    code, _out, err = run(capsys, *argv)
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1, err
    assert not CONTROL.search(lines[0]), lines[0]
    assert "internal error" not in err
    assert says in lines[0], lines[0]
    if names:
        assert names in lines[0], lines[0]
    return lines[0]


def document() -> dict:
    return json.loads(GETTING_STARTED.read_text(encoding="utf-8"))


def write(path: Path, data: object) -> Path:
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def jsonl(path: Path, *records: dict | str) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# ---- topology documents -----------------------------------------------------------


def test_json_nested_10000_deep_is_refused_with_the_depth_limit(capsys, tmp_path: Path) -> None:
    doc = {**document(), "description": "@@"}
    text = json.dumps(doc).replace('"@@"', "[" * 10_000 + "]" * 10_000)
    path = write(tmp_path / "deep.storm.json", text)
    line = refused(capsys, "check", str(path), says=f"nested deeper than {MAX_DEPTH} levels", names="deep.storm.json")
    assert "line 1 column" in line and "STORMBOUND_MAX_JSON_DEPTH" in line


def test_depth_inside_strings_does_not_count() -> None:
    text = json.dumps({"a": "[" * 10_000, "b": ["]" * 50]})
    assert load_json_text(text)["a"] == "[" * 10_000


def test_exactly_the_depth_limit_is_read() -> None:
    text = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert load_json_text(text) is not None
    with pytest.raises(FormatError, match="nested deeper"):
        load_json_text("[" + text + "]")


@pytest.mark.parametrize("command", ["check", "convert"])
def test_rate_of_1e400_is_refused_naming_the_field(capsys, tmp_path: Path, command: str) -> None:
    text = json.dumps(document())
    text = re.sub(r'"rate": [0-9.]+', '"rate": 1e400', text, count=1)
    path = write(tmp_path / "inf.storm.json", text)
    argv = [command, str(path)] + ([str(tmp_path / "out.dvert.json")] if command == "convert" else [])
    refused(capsys, *argv, says="rate: number 1e400", names="is not finite")
    assert not (tmp_path / "out.dvert.json").exists()


@pytest.mark.parametrize("literal", ["NaN", "1e400", "-Infinity"])
def test_nonfinite_layout_coordinates_are_refused_naming_the_field(capsys, tmp_path: Path, literal: str) -> None:
    doc = document()
    ident = next(iter(doc["layout"]))
    doc["layout"][ident]["x"] = 12345.5
    path = write(tmp_path / "layout.storm.json", json.dumps(doc).replace("12345.5", literal))
    refused(capsys, "check", str(path), says=f"layout.{ident}.x: number {literal}")


def test_nonfinite_numbers_decoded_elsewhere_are_refused_by_the_model() -> None:
    doc = document()
    doc["spouts"][0]["rate"] = float("inf")
    ident = next(iter(doc["layout"]))
    doc["layout"][ident]["y"] = float("nan")
    with pytest.raises(TopologyError) as err:
        parse_topology(doc)
    paths = [p.path for p in err.value.problems]
    assert any(p.endswith(".rate") for p in paths) and f"layout.{ident}.y" in paths


def test_component_id_of_the_wrong_type_is_named() -> None:
    doc = document()
    doc["spouts"][0]["id"] = [1, "a", None]  # was: TypeError: unhashable type: 'list' (found by the fuzzer)
    with pytest.raises(TopologyError, match=r"spouts\.\w+\.id: input should be a valid string"):
        parse_topology(doc)


def test_latin1_file_names_the_byte_and_line(capsys, tmp_path: Path) -> None:
    text = json.dumps({**document(), "description": "@@"}, indent=2).replace('"@@"', '"caf\u00e9"')
    path = tmp_path / "latin.storm.json"
    path.write_bytes(text.encode("latin-1"))
    line = refused(capsys, "check", str(path), says="is not UTF-8 text: byte 0xe9 at offset")
    assert re.search(r"\(line \d+\)", line)


def test_integer_of_5000_digits_is_refused_with_the_number_limit(capsys, tmp_path: Path) -> None:
    text = json.dumps(document()).replace('"init_queues": 0', '"init_queues": ' + "7" * 5000)
    path = write(tmp_path / "big.storm.json", text)
    refused(capsys, "check", str(path), says="integer of 5,000 digits", names="at most 4,300 digits")


@pytest.mark.timeout(60)
def test_named_pipe_is_refused_without_blocking(capsys, tmp_path: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes on this system")
    pipe = tmp_path / "pipe.storm.json"
    os.mkfifo(pipe)
    refused(capsys, "check", str(pipe), says="is a named pipe, not a regular file")
    for name in ("pipe.jsonl", "pipe.csv", "pipe.log", "metrics.log", "events.log", "pipe.parquet"):
        log = tmp_path / name
        os.mkfifo(log)
        with pytest.raises(EventLogError, match="named pipe"):
            read_log(log)
        with pytest.raises(EventLogError, match="named pipe"):
            list(logstream.batches(log))


def test_problem_text_is_one_line_with_control_characters_escaped() -> None:
    doc = document()
    doc["spouts"][0]["name"] = "evil\nname\x1b[31m"
    doc["subscriptions"][0]["source"] = "gone\n\x07"
    with pytest.raises(TopologyError) as err:
        parse_topology(doc)
    for problem in err.value.problems:
        assert "\n" not in str(problem) and not CONTROL.search(str(problem))
    assert "\\n" in str(err.value)
    assert escape("a\ud800b") == "a\\ud800b" and escape("x" * 100).endswith("…")


# ---- D-VerT --------------------------------------------------------------------


def dvert_doc() -> dict:
    from app.core.formats import dvert

    return dvert.to_dvert(load_topology(GETTING_STARTED))


@pytest.mark.parametrize(("change", "field"), [
    (lambda d: d["topology"].__setitem__("spouts", 5), "topology.spouts: must be an array, not a number"),
    (lambda d: d["topology"].__setitem__("bolts", {"a": 1}), "topology.bolts: must be an array, not an object"),
    (lambda d: d["verification_params"].__setitem__("strictly_monotonic_queues", 5),
     "verification_params.strictly_monotonic_queues: must be an array"),
    (lambda d: d.__setitem__("verification_params", []), "verification_params: must be an object, not an array"),
    (lambda d: d["topology"]["bolts"][0].__setitem__("subs", "sentences"), "subs: must be an array, not a string"),
    (lambda d: d["topology"]["bolts"][0].__setitem__("stormbound_groupings", [1]), "stormbound_groupings: must be"),
    (lambda d: d["topology"]["spouts"][0].__setitem__("id", {"x": 1}), "spouts[0].id: must be a non-empty string"),
    (lambda d: d["topology"]["bolts"][0].update({"max_proc_rate": 1e-320, "parallelism": 10 ** 400, "alpha": None})
     or d["topology"]["bolts"][0].pop("alpha"),
     "parallelism: number is too large"),
    (lambda d: d["topology"]["bolts"][0].update({"max_proc_rate": float("inf"), "alpha": None})
     or d["topology"]["bolts"][0].pop("alpha"),
     "max_proc_rate: must be a positive finite number"),
    (lambda d: d["topology"]["bolts"][0].update({"alpha": float("nan")}), "alpha: input should be a finite number"),
])
def test_dvert_wrong_types_are_named_by_field(change, field: str) -> None:
    doc = dvert_doc()
    change(doc)
    with pytest.raises(TopologyError) as err:
        topology_from_data(doc)
    assert field in str(err.value)


def test_dvert_subs_nan_in_a_file_is_refused_naming_the_field(capsys, tmp_path: Path) -> None:
    text = json.dumps(dvert_doc()).replace('"subs": ["sentences"]', '"subs": NaN')
    assert "NaN" in text
    path = write(tmp_path / "nan.dvert.json", text)
    refused(capsys, "check", str(path), says="topology.bolts[0].subs: number NaN")


# ---- verify options and limits ------------------------------------------------------


def test_verify_trace_out_below_a_file_is_refused(capsys, tmp_path: Path) -> None:
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    refused(capsys, "verify", str(GETTING_STARTED), "--trace-out", str(blocker / "sub" / "lasso.json"),
            says=f"{blocker} is a file, not a folder")


def test_verify_k_over_the_limit_in_the_document_is_refused(capsys, tmp_path: Path) -> None:
    doc = document()
    doc["verification"]["k"] = 10 ** 30
    path = write(tmp_path / "bigk.storm.json", doc)
    refused(capsys, "verify", str(path), "--timeout", "5", says="verification.k: 10000000000", names="--max-k")


def test_verify_k_option_over_the_limit_is_refused(capsys) -> None:
    refused(capsys, "verify", str(GETTING_STARTED), "--k", "1000000000", says="--k 1000000000 is over the limit")
    refused(capsys, "verify", str(GETTING_STARTED), "--k-max", "20", "--max-k", "10", says="--k-max 20")


def test_verify_timeout_bounds_building_a_large_encoding(capsys) -> None:
    """k at the limit (10,000): the encoding alone takes longer than the time limit, which must hold."""
    start = time.monotonic()
    code, out, err = run(capsys, "verify", str(GETTING_STARTED), "--k", "10000", "--timeout", "5", "--force-search")
    elapsed = time.monotonic() - start
    print(f"verify --k 10000 --timeout 5: {elapsed:.1f} s", file=sys.stderr)
    assert code == 4 and "time limit reached" in out, (out, err)
    assert elapsed < 40  # 5-7 s when idle; generous for a loaded machine


def test_search_cancel_stops_building_an_encoding() -> None:
    from app.core.tcn.search import Search, SearchOptions

    search = Search(load_topology(GETTING_STARTED), SearchOptions(k=10_000, force_search=True, simulate=False))
    threading.Timer(1.0, search.cancel).start()
    start = time.monotonic()
    result = search.run()
    assert result.verdict == "unknown" and time.monotonic() - start < 30


# ---- event logs -----------------------------------------------------------------


def both_readers(path: Path, match: str) -> None:
    """The model reader (cep, diff) and the streaming one (analyze --engine local) refuse alike."""
    for read in (read_log, lambda p: list(logstream.batches(p))):
        with pytest.raises(EventLogError) as err:
            read(path)
        text = str(err.value)
        assert match in text, text
        assert "\n" not in text and not CONTROL.search(text), text


def test_deep_json_in_a_log_line(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "deep.jsonl", TAKE, '{"t": 2, "ev": "take", "comp": "B", "tuple": ' + "[" * 10_000
                 + "]" * 10_000 + "}")
    both_readers(path, "deep.jsonl line 2: JSON nested deeper than")


def test_integer_of_5000_digits_in_a_log_field(capsys, tmp_path: Path) -> None:
    path = jsonl(tmp_path / "big.jsonl", TAKE, '{"t": 2, "ev": "take", "comp": "B", "tuple": "x", "task": '
                 + "9" * 5000 + "}")
    both_readers(path, "big.jsonl line 2: an integer of 5,000 digits at column")
    refused(capsys, "analyze", str(path), "--engine", "local", says="integer of 5,000 digits")


def test_integer_of_5000_digits_in_a_csv_field(tmp_path: Path) -> None:
    path = tmp_path / "big.csv"
    path.write_text("t,ev,comp,task,tuple\n1,take,B,1,x\n" + "9" * 5000 + ",take,B,1,x\n", encoding="utf-8")
    both_readers(path, "big.csv line 3.t")


def test_csv_cell_over_the_field_limit_names_the_line(capsys, tmp_path: Path) -> None:
    path = tmp_path / "cell.csv"
    path.write_text("t,ev,comp,tuple\n1,take,B,x\n2,take,B," + "x" * 200_000 + "\n", encoding="utf-8")
    both_readers(path, "cell.csv line 3: a cell is over 131072 characters (the CSV field limit)")
    refused(capsys, "analyze", str(path), "--engine", "local", says="line 3")


@pytest.mark.parametrize(("record", "match"), [
    ('{"t": 1, "ev": "take", "comp": "B", "tuple": "x", "task": NaN}', "task: number NaN"),
    ('{"t": 1e400, "ev": "take", "comp": "B", "tuple": "x"}', "t: number 1e400"),
    ('{"t": 1, "ev": "bolt_emit", "comp": "B", "tuple": "x", "anchors": "t1"}', "anchors"),
    ('{"t": 1, "ev": "take\\n\\u001b[31mX' + "y" * 200 + '", "comp": "B", "tuple": "x"}',
     "unknown event 'take\\n\\x1b"),
    ('{"t": 1, "ev": "take", "comp": {"a": 1}, "tuple": "x"}', "comp"),
    ('{"t": 1, "ev": "take", "comp": "B", "tuple": "x", "task": -3}', "task"),
    ('{"t": true, "ev": "take", "comp": "B", "tuple": "x"}', ".t"),
    ('[1, 2]', "expected an object"),
])
def test_wrong_log_records_are_refused(tmp_path: Path, record: str, match: str) -> None:
    both_readers(jsonl(tmp_path / "bad.jsonl", TAKE, record), match)


def test_unknown_event_is_echoed_escaped_and_cut(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "ev.jsonl", {**TAKE, "ev": "x\n\x1b" + "y" * 500})
    with pytest.raises(EventLogError) as err:
        read_log(path)
    assert "…" in str(err.value) and len(str(err.value)) < 300


def test_json_log_with_events_not_a_list(tmp_path: Path) -> None:
    both_readers(write(tmp_path / "five.json", {"events": 5}), "events: must be a list of records, not a number")


def test_random_bytes_as_a_json_lines_log(capsys, tmp_path: Path) -> None:
    import random

    rng = random.Random(17)
    binary = tmp_path / "bytes.jsonl"
    binary.write_bytes(bytes(rng.randrange(256) for _ in range(4096)))
    both_readers(binary, "bytes.jsonl")
    text = tmp_path / "text.jsonl"
    text.write_bytes(bytes(rng.randrange(32, 127) for _ in range(4096)))
    both_readers(text, "text.jsonl line 1: not valid JSON")
    line = refused(capsys, "analyze", str(text), "--engine", "local", says=f"{text}: line 1: not valid JSON")
    assert line.count("text.jsonl") == 1, line  # the file is named once, not again in the field


def test_latin1_log_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "latin.jsonl"
    path.write_bytes((json.dumps(TAKE) + "\n" + json.dumps({**TAKE, "comp": "Bé"}, ensure_ascii=False) + "\n")
                     .encode("latin-1"))
    both_readers(path, "is not UTF-8 text")
    with pytest.raises(EventLogError, match=r"byte 0xe9 at offset \d+ \(line 2\)"):
        read_log(path)


@pytest.mark.parametrize("value", ["nan", "1e400", "-5", "2.5"])
def test_storm_metrics_population_is_checked(capsys, tmp_path: Path, value: str) -> None:
    path = tmp_path / "metrics.log"
    path.write_text("2024-01-01 10:00:00,000 10 [INFO] 1709287201 host:6700 3:count __receive "
                    "{population=2, capacity=1024}\n"
                    f"2024-01-01 10:00:01,000 10 [INFO] 1709287202 host:6700 3:count __receive "
                    f"{{population={value}, capacity=1024}}\n", encoding="utf-8")
    refused(capsys, "analyze", str(path), "--engine", "local",
            says=f"metrics.log: line 2.__receive.population: must be a whole number >= 0, not '{value}'")


def test_storm_metrics_other_non_finite_values_carry_no_measurement(tmp_path: Path) -> None:
    path = tmp_path / "metrics.log"
    path.write_text("1709287201 host:6700 3:count __execute-latency {split:default=NaN, other=1.5}\n"
                    "1709287201 host:6700 3:count __receive {population=4, capacity=1024}\n", encoding="utf-8")
    log = read_log(path)
    assert [m.value for m in log.metrics if m.name == "__execute-latency"] == [1.5]
    assert [q.queue for q in log.queues] == [4]


def test_run_folder_whose_events_file_is_a_folder(capsys, tmp_path: Path) -> None:
    (tmp_path / "run" / "events.jsonl").mkdir(parents=True)
    refused(capsys, "analyze", str(tmp_path / "run"), "--engine", "local", says="events.jsonl: is a folder, not a file")


# ---- Parquet ---------------------------------------------------------------------


def parquet_file(path: Path, t_type: str = "double") -> Path:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rows = [{**TAKE, "t": float(i), "tuple": f"x{i}"} for i in range(200)]
    table = pa.Table.from_pylist(rows)
    if t_type == "string":
        table = table.set_column(0, "t", pa.array([f"at {r['t']}" for r in rows]))
    pq.write_table(table, path)
    return path


def test_valid_parquet_is_read(tmp_path: Path) -> None:
    path = parquet_file(tmp_path / "ok.parquet")
    assert len(read_log(path).events) == 200
    assert sum(len(e) for e, _ in logstream.batches(path)) == 200


@pytest.mark.parametrize("damage", ["empty", "text", "truncated"])
def test_broken_parquet_is_one_line(capsys, tmp_path: Path, damage: str) -> None:
    path = parquet_file(tmp_path / "bad.parquet")
    data = path.read_bytes()
    path.write_bytes({"empty": b"", "text": b"not parquet at all\n", "truncated": data[: len(data) // 2]}[damage])
    both_readers(path, "bad.parquet: ")
    refused(capsys, "analyze", str(path), "--engine", "local", says="bad.parquet")


def test_parquet_with_flipped_bytes_is_read_or_refused_in_one_line(tmp_path: Path) -> None:
    clean = parquet_file(tmp_path / "clean.parquet").read_bytes()
    for offset in range(4, len(clean) - 8, max(1, len(clean) // 40)):
        damaged = bytearray(clean)
        damaged[offset] ^= 0xFF
        path = tmp_path / "flip.parquet"
        path.write_bytes(bytes(damaged))
        for read in (read_log, lambda p: list(logstream.batches(p))):
            try:
                read(path)
            except TopologyError as err:
                assert "\n" not in str(err) and "flip.parquet" in str(err), str(err)


def test_parquet_folder_with_mixed_schemas(tmp_path: Path) -> None:
    folder = tmp_path / "events.parquet"
    folder.mkdir()
    parquet_file(folder / "part-0.parquet")
    parquet_file(folder / "part-1.parquet", t_type="string")
    both_readers(folder, "events.parquet: not a readable Parquet folder")


# ---- traces and Flux -------------------------------------------------------------


def test_trace_with_a_huge_exponent_is_refused_quickly(tmp_path: Path) -> None:
    from app.core.formats.trace import load_trace

    source = ROOT / "tests" / "data" / "traces" / "getting-started.1.trace.json"
    data = json.loads(source.read_text(encoding="utf-8"))
    data["positions"][1]["time"] = "1e9999999"
    path = write(tmp_path / "exp.trace.json", data)
    start = time.monotonic()
    with pytest.raises(FormatError, match="positions.1.time"):
        load_trace(path)
    assert time.monotonic() - start < 60  # generous: catches a hang, not a loaded machine
    data["positions"][1] = 5
    with pytest.raises(FormatError, match="positions.1"):
        load_trace(write(path, data))


def test_flux_annotation_not_finite_is_named(tmp_path: Path) -> None:
    from app.core.storm.flux.builder import import_flux
    from app.core.storm.flux.yaml_text import FluxError

    path = tmp_path / "topo.yaml"
    path.write_text("name: t\nspouts:\n  - id: s\n    className: S\n    parallelism: 1\n"
                    "    config:\n      stormbound.rate: .inf\n"
                    "bolts:\n  - id: b\n    className: B\n    parallelism: 1\n"
                    "streams:\n  - from: s\n    to: b\n    grouping:\n      type: SHUFFLE\n", encoding="utf-8")
    with pytest.raises(FluxError) as err:
        import_flux(path)
    assert "stormbound.rate" in str(err.value) and "finite" in str(err.value)


def test_flux_config_not_finite_is_named_not_saved_as_null(tmp_path: Path) -> None:
    from app.core.storm.flux.builder import import_flux
    from app.core.storm.flux.yaml_text import FluxError

    path = tmp_path / "topo.yaml"
    path.write_text("name: t\nconfig:\n  topology.workers: 1\n  my.value: .nan\n"
                    "spouts:\n  - id: s\n    className: S\n    parallelism: 1\n"
                    "bolts:\n  - id: b\n    className: B\n    parallelism: 1\n"
                    "streams:\n  - from: s\n    to: b\n    grouping:\n      type: SHUFFLE\n", encoding="utf-8")
    with pytest.raises(FluxError, match="line 4: config.my.value: must be a finite number"):
        import_flux(path)


def test_not_utf8_far_into_a_log_names_its_line(tmp_path: Path) -> None:
    good = "".join(json.dumps({**TAKE, "tuple": f"x{i}"}) + "\n" for i in range(3000))
    for name, head, line in (("far.jsonl", good, 3001), ("far.csv", "t,ev,comp,tuple\n" + "1,take,B,x\n" * 3000, 3002)):
        path = tmp_path / name
        path.write_bytes(head.encode() + b'{"t": 1, "ev": "take", "comp": "B\xe9", "tuple": "y"}\n')
        with pytest.raises(EventLogError, match=rf"{name} line {line}: is not UTF-8 text: byte 0xe9"):
            list(logstream.batches(path))

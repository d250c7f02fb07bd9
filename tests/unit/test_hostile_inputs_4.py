"""Hostile input, round four (issue 33): each case from its smallest reproducer is refused with exit 2
and one line naming the file and the field, in time and memory (docs/limits.md)."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest
from storm_ui_server import StormUIServer

from app.cli import main
from app.core.units import UnitError, parse_duration, parse_rate
from tests.unit.test_hostile_inputs import document, refused, run, write  # the same helpers

ROOT = Path(__file__).resolve().parents[2]
GETTING_STARTED = ROOT / "models" / "getting-started.storm.json"


# ---- the unit parser: huge exponents are refused at once ------------------------------------------


@pytest.mark.parametrize("text", ["1e-99999999", "0e99999999", "1e99999999", "5e-400ms", "1" * 5001])
def test_huge_exponents_are_refused_at_once(text: str) -> None:
    start = time.monotonic()
    for parse in (parse_duration, parse_rate):
        if text == "0e99999999":
            assert parse(text) == 0.0
            continue
        with pytest.raises(UnitError) as err:
            parse(text)
        assert len(str(err.value)) < 300 and "…" in str(err.value) or len(text) < 60
    assert time.monotonic() - start < 30  # generous: the work is bounded, the clock only catches a hang


def test_annotate_with_a_huge_exponent_exits_2_at_once(capsys, tmp_path: Path) -> None:
    doc = write(tmp_path / "t.storm.json", document())
    before = doc.read_bytes()
    start = time.monotonic()
    refused(capsys, "annotate", str(doc), "split", "alpha=1e-99999999", says="bolts.split.alpha", names=str(doc))
    assert time.monotonic() - start < 30 and doc.read_bytes() == before


@pytest.mark.parametrize("option", ["--timeout", "--widen"])
def test_verify_time_option_with_a_huge_exponent_exits_2_at_once(capsys, option: str) -> None:
    start = time.monotonic()
    refused(capsys, "verify", str(GETTING_STARTED), option, "1e-99999999", says=option)
    assert time.monotonic() - start < 30  # generous: catches a hang, not a slow machine


# ---- numbers the model cannot take: refused at the document, not crashing the rate check -------------


@pytest.mark.parametrize(("where", "value", "field"), [
    (("bolts", 0, "alpha"), 1e-320, "bolts.split.alpha"), (("bolts", 0, "alpha"), 1e308, "bolts.split.alpha"),
    (("bolts", 0, "sigma"), 1e308, "bolts.split.sigma"), (("spouts", 0, "rate"), 1e-320, "spouts.sentences.rate"),
    (("bolts", 0, "alpha"), "0.005", "bolts.split.alpha"), (("spouts", 0, "rate"), True, "spouts.sentences.rate"),
    (("bolts", 0, "parallelism"), True, "bolts.split.parallelism"),
    (("settings", None, "max_idle_time"), 1e-320, "settings.max_idle_time"),
])
def test_extreme_or_mistyped_numbers_are_refused_naming_the_field(capsys, tmp_path: Path, where: tuple,
                                                                 value: object, field: str) -> None:
    data = document()
    key, index, name = where
    (data[key][index] if index is not None else data[key])[name] = value
    refused(capsys, "check", str(write(tmp_path / "t.storm.json", data)), says=field, names="t.storm.json")


def test_reboot_time_of_1e308_is_refused(capsys, tmp_path: Path) -> None:
    data = document()
    data["bolts"][0]["min_ttf"] = 10
    data["settings"].update(min_reboot_time=1, max_reboot_time=1e308)
    refused(capsys, "check", str(write(tmp_path / "t.storm.json", data)), says="settings.max_reboot_time")


@pytest.mark.parametrize(("value", "field"), [
    ("alpha=1e-320", "bolts.split.alpha"), ("alpha=1e308", "bolts.split.alpha"), ("sigma=1e308", "bolts.split.sigma"),
    ("min_ttf=1e308", "min_ttf")])
def test_annotate_does_not_write_what_check_would_refuse(capsys, tmp_path: Path, value: str, field: str) -> None:
    doc = write(tmp_path / "t.storm.json", document())
    before = doc.read_bytes()
    refused(capsys, "annotate", str(doc), "split", value, says=field)
    assert doc.read_bytes() == before


def test_annotate_names_file_and_field_of_a_value_that_is_not_a_number(capsys, tmp_path: Path) -> None:
    doc = write(tmp_path / "t.storm.json", document())
    line = refused(capsys, "annotate", str(doc), "split", "sigma=5ms", says="bolts.split.sigma: '5ms' is not a number",
                   names=str(doc))
    assert line.count(str(doc)) == 1


def test_annotate_cuts_a_5001_digit_value_to_60_characters(capsys, tmp_path: Path) -> None:
    doc = write(tmp_path / "t.storm.json", document())
    line = refused(capsys, "annotate", str(doc), "split", "sigma=" + "9" * 5001, says="bolts.split.sigma")
    assert len(line) < 300 and "…" in line


@pytest.mark.parametrize("old", ["abc", [1, 2], {"x": 1}, True, "9" * 5000])
def test_annotate_over_a_malformed_old_value(capsys, tmp_path: Path, old: object) -> None:
    data = document()
    data["bolts"][0]["alpha"] = old
    doc = write(tmp_path / "t.storm.json", data)
    code, out, err = run(capsys, "annotate", str(doc), "split", "alpha=20ms")
    assert code == 0, err
    assert "bolts.split.alpha:" in out and "-> 20 ms" in out and len(out.splitlines()[0]) < 300


# ---- the Storm UI: a slow body over HTTP/1.1 keep-alive ----------------------------------------------


def test_import_storm_ui_dripping_over_http_1_1_exits_2_within_the_timeout(capsys, tmp_path: Path) -> None:
    out_file = tmp_path / "ui.storm.json"
    with StormUIServer("drip11") as server:
        start = time.monotonic()
        refused(capsys, "import", "storm-ui", server.url, "--topology", "wordcount", "-o", str(out_file),
                "--timeout", "2", says="no answer within 2 s for the whole request")
        assert time.monotonic() - start < 15  # the 2 s timeout kept, well under a 30 s wait
    assert not out_file.exists()


# ---- Flux: pipes, devices, sizes before reading, ${...} growth ---------------------------------------

FLUX = """\
name: "${name}"
spouts:
  - id: "sentences"
    className: "org.example.SentenceSpout"
bolts:
  - id: "split"
    className: "org.example.SplitBolt"
    parallelism: 2
streams:
  - from: "sentences"
    to: "split"
    grouping:
      type: SHUFFLE
"""


def flux_import(capsys, flux: Path, *more: str, says: str, names: str | None = None) -> str:
    start = time.monotonic()
    line = refused(capsys, "import", "flux", str(flux), "-o", str(flux.parent / "out.storm.json"), *more, says=says,
                   names=names)
    assert time.monotonic() - start < 120  # generous: a refusal that blocked (a pipe, a device) would never return
    assert not (flux.parent / "out.storm.json").exists()
    return line


def test_a_named_pipe_as_the_filter_file_is_refused_without_blocking(capsys, tmp_path: Path) -> None:
    flux = write(tmp_path / "t.yaml", FLUX)
    pipe = tmp_path / "dev.properties"
    os.mkfifo(pipe)
    flux_import(capsys, flux, "--filter", str(pipe), says="is a named pipe", names="dev.properties")


def test_dev_zero_as_the_filter_file_is_refused(capsys, tmp_path: Path) -> None:
    flux_import(capsys, write(tmp_path / "t.yaml", FLUX), "--filter", "/dev/zero", says="is a device")


def test_a_huge_filter_file_is_refused_before_it_is_read(capsys, tmp_path: Path) -> None:
    props = tmp_path / "big.properties"
    with open(props, "wb") as fh:
        fh.truncate(4 * 2**30)  # sparse: 4 GB that take no disk
    flux_import(capsys, write(tmp_path / "t.yaml", FLUX), "--filter", str(props), says="over the limit")


def test_a_4_gb_flux_file_is_refused_before_it_is_read(capsys, tmp_path: Path) -> None:
    flux = tmp_path / "big.yaml"
    with open(flux, "wb") as fh:
        fh.write(FLUX.encode())
        fh.truncate(4 * 2**30)
    flux_import(capsys, flux, says="is larger than 2 MB")


def test_substitution_is_refused_as_it_grows_past_the_limit(capsys, tmp_path: Path) -> None:
    import tracemalloc

    props = write(tmp_path / "p.properties", "name=n\nx=" + "a" * 100_000 + "\n")
    flux = write(tmp_path / "t.yaml", FLUX + "".join(f"# ${{x}}{i}\n" for i in range(20_000)))  # 220 kB -> 2 GB
    tracemalloc.start()
    try:
        flux_import(capsys, flux, "--filter", str(props), says="once ${...} is substituted")
        assert tracemalloc.get_traced_memory()[1] < 100 * 2**20
    finally:
        tracemalloc.stop()


def test_a_list_index_of_5000_digits_is_not_an_internal_error(capsys, tmp_path: Path) -> None:
    props = write(tmp_path / "p.properties", 'name=n\nlst=["a", "b"]\n')
    flux = write(tmp_path / "t.yaml", FLUX.replace('"${name}"', '"${lst[' + "9" * 5000 + ']}"'))
    code, _out, err = run(capsys, "import", "flux", str(flux), "-o", str(tmp_path / "o.storm.json"), "--filter",
                          str(props))
    assert code in (0, 2) and "internal error" not in err, err


# ---- declared streams ---------------------------------------------------------------------------------


def test_20000_declared_streams_are_validated_in_linear_time(monkeypatch: pytest.MonkeyPatch) -> None:
    from app.core.topology import parse_topology

    data = document()
    n = 20_000
    data["spouts"][0]["streams"] = [f"s{i}" for i in range(n)]
    data["spouts"][0]["stream_ratio"] = {f"s{i}": 1.0 for i in range(n)}
    data["subscriptions"] += [{"source": "sentences", "target": "split", "stream": f"s{i}"} for i in range(n)]
    from app.core.topology.components import Spout

    listed = 0
    real = Spout.output_streams

    def counted(self: Spout) -> dict[str, float | None]:
        nonlocal listed
        listed += 1
        return real(self)

    monkeypatch.setattr(Spout, "output_streams", counted)
    parse_topology(data)
    assert listed <= 10  # the work counted, not the clock: every edge used to list its source's streams again


@pytest.mark.parametrize(("name", "says"), [("__ack_init", "Storm's own streams"), ("__ack", "Storm's own streams"),
                                            ("__metrics", "own streams"),
                                            ("st\x1b[31m", "control character"), ("a\u202eb", "control character")])
def test_reserved_or_unprintable_stream_names_are_refused(capsys, tmp_path: Path, name: str, says: str) -> None:
    data = document()
    data["bolts"][0]["streams"] = [name]
    refused(capsys, "check", str(write(tmp_path / "t.storm.json", data)), says=says, names="bolts.split.streams")


def test_an_undeclared_stream_lists_ten_of_20000_declared(capsys, tmp_path: Path) -> None:
    data = document()
    data["schema_version"] = 2  # a current document (version 1 meant any named stream: app/core/topology/migrate.py)
    data["spouts"][0]["streams"] = [f"s{i}" for i in range(20_000)]
    data["subscriptions"].append({"source": "sentences", "target": "split", "stream": "nope"})
    line = refused(capsys, "check", str(write(tmp_path / "t.storm.json", data)), says="'nope' is not a declared")
    assert "and 19991 more" in line and len(line) < 600


# ---- Storm's events.log: streamed, bounded, dates checked ------------------------------------------------

LINE = "Mon Nov 23 11:33:18 UTC 2026,split,5,,[the, cow]\n"


def test_a_gzip_of_newlines_is_streamed_not_held(capsys, tmp_path: Path) -> None:
    import gzip
    import tracemalloc

    path = tmp_path / "events.log.gz"
    with gzip.open(path, "wb", compresslevel=9) as fh:
        for _ in range(64):
            fh.write(b"\n" * 2**20)  # 64 MB of newlines in 64 kB
    tracemalloc.start()
    try:
        refused(capsys, "analyze", str(path), says="no event inspector lines")
        assert tracemalloc.get_traced_memory()[1] < 40 * 2**20  # was: the whole text, then one string per line
    finally:
        tracemalloc.stop()


def test_an_events_log_over_the_event_limit_is_refused_before_the_events_are_built(capsys, tmp_path: Path,
                                                                                 monkeypatch) -> None:
    monkeypatch.setenv("STORMBOUND_MAX_EVENTS", "1000")
    path = tmp_path / "events.log"
    path.write_text(LINE * 1001)
    refused(capsys, "analyze", str(path), says="holds over 1000 events", names="STORMBOUND_MAX_EVENTS")
    path.write_text(LINE * 1000)
    code, _out, err = run(capsys, "analyze", str(path))
    assert code == 0, err


@pytest.mark.parametrize(("date", "says"), [
    ("Mon Nov 23 11:33:18 UTC 0000", "year 0000"), ("Mon Nov 99 11:33:18 UTC 2026", "Nov 99 2026 is not a day"),
    ("Mon Feb 30 11:33:18 UTC 2026", "Feb 30 2026"), ("Mon Nov 23 99:99:99 UTC 2026", "99:99:99 is not a time"),
])
def test_dates_java_never_prints_are_refused(capsys, tmp_path: Path, date: str, says: str) -> None:
    path = tmp_path / "events.log"
    path.write_text(LINE + date + ",split,5,,[x]\n")
    refused(capsys, "analyze", str(path), says=says, names="line 2.date")


def test_a_line_over_a_megabyte_is_refused(capsys, tmp_path: Path) -> None:
    path = tmp_path / "events.log"
    path.write_text(LINE + "x" * (2 * 2**20) + "\n")
    refused(capsys, "analyze", str(path), says="is over 1048576 bytes", names="line 2")


# ---- Parquet: folders with pipes and dangling links, uint64 columns, empty or ev-less files -------------


def parquet_log(path: Path, **types: object) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"t": pa.array([0.0, 1.0]), "ev": pa.array(["spout_emit", "take"]), "comp": ["S", "B"],
                      "task": pa.array([1, 1], type=types.get("task", pa.int64())), "tuple": ["x1", "x1"],
                      "msg": ["m1", None]})
    pq.write_table(table, path)
    return path


@pytest.mark.parametrize("command", ["analyze", "compare"])
def test_a_named_pipe_in_a_parquet_folder_is_refused_without_blocking(capsys, tmp_path: Path, command: str) -> None:
    folder = tmp_path / "log.parquet"
    folder.mkdir()
    parquet_log(folder / "part-0.parquet")
    os.mkfifo(folder / "part-1.parquet")
    start = time.monotonic()
    extra = ["--topology", str(GETTING_STARTED)] if command == "compare" else []
    refused(capsys, command, *extra, str(folder), says="part-1.parquet: is a named pipe")
    assert time.monotonic() - start < 60  # generous: a pipe that blocked would never return


def test_a_dangling_link_in_a_parquet_folder_is_named(capsys, tmp_path: Path) -> None:
    folder = tmp_path / "log.parquet"
    folder.mkdir()
    parquet_log(folder / "part-0.parquet")
    (folder / "part-1.parquet").symlink_to(tmp_path / "gone.parquet")
    refused(capsys, "analyze", str(folder), says="part-1.parquet: is a link to nothing")


def test_uint64_columns_are_read_and_values_over_2_53_refused(capsys, tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    code, _out, err = run(capsys, "analyze", str(parquet_log(tmp_path / "ok.parquet", task=pa.uint64())))
    assert code == 0, err
    table = pa.table({"t": [0.0], "comp": ["S"], "task": pa.array([0], type=pa.uint64()),
                      "queue": pa.array([2**63 + 5], type=pa.uint64())})
    pq.write_table(table, tmp_path / "q.parquet")
    for command in ("analyze", "compare"):
        extra = ["--topology", str(GETTING_STARTED)] if command == "compare" else []
        refused(capsys, command, *extra, str(tmp_path / "q.parquet"), says="row 0.queue", names="over the largest")


def test_an_empty_or_ev_less_parquet_is_not_0_events(capsys, tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"t": pa.array([], type=pa.float64()), "ev": pa.array([], type=pa.string())}),
                   tmp_path / "empty.parquet")
    refused(capsys, "analyze", str(tmp_path / "empty.parquet"), says="is empty (0 rows)")
    pq.write_table(pa.table({"t": [0.0, 1.0], "comp": ["S", "B"]}), tmp_path / "noev.parquet")
    line = refused(capsys, "analyze", str(tmp_path / "noev.parquet"), says="has neither an ev nor a queue column")
    assert line.count("noev.parquet") == 1


# ---- Storm UI number shapes ----------------------------------------------------------------------------

UI_DATA = ROOT / "tests" / "data" / "storm-ui"


def ui_snapshot():  # noqa: ANN201 - a StormUISnapshot
    from app.core.storm.ui.replies import StormUISnapshot

    comps = {c: json.loads((UI_DATA / f"component-{c}.json").read_text()) for c in ("sentences", "split", "count",
                                                                                      "report")}
    return StormUISnapshot(url="http://127.0.0.1:1", topology_id="wordcount-3-1700000000", window="600",
                           topology=json.loads((UI_DATA / "topology.json").read_text()), components=comps)


def first_input(snapshot) -> dict:  # noqa: ANN001
    return next(i for i in snapshot.components["split"]["inputStats"] if not i["component"].startswith("__"))


@pytest.mark.parametrize(("field", "value", "says"), [
    ("executeLatency", "-3", "is negative"), ("executed", -1, "is negative"), ("executed", 10**4000, "is over 1e+15"),
    ("executeLatency", "9" * 4000, "at most 40 characters"), ("executed", True, "true or false"),
    ("executed", [], "is list"),
])
def test_storm_ui_figures_that_are_no_measurement_are_refused(field: str, value: object, says: str) -> None:
    from app.core.storm.ui.client import StormUIError
    from app.core.storm.ui.reader import from_storm_ui

    snapshot = ui_snapshot()
    first_input(snapshot)[field] = value
    with pytest.raises(StormUIError, match=re.escape(says)) as err:
        from_storm_ui(snapshot)
    assert "components.split.inputStats[" in str(err.value) and f".{field}:" in str(err.value)
    assert "\n" not in str(err.value) and len(str(err.value)) < 300


def test_storm_ui_nulls_are_missing_values_not_internal_errors() -> None:
    from app.core.storm.ui.reader import from_storm_ui

    snapshot = ui_snapshot()
    for comp in snapshot.components.values():
        comp["componentType"] = None
        for item in comp.get("inputStats") or []:
            item.update(executed=None, executeLatency=None)
    imported = from_storm_ui(snapshot)
    assert imported.topology.bolt_by_name("split").alpha > 0  # from the topology page instead


def test_a_storm_config_count_of_4000_digits_is_refused() -> None:
    from app.core.storm.ui.client import StormUIError
    from app.core.storm.ui.reader import from_storm_ui

    snapshot = ui_snapshot()
    snapshot.topology.setdefault("configuration", {})["topology.workers"] = 10**4000
    with pytest.raises(StormUIError, match="over Storm's largest"):
        from_storm_ui(snapshot)


# ---- inputs never overwritten ----------------------------------------------------------------------------


def test_export_flux_never_replaces_its_flux_source_even_with_force(capsys, tmp_path: Path) -> None:
    flux = write(tmp_path / "w.yaml", FLUX.replace('"${name}"', '"wc"'))
    doc = tmp_path / "w.storm.json"
    assert run(capsys, "import", "flux", str(flux), "-o", str(doc))[0] == 0
    before = flux.read_bytes()
    refused(capsys, "export", "flux", str(doc), str(flux), "--force", says="is also an input of this command")
    assert flux.read_bytes() == before


@pytest.mark.parametrize("name", ["/tmp/" + "a" * 100_000, "/tmp/" + "a" * 300])
def test_a_very_long_flux_file_is_no_internal_error(capsys, tmp_path: Path, name: str) -> None:
    data = document()
    data["storm"] = {"flux_file": name}
    doc = write(tmp_path / "t.storm.json", data)
    code, _out, err = run(capsys, "export", "flux", str(doc), str(tmp_path / "o.yaml"))
    assert code in (0, 2) and "internal error" not in err and all(len(line) < 400 for line in err.splitlines()), err


def test_a_read_only_document_is_not_replaced_by_annotate(capsys, tmp_path: Path) -> None:
    doc = write(tmp_path / "t.storm.json", document())
    doc.chmod(0o444)
    before = doc.read_bytes()
    refused(capsys, "annotate", str(doc), "split", "alpha=20ms", says="is read-only")
    assert doc.read_bytes() == before


def test_concurrent_annotates_keep_both_changes(tmp_path: Path) -> None:
    import subprocess
    import sys

    doc = write(tmp_path / "t.storm.json", document())
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for _ in range(3):
        procs = [subprocess.Popen([sys.executable, "-m", "app", "annotate", str(doc), "split", value], cwd=ROOT,
                                  env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                 for value in ("alpha=20ms", "sigma=3")]
        assert [p.wait(timeout=60) for p in procs] == [0, 0]
        bolt = next(b for b in json.loads(doc.read_text())["bolts"] if b["name"] == "split")
        assert (bolt["alpha"], bolt["sigma"]) == (0.02, 3.0)
        write(doc, document())


def test_sigterm_leaves_no_temporary_file(tmp_path: Path, monkeypatch) -> None:
    """SIGTERM arrives while the output's temporary file is written: it is removed, the input kept."""
    from app.core import fileio

    real_fsync = os.fsync
    killed: list[bool] = []

    def fsync_then_term(fd: int) -> None:
        real_fsync(fd)
        killed.append(True)
        os.kill(os.getpid(), 15)
        time.sleep(1)  # the handler raises here

    doc = write(tmp_path / "t.storm.json", document())
    before = doc.read_bytes()
    monkeypatch.setattr(fileio.os, "fsync", fsync_then_term)
    code = main(["annotate", str(doc), "split", "alpha=20ms"])
    monkeypatch.undo()
    assert killed and code == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.storm.json"] and doc.read_bytes() == before


def test_a_full_log_disk_is_one_line_and_exit_2(capsys) -> None:
    refused(capsys, "check", str(GETTING_STARTED), "--log-file", "/dev/full", says="--log-file /dev/full: cannot write")


# ---- messages: the true cause, one line ---------------------------------------------------------------


def test_a_redirect_to_file_is_named_not_too_many_redirects(capsys, tmp_path: Path) -> None:
    with StormUIServer("file") as server:
        line = refused(capsys, "import", "storm-ui", server.url, "--topology", "wordcount", "-o",
                       str(tmp_path / "o.storm.json"), "--timeout", "5", says="redirected to a file: address")
    assert "too many redirects" not in line


def test_a_file_included_twice_is_not_a_cyclic_include(capsys, tmp_path: Path) -> None:
    write(tmp_path / "conf.yaml", "config:\n  topology.workers: 2\n")
    flux = write(tmp_path / "t.yaml", FLUX.replace('"${name}"', '"wc"')
                 + "includes:\n  - file: conf.yaml\n  - file: conf.yaml\n")
    line = refused(capsys, "import", "flux", str(flux), "-o", str(tmp_path / "o.storm.json"),
                   says="conf.yaml is included twice (also includes[0])")
    assert "cyclic" not in line
    write(tmp_path / "self.yaml", FLUX.replace('"${name}"', '"wc"') + "includes:\n  - file: self.yaml\n")
    refused(capsys, "import", "flux", str(tmp_path / "self.yaml"), "-o", str(tmp_path / "o.storm.json"),
            says="cyclic include: self.yaml includes itself")


def test_one_bad_list_is_one_line(capsys, tmp_path: Path) -> None:
    data = document()
    data["bolts"][0]["streams"] = [1, 2, None, 4, 5]
    line = refused(capsys, "check", str(write(tmp_path / "t.storm.json", data)), says="bolts.split.streams[0]")
    assert "(also bolts.split.streams[1], bolts.split.streams[2], bolts.split.streams[3] and 1 more)" in line


def test_a_linked_port_folder_is_read_once(capsys, tmp_path: Path) -> None:
    port = tmp_path / "artifacts" / "wc-1-1700000000" / "6700"
    port.mkdir(parents=True)
    (port / "events.log").write_text(LINE * 10)
    (port.parent / "6701").symlink_to(port, target_is_directory=True)
    from app.measure.storm_events import read_storm_events

    assert len(read_storm_events(tmp_path / "artifacts").events) == 10


# ---- unreadable files (permissions, simulated: the tests may run as root) --------------------------------


@pytest.mark.parametrize(("name", "text", "argv"), [
    ("l.jsonl", '{"t":0,"ev":"spout_emit","comp":"S","task":1,"tuple":"a","msg":"m"}\n', ["analyze"]),
    ("l.csv", "t,ev,comp,task,tuple,msg\n0,spout_emit,S,1,a,m\n", ["analyze"]),
    ("events.log", LINE, ["analyze"]),
    ("t.storm.json", GETTING_STARTED.read_text(), ["check"]),
    ("w.yaml", FLUX, ["import", "flux"]),
])
def test_an_unreadable_file_is_one_line_exit_2(capsys, tmp_path: Path, monkeypatch, name: str, text: str,
                                              argv: list[str]) -> None:
    import builtins
    import io

    path = write(tmp_path / name, text)
    real_open, real_os_open = builtins.open, os.open

    def denied(file: object, *args: object, **kwargs: object) -> object:
        if str(file) == str(path):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)  # type: ignore[call-overload]

    def os_denied(file: object, *args: object, **kwargs: object) -> int:
        if str(file) == str(path):
            raise PermissionError(13, "Permission denied", str(file))
        return real_os_open(file, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "open", denied)
    monkeypatch.setattr(io, "open", denied)
    monkeypatch.setattr(os, "open", os_denied)
    extra = ["-o", str(tmp_path / "o.storm.json")] if argv[0] == "import" else []
    refused(capsys, *argv, str(path), *extra, says="ermission denied")


def test_parquet_parts_duckdb_cannot_read_are_read_by_the_python_readers(capsys, tmp_path: Path) -> None:
    """Found by fuzzing: an empty part, a folder named part-1.parquet, a part with a byte-order mark in front
    (pyarrow's footer check lets it through, DuckDB fails on its pages): never DuckDB's error, exit 3."""
    folder = tmp_path / "log.parquet"
    folder.mkdir()
    parquet_log(folder / "part-0.parquet")
    (folder / "part-1.parquet").mkdir()
    code, _out, err = run(capsys, "analyze", str(folder))
    assert code == 0, err
    (folder / "part-2.parquet").write_bytes(b"")
    code, _out, err = run(capsys, "analyze", str(folder))
    assert code == 2 and "internal error" not in err and len(err.strip().splitlines()) == 1, err
    (folder / "part-2.parquet").write_bytes(b"\xef\xbb\xbf" + (folder / "part-0.parquet").read_bytes())
    code, _out, err = run(capsys, "analyze", str(folder))
    assert code in (0, 2) and "internal error" not in err, err


def test_a_read_only_flux_file_is_not_replaced_by_repair_in_place(capsys, tmp_path: Path) -> None:
    flux = write(tmp_path / "w.yaml", FLUX.replace('"${name}"', '"wc"'))
    flux.chmod(0o444)
    before = flux.read_bytes()
    code, _out, err = run(capsys, "repair", str(flux), "--parallelism", "split=5", "--in-place")
    assert code == 2 and "is read-only" in err and "internal error" not in err, err
    assert flux.read_bytes() == before


def test_ctrl_c_cuts_a_dripping_storm_ui_request_at_once() -> None:
    import signal
    import threading

    from app.core.storm.ui.client import StormUIClient
    from app.core.storm.ui.fetch import fetch_storm_ui

    with StormUIServer("drip11") as server:
        client = StormUIClient(server.url, timeout_s=30)
        timer = threading.Timer(1.0, signal.pthread_kill, (threading.main_thread().ident, signal.SIGINT))
        # Python's own Ctrl+C, as in the command's process (a pytest-xdist worker ignores SIGINT)
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        start = time.monotonic()
        timer.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                fetch_storm_ui(client, "wordcount")
        finally:
            timer.cancel()
            signal.signal(signal.SIGINT, previous)
        assert time.monotonic() - start < 15  # not the 30 s deadline, nor the drip's end


@pytest.mark.parametrize("command", ["analyze", "compare"])
def test_queue_samples_over_2_53_in_parquet_are_refused_as_in_the_other_formats(capsys, tmp_path: Path,
                                                                              command: str) -> None:
    """DuckDB reads a Parquet log itself; its statistics send one with a queue over 2^53 (or a negative task)
    to the Python readers, which name the row, as for JSON Lines and CSV."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"t": [0.0, 1.0], "ev": ["spout_emit", None], "comp": ["sentences", "split"], "task": [1, 1],
                      "tuple": ["a", None], "msg": ["m", None], "queue": pa.array([None, 2**63 - 1], type=pa.int64())})
    pq.write_table(table, tmp_path / "q.parquet")
    extra = ["--topology", str(GETTING_STARTED)] if command == "compare" else []
    refused(capsys, command, *extra, str(tmp_path / "q.parquet"), says="row 1.queue", names="over the largest count")


def test_a_1e308_queue_sample_in_a_json_log_is_named_as_in_json_lines(capsys, tmp_path: Path) -> None:
    log = write(tmp_path / "q.json", {"events": [{"t": 0, "ev": "spout_emit", "comp": "sentences", "task": 1,
                                                  "tuple": "a", "msg": "m"}],
                                      "queues": [{"t": 1, "comp": "split", "task": 1, "queue": 1e308}]})
    refused(capsys, "compare", "--topology", str(GETTING_STARTED), str(log), says="queues[0].queue: 1e+308 is over the "
            "largest count")

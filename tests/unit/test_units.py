"""Times and rates with units (app/core/units.py), the `annotate` command, and time options of the CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from app.cli import main
from app.core.formats import load_topology
from app.core.units import UnitError, format_duration, parse_duration, parse_rate

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("text", "seconds"), [
    ("2ms", 0.002), ("0.5s", 0.5), ("0.5 s", 0.5), ("20", 20.0), ("1.5min", 90.0), ("250us", 0.00025),
    ("250µs", 0.00025), ("7ms", 0.007), ("1e-3", 0.001), ("2h", 7200.0), ("3 MS", 0.003),
])
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds  # exact: the double nearest the decimal, no float noise


@pytest.mark.parametrize(("text", "rate"), [("1500/s", 1500.0), ("90/min", 1.5), ("2/ms", 2000.0), ("1500", 1500.0),
                                            ("1500 tuples/s", 1500.0), ("3600/h", 1.0)])
def test_rates(text: str, rate: float) -> None:
    assert parse_rate(text) == rate


@pytest.mark.parametrize("text", ["abc", "20m", "1e400", "5 parsecs", "", "1/x"])
def test_bad_units_say_what_is_accepted(text: str) -> None:
    with pytest.raises(UnitError):
        parse_duration(text) if "/" not in text else parse_rate(text)


def test_milliseconds_below_a_second() -> None:
    assert [format_duration(x) for x in (0.02, 0.036000000000000003, 0.5, 1.0, 2.5, 0.00025)] == \
        ["20 ms", "36 ms", "500 ms", "1 s", "2.5 s", "0.25 ms"]
    for x in (0.02, 0.036000000000000003, 1.25, 0.00025):
        assert parse_duration(format_duration(x)) == pytest.approx(x, rel=1e-12)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def imported(tmp_path: Path, capsys) -> Path:
    flux = tmp_path / "wc.yaml"
    shutil.copy(ROOT / "models" / "wordcount.flux.yaml", flux)
    doc = tmp_path / "wc.storm.json"
    assert main(["import", "flux", str(flux), "-o", str(doc)]) == 0
    capsys.readouterr()
    return doc


def test_annotate_sets_values_with_units_and_clears_unannotated(capsys, imported: Path) -> None:
    code, out, err = run(capsys, "annotate", str(imported), "count", "alpha=20ms", "sigma=0", "parallelism=4")
    assert code == 0, err
    assert f"{imported}: bolts.count.alpha: not annotated -> 20 ms" in out
    assert f"{imported}: bolts.count.parallelism: 1 -> 4" in out
    count = load_topology(imported).bolt_by_name("count")
    assert (count.alpha, count.sigma, count.parallelism, count.unannotated) == (0.02, 0.0, 4, [])
    code, out, _ = run(capsys, "annotate", str(imported), "sentences", "rate=90/min", "burst=3", "parallelism=2",
                       "--json")
    data = json.loads(out)
    assert code == 0 and data["kind"] == "annotate"
    assert data["changes"][0] == "spouts.sentences.rate: not annotated -> 1.5 tuples/s"
    spout = load_topology(imported).spouts[0]
    assert (spout.rate, spout.burst, spout.executors, spout.unannotated) == (1.5, 3, 2, [])
    assert "spouts.sentences.rate: not annotated" not in data["unannotated"]
    assert "bolts.split.alpha: not annotated" in data["unannotated"]


@pytest.mark.parametrize(("argv", "message"), [
    (["count", "alpha=fast"], "'fast' is not a time"),
    (["nope", "alpha=1"], "no component 'nope'"),
    (["count", "rate=1"], "bolts.count.rate: a bolt has alpha, sigma, parallelism"),
    (["count", "alpha=-1ms"], "bolts.count.alpha: input should be greater than 0"),
    (["count", "parallelism=2.5"], "'2.5' is not a whole number"),
    (["count", "alpha"], "write KEY=VALUE"),
    (["count", "min_ttf=-1s"], "bolts.count.min_ttf: input should be greater than or equal to 0"),
    (["count", "min_ttf=10s"], "settings.min_reboot_time, settings.max_reboot_time: not set: bolts.count.min_ttf"),
    (["count", "min_ttf=10s"], "set them first, e.g. stormbound annotate "),  # the command that gets out
    (["settings", "replay=maybe"], "settings.replay: 'maybe' is not one of paced, at-once, none"),
    (["settings", "failures=sometimes"], "settings.failures: 'sometimes' is not on or off"),
    (["settings", "min_reboot_time=2min", "max_reboot_time=1min"], "min_reboot_time (120 s) is above max_reboot_time"),
    (["settings", "colour=red"], "settings.colour: annotate sets min_reboot_time"),
])
def test_annotate_refuses_in_one_line_and_writes_nothing(capsys, imported: Path, argv: list[str],
                                                         message: str) -> None:
    before = imported.read_bytes()
    code, out, err = run(capsys, "annotate", str(imported), *argv)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1
    assert imported.read_bytes() == before


def test_annotate_sets_failures(capsys, imported: Path) -> None:
    code, out, err = run(capsys, "annotate", str(imported), "settings", "min_reboot_time=10s",
                         "max_reboot_time=2min", "replay=at-once", "failures=on")
    assert code == 0, err
    assert f"{imported}: settings.max_reboot_time: unset -> 120 s" in out
    code, out, err = run(capsys, "annotate", str(imported), "count", "alpha=20ms", "min_ttf=10min")
    assert code == 0, err and f"{imported}: bolts.count.min_ttf: unset -> 600 s" in out
    topo = load_topology(imported)
    assert topo.bolt_by_name("count").min_ttf == 600
    assert (topo.settings.min_reboot_time, topo.settings.max_reboot_time, topo.settings.replay) == (10, 120, "at-once")


def test_annotate_refuses_a_dvert_file(capsys, tmp_path: Path) -> None:
    from app.core.formats import dvert

    path = tmp_path / "cfg.json"
    path.write_bytes(dvert.to_dvert_bytes(load_topology(ROOT / "models" / "simple-DIA-cfg-1.storm.json")))
    before = path.read_bytes()
    code, _, err = run(capsys, "annotate", str(path), "B1", "alpha=1")
    assert code == 2 and "not a .storm.json document" in err and path.read_bytes() == before


def test_time_options_take_units(capsys) -> None:
    code, out, err = run(capsys, "verify", str(ROOT / "models" / "getting-started.storm.json"), "--k-max", "8",
                         "--timeout", "2min")
    assert code == 1, err
    code, _, err = run(capsys, "verify", str(ROOT / "models" / "getting-started.storm.json"), "--timeout", "soon")
    assert code == 2 and "'soon' is not a time" in err


@pytest.fixture()
def crawler(tmp_path: Path, capsys) -> Path:
    """StormCrawler's crawler.flux imported: its status, tika and deletion streams are declared, their σ not given."""
    folder = tmp_path / "stormcrawler"
    shutil.copytree(ROOT / "tests" / "data" / "flux" / "stormcrawler", folder)
    doc = tmp_path / "crawler.storm.json"
    assert main(["import", "flux", str(folder / "crawler.flux"), "-o", str(doc)]) == 0
    capsys.readouterr()
    return doc


def test_annotate_sets_a_streams_sigma_and_a_spouts_ratio(capsys, crawler: Path) -> None:
    code, out, err = run(capsys, "annotate", str(crawler), "fetcher", "alpha=80ms", "sigma=1", "sigma.status=0.05",
                         "--json")
    assert code == 0, err
    data = json.loads(out)
    assert "bolts.fetcher.stream_sigma.status: not annotated -> 0.05" in data["changes"]
    assert "bolts.fetcher.stream_sigma.status: not annotated" not in data["unannotated"]
    assert "bolts.parse.stream_sigma.status: not annotated" in data["unannotated"]
    assert load_topology(crawler).bolt_by_name("fetcher").stream_sigma == {"status": 0.05}
    code, out, err = run(capsys, "annotate", str(crawler), "filespout", "ratio.status=0.5")
    assert code == 0, err
    assert load_topology(crawler).spouts[[s.name for s in load_topology(crawler).spouts].index("filespout")] \
        .stream_ratio == {"status": 0.5}
    code, out, err = run(capsys, "annotate", str(crawler), "fetcher", "sigma.default=0.5")
    assert code == 0 and load_topology(crawler).bolt_by_name("fetcher").sigma == 0.5


@pytest.mark.parametrize(("argv", "message"), [
    (["fetcher", "sigma.bogus=1"], "bolts.fetcher.sigma.bogus: fetcher declares no stream 'bogus' (its streams: "
                                   "status)"),
    (["fetcher", "ratio.status=1"], "a bolt's value per stream is written sigma.STREAM=VALUE"),
    (["filespout", "ratio.status=-1"], "spouts.filespout.stream_ratio.status: input should be greater than or equal"),
    (["filespout", "ratio.status=nan"], "spouts.filespout.stream_ratio.status: 'nan': nan is not a finite number"),
])
def test_annotate_refuses_a_bad_stream_value_in_one_line(capsys, crawler: Path, argv: list[str],
                                                        message: str) -> None:
    before = crawler.read_bytes()
    code, out, err = run(capsys, "annotate", str(crawler), *argv)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1
    assert crawler.read_bytes() == before

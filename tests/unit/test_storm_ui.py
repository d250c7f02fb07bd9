"""Storm UI import against a stand-in UI on 127.0.0.1: the mapping, its sources, and every failure as one line."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from storm_ui_server import DEEP_LEVELS, TOPOLOGY_ID, StormUIServer

from app.cli import main
from app.core.rates import rate_check
from app.core.storm.ui.client import Credentials, StormUIClient, StormUIError
from app.core.storm.ui.fetch import fetch_storm_ui
from app.core.storm.ui.reader import annotate, from_storm_ui

ROOT = Path(__file__).resolve().parents[2]
WORDCOUNT_FLUX = ROOT / "models" / "wordcount.flux.yaml"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def ui():
    with StormUIServer() as server:
        yield server


def test_mapping_of_the_wordcount_replies(ui: StormUIServer) -> None:
    result = from_storm_ui(fetch_storm_ui(StormUIClient(ui.url), "wordcount"))
    topo = result.topology
    assert result.topology_id == TOPOLOGY_ID and topo.name == "wordcount"
    spout = topo.spouts[0]
    assert (spout.name, spout.rate, spout.burst, spout.executors, spout.unannotated) == ("sentences", 40.0, 1, 1, [])
    bolts = {b.name: (b.parallelism, b.alpha, b.sigma) for b in topo.bolts}
    assert bolts == {"split": (2, 0.005, 5.0), "count": (1, 0.02, 1.0), "report": (1, 0.002, 0.0)}
    edges = sorted((topo.name_of(s.source), topo.name_of(s.target)) for s in topo.subscriptions)
    assert edges == [("count", "report"), ("sentences", "split"), ("split", "count")]  # no __system input
    storm = topo.storm
    settings = (storm.workers, storm.acker_executors, storm.max_spout_pending, storm.message_timeout_secs)
    assert settings == (2, 1, 1000, 30)
    sources = {d.path: d.source for d in result.derived}
    rate_source = "24000 tuples emitted on its own streams (component page) over the last 600 s"
    assert sources["spouts.sentences.rate"] == rate_source
    assert "weighted by executed" in sources["bolts.count.alpha"]
    assert sources["bolts.split.sigma"] == "120000 emitted / 24000 executed over the last 600 s"
    assert sources["bolts.split.parallelism"] == "executors = 2"
    assert topo.storm.sources["bolts.count.alpha"] == sources["bolts.count.alpha"]
    report = rate_check(topo)
    # the import idles for no time (max_idle_time 0, as a Storm executor): C / (α(1+τ)) must exceed the inflow
    assert topo.settings.max_idle_time == 0
    assert report.bolts["count"].status == "grows" and report.suggested_parallelism["count"] == 5


@pytest.mark.parametrize("page", ["component", "topology"])
def test_a_latency_shown_as_0_000_ms_is_taken_as_the_resolution(ui: StormUIServer, page: str) -> None:
    # the UI prints three decimals: "0.000" is below 0.0005 ms, so that upper bound is assumed, not α = 0
    snapshot = fetch_storm_ui(StormUIClient(ui.url), "wordcount")
    if page == "component":
        for item in snapshot.components["count"]["inputStats"]:
            item["executeLatency"] = "0.000"
    else:  # only the topology page's row gives the bolt's latency
        del snapshot.components["count"]["inputStats"]
        row = next(r for r in snapshot.topology["bolts"] if r["boltId"] == "count")
        row["executeLatency"] = "0.000"
    result = from_storm_ui(snapshot)
    count = next(b for b in result.topology.bolts if b.name == "count")
    assert count.alpha == pytest.approx(0.0005 / 1000) and "alpha" not in count.unannotated
    source = {d.path: d.source for d in result.derived}["bolts.count.alpha"]
    assert source.startswith("execute latency below the UI's 0.001 ms resolution: 0.0005 ms assumed")


def test_window_all_uses_the_uptime(ui: StormUIServer) -> None:
    result = from_storm_ui(fetch_storm_ui(StormUIClient(ui.url), TOPOLOGY_ID, window="all"))
    assert result.topology.spouts[0].rate == pytest.approx(24000 / 1800)
    assert any("window=%3Aall-time" in path for path, _ in ui.requests)


def test_basic_auth_and_bearer_token_are_sent() -> None:
    with StormUIServer("auth") as server:
        for creds in (Credentials.resolve("storm:secret"), Credentials.resolve(token="t0k3n"),
                      Credentials.resolve(environ={"STORMBOUND_UI_USER": "storm", "STORMBOUND_UI_PASSWORD": "secret"})):
            assert from_storm_ui(fetch_storm_ui(StormUIClient(server.url, creds), "wordcount")).topology.bolts


def test_redirects_are_followed_without_leaking_credentials_elsewhere() -> None:
    with StormUIServer("redirect") as server:
        result = from_storm_ui(fetch_storm_ui(StormUIClient(server.url, Credentials.resolve(token="x")), "wordcount"))
        assert len(result.topology.bolts) == 3
        assert all(headers.get("Authorization") == "Bearer x" for _, headers in server.requests)  # same origin


@pytest.mark.parametrize(("mode", "message"), [
    ("auth", "/api/v1/topology/summary: 401 Unauthorized: give --user"),
    ("forbidden", "/api/v1/topology/summary: 403 Forbidden"),
    ("missing", "/api/v1/topology/summary: 404 Not Found: no Storm UI REST API at this address"),
    ("truncated", f"/api/v1/topology/{TOPOLOGY_ID}?window=600: the reply was cut short"),
    ("html", "/api/v1/topology/summary: the reply is text/html, not JSON"),
    ("badjson", f"/api/v1/topology/{TOPOLOGY_ID}?window=600: the reply is not valid JSON"),
])
def test_each_failure_is_one_line_and_exit_2(capsys, tmp_path: Path, mode: str, message: str) -> None:
    out_file = tmp_path / "out.storm.json"
    with StormUIServer(mode) as server:
        code, out, err = run(capsys, "import", "storm-ui", server.url, "--topology", "wordcount", "-o", str(out_file))
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith(server.url) and message in err
    assert not out_file.exists()


def test_a_reply_nested_10000_deep_is_one_line_naming_the_limit(capsys) -> None:
    """The depth is measured before decoding: no RecursionError, one line with the URL and the limit."""
    from app.core.formats.limits import MAX_DEPTH

    with StormUIServer("deep") as server:
        with pytest.raises(StormUIError) as err:
            fetch_storm_ui(StormUIClient(server.url), "wordcount")
        code, _, text = run(capsys, "import", "storm-ui", server.url, "--topology", "wordcount")
    url = f"{server.url}/api/v1/topology/{TOPOLOGY_ID}?window=600"
    line = str(err.value)
    assert line.startswith(f"{url}: ") and "\n" not in line and len(line) < 300
    assert f"deeper than {MAX_DEPTH} levels" in line and "STORMBOUND_MAX_JSON_DEPTH" in line
    assert DEEP_LEVELS > MAX_DEPTH
    assert code == 2 and text == line + "\n" and "RecursionError" not in text


@pytest.mark.parametrize(("mode", "literal"), [("nan", "NaN"), ("huge", "1e400")])
def test_a_reply_with_a_non_finite_number_is_refused_naming_the_field(capsys, mode: str, literal: str) -> None:
    """NaN and 1e400 (which json.loads would read as nan and inf) never reach the mapping."""
    with StormUIServer(mode) as server:
        with pytest.raises(StormUIError) as err:
            fetch_storm_ui(StormUIClient(server.url), "wordcount")
        code, out, text = run(capsys, "import", "storm-ui", server.url, "--topology", "wordcount")
    url = f"{server.url}/api/v1/topology/{TOPOLOGY_ID}?window=600"
    line = str(err.value)
    assert line.startswith(f"{url}: ") and "\n" not in line
    assert "spouts[0].emitted" in line and literal in line and "not finite" in line
    assert code == 2 and text == line + "\n" and not out


def test_unreachable_host_and_absent_topology(capsys, tmp_path: Path) -> None:
    with StormUIServer() as server:
        url = server.url
        code, _, err = run(capsys, "import", "storm-ui", url, "--topology", "nope")
        assert code == 2 and err == (f"{url}: no topology 'nope' is running (running: wordcount ({TOPOLOGY_ID}), "
                                     "exclamation (exclamation-1-1690000000))\n")
    code, _, err = run(capsys, "import", "storm-ui", url, "--topology", "wordcount", "--timeout", "2")
    assert code == 2 and err.count("\n") == 1 and "cannot connect: connection refused" in err
    code, _, err = run(capsys, "import", "storm-ui", "ftp://example.org", "--topology", "wordcount")
    assert code == 2 and "not a Storm UI address" in err


def test_slow_reply_times_out() -> None:
    with StormUIServer("slow") as server, pytest.raises(StormUIError, match="no answer within 1 s"):
        fetch_storm_ui(StormUIClient(server.url, timeout_s=1), "wordcount")


def test_annotate_a_flux_import_keeps_its_groupings(ui: StormUIServer) -> None:
    from app.core.storm.flux.builder import import_flux

    flux = import_flux(WORDCOUNT_FLUX).topology
    measured = from_storm_ui(fetch_storm_ui(StormUIClient(ui.url), "wordcount"))
    topo, notes = annotate(flux, measured)
    assert all(not c.unannotated for c in topo.components)
    count = topo.bolt_by_name("count")
    assert (count.alpha, count.sigma, count.class_name) == (0.02, 1.0, "org.apache.storm.testing.TestWordCounter")
    sub = next(s for s in topo.subscriptions if topo.name_of(s.target) == "count")
    assert sub.grouping == "fields" and sub.fields == ["word"]
    assert topo.storm.flux_file == flux.storm.flux_file
    assert topo.storm.sources["bolts.count.alpha"].startswith("20 ms executeLatency")
    assert notes == []


def test_a_windowed_bolt_takes_its_slide_times_the_execute_latency(ui: StormUIServer) -> None:
    """docs/model.md section 10: a count window runs one execute(TupleWindow) in every S-th execute(tuple), so the
    execute latency (component-count.json: 20 ms) is α / S and α = S × 20 ms; a duration window's evaluation runs on
    its own thread: the document's α is kept, and said."""
    from app.core.storm.flux.builder import import_flux
    from app.core.topology import Topology, Window

    flux = import_flux(WORDCOUNT_FLUX).topology

    def windowed(window: Window) -> Topology:
        return flux.model_copy(update={"bolts": [b.model_copy(update={"window": window}) if b.name == "count" else b
                                                 for b in flux.bolts]})
    measured = from_storm_ui(fetch_storm_ui(StormUIClient(ui.url), "wordcount"))
    topo, _ = annotate(windowed(Window(kind="count", length=30, slide=10)), measured)
    assert topo.bolt_by_name("count").alpha == pytest.approx(0.2)
    assert topo.storm.sources["bolts.count.alpha"] == ("executeLatency 20 ms × its slide of 10 (a windowed bolt: "
                                                       "one execute(TupleWindow) per slide)")
    assert topo.bolt_by_name("split").alpha == 0.005  # an ordinary bolt keeps its execute latency
    duration = windowed(Window(kind="duration", length=10))
    topo, notes = annotate(duration, measured)
    assert topo.bolt_by_name("count").alpha == flux.bolt_by_name("count").alpha
    assert any(n.startswith("bolts.count.alpha: a duration window evaluates on its own timer thread") for n in notes)


def test_an_asynchronous_bolt_takes_the_process_latency(ui: StormUIServer) -> None:
    """docs/model.md section 8: an asynchronous bolt's α is a thread's time for one tuple, the process latency
    (component-count.json: processLatency 20.317 ms, executeLatency 20 ms), never the execute latency."""
    from app.core.storm.flux.builder import import_flux

    flux = import_flux(WORDCOUNT_FLUX).topology
    flux = flux.model_copy(update={"bolts": [b.model_copy(update={"threads": 4}) if b.name == "count" else b
                                             for b in flux.bolts]})
    measured = from_storm_ui(fetch_storm_ui(StormUIClient(ui.url), "wordcount"))
    assert measured.process_alpha["count"] == pytest.approx(0.020317)
    topo, _ = annotate(flux, measured)
    count, split = topo.bolt_by_name("count"), topo.bolt_by_name("split")
    assert count.alpha == pytest.approx(0.020317) and count.threads == 4 and not count.unannotated
    assert topo.storm.sources["bolts.count.alpha"].startswith("processLatency 20.32 ms (an asynchronous bolt")
    assert split.alpha == 0.005  # an ordinary bolt keeps its execute latency
    # without a process latency the document's α is kept, and said
    bare = measured.model_copy(update={"process_alpha": {}})
    topo, notes = annotate(flux, bare)
    assert topo.bolt_by_name("count").alpha == flux.bolt_by_name("count").alpha
    assert any(n.startswith("bolts.count.alpha: asynchronous (4 threads") for n in notes)
    # the UI cannot say which bolts are asynchronous: one whose process latency is 10 times its execute latency
    # or more is said to look it, and is imported with its execute latency until a document gives it threads
    snapshot = fetch_storm_ui(StormUIClient(ui.url), "wordcount")
    for item in snapshot.components["count"]["inputStats"]:
        item["processLatency"] = "2000.000"
    looks = from_storm_ui(snapshot)
    assert looks.topology.bolt_by_name("count").alpha == 0.02 and looks.process_alpha["count"] == 2.0
    (note,) = [n for n in looks.notes if n.startswith("bolts.count.alpha: its process latency")]
    assert "(2000 ms) is 100 times its execute latency (20 ms): if it is asynchronous" in note
    assert not any("bolts.split.alpha: its process latency" in n for n in looks.notes)


def test_cli_json_lists_each_value_with_its_source(capsys, ui: StormUIServer, tmp_path: Path) -> None:
    out_file = tmp_path / "wc.storm.json"
    code, out, err = run(capsys, "import", "storm-ui", ui.url, "--topology", "wordcount", "--json", "-o", str(out_file))
    assert code == 0, err
    data = json.loads(out)
    derived = {d["path"]: d for d in data["derived"]}
    assert derived["bolts.split.sigma"]["value"] == 5.0
    assert json.loads(out_file.read_text())["name"] == "wordcount"


@pytest.mark.parametrize(("mode", "message"), [
    ("loop", "a redirect loop"),
    ("elsewhere", "redirected to another host (http://localhost:"),
    ("badutf8", "the reply is not UTF-8 text: byte 0xff at offset"),
    ("badnames", r"bolt 'spl\nit\x00\u202e': a name with control characters"),
    ("bignum", "bolts.split: executors 100000000000000000000000 is not a whole number up to Storm's largest"),
    ("dupkeys", "duplicate key 'boltId'"),
])
def test_hostile_replies_are_one_line_and_exit_2(capsys, tmp_path: Path, mode: str, message: str) -> None:
    """Redirect loops and other hosts, bad UTF-8, unprintable names, huge counts, duplicate keys."""
    out_file = tmp_path / "out.storm.json"
    with StormUIServer(mode) as server:
        code, out, err = run(capsys, "import", "storm-ui", server.url, "--topology", "wordcount", "-o", str(out_file))
    assert code == 2, err
    assert err.count("\n") == 1 and message in err, err
    assert "\u202e" not in err and "\x00" not in err
    assert not out_file.exists()


@pytest.mark.parametrize("mode", ["drip", "drip-headers"])
def test_a_slow_drip_is_cut_at_the_total_deadline(mode: str) -> None:
    """One byte every half second (in the body, or in the status line and headers): the request ends
    at its one total deadline, not after the last byte."""
    with StormUIServer(mode) as server:
        client = StormUIClient(server.url, timeout_s=2)
        start = time.monotonic()
        with pytest.raises(StormUIError, match="no answer within 2 s for the whole request"):
            if mode == "drip":
                fetch_storm_ui(client, "wordcount")
            else:
                client.get("/api/v1/topology/summary")
        assert time.monotonic() - start < 15  # the 2 s deadline kept, well before the drip ends


def test_import_storm_ui_timeout_is_checked_at_the_parser(capsys) -> None:
    for bad in ("nan", "inf", "0", "-1", "1e400"):
        code, _, err = run(capsys, "import", "storm-ui", "http://127.0.0.1:9", "--topology", "x", "--timeout", bad)
        assert code == 2 and err.count("\n") == 1 and "--timeout" in err, (bad, err)


def test_a_join_takes_its_branches_times_the_execute_latency(ui: StormUIServer) -> None:
    """docs/model.md section 11: a join's α is one message's work, an execute per branch's part, so α = branches ×
    the execute latency (component-count.json: 20 ms): count made a join of split and the spout, 2 × 20 ms."""
    from app.core.storm.flux.builder import import_flux
    from app.core.topology import Join, Subscription, parse_topology

    flux = import_flux(WORDCOUNT_FLUX).topology
    spout, count = flux.spouts[0], flux.bolt_by_name("count")
    data = flux.model_copy(update={
        "bolts": [b.model_copy(update={"join": Join(kind="all")}) if b.name == "count" else b for b in flux.bolts],
        "subscriptions": [*flux.subscriptions, Subscription(source=spout.id, target=count.id)]}).model_dump(mode="json")
    measured = from_storm_ui(fetch_storm_ui(StormUIClient(ui.url), "wordcount"))
    topo, _ = annotate(parse_topology(data), measured)
    assert topo.bolt_by_name("count").alpha == pytest.approx(0.04)
    assert topo.storm.sources["bolts.count.alpha"] == ("executeLatency 20 ms × its 2 branches (a join: one execute "
                                                       "per part of a message)")

"""The app at a glance on a real topology (StormCrawler's crawler, 11 bolts, tests/data/crawler-annotated.storm.json):
the headline names what grows first, the verdicts arrive as the search knows them (the rate check's at once),
the trace view gives the growing bolt a large plot with labels that never overlap, and the Inspector shows the
selected bolt's explanation."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from app.core.formats import load_topology
from app.core.formats.verified import headline
from app.core.rates import rate_check
from app.core.results import BoltVerdict
from app.gui.document import DocumentModel
from app.gui.panels.verification import VerificationPanel

pytest.importorskip("app.core.tcn.search", reason="the verifier core (app/core/tcn/search.py) is not installed")

CRAWLER = Path(__file__).resolve().parents[1] / "data" / "crawler-annotated.storm.json"


def crawler_panel(qtbot) -> VerificationPanel:
    panel = VerificationPanel(DocumentModel(load_topology(CRAWLER)))
    qtbot.addWidget(panel)
    panel.show()
    return panel


def test_headline_names_what_grows_first_then_counts_the_rest() -> None:
    grows, bounded = BoltVerdict(verdict="counterexample"), BoltVerdict(verdict="bounded")
    names = ["a", "b", "c", "d", "e"]
    assert headline({"c": grows, "a": bounded, "b": bounded}, ["a", "b", "c"]) == "c grows; 2 bounded"
    assert headline({n: grows for n in names}, names) == "a, b, c and 2 more grow"
    assert headline({"a": bounded, "b": bounded}, ["a", "b"]) == "all 2 bounded"
    assert headline({"a": bounded}, ["a"]) == "a bounded"
    assert headline({"a": bounded}, ["a", "b"], searching=True) == "1 bounded; 1 searching…"
    flooded = BoltVerdict(verdict="unbounded")
    assert headline({"a": flooded, "b": bounded, "c": grows}, ["a", "b", "c"]) == "c grows; a unbounded; 1 bounded"
    # a kind the table does not know yet is counted under its own name, not dropped
    assert headline({"a": BoltVerdict.model_construct(verdict="later-kind"), "b": bounded},
                    ["a", "b"]) == "1 bounded; 1 later-kind"


@pytest.mark.timeout(200)
def test_crawler_verdicts_arrive_bounded_first_and_the_headline_names_status(qtbot) -> None:
    panel = crawler_panel(qtbot)
    proven = {n for n, b in rate_check(load_topology(CRAWLER)).bolts.items() if b.status == "bounded"}
    assert len(proven) == 10 and "status" not in proven
    arrivals: list[tuple[float, frozenset[str]]] = []  # (seconds after Verify, bolts with a verdict)

    def record(_row: int) -> None:
        state = panel.states[0]
        known = frozenset(n for n in state.spec.bolts if state.bolt_verdict(n) is not None)
        if not arrivals or arrivals[-1][1] != known:
            arrivals.append((time.monotonic() - started, known))

    panel.controller.property_changed.connect(record)
    started = time.monotonic()
    with qtbot.waitSignal(panel.all_finished, timeout=180_000):
        panel.start()
    firsts = [known for _t, known in arrivals if known]
    assert firsts[0] == proven  # the rate check's verdicts first, all at once, before the search
    assert "status" in firsts[-1] and "status" not in firsts[0]
    assert panel.verdict_text(0) == "status grows; 10 bounded" == panel.headline()
    assert panel.model.text(0, 2) == "status grows; 10 bounded"
    assert panel.states[0].spec.title == "Unbounded growth of every bolt"
    details = panel.details.toPlainText()
    assert details.startswith("status grows; 10 bounded") and "counterexample (k = " in details
    # the trace panel says it the same way: what grows first, the property second
    assert panel.trace_view.title.text().startswith("status grows; 10 bounded — unbounded growth of every bolt")


@pytest.mark.timeout(200)
def test_the_progress_line_says_what_the_time_is_spent_on(qtbot) -> None:
    panel = crawler_panel(qtbot)
    lines: list[str] = []
    panel.controller.progress_changed.connect(lambda: lines.append(panel.controller.progress_text()))
    with qtbot.waitSignal(panel.all_finished, timeout=180_000):
        panel.start()
    # the proof by rates first (verify's pipeline, docs/verifier.md), then a lasso for the trace of a bolt it decided
    assert any("1 of 11 bolts left, now status: a proof of growth by rates" in line for line in lines), lines
    assert any("now status: a lasso by simulation, for a trace (it grows, proven by rates)" in line
               for line in lines), lines


@pytest.mark.timeout(300)
def test_crawler_window_trace_layout_and_inspector_explanation(qtbot, make_window) -> None:
    """At 1600×1000: the growing bolt's plot first and at least 150 px high, every plot titled horizontally with no
    two titles overlapping, each y axis fitted to its own data; the selected bolt's explanation in the Inspector."""
    window = make_window()
    window.resize(1600, 1000)
    assert window.open_path(CRAWLER, ask=False)
    panel = window.verification_panel
    with qtbot.waitSignal(panel.all_finished, timeout=240_000):
        panel.action_verify.trigger()
    panel.trace_dock.raise_()
    qtbot.wait(200)
    plots = panel.trace_view.drawn.plots
    assert list(plots)[0] == "status" and plots["status"].sceneBoundingRect().height() >= 150
    assert all(plots[n].sceneBoundingRect().height() < 150 for n in list(plots)[1:])  # context: small
    titles = [p.titleLabel for p in plots.values()]
    assert all(t.isVisible() and t.text for t in titles) and "status (+" in titles[0].text
    rects = [t.sceneBoundingRect() for t in titles]
    assert all(not a.intersects(b) for i, a in enumerate(rects) for b in rects[i + 1:])
    assert all(p.getAxis("left").labelText == "" for p in plots.values())  # no rotated labels beside the axes
    status_top, filter_top = (plots[n].vb.viewRange()[1][1] for n in ("status", "filter"))
    assert status_top > 100 > filter_top  # each scaled to its own data: status grows, filter stays near 0
    # the scroll area holds every plot at its height: the others are reached by scrolling, not squeezed
    assert panel.trace_view.plots.minimumHeight() >= panel.trace_view.drawn.height
    window.scene.select_ids({window.document.topology().bolt_by_name("status").id})
    why = window.inspector.explanation
    assert why.isVisible()
    text = why.text.text()
    assert "Utilisation ρ = 2.73 (grows)" in text and "its queue grows by about 173 tuples/s" in text
    assert "Unbounded growth of every bolt: grows: lasso 1" in text and "status's queue gains" in text
    window.scene.select_ids({window.document.topology().bolt_by_name("fetcher").id})
    assert "bounded (rate proof, queue < 4.024)" in why.text.text() and "receives at most" in why.text.text()


def test_gui_notes_name_the_dialog_not_the_command_line_option(make_window) -> None:
    from app.gui.app_words import cli_words, in_app_words

    flux = Path(__file__).resolve().parents[1] / "data" / "flux" / "stormcrawler" / "crawler.flux"
    window = make_window()
    window.dialogs.answers["open_file"] = ""  # no properties file chosen: the notes say how to give one
    assert window.storm_io.import_flux_path(flux, ask=True)
    kind, title, text = window.dialogs.shown[-1]
    assert (kind, title) == ("info", "Imported Flux file")
    assert "give --filter" not in text and "import it again with File ▸ Import ▸ Flux…" in text
    assert cli_words(text) == [], text
    # every hint of the table is replaced, and nothing option-like is left in its replacement
    samples = ["${v} is not defined: give --filter FILE.properties", "${v} needs --env (environment variable "
               "substitution)", "try a larger k (e.g. --k-max 80)", "(import with --lag-interval S to add the lag's "
               "growth)", "Storm 2.x (no version given: set one with --storm-version or stormbound.storm_version)",
               "a bound of at least 900 positions (--k-max 900; an encoding grows",
               "exists: give --force to replace it"]
    assert [cli_words(in_app_words(s)) for s in samples] == [[]] * len(samples)


def test_an_old_document_opens_in_the_app_with_its_one_line_note(make_window) -> None:
    old = Path(__file__).resolve().parents[1] / "data" / "old-documents" / "b360b52-crawler-annotated.storm.json"
    window = make_window()
    assert window.open_path(old, ask=False)
    message = window.statusBar().currentMessage()
    assert "schema_version 1, before declared streams" in message and "tika on shunt" in message
    assert window.document.topology().bolt_by_name("shunt").streams == ["tika"]

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
    # a kind the table does not know yet is counted under its own name, not dropped
    assert headline({"a": BoltVerdict.model_construct(verdict="unbounded"), "b": bounded},
                    ["a", "b"]) == "1 bounded; 1 unbounded"


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
    assert any("1 of 11 bolts left, now status: building a lasso by simulation" in line for line in lines), lines

"""One rate analysis per document snapshot (app/core/rates/report.py, `RateAnalysis`): `verify` and `check`
build the exact figures of the document once and run its failure check once, whatever reads them (the
search's rate phase, the headroom, the forecast, the suggestion, the latency bounds)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.core.latency import losses as latency_losses
from app.core.rates import flows, report

ROOT = Path(__file__).resolve().parents[2]
FAILOVER = ROOT / "models" / "failover.storm.json"  # a failure model: the failure check runs


class Constructions:
    """Counts, per topology object, the RateAnalysis, RateFigures (at its own parallelism) and failure checks
    made of it."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.analyses: list[Any] = []
        self.figures: Counter[int] = Counter()
        self.failure_checks: Counter[int] = Counter()
        analysis_init, figures_init, failure_check = (report.RateAnalysis.__init__, flows.RateFigures.__init__,
                                                      report.failure_check)

        def counted_analysis(analysis: Any, topo: Any) -> None:
            self.analyses.append(topo)
            analysis_init(analysis, topo)

        def counted_figures(figures: Any, topo: Any, parallelism: Any = None) -> None:
            if parallelism is None:  # (the suggestion's what-ifs at other parallelisms are other snapshots)
                self.figures[id(topo)] += 1
            figures_init(figures, topo, parallelism)

        def counted_check(topo: Any, *args: Any, **kwargs: Any) -> Any:
            self.failure_checks[id(topo)] += 1
            return failure_check(topo, *args, **kwargs)

        monkeypatch.setattr(report.RateAnalysis, "__init__", counted_analysis)
        monkeypatch.setattr(flows.RateFigures, "__init__", counted_figures)
        monkeypatch.setattr(report, "failure_check", counted_check)
        monkeypatch.setattr(latency_losses, "failure_check", counted_check)  # the latency bounds read it too

    def of_the_document(self) -> tuple[int, int, int]:
        """(analyses, figures, failure checks) of the one topology the command read (the first analysed)."""
        document = self.analyses[0]
        same = sum(1 for topo in self.analyses if topo is document or topo == document)
        return same, self.figures[id(document)], self.failure_checks[id(document)]


@pytest.mark.parametrize("command", [["check", "--json"], ["verify", "--json", "-q"]])
def test_check_and_verify_analyse_the_document_once(command: list[str], monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    made = Constructions(monkeypatch)
    main([*command, str(FAILOVER)])
    assert '"headroom"' in capsys.readouterr().out  # the headroom was computed, from the same analysis
    assert made.of_the_document() == (1, 1, 1)


def test_watch_analyses_the_watched_document_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """`watch` checks the document it watches once per watch (not once per poll); each poll analyses only its
    own measured snapshots (the measured topology and the two shifted by the error band: other documents)."""
    import sys

    from app.core.storm.ui.reader import from_storm_ui
    from app.core.storm.ui.replies import StormUISnapshot
    from app.measure.storm_watch import Judge

    sys.path.insert(0, str(ROOT / "tests"))
    from storm_ui_live import LiveStormUI

    ui = LiveStormUI("busy", seed=1)
    first = LiveStormUI("busy", seed=1).poll_at(1, 5.0)
    model = from_storm_ui(StormUISnapshot(url="http://x", topology_id="x", window="all", topology=first.topology,
                                          components=first.components)).topology
    made = Constructions(monkeypatch)
    judge = Judge(model, 1.0)
    lines = [judge.add(ui.poll_at(k, 2.0 + k)) for k in range(1, 9)]
    assert sum(1 for line in lines if line.bolts) >= 5  # the polls were judged, with the document's report
    assert sum(1 for topo in made.analyses if topo is model) == 1
    assert len(made.analyses) > 5  # the measured snapshots are analysed at every poll (the count can fail)
    judge.model = model.model_copy()  # a new document found by the watch: checked once more
    judge.add(ui.poll_at(9, 11.0))
    assert sum(1 for topo in made.analyses if topo is judge.model) == 1

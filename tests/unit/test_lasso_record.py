"""The lassos the checker room certified within one verification (app/core/tcn/check/lassos.py): a lasso embedded
again (a spill's evidence: a flood whose source grows in a lasso) is answered from the certifier's own earlier
answer, never from anything a builder says; a lasso of other content is certified afresh."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core.formats.trace import load_trace, trace_data
from app.core.tcn.check import lassos
from app.core.tcn.check.certify import certify

TRACE = Path(__file__).resolve().parents[1] / "data" / "traces" / "getting-started.1.trace.json"


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    seen: list[Any] = []

    def counted(lasso: Any, **kwargs: Any) -> Any:
        seen.append(lasso)
        return certify(lasso, **kwargs)

    monkeypatch.setattr(lassos, "certify", counted)
    return seen


def test_a_lasso_certified_once_is_not_replayed_again_as_json(calls: list[Any]) -> None:
    trace = load_trace(TRACE)
    with lassos.remembering():
        assert lassos.certified(trace, ["count"]).ok
        assert lassos.certified(trace, ["count"]).ok  # the same object
        again = json.loads(json.dumps(trace_data(trace)))  # embedded in a certificate: JSON of the same lasso
        found = lassos.certified(again, ["count"])
    assert found.ok and found.growth_per_loop["count"] == 1
    assert len(calls) == 1


def test_a_lasso_of_other_content_is_certified_afresh_and_rejected(calls: list[Any]) -> None:
    trace = load_trace(TRACE)
    forged = trace_data(trace)
    forged["positions"][-1]["bolts"]["count"]["queue"] += 5  # (the loop no longer repeats)
    with lassos.remembering():
        assert lassos.certified(trace, ["count"]).ok
        assert not lassos.certified(forged, ["count"]).ok
        assert not lassos.certified(forged, ["count"]).ok  # a rejection is not remembered: replayed each time
        # other checked bolts: certified for them (split does not grow in this lasso), not the answer for count
        assert not lassos.certified(trace_data(trace), ["split"]).ok
    assert len(calls) == 4


def test_without_a_record_every_lasso_is_certified(calls: list[Any]) -> None:
    trace = load_trace(TRACE)
    with lassos.remembering():
        lassos.certified(trace, ["count"])
    lassos.certified(trace, ["count"])
    lassos.certified(trace, ["count"])
    assert len(calls) == 3

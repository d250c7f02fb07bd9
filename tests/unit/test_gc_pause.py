"""paused_gc: the cyclic collector is off inside, back on after (nested, on error), untouched if it was off."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from app.core.formats.trace import load_trace
from app.core.gc_pause import paused_gc
from app.core.tcn.check.certify import certify

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _collector_on() -> object:
    gc.enable()
    yield
    gc.enable()


def test_the_collector_is_off_inside_and_on_after_nested_pauses() -> None:
    with paused_gc():
        assert not gc.isenabled()
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause still runs
    assert gc.isenabled()


def test_an_error_inside_still_turns_it_back_on() -> None:
    with pytest.raises(RuntimeError), paused_gc():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_a_collector_turned_off_by_the_caller_stays_off() -> None:
    gc.disable()
    with paused_gc():
        pass
    assert not gc.isenabled()


def test_certify_pauses_it_and_leaves_it_on() -> None:
    seen: list[bool] = []
    trace = load_trace(ROOT / "tests" / "data" / "traces" / "getting-started.1.trace.json")
    cert = certify(trace, cancelled=lambda: seen.append(gc.isenabled()) or False)
    assert cert.ok and seen and not any(seen)
    assert gc.isenabled()


def test_what_a_long_pause_leaves_alive_is_moved_to_the_oldest_generation_untraversed() -> None:
    """More than MOVE_FROM objects still alive at the end of a pause go to the oldest generation without the young
    collection that would traverse them all at once (seconds for a long lasso, past verify's time limit)."""
    from app.core import gc_pause

    was = gc.isenabled()
    gc.enable()
    try:
        with paused_gc():
            kept = [[i] for i in range(gc_pause.MOVE_FROM + 1000)]
        assert gc.isenabled() and gc.get_count()[0] < 1000
        assert len(kept) > gc_pause.MOVE_FROM
    finally:
        if not was:
            gc.disable()

"""Stopping a poll of many requests within one request (Live Mode's Stop), and a poll's figures found per bolt
without scanning every counter (3,000 bolts: bench/live_stop.py)."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any, cast

import pytest

from app.core.storm.ui.client import StormUIClient
from app.measure.storm_figures import executed_keys, poll_counts
from app.measure.storm_record import PollStopped, poll_loop, read_poll

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from storm_ui_live import TOPOLOGY_ID, LiveStormUI  # noqa: E402 - the stand-ins live in tests/


class PageClient:
    """The stand-in UI's pages without HTTP; sets `stop` after `stop_after` requests."""

    base = "http://stand-in"

    def __init__(self, ui: LiveStormUI, stop: threading.Event, stop_after: int):
        self.ui, self.stop, self.stop_after, self.asked = ui, stop, stop_after, 0

    def get(self, path: str, params: Any = None) -> Any:
        self.asked += 1
        if self.asked >= self.stop_after:
            self.stop.set()
        return self.ui.reply(path)[1]

    def url(self, path: str, params: Any = None) -> str:
        return self.base + path


def test_a_set_stop_drops_the_poll_in_hand_at_its_next_request() -> None:
    stop = threading.Event()
    client = PageClient(LiveStormUI("wide", bolts=500), stop, stop_after=10)
    with pytest.raises(PollStopped):
        read_poll(cast(StormUIClient, client), TOPOLOGY_ID, 1, stop)
    assert client.asked == 10  # not the 502 requests of the whole poll
    stop.clear()
    client = PageClient(LiveStormUI("wide", bolts=500), stop, stop_after=10)
    assert list(poll_loop(cast(StormUIClient, client), TOPOLOGY_ID, 0.01, stop=stop, drop_on_stop=True)) == []
    assert client.asked == 10


def test_without_drop_on_stop_the_poll_in_hand_finishes() -> None:
    """`record`'s Ctrl+C: the poll in hand is finished and written (docs/storm-runs.md)."""
    stop = threading.Event()
    client = PageClient(LiveStormUI("wide", bolts=50), stop, stop_after=10)
    polls = list(poll_loop(cast(StormUIClient, client), TOPOLOGY_ID, 0.01, stop=stop))
    assert len(polls) == 1 and polls[0].ok and len(polls[0].components) == 51


def test_executed_keys_are_the_counters_a_prefix_scan_found() -> None:
    counts = poll_counts(LiveStormUI("drift").poll_at(1, 5.0))
    for bolt in counts.bolts:
        assert sorted(executed_keys(counts, bolt)) == sorted(k for k in counts.counters
                                                             if k.startswith(f"exec|{bolt}|"))
        assert executed_keys(counts, bolt)

"""Polling a running topology's Storm UI: `record` (into a run folder) and `watch` (app/measure/storm_watch.py).

One poll reads the topology page and every component's page with all-time counts, and the Kafka lag
(`/api/v1/topology/ID/lag`; a UI without it is noted in the poll, not a failure), through the Storm UI
client (app/core/storm/ui/client.py: one deadline per request). A poll that fails (the UI is
down, a reply is cut short) is a gap: recorded as such, and the next poll goes on. Polls keep a fixed
rhythm (start + k × every; a poll that overran its slot moves the rhythm: the next comes a
whole interval after it, so that no interval between polls is much shorter than `every`).
Stopping (`stop` set, e.g. by Ctrl+C) ends the loop after the poll in hand; with `drop_on_stop` (Live Mode's
Stop) within one request instead: a poll is many requests (one per component: 3,000 for 3,000 bolts), and the
poll in hand is dropped.
"""

from __future__ import annotations

import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from typing import Any

from app.core.errors import Cancelled
from app.core.storm.ui.client import StormUIClient, StormUIError
from app.measure.storm_run import Poll, poll_problem

ALL_TIME = {"window": ":all-time"}


def _quote(part: str) -> str:
    return urllib.parse.quote(part, safe="")


class PollStopped(Cancelled):
    """`stop` was set while a poll was read: the poll is dropped."""


def read_poll(client: StormUIClient, topology_id: str, number: int,
              stop: threading.Event | None = None) -> tuple[Poll, dict[str, Any]]:
    """One poll (raises StormUIError when a page cannot be read), and the topology's configuration; PollStopped
    when `stop` is set before its last request."""
    path = f"/api/v1/topology/{_quote(topology_id)}"
    t = time.time()  # the UI reads its counts when the request arrives; decoding the reply comes after
    page = client.get(path, ALL_TIME)
    if not (isinstance(page, dict) and isinstance(page.get("spouts"), list) and isinstance(page.get("bolts"), list)):
        raise StormUIError(client.url(path, ALL_TIME), "the reply has no 'spouts' and 'bolts' lists")
    found = page.get("configuration")
    configuration: dict[str, Any] = found if isinstance(found, dict) else {}
    page = {k: v for k, v in page.items() if k != "configuration"}
    components: dict[str, dict[str, Any]] = {}
    page_t: dict[str, float] = {}
    for key, id_key in (("spouts", "spoutId"), ("bolts", "boltId")):
        for row in page[key]:
            name = row.get(id_key) if isinstance(row, dict) else None
            if not isinstance(name, str) or name.startswith("__"):
                continue
            if stop is not None and stop.is_set():
                raise PollStopped(number)
            asked = time.time()  # each page is read at its own moment: its counts are of this time
            reply = client.get(f"{path}/component/{_quote(name)}", ALL_TIME)
            if isinstance(reply, dict):
                components[name] = reply
                page_t[name] = asked
    lag: Any = None
    lag_error = None
    try:
        lag = client.get(f"{path}/lag")
    except StormUIError as err:
        lag_error = str(err)
    poll = Poll(poll=number, t=t, ok=True, topology=page, components=components, page_t=page_t, lag=lag,
                lag_error=lag_error)
    problem = poll_problem(poll)
    if problem is not None:
        raise BadFigures(client.base, f"poll {number}: {problem}")
    return poll, configuration


class BadFigures(StormUIError):
    """A poll whose counts cannot be measurements (negative, 4,000 digits, NaN, over 10^15): one line naming
    the poll and the field. `record` keeps the poll as a gap saying so; `watch` stops on it (exit 2)."""


def poll_loop(client: StormUIClient, topology_id: str, every: float, *, polls: int | None = None,
              duration: float | None = None, stop: threading.Event | None = None, first: int = 1,
              on_configuration: Callable[[dict[str, Any]], None] | None = None,
              refuse_bad: bool = False, drop_on_stop: bool = False) -> Iterator[Poll]:
    """Poll after poll (gaps included) until `polls` are done, `duration` has passed or `stop` is set (with
    `drop_on_stop`, the poll in hand is dropped at its next request rather than finished).
    A poll with figures that cannot be measurements (BadFigures) is a gap naming them, or with `refuse_bad`
    raised."""
    stop = stop or threading.Event()
    origin = start = time.monotonic()
    number = first
    done = 0
    while not stop.is_set():
        try:
            poll, configuration = read_poll(client, topology_id, number, stop if drop_on_stop else None)
            if on_configuration is not None and configuration:
                on_configuration(configuration)
        except BadFigures as err:
            if refuse_bad:
                raise
            poll = Poll(poll=number, t=time.time(), ok=False, gap=str(err))
        except StormUIError as err:
            poll = Poll(poll=number, t=time.time(), ok=False, gap=str(err))
        except PollStopped:
            return
        yield poll
        done += 1
        number += 1
        elapsed = time.monotonic() - origin
        if (polls is not None and done >= polls) or (duration is not None and elapsed >= duration):
            return
        due = start + done * every
        wait = due - time.monotonic()
        if wait < 0:  # late: the rhythm starts again from now, a whole interval on (no burst of short intervals)
            start += every - wait
            wait = every
        if duration is not None:
            wait = min(wait, origin + duration - time.monotonic())
        if wait > 0:
            stop.wait(wait)

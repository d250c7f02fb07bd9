"""Fetching a running topology's replies from the Storm UI's REST API (`fetch_storm_ui`, through
app/core/storm/ui/client.py): `/api/v1/topology/summary` to find the topology by id or name,
`/api/v1/topology/<id>?window=W`, `/api/v1/topology/<id>/component/<c>?window=W` for every spout and bolt, and
the lag endpoint.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable
from typing import Any

from app.core.storm.ui.client import StormUIClient, StormUIError
from app.core.storm.ui.replies import StormUISnapshot, checked_name, inputs_of, is_system

WINDOWS: dict[str, str] = {"600": "600", "10800": "10800", "86400": "86400", "all": ":all-time"}


def _quote(part: str) -> str:
    return urllib.parse.quote(part, safe="")


def find_topology(client: StormUIClient, wanted: str) -> str:
    """The id of the running topology with this id or name."""
    return str(_find_entry(client, wanted).get("id"))


def _find_entry(client: StormUIClient, wanted: str) -> dict[str, Any]:
    """The summary entry (`/api/v1/topology/summary`) of the running topology with this id or name."""
    path = "/api/v1/topology/summary"
    summary = client.get(path)
    items = summary.get("topologies") if isinstance(summary, dict) else None
    if not isinstance(items, list):
        raise StormUIError(client.url(path), "the reply has no 'topologies' list: is this a Storm UI?")
    entries = [t for t in items if isinstance(t, dict)]
    for t in entries:
        if t.get("id") == wanted:
            return t
    named = [str(t.get("id")) for t in entries if t.get("name") == wanted]
    if len(named) == 1:
        return next(t for t in entries if t.get("name") == wanted)
    if len(named) > 1:
        raise StormUIError(client.base, f"several topologies are named '{wanted}': give one id ({', '.join(named)})")
    running = ", ".join(f"{t.get('name')} ({t.get('id')})" for t in entries) or "none"
    raise StormUIError(client.base, f"no topology '{wanted}' is running (running: {running})")


def fetch_storm_ui(client: StormUIClient, topology: str, window: str = "600",
                   progress: Callable[[str], None] | None = None, lag_interval: float = 0.0) -> StormUISnapshot:
    """Every reply `from_storm_ui` needs, for the topology with this id or name. The lag endpoint is read once,
    or twice `lag_interval` seconds apart (its growth: what the spouts were offered beyond what they emitted)."""
    if window not in WINDOWS:
        raise StormUIError(client.base, f"--window {window}: expected one of {', '.join(WINDOWS)}")
    params = {"window": WINDOWS[window]}
    entry = _find_entry(client, topology)
    ident = str(entry.get("id"))
    path = f"/api/v1/topology/{_quote(ident)}"
    page = client.get(path, params)
    if not (isinstance(page, dict) and isinstance(page.get("spouts"), list) and isinstance(page.get("bolts"), list)):
        raise StormUIError(client.url(path, params), "the reply has no 'spouts' and 'bolts' lists")
    if "stormVersion" not in page and entry.get("stormVersion") is not None:  # the summary has it since 1.x
        page = {**page, "stormVersion": entry.get("stormVersion")}
    snapshot = StormUISnapshot(url=client.base, topology_id=ident, window=window, topology=page)
    names = [checked_name(str(c.get("spoutId")), client.base, "spout") for c in page["spouts"]
             if isinstance(c, dict) and not is_system(c.get("spoutId"))]
    names += [checked_name(str(c.get("boltId")), client.base, "bolt") for c in page["bolts"]
              if isinstance(c, dict) and not is_system(c.get("boltId"))]
    for name in names:
        if progress is not None:
            progress(f"reading component {name}")
        comp_path = f"{path}/component/{_quote(name)}"
        reply = client.get(comp_path, params)
        if not isinstance(reply, dict):
            raise StormUIError(client.url(comp_path, params), "expected a JSON object")
        snapshot.components[name] = reply
        is_bolt = "boltStats" in reply or str(reply.get("componentType") or "").lower() == "bolt" or \
            any(name == b.get("boltId") for b in page["bolts"] if isinstance(b, dict))
        if is_bolt and not inputs_of(reply) and window != "all":  # nothing executed in the window: inputs not listed
            again = client.get(comp_path, {"window": WINDOWS["all"]})
            snapshot.all_time_inputs[name] = inputs_of(again) if isinstance(again, dict) else []
    _read_lag(client, f"{path}/lag", snapshot, lag_interval, progress)
    return snapshot


def _read_lag(client: StormUIClient, path: str, snapshot: StormUISnapshot, interval: float,
              progress: Callable[[str], None] | None) -> None:
    """One reading of the lag endpoint, or two `interval` seconds apart; a UI without it (before 1.1, or spouts
    that are not Kafka's) is noted, not an error."""
    import time

    start = time.monotonic()
    for reading in range(2 if interval > 0 else 1):
        if reading:
            if progress is not None:
                progress(f"waiting {interval:g} s to read the lag again")
            time.sleep(interval)
        try:
            reply = client.get(path)
        except StormUIError as err:
            snapshot.lag_error = str(err)
            snapshot.lag = []
            return
        snapshot.lag.append((time.monotonic() - start, reply))

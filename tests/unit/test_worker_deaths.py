"""Worker deaths (docs/model.md section 9) without `storm.worker_min_ttf` are not decided: every answer about a
topology whose document gives `topology.workers` but no time between deaths says so, and says why its verdicts,
with failures or without, do not cover one (with the field: tests/unit/test_worker_check.py)."""

from __future__ import annotations

from pathlib import Path

from test_async_bolts import annotated_crawler  # the annotated StormCrawler archetype

from app.core.headroom import headroom
from app.core.rates import rate_check
from app.core.storm.flux.builder import import_flux
from app.core.storm.lines import capacity_lines
from app.core.topology import parse_topology

FLUX = Path(__file__).resolve().parents[1] / "data" / "flux"


def worker_lines(data: dict) -> list[str]:
    return [line for line in capacity_lines(headroom(parse_topology(data))) if "worker deaths" in line]


def test_a_flux_import_keeps_its_workers_and_every_answer_says_their_deaths_are_not_modelled() -> None:
    assert import_flux(FLUX / "stormcrawler/crawler.flux").topology.storm.workers == 1
    data = annotated_crawler(20)
    (line,) = worker_lines(data)
    assert line.startswith("worker deaths are not in the model: with topology.workers 1, a worker's death stops "
                           "every executor it runs at once (spouts and ackers too)")
    assert "the statuses are for runs in which no worker dies" in line
    # one worker runs every executor: its death loses at most every bolt's queue bound and batch, checkable by hand
    # from the rate check's bounds and the batches (ten bolts of one executor, the fetcher's 50 threads)
    topo = parse_topology(data)
    bounds = {n: b.queue_bound for n, b in rate_check(topo).bolts.items()}
    loss = sum(bounds.values()) + sum(b.take_max for b in topo.bolts)
    assert sum(b.take_max for b in topo.bolts) == 60
    assert f"expires; its one worker runs every executor, so a death loses at most {loss:.5g} tuples in queues" in line
    # with section 7's failures on, the line says that they are per bolt with immediate replays
    data["bolts"][0]["min_ttf"] = 600
    data["settings"].update(min_reboot_time=10, max_reboot_time=60)
    (line,) = worker_lines(data)
    assert "the statuses with failures are per bolt with immediate replays, so none covers a worker's death" in line


def test_without_workers_in_the_document_nothing_is_said() -> None:
    data = annotated_crawler(20)
    data["storm"]["workers"] = None
    data["storm"]["message_timeout_secs"] = None
    assert worker_lines(data) == []


def test_the_json_says_it_too() -> None:
    data = annotated_crawler(30)
    data["storm"].update(max_spout_pending=None, message_timeout_secs=30)
    room = headroom(parse_topology(data)).to_json()
    assert room["worker_deaths_modelled"] is False
    (queue,) = [q for q in room["storm"]["queues"] if q["bolt"] == "fetcher"]
    assert queue["threads"] == 50 and queue["seconds_to_timeout"]["value"] == 150

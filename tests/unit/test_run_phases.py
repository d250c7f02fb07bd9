"""Where a run's time goes, without Spark: the phases run.json records (app/spark/run_job.py `phase_times`)
and the Rendezvous where the tasks of a run on this machine meet (instead of Spark's allGather, which
answers a second late): every task gets every address, and the common start comes only once all
tasks have connected to each other."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from app.spark.run_job import PHASE_NAMES, Rendezvous, phase_times


def test_phase_times_from_the_driver_and_the_tasks_marks() -> None:
    marks = [{"entered": 103.0, "start": 104.0, "ended": 114.5},
             {"entered": 103.5, "start": 104.0, "ended": 114.0}]
    phases = phase_times(100.0, marks, collected=115.0, written=115.25, host_start_s=4.8)
    assert phases == {"host_start": 4.8, "worker_start": 3.5, "shared_start": 0.5, "run": 10.5, "collect": 0.5,
                      "write": 0.25}
    assert list(phases) == list(PHASE_NAMES)  # in the order they happen
    assert phase_times(100.0, [], collected=101.0, written=101.5) == {"write": 0.5}  # no marks: what is known


def _task(address: list, index: int, port: int, seen: dict, delay: float = 0.0) -> None:
    """One task's side of the meeting (app/spark/tasks.py run_partition), `delay` seconds slow to connect."""
    with socket.create_connection((address[0], address[1]), timeout=10) as desk:
        lines = desk.makefile("rw", encoding="utf-8")
        lines.write(f"{address[2]}\t{index}\t127.0.0.1\t{port}\n")
        lines.flush()
        peers = json.loads(lines.readline())
        time.sleep(delay)  # connecting to the others
        connected = time.time()
        lines.write("connected\n")
        lines.flush()
        seen[index] = (peers, float(lines.readline()), connected)


def test_rendezvous_gives_every_address_then_a_start_after_all_have_connected() -> None:
    meeting = Rendezvous(3)
    try:
        seen: dict[int, tuple] = {}
        tasks = [threading.Thread(target=_task, args=(meeting.address, i, 7000 + i, seen, 0.3 if i == 1 else 0.0))
                 for i in (2, 0, 1)]  # in any order
        for t in tasks:
            t.start()
        for t in tasks:
            t.join(20)
    finally:
        meeting.close()
    assert sorted(seen) == [0, 1, 2]
    assert all(peers == [["127.0.0.1", 7000], ["127.0.0.1", 7001], ["127.0.0.1", 7002]]
               for peers, _, _ in seen.values())
    starts = {start for _, start, _ in seen.values()}
    assert len(starts) == 1  # one common start
    assert starts.pop() >= max(connected for _, _, connected in seen.values())  # after the slowest connected


def test_rendezvous_refuses_another_token_and_takes_a_retried_task() -> None:
    meeting = Rendezvous(2)
    try:
        with socket.create_connection(tuple(meeting.address[:2]), timeout=10) as stranger:
            stranger.sendall(b"not-the-token\t0\t127.0.0.1\t1\n")
            assert stranger.recv(100) == b""  # closed without an answer
        stale = socket.create_connection(tuple(meeting.address[:2]), timeout=10)  # a task of a failed attempt
        stale.sendall(f"{meeting.address[2]}\t0\t127.0.0.1\t1\n".encode())
        time.sleep(0.2)
        seen: dict[int, tuple] = {}
        tasks = [threading.Thread(target=_task, args=(meeting.address, i, 8000 + i, seen)) for i in (0, 1)]
        for t in tasks:  # the retried task 0 first (a task 1 before it would meet the stale one, which fails)
            t.start()
            time.sleep(0.2)
        for t in tasks:
            t.join(20)
        assert stale.recv(100) == b""  # replaced by the retried task 0
        stale.close()
    finally:
        meeting.close()
    assert seen[0][0] == seen[1][0] == [["127.0.0.1", 8000], ["127.0.0.1", 8001]]


def test_a_closed_rendezvous_stops_serving() -> None:
    meeting = Rendezvous(2)
    where = tuple(meeting.address[:2])
    meeting.close()
    meeting.thread.join(5)
    assert not meeting.thread.is_alive()
    with pytest.raises(OSError):
        socket.create_connection(where, timeout=2).close()


@pytest.mark.parametrize("master", ["local[2]", "sc://gw:15002"])
def test_the_cli_sends_its_host_start_and_runs_over_connect_in_a_run_session(tmp_path, monkeypatch, master) -> None:
    """`stormbound run` measures the host's start and sends it with the run (run.json's phases); against a
    Spark Connect server it attaches to the user's run session there (session.shared_connect_url)."""
    from app.cli import main
    from app.cli import spark_jobs as cli_common
    from app.spark.session import shared_connect_url
    from tests.conftest import MODELS

    seen: dict = {}

    class FakeHost:
        def request(self, op, on_progress=None, **params):  # noqa: ANN001, ANN003  # a stand-in for the host client
            seen.update(params)
            return {"master": master, "workers": 1, "events": 0, "queue_samples": 0, "out_dir": params["out"],
                    "phases": {"host_start": params["host_start_s"]}}

        def close(self) -> None:
            pass

    def start(url, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003
        seen["url"] = url
        time.sleep(0.05)
        return FakeHost()

    monkeypatch.delenv("STORMBOUND_SPARK_MASTER", raising=False)
    monkeypatch.setattr(cli_common, "start_spark_host", start)
    assert main(["run", str(MODELS / "getting-started.storm.json"), "--duration", "1", "--out", str(tmp_path / "r"),
                 "--master", master]) == 0
    assert seen["host_start_s"] >= 0.05
    if master.startswith("local"):
        assert seen["url"] == master
    else:
        assert seen["url"] == shared_connect_url(master) and ";session_id=" in seen["url"]

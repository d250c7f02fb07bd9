"""False alarms and missed overloads of `watch`'s judgement (app/measure/storm_watch.py) on the tests' stand-in Storm UI
(tests/storm_ui_live.py), recordings built without HTTP: prints, per scenario, the runs with an alarm (`--fail-on
may-grow`, the default --fail-after 3) and the poll of the first, and the time one poll's judgement takes.

    PYTHONPATH=. python bench/watch_alarms.py [--runs 10] [--polls 40]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from storm_ui_live import LiveStormUI  # noqa: E402 - the stand-in lives in tests/

from app.core.storm.ui.reader import from_storm_ui  # noqa: E402
from app.core.storm.ui.replies import StormUISnapshot  # noqa: E402
from app.core.topology import Topology  # noqa: E402
from app.measure.storm_watch import Judge  # noqa: E402


def model(scenario: str, tolerance: float) -> Topology:
    poll = LiveStormUI(scenario).poll_at(1, 5.0)
    topo = from_storm_ui(StormUISnapshot(url="x", topology_id="x", window="all", topology=poll.topology,
                                         components=poll.components)).topology
    return topo.model_copy(update={"settings": topo.settings.model_copy(update={"tolerance": tolerance})})


def run(scenario: str, every: float, polls: int, start: float, tolerance: float,
        **kwargs: float) -> tuple[list[int], float]:
    ui = LiveStormUI(scenario, **kwargs)  # type: ignore[arg-type]
    judge = Judge(model(scenario, tolerance), every, fail_on="may-grow")
    fails, spent = [], 0.0
    for k in range(1, polls + 1):
        poll = ui.poll_at(k, start + (k - 1) * every)
        began = time.perf_counter()
        if judge.add(poll).fail:
            fails.append(k)
        spent += time.perf_counter() - began
    return fails, spent / polls


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--polls", type=int, default=40)
    args = p.parse_args()
    cases = {
        "sawtooth (polls 10 s, commits 30 s)": [run("sawtooth", 10.0, args.polls, 2.0 + 3.7 * r, 0.1, commit_s=30.0)
                                                for r in range(args.runs)],
        "busy 0.75 ±5 % (τ 0.3)": [run("busy", 1.0, args.polls, 2.0, 0.3, seed=s) for s in range(args.runs)],
        "drift after poll 10": [run("drift", 1.0, args.polls, 2.0, 0.1, change_after=10)],
    }
    for name, results in cases.items():
        alarmed = [f for f, _ in results if f]
        per_poll = sum(t for _, t in results) / len(results)
        print(f"{name}: {len(alarmed)}/{len(results)} runs with an alarm; first alarm at poll "
              f"{[f[0] for f in alarmed] or '-'}; {per_poll * 1000:.1f} ms per poll judged")


if __name__ == "__main__":
    main()

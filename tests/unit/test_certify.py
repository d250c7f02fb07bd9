"""The independent certifier: accepts real lassos, rejects hand-broken traces (one test per rule)."""

from __future__ import annotations

import copy
from fractions import Fraction
from pathlib import Path

import pytest

from app.core.formats import load_topology
from app.core.formats.trace import Trace, format_time
from app.core.tcn.certify import certify
from app.core.tcn.search import verify

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def lasso() -> Trace:
    """A certified lasso of the getting-started example (count grows); found in well under a second."""
    result = verify(load_topology(ROOT / "models" / "getting-started.storm.json"), k_max=8, timeout_s=60)
    assert result.verdict == "counterexample" and result.trace is not None
    return result.trace


def broken(trace: Trace) -> dict:
    return copy.deepcopy(trace.model_dump(mode="json"))


def rejected(data: dict, *words: str) -> list[str]:
    cert = certify(Trace.model_validate(data))
    assert not cert.ok
    text = " | ".join(cert.problems)
    for word in words:
        assert word in text, text
    return cert.problems


def test_accepts_the_found_lasso(lasso: Trace) -> None:
    cert = certify(lasso)
    assert cert.ok, cert.problems
    assert cert.growth_per_loop["count"] > 0 and cert.loop_duration and cert.loop_duration > 0


def test_rejects_wrong_queue_arithmetic(lasso: Trace) -> None:
    data = broken(lasso)
    data["positions"][2]["bolts"]["count"]["queue"] += 1
    rejected(data, "queue arithmetic")


def test_rejects_processing_time_outside_its_interval(lasso: Trace) -> None:
    data = broken(lasso)
    for bolt in data["topology"]["bolts"]:
        if bolt["name"] == "split":
            bolt["alpha"] = bolt["alpha"] * 3  # the recorded phases are now far too short
    rejected(data, "processing took")


def test_rejects_a_take_while_processing(lasso: Trace) -> None:
    data = broken(lasso)
    steps = data["positions"]
    i = next(i for i in range(1, len(steps)) if steps[i - 1]["bolts"]["split"]["phase"] == "processing")
    steps[i]["bolts"]["split"].update(take=True, emit=False)
    rejected(data, "takes while processing")


def test_rejects_a_spout_emitting_too_early(lasso: Trace) -> None:
    data = broken(lasso)
    data["topology"]["spouts"][0]["rate"] = data["topology"]["spouts"][0]["rate"] / 3
    rejected(data, "emits too early")


def test_rejects_a_loop_whose_clocks_do_not_repeat(lasso: Trace) -> None:
    data = broken(lasso)
    last = data["positions"][lasso.k + 1]
    # move the repeated position slightly: every rule of the run may still hold, the clocks do not repeat
    last["time"] = format_time(Fraction(last["time"]) - Fraction(1, 1000))
    rejected(data, "does not repeat")


def test_rejects_a_growing_queue_with_a_partial_batch_in_the_loop(lasso: Trace) -> None:
    data = broken(lasso)
    l, k = lasso.loop_start, lasso.k
    for i in list(range(l, k + 1)) + [k + 1]:
        step = data["positions"][i]["bolts"]["count"]
        if step["take"]:
            step["batch"] -= 1
    rejected(data, "partial batch")


def test_rejects_a_growing_queue_that_empties_in_the_loop(lasso: Trace) -> None:
    data = broken(lasso)
    data["positions"][lasso.loop_start]["bolts"]["count"]["queue"] = 0
    rejected(data, "empty")


def test_rejects_a_shrinking_or_non_repeating_state(lasso: Trace) -> None:
    data = broken(lasso)
    data["positions"][lasso.k + 1]["bolts"]["split"]["buffer"] += 1
    rejected(data)


def test_rejects_wrong_position_count_and_loop_start(lasso: Trace) -> None:
    data = broken(lasso)
    data["positions"].pop()
    rejected(data, "positions")
    data = broken(lasso)
    data["loop_start"] = 0
    rejected(data, "loop_start")

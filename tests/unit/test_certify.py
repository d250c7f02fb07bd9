"""The independent certifier: accepts real lassos, rejects hand-broken traces (one test per rule)."""

from __future__ import annotations

import copy
from fractions import Fraction
from pathlib import Path

import pytest

from app.core.formats import load_topology
from app.core.formats.trace import Trace, format_time, load_trace
from app.core.tcn.check.certify import certify
from app.core.tcn.search import SearchOptions, verify

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def lasso() -> Trace:
    """A certified lasso of the getting-started example (count grows), as our search found it once
    (kept as a file: the solver may pick another lasso of the same shape class on another run)."""
    return load_trace(ROOT / "tests" / "data" / "traces" / "getting-started.1.trace.json")


def test_the_search_finds_a_certified_lasso_of_getting_started() -> None:
    result = verify(load_topology(ROOT / "models" / "getting-started.storm.json"), SearchOptions(k_max=8, timeout_s=60))
    assert result.verdict == "counterexample" and result.trace is not None
    assert certify(result.trace).ok


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
    loop_start, k = lasso.loop_start, lasso.k
    for i in list(range(loop_start, k + 1)) + [k + 1]:
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


# Region equivalence (section 3 item 2). The getting-started constants (a = 0.5 s, τ = 0.1, α = 1 s,
# max_idle 0.01 s) scale to integers by D = 100; c_max is 105 for the spout clock and 1 for an idle
# deadline. The hand-made loop below is the solver's lasso (k = 4, l = 2) with retimed positions.
def retimed(lasso: Trace, times: dict[int, str]) -> dict:
    assert (lasso.k, lasso.loop_start) == (4, 2)
    data = broken(lasso)
    # positions 1 and 3 at the times the region arithmetic below assumes (the solver may pick others)
    for i, t in {1: "0.935", 3: "0.95", **times}.items():
        data["positions"][i]["time"] = t
    return data


def test_the_region_tests_use_the_solved_lasso_shape(lasso: Trace) -> None:
    counts = [(p.spouts["sentences"].emitted, p.bolts["count"].take, p.bolts["split"].emit) for p in lasso.positions]
    assert counts == [(2, False, False), (0, False, True), (0, True, False), (2, False, False), (0, False, True),
                      (0, True, False)]


def test_accepts_region_equivalent_but_unequal_clocks(lasso: Trace) -> None:
    # at l: spout clock 94.45, count's idle clock 0.95 (scaled); at k+1: 94.85 and 0.91, same integer
    # parts, both non-integral, spout fraction below the idle one at both ends
    data = retimed(lasso, {1: "0.935", 2: "0.9445", 3: "0.95", 4: "1.8894", 5: "1.8985"})
    cert = certify(Trace.model_validate(data))
    assert cert.ok, cert.problems
    assert cert.growth_per_loop["count"] > 0


def test_equal_clocks_still_get_the_full_timed_unrolling(lasso: Trace) -> None:
    # the same shape with the clocks exactly equal: the unrolled loop is replayed with its times
    data = retimed(lasso, {1: "0.935", 2: "0.9445", 3: "0.95", 4: "1.885", 5: "1.8945"})
    assert certify(Trace.model_validate(data)).ok


def test_rejects_clocks_whose_integer_parts_differ(lasso: Trace) -> None:
    # spout clock 94.5 at l, 95.1 at k+1 (every rule of the run still holds)
    data = retimed(lasso, {4: "1.891", 5: "1.901"})
    rejected(data, "spout sentences: its clock does not repeat up to regions", "integer parts")


def test_rejects_clocks_whose_fractional_order_flips(lasso: Trace) -> None:
    # at l: spout fraction .45 < idle fraction .95; at k+1: spout .95 > idle .91
    data = retimed(lasso, {2: "0.9445", 4: "1.8904", 5: "1.8995"})
    rejected(data, "order of their fractional parts does not repeat")


@pytest.mark.parametrize("text", ["0", "12", "007", "12.5", "0.125", "1.000", "5/3", "10/4", "3/007", "00/01",
                                  "1e3", "-1", " 1", "1.", ".5", "1/0", "1/00", "abc", "1//2", "2/3.5"])
def test_trace_times_read_as_fraction_reads_them(text: str) -> None:
    """exact_fraction reads the plain forms format_time writes from their integers: same value, same errors."""
    from app.core.formats.trace import exact_fraction

    try:
        expected: object = Fraction(text)
    except (ValueError, ZeroDivisionError) as err:
        expected = type(err)
    try:
        got: object = exact_fraction(text)
    except (ValueError, ZeroDivisionError) as err:
        got = type(err)
    assert got == expected
    for value in (Fraction(7, 3), Fraction(1234567, 1000), Fraction(0), Fraction(250)):
        assert exact_fraction(format_time(value)) == value


def _unrolled(trace: Trace, passes: int) -> tuple[list, int]:
    """The certifier's unrolled steps of a certified lasso (as `_certify` builds them) and k + 1."""
    from app.core.tcn.check.certify_replay import Step
    from app.core.tcn.check.certify_source import source_of

    cert = certify(trace)
    assert cert.ok, cert.problems
    steps, k, start = list(source_of(trace).steps(0)), trace.k, trace.loop_start
    period = steps[k + 1].time - steps[start].time
    unrolled = steps[:k + 1]
    for p in range(1, passes + 1):
        for s in steps[start:k + 1]:
            unrolled.append(Step(s.time + p * period,
                                  {n: {**sp, "backlog": sp["backlog"] + p * (steps[k + 1].spouts[n]["backlog"]
                                                                             - steps[start].spouts[n]["backlog"])}
                                   for n, sp in s.spouts.items()},
                                  {n: {**b, "queue": b["queue"] + p * cert.growth_per_loop[n]}
                                   for n, b in s.bolts.items()}))
    return unrolled, k + 1


@pytest.mark.parametrize("name", ["getting-started.1", "failure-paced", "exact-carry", "sigma-rounding-dvert",
                                  "focused-crawler-complete.1", "simple-DIA-cfg-3.2"])
@pytest.mark.parametrize("change", ["none", "queue", "time", "take", "backlog"])
def test_the_unrolled_replay_resumed_before_k_plus_1_finds_what_a_replay_from_0_finds(name: str, change: str) -> None:
    """The certifier resumes the unrolled replay from the state recorded before k + 1 instead of replaying
    positions 0..k again: on certified lassos and on unrolled loops broken past k + 1 (a queue, a time, a
    take, a backlog), both replays report the same problems, rule for rule."""
    from app.core.tcn.check.certify_replay import replay
    from app.core.tcn.check.certify_rules import Rules
    from app.core.topology import parse_topology

    data = broken(load_trace(ROOT / "tests" / "data" / "traces" / f"{name}.trace.json"))
    trace = Trace.model_validate(data)
    unrolled, k1 = _unrolled(trace, passes=3)
    at = k1 + (len(unrolled) - k1) // 2  # a position of the second pass
    step = unrolled[at]
    bolt = next(iter(step.bolts))
    if change == "queue":
        step.bolts[bolt] = {**step.bolts[bolt], "queue": step.bolts[bolt]["queue"] + 1}
    elif change == "time":
        step.time = unrolled[at - 1].time
    elif change == "take":
        step.bolts[bolt] = {**step.bolts[bolt], "take": not step.bolts[bolt]["take"]}
    elif change == "backlog":
        spout = next(iter(step.spouts))
        step.spouts[spout] = {**step.spouts[spout], "backlog": step.spouts[spout]["backlog"] + 1}
    rules = Rules(parse_topology(trace.topology))
    first: list[str] = []
    befores = replay(rules, unrolled[:k1 + 1], first, record={k1})
    assert first == [] and befores[k1] is not None and befores[k1].state is not None
    whole: list[str] = []
    replay(rules, unrolled, whole, label="unrolled position", record=set())
    resumed: list[str] = []
    replay(rules, unrolled, resumed, label="unrolled position", record=set(), resume=(k1, befores[k1].state))
    assert resumed == whole
    assert (whole == []) == (change == "none"), whole

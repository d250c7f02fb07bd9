"""The certifier's problem lists on a fixed set of broken traces, rule for rule and word for word.

Recorded in tests/data/certify_problem_lists.json on the certifier before its replay was split into one
helper per rule group: a refactoring of app/core/tcn/check/certify.py keeps every problem, its label, its
position and its order. Each case breaks a shipped trace (tests/data/traces, and lassos through declared
streams in tests/data/certify-cases) with seeded single or double field changes, breaks a random legal run
with failures (threshold mode), or breaks a certified lasso's unrolled loop past k + 1 (replayed with and
without the timing rules). A deliberate change of a message re-records the file:
`python tests/unit/test_certify_problem_lists.py` (and review its diff).
"""

from __future__ import annotations

import copy
import json
import random
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script to re-record
    sys.path.insert(0, str(ROOT))

from app.core.formats.trace import Trace, format_time, load_trace  # noqa: E402
from app.core.tcn.check.certify import certify  # noqa: E402

RECORDED = ROOT / "tests" / "data" / "certify_problem_lists.json"
# the shipped traces, and lassos through declared streams (tests/unit/test_streams.py's topologies, found once)
FILES = {p.name.removesuffix(".trace.json"): p for folder in ("traces", "certify-cases")
         for p in (ROOT / "tests" / "data" / folder).glob("*.trace.json")}
TRACES = sorted(FILES)
PER_TRACE = 14
STREAM_CHANGES = 6
FAILURE_RUNS = 40
PHASES = ["idle", "processing", "failed"]


def _bump(value: Any, rnd: random.Random) -> Any:
    """A small change of one recorded value, whatever its type."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + (rnd.choice([-1, 1]) if value else 1)
    if isinstance(value, str) and value in PHASES:
        return rnd.choice([p for p in PHASES if p != value])
    if isinstance(value, str):  # an exact carry "p/q" or a decimal
        x = Fraction(value)
        return format_time(x + Fraction(rnd.choice([1, -1]), max(x.denominator, 2))) if x else "1/2"
    if isinstance(value, dict) and value:
        key = rnd.choice(sorted(value))
        return {**value, key: _bump(value[key], rnd)}
    return None


def _change(data: dict[str, Any], rnd: random.Random, keys: tuple[str, ...] = ()) -> str:
    """One seeded change of a position's time or of one field (one of `keys` when given) of one component's
    record."""
    i = rnd.randrange(len(data["positions"]))
    p = data["positions"][i]
    if not keys and rnd.random() < 0.15:
        how = rnd.choice(["previous", "later", "earlier"])
        t = Fraction(p["time"])
        if how == "previous" and i > 0:
            p["time"] = data["positions"][i - 1]["time"]
        else:
            p["time"] = format_time(max(t + Fraction(rnd.choice([1, -1]) if how != "previous" else 1, 1000), 0))
        return f"{i} time {how}"
    part = rnd.choice(["spouts", "bolts", "bolts"])
    name = rnd.choice(sorted(p[part]))
    row = p[part][name]
    key = rnd.choice(sorted(keys or row))
    if row.get(key) is None or row[key] == {}:
        if key == "replays":
            row[key] = {sorted(data["positions"][0]["spouts"])[0]: 1}
        elif key in ("emitted_by_stream", "buffer_by_stream"):
            row[key] = {"default": row["emitted"] if key == "emitted_by_stream" else 0}
        else:
            row[key] = 1
    else:
        row[key] = _bump(row[key], rnd)
    return f"{i} {part} {name} {key}"


def _trace_cases() -> dict[str, tuple[dict[str, Any], int | None]]:
    cases: dict[str, tuple[dict[str, Any], int | None]] = {}
    for name in TRACES:
        good = load_trace(FILES[name]).model_dump(mode="json")
        cases[f"{name} as shipped"] = (good, None)
        for j in range(PER_TRACE):
            rnd = random.Random(f"{name}:{j}")
            data = copy.deepcopy(good)
            what = [_change(data, rnd) for _ in range(1 if j % 3 else 2)]
            cases[f"{name} #{j}: {'; '.join(what)}"] = (data, None)
        for j in range(STREAM_CHANGES):
            rnd = random.Random(f"{name}: streams {j}")
            data = copy.deepcopy(good)
            what = [_change(data, rnd, ("emitted_by_stream", "buffer_by_stream", "emitted"))]
            cases[f"{name} streams #{j}: {'; '.join(what)}"] = (data, None)
        for what, change in [("k", lambda d: d.update(k=d["k"] + 1)),
                             ("loop_start", lambda d: d.update(loop_start=d["loop_start"] + 1)),
                             ("no bolts", lambda d: d["positions"][1].update(bolts={}))]:
            data = copy.deepcopy(good)
            change(data)
            cases[f"{name} structure: {what}"] = (data, None)
    return cases


def _hand_cases() -> dict[str, tuple[dict[str, Any], int | None]]:
    """Rules the seeded changes seldom reach."""
    def load(name: str) -> dict[str, Any]:
        return load_trace(FILES[name]).model_dump(mode="json")

    cases: dict[str, tuple[dict[str, Any], int | None]] = {}
    data = load("streams-two-of-one-source")
    del data["positions"][3]["bolts"]["A"]["emitted_by_stream"]["err"]
    cases["hand: a stream missing from emitted_by_stream"] = (data, None)
    data = load("streams-crawler-exact")
    k = data["k"]
    row = data["positions"][k + 1]["spouts"]["urls"]
    row["buffer_by_stream"] = {st: "1/4" for st in row["buffer_by_stream"]}
    cases["hand: a stream carry that does not repeat"] = (data, None)
    data = load("getting-started.1")
    data["positions"][2]["spouts"]["sentences"].update(backlog=1, replayed=1)
    cases["hand: a backlog without a failure model"] = (data, None)
    data = load("getting-started.1")
    for p in data["positions"][data["loop_start"]:]:
        for row in p["spouts"].values():
            row.update(emit=False, emitted=0)
    cases["hand: a spout silent in the loop"] = (data, None)
    data = load("getting-started.1")
    data["loop_start"] = data["k"] + 1
    cases["hand: a threshold never reached"] = (data, 10**6)
    data = load("failure-paced")
    data["topology"]["settings"]["replay"] = "at-once"
    cases["hand: at-once replays of a paced lasso"] = (data, None)
    data = load("getting-started.1")
    data["k"] = "seven"
    cases["hand: a malformed trace"] = (data, None)
    return cases


def _failure_cases() -> dict[str, tuple[dict[str, Any], int | None]]:
    from tests.unit.test_certify_failures import _mutations, legal_run

    cases: dict[str, tuple[dict[str, Any], int | None]] = {}
    for seed in range(FAILURE_RUNS):
        data = legal_run(seed)
        what, _ = _mutations(data, random.Random(seed))
        cases[f"legal run {seed}: {what}"] = (data, 0)
        data = legal_run(seed)
        rnd = random.Random(f"failure run {seed}")
        what = _change(data, rnd)
        cases[f"legal run {seed} changed: {what}"] = (data, 0)
    return cases


def _unrolled_cases() -> dict[str, list[str]]:
    """The replay of a certified lasso's unrolled loop broken past k + 1, with and without timing."""
    from app.core.tcn.check.certify_replay import Step, replay
    from app.core.tcn.check.certify_rules import Rules
    from app.core.tcn.check.certify_source import source_of
    from app.core.topology import parse_topology

    found: dict[str, list[str]] = {}
    for name in TRACES:
        trace = load_trace(FILES[name])
        cert = certify(trace)
        if not cert.ok or trace.loop_start > trace.k:
            continue
        steps, k, start = list(source_of(trace).steps(0)), trace.k, trace.loop_start
        period = steps[k + 1].time - steps[start].time
        for j in range(4):
            unrolled = steps[:k + 1]
            for p in range(1, 4):
                for s in steps[start:k + 1]:
                    unrolled.append(Step(s.time + p * period, dict(s.spouts),
                                          {n: {**b, "queue": b["queue"] + p * cert.growth_per_loop[n]}
                                           for n, b in s.bolts.items()}))
            rnd = random.Random(f"unrolled {name}:{j}")
            at = rnd.randrange(k + 1, len(unrolled))
            step = unrolled[at]
            part = rnd.choice(["spouts", "bolts"])
            who = rnd.choice(sorted(getattr(step, part)))
            row = dict(getattr(step, part)[who])
            keys = ["emitted", "emit"] if part == "spouts" else ["queue", "take", "emit", "batch", "arrivals"]
            key = rnd.choice(keys)
            row[key] = _bump(row[key], rnd)
            getattr(step, part)[who] = row
            if j == 3:
                step.time = unrolled[at - 1].time
            rules = Rules(parse_topology(trace.topology))
            for timing in (True, False):
                problems: list[str] = []
                replay(rules, unrolled, problems, label="unrolled position", timing=timing, record=set())
                found[f"{name} unrolled #{j} at {at} {part} {who} {key} timing={timing}"] = problems
    return found


def problem_lists() -> dict[str, list[str]]:
    found = {what: certify(data, threshold=threshold).problems
             for what, (data, threshold) in {**_trace_cases(), **_hand_cases(), **_failure_cases()}.items()}
    found.update(_unrolled_cases())
    return found


@pytest.fixture(scope="module")
def recorded() -> dict[str, list[str]]:
    return json.loads(RECORDED.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def found() -> dict[str, list[str]]:
    return problem_lists()


def test_the_cases_are_the_recorded_ones(recorded: dict[str, list[str]], found: dict[str, list[str]]) -> None:
    assert sorted(found) == sorted(recorded)


def test_the_cases_are_not_vacuous(recorded: dict[str, list[str]]) -> None:
    """Most cases are rejected, by many rules; the shipped traces are not."""
    rejected = [p for what, p in recorded.items() if p]
    assert len(rejected) > 0.7 * len(recorded)
    assert all(not p for what, p in recorded.items() if what.endswith("as shipped"))
    kinds = {problem.split(": ", 2)[-1][:25] for p in rejected for problem in p}
    assert len(kinds) > 60, sorted(kinds)


def test_every_problem_list_is_the_recorded_one(recorded: dict[str, list[str]], found: dict[str, list[str]]) -> None:
    differ = {what: {"recorded": recorded[what], "now": found[what]}
              for what in recorded if found.get(what) != recorded[what]}
    assert not differ, json.dumps(differ, indent=1)[:6000]


def test_the_shipped_traces_are_the_ones_recorded() -> None:
    assert TRACES and all(Trace.model_validate_json(FILES[n].read_text(encoding="utf-8")) for n in TRACES)


if __name__ == "__main__":
    RECORDED.write_text(json.dumps(problem_lists(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"recorded {RECORDED}")

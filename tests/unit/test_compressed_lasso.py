"""A simulated lasso kept in its compressed form, `stormbound-trace/2` (docs/trace-format.md), from the simulation to
the result, certified and written as it is (docs/verifier.md, "Certifying a compressed lasso").

The simulation keeps a lasso of COMPRESS_FROM positions or more compressed; here COMPRESS_FROM is lowered so that a
short lasso of a layered topology (30 components, a few tenths of a second) is kept compressed too, with repeat
items, patches and positions written out. Every test compares with the same lasso built as positions."""

from __future__ import annotations

import copy
import sys
import tracemalloc
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

import app.core.tcn.simulate_trace as simulate_trace
from app.core.formats.trace import CompressedTrace, Trace, expanded_trace, trace_bytes, trace_from_data
from app.core.formats.trace_compress import expand_trace_data
from app.core.tcn.check.certify import certify
from app.core.tcn.network import build_network
from app.core.tcn.simulate import build_lasso

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from layered_topologies import layered_topology  # noqa: E402

TARGET = "B19"


@pytest.fixture(scope="module")
def lassos() -> tuple[CompressedTrace, Trace]:
    """The same lasso kept compressed (COMPRESS_FROM lowered to 10) and as positions (the default, for 62)."""
    net = build_network(layered_topology(30, 1, emission="dvert", flow_denominator=8), [TARGET])
    plain = build_lasso(net, TARGET).trace
    saved = simulate_trace.COMPRESS_FROM
    simulate_trace.COMPRESS_FROM = 10
    try:
        kept = build_lasso(net, TARGET).trace
    finally:
        simulate_trace.COMPRESS_FROM = saved
    assert isinstance(plain, Trace) and isinstance(kept, CompressedTrace)
    return kept, plain


def kinds(data: dict[str, Any]) -> set[str]:
    return {next(iter(item)) if set(item) <= {"repeat", "patch"} else "position" for item in data["positions"]}


def test_the_compressed_lasso_stands_for_the_positions_the_simulation_ran(lassos: tuple[CompressedTrace, Trace]
                                                                          ) -> None:
    kept, plain = lassos
    data = kept.document()
    assert kinds(data) == {"repeat", "patch", "position"} and len(data["positions"]) < plain.k + 2
    assert expanded_trace(kept) == plain
    assert trace_from_data(data) == plain  # the file's reading too
    assert kept.loop_duration() == plain.loop_duration() and kept.growth_per_loop() == plain.growth_per_loop()


def test_the_certifier_reads_the_compressed_lasso_as_the_positions(lassos: tuple[CompressedTrace, Trace]) -> None:
    kept, plain = lassos
    whole = certify(plain, checked=[TARGET])
    assert whole.ok, whole.problems
    for form in (kept, kept.document()):
        found = certify(form, checked=[TARGET])
        assert found == whole


def test_the_compressed_lasso_is_written_as_it_is(lassos: tuple[CompressedTrace, Trace]) -> None:
    kept, plain = lassos
    written = trace_bytes(kept)
    assert b'"stormbound-trace/2"' in written and b'"repeat"' in written
    import json

    assert trace_from_data(json.loads(written)) == plain
    assert trace_from_data(json.loads(trace_bytes(kept, compress=False))) == plain


def mutations(data: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The compressed lasso with one change each: a repeat's count (k kept, or k moved with it), period, time shift
    and increments, a field of a position a repeat copies or a patch changes, and the loop's boundaries."""
    out: list[tuple[str, dict[str, Any]]] = []

    def changed(what: str, edit: Any) -> None:
        copied = copy.deepcopy(data)
        edit(copied)
        out.append((what, copied))

    for i, item in enumerate(data["positions"]):
        if "repeat" in item:
            rep = item["repeat"]
            for d in (1, -1):
                if rep["count"] + d >= 1:
                    changed(f"{i} count {d:+}", lambda c, i=i, d=d: c["positions"][i]["repeat"].update(
                        count=c["positions"][i]["repeat"]["count"] + d))
                    changed(f"{i} count {d:+} with k", lambda c, i=i, d=d: (c["positions"][i]["repeat"].update(
                        count=c["positions"][i]["repeat"]["count"] + d), c.update(k=c["k"] + d, loop_start=(
                            c["loop_start"] + d if c["loop_start"] > i else c["loop_start"]))))
            changed(f"{i} period +1", lambda c, i=i: c["positions"][i]["repeat"].update(
                period=c["positions"][i]["repeat"]["period"] + 1))
            changed(f"{i} time x2", lambda c, i=i: c["positions"][i]["repeat"].update(
                time=str(2 * Fraction(c["positions"][i]["repeat"]["time"]) + Fraction(1, 10))))
            for name in rep.get("queue", {}):
                for d in (1, -1):
                    changed(f"{i} queue {name} {d:+}", lambda c, i=i, name=name, d=d: c["positions"][i]["repeat"][
                        "queue"].update({name: c["positions"][i]["repeat"]["queue"][name] + d}))
            changed(f"{i} queue {TARGET} raised", lambda c, i=i: c["positions"][i]["repeat"].setdefault(
                "queue", {}).update({"B3": 1}))
        elif "patch" in item:
            for name, fields in item["patch"].get("bolts", {}).items():
                for key, value in fields.items():
                    if type(value) is int:
                        changed(f"{i} patch {name}.{key} +1", lambda c, i=i, name=name, key=key: c["positions"][i][
                            "patch"]["bolts"][name].update({key: c["positions"][i]["patch"]["bolts"][name][key] + 1}))
        else:
            for name in (TARGET, "B10"):
                for key in ("queue", "arrivals", "emitted", "batch"):
                    changed(f"{i} {name}.{key} +1", lambda c, i=i, name=name, key=key: c["positions"][i]["bolts"][
                        name].update({key: c["positions"][i]["bolts"][name][key] + 1}))
    for d in (1, -1):
        changed(f"loop_start {d:+}", lambda c, d=d: c.update(loop_start=c["loop_start"] + d))
    return out


def test_every_tampered_compressed_lasso_is_rejected_as_its_positions_are(lassos: tuple[CompressedTrace, Trace]
                                                                          ) -> None:
    """A repeat count, period, shift or increment, a step a repeat copies or a patch changes, a loop boundary: each
    change is rejected, and reading it compressed gives the verdict of its expanded positions."""
    kept, _ = lassos
    cases = mutations(kept.document())
    assert len(cases) > 100
    for what, data in cases:
        found = certify(data, checked=[TARGET])
        assert not found.ok, what
        try:
            expanded = expand_trace_data(data)
        except ValueError:
            continue  # no trace at all: the compressed reading names the item (trace format: ...)
        assert not certify(expanded, checked=[TARGET]).ok, what


def test_a_long_compressed_lasso_is_certified_a_block_at_a_time(lassos: tuple[CompressedTrace, Trace]) -> None:
    """The lasso with its loop run 100 more times before it closes (one repeat item of 100 loops): about 4,000
    positions x 30 components, some 170 MB as positions, certified holding a loop's worth."""
    kept, plain = lassos
    data = kept.document()
    loop = plain.k + 1 - plain.loop_start
    passes = 100
    growth = {n: g for n, g in plain.growth_per_loop().items() if g}
    data["positions"].append({"repeat": {"period": loop, "count": passes * loop, "time": str(plain.loop_duration()),
                                         "queue": growth}})
    data.update(k=plain.k + passes * loop, loop_start=plain.loop_start + passes * loop)
    tracemalloc.start()
    found = certify(data, checked=[TARGET])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert found.ok, found.problems[:3]
    assert found.growth_per_loop == certify(plain, checked=[TARGET]).growth_per_loop
    assert peak < 40 * 2**20, peak


def test_a_compressed_trace_over_the_certifiers_cells_is_refused_before_it_is_expanded(
        lassos: tuple[CompressedTrace, Trace], monkeypatch: pytest.MonkeyPatch) -> None:
    import app.core.tcn.check.certify_source as certify_source

    kept, plain = lassos
    cells = (plain.k + 2) * (len(plain.positions[0].spouts) + len(plain.positions[0].bolts))
    monkeypatch.setattr(certify_source, "MAX_CERTIFIED_CELLS", cells - 1)
    found = certify(kept, checked=[TARGET])
    assert not found.ok and found.problems == [
        f"trace format: positions: more than {cells - 1} cells once expanded (positions x components: the limit on "
        "what the certifier replays; setting STORMBOUND_MAX_CERTIFIED_CELLS)"]
    monkeypatch.setattr(certify_source, "MAX_CERTIFIED_CELLS", cells)
    assert certify(kept, checked=[TARGET]).ok

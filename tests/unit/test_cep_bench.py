"""The CEP benchmark's workloads at a small size: right answers (the timing itself is not tested)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from app.cep import CepEngine
from app.cep.monitors import load_monitors

BENCH = Path(__file__).resolve().parents[2] / "bench" / "cep_bench.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cep_bench", BENCH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("cep_bench", module)
    spec.loader.exec_module(module)
    return module


def test_gesture_workload_gives_one_match_per_cycle_and_body() -> None:
    bench = _bench()
    for bodies in (1, 3, 25):
        row = bench.measure(bench.JOINED, "chronicle", bodies, 3000, 1)  # exits if the count is wrong
        assert row["matches"] == row["events"] // 6 and row["events_per_s"] > 0
    assert bench.measure(bench.PLAIN, "chronicle", 1, 600, 1)["matches"] == 100


def test_batch_run_equals_event_by_event_feeding() -> None:
    stream = _bench().storm_log(16000)  # about 43 s of run: long enough for 30 s timeouts
    patterns = load_monitors()
    batch = CepEngine(patterns).run(stream)
    engine = CepEngine(patterns)
    fed = [m for ev in stream for m in engine.feed(ev)]
    assert [(m.pattern, m.kind, m.indices) for m in batch] == [(m.pattern, m.kind, m.indices) for m in fed]
    assert {m.pattern for m in batch} == {p.id for p in patterns}


def test_partitioning_and_parameter_join_agree() -> None:
    from app.cep import Pattern, parse_text

    stream = _bench().storm_log(16000)
    text = "(take(comp, tuple) -> bolt_ack(comp, tuple)) within 30"
    found = [CepEngine([Pattern(id="u", ast=parse_text(text), timeout=True, by=by)]).run(stream)
             for by in (("comp", "tuple"), ())]
    assert [m.indices for m in found[0]] == [m.indices for m in found[1]]
    assert len(found[0]) > 10

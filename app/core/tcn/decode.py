"""A z3 model of the encoding read back as a trace (app/core/formats/trace.py), with exact times.

Kept apart from app/core/tcn/encode.py, which states the constraints: this module only
reads the values a satisfying assignment gives the encoding's variables.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any, Literal

import z3

from app.core.formats.trace import BoltStep, SpoutStep, Trace, TracePosition, WorkerStep, format_carry, format_time
from app.core.tcn.encode import Encoding
from app.core.tcn.network import StreamParams


def decode(enc: Encoding, model: z3.ModelRef) -> Trace:
    """The trace a satisfying assignment of `enc` describes, with exact times."""

    def num(expr: z3.ArithRef) -> Fraction:
        val = model.eval(expr, model_completion=True)
        if z3.is_int_value(val):
            return Fraction(val.as_long())
        return Fraction(val.as_fraction())

    def flag(expr: z3.BoolRef) -> bool:
        return bool(z3.is_true(model.eval(expr, model_completion=True)))

    positions: list[TracePosition] = []
    for i in range(enc.n):
        spouts = {}
        fails = enc.failures
        for s in enc.net.spouts:
            w = enc.spouts[s.name]
            emitted = int(num(w.emitted[i]))
            r = None if fails is None else fails.spouts.get(s.name)
            backlog, replayed = (0, 0) if r is None else (int(num(r.backlog[i])), int(num(r.replayed[i])))
            if not s.streams:
                spouts[s.name] = SpoutStep(emit=flag(w.emits(i)), emitted=emitted, backlog=backlog, replayed=replayed)
                continue
            by_stream = {"default": emitted}
            carries: dict[str, int | str] = {}
            for st in s.streams:
                on = st.name in w.stream_emitted
                by_stream[st.name] = int(num(w.stream_emitted[st.name][i])) if on else 0
                carries[st.name] = _carry(enc, st, int(num(w.stream_buffer[st.name][i])) if on else 0)
            spouts[s.name] = SpoutStep(emit=flag(w.emits(i)), emitted=sum(by_stream.values()),
                                       emitted_by_stream=by_stream, buffer_by_stream=carries, backlog=backlog,
                                       replayed=replayed)
        bolts = {}
        for b in enc.net.bolts:
            v = enc.bolts[b.name]
            outs = {st.name: (int(num(v.stream_emitted[st.name][i])),
                              _carry(enc, st, int(num(v.stream_buffer[st.name][i])))) for st in b.streams}
            many = len(b.streams) > 1
            f = None if fails is None else fails.bolt(b.name)
            failure = {} if f is None else _failure_fields(f, i, num, flag)
            if fails is not None and fails.deaths is not None and b.name in fails.deaths.parts:  # model.md 9.5
                failure = {"lost": fails.deaths.partial_lost(b.name, i, num)}
            phase: Literal["idle", "processing", "failed"] = "processing" if flag(v.processing[i]) else "idle"
            if failure.pop("failed", False):
                phase = "failed"
            bolts[b.name] = BoltStep(
                queue=int(num(v.queue[i])), arrivals=int(num(v.arrivals[i])), take=flag(v.take[i]),
                batch=int(num(v.batch[i])), emit=flag(v.emit[i]), emitted=sum(e for e, _ in outs.values()),
                buffer=outs["default"][1], phase=phase,
                emitted_by_stream={n: e for n, (e, _) in outs.items()} if many else None,
                buffer_by_stream={n: c for n, (_, c) in outs.items()} if many else None, **failure)
        unit = enc.time_unit if enc.time_unit is not None else 1
        dying = None if fails is None or fails.deaths is None else fails.deaths.records(i, num, flag)  # model.md 9.5
        positions.append(TracePosition(time=format_time(num(enc.time[i]) * unit), spouts=spouts, bolts=bolts,
                                       workers={w: WorkerStep(**rec) for w, rec in dying.items()} if dying else None))
    # a threshold search has no loop: its trace is a prefix
    loop_start = next(i for i in range(1, enc.k + 1) if flag(enc.loop_start[i])) if enc.threshold is None else enc.k + 1
    return Trace(topology=enc.net.document(), k=enc.k, loop_start=loop_start, positions=positions,
                 kept=list(enc.net.kept))


def _failure_fields(f: Any, i: int, num: Callable[[z3.ArithRef], Fraction],
                    flag: Callable[[z3.BoolRef], bool]) -> dict[str, Any]:
    """A failing bolt's fields of docs/model.md 7.5 at position i (`failed`: its phase after i)."""
    replays = {s: int(num(r[i])) for s, r in f.replays.items() if num(r[i]) > 0}
    return {"fail": flag(f.fail[i]), "recover": flag(f.recover[i]), "lost": int(num(f.lost[i])),
            "replays": replays or None, "failed": flag(f.failed[i])}


def _carry(enc: Encoding, st: StreamParams, value: int) -> int | str:
    """A stream's carry as the trace writes it: an integer, or "p/q" for an exact carry that is not one."""
    if enc.net.emission != "exact" or st.silent:
        return value
    return format_carry(Fraction(value, st.sigma.numerator))

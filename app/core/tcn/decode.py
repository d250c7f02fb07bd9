"""A z3 model of the encoding read back as a trace (app/core/formats/trace.py), with exact times.

Kept apart from app/core/tcn/encode.py, which states the constraints: this module only
reads the values a satisfying assignment gives the encoding's variables.
"""

from __future__ import annotations

from fractions import Fraction

import z3

from app.core.formats.trace import BoltStep, SpoutStep, Trace, TracePosition, format_carry, format_time
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
        for s in enc.net.spouts:
            w = enc.spouts[s.name]
            emitted = int(num(w.emitted[i]))
            if not s.streams:
                spouts[s.name] = SpoutStep(emit=flag(w.emits(i)), emitted=emitted)
                continue
            by_stream = {"default": emitted}
            carries: dict[str, int | str] = {}
            for st in s.streams:
                on = st.name in w.stream_emitted
                by_stream[st.name] = int(num(w.stream_emitted[st.name][i])) if on else 0
                carries[st.name] = _carry(enc, st, int(num(w.stream_buffer[st.name][i])) if on else 0)
            spouts[s.name] = SpoutStep(emit=flag(w.emits(i)), emitted=sum(by_stream.values()),
                                       emitted_by_stream=by_stream, buffer_by_stream=carries)
        bolts = {}
        for b in enc.net.bolts:
            v = enc.bolts[b.name]
            outs = {st.name: (int(num(v.stream_emitted[st.name][i])),
                              _carry(enc, st, int(num(v.stream_buffer[st.name][i])))) for st in b.streams}
            many = len(b.streams) > 1
            bolts[b.name] = BoltStep(
                queue=int(num(v.queue[i])), arrivals=int(num(v.arrivals[i])), take=flag(v.take[i]),
                batch=int(num(v.batch[i])), emit=flag(v.emit[i]), emitted=sum(e for e, _ in outs.values()),
                buffer=outs["default"][1], phase="processing" if flag(v.processing[i]) else "idle",
                emitted_by_stream={n: e for n, (e, _) in outs.items()} if many else None,
                buffer_by_stream={n: c for n, (_, c) in outs.items()} if many else None)
        unit = enc.time_unit if enc.time_unit is not None else 1
        positions.append(TracePosition(time=format_time(num(enc.time[i]) * unit), spouts=spouts, bolts=bolts))
    # a threshold search has no loop: its trace is a prefix
    loop_start = next(i for i in range(1, enc.k + 1) if flag(enc.loop_start[i])) if enc.threshold is None else enc.k + 1
    return Trace(topology=enc.net.document(), k=enc.k, loop_start=loop_start, positions=positions,
                 kept=list(enc.net.kept))


def _carry(enc: Encoding, st: StreamParams, value: int) -> int | str:
    """A stream's carry as the trace writes it: an integer, or "p/q" for an exact carry that is not one."""
    if enc.net.emission != "exact" or st.silent:
        return value
    return format_carry(Fraction(value, st.sigma.numerator))

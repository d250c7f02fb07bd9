"""Random small topologies with streams against the page's rules (docs/model.md sections 1-3, 5).

Over topologies of one spout and up to three bolts, with declared streams (two streams of one
source into one bolt, a repeated subscription, σ = 0 streams), both emission rules and
max_idle_time 0, small or large:

* every lasso `verify` reports is certified and replays under `page_counts`, a second, deliberately
  small restatement of the page's counting rules (input streams once, a σ and a carry per stream,
  EMIT before TAKE at one position) written here without the certifier's code;
* where the rate check says a bolt is bounded, a search without anything derived from it
  (`--force-search`) finds no lasso for it;
* where the rate check says a bolt grows, `verify` returns a certified lasso in which it grows.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.formats.trace import Trace, parse_carry
from app.core.rates import rate_check
from app.core.tcn.check.certify import certify
from app.core.tcn.search import SearchOptions, verify
from app.core.topology import Topology, parse_topology

SIGMAS = [0, 0.5, 1, 1.5, 2]
IDLES = [0, 0.01, 0.3]


def page_counts(trace: Trace) -> list[str]:
    """The page's counting rules, position by position: what each output stream carries, what each bolt
    receives (its input streams, each once), queues, takes (after an emit at the same position) and the
    carries. Clocks are the certifier's business; this checks that nothing is counted twice."""
    topo = parse_topology(trace.topology)
    names = {c.id: c.name for c in topo.components}
    inputs: dict[str, set[tuple[str, str]]] = {b.name: set() for b in topo.bolts}
    for s in topo.subscriptions:
        inputs[names[s.target]].add((names[s.source], s.stream or "default"))
    read = set().union(*inputs.values()) if inputs else set()

    def value(x: float | None) -> Fraction:
        return Fraction(str(x))

    sigma: dict[tuple[str, str], Fraction] = {}
    for c in topo.components:
        extra = c.stream_sigma if c.kind == "bolt" else c.stream_ratio  # type: ignore[union-attr]
        if c.kind == "bolt":
            sigma[(c.name, "default")] = value(c.sigma)  # type: ignore[union-attr]
        for stream in c.streams:
            sigma[(c.name, stream)] = value(extra[stream])
    carry = dict.fromkeys(sigma, Fraction(0))
    queue = {b.name: topo.settings.init_queues for b in topo.bolts}
    batch = dict.fromkeys(queue, 0)
    busy = dict.fromkeys(queue, False)
    problems: list[str] = []

    def emit(key: tuple[str, str], fed: int) -> int:
        s = sigma[key]
        if key not in read or s == 0:
            return 0
        total = carry[key] + fed
        out = math.floor(s * total)
        rest = total - out / s
        carry[key] = Fraction(math.ceil(rest)) if topo.settings.emission == "dvert" else rest
        return out

    for i, p in enumerate(trace.positions):
        sent: dict[tuple[str, str], int] = {}
        for name, step in p.spouts.items():
            n = step.stream_emitted("default")
            sent[(name, "default")] = n
            for stream in topo.component(name).streams:
                sent[(name, stream)] = emit((name, stream), n) if n else 0
        for name, b in p.bolts.items():
            for key in [k for k in sigma if k[0] == name]:
                sent[key] = emit(key, batch[name]) if b.emit else 0
        for name, b in p.bolts.items():
            arrived = sum(sent[k] for k in inputs[name])
            recorded = {s: b.stream_emitted(s) for _, s in [k for k in sigma if k[0] == name]}
            want = {s: sent[(name, s)] for s in recorded}
            if recorded != want:
                problems.append(f"{i}: {name} emits {recorded}, the rules give {want}")
            carries = b.buffer_by_stream or {"default": b.buffer}
            for s, c in carries.items():
                if parse_carry(c) != carry[(name, s)]:
                    problems.append(f"{i}: {name} keeps {c} on {s}, the rules give {carry[(name, s)]}")
            if b.arrivals != arrived or b.queue != queue[name]:
                problems.append(f"{i}: {name} receives {b.arrivals} with queue {b.queue}, the rules give "
                                f"{arrived} and {queue[name]}")
            if b.emit:
                busy[name], batch[name] = False, 0
            if b.take:
                want_batch = min(topo.bolt_by_name(name).parallelism, queue[name] + arrived)
                if busy[name] or b.batch != want_batch or want_batch == 0:
                    problems.append(f"{i}: {name} takes {b.batch}, the rules give {want_batch}")
                busy[name], batch[name] = True, b.batch
            queue[name] += arrived - (b.batch if b.take else 0)
    return problems


@st.composite
def topologies(draw: st.DrawFn) -> Topology:
    n_bolts = draw(st.integers(1, 3))
    spout: dict[str, Any] = {"name": "S", "rate": draw(st.sampled_from([1, 2, 3])), "burst": 1}
    if draw(st.booleans()):
        spout["streams"], spout["stream_ratio"] = ["side"], {"side": draw(st.sampled_from([0, 0.5, 1]))}
    bolts: list[dict[str, Any]] = []
    subs: list[dict[str, Any]] = []
    for j in range(n_bolts):
        name = f"B{j}"
        bolt: dict[str, Any] = {"name": name, "alpha": draw(st.sampled_from([0.2, 0.5, 1.0])),
                                "sigma": draw(st.sampled_from(SIGMAS)), "parallelism": draw(st.integers(1, 2))}
        if draw(st.booleans()):
            bolt["streams"], bolt["stream_sigma"] = ["err"], {"err": draw(st.sampled_from(SIGMAS))}
        bolts.append(bolt)
        upstream = [spout, *bolts[:j]]
        source = draw(st.sampled_from(upstream))
        streams = ["default", *source.get("streams", [])]
        chosen = draw(st.lists(st.sampled_from(streams), min_size=1, max_size=len(streams), unique=True))
        for stream in chosen:
            subs.append({"source": source["name"], "target": name, "stream": None if stream == "default" else stream})
        if "default" in chosen and draw(st.booleans()):  # the default stream again, by name: counted once
            subs.append({"source": source["name"], "target": name, "stream": "default"})
    return parse_topology({
        "spouts": [spout], "bolts": bolts, "subscriptions": subs,
        "settings": {"tolerance": 0.1, "max_idle_time": draw(st.sampled_from(IDLES)),
                     "emission": draw(st.sampled_from(["exact", "dvert"]))},
    })


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(topologies())
def test_random_topologies_with_streams_obey_the_page(topo: Topology) -> None:
    report = rate_check(topo)
    result = verify(topo, SearchOptions(k_max=10, timeout_s=20))
    for trace in result.traces:
        assert certify(trace).ok
        assert page_counts(trace) == []
    for name, rates in report.bolts.items():
        verdict = result.bolts[name].verdict
        if rates.status == "bounded":
            assert verdict == "bounded"
        if rates.status == "grows":
            assert verdict == "counterexample", (name, result.message)
            trace = result.traces[result.bolts[name].trace_index or 0]
            assert trace.growth_per_loop()[name] > 0
    bounded = [n for n, r in report.bolts.items() if r.status == "bounded"]
    if bounded:
        checked = [topo.bolt_by_name(n).id for n in bounded]
        forced = verify(topo.model_copy(update={"verification": topo.verification.model_copy(
            update={"checked": checked})}), SearchOptions(force_search=True, k_max=6, timeout_s=20))
        assert all(forced.bolts[n].verdict != "counterexample" for n in bounded), forced.message
        for trace in forced.traces:
            assert certify(trace).ok and page_counts(trace) == []


def test_the_page_counts_catch_a_stream_counted_twice() -> None:
    topo = parse_topology({
        "spouts": [{"name": "S", "rate": 2, "burst": 1}],
        "bolts": [{"name": "A", "alpha": 0.1, "sigma": 1, "parallelism": 1, "streams": ["err"],
                   "stream_sigma": {"err": 1}},
                  {"name": "U", "alpha": 1, "sigma": 0, "parallelism": 1}],
        "subscriptions": [{"source": "S", "target": "A"}, {"source": "A", "target": "U"},
                          {"source": "A", "target": "U", "stream": "default"}],
        "settings": {"tolerance": 0.1, "max_idle_time": 0},
        "verification": {"checked": ["U"]}})
    result = verify(topo)
    assert result.verdict == "counterexample"
    trace = result.traces[0]
    assert page_counts(trace) == []
    doubled = trace.model_copy(deep=True)
    for p in doubled.positions:
        p.bolts["U"].arrivals *= 2
    assert page_counts(doubled) != [] and not certify(doubled).ok

"""The token engine: runs compiled patterns over a stream of events (plain dicts with `type` and `t`).

Semantics follow VIATRA-CEP's token model. Each state holds tokens (partial
matches) oldest first; an event of type T looks up the precompiled steps for T
(no scanning of the automaton). Per event and state at most one token fires
(the oldest whose parameters agree), except in the `every` and `any` contexts.
Contexts (see docs/cep.md):

- chronicle: tokens wait across unrelated events; the initial state always
  holds a fresh token.
- immediate: an event that fires nothing in the automaton discards its partial matches.
- strict: immediate, and a new match starts only when none is in progress (an
  event that resets the automaton may start the next one).
- every: every token that can take the event does (Esper `every A -> B`).
- any: every token may take or skip each event (Esper `every A -> every B`,
  FlinkCEP `followedByAny`).
- once: one partial match at a time, no resets (Esper `every (A -> B)`).
- first: as once, stops after the first match (Apama `A -> B`).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from app.cep.compiler import INIT, Automaton, Edge, compile_pattern
from app.cep.nodes import Pattern, PatternError

MAX_PARTIAL = 1_000_000  # live partial matches per pattern and partition before matching gives up
_UNBOUND = object()
_MISSING = object()
_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


@dataclass
class Match:
    """One complete match (or, for `timeout` patterns, one partial match whose window ran out)."""

    pattern: str
    events: list[dict[str, Any]]
    indices: list[int]  # 0-based positions of the events in the stream
    bindings: dict[str, Any]
    kind: str = "match"  # "match" | "timeout"
    at: int = -1  # index of the event at which the match was reported

    @property
    def t_start(self) -> float:
        return float(self.events[0].get("t", 0.0)) if self.events else 0.0

    @property
    def t_end(self) -> float:
        return float(self.events[-1].get("t", 0.0)) if self.events else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "pattern": self.pattern, "kind": self.kind, "at": self.at, "t_start": self.t_start,
            "t_end": self.t_end, "bindings": self.bindings, "indices": self.indices, "events": self.events,
        }


def _agree(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """Two parameter tuples that do not contradict each other."""
    return all(x is _UNBOUND or y is _UNBOUND or x == y for x, y in zip(a, b, strict=False))  # () agrees with all


def _freeze(value: Any) -> Any:
    """A hashable stand-in for a JSON value (lists become tuples, objects sorted item tuples)."""
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    return value


def _reported_at(m: Match) -> int:
    return m.at


def _first_index(m: Match) -> int:
    return m.indices[0]


class _Token:
    """A partial match: parameter values, the events taken (a linked list, newest first), zone clocks."""

    __slots__ = ("binds", "trail", "clocks", "lasts", "stamp", "first", "state", "alive")

    def __init__(self, binds: tuple[Any, ...], trail: Any, clocks: dict[int, float] | None,
                 lasts: dict[int, float] | None, first: int):
        self.binds = binds
        self.trail = trail
        self.clocks = clocks
        self.lasts = lasts
        self.stamp = -1
        self.first = first
        self.state = INIT
        self.alive = True


class _Run:
    """The tokens of one pattern in one partition."""

    __slots__ = ("tokens", "partial", "done", "consumed_at", "consumed_binds")

    def __init__(self, n_states: int):
        self.tokens: list[list[_Token]] = [[] for _ in range(n_states)]
        self.partial = 0
        self.done = False
        self.consumed_at = -1  # past_last skip: the last event of the latest match, and its parameters
        self.consumed_binds: tuple[Any, ...] = ()


# A move: (dst, bind_slots, tests, zones, accepting, keeps_going, plain = no guard at all)
_Move = tuple[int, tuple[tuple[str, int], ...], tuple[tuple[str, Callable[[Any, Any], bool], Any], ...],
              tuple[Any, ...], bool, bool, bool]


class StepTable:
    """A compiled pattern's moves, precompiled per event type: for each type an edge names (and for any other type)
    the steps to try, (source state, its moves, its kill moves), later states first; a move is its destination, its
    bindings (as slots), tests and zones, and whether its destination accepts and keeps the token."""

    def __init__(self, automaton: Automaton) -> None:
        self.automaton = automaton
        self.accepting = automaton.accepting
        self.slots = {v: k for k, v in enumerate(automaton.variables)}
        self.zone_kind = {z.id: (z.kind, z.amount) for z in automaton.zones}
        out_count = [0] * automaton.n_states
        for e in automaton.edges:
            if not e.kill:
                out_count[e.src] += 1
        self.keeps = [n > 0 for n in out_count]
        self.table, self.default_steps = self._tables()

    def _move(self, e: Edge) -> _Move:
        binds = tuple((attr, self.slots[var]) for attr, var in e.binds)
        tests = tuple((attr, _COMPARE[op], value) for attr, op, value in e.tests)
        zones = tuple((z, *self.zone_kind[z]) for z in e.zones)
        plain = not binds and not tests and not zones
        return (e.dst, binds, tests, zones, e.dst in self.accepting, self.keeps[e.dst], plain)

    def _steps_for(self, typ: str | None) -> tuple[Any, ...]:
        """Steps for an event type (None: a type no edge names): (src, moves, kill moves) by source state."""
        steps = []
        for s, out in enumerate(self.out_edges):
            moves = []
            kills = []
            for e in out:
                if e.kill:
                    if typ is not None and e.type == typ:
                        kills.append(self._move(e))
                elif e.type is None:
                    if typ is None or typ not in e.excluded:
                        moves.append(self._move(e))
                elif e.type == typ:
                    moves.append(self._move(e))
            if s == INIT:
                kills = []  # the initial state always offers a fresh token: nothing to abandon
            if moves or kills:
                steps.append((s, tuple(moves), tuple(kills)))
        # later states first, the initial state last: older partial matches complete first
        steps.sort(key=lambda st: -st[0] if st[0] != INIT else 1)
        return tuple(steps)

    def _tables(self) -> tuple[dict[str, tuple[Any, ...]], tuple[Any, ...] | None]:
        self.out_edges: list[list[Edge]] = [[] for _ in range(self.automaton.n_states)]
        for e in self.automaton.edges:
            self.out_edges[e.src].append(e)
        types: set[str] = set()
        for e in self.automaton.edges:
            if e.type is not None:
                types.add(e.type)
            types |= e.excluded
        table = {t: self._steps_for(t) for t in sorted(types)}
        default = self._steps_for(None)
        return table, (default or None)


def _take(tok_binds: tuple[Any, ...], clocks: dict[int, float] | None, lasts: dict[int, float] | None, move: _Move,
          ev: dict[str, Any]) -> Any:
    """Guards of one move; returns (binds, clocks, lasts), None (guards fail) or False (window expired)."""
    binds: Any = tok_binds  # the token's tuple until the first new binding, then a list copy
    for attr, slot in move[1]:
        value = ev.get(attr, _MISSING)
        if value is _MISSING:
            return None
        bound = binds[slot]
        if bound is _UNBOUND:
            if binds is tok_binds:
                binds = list(binds)
            binds[slot] = value
        elif bound != value:
            return None
    for attr, compare, const in move[2]:
        value = ev.get(attr, _MISSING)
        if value is _MISSING:
            return None
        try:
            if not compare(value, const):
                return None
        except TypeError:
            return None
    if binds is not tok_binds:
        binds = tuple(binds)
    if move[3]:
        t = ev.get("t", 0.0)
        clocks = dict(clocks) if clocks else {}
        for zid, kind, amount in move[3]:
            start = clocks.get(zid)
            if start is None:
                clocks[zid] = t
            elif kind == "within" and t - start > amount:
                return False
            if kind == "holds":
                lasts = dict(lasts) if lasts else {}
                lasts[zid] = t
    return binds, clocks, lasts


class PatternMatcher:
    """One compiled pattern with its precompiled per-type step table and its token store."""

    def __init__(self, pattern: Pattern, automaton: Automaton | None = None):
        self.pattern = pattern
        self.id = pattern.id
        self.automaton = auto = automaton or compile_pattern(pattern)
        self.context = pattern.context
        self.skip = pattern.skip
        self.by = pattern.by
        self.timeout = pattern.timeout
        self.only = frozenset(pattern.only) if pattern.only else None
        steps = StepTable(auto)
        self.slots, self.zone_kind = steps.slots, steps.zone_kind
        self.empty_binds = tuple([_UNBOUND] * len(auto.variables))
        self.has_holds = any(z.kind == "holds" for z in auto.zones)
        self.window = auto.top_window
        self.accepting = auto.accepting
        self.table, self.default_steps = steps.table, steps.default_steps
        self.runs: dict[Any, _Run] = {}
        self.heap: list[tuple[float, int, _Token, _Run]] = []
        self.counter = itertools.count()
        self.seq = 0
        self.max_partial = MAX_PARTIAL

    def types(self) -> set[str]:
        """Event types this pattern can react to (others only matter through negation or resets)."""
        return set(self.table)

    def reset(self) -> None:
        self.runs.clear()
        self.heap.clear()
        self.seq = 0

    # ---- the hot path ------------------------------------------------------

    def _holds_ok(self, clocks: dict[int, float] | None, lasts: dict[int, float] | None) -> bool:
        if not self.has_holds or not lasts or clocks is None:  # a holds zone sets its clock before its last time
            return True
        return all(last - clocks[zid] >= self.zone_kind[zid][1] for zid, last in lasts.items())

    def feed(self, ev: dict[str, Any], index: int, out: list[Match]) -> None:
        """Process one event (position `index` in the stream); appends completed matches to `out`."""
        self.feed_all((ev,), index, out)

    def feed_all(self, events: Iterable[dict[str, Any]], index: int, out: list[Match]) -> int:
        """Process events from stream position `index` on; returns the next position."""
        table_get = self.table.get
        default = self.default_steps
        by = self.by
        runs = self.runs
        ctx = self.context
        resets = ctx in ("immediate", "strict")
        always_init = ctx in ("chronicle", "immediate", "every", "any")
        watch_time = self.window is not None
        heap = self.heap
        fire = self._fire
        run: _Run | None = runs.get(None) if not by else _Run(0)  # with `by`, each event takes its partition's
        if run is None:
            run = runs[None] = _Run(self.automaton.n_states)
        key: tuple[Any, ...] | None = None
        only = self.only
        for ev in events:
            if only is not None and ev["type"] not in only:
                index += 1
                continue
            if watch_time and heap and heap[0][0] < ev.get("t", 0.0):
                self._expire(ev.get("t", 0.0), index, out)
            steps = table_get(ev["type"], default)
            if by:
                if steps is None and not resets:
                    index += 1
                    continue
                key = tuple([ev.get(a) for a in by])
                try:
                    run = runs.get(key)
                except TypeError:  # a list or object value: partition by its frozen form
                    key = tuple(_freeze(v) for v in key)
                    run = runs.get(key)
                if run is None:
                    run = runs[key] = _Run(self.automaton.n_states)
            if run.done:
                index += 1
                continue
            if steps is not None:
                before = len(out)
                self.seq += 1
                init_ok = always_init or run.partial == 0
                fired = fire(run, steps, ev, index, out, init_ok)
                if resets and not fired and (run.partial or not init_ok):
                    self._clear(run)
                    if ctx == "strict" and not init_ok:  # the resetting event may start the next match
                        self.seq += 1
                        fire(run, tuple(s for s in steps if s[0] == INIT), ev, index, out, True)
                if len(out) > before + 1:
                    out[before:] = sorted(out[before:], key=_first_index)
                if run.partial > self.max_partial:
                    raise PatternError(self.id, f"more than {self.max_partial:,} partial matches at event {index} "
                                                f"(context {ctx}); add a 'within' window, partition with 'by', "
                                                f"or use a context that keeps fewer (chronicle, strict)")
            elif resets and run.partial:
                self._clear(run)
            if by and not run.partial and not run.done:
                del runs[key]  # an idle partition costs nothing to recreate
            index += 1
        return index

    def _fire(self, run: _Run, steps: tuple[Any, ...], ev: dict[str, Any], index: int, out: list[Match],
              init_ok: bool) -> bool:
        """Fire the steps of one event; True when any transition fired (VIATRA's 'enabled automaton')."""
        seq = self.seq
        ctx = self.context
        single = ctx not in ("every", "any")
        fired = False
        tokens = run.tokens
        take = _take
        for src, moves, kills in steps:
            if src == INIT:
                if not init_ok or run.done:
                    continue
                for move in moves:
                    if move[6]:
                        tok = _Token(self.empty_binds, (index, ev, None), None, None, index)
                    else:
                        got = take(self.empty_binds, None, None, move, ev)
                        if not got:
                            continue
                        tok = _Token(got[0], (index, ev, None), got[1], got[2], index)
                    if run.consumed_at == index and _agree(tok.binds, run.consumed_binds):
                        continue  # past_last: an event of a match does not start another one
                    fired = True
                    tok.stamp = seq
                    if move[4]:
                        self._enter(run, tok, move, index, out, None, ev)
                    else:
                        run.partial += 1
                        tok.state = move[0]
                        tokens[move[0]].append(tok)
                        if self.window is not None:
                            heapq.heappush(self.heap, (ev.get("t", 0.0) + self.window, next(self.counter), tok, run))
                    if ctx in ("strict", "once", "first"):
                        break  # these contexts start a single partial match
                continue
            lst = tokens[src]
            if not lst:
                continue
            i = 0
            while i < len(lst):  # oldest first; no copy of the list on the hot path
                tok = lst[i]
                if not tok.alive:
                    del lst[i]
                    continue
                if tok.stamp == seq:  # it arrived here with this very event
                    i += 1
                    continue
                binds, clocks, lasts, trail = tok.binds, tok.clocks, tok.lasts, tok.trail
                if kills and any(take(binds, clocks, lasts, k, ev) is not None for k in kills):
                    self._drop(run, tok)  # NOT: the event that would complete the negated part (or a stopper)
                    del lst[i]
                    continue
                took = False
                for move in moves:
                    if move[6]:
                        got = (binds, clocks, lasts)
                    else:
                        got = take(binds, clocks, lasts, move, ev)
                        if got is None:
                            continue
                        if got is False:  # its window has passed: the token goes to the trap state
                            self._drop(run, tok)
                            break
                    fired = True
                    if not took and ctx != "any":
                        tok.binds, tok.clocks, tok.lasts = got
                        tok.trail = (index, ev, trail)
                        tok.stamp = seq
                        dst = move[0]
                        if move[4]:
                            self._enter(run, tok, move, index, out, lst, ev)
                        elif dst != src:
                            del lst[i]
                            tok.state = dst
                            tokens[dst].append(tok)
                    else:  # a second way forward, or `any` (the token also stays): a copy goes on
                        copy = _Token(got[0], (index, ev, trail), got[1], got[2], tok.first)
                        copy.stamp = seq
                        self._enter(run, copy, move, index, out, None, ev)
                    took = True
                    if run.done:
                        return True
                if took and single:
                    break  # one firing per state and event (VIATRA marks the other tokens as processed)
                if i < len(lst) and lst[i] is tok:
                    if tok.alive:
                        i += 1
                    else:
                        del lst[i]
        return fired

    def _enter(self, run: _Run, tok: _Token, move: _Move, index: int, out: list[Match],
               src_list: list[_Token] | None, ev: dict[str, Any]) -> None:
        """Put a token that took `move` into its new state (`src_list`: the list it leaves, None if new)."""
        dst = move[0]
        finished = move[4] and not move[5]  # a final state with no way on: the match is complete
        if move[4] and not self.timeout and self._holds_ok(tok.clocks, tok.lasts):
            self._report(run, tok, index, out, "match")
            if run.done:
                tok.alive = False
                return
            if self.skip != "no_skip":
                finished = True  # after-match skip: the matched run does not go on either
        if finished or not tok.alive:
            if src_list is not None:
                if tok in src_list:
                    src_list.remove(tok)
                if tok.alive:
                    run.partial -= 1
            tok.alive = False
            return
        if src_list is None:
            run.partial += 1
            tok.state = dst
            run.tokens[dst].append(tok)
            if self.window is not None:
                heapq.heappush(self.heap, (ev.get("t", 0.0) + self.window, next(self.counter), tok, run))
        elif dst != tok.state:
            src_list.remove(tok)
            tok.state = dst
            run.tokens[dst].append(tok)

    def _report(self, run: _Run, tok: _Token, index: int, out: list[Match], kind: str) -> None:
        events: list[dict[str, Any]] = []
        indices: list[int] = []
        node = tok.trail
        while node is not None:
            indices.append(node[0])
            events.append(node[1])
            node = node[2]
        events.reverse()
        indices.reverse()
        bindings = {var: tok.binds[slot] for var, slot in self.slots.items() if tok.binds[slot] is not _UNBOUND}
        out.append(Match(self.id, events, indices, bindings, kind, index))
        if self.context == "first":
            run.done = True
            self._clear(run)
        if self.skip != "no_skip" and kind == "match":
            self._skip_after(run, tok, indices)

    def _skip_after(self, run: _Run, done: _Token, indices: list[int]) -> None:
        """After-match skip: drop partial matches that start at the match's first event (to_next)
        or anywhere up to its last event (past_last), among those with agreeing parameters."""
        first, last = indices[0], indices[-1]
        for lst in run.tokens:
            for tok in lst:
                if tok is done or not tok.alive:
                    continue
                hit = tok.first == first if self.skip == "to_next" else tok.first <= last
                if hit and _agree(tok.binds, done.binds):
                    self._drop(run, tok)
        if self.skip == "past_last":
            run.consumed_at, run.consumed_binds = last, done.binds
        for lst in run.tokens:
            if any(not tok.alive for tok in lst):
                lst[:] = [tok for tok in lst if tok.alive]

    def _drop(self, run: _Run, tok: _Token) -> None:
        if tok.alive:
            tok.alive = False
            run.partial -= 1

    def _clear(self, run: _Run) -> None:
        for lst in run.tokens:
            for tok in lst:
                tok.alive = False
            lst.clear()
        run.partial = 0

    def _expire(self, t: float, index: int, out: list[Match]) -> None:
        """Tokens whose top-level window has passed: drop them (report them for `timeout` patterns)."""
        heap = self.heap
        while heap and heap[0][0] < t:
            _, _, tok, run = heapq.heappop(heap)
            if not tok.alive:
                continue
            if self.timeout:
                self._report(run, tok, index, out, "timeout")
            self._drop(run, tok)
            lst = run.tokens[tok.state]
            if tok in lst:
                lst.remove(tok)


class CepEngine:
    """Several patterns over one stream: `feed` one event at a time or `run` a whole sequence."""

    def __init__(self, patterns: Sequence[Pattern]):
        self.matchers = [PatternMatcher(p) for p in patterns]
        self.index = 0

    def feed(self, ev: dict[str, Any]) -> list[Match]:
        out: list[Match] = []
        for m in self.matchers:
            m.feed(ev, self.index, out)
        self.index += 1
        return out

    def run(self, events: Iterable[dict[str, Any]]) -> list[Match]:
        """All matches over the events, ordered by the event that completed them, then by pattern."""
        stream = events if isinstance(events, list) else list(events)
        start = self.index
        per_pattern: list[list[Match]] = []
        for m in self.matchers:  # patterns are independent: one tight pass each, then a stable merge
            found: list[Match] = []
            self.index = m.feed_all(stream, start, found)
            per_pattern.append(found)
        self.index = start + len(stream)
        if len(per_pattern) == 1:
            return per_pattern[0]
        return list(heapq.merge(*per_pattern, key=_reported_at))

    def iter_matches(self, events: Iterable[dict[str, Any]]) -> Iterator[Match]:
        """The matches as each event completes them."""
        for ev in events:
            yield from self.feed(ev)


def find_matches(patterns: Sequence[Pattern], events: Iterable[dict[str, Any]]) -> list[Match]:
    """Every match of every pattern over the events, in the order they complete."""
    return CepEngine(patterns).run(events)

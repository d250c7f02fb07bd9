"""Compile a pattern AST to a token automaton shaped like VIATRA-CEP's.

Construction: atoms become typed transitions; followed-by chains sub-automata by
merging a final state into the next initial state; OR shares the initial and the
final state and drops duplicate transitions; AND is the OR of the argument
permutations; `{n}` unrolls, `{*}` loops back to the start, `{+}` is one copy then
a loop; NOT is the complement of a type-deterministic automaton over the next
events (negative transitions into a new final state). No epsilon transitions are
ever built (merges and edge copies replace them), so the state counts match
VIATRA-CEP's compiler tests. Every automaton has one initial, one trap state
(tokens that time out or die) and normally one final state.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field, replace
from typing import Any

from app.cep.nodes import (
    And,
    Atom,
    Follows,
    HoldsFor,
    Not,
    Or,
    Pattern,
    PatternError,
    PatternNode,
    Plus,
    Star,
    Times,
    Within,
    check_size,
)
from app.expr.limits import exceeded, limit, stack_for

INIT = 0
MAX_AND_ARGS = 5  # AND expands to every permutation: 5! = 120 branches at most


@dataclass(frozen=True)
class Edge:
    """A transition. Positive: fires on events of `type`. Negative (`type` None): on any type not in
    `excluded`. A kill edge is no transition: a token in `src` dies on an event of `type` (used by NOT)."""

    src: int
    dst: int
    type: str | None
    excluded: frozenset[str] = frozenset()
    binds: tuple[tuple[str, str], ...] = ()
    tests: tuple[tuple[str, str, Any], ...] = ()
    zones: tuple[int, ...] = ()
    kill: bool = False

    def __hash__(self) -> int:  # cached: the builder hashes every edge on every merge
        cached = self.__dict__.get("_hash")
        if cached is None:
            cached = hash((self.src, self.dst, self.type, self.excluded, self.binds, self.tests, self.zones, self.kill))
            object.__setattr__(self, "_hash", cached)
        return int(cached)


@dataclass(frozen=True)
class Zone:
    """A time window over part of a pattern: `within` (at most) or `holds` (at least) `amount` apart."""

    id: int
    kind: str  # "within" | "holds"
    amount: float
    branches: int  # transitions leaving the zone's start state (VIATRA counts one timed zone per branch)


@dataclass
class Automaton:
    """The compiled pattern: states 0..n-1 (0 initial), accepting states, trap state, edges and zones."""

    n_states: int
    accepting: frozenset[int]
    trap: int
    edges: list[Edge]
    zones: list[Zone]
    variables: tuple[str, ...]
    top_window: float | None = None  # a `within` around the whole pattern (lets old tokens be dropped)

    def transitions(self) -> list[Edge]:
        """Positive and negative transitions (kill edges excluded)."""
        return [e for e in self.edges if not e.kill]

    def shape(self) -> dict[str, int]:
        """The figures VIATRA-CEP's compiler tests assert."""
        return {
            "automata": 1,
            "states_incl_init_final_trap": self.n_states,
            "initial_state_out_transitions": sum(1 for e in self.edges if not e.kill and e.src == INIT),
            "final_states": len(self.accepting),
            "timed_zones": sum(z.branches for z in self.zones),
        }

    def describe(self) -> str:
        """A readable listing of the transitions (for docs and debugging)."""
        lines = []
        for e in self.edges:
            guard = e.type if e.type is not None else "NOT{" + ",".join(sorted(e.excluded)) + "}"
            extra = "".join(f" {a}={p}" for a, p in e.binds) + "".join(f" {a}{o}{v!r}" for a, o, v in e.tests)
            dst = "dies" if e.kill else ("final" if e.dst in self.accepting else str(e.dst))
            lines.append(f"{e.src} --{guard}{extra}--> {dst}" + (f" zones={list(e.zones)}" if e.zones else ""))
        return "\n".join(lines)


@dataclass
class _Frag:
    init: int
    accepts: set[int]
    edges: list[Edge] = field(default_factory=list)
    sink: int | None = None  # an accepting state known to have no outgoing edge (saves a scan in `seq`)


def _out(frag: _Frag, state: int) -> list[Edge]:
    return [e for e in frag.edges if e.src == state]


def _has_incoming(frag: _Frag, state: int) -> bool:
    return any(e.dst == state and not e.kill for e in frag.edges)


def _rename(edges: list[Edge], old: int, new: int) -> list[Edge]:
    return [replace(e, src=new if e.src == old else e.src, dst=new if (e.dst == old and not e.kill) else e.dst)
            if e.src == old or (e.dst == old and not e.kill) else e for e in edges]


def _rename_all(edges: list[Edge], mapping: dict[int, int]) -> list[Edge]:
    """Several renames in one pass (kill edges keep their target)."""
    out = []
    for e in edges:
        src = mapping.get(e.src, e.src)
        dst = e.dst if e.kill else mapping.get(e.dst, e.dst)
        out.append(e if src == e.src and dst == e.dst else replace(e, src=src, dst=dst))
    return out


def _dedup(edges: list[Edge], touching: set[int] | None = None) -> list[Edge]:
    """The edges without repeats; with `touching`, only edges at those states can repeat (the others are
    known distinct, so they are not hashed: merging stays linear in the edges)."""
    seen: set[Edge] = set()
    out = []
    for e in edges:
        if touching is not None and e.src not in touching and e.dst not in touching:
            out.append(e)
        elif e not in seen:
            seen.add(e)
            out.append(e)
    return out


class _Builder:
    def __init__(self, where: str):
        self.where = where
        self.next_state = 1
        self.zones: list[Zone] = []

    def new(self) -> int:
        s = self.next_state
        self.next_state += 1
        return s

    # -- merges
    def merge_sinks(self, frag: _Frag) -> _Frag:
        """Accepting states without outgoing edges are interchangeable: keep one."""
        sources = {e.src for e in frag.edges}
        sinks = sorted(a for a in frag.accepts if a != frag.init and a not in sources)
        if len(sinks) < 2:
            frag.sink = sinks[0] if sinks else None
            return frag
        keep = sinks[0]
        edges = _rename_all(frag.edges, {s: keep for s in sinks[1:]})
        accepts = {keep if a in sinks else a for a in frag.accepts}
        return _Frag(frag.init, accepts, _dedup(edges, {keep}), keep)

    def seq(self, x: _Frag, y: _Frag) -> _Frag:
        """x then y: merge x's final into y's start when that adds no path; else copy y's start edges."""
        if len(x.accepts) == 1:
            q = next(iter(x.accepts))
            if q != x.init and (x.sink == q or not _out(x, q)):
                edges = x.edges  # x is not used again: extend its list instead of copying it
                edges.extend(_rename(y.edges, y.init, q))
                accepts = {q if a == y.init else a for a in y.accepts}
                sink = q if y.sink == y.init else y.sink
                return _Frag(x.init, accepts, edges, sink if sink in accepts else None)
        y_start = _out(y, y.init)
        keep_start = _has_incoming(y, y.init)
        copies = [replace(e, src=q) for q in sorted(x.accepts) for e in y_start]
        y_edges = y.edges if keep_start else [e for e in y.edges if e.src != y.init]
        accepts = {a for a in y.accepts if a != y.init or keep_start}
        if y.init in y.accepts:
            accepts |= x.accepts
        # x and y share no state and the copies leave x's finals for y's states: nothing can repeat
        return self.merge_sinks(_Frag(x.init, accepts, x.edges + copies + y_edges))

    def alt(self, x: _Frag, y: _Frag) -> _Frag:
        """x or y: one shared start (a fresh one if a start is re-entered by a loop), merged finals."""
        if not _has_incoming(x, x.init) and not _has_incoming(y, y.init):
            edges = x.edges + _rename(y.edges, y.init, x.init)
            accepts = x.accepts | {x.init if a == y.init else a for a in y.accepts}
            frag = _Frag(x.init, accepts, _dedup(edges, {x.init}))
        else:
            n = self.new()
            copies = [replace(e, src=n) for e in _out(x, x.init) + _out(y, y.init)]
            accepts = x.accepts | y.accepts
            if x.init in x.accepts or y.init in y.accepts:
                accepts.add(n)
            frag = _Frag(n, accepts, _dedup(copies + x.edges + y.edges, {n}))
        return self.merge_sinks(frag)

    def star(self, x: _Frag) -> _Frag:
        """Zero or more x: the final folds back into the start (or the start's edges are copied to it)."""
        if len(x.accepts) == 1:
            q = next(iter(x.accepts))
            if q != x.init and not _out(x, q) and not _has_incoming(x, x.init):
                return _Frag(x.init, {x.init}, _dedup(_rename(x.edges, q, x.init)))
        start = _out(x, x.init)
        edges = list(x.edges)
        init = x.init
        if _has_incoming(x, x.init):
            init = self.new()
            edges += [replace(e, src=init) for e in start]
        edges += [replace(e, src=q) for q in sorted(x.accepts) for e in start]
        return _Frag(init, set(x.accepts) | {init}, _dedup(edges))

    def negate(self, x: _Frag) -> _Frag:
        """NOT x over the next events: from every state x can be in, a negative edge on the types x
        expects leads to the new final; types that would complete x kill the token."""
        if any(e.kill or e.type is None for e in x.edges):
            raise PatternError(self.where, "NOT over a pattern that already contains NOT is not supported")
        reach: list[int] = [x.init]
        seen = {x.init}
        for s in reach:
            for e in _out(x, s):
                if e.dst not in seen and e.dst not in x.accepts:
                    seen.add(e.dst)
                    reach.append(e.dst)
        g = self.new()
        edges: list[Edge] = []
        for s in reach:
            if s in x.accepts:
                continue
            out = _out(x, s)
            types = [e.type for e in out]
            dup = next((t for t in types if types.count(t) > 1), None)
            if dup is not None:
                raise PatternError(self.where, f"NOT needs a pattern that is deterministic on event types; "
                                               f"'{dup}' can continue it in two ways")
            edges.append(Edge(s, g, None, frozenset(t for t in types if t is not None)))
            for e in out:
                edges.append(replace(e, dst=0, kill=True, zones=()) if e.dst in x.accepts else e)
        return _Frag(x.init, {g}, edges)

    def unless(self, node: And) -> _Frag:
        """`X AND NOT Y` (Esper's `and not`): X, abandoned when a Y arrives before X completes. Y is an
        event type or an OR of them; its parameters must agree with the partial match to abandon it."""
        positives = [a for a in node.args if not isinstance(a, Not)]
        if len(positives) != 1:
            raise PatternError(self.where, "AND NOT needs exactly one pattern without NOT: 'X AND NOT Y'")
        stoppers: list[Atom] = []
        for neg in node.args:
            if isinstance(neg, Not):
                todo = [neg.arg]
                while todo:
                    part = todo.pop()
                    if isinstance(part, Atom):
                        stoppers.append(part)
                    elif isinstance(part, Or):
                        todo.extend(part.args)
                    else:
                        raise PatternError(self.where,
                                           "in 'X AND NOT Y', Y must be an event type or an OR of event types")
        frag = self.build(positives[0])
        waiting = {frag.init} | {e.src for e in frag.edges if not e.kill}  # final states that go on too
        kills = [Edge(s, 0, a.type, frozenset(), a.binds, a.tests, (), True) for s in sorted(waiting) for a in stoppers]
        return _Frag(frag.init, frag.accepts, _dedup(frag.edges + kills))

    # -- the AST
    def build(self, node: PatternNode) -> _Frag:
        if isinstance(node, Atom):
            i, f = self.new(), self.new()
            return _Frag(i, {f}, [Edge(i, f, node.type, frozenset(), node.binds, node.tests)], f)
        if isinstance(node, Follows):
            frag = self.build(node.args[0])
            for arg in node.args[1:]:
                frag = self.seq(frag, self.build(arg))
            return frag
        if isinstance(node, Or):
            frags = [self.build(arg) for arg in node.args]
            if not any(_has_incoming(f, f.init) for f in frags):
                # what folding `alt` over the arguments gives, in one pass: shared start, merged finals
                init = frags[0].init
                edges = [e for f in frags for e in _rename_all(f.edges, {f.init: init})]
                accepts = {init if a == f.init else a for f in frags for a in f.accepts}
                return self.merge_sinks(_Frag(init, accepts, _dedup(edges)))
            frag = frags[0]
            for other in frags[1:]:
                frag = self.alt(frag, other)
            return frag
        if isinstance(node, And) and any(isinstance(a, Not) for a in node.args):
            return self.unless(node)
        if isinstance(node, And):
            if len(node.args) > MAX_AND_ARGS:
                raise PatternError(self.where, f"AND of more than {MAX_AND_ARGS} patterns is not supported "
                                               "(it expands to every order)")
            alternatives = [Follows(perm) for perm in itertools.permutations(node.args)]
            return self.build(Or(tuple(alternatives)))
        if isinstance(node, Times):
            return self.build(Follows(tuple([node.arg] * node.n))) if node.n > 1 else self.build(node.arg)
        if isinstance(node, Star):
            return self.star(self.build(node.arg))
        if isinstance(node, Plus):
            return self.seq(self.build(node.arg), self.star(self.build(node.arg)))
        if isinstance(node, Not):
            return self.negate(self.build(node.arg))
        if isinstance(node, (Within, HoldsFor)):
            frag = self.build(node.arg)
            zid = len(self.zones)
            branches = sum(1 for e in frag.edges if e.src == frag.init and not e.kill)
            kind, amount = ("within", node.window) if isinstance(node, Within) else ("holds", node.duration)
            self.zones.append(Zone(zid, kind, amount, branches))
            frag.edges = [e if e.kill else replace(e, zones=e.zones + (zid,)) for e in frag.edges]
            return frag
        raise PatternError(self.where, f"unknown pattern node {type(node).__name__}")


def estimated_size(node: PatternNode, cap: int) -> int:
    """An upper bound on the transitions the builder makes for `node` (stops counting past `cap`):
    `{n}` unrolls n copies, AND builds every order of its arguments, `{+}` two copies, `{*}` and NOT
    copy start edges. Computed without recursion and before anything is built."""
    memo: dict[int, int] = {}
    stack: list[tuple[PatternNode, bool]] = [(node, False)]
    while stack:
        current, ready = stack.pop()
        key = id(current)
        if key in memo:
            continue
        kids: tuple[PatternNode, ...] = () if isinstance(current, Atom) else (
            current.args if isinstance(current, (Follows, Or, And)) else (current.arg,))
        if not ready:
            stack.append((current, True))
            stack.extend((k, False) for k in kids if id(k) not in memo)
            continue
        total = sum(memo[id(k)] for k in kids)
        if isinstance(current, Atom):
            size = 1
        elif isinstance(current, And) and not any(isinstance(a, Not) for a in current.args):
            size = math.factorial(min(len(kids), MAX_AND_ARGS + 1)) * total
        elif isinstance(current, And):
            size = 2 * total + len(kids)
        elif isinstance(current, Times):
            size = current.n * total
        elif isinstance(current, Star):
            size = 2 * total
        elif isinstance(current, Plus):
            size = 3 * total
        elif isinstance(current, Not):
            size = 2 * total + 1
        else:
            size = total
        memo[key] = min(size, cap + 1)
    return memo[id(node)]


def compile_ast(node: PatternNode, where: str = "pattern") -> Automaton:
    """Compile one AST; raises PatternError for patterns that cannot be matched, or that would exceed
    the limit automaton_size (checked before building, so compiling takes bounded time)."""
    check_size(node, where)
    cap = limit("automaton_size")
    size = estimated_size(node, cap)
    if size > cap:
        raise PatternError(where, exceeded("automaton_size", f"the pattern would compile to more than {cap:,} "
                                                             "transitions"))
    builder = _Builder(where)
    with stack_for(limit("pattern_depth"), 3):  # `build` recurses once or twice per level
        frag = builder.merge_sinks(builder.build(node))
    if frag.init in frag.accepts:
        raise PatternError(where, "the pattern can match without any event (e.g. a lone a{*}); "
                                  "put the repetition inside a sequence such as 'a{*} -> b'")
    # renumber: initial state 0, then breadth-first; drop what the initial state cannot reach
    order = [frag.init]
    index = {frag.init: 0}
    leaving: dict[int, list[Edge]] = {}
    for e in frag.edges:
        leaving.setdefault(e.src, []).append(e)
    for s in order:
        for e in leaving.get(s, ()):
            if not e.kill and e.dst not in index:
                index[e.dst] = len(order)
                order.append(e.dst)
    accepting = frozenset(index[a] for a in frag.accepts if a in index)
    if not accepting:
        raise PatternError(where, "the pattern can never complete")
    trap = len(order)
    edges = [replace(e, src=index[e.src], dst=trap if e.kill else index[e.dst]) for e in frag.edges if e.src in index]
    variables: list[str] = []
    for e in edges:
        for _, var in e.binds:
            if var not in variables:
                variables.append(var)
    top_window = node.window if isinstance(node, Within) else None
    return Automaton(trap + 1, accepting, trap, edges, builder.zones, tuple(variables), top_window)


def compile_pattern(pattern: Pattern) -> Automaton:
    """Compile a named pattern (and check that its options fit it)."""
    automaton = compile_ast(pattern.ast, pattern.id)
    if pattern.timeout and automaton.top_window is None:
        raise PatternError(pattern.id, "the timeout option needs a 'within' around the whole pattern, "
                                       "e.g. '(take(tuple) -> bolt_ack(tuple)) within 30'")
    return automaton

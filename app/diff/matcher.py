"""Stream equivalence up to a dependence relation: the online matcher of DiffStream.

Two streams are equivalent when a bijection matches equal items and keeps the
order of every pair of dependent items (Kallas, Niksic, Stanford, Alur, OOPSLA
2020). The matcher reads the connected stream (items of both sides as they
arrive) and keeps only the unmatched items of each side. An item `x` arriving on
one side is matched with the earliest equal unmatched item `y` of the other side
when no unmatched item before `y` there is dependent with `x`; if instead the
first unmatched item of the other side that is equal *or* dependent with `x` is
dependent but unequal, no continuation can repair the order and the streams are
certainly different (reported at once, with both items). Otherwise `x` waits.
At the end of both streams, leftover unmatched items mean "not equivalent".

The specs are in :mod:`app.diff.specs`, the loops in :mod:`app.diff.strategies`.
No Qt, no Spark here; the Spark job for large `same_key` inputs lives in
:mod:`app.spark.diff_job`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from app.core.topology import TopologyError
from app.diff.results import Difference, DiffResult, StreamItem
from app.diff.specs import (
    AllDependence,
    Dependence,
    DiffError,
    Equality,
    NoneDependence,
    PairsDependence,
    PredicateDependence,
    PredicateEquality,
    SameKeyDependence,
    SetOfSplitEquality,
    TypeTableDependence,
    describe_dependence,
    describe_equality,
    parse_dependence,
    parse_equality,
)
from app.diff.strategies import AllStrategy, GeneralStrategy, NoneStrategy, SameKeyStrategy, Strategy, Tally
from app.diff.streams import LEFT, RIGHT, SIDE_NAMES, interleave, side_index
from app.diff.values import MissingField, NotAString, field_getter, freeze, item_getter, short_json
from app.expr import ExprEvalError, compile_predicate
from app.expr.limits import one_line

_PASS_THROUGH = (DiffError, TopologyError)  # raised while reading the input itself: their own message


def equality_functions(eq: Equality) -> tuple[Callable[[Any], Any] | None, Callable[[Any], Any],
                                              Callable[[Any, Any], bool] | None]:
    """(canon for comparisons or None for identity, hashable canon, or a predicate for the slow path)."""
    if isinstance(eq, PredicateEquality):
        return None, freeze, compile_predicate(eq.expr)
    if isinstance(eq, SetOfSplitEquality):
        sep = eq.sep
        getter = field_getter(eq.field) if eq.field else None

        def split_canon(item: Any) -> Any:
            value = getter(item) if getter else item
            if not isinstance(value, str):
                raise NotAString(f"set_of_split compares strings, got {type(value).__name__}")
            return frozenset(value.split(sep))
        return split_canon, split_canon, None
    if eq.only is not None:
        getters = [field_getter(f) for f in eq.only]

        def only_canon(item: Any) -> Any:
            return tuple(freeze(g(item)) for g in getters)
        return only_canon, only_canon, None
    if eq.ignore:
        ignored = frozenset(eq.ignore)

        def ignore_canon(item: Any) -> Any:
            if isinstance(item, dict):
                return {k: v for k, v in item.items() if k not in ignored}
            return item
        return ignore_canon, (lambda item: freeze(ignore_canon(item))), None
    return None, freeze, None


def dependence_functions(dep: Dependence) -> tuple[Callable[[Any], Any], Callable[[Any, Any], bool]]:
    """(class of an item, dependence between two classes) for the general path."""
    if isinstance(dep, AllDependence):
        return (lambda item: None), (lambda a, b: True)
    if isinstance(dep, NoneDependence):
        return (lambda item: None), (lambda a, b: False)
    if isinstance(dep, SameKeyDependence):
        getters = [field_getter(f) for f in dep.fields]
        return (lambda item: tuple(freeze(g(item)) for g in getters)), (lambda a, b: a == b)
    if isinstance(dep, PairsDependence):
        table = {(freeze(a), freeze(b)) for a, b in dep.pairs} | {(freeze(b), freeze(a)) for a, b in dep.pairs}
        getter = field_getter(dep.field) if dep.field else (lambda item: item)
        return (lambda item: freeze(getter(item))), (lambda a, b: (a, b) in table)
    if isinstance(dep, TypeTableDependence):
        listed = dep.independent if dep.independent is not None else dep.dependent
        table = {(freeze(a), freeze(b)) for a, b in listed or []}
        table |= {(b, a) for a, b in table}
        getter = field_getter(dep.field) if dep.field else (lambda item: item)
        if dep.independent is not None:
            return (lambda item: freeze(getter(item))), (lambda a, b: (a, b) not in table)
        return (lambda item: freeze(getter(item))), (lambda a, b: (a, b) in table)
    assert isinstance(dep, PredicateDependence)
    pred = compile_predicate(dep.expr)
    return (lambda item: item), (lambda a, b: pred(a, b) or pred(b, a))


def _key_function(dep: SameKeyDependence) -> Callable[[Any], Any]:
    if len(dep.fields) == 1 and "." not in dep.fields[0]:
        return item_getter(dep.fields[0])
    getters = [field_getter(f) for f in dep.fields]
    if len(getters) == 1:
        return getters[0]
    return lambda item: tuple(g(item) for g in getters)


def choose_strategy(tally: Tally, dep: Dependence, canon: Callable[[Any], Any] | None,
                    hashable: Callable[[Any], Any], equal: Callable[[Any, Any], bool] | None) -> Strategy:
    """The fast path for `all`, `none` and `same_key` unless equality is a predicate; the general path otherwise."""
    if equal is None:
        if isinstance(dep, AllDependence):
            return AllStrategy(tally, canon)
        if isinstance(dep, NoneDependence):
            return NoneStrategy(tally, hashable)
        if isinstance(dep, SameKeyDependence):
            return SameKeyStrategy(tally, _key_function(dep), canon)
    class_of, dependent = dependence_functions(dep)
    return GeneralStrategy(tally, class_of, dependent, canon, equal)


class Matcher:
    """The online DiffStream matcher; feed items with `push` or `feed`, then call `finish`.

    It stops at the first certain difference (like DiffStream, which throws):
    later items are counted but not matched, and `finish` reports the unmatched
    items as they were at that moment.
    """

    def __init__(self, dependence: Any = "all", equality: Any = None):
        self.dependence = parse_dependence(dependence)
        self.equality = parse_equality(equality)
        self.tally = Tally()
        self._canon, hashable, equal = equality_functions(self.equality)
        self._strategy = choose_strategy(self.tally, self.dependence, self._canon, hashable, equal)

    # -- what it has seen --

    @property
    def counts(self) -> list[int]:
        """Items read so far per side, [left, right]."""
        return self.tally.counts

    @property
    def position(self) -> int:
        """Items read so far in the connected stream."""
        return self.tally.position

    @property
    def matched(self) -> int:
        """Pairs matched so far."""
        return self.tally.matched

    @property
    def unmatched(self) -> int:
        """Items waiting for a partner now."""
        return self.tally.unmatched

    @property
    def peak_unmatched(self) -> int:
        """Most items waiting at once."""
        return self.tally.peak

    @property
    def difference(self) -> Difference | None:
        """The first certain difference, once found."""
        return self.tally.difference

    @property
    def stopped(self) -> bool:
        """True once a certain difference has been found."""
        return self.tally.difference is not None

    @property
    def mode(self) -> str:
        """Which loop runs: 'all', 'none', 'same_key' (fast paths) or 'general'."""
        return self._strategy.mode

    @property
    def key_function(self) -> Callable[[Any], Any]:
        """The key of an item under same_key dependence (for the Spark job)."""
        if not isinstance(self._strategy, SameKeyStrategy):
            raise DiffError(f"dependence: {describe_dependence(self.dependence)} has no key")
        return self._strategy.key_of

    @property
    def canon_function(self) -> Callable[[Any], Any] | None:
        """What structural equality compares (None: the item itself)."""
        return self._canon

    # -- feeding --

    def push(self, side: int | str, item: Any) -> Difference | None:
        """Feed one item of `side` (0/'left' or 1/'right'); returns the difference if this item shows one."""
        self.feed(((side_index(side), item),))
        return self.tally.difference

    def feed(self, events: Iterable[tuple[int, Any]]) -> Difference | None:
        """Feed `(side, item)` pairs of the connected stream (side 0 = left, 1 = right)."""
        events = iter(events)
        if self.tally.difference is None:
            try:
                self._strategy.run(events)
            except _PASS_THROUGH:
                raise
            except Exception as err:
                raise DiffError(self._bad_item(err)) from None
        if self.tally.difference is not None:
            self._drain(events)
        return self.tally.difference

    def _bad_item(self, cause: Exception) -> str:
        """One line naming the item the loop was handling and what is wrong with it."""
        side, index, item = self.tally.last
        if isinstance(cause, MissingField):
            problem = f"no field {one_line(repr(cause.path), 60)}"
        elif isinstance(self.dependence, SameKeyDependence) and self.mode == "same_key" \
                and isinstance(cause, (KeyError, TypeError, IndexError)):
            problem = f"no field {one_line(repr('.'.join(self.dependence.fields)), 60)}"
        elif isinstance(cause, (ExprEvalError, NotAString)):
            problem = str(cause)
        else:
            problem = f"cannot use this item ({type(cause).__name__}: {one_line(str(cause), 120)})"
        return f"{SIDE_NAMES[side]} item {index}: {problem} in {short_json(item, 80)}"

    def _drain(self, events: Iterator[tuple[int, Any]]) -> None:
        """Count the items after the first difference without matching them."""
        tally = self.tally
        for side, _ in events:
            tally.counts[side] += 1
            tally.position += 1

    # -- results --

    def unmatched_items(self) -> tuple[list[StreamItem], list[StreamItem]]:
        """The unmatched items of each side, in stream order."""
        sides = self._strategy.unmatched()
        left, right = (
            [StreamItem(side=SIDE_NAMES[s], index=e[1], position=e[0], item=e[2]) for e in sides[s]]
            for s in (LEFT, RIGHT))
        return left, right

    def finish(self) -> DiffResult:
        """The verdict after both streams ended."""
        left, right = self.unmatched_items()
        difference = self.tally.difference
        detected: int | str | None
        if difference is not None:
            equivalent, detected = False, difference.position
        elif left or right:
            equivalent, detected = False, "end"
        else:
            equivalent, detected = True, None
        return DiffResult(
            equivalent=equivalent, detected_at=detected, first_difference=difference,
            unmatched_left=left, unmatched_right=right,
            unmatched_left_count=len(left), unmatched_right_count=len(right),
            left_count=self.tally.counts[LEFT], right_count=self.tally.counts[RIGHT], matched=self.tally.matched,
            peak_unmatched=self.tally.peak, dependence=describe_dependence(self.dependence),
            equality=describe_equality(self.equality), stopped_early=difference is not None)


def diff_streams(left: Iterable[Any], right: Iterable[Any], dependence: Any = "all", equality: Any = None,
                 order: str = "alternate") -> DiffResult:
    """Compare two streams (connected by `order`) and return the verdict."""
    matcher = Matcher(dependence, equality)
    matcher.feed(interleave(left, right, order))
    return matcher.finish()


def diff_connected(events: Iterable[tuple[Any, Any]], dependence: Any = "all", equality: Any = None) -> DiffResult:
    """Compare a connected stream of `(side, item)` pairs (side 'left'/'right', 'L'/'R' or 0/1)."""
    matcher = Matcher(dependence, equality)
    matcher.feed((side_index(side), item) for side, item in events)
    return matcher.finish()

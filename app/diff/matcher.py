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

Dependence kinds (as data): `all` (sequences), `none` (multisets), `same_key`
(fields), `pairs`, `type_table`, `predicate` (an expression over `x` and `y`,
see :mod:`app.expr.parser`). `all`, `none` and `same_key` have fast paths with a
deque per key. Equality: structural (optionally ignoring or keeping named
fields), `set_of_split`, or a predicate expression. No Qt, no Spark here; the
Spark job for large `same_key` inputs lives in :mod:`app.spark.diff_job`.
"""

from __future__ import annotations

import json
import operator
import os
from collections import deque
from pathlib import Path
from typing import Annotated, Any, Callable, Iterable, Iterator, Literal, Sequence, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from app.core.topology import TopologyError
from app.expr.parser import ExprError, ExprEvalError, compile_predicate

LEFT = 0
RIGHT = 1
SIDE_NAMES = ("left", "right")


class DiffError(ValueError):
    """Bad dependence/equality spec or bad input; the message names the field or item."""


# ---- specs (data) ---------------------------------------------------------------

class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    description: str | None = None


class AllDependence(_Spec):
    """Every pair of items is dependent: the streams must be equal as sequences."""

    kind: Literal["all"] = "all"


class NoneDependence(_Spec):
    """No pair is dependent: the streams must be equal as multisets."""

    kind: Literal["none"] = "none"


class SameKeyDependence(_Spec):
    """Items are dependent iff they agree on the key fields (per-key order is kept)."""

    kind: Literal["same_key"] = "same_key"
    fields: list[str] = Field(default_factory=list, description="field paths forming the key, e.g. ['taxiId']")
    key: str | None = Field(default=None, description="shorthand for a single key field")

    @model_validator(mode="after")
    def _one_key(self) -> "SameKeyDependence":
        if self.key is not None:
            if self.fields and self.fields != [self.key]:
                raise ValueError("give either `key` or `fields`, not both")
            self.fields = [self.key]
        if not self.fields:
            raise ValueError("same_key needs at least one key field (`key` or `fields`)")
        return self


class PairsDependence(_Spec):
    """Dependent iff the (symmetric) pair of values is listed; values are the item or its `field`."""

    kind: Literal["pairs"] = "pairs"
    pairs: list[tuple[Any, Any]]
    field: str | None = None


class TypeTableDependence(_Spec):
    """A table over the value of `field`: list the `independent` pairs (rest dependent) or the `dependent` ones."""

    kind: Literal["type_table"] = "type_table"
    field: str | None = "type"
    independent: list[tuple[Any, Any]] | None = None
    dependent: list[tuple[Any, Any]] | None = None

    @model_validator(mode="after")
    def _one_table(self) -> "TypeTableDependence":
        if (self.independent is None) == (self.dependent is None):
            raise ValueError("give exactly one of `independent` or `dependent`")
        return self


class PredicateDependence(_Spec):
    """Dependent iff the expression over `x` and `y` is true (made symmetric: p(x,y) or p(y,x))."""

    kind: Literal["predicate"] = "predicate"
    expr: str

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = dict(data)
            for alias in ("python", "expression"):
                if alias in data and "expr" not in data:
                    data["expr"] = data.pop(alias)
        return data


Dependence = Union[AllDependence, NoneDependence, SameKeyDependence, PairsDependence,
                   TypeTableDependence, PredicateDependence]


class StructuralEquality(_Spec):
    """Equal iff equal as JSON values, after dropping `ignore` fields or keeping only `only` fields."""

    kind: Literal["structural"] = "structural"
    ignore: list[str] = Field(default_factory=list)
    only: list[str] | None = None


class SetOfSplitEquality(_Spec):
    """Equal iff the sets of `sep`-separated parts of the strings (or of `field`) are equal."""

    kind: Literal["set_of_split"] = "set_of_split"
    sep: str = Field(min_length=1)
    field: str | None = None


class PredicateEquality(_Spec):
    """Equal iff the expression over `x` and `y` is true (slow path: no hashing)."""

    kind: Literal["predicate"] = "predicate"
    expr: str

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        if isinstance(data, dict) and "python" in data and "expr" not in data:
            data = dict(data)
            data["expr"] = data.pop("python")
        return data


Equality = Union[StructuralEquality, SetOfSplitEquality, PredicateEquality]

_DEPENDENCE_ADAPTER: TypeAdapter[Any] = TypeAdapter(Annotated[Dependence, Field(discriminator="kind")])
_EQUALITY_ADAPTER: TypeAdapter[Any] = TypeAdapter(Annotated[Equality, Field(discriminator="kind")])
_DEPENDENCE_KINDS = ("all", "none", "same_key", "pairs", "type_table", "predicate")
_EQUALITY_KINDS = ("structural", "set_of_split", "predicate")


def _validation_message(what: str, err: ValidationError, kind: Any = None) -> str:
    first = err.errors()[0]
    parts = list(first["loc"])
    if parts and parts[0] == kind:  # the discriminator's tag
        parts = parts[1:]
    loc = ".".join(str(p) for p in parts)
    return f"{what}{'.' + loc if loc else ''}: {first['msg']}"


def _spec_data(spec: Any, what: str) -> Any:
    if isinstance(spec, str):
        text = spec.strip()
        if text.startswith("@"):
            try:
                text = Path(text[1:]).read_text(encoding="utf-8")
            except OSError as err:
                raise DiffError(f"{what}: cannot read {text[1:]}: {err.strerror}") from None
            text = text.strip()
        if text.startswith("{"):
            try:
                return json.loads(text)
            except json.JSONDecodeError as err:
                raise DiffError(f"{what}: invalid JSON at column {err.colno}: {err.msg}") from None
        return text
    return spec


def parse_dependence(spec: Any) -> Dependence:
    """A dependence from JSON (dict or text), `@file.json`, or a short form.

    Short forms: `all`, `none`, `same_key:FIELD[,FIELD...]`, `type_table:FIELD`
    is not enough (needs a table, use JSON), `pairs:a-b,c-b`, `predicate:EXPR`.
    """
    if isinstance(spec, (AllDependence, NoneDependence, SameKeyDependence, PairsDependence,
                         TypeTableDependence, PredicateDependence)):
        return spec
    data = _spec_data(spec, "dependence")
    if isinstance(data, str):
        kind, _, rest = data.partition(":")
        kind, rest = kind.strip(), rest.strip()
        if kind in ("all", "none") and not rest:
            data = {"kind": kind}
        elif kind == "same_key":
            data = {"kind": kind, "fields": [f.strip() for f in rest.split(",") if f.strip()]}
        elif kind == "predicate":
            data = {"kind": kind, "expr": rest}
        elif kind == "pairs":
            pairs = []
            for part in filter(None, (p.strip() for p in rest.split(","))):
                a, sep, b = part.partition("-")
                if not sep or not a or not b:
                    raise DiffError(f"dependence.pairs: {part!r} is not of the form a-b")
                pairs.append((a, b))
            data = {"kind": kind, "pairs": pairs}
        else:
            raise DiffError(f"dependence: unknown short form {data!r} (use all, none, same_key:FIELD, "
                            "pairs:a-b,c-d, predicate:EXPR, or JSON)")
    if not isinstance(data, dict):
        raise DiffError("dependence: expected a JSON object with a `kind`")
    if data.get("kind") not in _DEPENDENCE_KINDS:
        raise DiffError(f"dependence.kind: {data.get('kind')!r} is not one of {', '.join(_DEPENDENCE_KINDS)}")
    try:
        dep = _DEPENDENCE_ADAPTER.validate_python(data)
    except ValidationError as err:
        raise DiffError(_validation_message("dependence", err, data.get("kind"))) from None
    if isinstance(dep, PredicateDependence):
        _check_expr(dep.expr, "dependence.expr")
    return dep


def parse_equality(spec: Any) -> Equality:
    """An equality from JSON, `@file.json` or a short form: `structural`, `ignore:F1,F2`,
    `only:F1,F2`, `set_of_split:SEP`, `predicate:EXPR`. None means structural."""
    if spec is None:
        return StructuralEquality()
    if isinstance(spec, (StructuralEquality, SetOfSplitEquality, PredicateEquality)):
        return spec
    data = _spec_data(spec, "equality")
    if isinstance(data, str):
        kind, _, rest = data.partition(":")
        kind = kind.strip()
        fields = [f.strip() for f in rest.split(",") if f.strip()]
        if kind == "structural" and not rest:
            data = {"kind": "structural"}
        elif kind == "ignore":
            data = {"kind": "structural", "ignore": fields}
        elif kind == "only":
            data = {"kind": "structural", "only": fields}
        elif kind == "set_of_split":
            data = {"kind": kind, "sep": rest}
        elif kind == "predicate":
            data = {"kind": kind, "expr": rest.strip()}
        else:
            raise DiffError(f"equality: unknown short form {data!r} (use structural, ignore:F,..., "
                            "only:F,..., set_of_split:SEP, predicate:EXPR, or JSON)")
    if not isinstance(data, dict):
        raise DiffError("equality: expected a JSON object with a `kind`")
    if data.get("kind") not in _EQUALITY_KINDS:
        raise DiffError(f"equality.kind: {data.get('kind')!r} is not one of {', '.join(_EQUALITY_KINDS)}")
    try:
        eq = _EQUALITY_ADAPTER.validate_python(data)
    except ValidationError as err:
        raise DiffError(_validation_message("equality", err, data.get("kind"))) from None
    if isinstance(eq, PredicateEquality):
        _check_expr(eq.expr, "equality.expr")
    return eq


def _check_expr(source: str, where: str) -> None:
    try:
        compile_predicate(source)
    except ExprError as err:
        raise DiffError(f"{where}: {err}") from None


# ---- values: field paths, hashing ------------------------------------------------

class _MissingField(Exception):
    def __init__(self, path: str):
        self.path = path


class _NotAString(ValueError):
    """set_of_split equality met a value that is not a string."""


_PASS_THROUGH = (DiffError, TopologyError)


class _BadItem(Exception):
    """Internal: an item could not be read; args are (side, index, item, cause)."""


def field_getter(path: str) -> Callable[[Any], Any]:
    """A function reading a dotted field path (`a.b`, `pos.0`) of a JSON value; raises _MissingField."""
    parts: list[str | int] = [int(p) if p.lstrip("-").isdigit() else p for p in path.split(".")]
    if len(parts) == 1 and isinstance(parts[0], str):
        name = parts[0]

        def get1(item: Any) -> Any:
            try:
                return item[name]
            except (KeyError, TypeError, IndexError):
                raise _MissingField(path) from None
        return get1

    def get(item: Any) -> Any:
        value = item
        for part in parts:
            try:
                value = value[part] if not (isinstance(value, dict) and isinstance(part, int)) else value[str(part)]
            except (KeyError, TypeError, IndexError):
                raise _MissingField(path) from None
        return value
    return get


def _item_getter(name: str) -> Callable[[Any], Any]:
    """operator.itemgetter (C speed) for a top-level field; a missing field becomes _MissingField."""
    return operator.itemgetter(name)


def freeze(value: Any) -> Any:
    """A hashable form of a JSON value with the same equality (lists -> tuples, objects -> frozen items)."""
    kind = type(value)
    if kind is dict:
        try:
            return (_DICT_TAG, frozenset(value.items()))
        except TypeError:  # a nested list or object
            return (_DICT_TAG, frozenset((k, freeze(v)) for k, v in value.items()))
    if kind is list or kind is tuple:
        return tuple(freeze(v) for v in value)
    return value


_DICT_TAG = "\0dict"  # with a frozenset beside it, no JSON value freezes to the same tuple


def _short(item: Any, limit: int = 120) -> str:
    text = json.dumps(item, default=str, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit - 3] + "..."


# ---- results ---------------------------------------------------------------------------

class StreamItem(BaseModel):
    """An item of one side with its 1-based index in that side and in the connected stream."""

    side: Literal["left", "right"]
    index: int
    position: int | None = None
    item: Any


class Difference(BaseModel):
    """The first certain difference: `item` arrived at `position` and conflicts with `other`."""

    position: int
    item: StreamItem
    other: StreamItem | None
    reason: str


class DiffResult(BaseModel):
    """Verdict of a comparison plus the evidence: first difference and unmatched items."""

    equivalent: bool
    detected_at: int | Literal["end"] | None = Field(
        description="1-based position in the connected stream where non-equivalence became certain, "
                    "'end' if only the leftovers at the end show it, None when equivalent")
    first_difference: Difference | None = None
    unmatched_left: list[StreamItem] = Field(default_factory=list)
    unmatched_right: list[StreamItem] = Field(default_factory=list)
    unmatched_left_count: int = Field(0, description="all unmatched left items (the list may be cut short)")
    unmatched_right_count: int = 0
    left_count: int = 0
    right_count: int = 0
    matched: int = 0
    peak_unmatched: int | None = Field(0, description="most items held at once (None: not measured, Spark)")
    engine: Literal["local", "spark"] = "local"
    dependence: str = ""
    equality: str = ""
    stopped_early: bool = Field(False, description="input after the first difference was not matched")

    def summary(self) -> str:
        """One or a few human lines: the verdict and the first difference."""
        peak = "" if self.peak_unmatched is None else f", peak unmatched {self.peak_unmatched}"
        head = (f"{self.left_count} left / {self.right_count} right items, {self.matched} matched{peak} "
                f"(dependence {self.dependence}, equality {self.equality})")
        if self.equivalent:
            return f"equivalent: {head}"
        lines = [f"NOT equivalent: {head}"]
        if self.first_difference is not None:
            d = self.first_difference
            lines.append(f"first difference at position {d.position}: {d.reason}")
            lines.append(f"  {d.item.side} #{d.item.index}: {_short(d.item.item)}")
            if d.other is not None:
                lines.append(f"  {d.other.side} #{d.other.index}: {_short(d.other.item)}")
        else:
            lines.append("no order conflict; the streams differ by the unmatched items below")
        return "\n".join(lines)


def describe_dependence(dep: Dependence) -> str:
    """A short text form of a dependence (for reports)."""
    if isinstance(dep, SameKeyDependence):
        return "same_key:" + ",".join(dep.fields)
    if isinstance(dep, PredicateDependence):
        return "predicate:" + dep.expr
    if isinstance(dep, PairsDependence):
        return "pairs:" + ",".join(f"{a}-{b}" for a, b in dep.pairs)
    if isinstance(dep, TypeTableDependence):
        return f"type_table:{dep.field}"
    return dep.kind


def describe_equality(eq: Equality) -> str:
    """A short text form of an equality (for reports)."""
    if isinstance(eq, StructuralEquality):
        if eq.only is not None:
            return "only:" + ",".join(eq.only)
        return "ignore:" + ",".join(eq.ignore) if eq.ignore else "structural"
    if isinstance(eq, SetOfSplitEquality):
        return f"set_of_split:{eq.sep}"
    return "predicate:" + eq.expr


# ---- the matcher ---------------------------------------------------------------------

_Entry = tuple  # (position in the connected stream, index in its side, item)


class Matcher:
    """The online DiffStream matcher; feed items with `push` or `feed`, then call `finish`.

    It stops at the first certain difference (like DiffStream, which throws):
    later items are counted but not matched, and `finish` reports the unmatched
    items as they were at that moment.
    """

    def __init__(self, dependence: Any = "all", equality: Any = None):
        self.dependence = parse_dependence(dependence)
        self.equality = parse_equality(equality)
        self.counts = [0, 0]
        self.position = 0
        self.matched = 0
        self.unmatched = 0
        self.peak_unmatched = 0
        self.difference: Difference | None = None
        self._canon, self._hashable_canon, self._eq_fn = self._build_equality(self.equality)
        dep = self.dependence
        if isinstance(dep, AllDependence) and self._eq_fn is None:
            self._mode = "all"
            self._queue: deque[_Entry] = deque()
            self._queue_side = LEFT
        elif isinstance(dep, NoneDependence) and self._eq_fn is None:
            self._mode = "none"
            self._bags: dict[Any, list[Any]] = {}
        elif isinstance(dep, SameKeyDependence) and self._eq_fn is None:
            self._mode = "same_key"
            self._keys: dict[Any, list[Any]] = {}
            getters = [field_getter(f) for f in dep.fields]
            if len(dep.fields) == 1 and "." not in dep.fields[0]:
                self._key_of = _item_getter(dep.fields[0])
            elif len(getters) == 1:
                self._key_of = getters[0]
            else:
                self._key_of = lambda item: tuple(g(item) for g in getters)
        else:
            self._mode = "general"
            self._pending: list[list[_Entry]] = [[], []]
            self._class_of, self._dep_fn = self._build_dependence(dep)

    # -- construction helpers --

    @staticmethod
    def _build_equality(eq: Equality) -> tuple[Callable[[Any], Any] | None, Callable[[Any], Any],
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
                    raise _NotAString(f"set_of_split compares strings, got {type(value).__name__}")
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

    @staticmethod
    def _build_dependence(dep: Dependence) -> tuple[Callable[[Any], Any], Callable[[Any, Any], bool]]:
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

    # -- feeding --

    @property
    def mode(self) -> str:
        """Which loop runs: 'all', 'none', 'same_key' (fast paths) or 'general'."""
        return self._mode

    @property
    def key_function(self) -> Callable[[Any], Any]:
        """The key of an item under same_key dependence (for the Spark job)."""
        if self._mode != "same_key":
            raise DiffError(f"dependence: {describe_dependence(self.dependence)} has no key")
        return self._key_of

    @property
    def canon_function(self) -> Callable[[Any], Any] | None:
        """What structural equality compares (None: the item itself)."""
        return self._canon

    @property
    def stopped(self) -> bool:
        """True once a certain difference has been found."""
        return self.difference is not None

    def push(self, side: int | str, item: Any) -> Difference | None:
        """Feed one item of `side` (0/'left' or 1/'right'); returns the difference if this item shows one."""
        s = _side_index(side)
        self.feed(((s, item),))
        return self.difference

    def feed(self, events: Iterable[tuple[int, Any]]) -> Difference | None:
        """Feed `(side, item)` pairs of the connected stream (side 0 = left, 1 = right)."""
        events = iter(events)
        if self.difference is not None:
            self._drain(events)
            return self.difference
        try:
            getattr(self, "_feed_" + self._mode)(events)
        except _BadItem as bad:
            side, index, item, cause = bad.args
            if isinstance(cause, _MissingField):
                problem = f"no field {cause.path!r}"
            elif self._mode == "same_key" and isinstance(cause, (KeyError, TypeError, IndexError)):
                problem = f"no field {'.'.join(self.dependence.fields)!r}"  # type: ignore[union-attr]
            elif isinstance(cause, (ExprEvalError, _NotAString)):
                problem = str(cause)
            else:
                problem = f"cannot use this item ({type(cause).__name__}: {cause})"
            raise DiffError(f"{SIDE_NAMES[side]} item {index}: {problem} in {_short(item, 80)}") from None
        return self.difference

    def feed_sides(self, left: Iterable[Any], right: Iterable[Any], order: str = "alternate") -> Difference | None:
        """Feed two streams connected by `order`: 'alternate' (L R L R ..., then the rest) or 'left-first'."""
        return self.feed(interleave(left, right, order))

    def _fail(self, side: int, position: int, index: int, item: Any,
              other_side: int, other: tuple[int, int, Any], reason: str) -> None:
        self.difference = Difference(
            position=position,
            item=StreamItem(side=SIDE_NAMES[side], index=index, position=position, item=item),
            other=StreamItem(side=SIDE_NAMES[other_side], index=other[1], position=other[0], item=other[2]),
            reason=reason)

    def _drain(self, events: Iterator[tuple[int, Any]]) -> None:
        """Count the items after the first difference without matching them."""
        counts = self.counts
        for side, _ in events:
            counts[side] += 1
            self.position += 1

    # Each loop keeps its state in locals (CPython is much faster with locals) and
    # writes it back in `finally`. Stored entries are (position, index in side, item);
    # the side of a queue is kept beside it. A per-side index costs a branch, not a
    # list store. Errors on one item are re-raised as _BadItem with the item's place.

    def _feed_all(self, events: Iterator[tuple[int, Any]]) -> None:
        queue, queue_side = self._queue, self._queue_side
        canon = self._canon
        position, n_left, n_right = self.position, self.counts[LEFT], self.counts[RIGHT]
        matched, unmatched, peak = self.matched, self.unmatched, self.peak_unmatched
        side, index, item = LEFT, 0, None
        try:
            for side, item in events:
                position += 1
                if side:
                    n_right += 1
                    index = n_right
                else:
                    n_left += 1
                    index = n_left
                if queue and queue_side != side:
                    front = queue[0]
                    if front[2] == item if canon is None else canon(front[2]) == canon(item):
                        queue.popleft()
                        matched += 1
                        unmatched -= 1
                        continue
                    self._fail(side, position, index, item, queue_side, front,
                               "the items differ, and every pair is dependent (order matters)")
                    break
                if not queue:
                    queue_side = side
                queue.append((position, index, item))
                unmatched += 1
                if unmatched > peak:
                    peak = unmatched
        except _PASS_THROUGH:
            raise  # the input itself is bad (file missing, bad JSON): its own message
        except Exception as err:
            raise _BadItem(side, index, item, err) from err
        finally:
            self._queue_side = queue_side
            self.position, self.counts[LEFT], self.counts[RIGHT] = position, n_left, n_right
            self.matched, self.unmatched, self.peak_unmatched = matched, unmatched, peak
        if self.difference is not None:
            self._drain(events)

    def _feed_same_key(self, events: Iterator[tuple[int, Any]]) -> None:
        keys = self._keys
        key_of = self._key_of
        canon = self._canon
        position, n_left, n_right = self.position, self.counts[LEFT], self.counts[RIGHT]
        matched, unmatched, peak = self.matched, self.unmatched, self.peak_unmatched
        side, index, item = LEFT, 0, None
        try:
            for side, item in events:
                position += 1
                if side:
                    n_right += 1
                    index = n_right
                else:
                    n_left += 1
                    index = n_left
                key = key_of(item)
                try:
                    slot = keys.get(key)
                except TypeError:  # an unhashable key (a JSON list or object)
                    key = freeze(key)
                    slot = keys.get(key)
                if slot is None:
                    keys[key] = [side, deque(((position, index, item),))]
                else:
                    queue = slot[1]
                    if slot[0] != side and queue:
                        front = queue[0]
                        if front[2] == item if canon is None else canon(front[2]) == canon(item):
                            queue.popleft()
                            matched += 1
                            unmatched -= 1
                            continue
                        self._fail(side, position, index, item, slot[0], front,
                                   f"the items differ and have the same key {key!r} (order within a key matters)")
                        break
                    slot[0] = side
                    queue.append((position, index, item))
                unmatched += 1
                if unmatched > peak:
                    peak = unmatched
        except _PASS_THROUGH:
            raise  # the input itself is bad (file missing, bad JSON): its own message
        except Exception as err:
            raise _BadItem(side, index, item, err) from err
        finally:
            self.position, self.counts[LEFT], self.counts[RIGHT] = position, n_left, n_right
            self.matched, self.unmatched, self.peak_unmatched = matched, unmatched, peak
        if self.difference is not None:
            self._drain(events)

    def _feed_none(self, events: Iterator[tuple[int, Any]]) -> None:
        bags = self._bags
        hashable = self._hashable_canon
        position, n_left, n_right = self.position, self.counts[LEFT], self.counts[RIGHT]
        matched, unmatched, peak = self.matched, self.unmatched, self.peak_unmatched
        side, index, item = LEFT, 0, None
        try:
            for side, item in events:
                position += 1
                if side:
                    n_right += 1
                    index = n_right
                else:
                    n_left += 1
                    index = n_left
                value = hashable(item)
                slot = bags.get(value)
                if slot is None:
                    bags[value] = [side, deque(((position, index, item),))]
                else:
                    queue = slot[1]
                    if slot[0] != side and queue:
                        queue.popleft()
                        matched += 1
                        unmatched -= 1
                        if not queue:
                            del bags[value]
                        continue
                    slot[0] = side
                    queue.append((position, index, item))
                unmatched += 1
                if unmatched > peak:
                    peak = unmatched
        except _PASS_THROUGH:
            raise  # the input itself is bad (file missing, bad JSON): its own message
        except Exception as err:
            raise _BadItem(side, index, item, err) from err
        finally:
            self.position, self.counts[LEFT], self.counts[RIGHT] = position, n_left, n_right
            self.matched, self.unmatched, self.peak_unmatched = matched, unmatched, peak

    def _feed_general(self, events: Iterator[tuple[int, Any]]) -> None:
        pending = self._pending
        class_of, dep_fn = self._class_of, self._dep_fn
        canon, eq_fn = self._canon, self._eq_fn
        position, n_left, n_right = self.position, self.counts[LEFT], self.counts[RIGHT]
        matched, unmatched, peak = self.matched, self.unmatched, self.peak_unmatched
        side, index, item = LEFT, 0, None
        try:
            for side, item in events:
                position += 1
                if side:
                    n_right += 1
                    index = n_right
                else:
                    n_left += 1
                    index = n_left
                cls = class_of(item)
                value = item if canon is None else canon(item)
                others = pending[1 - side]
                for i, entry in enumerate(others):
                    if eq_fn(entry[2], item) if eq_fn is not None else entry[4] == value:
                        del others[i]
                        matched += 1
                        unmatched -= 1
                        break
                    if dep_fn(cls, entry[3]):
                        self._fail(side, position, index, item, 1 - side, entry,
                                   "the item is dependent on an earlier unmatched item of the other side "
                                   "that it does not equal")
                        break
                else:
                    pending[side].append((position, index, item, cls, value))
                    unmatched += 1
                    if unmatched > peak:
                        peak = unmatched
                if self.difference is not None:
                    break
        except _PASS_THROUGH:
            raise  # the input itself is bad (file missing, bad JSON): its own message
        except Exception as err:
            raise _BadItem(side, index, item, err) from err
        finally:
            self.position, self.counts[LEFT], self.counts[RIGHT] = position, n_left, n_right
            self.matched, self.unmatched, self.peak_unmatched = matched, unmatched, peak
        if self.difference is not None:
            self._drain(events)

    # -- results --

    def unmatched_items(self) -> tuple[list[StreamItem], list[StreamItem]]:
        """The unmatched items of each side, in stream order."""
        sides: list[list[tuple[int, int, Any]]] = [[], []]
        if self._mode == "all":
            sides[self._queue_side].extend(self._queue)
        elif self._mode in ("same_key", "none"):
            store = self._keys if self._mode == "same_key" else self._bags
            for side, queue in store.values():
                sides[side].extend(queue)
            for entries in sides:
                entries.sort(key=lambda e: e[0])
        else:
            for s in (LEFT, RIGHT):
                sides[s].extend(e[:3] for e in self._pending[s])
        return tuple(  # type: ignore[return-value]
            [StreamItem(side=SIDE_NAMES[s], index=e[1], position=e[0], item=e[2]) for e in sides[s]]
            for s in (LEFT, RIGHT))

    def finish(self) -> DiffResult:
        """The verdict after both streams ended."""
        left, right = self.unmatched_items()
        if self.difference is not None:
            equivalent, detected = False, self.difference.position
        elif left or right:
            equivalent, detected = False, "end"
        else:
            equivalent, detected = True, None
        return DiffResult(
            equivalent=equivalent, detected_at=detected, first_difference=self.difference,
            unmatched_left=left, unmatched_right=right,
            unmatched_left_count=len(left), unmatched_right_count=len(right),
            left_count=self.counts[LEFT], right_count=self.counts[RIGHT], matched=self.matched,
            peak_unmatched=self.peak_unmatched, dependence=describe_dependence(self.dependence),
            equality=describe_equality(self.equality), stopped_early=self.difference is not None)


def _side_index(side: int | str) -> int:
    if side in (0, "left", "L", "l"):
        return LEFT
    if side in (1, "right", "R", "r"):
        return RIGHT
    raise DiffError(f"side: {side!r} is not left/right (L/R)")


def interleave(left: Iterable[Any], right: Iterable[Any], order: str = "alternate") -> Iterator[tuple[int, Any]]:
    """The connected stream of two sides: 'alternate' (L R L R ..., then the rest) or 'left-first'."""
    if order == "left-first":
        for item in left:
            yield LEFT, item
        for item in right:
            yield RIGHT, item
        return
    if order != "alternate":
        raise DiffError(f"order: {order!r} is not 'alternate' or 'left-first'")
    left_it, right_it = iter(left), iter(right)
    for item in left_it:
        yield LEFT, item
        for other in right_it:
            yield RIGHT, other
            break
        else:
            for rest in left_it:
                yield LEFT, rest
            return
    for item in right_it:
        yield RIGHT, item


def from_pattern(left: Sequence[Any], right: Sequence[Any], pattern: str) -> Iterator[tuple[int, Any]]:
    """The connected stream given by a pattern of 'L'/'R' letters (as in the test vectors)."""
    next_item = [0, 0]
    sides = (left, right)
    for pos, letter in enumerate(pattern, 1):
        side = _side_index(letter)
        if next_item[side] >= len(sides[side]):
            raise DiffError(f"interleaving: position {pos} asks for {SIDE_NAMES[side]} item "
                            f"{next_item[side] + 1} but that side has only {len(sides[side])}")
        yield side, sides[side][next_item[side]]
        next_item[side] += 1
    for s in (LEFT, RIGHT):
        if next_item[s] != len(sides[s]):
            raise DiffError(f"interleaving: uses {next_item[s]} of {len(sides[s])} {SIDE_NAMES[s]} items")


def compare(left: Iterable[Any], right: Iterable[Any], dependence: Any = "all", equality: Any = None,
            order: str = "alternate") -> DiffResult:
    """Compare two streams (connected by `order`) and return the verdict."""
    matcher = Matcher(dependence, equality)
    matcher.feed(interleave(left, right, order))
    return matcher.finish()


def compare_connected(events: Iterable[tuple[Any, Any]], dependence: Any = "all", equality: Any = None) -> DiffResult:
    """Compare a connected stream of `(side, item)` pairs (side 'left'/'right', 'L'/'R' or 0/1)."""
    matcher = Matcher(dependence, equality)
    matcher.feed((_side_index(side), item) for side, item in events)
    return matcher.finish()


# ---- reading streams from files --------------------------------------------------------

_EVENT_LOG_FORMATS = ("csv", "parquet", "run-dir", "storm-metrics")


def read_stream(path: str | os.PathLike[str]) -> Iterator[Any]:
    """Items of one stream file: JSON Lines (one item per line), a JSON array (or an object with an
    `items`/`events`/`output` array), or an event log of :mod:`app.measure.eventlog` (CSV, Parquet, run folder)."""
    p = Path(path)
    if not p.exists():
        raise DiffError(f"{p}: no such file or folder")
    if p.is_dir() or p.suffix.lower() in (".csv", ".parquet", ".log"):
        yield from _read_event_log(p)
        return
    with p.open("r", encoding="utf-8") as handle:
        head = ""
        while True:
            ch = handle.read(1)
            if not ch or not ch.isspace():
                head = ch
                break
        handle.seek(0)
        if head in ("[", "{") and not _looks_like_lines(p):
            try:
                data = json.load(handle)
            except json.JSONDecodeError as err:
                raise DiffError(f"{p}: invalid JSON at line {err.lineno} column {err.colno}: {err.msg}") from None
            if isinstance(data, dict):
                for name in ("items", "events", "output"):
                    if isinstance(data.get(name), list):
                        data = data[name]
                        break
                else:
                    raise DiffError(f"{p}: a JSON object needs an `items`, `events` or `output` array")
            if not isinstance(data, list):
                raise DiffError(f"{p}: expected a JSON array of items")
            yield from data
            return
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError as err:
                raise DiffError(f"{p}: line {number}: invalid JSON at column {err.colno}: {err.msg}") from None


def _looks_like_lines(p: Path) -> bool:
    """True for JSON Lines: by name, or when the first line is a complete JSON value and more follow."""
    if p.suffix.lower() in (".jsonl", ".ndjson"):
        return True
    if p.suffix.lower() == ".json":
        return False
    with p.open("r", encoding="utf-8") as handle:
        first = handle.readline()
        second = handle.readline()
    if not second.strip():
        return False
    try:
        json.loads(first)
    except json.JSONDecodeError:
        return False
    return True


def _read_event_log(p: Path) -> Iterator[Any]:
    try:
        from app.measure import eventlog
    except ImportError:  # the measured-runs module is not there
        raise DiffError(f"{p}: reading event logs needs app.measure.eventlog") from None
    log = eventlog.read_log(p)
    if not log.events:
        raise DiffError(f"{p}: no events in this log (only queue or metric samples); nothing to compare")
    for event in log.events:  # the reader sorts events by time
        yield event.model_dump(exclude_none=True)


def read_connected(path: str | os.PathLike[str]) -> Iterator[tuple[int, Any]]:
    """A connected stream file: items `{"side": "left"|"right"|"L"|"R", "item": ...}` (JSON Lines or array)."""
    for number, record in enumerate(read_stream(path), 1):
        if not isinstance(record, dict) or "side" not in record or "item" not in record:
            raise DiffError(f"{path}: record {number}: expected an object with `side` and `item`")
        try:
            side = _side_index(record["side"])
        except DiffError:
            raise DiffError(f"{path}: record {number}.side: {record['side']!r} is not left/right (L/R)") from None
        yield side, record["item"]

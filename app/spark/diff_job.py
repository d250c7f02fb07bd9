"""DiffStream for large `same_key` inputs on Spark: partition by key, match each key independently.

Under `same_key` dependence, items with different keys commute and items with
the same key keep their order, so two streams are equivalent iff, key by key,
the two subsequences are equal as sequences. The job reads two JSON Lines
files, groups by key, finds per key the first index where the sides differ and
turns it into the position of the connected stream where the online matcher
would have noticed it (the later of the two items; streams connected
'alternate' or 'left-first', as in :func:`app.diff.interleave`). The
result is the same :class:`DiffResult` as the local matcher's, except that the
peak number of unmatched items is not measured. No Qt here; pyspark is
imported by the caller's session only.

The limits in force (`--limit`, :func:`app.expr.limits.set_limits`) travel with the
job: the functions that run in Spark's Python workers put them in force first, so
that an item nested past `json_depth` is refused there as the local reader refuses it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from app.core.formats.limits import JsonLimitError, on_one_line
from app.diff import (
    SIDE_NAMES,
    Difference,
    DiffError,
    DiffResult,
    Matcher,
    StreamItem,
    describe_dependence,
    describe_equality,
    freeze,
)
from app.expr.limits import decoder, overrides, set_limits

_ERROR = "\0error"


def _connected_position(side: int, index: int, n_left: int, n_right: int, order: str) -> int:
    """1-based position in the connected stream of the `index`-th (1-based) item of `side`."""
    if order == "left-first":
        return index if side == 0 else n_left + index
    if side == 0:  # L1 R1 L2 R2 ...: i-1 lefts and up to i-1 rights come first
        return index + min(index - 1, n_right)
    return index + min(index, n_left)


def _parser(side: int, key_of: Callable[[Any], Any]) -> Callable[[tuple[str, int]], tuple[Any, tuple[Any, ...]]]:
    """The line parser; make it where the limits are in force (a worker, inside :func:`_in_workers`)."""
    decode = decoder(strict_numbers=False)  # the one bounded decoder, as the local reader uses it

    def parse(pair: tuple[str, int]) -> tuple[Any, tuple[Any, ...]]:
        line, zero_index = pair
        index = zero_index + 1
        try:
            item = decode(line)
        except JsonLimitError as err:
            return _ERROR, (side, index, f"line {index}: {on_one_line(str(err))}")
        except ValueError as err:
            return _ERROR, (side, index, f"line {index}: invalid JSON ({err})")
        try:
            key = freeze(key_of(item))
        except (KeyError, TypeError, IndexError, ValueError):
            return _ERROR, (side, index, f"item {index}: no key field in {line.strip()[:80]}")
        return key, (side, index, item)
    return parse


def _in_workers(limits: Mapping[str, int],
                make_each: Callable[[], Callable[[Any], Any]]) -> Callable[[Iterable[Any]], Iterator[Any]]:
    """`make_each()` over a partition, with the driver's `limits` in force first: a Spark Python worker
    is another process (reused from task to task), which otherwise knows only the defaults. The
    function is made once per partition, after the limits are set, so it may read them once."""
    settings = dict(limits)

    def run(rows: Iterable[Any]) -> Iterator[Any]:
        set_limits(settings)  # every time: an empty dict restores the defaults a previous task changed
        each = make_each()
        for row in rows:
            yield each(row)
    return run


def _per_key(canon: Callable[[Any], Any] | None) -> Callable[[Iterable[tuple[Any, ...]]], tuple[Any, ...]]:
    """Per key: both sides in order and the first index where they differ (None if one is a prefix)."""
    def match(values: Iterable[tuple[Any, ...]]) -> tuple[Any, ...]:
        left = sorted((v for v in values if v[0] == 0), key=lambda v: v[1])
        right = sorted((v for v in values if v[0] == 1), key=lambda v: v[1])
        mismatch = None
        for i in range(min(len(left), len(right))):
            a, b = left[i][2], right[i][2]
            if not (a == b if canon is None else canon(a) == canon(b)):
                mismatch = i
                break
        return left, right, mismatch
    return match


def _detection(kv: tuple[Any, ...], n_left: int, n_right: int, order: str) -> list[tuple[Any, ...]]:
    """[(position, key, left entry, right entry, left position, right position)] of a key's first difference."""
    left, right, m = kv[1]
    if m is None:
        return []
    l_pos = _connected_position(0, left[m][1], n_left, n_right, order)
    r_pos = _connected_position(1, right[m][1], n_left, n_right, order)
    return [(max(l_pos, r_pos), kv[0], left[m], right[m], l_pos, r_pos)]


def _leftovers(kv: tuple[Any, ...], cut: int | None, n_left: int, n_right: int, order: str) -> list[tuple[Any, ...]]:
    """(side, connected position, index, item) of a key's items still unmatched just before `cut`
    (the first difference) or at the end; the online matcher holds exactly these."""
    left, right, m = kv[1]
    out = []
    for side, mine, theirs in ((0, left, right), (1, right, left)):
        for i, (s, index, item) in enumerate(mine):
            pos = _connected_position(s, index, n_left, n_right, order)
            if cut is not None and pos >= cut:
                break
            if ((m is not None and i >= m) or i >= len(theirs)
                    or (cut is not None
                        and _connected_position(1 - side, theirs[i][1], n_left, n_right, order) >= cut)):
                out.append((side, pos, index, item))
    return out


def _summarise(rows: Iterable[tuple[Any, ...]], limit: int) -> tuple[list[int], list[list[tuple[Any, ...]]]]:
    """Counts per side and the `limit` earliest rows per side."""
    counts: list[int] = [0, 0]
    firsts: list[list[tuple[Any, ...]]] = [[], []]
    for row in rows:
        counts[row[0]] += 1
        firsts[row[0]].append(row)
        if len(firsts[row[0]]) > 2 * limit:
            firsts[row[0]] = sorted(firsts[row[0]], key=lambda r: r[1])[:limit]
    return counts, [sorted(f, key=lambda r: r[1])[:limit] for f in firsts]


def _merge(a: tuple[Any, ...], b: tuple[Any, ...], limit: int) -> tuple[Any, ...]:
    counts = [a[0][0] + b[0][0], a[0][1] + b[0][1]]
    return counts, [sorted(a[1][s] + b[1][s], key=lambda r: r[1])[:limit] for s in (0, 1)]


def _result(matcher: Matcher, first: tuple[Any, ...] | None, summary: tuple[Any, ...], n_left: int, n_right: int,
            engine: Literal["local", "spark"]) -> DiffResult:
    """The DiffResult from the first difference (or None) and the summary of leftovers."""
    (count_left, count_right), (rows_left, rows_right) = summary
    cut = first[0] if first else None
    processed = (cut - 1) if cut is not None else n_left + n_right
    difference = None
    if first is not None:
        position, key, left_entry, right_entry, l_pos, r_pos = first
        late, early = (left_entry, right_entry) if l_pos > r_pos else (right_entry, left_entry)
        difference = Difference(
            position=position,
            item=StreamItem(side=SIDE_NAMES[late[0]], index=late[1], position=position, item=late[2]),
            other=StreamItem(side=SIDE_NAMES[early[0]], index=early[1], position=min(l_pos, r_pos),
                             item=early[2]),
            reason=f"the items differ and have the same key {key!r} (order within a key matters)")
        equivalent, detected = False, position
    elif count_left or count_right:
        equivalent, detected = False, "end"
    else:
        equivalent, detected = True, None
    return DiffResult(
        equivalent=equivalent, detected_at=detected, first_difference=difference,
        unmatched_left=[StreamItem(side="left", index=r[2], position=r[1], item=r[3]) for r in rows_left],
        unmatched_right=[StreamItem(side="right", index=r[2], position=r[1], item=r[3]) for r in rows_right],
        unmatched_left_count=count_left, unmatched_right_count=count_right,
        left_count=n_left, right_count=n_right, matched=(processed - count_left - count_right) // 2,
        peak_unmatched=None, dependence=describe_dependence(matcher.dependence),
        equality=describe_equality(matcher.equality), stopped_early=difference is not None,
        engine=engine)


def _same_key_matcher(dependence: Any, equality: Any, order: str) -> Matcher:
    matcher = Matcher(dependence, equality)
    if matcher.mode != "same_key":
        raise DiffError("dependence: the Spark job handles only same_key dependence with a structural "
                        "or set_of_split equality")
    if order not in ("alternate", "left-first"):
        raise DiffError(f"order: {order!r} is not 'alternate' or 'left-first'")
    return matcher


def partitioned_same_key_diff(left: Iterable[Any], right: Iterable[Any], dependence: Any, equality: Any = None,
                              order: str = "alternate", limit: int = 1000) -> DiffResult:
    """The Spark job's computation in plain Python (same functions, grouped with a dict): for tests
    and as the reference of what the job does."""
    matcher = _same_key_matcher(dependence, equality, order)
    groups: dict[Any, list[tuple[Any, ...]]] = {}
    counts = [0, 0]
    for side, items in ((0, left), (1, right)):
        for index, item in enumerate(items, 1):
            counts[side] += 1
            groups.setdefault(freeze(matcher.key_function(item)), []).append((side, index, item))
    per_key = [(key, _per_key(matcher.canon_function)(values)) for key, values in groups.items()]
    found = sorted((d for kv in per_key for d in _detection(kv, counts[0], counts[1], order)), key=lambda d: d[0])
    first = found[0] if found else None
    cut = first[0] if first else None
    summary = _summarise((r for kv in per_key for r in _leftovers(kv, cut, counts[0], counts[1], order)), limit)
    return _result(matcher, first, summary, counts[0], counts[1], "local")


def spark_same_key_diff(spark: Any, left_path: str | Path, right_path: str | Path, dependence: Any,
                        equality: Any = None, order: str = "alternate", limit: int = 1000,
                        limits: Mapping[str, int] | None = None) -> DiffResult:
    """Compare two JSON Lines files under `same_key` dependence with a Spark job (see module doc).

    `limit` caps how many unmatched items of each side are brought back (the counts are exact).
    `limits` are the reader limits for the job (default: those set in this process, `overrides()`;
    the Spark host passes the ones its client sent); they are in force here while the job runs and
    in the Python workers. Four Spark actions: read and count (with the first bad line), first
    difference, leftovers.
    """
    settings = overrides() if limits is None else dict(limits)
    before = overrides()
    set_limits(settings)
    try:
        return _spark_same_key_diff(spark, left_path, right_path, dependence, equality, order, limit, settings)
    finally:
        set_limits(before)


def _spark_same_key_diff(spark: Any, left_path: str | Path, right_path: str | Path, dependence: Any,
                         equality: Any, order: str, limit: int, limits: dict[str, int]) -> DiffResult:
    matcher = _same_key_matcher(dependence, equality, order)
    for path in (left_path, right_path):
        if not Path(path).exists():
            raise DiffError(f"{path}: no such file")
    key_of, canon = matcher.key_function, matcher.canon_function
    sc = spark.sparkContext

    def side_rdd(path: str | Path, side: int) -> Any:
        # minPartitions=1: a small file is one partition, so zipWithIndex needs no extra job
        lines = sc.textFile(str(Path(path).resolve()), minPartitions=1).filter(lambda line: line.strip() != "")
        return lines.zipWithIndex().mapPartitions(_in_workers(limits, lambda: _parser(side, key_of)))

    parsed = side_rdd(left_path, 0).union(side_rdd(right_path, 1)).cache()
    try:
        def count(acc: tuple[Any, ...], kv: tuple[Any, ...]) -> tuple[Any, ...]:
            if kv[0] == _ERROR:
                return acc[0], acc[1], acc[2] or kv[1]
            return (acc[0] + 1, acc[1], acc[2]) if kv[1][0] == 0 else (acc[0], acc[1] + 1, acc[2])

        n_left, n_right, error = parsed.aggregate(
            (0, 0, None), count, lambda a, b: (a[0] + b[0], a[1] + b[1], a[2] or b[2]))
        if error:
            side, _, message = error
            raise DiffError(f"{left_path if side == 0 else right_path}: {message}")
        match = _per_key(canon)
        per_key = parsed.groupByKey().mapPartitions(_in_workers(limits, lambda: lambda kv: (kv[0], match(kv[1]))),
                                                    preservesPartitioning=True).cache()
        found = per_key.flatMap(lambda kv: _detection(kv, n_left, n_right, order)).takeOrdered(
            1, key=lambda d: d[0])
        first = found[0] if found else None
        cut = first[0] if first else None
        summary = per_key.flatMap(lambda kv: _leftovers(kv, cut, n_left, n_right, order)).mapPartitions(
            lambda rows: [_summarise(rows, limit)]).fold(([0, 0], [[], []]), lambda a, b: _merge(a, b, limit))
        per_key.unpersist()
    finally:
        parsed.unpersist()
    return _result(matcher, first, summary, n_left, n_right, "spark")

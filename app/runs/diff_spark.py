"""DiffStream for large `same_key` inputs on Spark: partition by key, match each key independently.

Under `same_key` dependence, items with different keys commute and items with
the same key keep their order, so two streams are equivalent iff, key by key,
the two subsequences are equal as sequences. The job reads two JSON Lines
files, groups by key, finds per key the first index where the sides differ and
turns it into the position of the connected stream where the online matcher
would have noticed it (the later of the two items; streams connected
'alternate' or 'left-first', as in :func:`app.runs.diff.interleave`). The
result is the same :class:`DiffResult` as the local matcher's, except that the
peak number of unmatched items is not measured. No Qt here; pyspark is
imported by the caller's session only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterable

from app.runs.diff import (SIDE_NAMES, DiffError, DiffResult, Difference, Matcher, StreamItem,
                           describe_dependence, describe_equality, freeze)

_ERROR = "\0error"


def _connected_position(side: int, index: int, n_left: int, n_right: int, order: str) -> int:
    """1-based position in the connected stream of the `index`-th (1-based) item of `side`."""
    if order == "left-first":
        return index if side == 0 else n_left + index
    if side == 0:  # L1 R1 L2 R2 ...: i-1 lefts and up to i-1 rights come first
        return index + min(index - 1, n_right)
    return index + min(index, n_left)


def _parser(side: int, key_of: Callable[[Any], Any]) -> Callable[[tuple[str, int]], tuple[Any, tuple]]:
    def parse(pair: tuple[str, int]) -> tuple[Any, tuple]:
        line, zero_index = pair
        index = zero_index + 1
        try:
            item = json.loads(line)
        except ValueError as err:
            return _ERROR, (side, index, f"line {index}: invalid JSON ({err})")
        try:
            key = freeze(key_of(item))
        except (KeyError, TypeError, IndexError, ValueError):
            return _ERROR, (side, index, f"item {index}: no key field in {line.strip()[:80]}")
        return key, (side, index, item)
    return parse


def _per_key(canon: Callable[[Any], Any] | None) -> Callable[[Iterable[tuple]], tuple]:
    def match(values: Iterable[tuple]) -> tuple:
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


def spark_same_key_diff(spark: Any, left_path: str | Path, right_path: str | Path, dependence: Any,
                        equality: Any = None, order: str = "alternate", limit: int = 1000) -> DiffResult:
    """Compare two JSON Lines files under `same_key` dependence with a Spark job (see module doc).

    `limit` caps how many unmatched items of each side are brought back (the counts are exact).
    """
    matcher = Matcher(dependence, equality)
    if matcher.mode != "same_key":
        raise DiffError("dependence: the Spark job handles only same_key dependence with a structural "
                        "or set_of_split equality")
    if order not in ("alternate", "left-first"):
        raise DiffError(f"order: {order!r} is not 'alternate' or 'left-first'")
    for path in (left_path, right_path):
        if not Path(path).exists():
            raise DiffError(f"{path}: no such file")
    key_of, canon = matcher.key_function, matcher.canon_function
    sc = spark.sparkContext

    def side_rdd(path: str | Path, side: int) -> Any:
        lines = sc.textFile(str(Path(path).resolve())).filter(lambda line: line.strip() != "")
        return lines.zipWithIndex().map(_parser(side, key_of))

    parsed = side_rdd(left_path, 0).union(side_rdd(right_path, 1)).cache()
    try:
        errors = parsed.filter(lambda kv: kv[0] == _ERROR).take(1)
        if errors:
            side, _, message = errors[0][1]
            raise DiffError(f"{left_path if side == 0 else right_path}: {message}")
        counts = dict(parsed.map(lambda kv: (kv[1][0], 1)).reduceByKey(lambda a, b: a + b).collect())
        n_left, n_right = counts.get(0, 0), counts.get(1, 0)
        per_key = parsed.groupByKey().mapValues(_per_key(canon)).cache()

        def detection(kv: tuple) -> list[tuple]:
            left, right, m = kv[1]
            if m is None:
                return []
            l_pos = _connected_position(0, left[m][1], n_left, n_right, order)
            r_pos = _connected_position(1, right[m][1], n_left, n_right, order)
            return [(max(l_pos, r_pos), kv[0], left[m], right[m], l_pos, r_pos)]

        found = per_key.flatMap(detection).takeOrdered(1, key=lambda d: d[0])
        first = found[0] if found else None
        cut = first[0] if first else None

        def leftovers(kv: tuple) -> list[tuple[int, int, int, Any]]:
            """(side, connected position, index, item) of items unmatched at the cut (or at the end)."""
            left, right, m = kv[1]
            out = []
            for side, mine, theirs in ((0, left, right), (1, right, left)):
                for i, (s, index, item) in enumerate(mine):
                    pos = _connected_position(s, index, n_left, n_right, order)
                    if cut is not None and pos >= cut:
                        break
                    if m is not None and i >= m or i >= len(theirs):
                        out.append((side, pos, index, item))
                        continue
                    partner = theirs[i]
                    if cut is not None and _connected_position(partner[0], partner[1], n_left, n_right,
                                                               order) >= cut:
                        out.append((side, pos, index, item))
            return out

        rest = per_key.flatMap(leftovers).cache()
        side_counts = dict(rest.map(lambda r: (r[0], 1)).reduceByKey(lambda a, b: a + b).collect())
        unmatched = [
            [StreamItem(side=SIDE_NAMES[s], index=index, position=pos, item=item)
             for s, pos, index, item in rest.filter(lambda r, s=s: r[0] == s).takeOrdered(limit, key=lambda r: r[1])]
            for s in (0, 1)]
        total_unmatched = side_counts.get(0, 0) + side_counts.get(1, 0)
        processed = (cut - 1) if cut is not None else n_left + n_right
        matched = (processed - total_unmatched) // 2
        rest.unpersist()
        per_key.unpersist()
    finally:
        parsed.unpersist()

    difference = None
    if first is not None:
        position, key, left_entry, right_entry, l_pos, r_pos = first
        late, early = (left_entry, right_entry) if l_pos > r_pos else (right_entry, left_entry)
        difference = Difference(
            position=position,
            item=StreamItem(side=SIDE_NAMES[late[0]], index=late[1], position=position, item=late[2]),
            other=StreamItem(side=SIDE_NAMES[early[0]], index=early[1], position=min(l_pos, r_pos), item=early[2]),
            reason=f"the items differ and have the same key {key!r} (order within a key matters)")
    if difference is not None:
        equivalent, detected = False, difference.position
    elif total_unmatched:
        equivalent, detected = False, "end"
    else:
        equivalent, detected = True, None
    return DiffResult(
        equivalent=equivalent, detected_at=detected, first_difference=difference,
        unmatched_left=unmatched[0], unmatched_right=unmatched[1],
        unmatched_left_count=side_counts.get(0, 0), unmatched_right_count=side_counts.get(1, 0),
        left_count=n_left, right_count=n_right, matched=matched, peak_unmatched=None,
        dependence=describe_dependence(matcher.dependence), equality=describe_equality(matcher.equality),
        stopped_early=difference is not None, engine="spark")

"""Long traces drawn per pixel (docs/trace-view.md, "Long traces"): `step_band` and `peaks` give the exact
extremes of each bucket of time, whatever the positions, checked against a brute force."""

from __future__ import annotations

import random

import pytest

from app.core.trace_series import peaks, step_band, visible


def brute_band(steps: list[float], values: list[int], t0: float, t1: float, buckets: int) -> list[tuple[int, int]]:
    lo, hi = max(t0, steps[0]), min(t1, steps[-1])
    width = (hi - lo) / buckets
    out = []
    for b in range(buckets):
        a, e = lo + b * width, (lo + (b + 1) * width) if b < buckets - 1 else hi
        hit = [v for i, v in enumerate(values) if steps[i] < e and steps[i + 1] > a]
        out.append((min(hit), max(hit)))
    return out


@pytest.mark.parametrize("seed", range(30))
def test_bands_are_the_exact_extremes_of_each_bucket(seed: int) -> None:
    rnd = random.Random(seed)
    n = rnd.randrange(1, 300)
    times = sorted({rnd.uniform(0, 100) for _ in range(n)})
    steps = [*times, times[-1] + rnd.uniform(0.1, 5)]
    values = [rnd.randrange(-5, 50) for _ in times]
    t0, t1 = sorted((rnd.uniform(-10, 110), rnd.uniform(-10, 110)))
    buckets = rnd.randrange(1, 60)
    band = step_band(steps, values, t0, t1, buckets)
    if min(t1, steps[-1]) <= max(t0, steps[0]):
        assert band.edges == []
        return
    assert len(band.edges) == buckets + 1 and len(band.low) == len(band.high) == buckets
    got = list(zip(band.low, band.high, strict=True))
    want = brute_band(steps, values, t0, t1, buckets)
    # a step ending within float rounding of a bucket edge may count on either side: compare away from edges
    width = (band.edges[-1] - band.edges[0]) / buckets
    near = {b for b in range(buckets) for s in steps
            if abs(s - band.edges[b]) < 1e-9 * max(1.0, width) or abs(s - band.edges[b + 1]) < 1e-9 * max(1.0, width)}
    assert [g for b, g in enumerate(got) if b not in near] == [w for b, w in enumerate(want) if b not in near]


def test_a_band_of_a_long_swinging_series_fills_from_its_least_to_its_greatest() -> None:
    steps = [i * 0.01 for i in range(20_001)]
    values = [(i % 7) for i in range(20_000)]  # 0..6 within every pixel
    band = step_band(steps, values, 0, 200, 500)
    assert set(band.low) == {0} and set(band.high) == {6}


@pytest.mark.parametrize("seed", range(20))
def test_peaks_keep_the_largest_real_point_of_each_bucket(seed: int) -> None:
    rnd = random.Random(seed)
    times = sorted({rnd.uniform(0, 100) for _ in range(rnd.randrange(0, 200))})
    counts = [rnd.randrange(1, 30) for _ in times]
    buckets = rnd.randrange(1, 40)
    xs, ys = peaks(times, counts, 0, 100, buckets)
    points = set(zip(times, counts, strict=True))
    assert len(xs) <= buckets and all(point in points for point in zip(xs, ys, strict=True))
    for b in range(buckets):
        inside = [c for t, c in zip(times, counts, strict=True) if min(buckets - 1, int(t / (100 / buckets))) == b]
        assert (max(inside) in ys) if inside else True
    assert sum(1 for _ in xs) == len({min(buckets - 1, int(t / (100 / buckets))) for t in times})


def test_visible_keeps_one_position_either_side() -> None:
    times = [0.0, 1.0, 2.0, 3.0, 4.0]
    assert visible(times, 1.5, 2.5) == (1, 4)
    assert visible(times, -5, 50) == (0, 5)
    assert visible(times, 0, 0) == (0, 2)

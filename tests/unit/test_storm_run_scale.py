"""Reading a long Storm recording stays linear: the growth-onset search gives the split the search with one
least-squares fit per split gives (app/measure/storm_figures.py), without its quadratic cost."""

from __future__ import annotations

import random

import pytest

from app.measure.growth import fit_slope
from app.measure.storm_figures import growth_onset


def onset_by_one_fit_per_split(points: list[tuple[float, float]]) -> int | None:
    """The search as it was: two fits (fit_slope) and their squared errors for every split."""
    n = len(points)
    if n < 8:
        return None
    best: tuple[float, int] | None = None
    for k in range(3, n - 3):
        a, b = fit_slope(points[:k + 1]), fit_slope(points[k:])
        if a is None or b is None:
            continue
        sse = sum((y - a.intercept - a.slope * x) ** 2 for x, y in points[:k + 1]) + \
            sum((y - b.intercept - b.slope * x) ** 2 for x, y in points[k:])
        if best is None or sse < best[0]:
            best = (sse, k)
    if best is None:
        return None
    k = best[1]
    a, b = fit_slope(points[:k + 1]), fit_slope(points[k:])
    return k if a is not None and b is not None and b.low > a.high and b.low > 0 else None


@pytest.mark.parametrize("seed", range(40))
def test_growth_onset_is_the_split_of_the_search_with_a_fit_per_split(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.choice([8, 9, 12, 30, 60])
    start, noise, t0 = rng.randrange(2, n), rng.choice([0.0, 0.1, 1.0, 10.0]), rng.choice([0.0, 3600.0, 1.7e9])
    points = [(t0 + 30 * i + (rng.random() if seed % 3 == 0 else 0.0),
               (0.0 if i < start else 5.0 * (i - start)) + rng.gauss(0.0, noise)) for i in range(n)]
    assert growth_onset(points) == onset_by_one_fit_per_split(points)


def test_growth_onset_of_a_flat_series_and_of_repeated_times() -> None:
    assert growth_onset([(float(i), 3.0) for i in range(20)]) is None
    assert growth_onset([(1.0, float(i)) for i in range(20)]) is None  # no spread in time: no line

"""The robust growth test (app.measure.growth) on simulated queues with known answers."""

from __future__ import annotations

import random

import pytest

from app.measure.growth import assess, fit_slope, t_quantile

BINS = 60  # one-second bins, as `analyze` makes them from a 60-s run
SERIES = 500


def ar1(rng: random.Random, phi: float, n: int, sd: float = 1.0) -> list[float]:
    """A stationary AR(1) series (200 steps of burn-in)."""
    value, out = 0.0, []
    for step in range(n + 200):
        value = phi * value + rng.gauss(0.0, sd)
        if step >= 200:
            out.append(value)
    return out


def queue(noise: list[float], level: float = 10.0, slope: float = 0.0) -> list[tuple[float, float]]:
    return [(i + 0.5, level + slope * (i + 0.5) + v) for i, v in enumerate(noise)]


def verdicts(series: list[list[tuple[float, float]]]) -> dict[str, float]:
    counts = {"grows": 0, "stable": 0, "uncertain": 0}
    for pts in series:
        counts[assess(pts, growth_floor=0.05).verdict] += 1
    return {k: v / len(series) for k, v in counts.items()}


@pytest.mark.parametrize("phi", [0.0, 0.5, 0.9])
def test_stable_queues_are_rarely_called_growing(phi: float) -> None:
    rng = random.Random(1000 + int(phi * 10))
    share = verdicts([queue(ar1(rng, phi, BINS)) for _ in range(SERIES)])
    assert share["grows"] <= 0.06, share


def test_plain_least_squares_interval_was_the_problem() -> None:
    """The interval that treats bins as independent excludes zero far too often (what the robust one fixes)."""
    rng = random.Random(7)
    wrong = 0
    for _ in range(200):
        fit = fit_slope(queue(ar1(rng, 0.9, BINS)), lag=0, prewhiten=False)
        wrong += fit.low > 0 or fit.high < 0
    assert wrong / 200 > 0.4


def test_growth_of_005_per_second_is_detected() -> None:
    rng = random.Random(2024)
    share = verdicts([queue(ar1(rng, 0.5, BINS), slope=0.05) for _ in range(SERIES)])
    assert share["grows"] >= 0.80, share


def _warm_up(rng: random.Random, bins: int, rise_s: float, level: float = 8.0) -> list[tuple[float, float]]:
    """A queue filled to its working level over the first `rise_s` seconds, then stable (AR(1), φ = 0.5)."""
    noise = ar1(rng, 0.5, bins, sd=0.7)
    return [(i + 0.5, min(level, level * (i + 0.5) / rise_s) + v) for i, v in enumerate(noise)]


@pytest.mark.parametrize("bins", [60, 90])
def test_a_warm_up_that_settles_is_not_growth(bins: int) -> None:
    rng = random.Random(bins)
    series = [_warm_up(rng, bins, rise) for rise in (4.0, 8.0) for _ in range(100)]
    share = verdicts(series)
    assert share["grows"] <= 0.06, share
    assert share["stable"] >= 0.7, share
    clean = [(i + 0.5, min(20.0, 2.0 * (i + 0.5)) + 0.3 * (-1) ** i) for i in range(bins)]
    found = assess(clean, 0.05)
    assert fit_slope(clean, lag=0, prewhiten=False).low > 0  # what the independent-samples interval said
    assert found.verdict == "stable" and found.warmup and "warm-up" in found.note
    assert found.late.points == bins - 10


def test_a_short_run_with_a_warm_up_says_how_long_a_run_would_tell() -> None:
    rng = random.Random(20)
    for _ in range(50):
        found = assess(_warm_up(rng, 20, 6.0), 0.05)
        assert found.verdict == "uncertain"
        assert found.needed_s is not None and found.needed_s > 20
        assert "too short to tell" in found.note


def test_a_steadily_growing_queue_still_grows_in_a_short_run() -> None:
    """0.5 tuples/s over 20 s: the later half shows the growth on its own most of the time
    (a short run pays for not seeing where a warm-up would end)."""
    rng = random.Random(3)
    found = [assess(queue(ar1(rng, 0.5, 20, sd=0.5), slope=0.5), 0.05) for _ in range(100)]
    assert sum(f.verdict == "grows" for f in found) >= 70
    assert all(f.verdict != "stable" for f in found)


# B3's binned queue in a 20-s run of simple-DIA-cfg-1 (`stormbound run ... --duration 20`):
# B1's bursts of 8 are still filling it to its working level when the run ends.
DIA_B3_20S = [0.0, 0.0, 0.0, 0.75, 3.75, 1.5, 0.0, 0.75, 3.75, 2.25, 0.0, 1.75, 7.0, 6.25, 3.25, 5.25, 7.25, 7.25,
              4.25, 4.25]


def test_the_twenty_second_dia_run_is_too_short_for_b3() -> None:
    pts = [(i + 0.5, q) for i, q in enumerate(DIA_B3_20S)]
    assert fit_slope(pts, lag=0, prewhiten=False).low > 0.15  # what the old interval called "grows"
    found = assess(pts, 0.05)
    assert found.fit.low > 0  # the whole run alone would say "grows" ...
    assert found.verdict == "uncertain" and "warm-up" in found.note  # ... but it may be a warm-up
    assert found.needed_s is not None and found.needed_s >= 30


def test_t_quantile_matches_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    for dof in (1, 2, 3, 4.5, 7, 18, 58, 400):
        for p in (0.6, 0.9, 0.975, 0.995):
            assert t_quantile(p, dof) == pytest.approx(stats.t.ppf(p, dof), abs=1e-9)


def _statsmodels_interval(pts, lag: int):
    sm = pytest.importorskip("statsmodels.api")
    xs = [x for x, _ in pts]
    ys = [y for _, y in pts]
    fit = sm.OLS(ys, sm.add_constant(xs)).fit(cov_type="HAC", cov_kwds={"maxlags": lag, "use_correction": True},
                                               use_t=True)
    low, high = fit.conf_int(alpha=0.05)[1]
    return fit.params[1], low, high


@pytest.mark.parametrize("phi", [0.0, 0.3, 0.6, 0.9])
def test_interval_equals_statsmodels_hac(phi: float) -> None:
    """Newey–West without prewhitening, automatic lag: statsmodels' HAC OLS interval, to 1e-6."""
    rng = random.Random(42 + int(phi * 10))
    for _ in range(5):
        pts = queue(ar1(rng, phi, BINS), slope=rng.uniform(-0.1, 0.1))
        ours = fit_slope(pts, prewhiten=False)
        slope, low, high = _statsmodels_interval(pts, ours.lag)
        assert ours.slope == pytest.approx(slope, abs=1e-9)
        assert abs(ours.low - low) < 1e-6 and abs(ours.high - high) < 1e-6
    if phi >= 0.6:
        assert ours.lag > 0


def test_default_interval_equals_statsmodels_when_nothing_needs_prewhitening() -> None:
    """Residuals without positive autocorrelation: the default interval is statsmodels' HAC interval itself."""
    rng = random.Random(5)
    checked = 0
    for _ in range(40):
        pts = queue(ar1(rng, -0.4, BINS), slope=0.02)
        ours = fit_slope(pts)
        if ours.rho > 0:
            continue
        _, low, high = _statsmodels_interval(pts, ours.lag)
        assert abs(ours.low - low) < 1e-6 and abs(ours.high - high) < 1e-6
        checked += 1
    assert checked >= 20


def test_prewhitened_interval_is_statsmodels_hac_of_the_whitened_score() -> None:
    """With prewhitening: statsmodels' Bartlett HAC sum over the whitened score, recoloured, to 1e-6."""
    np = pytest.importorskip("numpy")
    sw = pytest.importorskip("statsmodels.stats.sandwich_covariance")
    stats = pytest.importorskip("scipy.stats")
    rng = random.Random(9)
    pts = queue(ar1(rng, 0.8, BINS), slope=0.03)
    ours = fit_slope(pts)
    assert ours.rho > 0.5
    x = np.array([p[0] for p in pts])
    y = np.array([p[1] for p in pts])
    xc = x - x.mean()
    slope = (xc @ (y - y.mean())) / (xc @ xc)
    score = xc * (y - y.mean() - slope * xc)
    white = score[1:] - ours.rho * score[:-1]
    omega = float(sw.S_hac_simple(white[:, None], nlags=ours.lag)[0, 0]) / (1 - ours.rho) ** 2
    se = np.sqrt(omega / (xc @ xc) ** 2 * len(x) / (len(x) - 2))
    dof = max(1.0, len(x) * (1 - ours.rho) / (1 + ours.rho) - 2)
    half = stats.t.ppf(0.975, dof) * se
    assert abs(ours.low - (slope - half)) < 1e-6 and abs(ours.high - (slope + half)) < 1e-6

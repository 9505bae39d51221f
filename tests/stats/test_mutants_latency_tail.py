"""Tests that kill mutants mutmut found surviving in bootscope/stats/latency_tail.py
(make mutation): each asserts a value computed by hand or by scipy, not by the code under test."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from bootscope.errors import StatsError
from bootscope.stats.compare import Options
from bootscope.stats.latency_tail import TOO_FEW, compare_run_statistics, gev_fit

# Fast options: no bootstrap interval, no power advice (neither is under test here).
QUICK = Options(bootstrap_resamples=0, power=False)
LOW = [1.0, 2.0, 3.0, 4.0, 5.0]
HIGH = [6.0, 7.0, 8.0, 9.0, 10.0]
# LOW against HIGH: complete separation, exact two-sided Mann-Whitney p = 2 / C(10, 5) = 2 / 252.
P_SEPARATED = 2 / 252
# LOW against [0.5, 6, 7, 8, 9]: U of b = 0 + 5 * 4 = 20; orderings with U >= 20 out of C(10, 5) = 252:
# U = 25, 24, 23, 22, 21, 20 -> 1 + 1 + 2 + 3 + 5 + 7 = 19; two-sided p = 38 / 252.
P_OVERLAPPING = 38 / 252
# Block maxima for the GEV tests (fixed seed), one per block of 10_000 cycles.
MAXIMA = sps.genextreme.rvs(-0.1, loc=50.0, scale=5.0, size=12, random_state=3)
BLOCK = 10_000


def test_run_statistics_keep_unit_names_and_unadjusted_p_for_one_statistic() -> None:
    [result] = compare_run_statistics({"max": LOW}, {"max": HIGH}, QUICK, names=("base", "new"))
    assert result.unit == "us"
    assert result.a.name == "base" and result.b.name == "new"
    # One statistic: nothing to adjust, p_adjusted is the raw exact p and there is no correction text.
    assert result.p_adjusted == pytest.approx(P_SEPARATED, rel=1e-12)
    assert result.correction == ""
    # Five runs a side is enough (MIN_RUNS = 5), and every b run is slower.
    assert result.verdict == "slower"


def test_run_statistics_holm_adjust_two_statistics() -> None:
    base = {"p99.9": LOW, "max": LOW}
    variant = {"p99.9": HIGH, "max": [0.5, 6.0, 7.0, 8.0, 9.0]}
    by_name = {c.metric: c for c in compare_run_statistics(base, variant, QUICK)}
    # Holm, m = 2: smallest 2/252 * 2 = 4/252; next max(4/252, 38/252 * 1) = 38/252.
    assert by_name["p99.9"].p_adjusted == pytest.approx(2 * P_SEPARATED, rel=1e-12)
    assert by_name["max"].p_adjusted == pytest.approx(P_OVERLAPPING, rel=1e-12)
    assert by_name["p99.9"].correction == "Holm over 2 statistics"


def test_run_statistics_use_the_options_given() -> None:
    # All values identical: degenerate (no bootstrap, no power), so this is fast whatever the options.
    flat = [3.0] * 5
    options = Options(alpha=0.2, seed=7, bootstrap_resamples=0, power=False)
    [result] = compare_run_statistics({"max": flat}, {"max": flat}, options)
    assert result.alpha == 0.2 and result.bootstrap_seed == 7
    assert result.verdict == "degenerate" and result.p_adjusted is None


def test_run_statistics_default_options_on_identical_runs() -> None:
    flat = [3.0] * 5
    [result] = compare_run_statistics({"max": flat}, {"max": flat})
    assert result.alpha == 0.05 and result.verdict == "degenerate"


def test_run_statistics_cannot_tell_when_two_sided_floor_is_not_below_alpha() -> None:
    # alpha = 0.005: 5 against 5 runs reach at best two-sided p = 2/252 = 0.0079 >= 0.005 (one-sided
    # 1/252 = 0.0040 would be below it), so the verdict must be "cannot tell", not "no difference".
    options = Options(alpha=0.005, bootstrap_resamples=0, power=False)
    [result] = compare_run_statistics({"max": LOW}, {"max": HIGH}, options)
    assert result.verdict == "cannot tell"


def test_run_statistics_sign_test_p_is_doubled_for_two_sided() -> None:
    # Sign test, margin = resolution 1: median(a) = 12, median(b) = 22, direction "greater";
    # 22 - a_i = 12..8 > 1 for all 5, b_j - 12 = 8..12 > 1 for all 5: P(X >= 5), X ~ Bin(5, 1/2) = 1/32;
    # two-sided: 2/32 = 0.0625.
    options = Options(method="sign", bootstrap_resamples=0, power=False)
    a, b = [10.0, 11.0, 12.0, 13.0, 14.0], [20.0, 21.0, 22.0, 23.0, 24.0]
    [result] = compare_run_statistics({"max": a}, {"max": b}, options)
    assert result.p_adjusted == pytest.approx(2 / 32, rel=1e-12)


def test_run_statistics_degenerate_statistic_is_left_out_of_holm() -> None:
    # The sign test returns p = 1 on identical values; a degenerate statistic must still get no p and
    # not count in Holm's m, so the other statistic keeps its two-sided p 2/32 (m = 1).
    options = Options(method="sign", bootstrap_resamples=0, power=False)
    base = {"p99.9": [3.0] * 5, "max": [10.0, 11.0, 12.0, 13.0, 14.0]}
    variant = {"p99.9": [3.0] * 5, "max": [20.0, 21.0, 22.0, 23.0, 24.0]}
    by_name = {c.metric: c for c in compare_run_statistics(base, variant, options)}
    assert by_name["p99.9"].verdict == "degenerate" and by_name["p99.9"].p_adjusted is None
    assert by_name["max"].p_adjusted == pytest.approx(2 / 32, rel=1e-12)


def test_run_statistics_four_runs_are_too_few() -> None:
    [result] = compare_run_statistics({"max": LOW[:4]}, {"max": HIGH}, QUICK)
    assert result.verdict == TOO_FEW


def test_gev_fit_reports_scipy_parameters_and_return_level() -> None:
    fit = gev_fit(MAXIMA, BLOCK, return_cycles=(10**6,), resamples=2)
    c, loc, scale = sps.genextreme.fit(MAXIMA)
    assert fit.block_cycles == BLOCK and fit.blocks == 12
    assert fit.shape_xi == pytest.approx(-c, rel=1e-12)
    assert fit.loc_us == pytest.approx(loc, rel=1e-12)
    assert fit.scale_us == pytest.approx(scale, rel=1e-12)
    # 10**6 cycles = 100 blocks of 10_000: the level exceeded with probability 1/100 per block.
    expected = sps.genextreme.isf(1 / 100, c, loc=loc, scale=scale)
    assert fit.return_levels[10**6][0] == pytest.approx(expected, rel=1e-12)


def test_gev_fit_bootstrap_interval_is_seeded_and_central() -> None:
    fit = gev_fit(MAXIMA, BLOCK, return_cycles=(10**6,), resamples=6)
    # Independent parametric bootstrap with the default seed 1 and confidence 0.95 (tails 0.025).
    c, loc, scale = sps.genextreme.fit(MAXIMA)
    rng = np.random.default_rng(1)
    levels = []
    for _ in range(6):
        sample = sps.genextreme.rvs(c, loc=loc, scale=scale, size=12, random_state=rng)
        bc, bl, bs = sps.genextreme.fit(sample)
        levels.append(sps.genextreme.isf(1 / 100, bc, loc=bl, scale=bs))
    _, low, high = fit.return_levels[10**6]
    assert low == pytest.approx(np.quantile(levels, 0.025), rel=1e-12)
    assert high == pytest.approx(np.quantile(levels, 0.975), rel=1e-12)


def test_gev_fit_converts_float32_maxima_to_float64() -> None:
    single = MAXIMA.astype(np.float32)
    fit = gev_fit(single, BLOCK, return_cycles=(10**6,), resamples=2)
    _, loc, _ = sps.genextreme.fit(single.astype(np.float64))
    assert fit.loc_us == pytest.approx(loc, rel=1e-12)


def test_gev_fit_accepts_exactly_ten_maxima() -> None:
    fit = gev_fit(MAXIMA[:10], BLOCK, return_cycles=(10**6,), resamples=2)
    assert fit.blocks == 10
    with pytest.raises(StatsError, match="at least 10"):
        gev_fit(MAXIMA[:9], BLOCK, return_cycles=(10**6,), resamples=2)


def test_gev_fit_spread_check() -> None:
    with pytest.raises(StatsError, match="no spread"):
        gev_fit([7.0] * 12, BLOCK, return_cycles=(10**6,), resamples=2)
    # A spread of exactly 1 us is a spread.
    ones = [50.0 + v for v in (0, 1, 0.5, 0.25, 0.75, 0.1, 0.9, 0.3, 0.6, 0.4, 0.2, 0.8)]
    assert gev_fit(ones, BLOCK, return_cycles=(10**6,), resamples=2).blocks == 12


def test_gev_fit_rejects_return_period_of_one_block() -> None:
    with pytest.raises(StatsError, match="longer than one block"):
        gev_fit(MAXIMA, BLOCK, return_cycles=(BLOCK,), resamples=2)


class _FixedFit:
    """Stands in for genextreme.fit: always c = 0 (Gumbel), loc 50, scale 5; counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, data: object) -> tuple[float, float, float]:
        self.calls += 1
        return 0.0, 50.0, 5.0


def test_gev_fit_gumbel_shape_is_not_a_heavy_tail(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _FixedFit()
    monkeypatch.setattr(sps.genextreme, "fit", fake)
    fit = gev_fit(MAXIMA, BLOCK, return_cycles=(10**6,), resamples=2)
    assert fit.shape_xi == 0.0 and fit.heavy_tail is False
    # Gumbel: isf(p) = loc - scale * ln(-ln(1 - p)); p = 1/100: -ln(0.99) = 0.0100503,
    # ln(0.0100503) = -4.600149, level = 50 + 5 * 4.600149 = 73.00075.
    expected = 50.0 - 5.0 * math.log(-math.log(1 - 1 / 100))
    assert fit.return_levels[10**6] == pytest.approx((expected, expected, expected), rel=1e-9)


def test_gev_fit_default_is_200_bootstrap_resamples(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _FixedFit()
    monkeypatch.setattr(sps.genextreme, "fit", fake)
    gev_fit(MAXIMA, BLOCK, return_cycles=(10**6,))
    # One fit of the data, then one per resample.
    assert fake.calls == 1 + 200

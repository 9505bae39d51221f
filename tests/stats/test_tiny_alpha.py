"""An alpha below double precision's reach of 1 - alpha/2 still gives the normal interval.

``norm.ppf(1 - alpha/2)`` is infinite once alpha/2 is below about 1.1e-16 (1 - alpha/2 rounds to 1):
``hodges_lehmann`` then raised an OverflowError (``compare --alpha 1e-20`` printed "internal error")
and ``batch.shift_ci_rows`` gave no interval. The critical value comes from the upper tail instead.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats as sps

from bootscope.stats.batch import shift_ci_rows
from bootscope.stats.rank import hodges_lehmann

ALPHA = 1e-20


def _samples() -> tuple[np.ndarray, np.ndarray]:
    # 100 distinct values a side (no ties): beyond the exact sizes, so the normal approximation.
    a = np.arange(100, dtype=np.float64) * 0.01 + 10.0
    b = np.arange(100, dtype=np.float64) * 0.01 + 9.5 + 0.003
    return a, b


def test_hodges_lehmann_at_a_tiny_alpha_uses_the_normal_interval() -> None:
    assert float(sps.norm.ppf(1.0 - ALPHA / 2)) == np.inf  # why z comes from the upper tail
    a, b = _samples()
    # z with P(Z > z) = 5e-21: 9.3360 (normal tables; checked against Mill's ratio below).
    z = 9.336
    tail = math.erfc(z / math.sqrt(2)) / 2
    assert 4.5e-21 < tail < 5.5e-21
    # Var U = n m (N + 1) / 12 = 100 * 100 * 201 / 12 = 167500, sd = 409.27; k = floor(5000 - z sd).
    k = math.floor(5000 - 9.33604 * math.sqrt(167500.0))
    assert k == 1179
    diffs = np.sort(np.subtract.outer(b, a).ravel())
    shift = hodges_lehmann(a, b, ALPHA)
    assert shift.method == "normal approximation"
    assert shift.ci is not None
    assert shift.ci == (pytest.approx(diffs[k - 1]), pytest.approx(diffs[10000 - k]))
    assert shift.ci[1] - shift.ci[0] == pytest.approx(diffs[10000 - k] - diffs[k - 1])
    # 1.02 of the 1.98 that the differences span: an interval, not the whole range.
    assert shift.ci[1] - shift.ci[0] < 0.6 * (diffs[-1] - diffs[0])


def test_batch_rows_at_a_tiny_alpha_agree_with_hodges_lehmann() -> None:
    a, b = _samples()
    estimate, low, high = shift_ci_rows(a[None, :], b[None, :], ALPHA)
    shift = hodges_lehmann(a, b, ALPHA)
    assert shift.ci is not None
    assert (float(low[0]), float(high[0])) == pytest.approx(shift.ci)
    assert float(estimate[0]) == pytest.approx(shift.estimate)


def test_an_alpha_whose_half_underflows_gives_no_interval_and_no_error() -> None:
    # 5e-324, the smallest double: alpha / 2 is 0 and z infinite, so no k >= 1 exists.
    a, b = _samples()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        shift = hodges_lehmann(a, b, 5e-324)
        estimate, low, high = shift_ci_rows(a[None, :], b[None, :], 5e-324)
    assert shift.ci is None and shift.method == "normal approximation (too few samples)"
    assert float(estimate[0]) == pytest.approx(shift.estimate)
    assert np.isnan(low[0]) and np.isnan(high[0])

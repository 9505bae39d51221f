"""Welch's interval for a difference of means: each side keeps its own spread.

The Hodges-Lehmann interval of a rank test assumes both sides have the same shape (one shifted from
the other). When one side spreads far wider (a knob that makes boots erratic, a few boots of one
arm against many of the other), that interval covers far less often than it says: with 2 boots
against 8 and one side 25 times wider, a true difference of zero falls outside it in 45 % of runs
(``bench/RESULTS.md``, "tune: the first look"). Welch's interval lets each side keep its variance
(Welch-Satterthwaite degrees of freedom), so a verdict that both intervals agree on stays near its
stated error rate.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats as sps


def welch_interval(a: Sequence[float], b: Sequence[float], alpha: float) -> tuple[float, float] | None:
    """Return the (1 - ``alpha``) Welch interval of mean(b) - mean(a), in the values' unit; None
    when a side has fewer than 2 values or neither side spreads at all (no interval to give)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.size < 2 or y.size < 2:
        return None
    var_x, var_y = float(np.var(x, ddof=1)) / x.size, float(np.var(y, ddof=1)) / y.size
    if var_x + var_y == 0.0:
        return None
    df = (var_x + var_y) ** 2 / (var_x**2 / (x.size - 1) + var_y**2 / (y.size - 1))
    half = float(sps.t.ppf(1.0 - alpha / 2.0, df)) * float(np.sqrt(var_x + var_y))
    shift = float(np.mean(y) - np.mean(x))
    return shift - half, shift + half

"""Sequential sampling that stops on precision only.

Stopping when a p-value dips below alpha would inflate false positives (every look is another
chance); stopping when the shift's interval is narrow enough does not, because the interval's width
depends on the spread and n, not on where the two sides sit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bootscope.errors import StatsError
from bootscope.stats._checks import FloatArray, as_samples
from bootscope.stats.rank import hodges_lehmann

MIN_N_PER_SIDE = 5


def precise_enough(
    a: Sequence[float] | FloatArray,
    b: Sequence[float] | FloatArray,
    precision_rel: float,
    alpha: float,
    min_n: int = MIN_N_PER_SIDE,
) -> bool:
    """Return True when the (1 - alpha) Hodges-Lehmann interval of b - a has a half-width of at most
    ``precision_rel`` (0.01 for 1 %) times |median(a)|, with at least ``min_n`` samples a side.

    Never looks at a p-value. Raises StatsError on NaN or a non-positive precision.
    """
    if precision_rel <= 0:
        raise StatsError("the precision must be a positive fraction, e.g. 0.01 for 1 %")
    x = as_samples(a, "a")
    y = as_samples(b, "b")
    if min(x.size, y.size) < min_n:
        return False
    ci = hodges_lehmann(x, y, alpha).ci
    if ci is None:
        return False
    half_width = (ci[1] - ci[0]) / 2.0
    return bool(half_width <= precision_rel * abs(float(np.median(x))))

"""Seeded percentile bootstrap of the difference of medians (b - a)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bootscope.errors import StatsError
from bootscope.stats._checks import FloatArray, as_samples

DEFAULT_RESAMPLES = 4000


def median_difference_ci(
    a: Sequence[float] | FloatArray,
    b: Sequence[float] | FloatArray,
    alpha: float,
    seed: int,
    resamples: int = DEFAULT_RESAMPLES,
) -> tuple[float, float]:
    """Return the (1 - alpha) percentile-bootstrap interval of median(b) - median(a), value unit.

    Each side is resampled with replacement on its own; the same seed gives the same interval.
    Raises StatsError on an empty side, NaN, or fewer than 100 resamples.
    """
    x = as_samples(a, "a")
    y = as_samples(b, "b")
    if resamples < 100:
        raise StatsError("the bootstrap needs at least 100 resamples")
    rng = np.random.default_rng(seed)
    medians_a = np.median(x[rng.integers(0, x.size, size=(resamples, x.size))], axis=1)
    medians_b = np.median(y[rng.integers(0, y.size, size=(resamples, y.size))], axis=1)
    low, high = np.quantile(medians_b - medians_a, [alpha / 2, 1.0 - alpha / 2])
    return float(low), float(high)

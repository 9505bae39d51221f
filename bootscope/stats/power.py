"""Sample-size advice by simulation from the observed samples.

Both sides' residuals (values minus their own side's median) are pooled into one noise shape; each
simulated side is drawn from it with replacement, b's draw is shifted by the amount to detect, and
the verdict rule of ``compare`` (``batch.verdict_rows``) decides. Pooling keeps the simulated null
exact (same shape both sides), so the power measured is that of the shift alone, not of a difference
in shape between the two samples. The smallest n per side whose simulated power reaches the target
is returned. Seeded: the same inputs give the same n.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bootscope.errors import StatsError
from bootscope.stats._checks import FloatArray, as_samples
from bootscope.stats.batch import SAME, verdict_rows

DEFAULT_REPLICATES = 1000
DEFAULT_MAX_N = 2000


@dataclass(frozen=True, slots=True)
class PowerAdvice:
    """``n_per_side`` is None when even ``max_n`` does not reach the target power."""

    detect: float
    target_power: float
    n_per_side: int | None
    achieved_power: float
    max_n: int


def simulated_power(
    a: Sequence[float] | FloatArray,
    b: Sequence[float] | FloatArray,
    detect: float,
    n_per_side: int,
    alpha: float,
    seed: int,
    replicates: int = DEFAULT_REPLICATES,
    alternative: str = "two-sided",
) -> float:
    """Return the fraction (0..1) of simulated comparisons of n_per_side boots a side that find a
    shift of ``detect`` (value unit, sign as b - a; for two-sided only its size matters).

    Raises StatsError on NaN, an empty side or n_per_side < 2.
    """
    x = as_samples(a, "a")
    y = as_samples(b, "b")
    if n_per_side < 2:
        raise StatsError("power needs at least 2 samples per side")
    rng = np.random.default_rng([seed, n_per_side])
    residuals = np.concatenate([x - np.median(x), y - np.median(y)])
    shift = detect if alternative != "greater" else abs(detect)
    if alternative == "less":
        shift = -abs(detect)
    draws_a = residuals[rng.integers(0, residuals.size, size=(replicates, n_per_side))]
    draws_b = residuals[rng.integers(0, residuals.size, size=(replicates, n_per_side))] + shift
    return float(np.mean(verdict_rows(draws_a, draws_b, alpha, alternative) != SAME))


def n_for_power(
    a: Sequence[float] | FloatArray,
    b: Sequence[float] | FloatArray,
    detect: float,
    alpha: float,
    seed: int,
    target_power: float = 0.8,
    replicates: int = DEFAULT_REPLICATES,
    max_n: int = DEFAULT_MAX_N,
    alternative: str = "two-sided",
) -> PowerAdvice:
    """Return the smallest n per side whose simulated power for a shift of ``detect`` reaches
    ``target_power`` (exponential then binary search over n; ``detect`` in the values' unit).

    Raises StatsError on NaN, an empty side, or a zero ``detect``.
    """
    if detect == 0:
        raise StatsError("the shift to detect must not be zero")

    def power_at(n: int) -> float:
        return simulated_power(a, b, detect, n, alpha, seed, replicates, alternative)

    low, high = 1, 2
    achieved = power_at(high)
    while achieved < target_power:
        if high >= max_n:
            return PowerAdvice(detect, target_power, None, achieved, max_n)
        low, high = high, min(max_n, high * 2)
        achieved = power_at(high)
    # Invariant: power(low) < target (or low = 1), power(high) >= target.
    while high - low > 1:
        middle = (low + high) // 2
        power_middle = power_at(middle)
        if power_middle >= target_power:
            high, achieved = middle, power_middle
        else:
            low = middle
    return PowerAdvice(detect, target_power, high, achieved, max_n)

"""Sample-size advice by simulation from the observed samples.

Both sides' residuals (values minus their own side's median) are pooled into one noise shape; each
simulated side is drawn from it with replacement, b's draw is shifted by the amount to detect, and
the verdict rule of ``compare`` (``batch.verdict_rows``) decides. Pooling keeps the simulated null
exact (same shape both sides), so the power measured is that of the shift alone, not of a difference
in shape between the two samples. The smallest n per side whose simulated power reaches the target
is returned. Seeded: the same inputs give the same n.

Cheap where the answer is plain: a size whose smallest possible p-value is not below alpha has power
0 without a simulation, and a size is first tried on its first ``SCREEN_REPLICATES`` draws; when
those find power below ``target - SCREEN_MARGIN``, the size is taken as too small without the rest
(Hoeffding: the full estimate lands above the target after such a start with probability below
1e-7). Small sides with ties need the exact tie-conditional test row by row, milliseconds each, so
this keeps ``compare``'s advice from costing seconds; the n found is the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bootscope.errors import StatsError
from bootscope.stats._checks import FloatArray, as_samples
from bootscope.stats.batch import SAME, verdict_rows
from bootscope.stats.reach import smallest_p

DEFAULT_REPLICATES = 1000
DEFAULT_MAX_N = 2000
SCREEN_REPLICATES = 100
SCREEN_MARGIN = 0.3


@dataclass(frozen=True, slots=True)
class PowerAdvice:
    """``n_per_side`` is None when even ``max_n`` does not reach the target power."""

    detect: float
    target_power: float
    n_per_side: int | None
    achieved_power: float
    max_n: int


def _draws(
    x: FloatArray, y: FloatArray, detect: float, n_per_side: int, seed: int, replicates: int, alternative: str
) -> tuple[FloatArray, FloatArray]:
    """Return the simulated sides (replicates x n_per_side) of the power simulation at one size."""
    rng = np.random.default_rng([seed, n_per_side])
    residuals = np.concatenate([x - np.median(x), y - np.median(y)])
    shift = detect if alternative != "greater" else abs(detect)
    if alternative == "less":
        shift = -abs(detect)
    draws_a = residuals[rng.integers(0, residuals.size, size=(replicates, n_per_side))]
    draws_b = residuals[rng.integers(0, residuals.size, size=(replicates, n_per_side))] + shift
    return draws_a, draws_b


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
    draws_a, draws_b = _draws(x, y, detect, n_per_side, seed, replicates, alternative)
    return float(np.mean(verdict_rows(draws_a, draws_b, alpha, alternative) != SAME))


def _screened_power(
    x: FloatArray,
    y: FloatArray,
    detect: float,
    n_per_side: int,
    alpha: float,
    seed: int,
    replicates: int,
    alternative: str,
    target_power: float,
) -> float:
    """Return :func:`simulated_power` at ``n_per_side``, or a lower figure already known to be below
    ``target_power`` (0 where no outcome can reach alpha; the screen's estimate where the first
    draws fall far short), without simulating every replicate."""
    if smallest_p(n_per_side, n_per_side, alternative) >= alpha:
        return 0.0
    draws_a, draws_b = _draws(x, y, detect, n_per_side, seed, replicates, alternative)
    if replicates > SCREEN_REPLICATES:
        head = slice(0, SCREEN_REPLICATES)
        screened = float(np.mean(verdict_rows(draws_a[head], draws_b[head], alpha, alternative) != SAME))
        if screened < target_power - SCREEN_MARGIN:
            return screened
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
    x = as_samples(a, "a")
    y = as_samples(b, "b")

    def power_at(n: int) -> float:
        return _screened_power(x, y, detect, n, alpha, seed, replicates, alternative, target_power)

    low, high = 1, 2
    achieved = power_at(high)
    while achieved < target_power:
        if high >= max_n:
            achieved = simulated_power(x, y, detect, high, alpha, seed, replicates, alternative)
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

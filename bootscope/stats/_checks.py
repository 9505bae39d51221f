"""Input validation shared by the stats functions: finite float arrays, never silently cleaned."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from bootscope.errors import StatsError

FloatArray = npt.NDArray[np.float64]


def as_samples(values: Sequence[float] | FloatArray, side: str, min_n: int = 1) -> FloatArray:
    """Return ``values`` as a 1-d float64 array.

    Raises StatsError when a value is NaN or infinite (a sample is never dropped silently) or when
    there are fewer than ``min_n`` values.
    """
    array = np.asarray(values, dtype=np.float64).ravel()
    if not np.all(np.isfinite(array)):
        raise StatsError(f"side {side} holds a NaN or infinite value; remove it or fix the input")
    if array.size < min_n:
        raise StatsError(
            f"side {side} has {array.size} sample(s); at least {min_n} are needed for a comparison"
        )
    return array


def value_tolerance(*arrays: FloatArray) -> float:
    """Return an absolute tolerance (same unit as the values) below which two values count as equal.

    Decimal inputs such as 8.3 - 8.2 are not exact in binary floating point; comparisons against a
    margin use this tolerance so that "exactly 0.1 more" is not counted as "more than 0.1".
    """
    scale = max((float(np.max(np.abs(x))) for x in arrays if x.size), default=1.0)
    return 1e-9 * max(1.0, scale)

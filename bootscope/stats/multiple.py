"""Holm's step-down correction when several variants are compared with one baseline."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Return Holm-adjusted p-values in the input order (dimensionless, capped at 1).

    The i-th smallest of m p-values becomes max_{j <= i} min(1, (m - j + 1) * p_(j)); reject where the
    adjusted value is below alpha. None entries (no test possible) stay None and do not count in m.
    Raises nothing.
    """
    present = [(i, p) for i, p in enumerate(p_values) if p is not None]
    adjusted: list[float | None] = [None] * len(p_values)
    m = len(present)
    running = 0.0
    for rank, (index, p) in enumerate(sorted(present, key=lambda item: item[1])):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[index] = float(np.float64(running))
    return adjusted

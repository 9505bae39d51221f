"""Corrections for many tests at once: Holm (family-wise error), Benjamini-Hochberg (false discovery rate)."""

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


def benjamini_hochberg(p_values: Sequence[float | None]) -> list[float | None]:
    """Return Benjamini-Hochberg q-values in the input order (dimensionless, capped at 1).

    The i-th smallest of m p-values becomes min_{j >= i} min(1, m * p_(j) / j); calling every q below
    a level keeps the expected share of false calls among the calls (the false discovery rate) at
    that level for independent or positively dependent tests. None entries (no test possible) stay
    None and do not count in m. Raises nothing.
    """
    present = [(i, p) for i, p in enumerate(p_values) if p is not None]
    adjusted: list[float | None] = [None] * len(p_values)
    m = len(present)
    running = 1.0
    ordered = sorted(present, key=lambda item: item[1])
    for rank in range(m, 0, -1):
        index, p = ordered[rank - 1]
        running = min(running, m * p / rank)
        adjusted[index] = float(min(1.0, running))
    return adjusted

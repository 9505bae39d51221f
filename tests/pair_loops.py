"""A plain-loop reader of the pairwise comparisons behind stats/resolution.py, for tests that check
the module against something that shares none of its code."""

from __future__ import annotations


def met_matrix(values: list[float], margin: float) -> list[list[float]]:
    """Return met[k][i] for every ordered pair of distinct boots: 1 when values[k] - values[i] is
    below ``margin``, 0.5 when equal to it, 0 above it (0 on the diagonal)."""
    n = len(values)
    met = [[0.0] * n for _ in range(n)]
    for k in range(n):
        for i in range(n):
            if k != i:
                d = values[k] - values[i]
                met[k][i] = 1.0 if d < margin else 0.5 if d == margin else 0.0
    return met

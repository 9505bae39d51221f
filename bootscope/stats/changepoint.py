"""Change points in an ordered series of sample groups (one group of boots per kernel version).

Method: binary segmentation (Scott & Knott 1974, Biometrics 30(3); Vostrikova 1981, Soviet Math.
Dokl. 24) whose split test is Pettitt's rank statistic (Pettitt 1979, "A non-parametric approach to
the change-point problem", J. R. Stat. Soc. C 28(2):126-135): at every boundary between two
versions the Mann-Whitney U of "everything before" against "everything after", standardised, and
the largest absolute value over the boundaries. Its null distribution comes from a permutation
test (the samples are exchangeable across versions when nothing changed), so it is exact for the
small, tied, skewed samples that boot times are. Taking the maximum over all boundaries of a
segment inside one permutation test is the multiplicity control within a segment; a segment is
only split further after its own test rejected, and every further test runs at ``alpha`` divided by
the number of segments tested so far (Bonferroni over the recursion), so a flat series reports a
change point with probability at most ``alpha``.

Each change point reports the Hodges-Lehmann shift between the segments on either side, with the
distribution-free confidence interval from the Mann-Whitney statistic (``bootscope.stats.rank``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats as sps

from bootscope.errors import StatsError
from bootscope.stats.rank import hodges_lehmann

FloatArray = npt.NDArray[np.float64]

DEFAULT_PERMUTATIONS = 2000


@dataclass(frozen=True, slots=True)
class ChangePoint:
    """A change between group ``index`` and group ``index + 1`` (0-based positions in the series).

    ``shift`` is after minus before, in the metric's unit (positive: slower after the step);
    ``shift_ci`` its confidence interval at ``1 - alpha``; ``p`` the permutation p-value of the
    split test that found it (before the Bonferroni factor ``tests``).
    """

    index: int
    shift: float
    shift_ci: tuple[float, float] | None
    shift_relative: float | None
    p: float
    p_adjusted: float
    statistic: float
    n_before: int
    n_after: int
    segment: tuple[int, int]


@dataclass(frozen=True, slots=True)
class ChangePointResult:
    """All change points of a series, ordered by ``index``; ``method`` names the procedure."""

    change_points: tuple[ChangePoint, ...]
    alpha: float
    permutations: int
    seed: int
    method: str
    tests: int


METHOD = (
    "binary segmentation with a permutation test of Pettitt's Mann-Whitney statistic "
    "(Pettitt 1979; Scott & Knott 1974), Bonferroni across segments"
)


def _clean_groups(groups: Sequence[Sequence[float]]) -> list[FloatArray]:
    cleaned: list[FloatArray] = []
    for position, group in enumerate(groups):
        values = np.asarray([v for v in group if v is not None], dtype=np.float64)
        if values.size == 0:
            raise StatsError(f"position {position} of the series has no samples; boot it or drop it")
        if not np.all(np.isfinite(values)):
            raise StatsError(f"position {position} of the series holds a value that is not a finite number")
        cleaned.append(values)
    return cleaned


def split_statistics(groups: Sequence[FloatArray]) -> FloatArray:
    """Return the standardised Mann-Whitney statistic at each of the ``len(groups) - 1`` boundaries.

    Entry k compares groups[0..k] pooled against groups[k+1..] pooled: (U - n1*n2/2) divided by its
    null standard deviation sqrt(n1*n2*(n+1)/12), where U counts pairs with the later sample larger
    (positive: the series went up). Raises StatsError for fewer than two groups.
    """
    if len(groups) < 2:
        raise StatsError("a change point needs at least two positions in the series")
    sizes = np.array([len(g) for g in groups])
    ranks = np.asarray(sps.rankdata(np.concatenate(groups)), dtype=np.float64)
    result: FloatArray = _statistics_from_ranks(ranks[np.newaxis, :], sizes)[0]
    return result


def _statistics_from_ranks(ranks: FloatArray, sizes: npt.NDArray[np.int64]) -> FloatArray:
    # ranks: (permutations, n). U of the "after" part = rank sum after - n2(n2+1)/2.
    n = int(sizes.sum())
    bounds = np.cumsum(sizes)[:-1]
    total = ranks.sum(axis=1, keepdims=True)
    cumulative = np.cumsum(ranks, axis=1)[:, bounds - 1]
    n1 = bounds.astype(np.float64)
    n2 = n - n1
    rank_sum_after = total - cumulative
    u_after = rank_sum_after - n2 * (n2 + 1) / 2
    sd = np.sqrt(n1 * n2 * (n + 1) / 12.0)
    result: FloatArray = (u_after - n1 * n2 / 2) / sd
    return result


def _split_test(
    groups: Sequence[FloatArray], permutations: int, rng: np.random.Generator
) -> tuple[int, float, float]:
    """Return (best boundary, observed max |z|, permutation p-value) for one segment."""
    sizes = np.array([len(g) for g in groups], dtype=np.int64)
    ranks = sps.rankdata(np.concatenate(groups)).astype(np.float64)
    observed = _statistics_from_ranks(ranks[np.newaxis, :], sizes)[0]
    best = int(np.argmax(np.abs(observed)))
    observed_max = float(np.abs(observed[best]))
    shuffled = np.tile(ranks, (permutations, 1))
    shuffled = rng.permuted(shuffled, axis=1)
    null_max = np.abs(_statistics_from_ranks(shuffled, sizes)).max(axis=1)
    # Tolerance: equal statistics computed in another order must count as "at least as extreme".
    exceed = int(np.count_nonzero(null_max >= observed_max - 1e-9))
    p = (exceed + 1) / (permutations + 1)
    return best, observed_max, p


def detect_change_points(
    groups: Sequence[Sequence[float]],
    *,
    alpha: float = 0.05,
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = 0,
    max_change_points: int | None = None,
) -> ChangePointResult:
    """Find the steps in an ordered series of sample groups (see the module docstring for the method).

    ``groups[i]`` holds the samples of position i (e.g. boots of the i-th kernel version), in the
    metric's unit. Returns every change point found, ordered by position; none for a flat series
    (false detections at rate <= alpha). Deterministic for a given ``seed``. Raises StatsError for
    fewer than two positions, an empty position, non-finite values, or alpha outside (0, 1).
    """
    if not 0 < alpha < 1:
        raise StatsError(f"alpha must be between 0 and 1, got {alpha}")
    if permutations < 99:
        raise StatsError(f"use at least 99 permutations, got {permutations}")
    cleaned = _clean_groups(groups)
    if len(cleaned) < 2:
        raise StatsError("a change point needs at least two positions in the series")
    rng = np.random.default_rng(seed)
    found: list[ChangePoint] = []
    pending: list[tuple[int, int]] = [(0, len(cleaned))]
    tests = 0
    while pending:
        start, stop = pending.pop(0)
        if stop - start < 2 or (max_change_points is not None and len(found) >= max_change_points):
            continue
        tests += 1
        segment = cleaned[start:stop]
        best, statistic, p = _split_test(segment, permutations, rng)
        p_adjusted = min(1.0, p * tests)
        if p_adjusted > alpha:
            continue
        index = start + best
        before = np.concatenate(cleaned[start : index + 1])
        after = np.concatenate(cleaned[index + 1 : stop])
        estimate = hodges_lehmann(before, after, alpha)
        shift, ci = estimate.estimate, estimate.ci
        before_median = float(np.median(before))
        relative = shift / before_median if before_median != 0 else None
        found.append(
            ChangePoint(
                index=index,
                shift=shift,
                shift_ci=ci,
                shift_relative=relative,
                p=p,
                p_adjusted=p_adjusted,
                statistic=statistic,
                n_before=len(before),
                n_after=len(after),
                segment=(start, stop),
            )
        )
        pending.append((start, index + 1))
        pending.append((index + 1, stop))
    return ChangePointResult(
        change_points=tuple(sorted(found, key=lambda c: c.index)),
        alpha=alpha,
        permutations=permutations,
        seed=seed,
        method=METHOD,
        tests=tests,
    )

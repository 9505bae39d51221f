"""Two sets of samples of one metric in, one ``Comparison`` out (b against a; shift = b - a).

Verdict rule: a difference is called only when the chosen test's p-value (Holm-adjusted when several
variants face one baseline) is below alpha AND, for the Mann-Whitney method, the Hodges-Lehmann
interval does not reach over zero; the interval's side gives the direction. An interval that ends
exactly at zero (or is [0, 0]) does not reach over it: with coarse, tied values (seed 000's 0.1 s
steps, ``--icount``'s near-identical times) that end is a mass of zero differences, which the test
counts as one half each, and the direction is the test's (U of b below or above n*m/2). Calling such
intervals "no difference", as bootscope once did, put the A/A error of tied data far below alpha (0 %
at 100 boots a side of ``--icount``-like data) and hid real shifts. Small tied samples use the exact
distribution conditional on the ties for both the p-value and the interval (seed 000: p = 0.0332,
interval [-0.8, 0]: faster). When the interval reaches over zero while p is below alpha (possible
with the normal approximation), bootscope says "no significant difference" and a note names both.
When the sample sizes cannot reach p < alpha whatever the values (3 boots against 2: the smallest
possible two-sided p is 0.2, ``reach``), the verdict is "cannot tell", with a note naming that floor
and the boots a side that could, never "no significant difference".
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats as sps

from bootscope.defaults import ALPHA, POWER, SAMPLES_PER_VARIANT
from bootscope.errors import StatsError
from bootscope.model import Comparison, TestResult
from bootscope.stats._checks import FloatArray, as_samples
from bootscope.stats.bootstrap import median_difference_ci
from bootscope.stats.multiple import holm
from bootscope.stats.power import n_for_power
from bootscope.stats.rank import ALTERNATIVES, as_alternative, hodges_lehmann, mann_whitney
from bootscope.stats.reach import cannot_tell_reason
from bootscope.stats.sign import decision_p, sign_test
from bootscope.stats.summary import summarize

METHODS = ("mw", "sign")
FASTER, SLOWER, SAME, DEGENERATE = "faster", "slower", "no significant difference", "degenerate"
CANNOT_TELL = "cannot tell"


@dataclass(frozen=True, slots=True)
class Options:
    """How to compare; amounts are in the values' unit, ``detect_rel`` a fraction of a's median."""

    alpha: float = ALPHA
    alternative: str = "two-sided"
    method: str = "mw"
    detect_abs: float | None = None
    detect_rel: float | None = 0.01
    seed: int = 1
    margin: float | None = None
    power: bool | None = None  # None: only when needed (no difference found, or n < 24 a side)
    bootstrap_resamples: int = 4000  # 0: no bootstrap interval (simulations that only need verdicts)
    power_replicates: int = 1000
    shape: bool = False  # also Kolmogorov-Smirnov, Anderson-Darling and each side's two modes


def _check_options(options: Options) -> None:
    if not 0 < options.alpha < 0.5:
        raise StatsError(f"alpha must lie between 0 and 0.5, not {options.alpha}")
    if options.alternative not in ALTERNATIVES:
        raise StatsError(f"unknown alternative {options.alternative!r}; use {', '.join(ALTERNATIVES)}")
    if options.method not in METHODS:
        raise StatsError(f"unknown method {options.method!r}; use {' or '.join(METHODS)}")


SHAPE_MAX_N = 100_000  # boots per side above which the shape tests are left out (a note says so)


def shape_of(
    a: FloatArray, b: FloatArray, name_a: str, name_b: str, unit: str = ""
) -> tuple[tuple[TestResult, ...], list[str]]:
    """Return the two-sided tests of "a and b have one distribution" whatever its shape
    (Kolmogorov-Smirnov; k-sample Anderson-Darling, whose p scipy interpolates and clips to
    0.001..0.25) and a note per side that holds two modes (each mode's median and share): a change
    that only makes a slow mode more frequent moves these, not the shift."""
    from bootscope.stats.modes import shape_tests, two_modes

    notes: list[str] = []
    if max(a.size, b.size) > SHAPE_MAX_N:
        return (), [f"shape tests left out above {SHAPE_MAX_N} values a side"]
    for name, values in ((name_a, a), (name_b, b)):
        modes = two_modes(values)
        if modes is not None:
            fast, slow = modes
            space = " " if unit else ""
            shown = (
                f"{fast.median:.4g}{space}{unit} ({fast.share:.0%}) and {slow.median:.4g}{space}{unit}"
                f" ({slow.share:.0%})"
            )
            notes.append(f"{name}: two modes, {shown}")
    found = shape_tests(a, b)
    if found is None:
        return (), notes
    ad_note = "p clipped to 0.001..0.25 by scipy's table" if found.ad_p in (0.001, 0.25) else ""
    return (
        TestResult("kolmogorov_smirnov", found.ks_p, "two-sided", "scipy ks_2samp", found.ks_statistic),
        TestResult(
            "anderson_darling", found.ad_p, "two-sided", "k-sample, scipy", found.ad_statistic, ad_note
        ),
    ), notes


def welch(a: FloatArray, b: FloatArray, alternative: str) -> TestResult:
    """Return Welch's t-test of b against a, shown as a reference only (it assumes normal means)."""
    if np.std(a) == 0 and np.std(b) == 0:
        return TestResult("welch", None, alternative, "welch t", None, "zero spread on both sides")
    with warnings.catch_warnings():
        # scipy warns on stderr of precision loss when one side's values are equal (or equal but for
        # float rounding); the statistic is still computed from the other side's spread.
        warnings.simplefilter("ignore", RuntimeWarning)
        result = sps.ttest_ind(b, a, equal_var=False, alternative=as_alternative(alternative))
    return TestResult("welch", float(result.pvalue), alternative, "welch t", float(result.statistic))


def interval_side(ci: tuple[float, float] | None, alternative: str, test_direction: int) -> int:
    """Return -1 when the shift interval lies below zero, 1 above, 0 when it reaches over zero or is
    None. An interval ending exactly at zero (zero differences of tied values) takes the side of
    ``test_direction`` (-1, 0 or 1: U of b below, at or above n*m/2); a one-sided ``alternative``
    only accepts its own side. Raises nothing."""
    if ci is None:
        return 0
    low, high = ci
    if high < 0:
        side = -1
    elif low > 0:
        side = 1
    elif low < 0 < high:
        side = 0
    else:
        side = test_direction
    if (alternative == "less" and side > 0) or (alternative == "greater" and side < 0):
        return 0
    return side


def _test_direction(comparison: Comparison) -> int:
    u_of_b = comparison.tests[0].statistic
    if u_of_b is None:
        return 0
    middle = comparison.a.n * comparison.b.n / 2.0
    return -1 if u_of_b < middle else (1 if u_of_b > middle else 0)


def _verdict(comparison: Comparison, p: float | None, alternative: str) -> str:
    if p is None:
        return DEGENERATE
    if cannot_tell_reason(comparison.a.n, comparison.b.n, comparison.alpha, alternative, comparison.method):
        return CANNOT_TELL
    if p >= comparison.alpha:
        return SAME
    if comparison.method == "mw":
        # One-sided questions use the matching bound of the (1 - 2 alpha) interval.
        ci = comparison.shift_ci
        if alternative != "two-sided":
            ci = hodges_lehmann(comparison.a.values, comparison.b.values, 2 * comparison.alpha).ci
        side = interval_side(ci, alternative, _test_direction(comparison))
        if side == 0:
            return SAME
        return FASTER if side < 0 else SLOWER
    primary = comparison.tests[0]
    return FASTER if primary.alternative == "less" else SLOWER


def decision_p_value(comparison: Comparison, alternative: str) -> float | None:
    """Return the unadjusted p-value (dimensionless) that the verdict of ``comparison`` rests on."""
    return decision_p(comparison.tests[0], alternative)


def _power_fields(
    x: FloatArray, y: FloatArray, options: Options, verdict: str
) -> dict[str, float | int | None]:
    needed = verdict in (SAME, CANNOT_TELL) or min(x.size, y.size) < SAMPLES_PER_VARIANT
    wanted = needed if options.power is None else options.power
    median_a = float(np.median(x))
    detect = options.detect_abs
    if detect is None and options.detect_rel is not None:
        detect = options.detect_rel * abs(median_a)
    if not wanted or verdict == DEGENERATE or not detect:
        return {}
    advice = n_for_power(
        x, y, detect, options.alpha, options.seed, POWER, options.power_replicates,
        alternative=options.alternative,
    )  # fmt: skip
    return {
        "power_detect": detect,
        "power_detect_relative": options.detect_rel if options.detect_abs is None else None,
        "power_n_per_side": advice.n_per_side,
        "power_achieved": advice.achieved_power,
        "power_max_n": advice.max_n,
    }


def compare(
    a: Sequence[float] | FloatArray,
    b: Sequence[float] | FloatArray,
    metric: str,
    unit: str,
    options: Options | None = None,
    name_a: str = "a",
    name_b: str = "b",
) -> Comparison:
    """Return the Comparison of b against a: summaries, Hodges-Lehmann shift (b - a, value unit)
    with interval, relative shift (fraction of a's median), tests (the chosen method first, then
    Welch as reference), seeded bootstrap interval, verdict and, when needed, power advice.

    All values identical gives the verdict "degenerate" (no test is possible), not an exception.
    Raises StatsError for fewer than 2 samples a side, NaN/inf, or bad options.
    """
    options = options or Options()
    _check_options(options)
    x = as_samples(a, name_a, min_n=2)
    y = as_samples(b, name_b, min_n=2)
    shift = hodges_lehmann(x, y, options.alpha)
    median_a = float(np.median(x))
    notes: list[str] = []
    if options.method == "sign":
        primary = sign_test(x, y, options.margin, options.alternative)
    else:
        primary = mann_whitney(x, y, options.alternative)
    tests: tuple[TestResult, ...] = (primary, welch(x, y, options.alternative))
    if options.shape:
        shape_results, shape_notes = shape_of(x, y, name_a, name_b, unit)
        tests += shape_results
        notes += shape_notes
    pooled = np.concatenate([x, y])
    degenerate = bool(np.all(pooled == pooled[0]))
    if degenerate:
        notes.append("all values are identical (zero spread): no test is possible")
    comparison = Comparison(
        metric=metric,
        unit=unit,
        alpha=options.alpha,
        a=summarize(x, name_a, options.alpha),
        b=summarize(y, name_b, options.alpha),
        shift_estimate=shift.estimate,
        shift_ci=shift.ci,
        shift_relative=shift.estimate / median_a if median_a != 0 else None,
        tests=tests,
        verdict=DEGENERATE,
        bootstrap_ci=None
        if degenerate or options.bootstrap_resamples == 0
        else median_difference_ci(x, y, options.alpha, options.seed, options.bootstrap_resamples),
        bootstrap_seed=options.seed,
        method=options.method,
        shift_method=shift.method,
    )
    p = None if degenerate else decision_p(primary, options.alternative)
    verdict = _verdict(comparison, p, options.alternative)
    if options.method == "mw" and verdict == SAME and p is not None and p < options.alpha:
        notes.append(
            f"p = {p:.3g} is below alpha but the shift interval reaches over zero: not called a difference"
        )
    reason = cannot_tell_reason(x.size, y.size, options.alpha, options.alternative, options.method)
    if verdict == CANNOT_TELL and reason is not None:
        notes.insert(0, reason)
    for summary in (comparison.a, comparison.b):
        if summary.outliers:
            shown = ", ".join(f"{v:g}" for v in summary.outliers[:5])
            notes.append(
                f"{summary.name}: {len(summary.outliers)} outlier(s) by Tukey's fences ({shown}); kept"
            )
        if summary.n < SAMPLES_PER_VARIANT:
            notes.append(
                f"{summary.name}: only {summary.n} samples; ask for at least {SAMPLES_PER_VARIANT} "
                "when the distribution is unknown"
            )
    fields = _power_fields(x, y, options, verdict)
    return replace(comparison, verdict=verdict, notes=tuple(notes), **fields)  # type: ignore[arg-type]


def compare_many(
    baseline: Sequence[float] | FloatArray,
    variants: Mapping[str, Sequence[float] | FloatArray],
    metric: str,
    unit: str,
    options: Options | None = None,
    baseline_name: str = "baseline",
) -> list[Comparison]:
    """Return one Comparison per variant against the baseline, in the mapping's order.

    With more than one variant the p-values are Holm-adjusted (``p_adjusted``, ``correction``) and
    the verdicts follow the adjusted values; power advice is recomputed for verdicts that change.
    Raises StatsError as ``compare`` does, or when there is no variant.
    """
    options = options or Options()
    if not variants:
        raise StatsError("no variant to compare with the baseline")
    comparisons = [
        compare(baseline, values, metric, unit, options, baseline_name, name)
        for name, values in variants.items()
    ]
    if len(comparisons) == 1:
        return comparisons
    raw = [None if c.verdict == DEGENERATE else decision_p_value(c, options.alternative) for c in comparisons]
    adjusted = holm(raw)
    correction = f"Holm correction over {len(comparisons)} comparisons"
    result: list[Comparison] = []
    for comparison, p_adj in zip(comparisons, adjusted, strict=True):
        verdict = _verdict(comparison, p_adj, options.alternative)
        updated = replace(comparison, p_adjusted=p_adj, correction=correction, verdict=verdict)
        if verdict != comparison.verdict and comparison.power_n_per_side is None:
            x = np.asarray(comparison.a.values)
            y = np.asarray(comparison.b.values)
            updated = replace(updated, **_power_fields(x, y, options, verdict))  # type: ignore[arg-type]
        result.append(updated)
    return result

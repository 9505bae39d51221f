"""Sequential stopping (``--until precise``): when are there enough samples?

The statistics live in the stats stage (``bootscope.stats.sequential.precise_enough``, which looks
at the width of the shift's interval and never at a p-value, so that looking after every round does
not inflate false positives). This module turns it into a rule over a whole experiment:

- two or more variants: every variant against the baseline (the first variant) must be precise
  enough;
- one variant (nothing to compare): the median's distribution-free interval must be narrow enough,
  the same width criterion applied to the number the summary reports.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from bootscope import defaults
from bootscope.errors import InputError
from bootscope.metrics import BOOT_STOP_METRIC
from bootscope.stats.sequential import MIN_N_PER_SIDE, precise_enough
from bootscope.stats.summary import median_ci

# samples_by_variant (variant name -> values in seconds, measured ok boots in run order) -> stop now?
StopRule = Callable[[Mapping[str, Sequence[float]]], bool]

# The metric whose precision decides a boot run (seed 000 times the boot up to the shell).
STOP_METRIC = BOOT_STOP_METRIC


def precision_stop_rule(
    precision_rel: float,
    baseline: str,
    alpha: float = defaults.ALPHA,
    min_n: int = MIN_N_PER_SIDE,
) -> StopRule:
    """Return a rule that says stop once the samples are precise to ``precision_rel`` (0.01 = 1 %).

    With several variants the rule holds when, for every other variant, the (1 - alpha) interval of
    its shift against ``baseline`` has a half-width of at most ``precision_rel`` x the baseline's
    median; with ``baseline`` alone, when the median's (1 - alpha) interval does. Fewer than
    ``min_n`` values on any side never stop. Raises InputError for a precision outside (0, 1) and
    (when applied) KeyError if ``baseline`` is not among the samples."""
    if not 0 < precision_rel < 1:
        raise InputError(f"--precision must be between 0 and 100 % (got {precision_rel:%})")

    def rule(samples_by_variant: Mapping[str, Sequence[float]]) -> bool:
        base = samples_by_variant[baseline]
        others = [values for name, values in samples_by_variant.items() if name != baseline]
        if not others:
            return median_precise_enough(base, precision_rel, alpha, min_n)
        return all(precise_enough(base, values, precision_rel, alpha, min_n) for values in others)

    return rule


def median_precise_enough(
    values: Sequence[float], precision_rel: float, alpha: float, min_n: int = MIN_N_PER_SIDE
) -> bool:
    """Return True when the (1 - alpha) distribution-free interval of the median of ``values`` has a
    half-width of at most ``precision_rel`` x |median|, with at least ``min_n`` values (False while
    the sample is too small for that confidence). Raises StatsError on NaN or infinite values."""
    if len(values) < min_n:
        return False
    ci = median_ci(values, alpha)
    if ci is None:
        return False
    return (ci[1] - ci[0]) / 2.0 <= precision_rel * abs(float(np.median(values)))


def stop_rule_for(until: str | None, precision: float, baseline: str) -> StopRule | None:
    """Return the stopping rule for ``--until`` (None: run the fixed number of rounds); ``baseline``
    is the variant the others are compared with. ``precision`` is a fraction (0.01 = 1 %).

    Raises InputError for an unknown ``until`` or a precision outside (0, 1)."""
    if until is None:
        return None
    if until != "precise":
        raise InputError(f"--until must be 'precise' (got {until!r})")
    return precision_stop_rule(precision, baseline)

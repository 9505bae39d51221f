"""What a sample size can prove at all: the smallest p-value a test can return, and the boots a side
it takes to get below alpha.

A rank test on n and m values has only C(n + m, n) equally likely orderings under the null, so its
p-value cannot fall below the chance of the most extreme one: for the two-sided Mann-Whitney test
2 / C(n + m, n) (3 boots against 2: 2 / 10 = 0.2), one-sided 1 / C(n + m, n). Ties only make it larger.
The sign test (seed 000) takes the larger of two binomial tails, each at least 1/2 to the power of its
side's size, and a two-sided question doubles it. When that floor is not below alpha, "no significant
difference" would be a false comfort: the data could never have said otherwise, so bootscope says
"cannot tell".
"""

from __future__ import annotations

from math import comb

from bootscope.errors import StatsError

MAX_BOOTS_A_SIDE = 1000
ALTERNATIVES = ("two-sided", "less", "greater")


def smallest_p(n_a: int, n_b: int, alternative: str = "two-sided", method: str = "mw") -> float:
    """Return the smallest p-value (dimensionless, 0..1) that ``method`` (``mw``: Mann-Whitney, exact;
    ``sign``: seed 000's sign test) can return for ``n_a`` and ``n_b`` values, whatever they are.
    Raises StatsError for a side of fewer than 1 value, an unknown alternative or an unknown method."""
    if n_a < 1 or n_b < 1:
        raise StatsError(f"a side of {min(n_a, n_b)} values has no p-value")
    if alternative not in ALTERNATIVES:
        raise StatsError(f"unknown alternative {alternative!r}; use {', '.join(ALTERNATIVES)}")
    sides = 2 if alternative == "two-sided" else 1
    if method == "mw":
        # Integer over integer: exact, correctly rounded, and 0.0 only once it underflows.
        return min(1.0, sides / comb(n_a + n_b, n_a))
    if method == "sign":
        return min(1.0, sides * max(0.5**n_a, 0.5**n_b))
    raise StatsError(f"unknown method {method!r}; use mw or sign")


def boots_to_reach(alpha: float, alternative: str = "two-sided", method: str = "mw") -> int:
    """Return the smallest number of boots a side (equal sides) whose smallest possible p-value is
    below ``alpha``: fewer cannot show a difference whatever the boots. Raises StatsError for an
    alpha outside (0, 1) or when even MAX_BOOTS_A_SIDE boots a side are not enough."""
    if not 0 < alpha < 1:
        raise StatsError(f"alpha must lie between 0 and 1, not {alpha}")
    for n in range(1, MAX_BOOTS_A_SIDE + 1):
        if smallest_p(n, n, alternative, method) < alpha:
            return n
    raise StatsError(f"alpha {alpha} needs more than {MAX_BOOTS_A_SIDE} boots a side")


def cannot_tell_reason(
    n_a: int, n_b: int, alpha: float, alternative: str = "two-sided", method: str = "mw"
) -> str | None:
    """Return why ``n_a`` and ``n_b`` boots cannot show a difference at ``alpha`` (one sentence naming
    the smallest possible p and the boots a side that could), or None when they can. Raises as
    :func:`smallest_p` does."""
    floor = smallest_p(n_a, n_b, alternative, method)
    if floor < alpha:
        return None
    needed = boots_to_reach(alpha, alternative, method)
    return (
        f"cannot tell: {n_a} and {n_b} boots cannot reach p < {alpha:g} (smallest possible p = "
        f"{floor:.2g}); it takes at least {needed} boots a side"
    )

"""Power advice made cheap (issue 26 point 10): sizes that cannot reach alpha and sizes whose first
draws fall far short are not simulated in full, and the n found is the one a plain search over the
full simulation finds (the plain search is written here, over ``simulated_power``)."""

from __future__ import annotations

import pytest

from bootscope.stats import power
from bootscope.stats.power import n_for_power, simulated_power

# Run 1 of the demo store, kernel_init_s (s): tied to the microsecond, five boots a side.
SMP1 = [1.718984, 1.766521, 1.693542, 1.742236, 1.707395]
IC = [1.680316, 1.61856, 1.76009, 1.675419, 1.690127]


def _plain_search(a: list[float], b: list[float], detect: float, replicates: int) -> int | None:
    """The smallest n in 2..max whose full simulation reaches 0.8, by trying every n up to 400."""
    for n in range(2, 400):
        if simulated_power(a, b, detect, n, 0.05, 1, replicates) >= 0.8:
            return n
    return None


@pytest.mark.parametrize("detect", [0.05, 0.1])
def test_screened_search_finds_the_plain_searchs_n(detect: float) -> None:
    advice = n_for_power(SMP1, IC, detect, 0.05, 1, replicates=200)
    expected = _plain_search(SMP1, IC, detect, 200)
    assert advice.n_per_side == expected
    assert advice.achieved_power == pytest.approx(
        simulated_power(SMP1, IC, detect, expected or 2, 0.05, 1, 200)
    )


def test_sizes_that_cannot_reach_alpha_are_not_simulated(monkeypatch: pytest.MonkeyPatch) -> None:
    tried: list[int] = []
    real = power.verdict_rows

    def counting(a, b, alpha, alternative="two-sided"):  # type: ignore[no-untyped-def]
        tried.append(a.shape[1])
        return real(a, b, alpha, alternative)

    monkeypatch.setattr(power, "verdict_rows", counting)
    n_for_power(SMP1, IC, 0.1, 0.05, 1, replicates=200)
    assert 2 not in tried  # 2 a side: the smallest possible two-sided p is 1/3

"""`check`'s rule (bootscope.usecases.check_rule) on a noisy reference: the same boots pass, a planted
slowdown beyond what the reference resolves fails, a small one never fails, and the answer is the
same every time."""

from __future__ import annotations

import numpy as np
import pytest

from bootscope.usecases.check_rule import EXIT_PASS, EXIT_REGRESSION, check_boots
from bootscope.usecases.diff import BootParts
from bootscope.usecases.reference import Reference

# 24 boot times (s), sd about 0.25 s (numpy normal draw, seed 26, around 1.7 s, rounded to ms): with
# the old rule (margin 5 % of the median) these boots checked against themselves were "cannot tell".
NOISY = [1.315, 1.096, 1.931, 2.013, 1.966, 1.614, 1.685, 1.642, 1.974, 1.874, 1.712, 1.842, 1.972, 1.775,
         1.483, 1.685, 1.615, 1.382, 1.291, 1.73, 1.491, 1.783, 1.54, 1.861]  # fmt: skip
METRIC = "kernel_init_s"


def _reference(values: list[float]) -> Reference:
    return Reference({METRIC: tuple(values)}, {}, {})


def _boots(values: list[float]) -> list[BootParts]:
    return [BootParts(value, {}, "6.1.0", f"boot {i}") for i, value in enumerate(values)]


def _check(values: list[float]) -> tuple[int, str, float]:
    result = check_boots(
        _reference(NOISY), _boots(values), metric=METRIC, threshold=0.05, alpha=0.05, min_shift_s=0.001
    )
    assert result.reach is not None
    return result.exit_code, result.message, result.reach.margin_s


def test_the_same_boots_pass_with_the_defaults() -> None:
    code, message, margin_s = _check(NOISY)
    assert code == EXIT_PASS, message
    # The margin is wider than 5 % of the median (0.0849 s): what 24 boots of this spread resolve.
    assert margin_s > 0.05 * float(np.median(NOISY))
    assert message.startswith("pass:") and f"{margin_s:.4f} s" in message


def test_a_slowdown_beyond_the_resolution_fails() -> None:
    _, _, margin_s = _check(NOISY)
    # Every boot slower by twice the margin plus the resolution (the catch of the rule): found.
    slower = [value + 3 * margin_s for value in NOISY]
    code, message, _ = _check(slower)
    assert code == EXIT_REGRESSION and "total kernel_init_s" in message


@pytest.mark.parametrize("shift_s", [0.0, 0.01, -0.05])
def test_a_small_shift_or_a_speedup_is_never_a_regression(shift_s: float) -> None:
    code, message, _ = _check([value + shift_s for value in NOISY])
    assert code == EXIT_PASS, message


def test_the_answer_does_not_change_between_runs() -> None:
    reordered = NOISY[::-1]
    answers = {_check(reordered) for _ in range(3)} | {_check(NOISY)}
    assert len(answers) == 1
    # An undecided case (a shift about the size of the margin) gives the same count every time.
    _, _, margin_s = _check(NOISY)
    edge = [value + margin_s for value in NOISY]
    first = check_boots(_reference(NOISY), _boots(edge), metric=METRIC, threshold=0.05, alpha=0.05,
                        min_shift_s=0.001)  # fmt: skip
    again = check_boots(_reference(NOISY), _boots(edge), metric=METRIC, threshold=0.05, alpha=0.05,
                        min_shift_s=0.001)  # fmt: skip
    assert first == again

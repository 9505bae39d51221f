"""The one parser of amounts the user types: ``100ms``, ``0.1s``, ``250us``, ``5%`` or ``0.05``.

Used by every option that takes an amount (``compare --threshold``/``--min-effect``, ``run
--precision``, ``bisect-run --threshold``), so that each accepts the same spellings.
"""

from __future__ import annotations

import math
import re

from bootscope.errors import InputError

UNIT_FACTORS = {"s": 1.0, "ms": 1e3}
_AMOUNT = re.compile(r"^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*(%|s|ms|us|µs|ns)?\s*$")
_AMOUNT_TO_S = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


def parse_amount(text: str, unit: str, what: str) -> tuple[float | None, float | None]:
    """Return (absolute amount in ``unit``, None) or (None, fraction) for "1%".

    "100ms", "0.1s", "250us" carry their own unit; a bare number is in ``unit``. Raises InputError
    for text that is not an amount, or a zero or infinite one."""
    match = _AMOUNT.match(text)
    if not match:
        raise InputError(f"{what} {text!r} is not an amount such as 100ms, 0.1s or 1%")
    value, suffix = float(match.group(1)), match.group(2)
    if not math.isfinite(value) or value == 0:
        raise InputError(f"{what} must be a finite, non-zero amount, not {text!r}")
    if suffix == "%":
        return None, value / 100.0
    if suffix is None:
        return value, None
    return value * _AMOUNT_TO_S[suffix] * UNIT_FACTORS[unit], None


def parse_fraction(text: str, what: str, allow_zero: bool = False) -> float:
    """Return a relative amount, ``5%`` or a bare fraction ``0.05``, as a fraction in [0, 1) (zero
    only with ``allow_zero``). Raises InputError for anything else (a unit such as ``ms``, a negative
    value, 100 % or more)."""
    match = _AMOUNT.match(text)
    if not match or match.group(2) not in (None, "%"):
        raise InputError(f"{what} {text!r}: give a percentage such as 5% or a fraction such as 0.05")
    value = float(match.group(1)) / (100.0 if match.group(2) == "%" else 1.0)
    if not math.isfinite(value) or not 0 <= value < 1 or (value == 0 and not allow_zero):
        raise InputError(f"{what} {text!r} must lie between 0 and 100 %")
    return value

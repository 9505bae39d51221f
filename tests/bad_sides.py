"""Bad samples on one side of a two-sample statistic, and the start of the error each must raise: the
message names the side as the user wrote it (a or b)."""

from __future__ import annotations

import math

GOOD = [1.0, 2.0, 3.0]
BAD_SIDES = [
    ([1.0, math.nan], GOOD, r"^side a holds a NaN"),
    ([], GOOD, r"^side a has 0 sample\(s\)"),
    (GOOD, [math.inf, 1.0], r"^side b holds a NaN"),
    (GOOD, [], r"^side b has 0 sample\(s\)"),
]

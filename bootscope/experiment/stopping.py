"""The hook for sequential stopping (``--until precise``): when are there enough samples?

The rule itself is statistics and belongs to the stats stage; this module only defines its shape and
finds it. Until the stats stage provides ``bootscope.stats.sequential.precision_stop_rule``,
``--until precise`` is refused with a clear message.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence

from bootscope.errors import InputError

# samples_by_variant (variant name -> values in seconds, measured ok boots in run order) -> stop now?
StopRule = Callable[[Mapping[str, Sequence[float]]], bool]

# The metric whose precision decides (seed 000 times the boot up to the shell: userspace).
STOP_METRIC = "userspace_s"


def stop_rule_for(until: str | None, precision: float) -> StopRule | None:
    """Return the stopping rule for ``--until`` (None: run the fixed number of rounds).

    ``precision`` is a fraction (0.01 = 1 %). Raises InputError if the stats stage offers no rule yet."""
    if until is None:
        return None
    try:
        module = importlib.import_module("bootscope.stats.sequential")
        factory = module.precision_stop_rule
    except (ImportError, AttributeError):
        raise InputError(
            "--until precise needs bootscope.stats.sequential.precision_stop_rule, which this build lacks;"
            " use a fixed -n"
        ) from None
    rule: StopRule = factory(precision)
    return rule

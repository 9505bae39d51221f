"""``bootscope analyze --run ID --boot K``: a boot that ``bootscope run`` stored, analysed again.

The stored log is the raw console capture with host arrival times; it is read again exactly as
``bootscope run`` read it when the boot ended (:mod:`bootscope.analyze.stored`), so the host-side
metrics appear, a ``quiet`` console still shows what can be measured, and a better parser later gives
better answers for old runs.
"""

from __future__ import annotations

from collections.abc import Sequence

from bootscope.analyze.stored import StoredBoot, analyze_stored_boot
from bootscope.errors import InputError
from bootscope.store import Store


def stored_analysis(
    run: str | None,
    boot: int | None,
    db: str,
    logs: Sequence[str] | None,
    *,
    fmt: str,
    top: int,
    marker: str | None,
) -> StoredBoot:
    """Return the analysis of boot ``boot`` (its index in the run) of experiment ``run`` (or
    ``"latest"``) stored in ``db``, with the host-side metrics (seconds from QEMU's start) and the
    ``top`` largest gaps and initcalls. The variant's own ``--marker`` applies unless ``marker`` is
    given. Raises InputError when no run, no boot or also LOG files are given or ``top`` is below 1;
    StoreError for a missing database, run or boot."""
    if run is None:
        raise InputError("give LOG files to analyze, or --run ID --boot K for a stored boot")
    if logs:
        raise InputError("give LOG files or --run ID, not both")
    if boot is None:
        raise InputError("--run needs --boot K: the boot's index in the run (see `bootscope export`)")
    if top < 1:
        raise InputError("--top must be at least 1")
    with Store.open(db, create=False) as store:
        return analyze_stored_boot(store, run, boot, marker=marker, top_n=top, fmt=fmt)

"""Where a kept knob's saving came from: `diff`'s account of the knob's boots against the baseline's
in the run that settled it, the components (phases, initcalls, units) that shifted most, each as a
saving (positive when the tuned boot spent less there). Those diff calls moved come first; with the
few boots a tune spends an arm, the false discovery control over hundreds of initcalls often
leaves even a 6 s shift unresolved (4 boots a side: p >= 0.029 each), so the largest shifts are
shown too, each marked resolved or not, never called moved when diff did not. A component gone from
the tuned boots is a saving only where their logs still show its kind: under ``quiet`` the console
shows no phase at all, and the phases the baseline spent seconds in are not saved, only unseen."""

from __future__ import annotations

from dataclasses import dataclass

from bootscope.analyze.components import INITCALL, PHASE, UNIT
from bootscope.errors import BootscopeError
from bootscope.stats.attribution import DISAPPEARED
from bootscope.store import Store
from bootscope.usecases.diff import diff_run

MOVED_SHOWN = 3  # the largest moves a knob's account names
_FDR = 0.05


@dataclass(frozen=True, slots=True)
class Moved:
    """One component a knob moved: its kind (phase, initcall, unit), its name, the saving there (s,
    baseline minus tuned, Hodges-Lehmann; for a component gone from the tuned boots, its baseline
    median), its interval (None where there is none), whether diff calls it moved (``resolved``)
    and diff's status (compared, appeared, disappeared)."""

    kind: str
    name: str
    saving_s: float
    ci_s: tuple[float, float] | None
    resolved: bool = True
    status: str = "compared"


def where_saved(
    store: Store, run: int, variant: str, baseline: str, metric: str, alpha: float
) -> tuple[Moved, ...]:
    """Return the components that shifted most between ``baseline`` and ``variant`` in stored run
    ``run`` (at most MOVED_SHOWN: those diff calls moved first, then the largest shifts); none when
    the run's boots give no account (too few boots, a metric diff cannot take apart)."""
    try:
        found = diff_run(
            store, run, metric=metric, kinds=(PHASE, INITCALL, UNIT), baseline=baseline, variant=variant,
            alpha=alpha, fdr=_FDR,
        )  # fmt: skip
    except BootscopeError:
        return ()
    components = found.attribution.components
    seen = {c.kind for c in components if c.status != DISAPPEARED}  # kinds the tuned logs still show
    moved = [c for c in components if c.shift_s is not None and (c.status != DISAPPEARED or c.kind in seen)]
    moved.sort(key=lambda c: (not c.moved, -abs(c.shift_s or 0.0)))
    return tuple(
        Moved(
            c.kind,
            c.name,
            -(c.shift_s or 0.0),
            None if c.shift_ci_s is None else (-c.shift_ci_s[1], -c.shift_ci_s[0]),
            c.moved,
            c.status,
        )
        for c in moved[:MOVED_SHOWN]
    )

"""A stored tune read again without booting: its search replayed over its stored runs, for the
HTML report of any of its runs (``bootscope report --run ID``). A tune cut short (Ctrl-C, a crash)
has no answer yet: it says so and how to go on, and nothing is booted."""

from __future__ import annotations

from dataclasses import dataclass

from bootscope.errors import BootError, InputError
from bootscope.lab.plans.boot import Plan
from bootscope.store import Store
from bootscope.usecases.tune.resume import (
    PROBE,
    REQUEST,
    TUNE,
    TUNE_OF,
    Replay,
    request_from_document,
    runs_of,
)
from bootscope.usecases.tune.search import TuneResult, tune


@dataclass(frozen=True, slots=True)
class StoredTune:
    """The tune a stored run belongs to: its first run (the probe), what it found (None while it is
    unfinished or cannot be read again) and why there is no result ('' with one)."""

    probe: int
    result: TuneResult | None
    why: str = ""


class _Unfinished(Exception):
    """The replay reached a run the tune has not booted (or not finished) yet."""


def _refuse_boot(_plan: Plan, _meta: dict[str, str]) -> int:
    raise _Unfinished


def _refuse_finish(_run: int) -> None:
    raise _Unfinished


def stored_tune(store: Store, run: int) -> StoredTune | None:
    """Return the tune stored run ``run`` belongs to (it is the tune's probe or names it), read again
    from the stored runs without booting; None for a run that is no tune's. Raises StoreError."""
    meta = store.experiment(run).meta
    if meta.get(TUNE) == PROBE:
        probe = run
    elif meta.get(TUNE_OF, "").isdigit():
        probe = int(meta[TUNE_OF])
    else:
        return None
    record = store.experiment(probe)
    if REQUEST not in record.meta:
        return StoredTune(probe, None, f"run {probe} keeps no tune request")
    unfinished = f"the tune is unfinished: go on with `bootscope tune --resume {probe}`"
    try:
        request = request_from_document(record.meta[REQUEST])
        replay = Replay(runs_of(store, record), _refuse_boot, _refuse_finish)
        return StoredTune(probe, tune(request, store, runner=replay))
    except _Unfinished:
        return StoredTune(probe, None, unfinished)
    except (InputError, BootError) as error:
        return StoredTune(probe, None, str(error))

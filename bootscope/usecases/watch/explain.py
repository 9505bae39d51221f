"""``bootscope alert ID --by phase``: which components moved at an alert's step, from the stored logs.

For every step of an alert whose series is built from stored runs, the boots of the revisions before
the step (its back window) and those from it on (its fore window) are read again from their stored
logs and diffed (``usecases/diff.py``: every phase, initcall, gap, CPU or unit the ``--by`` kinds
name, each with its shift, interval and FDR-adjusted p). A series of fleet imports keeps no logs
here: its steps are named, not explained.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bootscope.errors import InputError
from bootscope.stats.attribution import DiffResult
from bootscope.store import Store
from bootscope.store.watch import Alert, AlertItem, load_alerts
from bootscope.store.watch_series import load_series
from bootscope.usecases.diff import BootParts, check_kinds, diff_parts, parts_from_run
from bootscope.usecases.watch.labels import REVISION
from bootscope.usecases.watch.series import variant_in_series


@dataclass(frozen=True, slots=True)
class ExplainedItem:
    """One step of an alert and the diff of its boots after against before (None, with ``why``,
    when its boots cannot be read again)."""

    item: AlertItem
    diff: DiffResult | None
    why: str = ""


def _windows(item: AlertItem, revisions: Sequence[str], steps: set[str]) -> tuple[set[str], set[str]]:
    """The step's back and fore windows, each cut at the series' other steps (``steps``: their
    first revisions): a diff of one step only."""
    at = revisions.index(item.revision)
    back = int(item.detail.get("n_back", 0) or 0)
    fore = int(item.detail.get("n_fore", 0) or 0)
    low, high = max(0, at - back), min(len(revisions), at + fore)
    for i, revision in enumerate(revisions):
        if revision in steps and i != at:
            low = max(low, i) if i < at else low
            high = min(high, i) if i > at else high
    return set(revisions[low:at]), set(revisions[at:high])


def _sides(
    store: Store, item: AlertItem, metric: str, kinds: Sequence[str]
) -> tuple[list[BootParts], list[BootParts], str]:
    """The boots of the revisions before the step and from it on, from the series' stored runs."""
    series = next(iter(load_series(store, [item.series])), None)
    if series is None:
        return [], [], "its series is no longer stored (run `bootscope watch`)"
    steps = {
        other.revision
        for alert in load_alerts(store)
        for other in alert.items
        if other.series == item.series and other.shift is not None and other.component == item.component
    }
    before, after = _windows(item, series.revisions, steps)
    a: list[BootParts] = []
    b: list[BootParts] = []
    for run in sorted(series.runs):
        record = store.experiment(run)
        variant = variant_in_series(record, item.series, item.metric, series.component)
        if variant is None:
            continue
        _, by_variant = parts_from_run(store, run, metric, kinds)
        for boot in by_variant.get(variant, []):
            revision = record.meta.get(REVISION) or boot.kernel or ""
            if revision in before:
                a.append(boot)
            elif revision in after:
                b.append(boot)
    return a, b, ""


def explain_alert(db: str, alert: Alert, by: Sequence[str], alpha: float) -> list[ExplainedItem]:
    """Return, for every step of ``alert`` (missing-data items left out), the diff of the boots
    around it by the ``by`` kinds (phase, initcall, gap, cpu, unit). Raises InputError for an unknown
    kind, StoreError."""
    kinds = check_kinds(by)
    explained: list[ExplainedItem] = []
    with Store.open(db, create=False) as store:
        for item in alert.items:
            if item.shift is None:
                continue
            if item.fingerprint.get("source") != "run":
                explained.append(
                    ExplainedItem(item, None, "a fleet series: its logs are not kept in the store")
                )
                continue
            a, b, why = _sides(store, item, item.metric, kinds)
            if why or len(a) < 2 or len(b) < 2:
                explained.append(
                    ExplainedItem(
                        item,
                        None,
                        why or f"{len(a)} and {len(b)} boots around the step: a diff needs 2 a side",
                    )
                )
                continue
            try:
                # The revisions are the change under test: a kernel release that differs between
                # them is the change itself (a release or a built commit), not a mismatch.
                diff = diff_parts(
                    a, b, metric=item.metric, names=(f"before {item.revision}", f"from {item.revision}"),
                    kinds=kinds, source=f"alert {alert.id}", alpha=alpha, fdr=alpha,
                    compared=frozenset({"kernel release"}),
                )  # fmt: skip
            except InputError as error:
                explained.append(ExplainedItem(item, None, str(error)))
                continue
            explained.append(ExplainedItem(item, diff))
    return explained

"""The one analysis of a stored boot, used by every command that reads a stored run.

``analyze --run``, ``report --run``, ``trace --run``, ``plot --run`` and the metrics that ``run`` and
``kexec`` store (hence ``compare``) all read a stored boot through :func:`analyze_captured` with the
same inputs: the final attempt's captured console, its host start time and its variant's marker.
So the same boot gives the same numbers in every command. A board's warm or kexec reboot is read
from the new boot's start: its stored console begins with the old system's last lines (kept for
``reboot_stop_s``), which are not this boot's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bootscope import defaults
from bootscope.analyze.captured import CapturedAnalysis, analyze_captured, user_marker
from bootscope.errors import StoreLookupError
from bootscope.parse.reboot_start import new_boot_start
from bootscope.store import BootRecord, ExperimentRecord, Store


@dataclass(frozen=True, slots=True)
class StoredBoot:
    """A stored boot, analysed: the experiment, the record of its final attempt, the analysis and a
    label for reports (``run 3 boot 7 (variant)``)."""

    experiment: ExperimentRecord
    record: BootRecord
    analysis: CapturedAnalysis
    label: str


def final_attempt(boots: Sequence[BootRecord], index: int) -> BootRecord | None:
    """Return the attempt that counts at ``index``: not superseded, else the latest (the one
    ``Store.boot_log`` returns), or None if there is none."""
    attempts = [boot for boot in boots if boot.index == index]
    return min(attempts, key=lambda boot: (boot.superseded, -boot.attempt), default=None)


def variant_marker(experiment: ExperimentRecord, variant: str) -> str | None:
    """Return the marker regex that ``variant`` of ``experiment`` ended its boots on (None: bootscope's
    own marker, or a workload without one)."""
    for record in experiment.variants:
        if record.name == variant:
            marker = record.config.get("marker")
            return user_marker(marker) if isinstance(marker, str) else None
    return None


def reboots_a_running_board(experiment: ExperimentRecord, variant: str) -> bool:
    """Whether ``variant`` of ``experiment`` rebooted a running board (warm or kexec through its
    shell), so that its stored consoles begin with the old system's last lines."""
    for record in experiment.variants:
        if record.name == variant:
            return "board" in record.config and record.config.get("reboot") in ("warm", "kexec")
    return False


def analyze_stored_boot(
    store: Store,
    run: int | str,
    index: int,
    *,
    marker: str | None = None,
    top_n: int = defaults.TOP_N,
    fmt: str = "auto",
    records: Sequence[BootRecord] | None = None,
) -> StoredBoot:
    """Return boot ``index`` of stored experiment ``run`` (an id or ``latest``), analysed with its
    variant's marker unless ``marker`` is given. ``records`` saves re-reading the experiment's boots.
    Raises StoreLookupError for a missing run or boot, InputError for a bad marker or format."""
    experiment = store.experiment(run)
    record = final_attempt(records if records is not None else store.boots(experiment.id), index)
    if record is None:
        raise StoreLookupError(f"{store.name}: experiment {experiment.id} has no boot {index}")
    captured = store.boot_log(experiment.id, index)
    if reboots_a_running_board(experiment, record.variant):
        captured = captured[new_boot_start(captured) :]
    analysis = analyze_captured(
        captured,
        host_start_ns=record.host_start_ns,
        marker_regex=marker if marker is not None else variant_marker(experiment, record.variant),
        top_n=top_n,
        fmt=fmt,
    )
    label = f"run {experiment.id} boot {index} ({record.variant})"
    return StoredBoot(experiment, record, analysis, label)

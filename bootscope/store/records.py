"""The rows the store hands out and takes in: plain frozen dataclasses, no database types.

Times of day are ISO 8601 strings in UTC (``created``, ``started_at``); host clock readings are
``time.monotonic_ns()`` values (``host_start_ns``), comparable only within one host boot.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bootscope.model import Outcome

# Experiment life cycle: running -> complete, or running -> interrupted (Ctrl-C, crash, kill);
# an interrupted experiment can be resumed, which sets it back to running.
STATUS_RUNNING = "running"
STATUS_COMPLETE = "complete"
STATUS_INTERRUPTED = "interrupted"


@dataclass(frozen=True, slots=True)
class VariantRecord:
    """One variant of an experiment: its name and the options it boots with (JSON-able)."""

    name: str
    config: Mapping[str, Any] = field(default_factory=dict)
    id: int | None = None


@dataclass(frozen=True, slots=True)
class Owner:
    """The process that created or resumed an experiment: pid, host name, and its start time
    (``BOOT_ID:START_TICKS``, None where /proc is absent) so that a reused pid is not mistaken for it."""

    pid: int
    host: str
    started: str | None


@dataclass(frozen=True, slots=True)
class ExperimentRecord:
    """One experiment: the plan it ran, the seed of its order, the accelerator and the host."""

    id: int
    created: str
    plan: Mapping[str, Any]
    seed: int
    accel: str
    accel_reason: str
    host: Mapping[str, Any]
    status: str
    variants: tuple[VariantRecord, ...] = ()
    owner: Owner | None = None  # None for experiments stored before owners were recorded
    meta: Mapping[str, str] = field(default_factory=dict)  # --meta KEY=VALUE labels (schema 4)


@dataclass(frozen=True, slots=True)
class BootRecord:
    """One boot attempt at one position (``index``) of an experiment's order.

    ``attempt`` counts re-runs of the same position (0 first); ``superseded`` is True for an attempt
    that a later attempt replaced (a boot disturbed by host load and re-run). ``metrics`` holds the
    boot's metric values in seconds; a metric the boot did not reach is absent or None.
    ``other_cpu_s`` and ``steal_s`` are CPU seconds other processes used and the hypervisor stole
    while the boot ran. ``placement`` says where it was measured: ``host``, ``cpu_model``, ``cores``
    (the host CPU ids the guest was pinned to, or could use), ``load_1m`` (the host's load average as
    the boot ended), ``other_cpus`` (CPUs other processes kept busy meanwhile) and, for a boot run by a
    Dask worker, ``worker`` (its Dask address); empty for boots stored before schema 3.
    """

    variant: str
    index: int
    warmup: bool
    outcome: str
    reason: str = ""
    accel: str = ""
    command: tuple[str, ...] = ()
    kernel_release: str | None = None
    host_start_ns: int | None = None
    disturbed: bool = False
    other_cpu_s: float | None = None
    steal_s: float | None = None
    started_at: str | None = None
    attempt: int = 0
    superseded: bool = False
    metrics: Mapping[str, float | None] = field(default_factory=dict)
    id: int | None = None
    placement: Mapping[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when the attempt ended ok (whatever it is: final or not, a warm-up or not)."""
        return self.outcome == Outcome.OK

    @property
    def measured(self) -> bool:
        """True for the final attempt at its position (not superseded) that is not a warm-up, however
        it ended."""
        return not self.superseded and not self.warmup

    @property
    def final_ok(self) -> bool:
        """True for the final attempt at its position (not superseded) that ended ok, warm-up or not."""
        return not self.superseded and self.outcome == Outcome.OK

    @property
    def counts(self) -> bool:
        """True for a boot that counts in statistics: the final attempt, ended ok, not a warm-up."""
        return self.final_ok and not self.warmup


@dataclass(frozen=True, slots=True)
class ExperimentSummary:
    """An experiment with its boot counts: every attempt stored, and the final ones ok or failed."""

    experiment: ExperimentRecord
    boots: int
    ok: int
    failed: int

"""Workloads: what one slot of an experiment measures, and which records it yields.

A workload owns its plan (variants and settings), prepares what its guests need on a target, and
runs one slot of the schedule at a time, handing every finished measurement to ``SlotRun.emit``,
which stores it at once. The runner (:mod:`bootscope.lab.runner`) owns everything else: the order,
``-j``, warm-ups, the stopping rule, resume, quiet-host and the experiment's status.

A slot owns a fixed range of record indices (``records_per_slot`` of them, from
``SlotRun.first_index``): one boot, or the kernels of one kexec chain. That makes every index
deterministic, so ``--resume`` knows what is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from bootscope.lab.schedule import Slot
from bootscope.lab.target import LineCallback, StartCallback, Target
from bootscope.model import LogLine
from bootscope.sources.accel import AccelChoice
from bootscope.store.records import BootRecord, VariantRecord


@dataclass(frozen=True, slots=True)
class RunSettings:
    """How the runner runs a plan: ``samples_per_variant`` measured slots per variant after
    ``warmup_per_variant`` warm-up slots, in the order ``seed`` shuffles; ``jobs`` slots at once;
    ``quiet_host`` waits for an idle host and re-runs disturbed slots; ``until="precise"`` adds rounds
    (up to ``max_n``) until the stopping rule holds at ``precision`` (a fraction); ``accel`` is the
    accelerator asked for (auto, kvm, tcg)."""

    seed: int
    samples_per_variant: int
    warmup_per_variant: int = 0
    accel: str = "auto"
    jobs: int = 1
    quiet_host: bool = False
    until: str | None = None
    precision: float = 0.01
    max_n: int | None = None


@dataclass(frozen=True, slots=True)
class SlotRun:
    """One attempt at one slot, as the runner hands it to a workload.

    ``first_index`` is the slot's first record index; ``affinity`` the host CPUs to pin the guest to
    (None: no pinning); ``accel`` the accelerator chosen for the experiment. Pass ``on_line`` and
    ``on_start`` to the target's ``boot`` (they make Ctrl-C and host-load metering work); call
    ``emit`` once per finished measurement (it stores the record and its log, filling in attempt,
    accelerator, start time and host load) and ``cancelled`` before emitting a boot that Ctrl-C cut.
    """

    slot: Slot
    attempt: int
    first_index: int
    affinity: tuple[int, ...] | None
    accel: str
    on_line: LineCallback
    on_start: StartCallback
    emit: Callable[[BootRecord, Sequence[LogLine]], BootRecord]
    cancelled: Callable[[], bool]


class Workload(Protocol):
    """What an experiment measures. Implementations: :class:`bootscope.lab.boot.BootWorkload` (one
    QEMU boot per slot), :class:`bootscope.lab.kexec.KexecWorkload` (a chain of kexec reboots)."""

    kind: ClassVar[str]

    @property
    def settings(self) -> RunSettings:
        """How the runner runs the plan."""

    @property
    def variants(self) -> tuple[str, ...]:
        """The variant names, baseline first."""

    @property
    def records_per_slot(self) -> int:
        """How many record indices one slot owns."""

    @property
    def stop_metric(self) -> str:
        """The metric whose precision ``--until precise`` judges."""

    @property
    def max_smp(self) -> int:
        """The most guest CPUs any variant uses (to give each parallel job its own cores)."""

    def document(self) -> dict[str, Any]:
        """Return the plan as JSON (stored with the experiment; ``from_document`` reads it back)."""

    def variant_records(self) -> list[VariantRecord]:
        """Return each variant with its options, for the store."""

    def choose_accel(self, target: Target, requested: str, reprobe: bool = False) -> AccelChoice:
        """Return the accelerator to use for ``requested`` on ``target``, and why."""

    def prepare(self, target: Target, accel: str) -> list[str]:
        """Resolve kernels and build images on ``target`` for ``accel``; return notes for the user.
        Raises BootError/InputError before anything is stored."""

    def slot_done(self, slot: Slot, records: Sequence[BootRecord]) -> bool:
        """Return True if the final (not superseded) ``records`` in the slot's index range complete it."""

    def run_slot(self, run: SlotRun, target: Target) -> None:
        """Measure one slot on ``target``, emitting each record as soon as it is complete."""


def first_index(slot: Slot, records_per_slot: int) -> int:
    """Return the first record index that ``slot`` owns (1-based over the experiment)."""
    return (slot.index - 1) * records_per_slot + 1


def in_slot(records: Sequence[BootRecord], slot: Slot, records_per_slot: int) -> list[BootRecord]:
    """Return the ``records`` whose index lies in ``slot``'s range, superseded ones included."""
    low = first_index(slot, records_per_slot)
    return [record for record in records if low <= record.index < low + records_per_slot]


WorkloadFactory = Callable[[Mapping[str, Any]], Workload]


def workload_from_document(document: Mapping[str, Any]) -> Workload:
    """Return the workload that a stored plan document describes (for ``--resume``).

    Raises InputError if the document names no known workload or cannot be read."""
    # Imported here: the workload modules import this one for the protocol and SlotRun.
    from bootscope.errors import InputError
    from bootscope.lab.boot import BootWorkload
    from bootscope.lab.kexec import KexecWorkload
    from bootscope.lab.latency_workload import LatencyWorkload
    from bootscope.lab.ssh_workload import SshWorkload

    factories: dict[str, WorkloadFactory] = {
        BootWorkload.kind: BootWorkload.from_document,
        KexecWorkload.kind: KexecWorkload.from_document,
        LatencyWorkload.kind: LatencyWorkload.from_document,
        SshWorkload.kind: SshWorkload.from_document,
    }
    kind = str(document.get("workload", BootWorkload.kind))
    if kind not in factories:
        raise InputError(f"the stored plan names workload {kind!r}, which this bootscope cannot run")
    return factories[kind](document)

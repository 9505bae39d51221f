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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from bootscope.lab.plans.schedule import Slot
from bootscope.lab.plans.settings import RunSettings
from bootscope.lab.qemu.accel import AccelChoice
from bootscope.lab.targets.base import LineCallback, StartCallback, Target
from bootscope.lab.where import Where
from bootscope.model import LogLine
from bootscope.store.records import BootRecord, VariantRecord


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
    """What an experiment measures. Implementations: :class:`bootscope.lab.workloads.boot.BootWorkload` (one
    QEMU boot per slot), :class:`bootscope.lab.workloads.kexec.KexecWorkload` (a chain of kexec reboots),
    :class:`bootscope.lab.workloads.ssh.SshWorkload` (a reboot of a machine),
    :class:`bootscope.lab.workloads.latency.LatencyWorkload` (a latency tool's run).

    A workload states the capabilities it needs of a target (``needs``, names from
    :mod:`bootscope.lab.targets.base`; the runner checks them before anything is stored) and the place
    its plan names (``where``: None for any target that has them); it never builds its own target."""

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

    @property
    def needs(self) -> tuple[str, ...]:
        """The capabilities the target must have (see :func:`bootscope.lab.targets.base.require`)."""

    def worker_labels(self, variant: str) -> tuple[tuple[str, str], ...]:
        """Return the labels (KEY, VALUE) a Dask worker must carry to measure ``variant`` (a host
        kernel, seed 001); empty: any worker, or this host."""

    def where(self) -> Where:
        """Return the place the plan names (this host, an SSH machine, a board; for guests this
        host's QEMU, where any target that boots guests will do)."""

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

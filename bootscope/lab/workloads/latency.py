"""The latency workload: one slot is one tool run (cyclictest, oslat or rtla timerlat), one record.

The runner interleaves the variants' runs in its seeded order and stores each record the moment its
run ends (``SlotRun.emit``); ``--resume`` rebuilds this workload from the stored plan
(:func:`bootscope.lab.workloads.workload_from_document`). Where the tool runs is the target the runner
hands over, through the variant's place (:mod:`bootscope.lab.workloads.latency_place`): a target that
runs commands for ``local`` (this host) or an SSH URL (that machine), one that boots guests otherwise.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, ClassVar

from bootscope import metrics
from bootscope.lab.plans.latency import (
    LatencyPlan,
    LatencyVariant,
    latency_plan_from_dict,
    short_run_notes,
    unequal_settings,
)
from bootscope.lab.plans.schedule import Slot
from bootscope.lab.plans.settings import RunSettings
from bootscope.lab.qemu.accel import AccelChoice
from bootscope.lab.targets.base import BOOTS_GUESTS, RUNS_COMMANDS, Target, guests
from bootscope.lab.where import QEMU_PLACE, Where, stored_where
from bootscope.lab.workloads.latency_place import LatencyPlace, place_for
from bootscope.lab.workloads.latency_record import record_from_transcript
from bootscope.lab.workloads.protocol import SlotRun
from bootscope.model import Outcome
from bootscope.store.records import BootRecord, VariantRecord

LOCAL_ACCEL = "none"
TCG_NOTE = (
    "the guests run under TCG (QEMU's emulator): their latencies are those of an emulated CPU on a"
    " shared host, not hardware latencies; compare variants with each other, never with real machines"
)


@dataclass(slots=True)
class LatencyWorkload:
    """The plan's variants, one tool run per slot, each on its variant's place."""

    plan: LatencyPlan
    kind: ClassVar[str] = "latency"
    places: dict[str, LatencyPlace] = field(default_factory=dict)

    @classmethod
    def from_document(cls, document: Mapping[str, Any]) -> LatencyWorkload:
        """Return the workload of a stored plan (see :meth:`document`); raises InputError."""
        return cls(latency_plan_from_dict(document))

    @property
    def settings(self) -> RunSettings:
        """The plan's run settings."""
        return self.plan.settings()

    @property
    def variants(self) -> tuple[str, ...]:
        """The variant names, baseline first."""
        return tuple(v.name for v in self.plan.variants)

    @property
    def records_per_slot(self) -> int:
        """One tool run per slot."""
        return 1

    @property
    def stop_metric(self) -> str:
        """The run's p99.9 (the deepest tail a short run resolves)."""
        return metrics.LATENCY_P999_US

    @property
    def max_smp(self) -> int:
        """The cores one slot takes: the most guest CPUs of any variant, or for ``local`` every CPU
        this process may use (a Dask worker's ``--cores``: the tool measures all of them)."""
        if self.local:
            return len(os.sched_getaffinity(0))
        if not self.guest:
            return 1  # an SSH machine's CPUs are not this host's
        return max(v.smp for v in self.plan.variants)

    @property
    def local(self) -> bool:
        """True when every variant runs on this machine (no guest)."""
        return all(v.local for v in self.plan.variants)

    @property
    def guest(self) -> bool:
        """True when the variants run in QEMU guests (the plan never mixes guests and machines)."""
        return any(v.guest for v in self.plan.variants)

    @property
    def needs(self) -> tuple[str, ...]:
        """A target that boots guests for kernel variants, else one that runs commands."""
        return (BOOTS_GUESTS,) if self.guest else (RUNS_COMMANDS,)

    def worker_labels(self, variant: str) -> tuple[tuple[str, str], ...]:
        """No variant asks for a labelled worker."""
        return ()

    def where(self) -> Where:
        """Return the machine the plan names (this host, an SSH machine, a board), this host's QEMU
        for guests."""
        if self.guest:
            return QEMU_PLACE
        return stored_where(self.plan.variants[0].kernel, self.plan.identity, self.plan.known_hosts)

    def document(self) -> dict[str, Any]:
        """Return the plan as stored with the experiment."""
        return {"workload": self.kind, "command": "latency run", **self.plan.to_dict()}

    def variant_records(self) -> list[VariantRecord]:
        """Return each variant's kernel, command line and tool settings for the store."""
        return [
            VariantRecord(
                v.name, {"kernel": v.kernel, "append": v.append, "smp": v.smp, **asdict(v.settings)}
            )
            for v in self.plan.variants
        ]

    def choose_accel(self, target: Target, requested: str, reprobe: bool = False) -> AccelChoice:
        """Return ``none`` for a machine (no guest), else the target's choice probed with the first kernel."""
        if self.local:
            return AccelChoice(LOCAL_ACCEL, "the tools run on this machine: no guest")
        if not self.guest:
            return AccelChoice(LOCAL_ACCEL, f"the tools run on {self.plan.variants[0].kernel}: no guest")
        target = guests(target, self.kind)
        first = self.plan.variants[0]
        kernel = target.resolve_kernel(first.kernel)
        return target.choose_accel(requested, kernel.image, target.build_initramfs((), ()), reprobe)

    def prepare(self, target: Target, accel: str) -> list[str]:
        """Get every variant's place ready; return notes: settings that differ (allowed), runs too
        short for a tail quantile, timerlat fallbacks, what a TCG comparison means. Raises
        BootError or InputError before anything is stored."""
        notes: list[str] = []
        unequal = unequal_settings(self.plan.variants)
        if unequal:
            notes.append(
                f"WARNING: the variants differ in {', '.join(unequal)} (--allow-unequal): a difference"
                " between them is not the kernel's alone"
            )
        notes += short_run_notes(self.plan.variants)
        for variant in self.plan.variants:
            place = self.places.get(variant.name) or place_for(variant)
            notes += place.prepare(variant, target, accel)
            self.places[variant.name] = place
        if accel == "tcg":
            notes.append(TCG_NOTE)
        return notes

    def slot_done(self, slot: Slot, records: Sequence[BootRecord]) -> bool:
        """A run is done once it has a final record."""
        return bool(records)

    def run_slot(self, run: SlotRun, target: Target) -> None:
        """Run the slot's variant once and emit its record with the whole transcript, unless
        Ctrl-C cut the run (its numbers would then describe a shorter run)."""
        variant = self._variant(run.slot.variant)
        measurement = self.places[variant.name].measure(variant, run, target)
        if run.cancelled():
            raise KeyboardInterrupt
        record = record_from_transcript(
            measurement.lines, variant.name, run.first_index, run.slot.warmup, measurement.command
        )
        if measurement.outcome != Outcome.OK.value:
            record = replace(record, outcome=measurement.outcome, reason=measurement.reason or record.reason,
                             metrics={})  # fmt: skip
        record = replace(record, accel=measurement.accel, host_start_ns=measurement.host_start_ns)
        run.emit(record, measurement.lines)

    def _variant(self, name: str) -> LatencyVariant:
        return next(v for v in self.plan.variants if v.name == name)

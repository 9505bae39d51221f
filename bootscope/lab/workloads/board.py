"""The board workload: one slot is one boot of a board from power-on (labgrid), stored as one boot.

The runner hands it the board its plan names (:class:`bootscope.lab.targets.labgrid.board.LabgridBoard`,
opened from the stored plan, so ``--resume`` reaches the same board) or a test's own. The board is
switched off and on, its console read until the marker; the boot is analysed like any console
(:func:`bootscope.analyze.captured.measure`), and ``poweron_to_kernel_s`` is the time from the
power-on order to the kernel's first stamped line (the firmware and the boot loader, which printk
stamps never see).
"""

from __future__ import annotations

import atexit
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from bootscope.analyze.captured import measure
from bootscope.lab.plans.board import REBOOT_COLD, REBOOT_KEXEC, BoardPlan, board_plan_from_dict
from bootscope.lab.plans.schedule import Slot
from bootscope.lab.plans.settings import RunSettings
from bootscope.lab.qemu.accel import AccelChoice
from bootscope.lab.targets.base import POWERS_ON, Target, powered
from bootscope.lab.where import Where, stored_where
from bootscope.lab.workloads.protocol import SlotRun
from bootscope.lab.workloads.ssh_timeline import Timeline, console_marks, reboot_metrics
from bootscope.metrics import (
    BOOT_METRICS,
    HOST_KERNEL_START_S,
    HOST_WALL_S,
    KERNEL_INIT_S,
    POWERON_TO_KERNEL_S,
    PREKERNEL_METRICS,
    RESTART_TO_MARKER_S,
)
from bootscope.model import Boot
from bootscope.parse.reboot_start import new_boot_start
from bootscope.store.records import BootRecord, VariantRecord


@dataclass(slots=True)
class BoardWorkload:
    """The plan's variants (the ways the board is rebooted), one boot of the board per slot."""

    plan: BoardPlan
    kind: ClassVar[str] = "board"

    @classmethod
    def from_document(cls, document: Mapping[str, Any]) -> BoardWorkload:
        """Return the workload of a stored plan (see :meth:`document`); raises InputError."""
        return cls(board_plan_from_dict(document))

    @property
    def settings(self) -> RunSettings:
        """One boot at a time: one board."""
        return self.plan.settings()

    @property
    def variants(self) -> tuple[str, ...]:
        """One variant per way the board is rebooted (cold, warm, kexec)."""
        return self.plan.variant_names

    @property
    def records_per_slot(self) -> int:
        """One boot per slot."""
        return 1

    @property
    def stop_metric(self) -> str:
        """The kernel's own time to init."""
        return KERNEL_INIT_S

    @property
    def max_smp(self) -> int:
        """No guest CPUs on this host to share out."""
        return 1

    @property
    def needs(self) -> tuple[str, ...]:
        """A board whose power is switched."""
        return (POWERS_ON,)

    def worker_labels(self, variant: str) -> tuple[tuple[str, str], ...]:
        """No variant asks for a labelled worker."""
        return ()

    def where(self) -> Where:
        """Return the board the plan names."""
        return stored_where(self.plan.board)

    def document(self) -> dict[str, Any]:
        """Return the plan as stored with the experiment."""
        return {"workload": self.kind, **self.plan.to_dict()}

    def variant_records(self) -> list[VariantRecord]:
        """Return the variants' options for the store."""
        plan = self.plan
        return [
            VariantRecord(
                variant.name,
                {
                    "board": plan.board,
                    "reboot": variant.reboot,
                    "append": variant.append,
                    "cmdline": variant.cmdline,
                    "marker": plan.marker,
                },
            )
            for variant in plan.ways
        ]

    def choose_accel(self, target: Target, requested: str, reprobe: bool = False) -> AccelChoice:
        """Nothing to choose: what the machine runs on (a board's hardware, a domain's KVM or TCG)."""
        return powered(target, self.kind).accel()

    def prepare(self, target: Target, accel: str) -> list[str]:
        """Check the target is a board, reach it (its labgrid places acquired) and, for warm or kexec
        reboots, its shell driver (for a cold boot with words, a power driver or a U-Boot prompt that
        takes them, the board's own line learnt first where a variant adds words to it) before
        anything is stored, and let it go (off, places released) when the process ends at the
        latest; no notes."""
        board = powered(target, self.kind)
        atexit.register(board.close)
        board.open()
        if self.plan.needs_shell:
            board.check_shell()
        cold = [v for v in self.plan.ways if v.reboot == REBOOT_COLD]
        if any(v.has_words for v in cold):
            need_own = any(not v.cmdline for v in cold)
            board.give_command_lines(self.plan.timeout_s, self.plan.marker, need_own)
        return []

    def slot_done(self, slot: Slot, records: Sequence[BootRecord]) -> bool:
        """A slot is done once it has a final record."""
        return bool(records)

    def run_slot(self, run: SlotRun, target: Target) -> None:
        """Boot the board once the slot's way (from power-on, or a warm or kexec reboot through its
        shell) and emit the boot, unless Ctrl-C stopped it."""
        board = powered(target, self.kind)
        plan = self.plan
        variant = plan.variant(run.slot.variant)
        way = variant.reboot
        if way == REBOOT_COLD:
            boot = board.power_cycle(
                plan.timeout_s, plan.marker, run.on_line, plan.needs_shell, run.on_start, variant
            )
        else:
            boot = board.reboot(way, plan.timeout_s, plan.marker, run.on_line, run.on_start, variant)
        if run.cancelled():
            raise KeyboardInterrupt
        metrics, release, note = board_metrics(boot, way, plan.marker)
        record = BootRecord(
            variant=variant.name,
            index=run.first_index,
            warmup=run.slot.warmup,
            outcome=boot.outcome.value,
            reason="; ".join(part for part in (boot.reason, note) if part),
            accel=board.accel().accel,
            command=boot.command,
            kernel_release=release,
            host_start_ns=boot.host_start_ns,
            metrics=metrics,
        )
        run.emit(record, boot.lines)


def board_metrics(boot: Boot, way: str, marker: str) -> tuple[dict[str, float | None], str | None, str]:
    """Return (metrics, kernel release, note) of one board boot ``way`` (see the registry): a cold
    boot's from power-on; a warm or kexec reboot's from its order, the new boot's own read from its
    lines after the old kernel's last one."""
    if not boot.lines:
        return {}, None, ""
    lines = boot.lines
    if way != REBOOT_COLD:
        lines = lines[new_boot_start(lines) :]
    found, release, note = measure(
        replace(boot, lines=lines), marker, None, (*BOOT_METRICS, *PREKERNEL_METRICS)
    )
    metrics = {name: value for name, value in found.items() if name not in (HOST_KERNEL_START_S, HOST_WALL_S)}
    restart = found.get(HOST_WALL_S)
    if way == REBOOT_COLD:
        metrics[POWERON_TO_KERNEL_S] = found.get(HOST_KERNEL_START_S)
        metrics[HOST_WALL_S] = restart
    else:
        ordered = Timeline(ordered_ns=boot.host_start_ns, marks=console_marks(boot.lines))
        metrics |= reboot_metrics(ordered, kexec=way == REBOOT_KEXEC)
    metrics[RESTART_TO_MARKER_S] = restart
    return metrics, release, note

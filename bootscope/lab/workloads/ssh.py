"""The SSH reboot workload: one slot is one reboot of a real machine, stored as one boot.

The runner hands it a target that reboots: the machine its plan names
(:class:`bootscope.lab.targets.ssh.machine.SshMachine`, opened from the stored plan, so ``--resume``
reaches the same machine) or a fake rebooting machine in tests; kernels, initramfs images and
accelerators are the machine's business. Before anything is stored it
checks that SSH answers with a known host key, that the machine is not the one bootscope runs on
(unless ``yes_this_machine``), that kexec can load a kernel there (``--reboot kexec``), and reads the
machine's command line, which kexec variants add to.

A machine that does not come back within the timeout is stored as ``timeout`` and stops the run
(no further reboots of an unreachable machine); such a slot is not done, so ``--resume`` measures
it again once the machine is back.
"""

from __future__ import annotations

import atexit
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from bootscope.errors import BootError, InputError
from bootscope.lab.plans.schedule import Slot
from bootscope.lab.plans.settings import RunSettings
from bootscope.lab.plans.ssh import REBOOT_KEXEC, SshPlan, SshVariant, ssh_plan_from_dict
from bootscope.lab.qemu.accel import AccelChoice
from bootscope.lab.targets.base import REBOOTS, Target, rebooting
from bootscope.lab.targets.ssh.check import kexec_refusal
from bootscope.lab.where import Where, stored_where
from bootscope.lab.workloads.protocol import SlotRun
from bootscope.lab.workloads.ssh_reboot import measure_reboot
from bootscope.metrics import KEXEC_DOWNTIME_S, REBOOT_DOWNTIME_S
from bootscope.model import Outcome
from bootscope.store.records import BootRecord, VariantRecord

ACCEL = "hardware"
ACCEL_REASON = "a machine reached over SSH: it boots on its own hardware, bootscope chooses nothing"
LOCAL_MACHINE_ID = Path("/etc/machine-id")


def same_machine(local_id: str | None, remote_id: str) -> bool:
    """Return True when the machine's ``/etc/machine-id`` is this host's (both non-empty)."""
    return bool(local_id and local_id.strip() and local_id.strip() == remote_id.strip())


def read_local_machine_id(path: Path = LOCAL_MACHINE_ID) -> str | None:
    """Return this host's machine id, None where there is none."""
    try:
        return path.read_text(encoding="ascii", errors="replace").strip() or None
    except OSError:
        return None


@dataclass(slots=True)
class SshWorkload:
    """The plan's variants, one reboot of the SSH machine per slot."""

    plan: SshPlan
    kind: ClassVar[str] = "ssh"
    prepared: bool = False

    @classmethod
    def from_document(cls, document: Mapping[str, Any]) -> SshWorkload:
        """Return the workload of a stored plan (see :meth:`document`); raises InputError."""
        return cls(ssh_plan_from_dict(document))

    @property
    def settings(self) -> RunSettings:
        """One reboot at a time: one machine."""
        return self.plan.settings()

    @property
    def variants(self) -> tuple[str, ...]:
        """The variant names, baseline first."""
        return tuple(v.name for v in self.plan.variants)

    @property
    def records_per_slot(self) -> int:
        """One reboot per slot."""
        return 1

    @property
    def stop_metric(self) -> str:
        """The reboot's downtime as the network sees it."""
        return REBOOT_DOWNTIME_S

    @property
    def max_smp(self) -> int:
        """No guest CPUs on this host."""
        return 1

    @property
    def needs(self) -> tuple[str, ...]:
        """A machine that reboots."""
        return (REBOOTS,)

    def worker_labels(self, variant: str) -> tuple[tuple[str, str], ...]:
        """No variant asks for a labelled worker."""
        return ()

    def where(self) -> Where:
        """Return the machine the plan names, with its key, known_hosts file and console."""
        plan = self.plan
        return stored_where(plan.target, plan.identity, plan.known_hosts, plan.console)

    def document(self) -> dict[str, Any]:
        """Return the plan as stored with the experiment."""
        return {"workload": self.kind, "command": "run-ssh", **self.plan.to_dict()}

    def variant_records(self) -> list[VariantRecord]:
        """Return each variant's options for the store."""
        return [VariantRecord(v.name, v.config() | {"reboot": self.plan.reboot}) for v in self.plan.variants]

    def choose_accel(self, target: Target, requested: str, reprobe: bool = False) -> AccelChoice:
        """A real machine: no accelerator to choose."""
        return AccelChoice(ACCEL, ACCEL_REASON)

    def prepare(self, target: Target, accel: str) -> list[str]:
        """Reach the machine and check it can be measured (see the module's docstring); return notes.
        Raises BootError (SSH refuses or does not answer, kexec cannot load) or InputError (it is
        this machine) before anything is stored."""
        machine = rebooting(target, self.kind)
        plan = self.plan
        machine.boot_id(plan.timeout_s)
        facts = machine.machine_facts()
        if same_machine(read_local_machine_id(), facts.get("machine-id", "")) and not plan.yes_this_machine:
            raise InputError(
                f"{machine.url} is the machine bootscope runs on (same /etc/machine-id): rebooting it would"
                " end this run; give --yes-this-machine if that is really meant"
            )
        notes: list[str] = []
        refused = kexec_refusal(facts) if plan.reboot == REBOOT_KEXEC else None
        if refused is not None:
            raise BootError(f"{machine.url}: {refused}")
        if plan.base_cmdline is None:
            self.plan = replace(plan, base_cmdline=facts.get("cmdline", "").strip())
        if plan.console is None:
            notes.append(
                f"no --console: the firmware, the boot loader and {KEXEC_DOWNTIME_S} are not measured,"
                " and a machine that does not come back leaves no console lines"
            )
        machine.start()
        atexit.register(machine.stop)
        self.prepared = True
        return notes

    def slot_done(self, slot: Slot, records: Sequence[BootRecord]) -> bool:
        """A slot is done once it has a final record that is not a timeout (a machine that did not
        come back is measured again by ``--resume``)."""
        return bool(records) and all(record.outcome != Outcome.TIMEOUT.value for record in records)

    def run_slot(self, run: SlotRun, target: Target) -> None:
        """Reboot the machine once for the slot's variant and emit the reboot. Raises BootError after
        storing a reboot from which the machine did not come back (the run stops), KeyboardInterrupt
        after storing one that Ctrl-C came during."""
        machine = rebooting(target, self.kind)
        if not self.prepared:
            raise BootError("the SSH workload was not prepared")
        variant = self._variant(run.slot.variant)
        measured = measure_reboot(machine, self.plan, variant, run.cancelled)
        record = BootRecord(
            variant=variant.name,
            index=run.first_index,
            warmup=run.slot.warmup,
            outcome=measured.outcome.value,
            reason=measured.reason,
            accel=ACCEL,
            command=measured.command,
            kernel_release=measured.release,
            host_start_ns=measured.ordered_ns,
            metrics=measured.metrics,
        )
        run.emit(record, measured.lines)
        if measured.stop_run:
            raise BootError(
                f"{machine.url} did not come back ({measured.reason}); the run stops here:"
                " once the machine answers again, continue with --resume"
            )
        if measured.interrupted:
            raise KeyboardInterrupt

    def _variant(self, name: str) -> SshVariant:
        return next(v for v in self.plan.variants if v.name == name)

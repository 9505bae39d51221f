"""The kexec workload: one slot is one chain of kexec reboots, and each kernel of it one record.

A chain is one QEMU run (:mod:`bootscope.lab.qemu.kexec_chain`): QEMU boots the FROM kernel and the guest
kexecs ``hops`` times. Every kernel is emitted (stored) while QEMU still runs: the kernel QEMU
started as a warm-up, each kexec reboot as a sample with ``kexec_downtime_s``, ``kexec_blind_s``,
``kexec_load_s`` and its own ``kernel_init_s``. Ctrl-C keeps every reboot whose new kernel printed its
init marker; a chain cut short is run again whole by ``--resume`` (its kernels are kept, superseded).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from bootscope.analyze.kexec import MARKER_RE, KexecHop, chain_hops
from bootscope.errors import BootscopeError
from bootscope.lab.plans.kexec import KexecPlan, ignored_options, kexec_plan_from_dict
from bootscope.lab.plans.schedule import Slot
from bootscope.lab.plans.settings import RunSettings
from bootscope.lab.qemu import kexec_chain as chain
from bootscope.lab.qemu.accel import AccelChoice
from bootscope.lab.qemu.process import build_command
from bootscope.lab.targets.base import BOOTS_GUESTS, BootsGuests, Target, guests
from bootscope.lab.targets.qemu import LocalQemu
from bootscope.lab.where import QEMU_PLACE, Where
from bootscope.lab.workloads.protocol import SlotRun
from bootscope.metrics import KEXEC_DOWNTIME_S
from bootscope.model import Boot, LogLine, Outcome
from bootscope.store.records import BootRecord, VariantRecord

INTERRUPTED_REASON = "stored when the chain was interrupted: the log ends there"
Emit = Callable[[BootRecord, Sequence[LogLine]], BootRecord]


def _metrics_dict(hop: KexecHop) -> dict[str, float | None]:
    return {key: value for key, value in asdict(hop.metrics).items() if value is not None}


class ChainRecorder:
    """Emits one chain's kernels while QEMU runs: pass :meth:`on_line` to the target's boot.

    When kernel k's init marker arrives, kernel k-1 is complete (its last lines, ``kexec-exec`` and
    the old kernel's ``Starting new kernel``, came before) and is emitted with its whole log. Kernel k
    waits for the next init marker or :meth:`finish`; on Ctrl-C :meth:`flush` emits it with the log
    so far, since its measurement (the reboot ending at its init marker) is complete.
    Only the last three kernels' lines are re-split per init marker, so the work per line stays small
    and the host stamps of the lines that follow are not delayed.
    """

    def __init__(
        self,
        emit: Emit,
        variant: str,
        *,
        first_index: int,
        releases: tuple[str | None, str | None],
        hops_planned: int | None = None,
        command: tuple[str, ...] = (),
        accel: str = "",
        on_line: Callable[[LogLine], None] | None = None,
    ) -> None:
        self.emit = emit
        self.variant = variant
        self.first_index = first_index
        self.next_index = first_index
        self.hops_planned = hops_planned
        self.from_release, self.to_release = releases
        self.accel = accel
        self.host_start_ns: int | None = None
        self.command = command
        self.lines: list[LogLine] = []
        self.records: list[BootRecord] = []
        self._check = on_line
        self._init_at: dict[int, int] = {}
        self._done: set[int] = set()

    def start(self, host_start_ns: int | None = None) -> None:
        """Note QEMU's start (host ns, default now)."""
        self.host_start_ns = time.monotonic_ns() if host_start_ns is None else host_start_ns

    def on_line(self, line: LogLine) -> None:
        """Take one serial line; emit the kernel before this one if ``line`` is an init marker.

        Raises what the runner's line callback raises (KeyboardInterrupt on Ctrl-C) and StoreError."""
        if self._check is not None:
            self._check(line)
        self.lines.append(line)
        match = MARKER_RE.search(line.text)
        if match is None or (match.group("name") or "init") != "init" or match.group("hop") is None:
            return
        hop = int(match.group("hop"))
        self._init_at.setdefault(hop, len(self.lines) - 1)
        if hop >= 1:
            self._record(first_hop=hop - 2, wanted=(hop - 1,), reason="")

    def flush(self) -> None:
        """Emit every kernel whose init marker arrived and is not emitted yet (Ctrl-C, a failure
        that stopped the chain), with its log so far. Raises StoreError."""
        if self._init_at:
            latest = max(self._init_at)
            self._record(first_hop=latest - 2, wanted=(latest - 1, latest), reason=INTERRUPTED_REASON)

    def finish(self, boot: Boot, hops_planned: int) -> None:
        """Emit the rest of the chain from QEMU's whole capture ``boot``: the last kernels and the
        chain's fault (kexec-error, timeout, panic) as a failed sample. Raises StoreError."""
        self.command = boot.command
        for hop in chain_hops(boot, hops_planned):
            if hop.hop not in self._done:
                self._store(hop, "")

    def _record(self, first_hop: int, wanted: tuple[int, ...], reason: str) -> None:
        # Split only from the init marker of ``first_hop`` on: that kernel's tail carries the
        # kexec-prep/-load/-exec markers the next reboot's metrics need; its own metrics would be
        # wrong in this window, so it is never among the ``wanted`` hops (it is emitted already).
        start = self._init_at.get(first_hop, 0) if first_hop >= 1 else 0
        window = Boot(lines=tuple(self.lines[start:]), outcome=Outcome.OK, host_start_ns=self.host_start_ns)
        for hop in chain_hops(window):
            if hop.outcome is Outcome.OK and hop.hop in wanted and hop.hop not in self._done:
                self._store(hop, reason)

    def _store(self, hop: KexecHop, reason: str) -> None:
        if self.hops_planned is not None and self.next_index > self.first_index + self.hops_planned:
            return  # more kernels than planned (cannot happen with bootscope's /init): not this slot's
        record = BootRecord(
            variant=self.variant,
            index=self.next_index,
            warmup=not hop.is_reboot,
            outcome=hop.outcome.value,
            reason=hop.reason or reason,
            accel=self.accel,
            command=self.command,
            kernel_release=self.to_release if hop.is_reboot else self.from_release,
            host_start_ns=hop.start_host_ns,
            metrics=_metrics_dict(hop),
        )
        self.records.append(self.emit(record, hop.raw_lines or hop.lines))
        self._done.add(hop.hop)
        self.next_index += 1


@dataclass(slots=True)
class KexecWorkload:
    """The plan's variants, one chain of ``hops`` kexec reboots per slot."""

    plan: KexecPlan
    kind: ClassVar[str] = "kexec"
    configs: dict[str, chain.ChainConfig] = field(default_factory=dict)
    releases: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)

    @classmethod
    def from_document(cls, document: Mapping[str, Any]) -> KexecWorkload:
        """Return the workload of a stored plan (see :meth:`document`); raises InputError."""
        return cls(kexec_plan_from_dict(document))

    @property
    def settings(self) -> RunSettings:
        """The plan's run settings (one slot per chain)."""
        return self.plan.settings()

    @property
    def timeout_s(self) -> float:
        """Seconds one chain may take."""
        return self.plan.timeout_s or chain.chain_timeout_s(self.plan.hops)

    @property
    def variants(self) -> tuple[str, ...]:
        """The variant names, baseline first."""
        return tuple(v.name for v in self.plan.variants)

    @property
    def records_per_slot(self) -> int:
        """The kernel QEMU boots plus one per kexec reboot."""
        return self.plan.hops + 1

    @property
    def stop_metric(self) -> str:
        """The reboot's downtime."""
        return KEXEC_DOWNTIME_S

    @property
    def max_smp(self) -> int:
        """The most guest CPUs of any variant."""
        return max(v.smp for v in self.plan.variants)

    @property
    def needs(self) -> tuple[str, ...]:
        """QEMU guests."""
        return (BOOTS_GUESTS,)

    def worker_labels(self, variant: str) -> tuple[tuple[str, str], ...]:
        """No variant asks for a labelled worker."""
        return ()

    def where(self) -> Where:
        """No place of its own: any target that boots guests (this host's QEMU by default)."""
        return QEMU_PLACE

    def document(self) -> dict[str, Any]:
        """Return the plan as stored with the experiment."""
        return {"workload": self.kind, "command": "kexec", **self.plan.to_dict()}

    def variant_records(self) -> list[VariantRecord]:
        """Return each variant's options for the store."""
        return [VariantRecord(v.name, v.config()) for v in self.plan.variants]

    def choose_accel(self, target: Target, requested: str, reprobe: bool = False) -> AccelChoice:
        """Return the target's choice for ``requested``, probed with the FROM kernel."""
        target = guests(target, self.kind)
        kernel = target.resolve_kernel(self.plan.from_spec)
        return target.choose_accel(requested, kernel.image, target.build_initramfs((), ()), reprobe)

    def prepare(self, target: Target, accel: str) -> list[str]:
        """Resolve FROM and every TO kernel, build each chain initramfs; return notes on ignored
        options. Raises BootError (no QEMU, kernel, kexec or busybox) or InputError (bad options)."""
        target = guests(target, self.kind)
        from_image = target.resolve_kernel(self.plan.from_spec)
        for variant in self.plan.variants:
            to_path, to_release = target.resolve_to(variant.to)
            config = chain.ChainConfig(
                from_kernel=from_image.image,
                initrd=target.build_chain_initramfs(to_path),
                hops=self.plan.hops,
                options=variant.options,
                append=variant.append,
                smp=variant.smp,
                mem_mb=variant.mem_mb,
                accel=accel,
                timeout_s=self.timeout_s,
            )
            target.check(chain.boot_config(config))
            self.configs[variant.name] = config
            self.releases[variant.name] = (from_image.release, to_release)
        return [note for variant in self.plan.variants for note in ignored_options(variant)]

    def slot_done(self, slot: Slot, records: Sequence[BootRecord]) -> bool:
        """A chain is done when every kernel of it is stored, or it stopped on a fault; a chain cut
        short by Ctrl-C or a kill is not."""
        if any(record.reason == INTERRUPTED_REASON for record in records):
            return False
        return len(records) == self.records_per_slot or any(r.outcome != Outcome.OK.value for r in records)

    def run_slot(self, run: SlotRun, target: Target) -> None:
        """Run one chain and emit its kernels as they complete; on Ctrl-C (or any failure) emit the
        kernels whose reboot was complete, then re-raise."""
        target = guests(target, self.kind)
        config = replace(self.configs[run.slot.variant], cpu_affinity=run.affinity)
        recorder = ChainRecorder(
            run.emit,
            run.slot.variant,
            first_index=run.first_index,
            releases=self.releases[run.slot.variant],
            hops_planned=self.plan.hops,
            command=tuple(build_command(chain.boot_config(config))),
            accel=run.accel,
            on_line=run.on_line,
        )
        recorder.start()
        try:
            boot = target.boot(chain.boot_config(config), recorder.on_line, run.on_start)
        except BaseException:
            with contextlib.suppress(BootscopeError):
                recorder.flush()
            raise
        recorder.finish(boot, self.plan.hops)


def resolve_to(spec: str, target: BootsGuests | None = None) -> tuple[Path, str | None]:
    """Return the TO kernel's path and release on ``target`` (default: this host's QEMU)."""
    return (target or LocalQemu()).resolve_to(spec)

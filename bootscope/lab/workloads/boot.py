"""The boot workload: one QEMU boot per slot, measured from its console and stored as one record.

Each variant of the plan becomes a BootConfig once (kernel resolved, initramfs built); every slot
boots it on the target, reads the console with the one captured-boot analysis
(:func:`bootscope.analyze.captured.analyze_captured`) and emits the boot with its metrics.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, ClassVar

from bootscope import defaults
from bootscope.analyze.captured import measure
from bootscope.errors import InputError
from bootscope.lab.plans.boot import Plan, VariantSpec, plan_from_dict
from bootscope.lab.plans.schedule import Slot
from bootscope.lab.plans.settings import RunSettings
from bootscope.lab.qemu.accel import AccelChoice
from bootscope.lab.qemu.disk import GUEST_DEVICE, disk_format
from bootscope.lab.qemu.guest_clock import round_rtc_base
from bootscope.lab.qemu.image import Image
from bootscope.lab.qemu.process import BootConfig
from bootscope.lab.qemu.root_initramfs import RootInitramfs
from bootscope.lab.targets.base import BOOTS_GUESTS, BootsGuests, Target, guests
from bootscope.lab.where import QEMU_PLACE, Where
from bootscope.lab.workloads.protocol import SlotRun
from bootscope.metrics import BOOT_METRICS, BOOT_STOP_METRIC, IMAGE_METRICS, INITRD_S, KERNEL_INIT_S
from bootscope.store.records import BootRecord, VariantRecord


@dataclass(slots=True)
class BootWorkload:
    """The plan's variants, each booted once per slot."""

    plan: Plan
    kind: ClassVar[str] = "boot"
    configs: dict[str, BootConfig] = field(default_factory=dict)
    releases: dict[str, str | None] = field(default_factory=dict)
    # Per variant: what a kernel foreign to its image boots with (kept with every boot's record).
    notes: dict[str, str] = field(default_factory=dict)
    # Per variant: why an image under --icount keeps its disk on virtio (kept with every boot's record).
    disk_notes: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_document(cls, document: Mapping[str, Any]) -> BootWorkload:
        """Return the workload of a stored plan (see :meth:`document`); raises InputError."""
        return cls(plan_from_dict(document))

    @property
    def settings(self) -> RunSettings:
        """The plan's run settings."""
        # Every run setting is a field of the plan by the same name.
        return RunSettings(**{f.name: getattr(self.plan, f.name) for f in fields(RunSettings)})

    @property
    def variants(self) -> tuple[str, ...]:
        """The variant names, baseline first."""
        return tuple(v.name for v in self.plan.variants)

    @property
    def records_per_slot(self) -> int:
        """One boot per slot."""
        return 1

    @property
    def stop_metric(self) -> str:
        """``--until precise`` judges the guest's time to its marker."""
        return BOOT_STOP_METRIC

    @property
    def max_smp(self) -> int:
        """The most vCPUs of any variant."""
        return max(v.smp for v in self.plan.variants)

    @property
    def needs(self) -> tuple[str, ...]:
        """QEMU guests."""
        return (BOOTS_GUESTS,)

    def worker_labels(self, variant: str) -> tuple[tuple[str, str], ...]:
        """The labels the variant's ``on=KEY=VALUE`` options name."""
        return next((spec.on for spec in self.plan.variants if spec.name == variant), ())

    def where(self) -> Where:
        """No place of its own: any target that boots guests (this host's QEMU by default)."""
        return QEMU_PLACE

    def document(self) -> dict[str, Any]:
        """Return the plan as stored with the experiment."""
        return {"workload": self.kind, **self.plan.to_dict()}

    def variant_records(self) -> list[VariantRecord]:
        """Return each variant's options for the store."""
        return [VariantRecord(v.name, v.config()) for v in self.plan.variants]

    def choose_accel(self, target: Target, requested: str, reprobe: bool = False) -> AccelChoice:
        """Return TCG for ``--icount`` (only TCG counts instructions), else the target's choice, probed
        with the first variant's kernel and bootscope's own initramfs."""
        target = guests(target, self.kind)
        if requested == "auto" and any(v.icount_shift is not None for v in self.plan.variants):
            return AccelChoice("tcg", "TCG: --icount counts instructions, which only TCG can do")
        first = self.plan.variants[0]
        if first.image and not first.kernel:
            kernel_image = target.resolve_image(first.image).kernel
        else:
            initrd = Path(first.initrd) if first.initrd else None
            kernel_image = target.resolve_kernel(first.kernel, initrd=initrd).image
        # A disk or image boot ends on a line the probe does not know: probe with bootscope's own.
        probe_initrd = (None if first.image else _guest_initrd(first, target)) or target.build_initramfs(
            (), ()
        )
        return target.choose_accel(requested, kernel_image, probe_initrd, reprobe)

    def prepare(self, target: Target, accel: str) -> list[str]:
        """Resolve every variant's kernel and build its initramfs; raises BootError or InputError
        (naming the variant) before anything is stored. Returns a note for each image variant whose
        kernel boots on the image's root through bootscope's initramfs."""
        target = guests(target, self.kind)
        for variant in self.plan.variants:
            if variant.image:
                self.configs[variant.name], self.releases[variant.name] = self._image_config(
                    variant, target, accel
                )
                continue
            kernel = target.resolve_kernel(
                variant.kernel, initrd=Path(variant.initrd) if variant.initrd else None
            )
            disk = Path(variant.disk) if variant.disk else None
            if variant.disk_attach is not None and disk is None:
                raise InputError(f"variant {variant.name}: disk-attach={variant.disk_attach} needs a disk")
            config = BootConfig(
                kernel=kernel.image,
                initrd=_guest_initrd(variant, target),
                append=variant.append,
                **self._machine(variant, accel),
                # The marker ends the measurement; waiting for the guest's poweroff would only cost time.
                stop_on_marker=True,
                disk=disk,
                # Inspected once here, not before every boot.
                disk_format=disk_format(disk) if disk is not None else None,
                disk_attach=variant.disk_attach or "virtio",
            )
            try:
                target.check(config)
            except InputError as error:
                raise InputError(f"variant {variant.name}: {error}") from None
            self.configs[variant.name] = config
            self.releases[variant.name] = kernel.release
        notes = [f"variant {name}: {note}" for name, note in self.notes.items()]
        own = [v.name for v in self.plan.variants if v.image and v.name not in self.notes]
        if self.notes and own:
            notes.append(
                f"variants {', '.join(own)} boot the image's own initramfs, variants"
                f" {', '.join(self.notes)} bootscope's: their {INITRD_S} measure different initramfs,"
                f" and {KERNEL_INIT_S} includes unpacking an initramfs of another size"
            )
        notes += [f"variant {name}: {note}" for name, note in self.disk_notes.items()]
        attaches = {name: config.disk_attach for name, config in self.configs.items() if config.disk}
        if len(set(attaches.values())) > 1:
            by = ", ".join(f"{name} {attach}" for name, attach in attaches.items())
            notes.append(f"the variants attach their disks differently ({by}): their times include how")
        return notes

    def _machine(self, variant: VariantSpec, accel: str) -> dict[str, Any]:
        """Return the BootConfig fields every variant sets the same way: the machine, the
        accelerator, the timeout and the marker."""
        return {
            "smp": variant.smp,
            "mem_mb": variant.mem_mb,
            "cpu": variant.cpu,
            "accel": accel,
            "icount_shift": variant.icount_shift,
            "extra_qemu_args": variant.qemu_args,
            "timeout_s": self.plan.timeout_s,
            "marker_regex": variant.marker,
        }

    def _image_config(self, variant: VariantSpec, target: BootsGuests, accel: str) -> tuple[BootConfig, str]:
        """Return how to boot an image variant, and its kernel release: the image's kernel and
        initramfs, or the variant's kernel (with the image's initramfs when it is the image's release,
        else with bootscope's root initramfs: the image's initramfs and /lib/modules fit its own kernel
        only), root on the image's disk (attached as :meth:`_image_attach` says), the collector's end
        marker ending the boot. Records in ``notes`` what a foreign kernel boots with and a disk that
        --icount could not take off the host's I/O. Raises InputError or BootError naming the variant."""
        assert variant.image is not None
        image: Image = target.resolve_image(variant.image)
        kernel_path, initrd, release = image.kernel, image.initrd, image.release
        root: RootInitramfs | None = None
        if variant.kernel:
            kernel = target.resolve_kernel(variant.kernel)
            kernel_path = kernel.image
            if kernel.release != image.release:
                try:
                    root = target.build_root_initramfs(kernel)
                except InputError as error:
                    raise InputError(f"variant {variant.name}: {error}") from None
                initrd, release = root.path, root.release
                self.notes[variant.name] = foreign_kernel_note(root, image)
        attach = self._image_attach(variant, image, own_initramfs=root is None)
        config = BootConfig(
            kernel=kernel_path,
            initrd=initrd,
            append=f"root={GUEST_DEVICE[attach]} {defaults.IMAGE_APPEND} {variant.append}".strip(),
            **self._machine(variant, accel),
            # The boot is ok once the marker (the login prompt) came, and ends when the image's
            # collector has printed systemd's accounting, which comes after it.
            stop_on_marker=False,
            end_regex=re.escape(defaults.COLLECT_END),
            prompt_regex=defaults.LOGIN_PROMPT,
            disk=image.disk,
            disk_format="raw",
            disk_attach=attach,
        )
        try:
            target.check(config)
        except InputError as error:
            raise InputError(f"variant {variant.name}: {error}") from None
        return config, release

    def _image_attach(self, variant: VariantSpec, image: Image, own_initramfs: bool) -> str:
        """Return how an image variant's disk is attached: as the variant says, else as an NVDIMM
        under --icount (the guest then never waits on the host's disk I/O, which would warp its clock:
        lab/qemu/disk.py) when the image's initramfs has the drivers, else over virtio. Records in
        ``notes`` why an --icount boot stays on virtio; raises InputError for an NVDIMM the boot
        cannot use."""
        can = own_initramfs and image.boots_from_nvdimm()
        why_not = (
            "bootscope's initramfs for another kernel reaches the root over virtio only"
            if not own_initramfs
            else f"image {image.name} was built before bootscope's images had the NVDIMM drivers"
            " (build it again with `bootscope image build`)"
        )
        if variant.disk_attach == "nvdimm" and not can:
            raise InputError(f"variant {variant.name}: disk-attach=nvdimm: {why_not}")
        if variant.disk_attach is not None:
            return variant.disk_attach
        if variant.icount_shift is None:
            return "virtio"
        if not can:
            note = f"the disk stays on virtio ({why_not}): a loaded host can still warp --icount guest time"
            self.disk_notes[variant.name] = note
            return "virtio"
        return "nvdimm"

    def slot_done(self, slot: Slot, records: Sequence[BootRecord]) -> bool:
        """A boot slot is done once it has a final record."""
        return bool(records)

    def run_slot(self, run: SlotRun, target: Target) -> None:
        """Boot the slot's variant once and emit it, unless Ctrl-C stopped the boot (its outcome then
        says nothing about the kernel)."""
        target = guests(target, self.kind)
        variant = self._variant(run.slot.variant)
        config = replace(self.configs[variant.name], cpu_affinity=run.affinity)
        if config.icount_shift is not None:
            # Every variant of a round boots at the round's date: see lab/qemu/guest_clock.py.
            config = replace(config, rtc_base=round_rtc_base(self.plan.seed, run.slot.round))
        boot = target.boot(config, run.on_line, run.on_start)
        if run.cancelled():
            raise KeyboardInterrupt
        names = BOOT_METRICS + IMAGE_METRICS if variant.image else BOOT_METRICS
        metrics, release, note = measure(
            boot, variant.marker, self.releases[variant.name], names, full_userspace=bool(variant.image)
        )
        record = BootRecord(
            variant=variant.name,
            index=run.first_index,
            warmup=run.slot.warmup,
            outcome=boot.outcome.value,
            reason="; ".join(
                part
                for part in (
                    boot.reason,
                    self.notes.get(variant.name),
                    self.disk_notes.get(variant.name),
                    note,
                )
                if part
            ),
            accel=boot.accel,
            command=boot.command,
            kernel_release=release,
            host_start_ns=boot.host_start_ns,
            metrics=metrics,
        )
        run.emit(record, boot.lines)

    def _variant(self, name: str) -> VariantSpec:
        return next(v for v in self.plan.variants if v.name == name)


def foreign_kernel_note(root: RootInitramfs, image: Image) -> str:
    """Return the note every boot of a kernel foreign to ``image`` carries: it did not boot the
    image's (Debian's) initramfs, so its initrd_s is bootscope's initramfs's time."""
    return (
        f"kernel {root.release} booted on image {image.name}'s root via bootscope's initramfs"
        f" (the image has no modules for it, only for {image.release}): {root.describe()};"
        f" {INITRD_S} is that initramfs's time, not Debian's"
    )


def _guest_initrd(variant: VariantSpec, target: BootsGuests) -> Path | None:
    """Return the initramfs ``variant`` boots: the user's own, none (a disk boots by itself), or
    bootscope's, built on ``target`` with the variant's commands and files."""
    if variant.initrd:
        return Path(variant.initrd)
    if variant.disk:
        return None
    files = tuple((Path(host), guest) for host, guest in variant.files)
    return target.build_initramfs(variant.commands, files)

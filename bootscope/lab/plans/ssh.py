"""What an SSH reboot experiment runs: the machine, how it reboots, and the variants.

``--reboot kexec`` loads a kernel on the machine (``kexec -l``) and executes it; its variants may
change the kernel, the initramfs and the command line (paths are on the machine). ``--reboot reboot``
goes through the firmware and the machine's own boot loader, so bootscope cannot change what boots:
its variants may only run a ``setup`` command on the machine before each reboot (for example one
that edits the boot loader's configuration). Variants use the one variant syntax
(:mod:`bootscope.lab.plans.variants`); the plan is stored as JSON, so ``--resume`` runs the same plan.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from bootscope import defaults
from bootscope.errors import InputError
from bootscope.lab.plans import variants
from bootscope.lab.plans.settings import RunSettings, check_slots_a_round, stored_slots_a_round
from bootscope.lab.plans.variants import OptionTable, flag

REBOOT_KEXEC = "kexec"
REBOOT_FIRMWARE = "reboot"
REBOOT_MODES = (REBOOT_KEXEC, REBOOT_FIRMWARE)
# Seconds a machine may take from the reboot order until SSH answers again (TCG guests are slow).
DEFAULT_SSH_TIMEOUT_S = 300.0


@dataclass(frozen=True, slots=True)
class SshVariant:
    """One variant: for kexec the kernel and initramfs paths on the machine (empty: the running
    kernel's ``/boot/vmlinuz-RELEASE`` and its initrd) and the command line added to the machine's
    command line at the start of the run (``reuse_cmdline``) or, without it, the whole command line;
    ``setup`` is a shell command run on the machine before each reboot of this variant."""

    name: str
    kernel: str = ""
    initrd: str = ""
    append: str = ""
    reuse_cmdline: bool = True
    setup: str = ""

    def config(self) -> dict[str, object]:
        """Return the variant as JSON-able options for the store."""
        return asdict(self)


SSH_OPTIONS = OptionTable(
    {
        "kernel": lambda _spec, value: {"kernel": str(value).strip()},
        "initrd": lambda _spec, value: {"initrd": str(value).strip()},
        "append": lambda _spec, value: {"append": str(value)},
        "reuse-cmdline": lambda _spec, value: {"reuse_cmdline": flag("reuse-cmdline", value)},
        "setup": lambda _spec, value: {"setup": str(value)},
    },
    free_text=("append", "setup"),
)


@dataclass(frozen=True, slots=True)
class SshPlan:
    """An SSH reboot experiment: the machine (``target`` URL, key and known-hosts files, console
    command), the reboot mode, the variants, the run settings and the safety switches.
    ``base_cmdline`` is the machine's command line when the run started (kexec variants add to it, so
    that their additions never pile up from boot to boot); it is filled in before the first reboot."""

    target: str
    variants: tuple[SshVariant, ...]
    reboot: str = REBOOT_KEXEC
    identity: str | None = None
    known_hosts: str | None = None
    console: str | None = None
    samples_per_variant: int = defaults.SAMPLES_PER_VARIANT
    warmup_per_variant: int = 0
    seed: int = 0
    timeout_s: float = DEFAULT_SSH_TIMEOUT_S
    no_checks: bool = False
    yes_this_machine: bool = False
    base_cmdline: str | None = None
    slots_a_round: tuple[tuple[str, int], ...] = ()

    def settings(self) -> RunSettings:
        """The runner's settings: one reboot per slot, one at a time (one machine)."""
        return RunSettings(
            seed=self.seed,
            samples_per_variant=self.samples_per_variant,
            warmup_per_variant=self.warmup_per_variant,
            accel="auto",
            slots_a_round=self.slots_a_round,
        )

    def to_dict(self) -> dict[str, Any]:
        """Return the plan as JSON (see :func:`ssh_plan_from_dict`)."""
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "variants"}
        return data | {"variants": [asdict(v) for v in self.variants]}


def parse_variant(text: str, base: SshVariant) -> SshVariant:
    """Return ``base`` changed by ``NAME:key=value,...`` (keys: kernel, initrd, append, reuse-cmdline,
    setup); raises InputError for a missing name, an unknown key or a bad value."""
    return variants.parse_variant(text, base, SSH_OPTIONS)


def build_ssh_variants(base: SshVariant, texts: Sequence[str]) -> tuple[SshVariant, ...]:
    """Return ``texts`` parsed against ``base`` (or ``base`` alone); raises InputError for duplicate
    names or a bad spec."""
    result = [parse_variant(text, base) for text in texts] if texts else [base]
    names = [variant.name for variant in result]
    if len(set(names)) != len(names):
        raise InputError(f"variant names must be unique, got {names}")
    return tuple(result)


def validate_ssh_plan(plan: SshPlan) -> SshPlan:
    """Return ``plan`` if it can run; raises InputError for a bad reboot mode, sample count or
    timeout, and for kexec options with a firmware reboot (the machine's boot loader decides what
    boots then: change it with a variant's ``setup`` command)."""
    if plan.reboot not in REBOOT_MODES:
        raise InputError(f"--reboot {plan.reboot!r}: use kexec or reboot")
    if plan.samples_per_variant < 1 or plan.warmup_per_variant < 0:
        raise InputError("-n must be 1 or more and --warmup 0 or more")
    if plan.timeout_s <= 0:
        raise InputError(f"--timeout must be positive (got {plan.timeout_s:g})")
    if not plan.variants:
        raise InputError("an SSH run needs at least one variant")
    check_slots_a_round(plan.slots_a_round, [v.name for v in plan.variants])
    if plan.reboot == REBOOT_FIRMWARE:
        for variant in plan.variants:
            if variant.kernel or variant.initrd or variant.append or not variant.reuse_cmdline:
                raise InputError(
                    f"variant {variant.name}: --reboot reboot boots what the machine's boot loader says;"
                    " kernel, initrd, append and reuse-cmdline need --reboot kexec (or change the boot"
                    " loader with setup=COMMAND)"
                )
        if plan.no_checks:
            raise InputError("--no-checks is a kexec option: give --reboot kexec")
    return plan


def ssh_plan_from_dict(data: Mapping[str, Any]) -> SshPlan:
    """Return the plan stored by :meth:`SshPlan.to_dict`; raises InputError if it cannot be read."""
    try:
        names = {f.name for f in fields(SshPlan)} - {"variants"}
        kept = {key: value for key, value in data.items() if key in names}
        kept["slots_a_round"] = stored_slots_a_round(kept.get("slots_a_round"))
        items = tuple(
            SshVariant(**{k: v for k, v in item.items() if k in {f.name for f in fields(SshVariant)}})
            for item in data["variants"]
        )
        return validate_ssh_plan(replace(SshPlan(target=str(data["target"]), variants=items), **kept))
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise InputError(f"the stored SSH plan cannot be read ({error})") from None

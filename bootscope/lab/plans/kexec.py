"""What a kexec experiment runs: variants of the kexec chain (TO kernel, load options, machine), how
many reboots per chain and how many chains per variant.

Variants use the one variant syntax (:mod:`bootscope.lab.plans.variants`); the plan is stored as JSON with
the experiment so that ``bootscope kexec --resume`` runs exactly the plan that was started.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from bootscope import defaults
from bootscope.errors import InputError
from bootscope.lab.plans import variants
from bootscope.lab.plans.boot import resolve_seed
from bootscope.lab.plans.settings import GivenSettings, RunSettings, check_settings
from bootscope.lab.plans.variants import OptionTable, flag, whole_number
from bootscope.lab.qemu import kexec_chain as chain

# Why `-i` does nothing with `-s`: kexec_file_load(2) takes only the flags KEXEC_FILE_UNLOAD,
# KEXEC_FILE_ON_CRASH and KEXEC_FILE_NO_INITRAMFS (include/uapi/linux/kexec.h), and the kernel loads
# its own purgatory (arch/x86/purgatory/purgatory.c), which always verifies the SHA-256 digest.
FILE_LOAD_IGNORES_NO_CHECKS = (
    "kexec -s (kexec_file_load) ignores -i/--no-checks: the kernel loads its own purgatory, which"
    " always verifies its SHA-256 digest, and the syscall has no flag to skip that"
)


@dataclass(frozen=True, slots=True)
class KexecVariant:
    """One variant of a kexec experiment: the TO kernel spec, the load options and the machine."""

    name: str
    to: str
    options: chain.KexecOptions = field(default_factory=chain.KexecOptions)
    mem_mb: int = chain.DEFAULT_KEXEC_MEM_MB
    smp: int = defaults.DEFAULT_SMP
    append: str = ""

    def config(self) -> dict[str, object]:
        """Return the variant as JSON-able options for the store."""
        return {"to": self.to, "mem_mb": self.mem_mb, "smp": self.smp, "append": self.append} | asdict(
            self.options
        )


def _load_option(key: str, attribute: str) -> variants.Applier:
    return lambda spec, value: {"options": replace(spec.options, **{attribute: flag(key, value)})}


KEXEC_OPTIONS = OptionTable(
    {
        "no-checks": _load_option("no-checks", "no_checks"),
        "file-load": _load_option("file-load", "file_load"),
        "mem": lambda _spec, value: {"mem_mb": whole_number("mem", value, 64, 1 << 20)},
        "smp": lambda _spec, value: {"smp": whole_number("smp", value, 1, 256)},
        "to": lambda _spec, value: {"to": str(value)},
        "append": lambda _spec, value: {"append": str(value)},
    },
    free_text=("append",),
)


def parse_variant(text: str, base: KexecVariant) -> KexecVariant:
    """Return ``base`` changed by ``NAME:key=value,...`` (keys: no-checks, file-load, mem, smp, to,
    append); raises InputError for a missing name, an unknown key or a bad value."""
    return variants.parse_variant(text, base, KEXEC_OPTIONS)


def build_variants(base: KexecVariant, texts: Sequence[str], mem_list: Sequence[int]) -> list[KexecVariant]:
    """Return the experiment's variants: ``texts`` parsed against ``base``, or one per memory size in
    ``mem_list`` (the trend), or ``base`` alone; raises InputError for duplicates or a bad spec."""
    if texts and len(mem_list) > 1:
        raise InputError("give either --variant or --mem-sweep, not both")
    if texts:
        result = [parse_variant(text, base) for text in texts]
    elif len(mem_list) > 1:
        result = [replace(base, name=f"mem{mem}", mem_mb=mem) for mem in mem_list]
    else:
        result = [base]
    names = [variant.name for variant in result]
    if len(set(names)) != len(names):
        raise InputError(f"variant names must be unique, got {names}")
    return result


def ignored_options(variant: KexecVariant) -> tuple[str, ...]:
    """Return notes on options of ``variant`` that have no effect (``-i`` with ``-s``), for the user."""
    if variant.options.file_load and variant.options.no_checks:
        return (f"variant {variant.name}: {FILE_LOAD_IGNORES_NO_CHECKS}",)
    return ()


@dataclass(frozen=True, slots=True)
class KexecPlan:
    """A kexec experiment: ``chains`` chains per variant (fresh QEMU runs of FROM, interleaved in the
    order ``seed`` shuffles), each of ``hops`` kexec reboots; ``jobs`` chains at once."""

    from_spec: str
    variants: tuple[KexecVariant, ...]
    hops: int
    seed: int
    chains: int = 1
    timeout_s: float | None = None
    accel: str = "auto"
    jobs: int = 1
    quiet_host: bool = False

    def settings(self) -> RunSettings:
        """Return the runner's settings: one slot per chain, no warm-up slot (the kernel QEMU boots
        first in every chain is that chain's warm-up)."""
        return RunSettings(
            seed=self.seed,
            samples_per_variant=self.chains,
            accel=self.accel,
            jobs=self.jobs,
            quiet_host=self.quiet_host,
        )

    def to_dict(self) -> dict[str, Any]:
        """Return the plan as JSON-able data; :func:`kexec_plan_from_dict` reads it back."""
        return {
            "from": self.from_spec,
            "hops": self.hops,
            "chains": self.chains,
            "seed": self.seed,
            "timeout_s": self.timeout_s,
            "accel": self.accel,
            "jobs": self.jobs,
            "quiet_host": self.quiet_host,
            "variants": [{"name": v.name, **v.config()} for v in self.variants],
            "notes": [note for v in self.variants for note in ignored_options(v)],
        }


def kexec_plan_from_dict(data: Mapping[str, Any]) -> KexecPlan:
    """Return the KexecPlan stored by :meth:`KexecPlan.to_dict`; raises InputError if it is not one
    (a run stored by an older bootscope, which cannot be resumed)."""
    try:
        stored = [
            KexecVariant(
                name=item["name"],
                to=item["to"],
                options=chain.KexecOptions(file_load=item["file_load"], no_checks=item["no_checks"]),
                mem_mb=item["mem_mb"],
                smp=item["smp"],
                append=item["append"],
            )
            for item in data["variants"]
        ]
        plan = KexecPlan(
            from_spec=data["from"],
            variants=tuple(stored),
            hops=data["hops"],
            seed=data["seed"],
            chains=data["chains"],
            timeout_s=data["timeout_s"],
            accel=data["accel"],
            jobs=data["jobs"],
            quiet_host=data["quiet_host"],
        )
    except (KeyError, TypeError) as error:
        raise InputError(f"the stored kexec plan cannot be resumed by this bootscope ({error})") from error
    return validate_kexec_plan(plan)


def validate_kexec_plan(plan: KexecPlan) -> KexecPlan:
    """Return ``plan`` if it can run; raises InputError naming the first problem."""
    if plan.hops < 1 or plan.chains < 1:
        raise InputError(
            f"need at least one kexec reboot and one chain (got -n {plan.hops}, --chains {plan.chains})"
        )
    if not plan.variants:
        raise InputError("a kexec experiment needs at least one variant")
    check_settings(jobs=plan.jobs, timeout_s=plan.timeout_s, accel=plan.accel)
    return plan


def build_kexec_plan(
    from_spec: str, variants: Sequence[KexecVariant], hops: int, chains: int, settings: GivenSettings
) -> KexecPlan:
    """Return the validated KexecPlan: ``chains`` chains of ``hops`` reboots per variant, booted
    from ``from_spec``, run as ``settings`` say (seed drawn at random when not given; a kexec run
    has no warm-up slot and no stopping rule). Raises InputError naming the first problem."""
    return validate_kexec_plan(
        KexecPlan(
            from_spec=from_spec,
            variants=tuple(variants),
            hops=hops,
            seed=resolve_seed(settings.seed),
            chains=chains,
            timeout_s=settings.timeout_s,
            accel=settings.accel or "auto",
            jobs=settings.jobs or 1,
            quiet_host=bool(settings.quiet_host),
        )
    )

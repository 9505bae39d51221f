"""What an experiment boots: variants (kernel, command line, machine, guest) and how many times.

A plan comes from the command line (``KERNEL`` plus ``--variant NAME:OPTION=VALUE,...``) or from a TOML
file (``--plan``) with the same option names; it is stored as JSON with the experiment, so that
``--resume`` runs exactly the plan that was started.
"""

from __future__ import annotations

import random
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from bootscope import defaults
from bootscope.errors import InputError
from bootscope.lab.plans.boot_variant import BOOT_OPTIONS, OPTIONS, VariantSpec, apply_option, parse_variant
from bootscope.lab.plans.settings import (
    ACCELS,
    UNTIL,
    GivenSettings,
    check_settings,
    check_slots_a_round,
    settings_from_mapping,
    stored_slots_a_round,
)
from bootscope.lab.plans.variants import NAME_RE

__all__ = [
    "ACCELS",
    "BOOT_OPTIONS",
    "OPTIONS",
    "UNTIL",
    "GivenSettings",
    "Plan",
    "VariantSpec",
    "apply_option",
    "build_plan",
    "parse_variant",
    "plan_from_dict",
    "read_plan_file",
    "resolve_seed",
    "validate_plan",
]


@dataclass(frozen=True, slots=True)
class Plan:
    """An experiment: variants x ``samples_per_variant`` boots after ``warmup_per_variant`` warm-ups,
    in an order shuffled by ``seed``. ``until="precise"`` keeps adding rounds (up to ``max_n`` per
    variant) until the stopping rule is satisfied; ``precision`` is a fraction (0.01 = 1 %)."""

    variants: tuple[VariantSpec, ...]
    seed: int
    samples_per_variant: int = defaults.SAMPLES_PER_VARIANT
    warmup_per_variant: int = defaults.WARMUP_BOOTS
    timeout_s: float = defaults.BOOT_TIMEOUT_S
    accel: str = "auto"
    jobs: int = 1
    quiet_host: bool = False
    until: str | None = None
    precision: float = 0.01
    max_n: int | None = None
    retries: int = 0
    slots_a_round: tuple[tuple[str, int], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Return the plan as a JSON-able dict; :func:`plan_from_dict` reads it back."""
        data = asdict(self)
        data["variants"] = [{"name": v.name, **v.config()} for v in self.variants]
        return data


def plan_from_dict(data: Mapping[str, Any]) -> Plan:
    """Return the Plan stored by :meth:`Plan.to_dict`; raises InputError if it is not one."""
    try:
        fields_by_variant: list[dict[str, Any]] = [
            {key: _stored_field(key, value) for key, value in item.items()} for item in data["variants"]
        ]
        variants = tuple(VariantSpec(**fields) for fields in fields_by_variant)
        # The workload's name is the runner's business (lab/workloads/protocol.py), not a plan field.
        rest = {key: value for key, value in data.items() if key not in ("variants", "workload")}
        rest["slots_a_round"] = stored_slots_a_round(rest.get("slots_a_round"))
        return validate_plan(Plan(variants=variants, **rest))
    except (KeyError, TypeError, ValueError) as error:
        raise InputError(f"the stored plan cannot be read by this bootscope ({error})") from error


def _stored_field(key: str, value: Any) -> Any:
    """Return a variant field as VariantSpec holds it (JSON turned its tuples into lists)."""
    if key in ("qemu_args", "commands"):
        return tuple(value)
    if key in ("files", "on"):
        return tuple((str(first), str(second)) for first, second in value)
    return value


def resolve_seed(seed: int | None) -> int:
    """Return ``seed``, or a fresh random seed (0 <= seed < 2**31) when None."""
    return seed if seed is not None else random.SystemRandom().randrange(2**31)


RUN_KEYS = {
    "samples": "samples_per_variant",
    "warmup": "warmup_per_variant",
    "seed": "seed",
    "timeout": "timeout_s",
    "accel": "accel",
    "jobs": "jobs",
    "quiet-host": "quiet_host",
    "until": "until",
    "precision": "precision",
    "max-n": "max_n",
    "retries": "retries",
}


def read_toml(path: Path) -> dict[str, Any]:
    """Return a plan file's TOML as a dict; raises InputError if it cannot be read or parsed."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise InputError(f"cannot read plan {path}: {error.strerror}") from error
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise InputError(f"plan {path} is not valid TOML: {error}") from error


def read_plan_file(path: Path) -> tuple[VariantSpec, list[VariantSpec], dict[str, Any]]:
    """Read a TOML plan: return (base options, variants, run settings keyed like Plan's fields).

    Top-level keys are variant options (the base of every variant) or run settings (samples, warmup,
    seed, timeout, accel, jobs, quiet-host, until, precision, max-n); ``[variants.NAME]`` tables hold
    each variant's options. Raises InputError for an unreadable file or an unknown key."""
    data = read_toml(path)
    base = VariantSpec(name="base", kernel="")
    settings: dict[str, Any] = {}
    variant_tables: Mapping[str, Any] = data.get("variants", {})
    if not isinstance(variant_tables, dict):
        raise InputError(f"plan {path}: 'variants' must be tables, e.g. [variants.quiet]")
    for key, value in data.items():
        norm = key.replace("_", "-")
        if key == "variants":
            continue
        if norm in RUN_KEYS:
            settings[RUN_KEYS[norm]] = value
        else:
            try:
                base = apply_option(base, key, value)
            except InputError as error:
                raise InputError(f"plan {path}: {error}") from None
    variants = []
    for name, options in variant_tables.items():
        if not NAME_RE.match(name) or not isinstance(options, dict):
            raise InputError(f"plan {path}: bad variant [variants.{name}]")
        spec = replace(base, name=name)
        for key, value in options.items():
            try:
                spec = apply_option(spec, key, value)
            except InputError as error:
                raise InputError(f"plan {path}: variant {name}: {error}") from None
        variants.append(spec)
    return base, variants, settings


def validate_plan(plan: Plan) -> Plan:
    """Return ``plan`` if it can run; raises InputError naming the first problem."""
    if not plan.variants:
        raise InputError("the plan has no variants")
    names = [variant.name for variant in plan.variants]
    if len(set(names)) != len(names):
        raise InputError(f"variant names must be unique, got {', '.join(names)}")
    for variant in plan.variants:
        if not variant.kernel and not variant.image:
            raise InputError(f"variant {variant.name} names no kernel (give KERNEL, kernel=... or image=...)")
        if variant.icount_shift is not None and variant.smp != 1:
            raise InputError(f"variant {variant.name}: icount needs smp=1")
        _check_guest(variant)
    check_settings(
        samples_per_variant=plan.samples_per_variant,
        warmup_per_variant=plan.warmup_per_variant,
        jobs=plan.jobs,
        timeout_s=plan.timeout_s,
        accel=plan.accel,
        until=plan.until,
        precision=plan.precision,
        max_n=plan.max_n,
        retries=plan.retries,
    )
    check_slots_a_round(plan.slots_a_round, names)
    return plan


def _check_guest(variant: VariantSpec) -> None:
    """Raise InputError when the variant asks for bootscope's initramfs contents without using it,
    boots from a disk without saying which line ends the boot, or mixes an image with a guest of its
    own."""
    if variant.image:
        clash = [
            name
            for name, given in (
                ("disk", variant.disk),
                ("initrd", variant.initrd),
                ("file", variant.files),
                ("command", variant.commands),
            )
            if given
        ]
        if clash:
            raise InputError(
                f"variant {variant.name}: image boots the image's own system, so {', '.join(clash)} cannot"
                " apply: install what you need with `bootscope image build --packages`"
            )
        return
    extras = [name for name, given in (("file", variant.files), ("command", variant.commands)) if given]
    if extras and variant.initrd:
        raise InputError(
            f"variant {variant.name}: {' and '.join(extras)} go into bootscope's initramfs, which your own"
            " initrd replaces: put them into your initrd instead"
        )
    if variant.disk and not variant.initrd:
        if extras:
            raise InputError(
                f"variant {variant.name}: {' and '.join(extras)} go into bootscope's initramfs, which a"
                " disk without an initrd does not use: put them on the disk instead"
            )
        if variant.marker == defaults.MARKER_PREFIX:
            raise InputError(
                f"variant {variant.name}: booting from a disk needs --marker REGEX (marker=...): bootscope"
                " cannot know which line of your system ends its boot (e.g. --marker 'login:')"
            )


def build_plan(
    *,
    kernel: str | None,
    base_options: Sequence[tuple[str, Any]],
    variant_texts: Sequence[str],
    plan_file: Path | None,
    settings: GivenSettings,
) -> Plan:
    """Return a validated Plan from the command line: the plan file (if any) first, then ``kernel``
    and ``base_options`` (option name, value) as the base of every variant, then ``--variant`` texts,
    then ``settings`` (those given win over the plan file's). The seed is drawn at random when not
    given. Raises InputError naming the bad option."""
    base = VariantSpec(name="default", kernel="")
    variants: list[VariantSpec] = []
    merged: dict[str, Any] = {}
    if plan_file is not None:
        base, variants, merged = read_plan_file(plan_file)
    if kernel:
        # KERNEL replaces the plan file's base kernel, not the kernels that variants name themselves.
        variants = [replace(v, kernel=kernel) if v.kernel == base.kernel else v for v in variants]
        base = replace(base, kernel=kernel)
    for option, value in base_options:
        base = apply_option(base, option, value)
        variants = [apply_option(v, option, value) for v in variants]
    variants += [parse_variant(text, base) for text in variant_texts]
    if not variants:
        variants = [replace(base, name="default")]
    # Merged before typing: a command-line value replaces the file's, even one the file got wrong.
    merged.update(settings.given())
    return plan_with_settings(tuple(variants), settings_from_mapping(merged))


def plan_with_settings(variants: Sequence[VariantSpec], settings: GivenSettings) -> Plan:
    """Return the validated Plan of ``variants`` with ``settings`` (those not given: the defaults; a
    missing seed is drawn at random; a plan that boots an image gets IMAGE_BOOT_TIMEOUT_S where no
    timeout is given). Raises InputError for a plan that cannot run."""
    given = settings.given()
    seed = given.pop("seed", None)
    if "timeout_s" not in given and any(variant.image for variant in variants):
        given["timeout_s"] = defaults.IMAGE_BOOT_TIMEOUT_S
    return validate_plan(Plan(variants=tuple(variants), seed=resolve_seed(seed), **given))

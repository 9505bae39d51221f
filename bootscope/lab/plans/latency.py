"""The plan of ``latency run``: where it runs, its variants and the guard rails between them.

TARGET ``local`` runs the tools on this machine and ``ssh://USER@HOST[:PORT]`` on a machine reached
over SSH (no kernel or command-line variants: the machine boots what it boots); anything else is
the kernel of a QEMU guest (``debian:rt``, a path), and variants may change the kernel, its command
line (``isolcpus=``, ``nohz_full=``, ``threadirqs``, ``preempt=full``), the tool's settings and the
load. Variant syntax: ``NAME:OPTION=VALUE,...``
(:mod:`bootscope.lab.plans.variants`).

Guard rails: variants that differ in how the tool measures (interval, priority, threads, affinity,
duration, histogram, the main thread's CPU) or in load are not like for like; the plan refuses
them unless ``allow_unequal``, and then every report says loudly what differs. A different tool is
always refused. A duration too short for a tail quantile is said before anything runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from bootscope.amounts import parse_amount
from bootscope.errors import InputError
from bootscope.lab.plans.latency_tools import LatencySettings, check_settings
from bootscope.lab.plans.settings import RunSettings
from bootscope.lab.plans.variants import OptionTable, parse_variant, whole_number
from bootscope.lab.where import LOCAL, kind_of
from bootscope.stats.latency import MIN_EXCEEDANCES, enough_exceedances

# The settings that must match across variants for a like-for-like comparison.
COMPARABLE_SETTINGS = ("interval_us", "priority", "threads", "affinity", "duration_s", "histogram_us",
                       "main_cpu", "load")  # fmt: skip
DEFAULT_SMP = 2
DEFAULT_MEM_MB = 512


@dataclass(frozen=True, slots=True)
class LatencyVariant:
    """One variant: ``kernel`` (``local`` or a kernel spec), extra kernel ``append``, the guest's
    ``smp``/``mem_mb`` (QEMU only) and the tool's ``settings``."""

    name: str
    kernel: str = LOCAL
    append: str = ""
    smp: int = DEFAULT_SMP
    mem_mb: int = DEFAULT_MEM_MB
    settings: LatencySettings = field(default_factory=LatencySettings)

    @property
    def local(self) -> bool:
        """True when the tool runs on this machine."""
        return self.kernel == LOCAL

    @property
    def guest(self) -> bool:
        """True when the tool runs in a QEMU guest (not on this machine or an SSH machine)."""
        return not is_machine(self.kernel)


def is_machine(target: str) -> bool:
    """Return True when TARGET names a machine that runs the tools itself: ``local``, an SSH URL or a
    labgrid board (``labgrid:ENV[:TARGET]``, through its shell): its kind's ``runs_tools``."""
    return kind_of(target).runs_tools


def duration_s(text: Any) -> int:
    """Return a duration (``60s``, ``60``; at least 1) in whole seconds; raises InputError."""
    value, fraction = parse_amount(str(text), "s", "duration")
    if value is None or fraction is not None or value < 0:
        raise InputError(f"duration {text!r} is not a time such as 60s")
    return max(1, round(value))


def _settings(**changes: Any) -> Any:
    def apply(variant: LatencyVariant, value: Any) -> dict[str, Any]:
        updated = {key: convert(value) for key, convert in changes.items()}
        return {"settings": replace(variant.settings, **updated)}

    return apply


def _optional_int(option: str, low: int, high: int) -> Any:
    return lambda value: None if str(value).strip() in ("", "all") else whole_number(option, value, low, high)


OPTIONS = OptionTable(
    options={
        "kernel": lambda _v, value: {"kernel": str(value).strip()},
        "append": lambda v, value: {"append": f"{v.append} {value}".strip()},
        "smp": lambda _v, value: {"smp": whole_number("smp", value, 1, 64)},
        "mem": lambda _v, value: {"mem_mb": whole_number("mem", value, 64, 65536)},
        "tool": _settings(tool=lambda value: str(value).strip()),
        "duration": _settings(duration_s=duration_s),
        "interval": _settings(interval_us=lambda value: whole_number("interval", value, 1, 10**7)),
        "priority": _settings(priority=lambda value: whole_number("priority", value, 1, 99)),
        "histogram": _settings(histogram_us=lambda value: whole_number("histogram", value, 1, 10**6)),
        "threads": _settings(threads=_optional_int("threads", 1, 4096)),
        "affinity": _settings(affinity=lambda value: str(value).strip() or None),
        "mainaffinity": _settings(main_cpu=_optional_int("mainaffinity", 0, 4095)),
        "load": _settings(load=lambda value: str(value).strip()),
    },
    free_text=("append", "affinity"),
)


@dataclass(frozen=True, slots=True)
class LatencyPlan:
    """What ``latency run`` measures: the variants (baseline first), runs per variant, warm-ups,
    the seed of the order, the accelerator asked for and whether unequal settings were allowed."""

    variants: tuple[LatencyVariant, ...]
    samples_per_variant: int
    seed: int
    warmup_per_variant: int = 0
    accel: str = "auto"
    allow_unequal: bool = False
    identity: str | None = None  # an SSH machine's key and known_hosts file (None: ssh's defaults)
    known_hosts: str | None = None

    def settings(self) -> RunSettings:
        """Return the runner's settings (one slot = one tool run, -j 1: runs must not disturb each other)."""
        return RunSettings(
            seed=self.seed,
            samples_per_variant=self.samples_per_variant,
            warmup_per_variant=self.warmup_per_variant,
            accel=self.accel,
        )

    def to_dict(self) -> dict[str, Any]:
        """Return the plan as JSON-able data (read back by :func:`latency_plan_from_dict`); the SSH
        files only where given, so a plan without them is stored as before they existed."""
        data = asdict(self)
        for name in ("identity", "known_hosts"):
            if data[name] is None:
                del data[name]
        return data


def latency_plan_from_dict(data: Mapping[str, Any]) -> LatencyPlan:
    """Return the plan stored by :meth:`LatencyPlan.to_dict`; raises InputError for a broken one."""
    try:
        known = {f.name for f in fields(LatencySettings)}
        variants = tuple(
            replace(
                LatencyVariant(**{k: v for k, v in item.items() if k != "settings"}),
                settings=LatencySettings(**{k: v for k, v in item["settings"].items() if k in known}),
            )
            for item in data["variants"]
        )
        return LatencyPlan(
            variants=variants,
            samples_per_variant=int(data["samples_per_variant"]),
            seed=int(data["seed"]),
            warmup_per_variant=int(data.get("warmup_per_variant", 0)),
            accel=str(data.get("accel", "auto")),
            allow_unequal=bool(data.get("allow_unequal", False)),
            identity=data.get("identity"),
            known_hosts=data.get("known_hosts"),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise InputError(f"the stored latency plan cannot be read: {error}") from None


def build_latency_plan(
    target: str,
    base: LatencySettings,
    variant_texts: Sequence[str],
    samples: int,
    seed: int,
    warmup: int = 0,
    accel: str = "auto",
    allow_unequal: bool = False,
    smp: int = DEFAULT_SMP,
    identity: str | None = None,
    known_hosts: str | None = None,
) -> LatencyPlan:
    """Return the plan for TARGET (``local``, an SSH URL or a kernel spec; ``identity`` and
    ``known_hosts`` for an SSH machine) with ``base`` settings and the variant
    texts (none: one variant called ``base``). Raises InputError for bad options, kernel or command
    line variants on a machine (``local``, SSH), a mix of tools, or (without ``allow_unequal``) variants whose
    measuring settings or load differ."""
    if samples < 1 or warmup < 0:
        raise InputError("-n must be at least 1 and --warmup at least 0")
    kernel = target
    start = LatencyVariant(name="base", kernel=kernel, smp=smp, settings=base)
    variants = tuple(parse_variant(text, start, OPTIONS) for text in variant_texts) or (start,)
    names = [v.name for v in variants]
    if len(set(names)) != len(names):
        raise InputError(f"variant names must differ: {', '.join(names)}")
    for variant in variants:
        check_settings(variant.settings)
        if (is_machine(variant.kernel) or is_machine(target)) and variant.kernel != target:
            raise InputError(
                f"variant {variant.name}: kernel={variant.kernel} cannot mix with TARGET {target}: local runs"
                " measure this machine's own kernel; give a kernel TARGET (debian:rt, a path) to vary kernels"
            )
        if not variant.guest and variant.append:
            raise InputError(
                f"variant {variant.name}: append= needs a QEMU TARGET (this machine's command line is fixed)"
            )
    if len({v.settings.tool for v in variants}) > 1:
        raise InputError("variants use different tools: their numbers measure different things; run one tool")
    unequal = unequal_settings(variants)
    if unequal and not allow_unequal:
        raise InputError(
            f"variants differ in {', '.join(unequal)}: that changes what is measured, not only the kernel;"
            " make them equal, or pass --allow-unequal to measure anyway (every report then says so)"
        )
    return LatencyPlan(variants, samples, seed, warmup, accel, allow_unequal, identity, known_hosts)


def unequal_settings(variants: Sequence[LatencyVariant]) -> list[str]:
    """Return the names of the :data:`COMPARABLE_SETTINGS` that differ between ``variants``, and
    ``smp`` when guests differ in CPUs (one cyclictest thread per CPU: the thread count differs)."""
    names = [name for name in COMPARABLE_SETTINGS if len({getattr(v.settings, name) for v in variants}) > 1]
    if len({v.smp for v in variants if v.guest}) > 1:
        names.append("smp")
    return names


def short_run_notes(
    variants: Sequence[LatencyVariant], quantiles: Sequence[float] = (0.999, 0.9999)
) -> list[str]:
    """Return a warning per tail quantile that a variant's run is too short to resolve (fewer than
    10 expected samples beyond it per thread: ``duration / interval x (1 - p) < 10``)."""
    notes = []
    for variant in variants:
        settings = variant.settings
        if settings.tool == "oslat":
            continue  # oslat samples as fast as it can: its count is not duration / interval
        cycles = settings.duration_s * 1_000_000 // settings.interval_us
        for p in quantiles:
            if not enough_exceedances(cycles, p):
                need_s = MIN_EXCEEDANCES / (1 - p) * settings.interval_us / 1e6
                notes.append(
                    f"variant {variant.name}: {settings.duration_s} s at {settings.interval_us} us gives"
                    f" {cycles} cycles per thread, too few for p{p * 100:g} (shown n/a, not compared);"
                    f" it needs --duration {need_s:.0f}s or more"
                )
    return notes

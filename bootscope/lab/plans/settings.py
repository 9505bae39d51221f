"""How the runner runs a plan: one typed settings object, shared by every workload's plan, and the
settings a user gives (command line, plan file), typed and checked once, in :func:`check_settings`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from bootscope.errors import InputError

ACCELS = ("auto", "kvm", "tcg")
UNTIL = ("precise",)


@dataclass(frozen=True, slots=True)
class RunSettings:
    """How the runner runs a plan: ``samples_per_variant`` measured slots per variant after
    ``warmup_per_variant`` warm-up slots, in the order ``seed`` shuffles; ``jobs`` slots at once;
    ``quiet_host`` waits for an idle host and re-runs disturbed slots; ``retries`` re-runs a slot whose
    boot failed (timeout, panic, QEMU error) up to that many more times; ``until="precise"`` adds rounds
    (up to ``max_n``) until the stopping rule holds at ``precision`` (a fraction); ``accel`` is the
    accelerator asked for (auto, kvm, tcg); ``slots_a_round`` names the variants booted more than once
    in each measured round, with how many times (``tune``'s first look boots its baseline four times a
    round; a variant not named is booted once)."""

    seed: int
    samples_per_variant: int
    warmup_per_variant: int = 0
    accel: str = "auto"
    jobs: int = 1
    quiet_host: bool = False
    until: str | None = None
    precision: float = 0.01
    max_n: int | None = None
    retries: int = 0
    slots_a_round: tuple[tuple[str, int], ...] = ()


def stored_slots_a_round(value: Any) -> tuple[tuple[str, int], ...]:
    """Return ``slots_a_round`` as a plan holds it from its stored JSON (pairs turned into lists);
    raises TypeError or ValueError for a value that is not pairs of a name and a count."""
    return tuple((str(name), int(count)) for name, count in value or ())


def check_slots_a_round(slots_a_round: Sequence[tuple[str, int]], variants: Sequence[str]) -> None:
    """Raise InputError when ``slots_a_round`` names a variant not among ``variants``, names one
    twice, or asks for fewer than 1 slot a round."""
    names = [name for name, _ in slots_a_round]
    for name, count in slots_a_round:
        if name not in variants or names.count(name) > 1 or count < 1:
            raise InputError(f"slots a round: {name}={count} (each a variant of the run, once, 1 or more)")


def check_settings(
    *,
    samples_per_variant: int | None = None,
    warmup_per_variant: int | None = None,
    jobs: int | None = None,
    timeout_s: float | None = None,
    accel: str | None = None,
    until: str | None = None,
    precision: float | None = None,
    max_n: int | None = None,
    retries: int | None = None,
) -> None:
    """Check run settings (None: not given, nothing to check): the one place of these rules, for the
    settings a user gives and for every stored or built plan. Returns nothing; raises InputError naming
    the first bad value (-n below 1, negative warm-up, -j below 1, a timeout that is not positive, an
    unknown accelerator or --until, --max-n below -n, --precision outside 0..100 %, negative
    --retries)."""
    if samples_per_variant is not None and samples_per_variant < 1:
        raise InputError(f"samples per variant must be at least 1 (got {samples_per_variant})")
    if warmup_per_variant is not None and warmup_per_variant < 0:
        raise InputError(f"warm-up boots cannot be negative (got {warmup_per_variant})")
    if jobs is not None and jobs < 1:
        raise InputError(f"-j must be at least 1 (got {jobs})")
    if timeout_s is not None and timeout_s <= 0:
        raise InputError(f"--timeout must be positive (got {timeout_s})")
    if accel is not None and accel not in ACCELS:
        raise InputError(f"--accel must be one of {', '.join(ACCELS)} (got {accel!r})")
    if until is not None and until not in UNTIL:
        raise InputError(f"--until must be one of {', '.join(UNTIL)} (got {until!r})")
    if max_n is not None and samples_per_variant is not None and max_n < samples_per_variant:
        raise InputError(f"--max-n ({max_n}) must be at least -n ({samples_per_variant})")
    if precision is not None and not 0 < precision < 1:
        raise InputError(f"--precision must be between 0 and 100 % (got {precision:%})")
    if retries is not None and retries < 0:
        raise InputError(f"--retries cannot be negative (got {retries})")


@dataclass(frozen=True, slots=True)
class GivenSettings:
    """Run settings as a user gave them (command line or plan file), each named as the plan's field;
    None where not given (then the plan file's value or the default applies). ``timeout_s`` is in
    seconds, ``precision`` a fraction. Checked when built: raises InputError as
    :func:`check_settings` does."""

    samples_per_variant: int | None = None
    warmup_per_variant: int | None = None
    seed: int | None = None
    timeout_s: float | None = None
    accel: str | None = None
    jobs: int | None = None
    quiet_host: bool | None = None
    until: str | None = None
    precision: float | None = None
    max_n: int | None = None
    retries: int | None = None

    def __post_init__(self) -> None:
        check_settings(
            samples_per_variant=self.samples_per_variant,
            warmup_per_variant=self.warmup_per_variant,
            jobs=self.jobs,
            timeout_s=self.timeout_s,
            accel=self.accel,
            until=self.until,
            precision=self.precision,
            max_n=self.max_n,
            retries=self.retries,
        )

    def given(self) -> dict[str, Any]:
        """Return the settings given (field name -> value), those left None out."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}

    def over(self, base: GivenSettings) -> GivenSettings:
        """Return ``base`` with every setting given here in place of base's; raises InputError when
        the two together break a rule (e.g. the file's --max-n below the command line's -n)."""
        return replace(base, **self.given())


def settings_from_mapping(data: Mapping[str, Any]) -> GivenSettings:
    """Return the GivenSettings of ``data`` (field name -> value, e.g. from a TOML plan file), each
    converted to its field's type. Raises InputError for an unknown setting, a value of the wrong type
    or a bad value."""
    typed: dict[str, Any] = {}
    for key, value in data.items():
        if key not in _SETTING_TYPES:
            raise InputError(f"unknown plan setting {key!r}")
        try:
            typed[key] = _SETTING_TYPES[key](value)
        except (TypeError, ValueError):
            kind = _SETTING_TYPES[key].__name__
            raise InputError(f"plan setting {key}: {value!r} is not a {kind}") from None
    return GivenSettings(**typed)


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise ValueError(value)


_SETTING_TYPES: dict[str, Callable[[Any], Any]] = {
    "samples_per_variant": int,
    "warmup_per_variant": int,
    "seed": int,
    "timeout_s": float,
    "accel": str,
    "jobs": int,
    "quiet_host": _bool,
    "until": str,
    "precision": float,
    "max_n": int,
    "retries": int,
}

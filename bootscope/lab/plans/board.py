"""A board experiment's plan: a board reached through labgrid (``labgrid:ENV.yaml[:TARGET]``) booted
from power-on again and again, every boot timed from the power-on order to a console marker.

Its variants are the ways the board is rebooted (``--reboot cold,warm,kexec``), interleaved like any
variants: ``cold`` (power off, power on), ``warm`` (``reboot`` on the board's shell: the firmware
and the boot loader again) and ``kexec`` (the running kernel loaded again with kexec-tools and
started without them). Warm and kexec reboots need a shell: the labgrid target's ``ShellDriver``
(its console) or ``SSHDriver``. Named variants (``--variant NAME:reboot=kexec,append=quiet``) may
add words to a kexec reboot's command line: the console's cost, for one, as an experiment; or give a
kexec reboot a whole command line of its own (``cmdline=WORDS``: what `bootscope tune` tries on a board).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from bootscope import defaults
from bootscope.errors import InputError
from bootscope.lab.plans import variants
from bootscope.lab.plans.settings import (
    RunSettings,
    check_settings,
    check_slots_a_round,
    stored_slots_a_round,
)
from bootscope.lab.plans.variants import OptionTable
from bootscope.lab.reboot_variant import REBOOT_COLD as REBOOT_COLD
from bootscope.lab.reboot_variant import REBOOT_KEXEC as REBOOT_KEXEC
from bootscope.lab.reboot_variant import REBOOT_WARM as REBOOT_WARM
from bootscope.lab.reboot_variant import REBOOTS as REBOOTS
from bootscope.lab.reboot_variant import BoardVariant as BoardVariant

BOARD_TIMEOUT_S = 120.0


BOARD_OPTIONS = OptionTable(
    {
        "reboot": lambda _spec, value: {"reboot": str(value).strip()},
        "append": lambda _spec, value: {"append": str(value).strip()},
        "cmdline": lambda _spec, value: {"cmdline": str(value).strip()},
    },
    free_text=("append", "cmdline"),
)


@dataclass(frozen=True, slots=True)
class BoardPlan:
    """Boot the board ``board`` (``labgrid:ENV:TARGET``) ``samples_per_variant`` times after
    ``warmup_per_variant`` warm-ups for each of its ``variants``, or without them for each way
    ``reboot`` names (comma-separated: the variants, named by the way); with ``variants``, ``reboot``
    is the one way of those that name none. A boot ends at the first console line that matches
    ``marker`` (a regex) or after ``timeout_s``."""

    board: str
    seed: int
    samples_per_variant: int = defaults.SAMPLES_PER_VARIANT
    warmup_per_variant: int = 0
    timeout_s: float = BOARD_TIMEOUT_S
    marker: str = defaults.MARKER_PREFIX
    reboot: str = REBOOT_COLD
    variants: tuple[BoardVariant, ...] = ()
    slots_a_round: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        check_settings(
            samples_per_variant=self.samples_per_variant,
            warmup_per_variant=self.warmup_per_variant,
            timeout_s=self.timeout_s,
        )
        ways = self.reboot.split(",")
        unknown = [way for way in ways if way not in REBOOTS]
        if unknown or len(set(ways)) != len(ways):
            raise InputError(
                f"--reboot {self.reboot}: a labgrid board reboots {', '.join(REBOOTS)}, each named once"
                " (comma-separated: the variants of one run)"
            )
        if not self.marker:
            raise InputError("--marker must not be empty")
        if self.variants:
            _check_variants(self.variants, ways)
        check_slots_a_round(self.slots_a_round, self.variant_names)

    @property
    def ways(self) -> tuple[BoardVariant, ...]:
        """The run's variants in the order given (without ``variants``: one per way, named by it)."""
        return self.variants or tuple(BoardVariant(way, way) for way in self.reboot.split(","))

    @property
    def variant_names(self) -> tuple[str, ...]:
        """The variants' names, in order."""
        return tuple(variant.name for variant in self.ways)

    def variant(self, name: str) -> BoardVariant:
        """Return the variant called ``name``; raises KeyError for another name."""
        return {variant.name: variant for variant in self.ways}[name]

    @property
    def needs_shell(self) -> bool:
        """Whether a variant reboots the board through its shell (warm or kexec)."""
        return any(variant.reboot != REBOOT_COLD for variant in self.ways)

    def settings(self) -> RunSettings:
        """One boot at a time: one board."""
        return RunSettings(
            seed=self.seed,
            samples_per_variant=self.samples_per_variant,
            warmup_per_variant=self.warmup_per_variant,
            slots_a_round=self.slots_a_round,
        )

    def to_dict(self) -> dict[str, Any]:
        """Return the plan as stored with the experiment; :func:`board_plan_from_dict` reads it."""
        return asdict(self)


def _check_variants(variants: tuple[BoardVariant, ...], ways: list[str]) -> None:
    """Raise InputError for variants that cannot run: a default way that is not one, a repeated name,
    an unknown way, a command line for a warm reboot."""
    if len(ways) != 1:
        raise InputError(
            "with --variant, --reboot names the one way of the variants that name none"
            " (NAME:reboot=cold|warm|kexec)"
        )
    names = [variant.name for variant in variants]
    if len(set(names)) != len(names):
        raise InputError(f"variant names must be unique, got {names}")
    for variant in variants:
        if variant.reboot not in REBOOTS:
            raise InputError(f"variant {variant.name}: reboot={variant.reboot}: use {', '.join(REBOOTS)}")
        given = "append" if variant.append else "cmdline"
        if variant.has_words and variant.reboot == REBOOT_WARM:
            raise InputError(
                f"variant {variant.name}: {given}= needs reboot=kexec or cold (a warm boot's command line"
                " is the board's own: its boot loader's)"
            )


def build_board_variants(texts: Sequence[str], reboot: str) -> tuple[BoardVariant, ...]:
    """Return the variants ``NAME:reboot=WAY,append=WORDS,cmdline=WORDS`` texts describe, each
    starting from the way ``reboot`` names; raises InputError naming a bad text."""
    base = BoardVariant("", reboot)
    return tuple(variants.parse_variant(text, base, BOARD_OPTIONS) for text in texts)


def board_plan_from_dict(data: Mapping[str, Any]) -> BoardPlan:
    """Return the stored plan; raises InputError when it is not one this bootscope reads."""
    try:
        fields = {key: value for key, value in data.items() if key not in ("workload", "variants")}
        stored = tuple(BoardVariant(**item) for item in data.get("variants") or ())
        fields["slots_a_round"] = stored_slots_a_round(fields.get("slots_a_round"))
        return BoardPlan(**fields, variants=stored)
    except (TypeError, ValueError) as error:
        raise InputError(f"the stored board plan cannot be read by this bootscope ({error})") from None

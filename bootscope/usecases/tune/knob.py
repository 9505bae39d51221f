"""A knob `bootscope tune` may try: a change to the kernel command line (words removed by their name
before ``=``, words added) or QEMU options added to the guest's machine, with its risk class, source,
expected effect and the evidence for it."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, replace

from bootscope.lab.plans.boot import VariantSpec

SAFE, FEATURE, UNSAFE = "safe", "feature", "unsafe"
RISKS = (SAFE, FEATURE, UNSAFE)
PARAMETERS_DOC = "Documentation/admin-guide/kernel-parameters.txt"


@dataclass(frozen=True, slots=True)
class Knob:
    """One change to the command line or the QEMU machine: its name (``-initcall_debug``, ``+quiet``,
    ``+machine:hpet=off``), risk class, source, expected effect, the evidence in this boot, the
    words it removes and adds, and the QEMU options it adds (a QEMU guest's only)."""

    name: str
    risk: str
    source: str
    effect: str
    evidence: str
    remove: tuple[str, ...] = ()
    add: tuple[str, ...] = ()
    qemu_args: tuple[str, ...] = ()

    def apply(self, append: str) -> str:
        """Return ``append`` with this knob's words removed and added."""
        return with_knobs(append, [self])


def knob_settings(knob: Knob) -> frozenset[str]:
    """Return what ``knob`` sets: the names of the command-line words it adds or removes (the whole
    word for a name in LIST_KEYS, where several words stand together) and the QEMU machine
    properties it gives (``machine:type``). Two knobs that share one cannot both hold."""
    words = {w if word_key(w) in LIST_KEYS else word_key(w) for w in (*knob.add, *knob.remove)}
    machine = {
        f"machine:{prop.split('=', 1)[0]}"
        for flag, value in zip(knob.qemu_args, knob.qemu_args[1:], strict=False)
        if flag == "-machine"
        for prop in value.split(",")
    }
    return frozenset(words | machine)


def compatible(knobs: Sequence[Knob]) -> tuple[list[Knob], list[Knob]]:
    """Return ``knobs`` (best first) split into those that can hold together, each setting given
    once by the first knob that gives it, and those left out for a setting a knob before them gives."""
    chosen: list[Knob] = []
    left: list[Knob] = []
    taken: set[str] = set()
    for knob in knobs:
        settings = knob_settings(knob)
        if settings & taken:
            left.append(knob)
        else:
            chosen.append(knob)
            taken |= settings
    return chosen, left


def knobs_arm(base: VariantSpec, knobs: Sequence[Knob], append: str, name: str) -> VariantSpec:
    """Return the variant ``name``: ``base`` with the command line ``append`` as ``knobs`` change it
    and their QEMU options after its own."""
    extra = tuple(arg for knob in knobs for arg in knob.qemu_args)
    return replace(base, name=name, append=with_knobs(append, knobs), qemu_args=base.qemu_args + extra)


def words_of(append: str) -> list[str]:
    """Return the words of a command line (quotes kept together; unbalanced ones split by blanks)."""
    try:
        return shlex.split(append)
    except ValueError:
        return append.split()


def word_key(word: str) -> str:
    """Return a command-line word's name: what comes before its ``=`` (the whole word without one)."""
    return word.split("=", 1)[0]


def masked_units(append: str) -> list[str]:
    """Return the systemd units a command line masks (its ``systemd.mask=UNIT`` words), in order."""
    return [w.split("=", 1)[1] for w in words_of(append) if word_key(w) == "systemd.mask" and "=" in w]


def with_knobs(append: str, knobs: Sequence[Knob]) -> str:
    """Return ``append`` with every knob's words removed (by name) and added, in order."""
    removed = {key for knob in knobs for key in knob.remove}
    words = [w for w in words_of(append) if word_key(w) not in removed]
    for knob in knobs:
        words += [w for w in knob.add if w not in words]
    return " ".join(shlex.quote(w) if " " in w else w for w in words)


# A --try word that names a QEMU machine property (machine:hpet=off), not a command-line word
MACHINE_PREFIX = "machine:"

# Words that trade security or correctness away: a knob a user asks for with one of them is unsafe.
UNSAFE_KEYS = frozenset(
    {"mitigations", "init_on_free", "init_on_alloc", "nokaslr", "nopti", "nospectre_v1", "nospectre_v2",
     "spectre_v2", "pti", "audit", "selinux", "apparmor", "lockdown", "module.sig_enforce"}
)  # fmt: skip


# Words the kernel or systemd reads once per occurrence, each adding to a list: a knob adds one more.
LIST_KEYS = frozenset({"systemd.mask", "initcall_blacklist", "module_blacklist", "systemd.wants", "console"})


def given_knob(word: str) -> Knob:
    """Return the knob a user asks `tune` to try (``--try``): ``-NAME`` removes the word NAME (with
    any value), ``+WORD`` or ``WORD`` adds WORD in place of a word of the same name (beside it for a name in
    LIST_KEYS, such as ``systemd.mask``); ``machine:PROPERTY=VALUE`` adds ``-machine PROPERTY=VALUE``
    to a QEMU guest. It is of risk
    ``unsafe`` when its name is one of UNSAFE_KEYS, else ``feature`` (bootscope cannot tell what it
    switches off). Raises ValueError for an empty word, one with blanks, or a machine property
    taken away or without a value."""
    text = word.strip()
    if text in ("", "+", "-") or any(c.isspace() for c in text):
        raise ValueError(f"--try {word!r}: give one command-line word, e.g. quiet, +lpj=1, -initcall_debug")
    body = text.lstrip("+-")
    removing = text.startswith("-")
    if body.startswith(MACHINE_PREFIX):
        setting = body.removeprefix(MACHINE_PREFIX)
        if removing or "=" not in setting or not setting.split("=", 1)[0]:
            raise ValueError(
                f"--try {word!r}: a QEMU machine knob is machine:PROPERTY=VALUE, e.g. machine:hpet=off"
            )
        return Knob(
            f"+{body}", FEATURE, "--try (asked for)", f"QEMU's -machine {setting}", "asked for with --try",
            qemu_args=("-machine", setting),
        )  # fmt: skip
    risk = UNSAFE if word_key(body) in UNSAFE_KEYS else FEATURE
    effect = f"{body} removed" if removing else f"{body} on the command line"
    return Knob(
        f"-{word_key(body)}" if removing else f"+{body}",
        risk,
        "--try (asked for)",
        effect,
        "asked for with --try",
        remove=(word_key(body),) if removing or word_key(body) not in LIST_KEYS else (),
        add=() if removing else (body,),
    )

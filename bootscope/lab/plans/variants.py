"""The one variant syntax: ``NAME:OPTION=VALUE,...``, for every workload.

Each workload declares its options once in an :class:`OptionTable` (option name -> how the option
changes a variant) and which of them take free text in which a comma may appear; the same table
serves ``--variant`` texts and plan files. Value parsers shared by the tables live here too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from bootscope.errors import InputError

NAME_RE = re.compile(r"^[A-Za-z0-9_.+-]{1,64}$")
Spec = TypeVar("Spec")
# (the variant so far, the option's value) -> the fields the option changes
Applier = Callable[[Any, Any], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class OptionTable:
    """A workload's variant options: name -> applier, the free-text options (a comma inside their
    value stays in the value), and aliases (old spelling -> option)."""

    options: Mapping[str, Applier]
    free_text: tuple[str, ...] = ()
    aliases: Mapping[str, str] | None = None

    def key(self, option: str) -> str:
        """Return the option's canonical name (``_`` read as ``-``, aliases resolved)."""
        key = option.strip().replace("_", "-")
        return (self.aliases or {}).get(key, key)


def apply_option(spec: Spec, option: str, value: Any, table: OptionTable) -> Spec:
    """Return ``spec`` (a frozen dataclass) with one option of ``table`` applied; raises InputError
    naming an unknown option or a bad value."""
    key = table.key(option)
    if key not in table.options:
        raise InputError(f"unknown variant option {option!r} (known: {', '.join(table.options)})")
    return replace(spec, **table.options[key](spec, value))  # type: ignore[type-var]


def parse_variant(text: str, base: Spec, table: OptionTable) -> Spec:
    """Return the variant that ``NAME:OPTION=VALUE,...`` describes, starting from ``base``.

    A comma followed by something that is not ``OPTION=`` belongs to the previous free-text value.
    Raises InputError naming the bad part."""
    name, _, rest = text.partition(":")
    name = name.strip()
    if not NAME_RE.match(name):
        raise InputError(
            f"bad --variant {text!r}: expected NAME:OPTION=VALUE,... with a name of letters, digits, _.+-"
        )
    items: list[tuple[str, str]] = []
    for piece in rest.split(",") if rest.strip() else []:
        key, eq, value = piece.partition("=")
        if eq and table.key(key) in table.options:
            items.append((key, value))
        elif items and table.key(items[-1][0]) in table.free_text:
            items[-1] = (items[-1][0], f"{items[-1][1]},{piece}")
        elif not eq:
            raise InputError(f"bad --variant {text!r}: {piece!r} is not OPTION=VALUE")
        else:
            raise InputError(
                f"bad --variant {text!r}: unknown option {key.strip()!r} (known: {', '.join(table.options)})"
            )
    spec = replace(base, name=name)  # type: ignore[type-var]
    for key, value in items:
        spec = apply_option(spec, key, value, table)
    return spec


def whole_number(option: str, value: Any, low: int, high: int) -> int:
    """Return ``value`` as an int within ``low..high``; raises InputError naming ``option``."""
    try:
        number = int(str(value).strip())
    except ValueError:
        raise InputError(f"option {option}: {value!r} is not a whole number") from None
    if not low <= number <= high:
        raise InputError(f"option {option}: {number} is outside {low}..{high}")
    return number


def flag(option: str, value: Any) -> bool:
    """Return ``value`` (1/0, true/false, yes/no, on/off or a bool) as a bool; raises InputError."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise InputError(f"option {option} takes 1 or 0, not {value!r}")

"""A cold boot's command line on a labgrid board whose boot loader is U-Boot: given at U-Boot's prompt.

A board whose power driver only switches power boots what U-Boot's ``bootargs`` say. Where the
labgrid target has a ``UBootDriver``, bootscope takes its settings (``autoboot``, ``interrupt``,
``prompt``, ``init_commands``, ``boot_command``) and holds the dialogue itself on the console it
reads, so every line keeps its host stamp: the autoboot countdown is cut short, ``bootargs`` set
(in commands short enough for U-Boot's line buffer) and the boot command run. The driver is never
activated (its own reads would take the console's lines from bootscope).

Every cold boot of such a run goes through the prompt, the board's own command line included, so
the boot loader's time is the same kind of time for every arm (the countdown cut short, the
commands typed): comparable with each other, not with a boot left to itself.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bootscope.errors import BootError, InputError
from bootscope.lab.reboot_variant import BoardVariant
from bootscope.lab.targets.console_read import ConsoleDialogue, ConsoleRead, Step
from bootscope.model import Outcome
from bootscope.parse.patterns import PATTERNS

DRIVER = "UBootDriver"
DEFAULT_PROMPT = "=> "
DEFAULT_AUTOBOOT = "stop autoboot"  # labgrid's defaults, as its UBootDriver has them
DEFAULT_INTERRUPT = "\n"
DEFAULT_BOOT_COMMAND = "run bootcmd"
COMMAND_CHARS = 200  # one setenv's words at most (U-Boot's line buffer is 256 bytes on many boards)
# A command line U-Boot takes inside quotes as it is: printable, without quotes, '$' or '\'
_CMDLINE_RE = re.compile(r"^[ -~]*$")
_UNQUOTABLE = re.compile(r"[\"'$\\`]")
_STARTING = re.compile(r"Starting kernel")  # U-Boot's last line before any architecture's kernel
# U-Boot's "Kernel command line:", then the kernel's two prints: the analysis's own pattern
_PRINTED = next(pattern.regex for pattern in PATTERNS if pattern.name == "cmdline")


@dataclass(frozen=True, slots=True)
class UBootPrompt:
    """What a labgrid ``UBootDriver`` says about its U-Boot: the text to interrupt autoboot at, the
    keys that interrupt it, the prompt, commands to run first and the command that boots."""

    autoboot: str = DEFAULT_AUTOBOOT
    interrupt: str = DEFAULT_INTERRUPT
    prompt: str = DEFAULT_PROMPT
    init_commands: tuple[str, ...] = ()
    boot_command: str = DEFAULT_BOOT_COMMAND


def uboot_prompt_of(drivers: Iterable[object], name: str) -> UBootPrompt | None:
    """Return the settings of the ``UBootDriver`` among labgrid target ``name``'s ``drivers`` (None
    when it has none). Raises BootError in one line for a driver that asks for a password (bootscope
    types none)."""
    for driver in drivers:
        if type(driver).__name__ != DRIVER:
            continue
        if getattr(driver, "password", ""):
            raise BootError(
                f"labgrid: target {name!r}: its UBootDriver asks for a password, which bootscope does"
                " not type: unlock U-Boot or give the command line with the power driver"
            )
        return UBootPrompt(
            autoboot=str(getattr(driver, "autoboot", "") or DEFAULT_AUTOBOOT),
            interrupt=str(getattr(driver, "interrupt", "") or DEFAULT_INTERRUPT),
            prompt=str(getattr(driver, "prompt", "") or DEFAULT_PROMPT),
            init_commands=tuple(str(c) for c in getattr(driver, "init_commands", ()) or ()),
            boot_command=str(getattr(driver, "boot_command", "") or DEFAULT_BOOT_COMMAND),
        )
    return None


def setenv_commands(cmdline: str) -> list[str]:
    """Return the U-Boot commands that set ``bootargs`` to ``cmdline``: the first sets it, the next
    add words, each at most COMMAND_CHARS of them. Raises InputError in one line for a command line
    U-Boot would misread (quotes, ``$``, ``\\``, backquotes or characters that are not printable)."""
    if not _CMDLINE_RE.match(cmdline) or _UNQUOTABLE.search(cmdline):
        raise InputError(
            "a command line given at U-Boot's prompt takes printable characters without quotes,"
            f" '$', '\\' or '`': {cmdline!r}"
        )
    chunks: list[str] = []
    for word in cmdline.split():
        if chunks and len(chunks[-1]) + 1 + len(word) <= COMMAND_CHARS:
            chunks[-1] += f" {word}"
        else:
            chunks.append(word)
    if not chunks:
        return ["setenv bootargs"]
    return [f"setenv bootargs '{chunks[0]}'", *(f'setenv bootargs "${{bootargs}} {c}"' for c in chunks[1:])]


def cold_dialogue(
    prompt: UBootPrompt, own: str | None, variant: BoardVariant, board: str
) -> tuple[str, ConsoleDialogue]:
    """Return the command line a cold boot of ``variant`` is given at U-Boot's prompt (made of the
    board's ``own``, learnt before) and the dialogue that gives it. Raises BootError when the variant
    adds words to an own line not learnt, InputError for a line U-Boot would misread."""
    if not variant.cmdline and own is None:
        raise BootError(f"labgrid: {board}: the board's own command line is not known")
    given = variant.command_line(own or "")
    return given, uboot_dialogue(prompt, given)


def uboot_dialogue(prompt: UBootPrompt, cmdline: str) -> ConsoleDialogue:
    """Return the dialogue that boots through U-Boot's prompt with ``cmdline``, watching for the
    prompt coming back before U-Boot says it starts the kernel; raises InputError for a command line
    U-Boot would misread."""
    return ConsoleDialogue(uboot_steps(prompt, cmdline), re.compile(re.escape(prompt.prompt)), _STARTING)


def uboot_steps(prompt: UBootPrompt, cmdline: str) -> tuple[Step, ...]:
    """Return the dialogue that boots through U-Boot's prompt with ``cmdline``; raises InputError for
    a command line U-Boot would misread (see :func:`setenv_commands`)."""
    at_prompt = re.compile(re.escape(prompt.prompt))
    commands = [*prompt.init_commands, *setenv_commands(cmdline), prompt.boot_command]
    first = Step(re.compile(re.escape(prompt.autoboot)), prompt.interrupt, f"U-Boot's {prompt.autoboot!r}")
    rest = (Step(at_prompt, f"{command}\n", f"U-Boot's prompt before {command!r}") for command in commands)
    return (first, *rest)


def printed_command_lines(texts: Iterable[str]) -> list[str]:
    """Return every command line a boot's console printed, in order: U-Boot's ``Kernel command
    line: "..."`` (quotes taken off) and the kernel's ``Command line:`` and ``Kernel command line:``."""
    found = (_PRINTED.search(text) for text in texts)
    return [m[1].strip().removeprefix('"').removesuffix('"') for m in found if m is not None]


def booted_command_line(printed: Sequence[str]) -> str | None:
    """Return the command line a boot's ``printed`` lines (:func:`printed_command_lines`) agree on:
    the one printed most often, the longest of those (a console that loses a byte shortens a print;
    none adds one); None when nothing was printed."""
    if not printed:
        return None
    counts = Counter(" ".join(line.split()) for line in printed)
    return max(counts, key=lambda line: (counts[line], len(line)))


def given_line_differs(given: str, printed: Sequence[str]) -> bool:
    """Whether a boot's ``printed`` command lines (:func:`printed_command_lines`) show it booted
    another line than the one ``given`` at U-Boot's prompt: none of them is ``given``, word for word.
    (A console may lose a byte of one print: the boot is the line given when any print says so.)"""
    return bool(printed) and all(line.split() != given.split() for line in printed)


def judge_loader(read: ConsoleRead, dialogue: ConsoleDialogue, given: str) -> None:
    """Mark ``read`` a boot loader error where the boot through U-Boot's prompt did not boot the
    command line ``given``: the dialogue never finished, U-Boot's prompt came back, or the boot
    printed another command line (a boot command that sets ``bootargs`` itself)."""
    if read.outcome is Outcome.LOADER_ERROR:  # the console read saw the prompt come back
        last = next((line.text.strip() for line in reversed(read.lines) if line.text.strip()), "")
        read.outcome = Outcome.LOADER_ERROR
        read.reason = f"U-Boot's prompt came back after the boot command: {last[:200]}"
    elif not dialogue.done:
        read.outcome = Outcome.LOADER_ERROR
        read.reason = (
            f"never saw {dialogue.waiting_for} (a boot loader that does not wait cannot take a command line)"
        )
    elif read.outcome is Outcome.OK:
        printed = printed_command_lines(line.text for line in read.lines)
        if given_line_differs(given, printed):
            read.outcome = Outcome.LOADER_ERROR
            read.reason = (
                f"the board booted {printed[-1]!r}, not the {given!r} set in bootargs (its"
                " UBootDriver's boot_command sets bootargs itself: give it one that boots with bootargs)"
            )

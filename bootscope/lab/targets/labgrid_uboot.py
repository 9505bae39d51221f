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

DRIVER = "UBootDriver"
LOADER_DRIVERS = (DRIVER, "BareboxDriver")  # command drivers of a boot loader, not of a shell
DEFAULT_PROMPT = "=> "
DEFAULT_AUTOBOOT = "stop autoboot"  # labgrid's defaults, as its UBootDriver has them
DEFAULT_INTERRUPT = "\n"
DEFAULT_BOOT_COMMAND = "run bootcmd"
COMMAND_CHARS = 200  # one setenv's words at most (U-Boot's line buffer is 256 bytes on many boards)
KEPT_CHARS = 4096  # of the console's text not yet matched: enough for any prompt
# A command line U-Boot takes inside quotes as it is: printable, without quotes, '$' or '\'
_CMDLINE_RE = re.compile(r"^[ -~]*$")
_UNQUOTABLE = re.compile(r"[\"'$\\`]")
_STARTING = re.compile(r"Starting kernel")
_PRINTED = re.compile(
    r"(?:Kernel )?[Cc]ommand line: (.*)$"
)  # U-Boot's last line before any architecture's kernel


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


@dataclass(frozen=True, slots=True)
class Step:
    """Wait for ``expect`` (a regex) on the console, then write ``send``; ``what`` names the wait."""

    expect: re.Pattern[str]
    send: str
    what: str


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


class ConsoleDialogue:
    """Answers a console: fed what it prints, returns what to write (:meth:`feed`), one step at a
    time; after the last step it watches for ``again`` (the prompt coming back: the boot command
    failed) until ``settled`` shows (the boot loader started the kernel)."""

    def __init__(
        self,
        steps: Sequence[Step],
        again: re.Pattern[str] | None = None,
        settled: re.Pattern[str] | None = None,
    ) -> None:
        self._steps = list(steps)
        self._next = 0
        self._again = again
        self._settled = settled
        self._text = ""
        self.failed = False  # ``again`` was seen after the last step

    @property
    def done(self) -> bool:
        """Whether every step was answered."""
        return self._next >= len(self._steps)

    @property
    def waiting_for(self) -> str:
        """What the dialogue waits for (empty once done)."""
        return "" if self.done else self._steps[self._next].what

    def feed(self, data: bytes) -> list[str]:
        """Take what the console printed; return the texts to write to it now, in order."""
        self._text = (self._text + data.decode("utf-8", errors="replace"))[-KEPT_CHARS:]
        replies: list[str] = []
        while not self.done:
            step = self._steps[self._next]
            found = step.expect.search(self._text)
            if found is None:
                return replies
            self._text = self._text[found.end() :]
            self._next += 1
            replies.append(step.send)
        if self._again is None:
            return replies
        settled = self._settled.search(self._text) if self._settled is not None else None
        if settled is not None:
            self._again = None  # the kernel started: its lines are not the boot loader's
        elif self._again.search(self._text):
            self.failed = True
        return replies


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

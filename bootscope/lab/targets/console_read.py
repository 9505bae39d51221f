"""The console of a labgrid board: bytes read from its ``ConsoleProtocol`` driver, cut into lines
stamped on this host as they arrive, read until a marker (a panic, or a timeout), and answered
where a :class:`ConsoleDialogue` asks (U-Boot's prompt: :mod:`bootscope.lab.targets.labgrid.uboot`).

labgrid's QEMU driver waits about 10 ms after data arrives before it reads, so its stamps may be up to
10 ms late; a serial console's are as late as its driver delivers the bytes.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bootscope.errors import BootError
from bootscope.lab.qemu.process import LineSplitter
from bootscope.lab.targets.base import LineCallback
from bootscope.lab.targets.shell_ops import one_line
from bootscope.model import LogLine, Outcome

READ_BYTES = 4096
READ_WAIT_S = 0.2  # the longest one console read waits; Ctrl-C and the timeout are seen this often
DRAIN_QUIET_S = 0.3  # before a reboot's order: the console is drained until quiet this long
DRAIN_MAX_S = 10.0  # ... or for this long at most
KEPT_CHARS = 4096  # of a dialogue's console text not yet matched: enough for any prompt
_PANIC = re.compile(r"Kernel panic - not syncing")


@dataclass(slots=True)
class ConsoleRead:
    """What one read of the console until a marker saw: the lines, the outcome and why."""

    lines: list[LogLine] = field(default_factory=list)
    outcome: Outcome = Outcome.TIMEOUT
    reason: str = ""

    def why(self, timeout_s: float, since: str) -> str:
        """Return the read's reason, or for a timeout that no marker came within ``timeout_s`` of
        ``since`` (``power-on``, ``the warm reboot's order``)."""
        if self.outcome is not Outcome.TIMEOUT:
            return self.reason
        return f"no marker within {timeout_s:g} s of {since}"


@dataclass(frozen=True, slots=True)
class Step:
    """Wait for ``expect`` (a regex) on the console, then write ``send``; ``what`` names the wait."""

    expect: re.Pattern[str]
    send: str
    what: str


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


class BoardConsole:
    """The console of target ``name``, through a console driver ``driver`` (``read(size, timeout)``
    and ``write(data)``: labgrid's ``ConsoleProtocol``, a libvirt domain's console stream); ``who``
    begins its errors (``labgrid``, ``libvirt``)."""

    def __init__(self, driver: Any, name: str, who: str = "labgrid") -> None:
        self._driver = driver
        self._name = name
        self._who = who

    def read_until(
        self,
        start_ns: int,
        timeout_s: float,
        marker: re.Pattern[str],
        on_line: LineCallback | None,
        dialogue: ConsoleDialogue | None = None,
    ) -> ConsoleRead:
        """Read the console until a line matches ``marker``, a panic, or ``timeout_s`` from
        ``start_ns``; every line stamped on arrival, and ``dialogue``'s replies written as the
        console asks for them (it failing ends the read). (Before a reboot's order the console is
        drained: a marker line after it is the new boot's, even one whose kernel prints no banner,
        as under ``quiet``.)"""
        splitter = LineSplitter()
        read = ConsoleRead()
        deadline_ns = start_ns + int(timeout_s * 1e9)
        while time.monotonic_ns() < deadline_ns:
            wait_s = min(READ_WAIT_S, (deadline_ns - time.monotonic_ns()) / 1e9)
            data = self.read(max(wait_s, 0.001))
            if dialogue is not None and data:
                self._answer(dialogue, data)
                if dialogue.failed:
                    read.outcome = Outcome.LOADER_ERROR
            for line in splitter.feed(data, time.monotonic_ns()):
                read.lines.append(line)
                if on_line is not None:
                    on_line(line)
                if _PANIC.search(line.text):
                    read.outcome, read.reason = Outcome.PANIC, line.text.strip()[:200]
                if marker.search(line.text) and read.outcome is not Outcome.PANIC:
                    read.outcome, read.reason = Outcome.OK, ""
            if read.outcome is not Outcome.TIMEOUT:
                break
        read.lines += splitter.flush(time.monotonic_ns())
        return read

    def _answer(self, dialogue: ConsoleDialogue, data: bytes) -> None:
        """Write what ``dialogue`` answers to ``data`` on the console."""
        for text in dialogue.feed(data):
            self.write(text.encode())

    def drain(self) -> None:
        """Read and drop what the console holds (the last boot's lines after its marker), until it is
        quiet for DRAIN_QUIET_S or DRAIN_MAX_S have passed."""
        deadline_ns = time.monotonic_ns() + int(DRAIN_MAX_S * 1e9)
        while time.monotonic_ns() < deadline_ns and self.read(DRAIN_QUIET_S):
            pass

    def read(self, wait_s: float) -> bytes:
        """Return what the console holds, waiting up to ``wait_s`` for it (b"" when nothing came);
        raises BootError when labgrid cannot read it."""
        try:
            data = self._driver.read(size=READ_BYTES, timeout=wait_s)
        except Exception as error:
            if type(error).__name__ == "TIMEOUT":  # pexpect's, raised by labgrid for no data
                return b""
            raise BootError(f"{self._who}: the console of {self._name!r}: {one_line(error)}") from None
        return bytes(data or b"")

    def write(self, data: bytes) -> None:
        """Write ``data`` to the console; raises BootError when labgrid cannot."""
        try:
            self._driver.write(data)
        except Exception as error:
            raise BootError(f"{self._who}: the console of {self._name!r}: {one_line(error)}") from None

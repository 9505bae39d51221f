"""A fake board (the ``powers on`` capability): deterministic synthetic consoles on a virtual clock,
so that the board workload (cold, warm and kexec reboots, command lines given to cold boots, the
refusals before anything is stored, Ctrl-C and ``--resume``) is tested without booting anything.

Its console says what a real one says where bootscope reads it: the firmware's line (untimed), the
kernel's banner, ``Command line:`` with the line it booted, ``Run /init as init process`` and the
marker; a reboot's lines since the order begin with the old kernel's last words (``reboot:
Restarting system`` or ``kexec_core: Starting new kernel``). Its times come from its fields:
``firmware_ms`` from power-on (or a warm reboot's restart) to the kernel's first line, ``stop_ms``
from the order to the old kernel's last line, ``init_ms`` the kernel's time to init, and the word
``fake.init_ms=N`` on the line booted overrides it (a knob that saves time). ``events`` keeps what
was asked of it, in order.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bootscope import defaults
from bootscope.errors import BootError
from bootscope.lab.qemu.accel import AccelChoice
from bootscope.lab.reboot_variant import REBOOT_KEXEC, BoardVariant
from bootscope.lab.targets.base import LineCallback, StartCallback
from bootscope.model import Boot, LogLine, Outcome

FAKE_BOARD_RELEASE = "6.1.0-fake-board"
_NS = 1_000_000_000
_INIT_WORD = re.compile(r"(?:^|\s)fake\.init_ms=(\d+(?:\.\d+)?)")


@dataclass(slots=True)
class FakeBoard:
    """A board faked: ``own`` is its own command line, ``takes_lines`` whether a cold boot can be
    given another (a power driver that starts the kernel), ``has_shell`` whether warm and kexec
    reboots can be ordered; ``before_boot`` (if set) runs before each boot with the way (``cold``,
    ``warm``, ``kexec``), e.g. to raise KeyboardInterrupt like a Ctrl-C mid-run."""

    name: str = "labgrid:/fake/board.yaml:main"
    own: str = "console=ttyS0 root=/dev/mmcblk0p2"
    takes_lines: bool = True
    has_shell: bool = True
    firmware_ms: float = 1500.0
    stop_ms: float = 200.0
    init_ms: float = 900.0
    before_boot: Callable[[str], None] | None = None
    events: list[str] = field(default_factory=list)
    up: bool = False
    closed: int = 0
    _running: str | None = None  # the command line of the running system
    _clock_ns: itertools.count[int] = field(default_factory=lambda: itertools.count(10**12, 10**11))

    def host_info(self) -> dict[str, Any]:
        """Return a host description that says it is fake."""
        return {"hostname": "fake", "target": self.name}

    def open(self) -> None:
        """Nothing to reach."""
        self.events.append("open")

    def accel(self) -> AccelChoice:
        """Its own (fake) hardware."""
        return AccelChoice("hardware", "fake board: nothing to choose")

    def check_shell(self) -> None:
        """Raise BootError in one line when it has no shell."""
        if not self.has_shell:
            raise BootError(f"{self.name}: no shell to order a warm or kexec reboot on (fake)")

    def check_boot_args(self) -> None:
        """Raise BootError in one line when a cold boot takes no command line."""
        if not self.takes_lines:
            raise BootError(f"{self.name}: a cold boot takes no command line (fake)")

    def give_command_lines(self, timeout_s: float, marker_regex: str, need_own: bool) -> None:
        """Ready, where it takes lines (see :meth:`check_boot_args`)."""
        self.check_boot_args()
        self.events.append("lines")

    def power_cycle(
        self,
        timeout_s: float,
        marker_regex: str,
        on_line: LineCallback | None,
        keep_on: bool = False,
        on_start: StartCallback | None = None,
        variant: BoardVariant | None = None,
    ) -> Boot:
        """One boot from power-on with the line ``variant`` makes of its own (refused where it takes
        none), left on when ``keep_on``."""
        if self.before_boot is not None:
            self.before_boot("cold")
        return self._power_on(keep_on, on_line, variant)

    def _power_on(self, keep_on: bool, on_line: LineCallback | None, variant: BoardVariant | None) -> Boot:
        words = variant is not None and variant.has_words
        if words:
            self.check_boot_args()
        line = variant.command_line(self.own) if variant is not None and words else self.own
        start_ns = next(self._clock_ns)
        self.events.append(f"power on: {line}")
        lines = self._firmware(start_ns) + self._kernel(line, start_ns + int(self.firmware_ms * 1e6))
        return self._ended(lines, line, start_ns, keep_on, on_line, ("fake-board", "cold"))

    def reboot(
        self,
        way: str,
        timeout_s: float,
        marker_regex: str,
        on_line: LineCallback | None,
        on_start: StartCallback | None = None,
        variant: BoardVariant | None = None,
    ) -> Boot:
        """A warm or kexec reboot ordered on its shell (a board that is not up is switched on first,
        not measured); a kexec reboot boots the line ``variant`` makes of the running one."""
        self.check_shell()
        if not self.up:
            self._power_on(True, None, None)  # not measured
        if self.before_boot is not None:
            self.before_boot(way)
        running = self._running or self.own
        line = (variant or BoardVariant(way, way)).command_line(running) if way == REBOOT_KEXEC else self.own
        order_ns = next(self._clock_ns)
        self.events.append(f"{way}: {line}")
        last_words = "kexec_core: Starting new kernel" if way == REBOOT_KEXEC else "reboot: Restarting system"
        stop_ns = order_ns + int(self.stop_ms * 1e6)
        old = [LogLine(f"[   42.000000] {last_words}", host_ns=stop_ns)]
        firmware = [] if way == REBOOT_KEXEC else self._firmware(stop_ns)
        kernel_ns = stop_ns + (0 if way == REBOOT_KEXEC else int(self.firmware_ms * 1e6))
        lines = old + firmware + self._kernel(line, kernel_ns)
        return self._ended(lines, line, order_ns, True, on_line, ("fake-board", way))

    def close(self) -> None:
        """Switch it off; safe to call twice."""
        self.up = False
        self.closed += 1

    def _ended(
        self,
        lines: list[LogLine],
        line: str,
        start_ns: int,
        keep_on: bool,
        on_line: LineCallback | None,
        command: tuple[str, ...],
    ) -> Boot:
        for each in lines:
            if on_line is not None:
                on_line(each)
        self.up, self._running = keep_on, line
        return Boot(
            lines=tuple(lines),
            outcome=Outcome.OK,
            machine=self.name,
            host_start_ns=start_ns,
            host_end_ns=lines[-1].host_ns,
            command=command,
        )

    @staticmethod
    def _firmware(start_ns: int) -> list[LogLine]:
        return [LogLine("U-Boot 2023.01 (fake)", host_ns=start_ns + 100_000_000)]

    def _kernel(self, line: str, zero_ns: int) -> list[LogLine]:
        """The kernel's lines from its time zero at host ``zero_ns``, its time to init the line's
        ``fake.init_ms`` or ``init_ms``."""
        found = _INIT_WORD.search(line)
        init_s = float(found.group(1) if found else self.init_ms) / 1000
        texts = [
            (0.0, f"Linux version {FAKE_BOARD_RELEASE} (fake@bootscope) (gcc 12.2.0) #1 SMP"),
            (0.0, f"Command line: {line}"),
            (init_s, "Run /init as init process"),
        ]
        lines = [LogLine(f"[{t:12.6f}] {text}", host_ns=zero_ns + int(t * _NS)) for t, text in texts]
        uptime_s = init_s + 0.05
        lines.append(
            LogLine(f"{defaults.MARKER_PREFIX} uptime={uptime_s:.3f}", host_ns=zero_ns + int(uptime_s * _NS))
        )
        return lines

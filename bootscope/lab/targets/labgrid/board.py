"""A board reached through labgrid: its power through the labgrid target's ``PowerProtocol`` driver,
its console through its ``ConsoleProtocol`` driver (labgrid's QEMUDriver is both, which makes any
machine a board). A boot is one power cycle: off, then on at the moment every time is measured
from, then the console read until the marker, each line stamped on this host when it arrives (as a
QEMU console is), then off again. labgrid is imported when a board is first used: no other command
pays for it.

A cold boot with a command line of its own goes to the power driver where it starts the kernel
(labgrid's QEMU driver, :mod:`bootscope.lab.targets.labgrid.boot_args`), else to U-Boot's prompt
where the target has a ``UBootDriver`` (:mod:`bootscope.lab.targets.labgrid.uboot`): every cold boot
of that run then goes through the prompt.

A warm or kexec reboot (:meth:`LabgridBoard.reboot`) is ordered on the board's shell
(:mod:`bootscope.lab.targets.labgrid.shell`) and timed from the order, its console read the same way.

A target that reaches its board through a place on a labgrid coordinator (a ``RemotePlace``
resource) has the place acquired when the board is opened and released when it is closed, however
bootscope ends (see :mod:`bootscope.lab.targets.labgrid.place`).
Its console is read by :mod:`bootscope.lab.targets.console_read`.
"""

from __future__ import annotations

import contextlib
import re
import sys
import time
from typing import Any

from bootscope.errors import BootError
from bootscope.lab.hostinfo import measuring_host
from bootscope.lab.qemu.accel import AccelChoice
from bootscope.lab.reboot_variant import REBOOT_KEXEC, BoardVariant
from bootscope.lab.targets.base import LineCallback, StartCallback
from bootscope.lab.targets.console_read import BoardConsole
from bootscope.lab.targets.labgrid.address import BoardSpec, parse_board
from bootscope.lab.targets.labgrid.boot_args import check_boot_args, own_boot_args, set_boot_args
from bootscope.lab.targets.labgrid.place import Place, PlaceHolds, places_of
from bootscope.lab.targets.labgrid.shell import BoardShell
from bootscope.lab.targets.labgrid.uboot import (
    UBootPrompt,
    booted_command_line,
    cold_dialogue,
    judge_loader,
    printed_command_lines,
    uboot_prompt_of,
)
from bootscope.lab.targets.shell_ops import CommandsOnShell, one_line
from bootscope.model import Boot, Outcome

ACCEL = AccelChoice(
    "hardware", "a board powered through labgrid: it boots on its own hardware, bootscope chooses nothing"
)
SHELL_WAIT_S = 300.0  # a board switched on for commands: how long its shell may take to answer


class LabgridBoard(CommandsOnShell):
    """The board ``labgrid:ENV:TARGET`` names; opened on first use, closed by :meth:`close`. It also
    runs commands on its shell (``latency run labgrid:...``): the board is booted from power-on first."""

    on_this_host = False

    def __init__(self, url: str) -> None:
        self.spec: BoardSpec = parse_board(url)
        self._url = url
        self._target: Any = None
        self._power: Any = None
        self._console: Any = None
        self._reader: BoardConsole | None = None
        self._holds = PlaceHolds()
        self._shell: BoardShell | None = None
        self._up = False  # the board booted to its marker and was left on (a shell may be reached)
        self._kexeced = False  # the running system came from a kexec here (words may have been added)
        self._reached = False  # the shell of the running system is logged in
        self._cmdline: str | None = None  # the command line of the board's last power-on or warm boot
        self._own_args: str | None = None  # the power driver's own command line (labgrid's QEMU driver)
        # the settings of the target's UBootDriver, where the power driver starts no kernel
        self._loader: UBootPrompt | None = None
        self._through_loader = False  # every cold boot goes through U-Boot's prompt (a run with words)
        self._loader_own: str | None = None  # the board's own command line, for the prompt

    @property
    def name(self) -> str:
        """The board as the plan names it."""
        return self._url

    def host_info(self) -> dict[str, Any]:
        """Return this host's description and the board's labgrid environment and target."""
        where = {"labgrid_env": str(self.spec.env), "labgrid_target": self.spec.target}
        places = self._places()
        if places:
            where["labgrid_places"] = ", ".join(f"{place.name}@{place.coordinator}" for place in places)
        return measuring_host() | where

    def _places(self) -> list[Place]:
        if self._holds.places:
            return self._holds.places
        with contextlib.suppress(Exception):  # a bad environment is reported when the board opens
            from labgrid.config import Config

            return places_of(Config(str(self.spec.env)), self.spec.target)
        return []

    def open(self) -> None:
        """Open the labgrid environment and its target, acquiring the target's places first; raises
        BootError (one line: labgrid's reason) when any of it fails, with every place released."""
        if self._target is not None:
            return
        try:
            from labgrid import Environment
        except ImportError as error:
            raise BootError(f"labgrid is not installed ({error}): pip install labgrid") from None
        try:
            env = Environment(config_file=str(self.spec.env))
            places = places_of(env.config, self.spec.target)
        except Exception as error:  # labgrid raises its own errors for a bad environment
            raise BootError(f"labgrid: {self.spec.env}: {one_line(error)}") from None
        try:
            self._holds.acquire(places)
            target = self._target_of(env)
        except BaseException:
            self._holds.release()
            raise
        if target is None:
            self._holds.release()
            raise BootError(f"labgrid: {self.spec.env} has no target {self.spec.target!r}")
        try:
            self._power = target.get_driver("PowerProtocol")
            self._console = target.get_driver("ConsoleProtocol")
            self._reader = BoardConsole(self._console, self.spec.target)
            self._own_args = own_boot_args(self._power)
            if self._own_args is None:
                self._loader = uboot_prompt_of(target.drivers, self.spec.target)
        except BootError:
            self._holds.release()
            raise
        except Exception as error:
            self._holds.release()
            raise BootError(f"labgrid: target {self.spec.target!r}: {one_line(error)}") from None
        self._target = target

    def _target_of(self, env: Any) -> Any:
        try:
            return env.get_target(self.spec.target)
        except Exception as error:  # labgrid raises its own errors (a place's resources, a driver)
            raise BootError(f"labgrid: {self.spec.env}: {one_line(error)}") from None

    def accel(self) -> AccelChoice:
        """A board runs on its own hardware: nothing to choose."""
        return ACCEL

    def power_cycle(
        self,
        timeout_s: float,
        marker_regex: str,
        on_line: LineCallback | None,
        keep_on: bool = False,
        on_start: StartCallback | None = None,
        variant: BoardVariant | None = None,
    ) -> Boot:
        """Boot the board once from power-on (see the module's docstring), with the command line
        ``variant`` makes of the board's own (:func:`power_on_command_line`: labgrid's QEMU driver
        only); raises BootError when labgrid cannot drive its power or console, or the board cannot
        take a command line, KeyboardInterrupt when ``on_line`` raises it (the board is switched off
        either way, and after the boot unless ``keep_on`` and it reached its marker with its own
        command line: a warm or kexec reboot starts from the board's own)."""
        self.open()
        self._up = self._kexeced = self._reached = False
        self._switch(on=False)
        given, dialogue = "", None
        if self._through_loader and self._loader is not None and variant is not None:
            given, dialogue = cold_dialogue(self._loader, self._loader_own, variant, self.name)
        if dialogue is None:
            set_boot_args(
                self._target, (self._power, self._console), self._own_args, variant, self.spec.target
            )
        keep_on = keep_on and not (variant is not None and variant.has_words)
        start_ns = time.monotonic_ns()
        try:
            self._switch(on=True)
            read = self._console_reader().read_until(
                start_ns, timeout_s, re.compile(marker_regex), on_line, dialogue
            )
        except BaseException:
            self._switch(on=False)
            raise
        end_ns = time.monotonic_ns()
        if dialogue is not None:
            judge_loader(read, dialogue, given)
        self._up = keep_on and read.outcome is Outcome.OK
        if not self._up:
            self._switch(on=False)
        return Boot(
            lines=tuple(read.lines),
            outcome=read.outcome,
            reason=read.why(timeout_s, "power-on"),
            machine=self.name,
            host_start_ns=start_ns,
            host_end_ns=end_ns,
            command=("labgrid", str(self.spec.env), self.spec.target),
        )

    def give_command_lines(self, timeout_s: float, marker_regex: str, need_own: bool) -> None:
        """Make ready to give cold boots command lines of their own: through the power driver where it
        starts the kernel, else through U-Boot's prompt (the target's ``UBootDriver``), the board's
        own command line learnt first when ``need_own`` (:meth:`boot_command_line`). Raises
        BootError in one line when the board can take none, or its own cannot be learnt."""
        self.check_boot_args()
        if self._own_args is not None or self._through_loader:
            return
        if need_own:
            self._loader_own = self.boot_command_line(timeout_s, marker_regex)
        self._through_loader = True

    def boot_command_line(self, timeout_s: float, marker_regex: str) -> str:
        """Return the command line the board boots with from power-on: its power driver's, else the
        one a boot from power-on (not measured, the boot loader left to itself) prints on the
        console, else its shell's ``/proc/cmdline``. Raises BootError when none can be read."""
        self.open()
        if self._own_args is not None:
            return self._own_args
        through, self._through_loader = self._through_loader, False
        try:
            boot = self.power_cycle(timeout_s, marker_regex, None, keep_on=True)
        finally:
            self._through_loader = through
        printed = booted_command_line(printed_command_lines(line.text for line in boot.lines))
        if printed:
            self._switch(on=False)
            self._up = False
            return printed
        if boot.outcome is not Outcome.OK:
            raise BootError(
                f"labgrid: {self.name}: the board did not boot to learn its command line: {boot.reason}"
            )
        try:
            line = self.kernel_facts().get("cmdline")
        except BootError as error:
            raise BootError(
                f"labgrid: {self.name}: its console printed no command line, and its shell could not"
                f" read one ({error}): give each variant its whole line (cmdline=)"
            ) from None
        finally:
            self._switch(on=False)
            self._up = False
        if not line:
            raise BootError(
                f"labgrid: {self.name}: its console printed no command line and its shell read none:"
                " give each variant its whole line (cmdline=)"
            )
        return str(line).strip()

    @property
    def where(self) -> str:
        """The board, for the user."""
        return self.name

    def _command_shell(self) -> BoardShell:
        """Return the board's shell, logged in: the board is switched off and on first unless a boot of
        this run left it up, and its shell waited for up to SHELL_WAIT_S."""
        self.check_shell()
        assert self._shell is not None
        if self._up and self._reached:
            return self._shell
        if not self._up:
            self._switch(on=False)
            self._switch(on=True)
            self._up = self._kexeced = False
        self._shell.reach_within(SHELL_WAIT_S)
        self._up = self._reached = True
        return self._shell

    def check_boot_args(self) -> None:
        """Raise BootError in one line when a cold boot cannot be given a command line: the board's
        power driver starts no kernel of its own and the target has no UBootDriver to give U-Boot
        one (opening the board first)."""
        self.open()
        if self._loader is None:
            check_boot_args(self._power, self._own_args, self.spec.target)

    def check_shell(self) -> None:
        """Raise BootError in one line when the target has no shell driver (opening the board first)."""
        self.open()
        self._shell = self._shell or BoardShell(self._target, self.spec.target)

    def reboot(
        self,
        way: str,
        timeout_s: float,
        marker_regex: str,
        on_line: LineCallback | None,
        on_start: StartCallback | None = None,
        variant: BoardVariant | None = None,
    ) -> Boot:
        """Reboot the board the ``way`` given (warm, or kexec with the command line ``variant`` makes of
        the one of its last power-on or warm boot: :meth:`BoardVariant.command_line`) through
        its shell and read its console until the new boot's marker; return the boot, its lines since
        the order and ``host_start_ns`` the order. A board that is not up is first booted from
        power-on (not measured). Raises BootError when labgrid cannot reach its power, console or
        shell, KeyboardInterrupt when ``on_line`` raises it (the board is switched off then)."""
        self.open()
        command: tuple[str, ...] = ("labgrid", str(self.spec.env), self.spec.target)
        if not self._up:
            first = self.power_cycle(timeout_s, marker_regex, None, keep_on=True)
            if first.outcome is not Outcome.OK:
                reason = f"the board did not come up before the {way} reboot: {first.reason}"
                return Boot((), first.outcome, reason, machine=self.name, command=command)
        shell = self._shell or BoardShell(self._target, self.spec.target)
        self._shell, self._up = shell, False
        self._tell_pid(on_start)
        shell.reach_within(0.0 if shell.on_console else SHELL_WAIT_S)  # sshd may start after the marker
        self._reached = True
        if not self._kexeced or self._cmdline is None:  # the board's own command line is running
            self._cmdline = shell.cmdline()
        if way == REBOOT_KEXEC:
            given = variant or BoardVariant(way, way)
            loading, problem = shell.load_kexec(given.command_line(self._cmdline))
            command = (*command, loading)
            if problem:
                self._up = True  # nothing happened to the running system
                return Boot((), Outcome.KEXEC_ERROR, problem, machine=self.name, command=command)
        reader = self._console_reader()
        reader.drain()
        try:
            order, start_ns = shell.order(way, self._console.write)
            read = reader.read_until(start_ns, timeout_s, re.compile(marker_regex), on_line)
        except BaseException:
            self._switch(on=False)
            raise
        self._up = read.outcome is Outcome.OK
        self._kexeced, self._reached = way == REBOOT_KEXEC, False
        reason = read.why(timeout_s, f"the {way} reboot's order")
        return Boot(
            lines=tuple(read.lines),
            outcome=read.outcome,
            reason=reason,
            machine=self.name,
            host_start_ns=start_ns,
            host_end_ns=time.monotonic_ns(),
            command=(*command, order),
        )

    def _console_reader(self) -> BoardConsole:
        """Return the board's console (the board is open)."""
        assert self._reader is not None
        return self._reader

    def _tell_pid(self, on_start: StartCallback | None) -> None:
        """Hand ``on_start`` the pid of the board's process on this host, where it is one (labgrid's
        QEMU driver): its CPU time is then the boot's own, not other processes' load."""
        child = getattr(self._power, "_child", None)
        if on_start is not None and child is not None and child.poll() is None:
            on_start(int(child.pid))

    def _switch(self, on: bool) -> None:
        try:
            if on:
                self._power.on()
            else:
                self._power.off()
        except Exception as error:
            state = "on" if on else "off"
            raise BootError(
                f"labgrid: cannot switch {self.spec.target!r} {state}: {one_line(error)}"
            ) from None

    def close(self) -> None:
        """Switch the board off, deactivate its drivers and release its places; safe to call twice.
        A place that could not be released is named on standard error (nothing is raised: this runs
        when a run ends, however it ends)."""
        target, self._target = self._target, None
        self._up, self._shell = False, None
        if target is not None:
            with contextlib.suppress(Exception):
                self._power.off()
            with contextlib.suppress(Exception):
                target.deactivate_all_drivers()
        for problem in self._holds.release():
            print(f"bootscope: warning: {problem}", file=sys.stderr)

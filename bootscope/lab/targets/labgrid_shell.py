"""A labgrid board's shell, for warm and kexec reboots: the target's ``CommandProtocol`` driver
(labgrid's ``ShellDriver`` on the console, or its ``SSHDriver``), logged in again after every reboot.

The reboot order goes the way that lets its moment be known: through a ``ShellDriver`` it is
written to the console as a command line and not waited for (the shell that runs it goes down with
the system); through any other driver it is a command that returns at once (systemd's
``--no-block`` order, else the order carried out a second later, as over SSH), and the moment is
when it returned.
"""

from __future__ import annotations

import shlex
import time
from typing import Any

from bootscope.errors import BootError
from bootscope.lab.plans.board import REBOOT_KEXEC
from bootscope.lab.targets.base import CommandOutput
from bootscope.lab.targets.machine_facts import (
    KERNEL_FACTS_COMMAND,
    RemoteLoad,
    kernel_facts_from,
    start_load_command,
    stop_load_command,
)
from bootscope.lab.targets.reboot_commands import kexec_load_command, order_command

RUN_TIMEOUT_S = 60.0  # one command on the board's shell (kexec -l of a large kernel included)
COMMAND_NOT_FOUND = 127  # the shell's exit status for a command it cannot find
LOADER_DRIVERS = ("UBootDriver", "BareboxDriver")  # labgrid's command drivers of a boot loader


class BoardShell:
    """The shell of a labgrid target (its ``CommandProtocol`` driver), reached through ``target``."""

    def __init__(self, target: Any, name: str) -> None:
        self._target = target
        self._name = name
        shells = [driver for driver in target.drivers if _is_shell(driver)]
        if not shells:
            raise BootError(
                f"labgrid: target {name!r} has no shell (a ShellDriver or SSHDriver): a warm or kexec"
                " reboot is ordered on the board's shell"
            )
        self._driver = shells[0]
        self._root = ""

    @property
    def on_console(self) -> bool:
        """Whether the shell is labgrid's ShellDriver (on the console, not over the network)."""
        return type(self._driver).__name__ == "ShellDriver"

    def reach(self) -> None:
        """Log in again (the boot since the last login is a new system) and find how to be root.
        Raises BootError in one line when labgrid cannot reach the shell."""
        try:
            self._target.deactivate(self._driver)
            self._target.activate(self._driver)
        except Exception as error:
            raise BootError(f"labgrid: the shell of {self._name!r}: {one_line(error)}") from None
        out, code = self.run("id -u")
        if code != 0:
            raise BootError(f"labgrid: the shell of {self._name!r} does not run commands: {out}")
        self._root = "" if out.strip() == "0" else "sudo -n "

    def reach_within(self, wait_s: float) -> None:
        """:meth:`reach`, tried again every second for up to ``wait_s``; raises BootError (the last
        attempt's) after that."""
        deadline = time.monotonic() + wait_s
        while True:
            try:
                self.reach()
                return
            except BootError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(1.0)

    def run(self, command: str, timeout_s: float = RUN_TIMEOUT_S) -> tuple[str, int]:
        """Run ``command`` on the shell; return its output (stdout and stderr, one string) and exit
        status. Raises BootError when labgrid cannot run it."""
        try:
            stdout, stderr, code = self._driver.run(command, timeout=timeout_s)
        except Exception as error:
            raise BootError(f"labgrid: {command.split()[0]!r} on {self._name!r}: {one_line(error)}") from None
        return "\n".join([*stdout, *stderr]), int(code)

    def cmdline(self) -> str:
        """Return the running kernel's command line (without a boot loader's ``BOOT_IMAGE=``). Raises
        BootError when the shell cannot read it."""
        out, code = self.run("cat /proc/cmdline")
        if code != 0:
            raise BootError(f"labgrid: cannot read /proc/cmdline on {self._name!r}: {one_line(out)}")
        return " ".join(word for word in out.split() if not word.startswith("BOOT_IMAGE="))

    def command(self, argv: tuple[str, ...], timeout_s: float) -> CommandOutput:
        """Run ``argv`` on the shell and return what it printed; raises BootError when labgrid cannot
        run it or the tool is not installed there."""
        start_ns = time.monotonic_ns()
        out, code = self.run(shlex.join(argv), timeout_s)
        if code == COMMAND_NOT_FOUND:
            raise BootError(f"{argv[0]}: not installed on {self._name!r} (Debian: apt-get install rt-tests)")
        return CommandOutput(argv, out, code, (time.monotonic_ns() - start_ns) / 1e9)

    def facts(self) -> dict[str, Any]:
        """Return the facts a latency result depends on, read there (see :mod:`machine_facts`)."""
        out, code = self.run(KERNEL_FACTS_COMMAND)
        if code != 0:
            raise BootError(f"labgrid: cannot read the facts of {self._name!r}: {one_line(out)}")
        return kernel_facts_from(out)

    def start_load(self, argv: tuple[str, ...]) -> RemoteLoad:
        """Start ``argv`` in the background there; raises BootError when it cannot start."""
        out, code = self.run(start_load_command(argv))
        if code != 0 or not out.strip().isdigit():
            raise BootError(f"labgrid: cannot start {argv[0]} on {self._name!r}: {one_line(out)}")
        return RemoteLoad(int(out.strip()))

    def stop_load(self, load: RemoteLoad) -> None:
        """Stop the load's whole process group there."""
        self.run(stop_load_command(load.group))

    def load_kexec(self, cmdline: str) -> tuple[str, str | None]:
        """Load the running kernel again with kexec-tools (its file and initrd in /boot) with
        ``cmdline``; return the command and None, or the command and why it failed (one line)."""
        command = kexec_load_command(None, None, shlex.quote(cmdline), False, self._root)
        out, code = self.run(command)
        if code != 0:
            return command, f"kexec -l failed (exit {code}): {one_line(out) or 'no output'}"
        return command, None

    def order(self, way: str, write: Any) -> tuple[str, int]:
        """Order the reboot ``way`` (warm or kexec, loaded already); return the order and its host
        stamp (ns). ``write`` writes bytes to the console (a ShellDriver's order goes there)."""
        if self.on_console:
            if way == REBOOT_KEXEC:
                root = self._root
                verb = f"if [ -d /run/systemd/system ]; then {root}systemctl kexec; else {root}kexec -e; fi"
            else:
                verb = f"{self._root}reboot"
            try:
                write(f"{verb}\n".encode())
            except Exception as error:
                raise BootError(f"labgrid: the console of {self._name!r}: {one_line(error)}") from None
            return verb, time.monotonic_ns()
        verb = order_command(way, self._root)
        out, code = self.run(verb)
        if code != 0:
            raise BootError(f"labgrid: the reboot order failed on {self._name!r}: {one_line(out)}")
        return verb, time.monotonic_ns()


def _is_shell(driver: Any) -> bool:
    """Whether labgrid driver ``driver`` runs commands on the running system (a boot loader's
    command driver, U-Boot's or barebox's, runs them before it)."""
    from labgrid.protocol import CommandProtocol

    return isinstance(driver, CommandProtocol) and type(driver).__name__ not in LOADER_DRIVERS


def one_line(error: BaseException | str) -> str:
    """Return ``error`` as one line of at most 300 characters."""
    text = " ".join(str(error).split()) or (type(error).__name__ if isinstance(error, BaseException) else "")
    return text[:300]

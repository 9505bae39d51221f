"""A labgrid board's shell, for warm and kexec reboots: the target's ``CommandProtocol`` driver
(labgrid's ``ShellDriver`` on the console, or its ``SSHDriver``), logged in again after every reboot.

The reboot order goes the way that lets its moment be known: through a ``ShellDriver`` it is
written to the console as a command line and not waited for (the shell that runs it goes down with
the system); through any other driver it is a command that returns at once (systemd's
``--no-block`` order, else the order carried out a second later, as over SSH), and the moment is
when it returned.
"""

from __future__ import annotations

import time
from typing import Any

from bootscope.errors import BootError
from bootscope.lab.targets.reboot_commands import console_order, order_command
from bootscope.lab.targets.shell_ops import RUN_TIMEOUT_S, ShellOps, one_line

LOADER_DRIVERS = ("UBootDriver", "BareboxDriver")  # labgrid's command drivers of a boot loader


class BoardShell(ShellOps):
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
        self._who = "labgrid"

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

    def order(self, way: str, write: Any) -> tuple[str, int]:
        """Order the reboot ``way`` (warm or kexec, loaded already); return the order and its host
        stamp (ns). ``write`` writes bytes to the console (a ShellDriver's order goes there)."""
        if self.on_console:
            verb = console_order(way, self._root)
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

"""SshMachine: a machine reached over SSH, which runs commands and reboots.

It implements two capabilities of :mod:`bootscope.lab.targets.base`: :class:`RunsCommands` (a
latency tool runs there as it runs on this host: one ``ssh`` process per command, background load in
its own process group there) and :class:`Reboots` (its boot id, the shell that orders a reboot, its
serial console read for the whole run when a console command is given). Its facts are read by the
one reader of :mod:`bootscope.lab.targets.ssh.check`.
"""

from __future__ import annotations

import shlex
import time
from typing import Any

from bootscope.errors import BootError
from bootscope.lab.hostinfo import host_info
from bootscope.lab.loads import load_argv
from bootscope.lab.targets.base import CommandOutput, ShellResult
from bootscope.lab.targets.machine_facts import (
    KERNEL_FACTS_COMMAND,
    RemoteLoad,
    kernel_facts_from,
    start_load_command,
    stop_load_command,
)
from bootscope.lab.targets.ssh.check import read_machine_facts
from bootscope.lab.targets.ssh.client import (
    SSH_FAILED,
    SshAddress,
    first_error_line,
    refusal,
    run_ssh,
)
from bootscope.lab.targets.ssh.serial_console import ConsoleReader
from bootscope.model import LogLine

PROBE_TIMEOUT_S = 30.0  # one probe may take this long (a TCG guest on a busy host is slow to answer)
PROBE_CONNECT_S = 15.0  # TCP connect and the SSH banner: a busy TCG guest sent its banner after 3 s
PROBE_PAUSE_S = 0.3
CONSOLE_SETTLE_S = 1.0  # a console command that ends this soon never reached the console
COMMAND_NOT_FOUND = 127  # the shell's exit status for a command it cannot find


def boot_id_command() -> str:
    """Return the command that prints the running boot's id (it changes with every boot)."""
    return "cat /proc/sys/kernel/random/boot_id"


class SshMachine:
    """A machine reached over SSH, with its console read for the whole run when a command is given."""

    on_this_host = False

    def __init__(self, address: SshAddress, console: str | None = None) -> None:
        self.address = address
        self.console = ConsoleReader(console) if console else None

    @property
    def name(self) -> str:
        """The machine's URL (a plan that names this URL runs on this machine)."""
        return self.address.url

    @property
    def where(self) -> str:
        """The machine's URL, for the user."""
        return self.address.url

    @property
    def url(self) -> str:
        """The machine's URL (``ssh://USER@HOST[:PORT]``)."""
        return self.address.url

    @property
    def host(self) -> str:
        """The machine's host name."""
        return self.address.host

    @property
    def root_prefix(self) -> str:
        """``sudo -n `` for a user other than root (never asks for a password), else nothing."""
        return "" if self.address.user == "root" else "sudo -n "

    @property
    def has_console(self) -> bool:
        """True when a console command was given."""
        return self.console is not None

    def host_info(self) -> dict[str, Any]:
        """Return the description of this host, which measures the machine."""
        return host_info()

    def start(self) -> None:
        """Start reading the console (if any). Raises BootError if its command cannot start or ends
        within CONSOLE_SETTLE_S (a wrong socket path, a device that cannot be opened)."""
        if self.console is None:
            return
        self.console.start()
        deadline = time.monotonic() + CONSOLE_SETTLE_S
        while time.monotonic() < deadline and self.console.ended is None:
            time.sleep(0.05)
        if self.console.ended is not None:
            raise BootError(
                f"--console {self.console.command!r}: {self.console.ended} at once; try the command"
                " by hand: it must keep printing the machine's console"
            )

    def console_lost(self) -> str | None:
        """Why the console stopped being read during the run (its command ended), or None."""
        return None if self.console is None else self.console.ended

    def stop(self) -> None:
        """Stop reading the console; safe to call twice."""
        if self.console is not None:
            self.console.stop()

    def run(self, command: str, timeout_s: float, connect_timeout_s: float | None = None) -> ShellResult:
        """Run ``command`` on the machine (see :func:`bootscope.lab.targets.ssh.client.run_ssh`)."""
        return run_ssh(self.address, command, timeout_s, connect_timeout_s)

    def console_since(self, host_ns: int) -> list[LogLine]:
        """Return the console lines that arrived since ``host_ns`` (none without a console)."""
        return self.console.lines_since(host_ns) if self.console is not None else []

    def forget_console_before(self, host_ns: int) -> None:
        """Drop the console lines older than ``host_ns`` (nothing without a console)."""
        if self.console is not None:
            self.console.forget_before(host_ns)

    def boot_id(self, timeout_s: float) -> str:
        """Return the running boot's id, waiting up to ``timeout_s`` for SSH to answer. Raises
        BootError at once for a refusal (host key, key) and after ``timeout_s`` if it never answers."""
        deadline = time.monotonic() + timeout_s
        while True:
            result = self.run(boot_id_command(), PROBE_TIMEOUT_S, PROBE_CONNECT_S)
            why = refusal(result)
            if why is not None:
                raise BootError(f"{self.address.url}: {why}")
            if result.ok and result.stdout.strip():
                return result.stdout.strip()
            if time.monotonic() >= deadline:
                raise BootError(
                    f"{self.address.url} does not answer SSH ({first_error_line(result)}) after"
                    f" {timeout_s:g} s"
                )
            time.sleep(PROBE_PAUSE_S)

    def machine_facts(self) -> dict[str, str]:
        """Return the machine's facts (see :func:`bootscope.lab.targets.ssh.check.read_machine_facts`);
        raises BootError when SSH refuses it or it does not answer."""
        return read_machine_facts(lambda command, limit_s: self.run(command, limit_s), self.url)

    def run_command(self, argv: tuple[str, ...], timeout_s: float) -> CommandOutput:
        """Run ``argv`` on the machine; raises BootError if SSH refuses or fails, the tool is not
        installed there, or it outlives ``timeout_s``."""
        result = self.run(shlex.join(argv), timeout_s, PROBE_CONNECT_S)
        if result.returncode == SSH_FAILED:
            if "ssh: timed out after" in result.stderr:
                raise BootError(f"{argv[0]} ran longer than {timeout_s:.0f} s on {self.url} and was stopped")
            raise BootError(f"{self.url}: {refusal(result) or first_error_line(result)}")
        if result.returncode == COMMAND_NOT_FOUND:
            raise BootError(f"{argv[0]}: not installed on {self.url} (Debian: apt-get install rt-tests)")
        wall_s = (result.ended_ns - result.started_ns) / 1e9
        return CommandOutput(argv, result.stdout + result.stderr, result.returncode, wall_s)

    def start_load(self, load: str) -> object | None:
        """Start ``load`` on the machine in a process group of its own; return its handle. Raises
        InputError for an unknown load, BootError when it cannot start there."""
        argv = load_argv(load, int(self.kernel_facts().get("cpus") or 1))
        if argv is None:
            return None
        done = self.run(start_load_command(argv), 60.0, PROBE_CONNECT_S)
        if not done.ok or not done.stdout.strip().isdigit():
            raise BootError(f"{self.url}: cannot start {argv[0]}: {first_error_line(done)}")
        return RemoteLoad(int(done.stdout.strip()))

    def stop_load(self, handle: object | None) -> None:
        """Stop the load's whole process group on the machine (TERM, then KILL a second later)."""
        if not isinstance(handle, RemoteLoad):
            return
        group = handle.group
        self.run(stop_load_command(group), 60.0)

    def kernel_facts(self) -> dict[str, Any]:
        """Return the facts a latency result depends on, read on the machine (the keys and order of
        :meth:`bootscope.lab.targets.localhost.LocalHost.kernel_facts`; None where it says nothing).
        Raises BootError when SSH fails."""
        done = self.run(KERNEL_FACTS_COMMAND, 60.0, PROBE_CONNECT_S)
        if not done.ok:
            raise BootError(f"{self.url}: cannot read the machine's facts: {first_error_line(done)}")
        return kernel_facts_from(done.stdout)

"""What bootscope does on a machine's shell once it can run one command there: read the running
kernel's command line and facts, run a measuring tool, start and stop background load, load a kernel
with kexec-tools. Every shell bootscope reaches a machine by (a labgrid board's driver, a libvirt
domain's console) is a :class:`ShellOps` that gives :meth:`ShellOps.run`."""

from __future__ import annotations

import shlex
import time
from typing import Any

from bootscope.errors import BootError
from bootscope.lab.loads import load_argv
from bootscope.lab.targets.base import CommandOutput
from bootscope.lab.targets.machine_facts import (
    KERNEL_FACTS_COMMAND,
    RemoteLoad,
    kernel_facts_from,
    start_load_command,
    stop_load_command,
)
from bootscope.lab.targets.reboot_commands import kexec_load_command

RUN_TIMEOUT_S = 60.0  # one command on the machine's shell (kexec -l of a large kernel included)
COMMAND_NOT_FOUND = 127  # the shell's exit status for a command it cannot find


class ShellOps:
    """The shell of machine ``_name``: ``_root`` runs a command as root there (``sudo -n `` or
    nothing), ``_who`` begins its errors (``labgrid``, ``libvirt``). Subclasses give :meth:`run`."""

    _name: str
    _root: str = ""
    _who: str = "shell"

    @property
    def root(self) -> str:
        """What runs a command as root there (``sudo -n `` or nothing)."""
        return self._root

    def run(self, command: str, timeout_s: float = RUN_TIMEOUT_S) -> tuple[str, int]:
        """Run ``command`` on the shell; return its output (stdout and stderr, one string) and exit
        status. Raises BootError when it cannot be run."""
        raise NotImplementedError

    def cmdline(self) -> str:
        """Return the running kernel's command line (without a boot loader's ``BOOT_IMAGE=``). Raises
        BootError when the shell cannot read it."""
        out, code = self.run("cat /proc/cmdline")
        if code != 0:
            raise BootError(f"{self._who}: cannot read /proc/cmdline on {self._name!r}: {one_line(out)}")
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
            raise BootError(f"{self._who}: cannot read the facts of {self._name!r}: {one_line(out)}")
        return kernel_facts_from(out)

    def start_load(self, argv: tuple[str, ...]) -> RemoteLoad:
        """Start ``argv`` in the background there; raises BootError when it cannot start."""
        out, code = self.run(start_load_command(argv))
        if code != 0 or not out.strip().isdigit():
            raise BootError(f"{self._who}: cannot start {argv[0]} on {self._name!r}: {one_line(out)}")
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


class CommandsOnShell:
    """The ``runs commands`` capability of a machine reached through one shell (a labgrid board, a
    libvirt domain): every command, load and fact goes to :meth:`_command_shell`, which the machine
    gives (its shell reached, the machine booted first when it is not up)."""

    def _command_shell(self) -> ShellOps:
        raise NotImplementedError

    def run_command(self, argv: tuple[str, ...], timeout_s: float) -> CommandOutput:
        """Run ``argv`` on the machine's shell (booting it first when it is not up); raises BootError
        when it cannot, or the tool is not installed there."""
        return self._command_shell().command(argv, timeout_s)

    def start_load(self, load: str) -> object | None:
        """Start background ``load`` there; return its handle (None for no load)."""
        shell = self._command_shell()
        argv = load_argv(load, int(shell.facts().get("cpus") or 1))
        return None if argv is None else shell.start_load(argv)

    def stop_load(self, handle: object | None) -> None:
        """Stop the load that :meth:`start_load` started."""
        if isinstance(handle, RemoteLoad):
            self._command_shell().stop_load(handle)

    def kernel_facts(self) -> dict[str, Any]:
        """Return the facts a latency result depends on, read on the machine."""
        return self._command_shell().facts()


def one_line(error: BaseException | str) -> str:
    """Return ``error`` as one line of at most 300 characters."""
    text = " ".join(str(error).split()) or (type(error).__name__ if isinstance(error, BaseException) else "")
    return text[:300]

"""Targets: where a workload measures, as one small base and the capabilities a workload asks for.

Every target has a ``name`` and describes the host that measures (``host_info``). What it can do is
a capability, one protocol each:

- :class:`BootsGuests`: boots QEMU guests (kernels, initramfs images, an accelerator, one boot).
- :class:`RunsCommands`: runs a command and returns its output, starts and stops background load,
  and reads the facts a latency result depends on (this host, an SSH machine).
- :class:`Reboots`: a machine reached by a shell that reboots (its boot id, a reboot ordered by
  kexec or firmware, the console lines since a moment).
- :class:`PowersOn`: a board whose power is switched and whose console is read (labgrid): a boot
  from power-on, and warm and kexec reboots ordered on its shell.

A workload states what it needs (``Workload.needs``); :func:`require` checks it once, when the run
starts and before anything is stored, and says in one line which capability the target lacks. The
implementations: :class:`~bootscope.lab.targets.qemu.LocalQemu` (boots guests),
:class:`~bootscope.lab.targets.localhost.LocalHost` (runs commands),
:class:`~bootscope.lab.targets.ssh.machine.SshMachine` (runs commands, reboots) and the fakes of
:mod:`bootscope.lab.targets.fake` (boots guests; reboots).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from bootscope.errors import InputError
from bootscope.lab.qemu.accel import AccelChoice
from bootscope.lab.qemu.image import Image
from bootscope.lab.qemu.kernels import KernelImage
from bootscope.lab.qemu.process import BootConfig
from bootscope.lab.qemu.root_initramfs import RootInitramfs
from bootscope.lab.reboot_variant import BoardVariant
from bootscope.model import Boot, LogLine

LineCallback = Callable[[LogLine], None]
StartCallback = Callable[[int], None]

BOOTS_GUESTS = "boots QEMU guests"
RUNS_COMMANDS = "runs commands"
REBOOTS = "reboots"
POWERS_ON = "powers a board on and off"


@runtime_checkable
class Target(Protocol):
    """The base every target has: a name and the description of the host that measures."""

    @property
    def name(self) -> str:
        """The target's name (``local-qemu``, ``local``, an SSH URL, ``fake``)."""

    def host_info(self) -> dict[str, Any]:
        """Return a JSON-able description of the machine that measures (stored with the experiment)."""


@runtime_checkable
class BootsGuests(Target, Protocol):
    """A place that boots QEMU guests. Every method raises BootError (a missing tool, kernel or
    file) or InputError (a bad option) rather than returning a half result."""

    def resolve_kernel(self, spec: str, initrd: Path | None = None) -> KernelImage:
        """Return the kernel that ``spec`` names (a path or ``debian:...``)."""

    def resolve_to(self, spec: str) -> tuple[Path, str | None]:
        """Return the kernel a kexec chain loads (its path and release, None if unknown)."""

    def build_initramfs(self, commands: tuple[str, ...], files: tuple[tuple[Path, str], ...]) -> Path:
        """Return bootscope's initramfs that runs ``commands`` and holds ``files`` (host, guest)."""

    def resolve_image(self, name: str) -> Image:
        """Return the system image called ``name`` (built by ``bootscope image build``)."""

    def build_root_initramfs(self, kernel: KernelImage) -> RootInitramfs:
        """Return bootscope's initramfs that boots ``kernel`` on a system image's root (the kernel's
        own disk modules, then switch_root), for a kernel the image has no modules for."""

    def build_chain_initramfs(self, to_kernel: Path) -> Path:
        """Return the kexec chain initramfs that kexecs into ``to_kernel``."""

    def choose_accel(
        self, requested: str, kernel: Path, initrd: Path | None, reprobe: bool = False
    ) -> AccelChoice:
        """Return the accelerator for ``requested`` (auto, kvm, tcg) and why; ``reprobe`` redoes a
        remembered KVM probe."""

    def check(self, config: BootConfig) -> None:
        """Raise InputError if ``config`` cannot be booted here (checked before anything is stored)."""

    def boot(self, config: BootConfig, on_line: LineCallback | None, on_start: StartCallback | None) -> Boot:
        """Boot once; ``on_line`` sees every console line as it arrives (it may raise
        KeyboardInterrupt to stop the boot), ``on_start`` the guest process's pid."""


@dataclass(frozen=True, slots=True)
class ShellResult:
    """One shell command's end on a machine: exit status (an SSH machine's 255: ssh itself failed),
    its output, and the host monotonic ns when it started and ended."""

    returncode: int
    stdout: str
    stderr: str
    started_ns: int
    ended_ns: int

    @property
    def ok(self) -> bool:
        """True when the command ran and exited 0."""
        return self.returncode == 0


@dataclass(frozen=True, slots=True)
class CommandOutput:
    """What one command printed (stdout and stderr together), its exit status and wall time in s."""

    argv: tuple[str, ...]
    output: str
    returncode: int
    wall_s: float


@runtime_checkable
class RunsCommands(Target, Protocol):
    """A machine that runs measuring commands. ``where`` names it for the user ("this host", an SSH
    URL); ``on_this_host`` says whether its CPUs are this host's (a slot's cores then pin the tool)."""

    @property
    def where(self) -> str:
        """The machine, for the user ("this host", an SSH URL)."""

    @property
    def on_this_host(self) -> bool:
        """True when its CPUs are this host's."""

    def run_command(self, argv: tuple[str, ...], timeout_s: float) -> CommandOutput:
        """Run ``argv`` to its end; return what it printed. Raises BootError when it cannot start or
        outlives ``timeout_s``."""

    def start_load(self, load: str) -> object | None:
        """Start background ``load`` (one of LOADS); return a handle for ``stop_load``."""

    def stop_load(self, handle: object | None) -> None:
        """Stop the load that ``start_load`` started (nothing for None)."""

    def kernel_facts(self) -> dict[str, Any]:
        """Return the facts a latency result depends on (kernel, preemption, cmdline, governor...)."""


@runtime_checkable
class Reboots(Target, Protocol):
    """A machine reached by a shell that reboots. ``run`` raises nothing for a command that failed
    (its result says so); ``boot_id`` raises BootError for a refusal or a machine that does not
    answer within its time."""

    @property
    def url(self) -> str:
        """The machine's address, as the user gave it (``ssh://USER@HOST[:PORT]``)."""

    @property
    def host(self) -> str:
        """The machine's host name (names its lines when its log comes from dmesg)."""

    @property
    def root_prefix(self) -> str:
        """What runs a command as root there (``sudo -n `` or nothing)."""

    @property
    def has_console(self) -> bool:
        """True when the machine's console is read."""

    def run(self, command: str, timeout_s: float, connect_timeout_s: float | None = None) -> ShellResult:
        """Run shell ``command`` there and return how it ended (the reboot order, kexec -l, a probe)."""

    def boot_id(self, timeout_s: float) -> str:
        """Return the running boot's id, waiting up to ``timeout_s`` for the machine to answer."""

    def machine_facts(self) -> dict[str, str]:
        """Return the machine's facts (machine-id, cmdline, kexec, kexec-load-disabled...: see
        :func:`bootscope.lab.targets.ssh.check.read_machine_facts`)."""

    def start(self) -> None:
        """Start reading the console (if any); raises BootError if it cannot be read."""

    def stop(self) -> None:
        """Stop reading the console; safe to call twice."""

    def console_since(self, host_ns: int) -> list[LogLine]:
        """Return the console lines that arrived since ``host_ns`` (host monotonic ns)."""

    def console_lost(self) -> str | None:
        """Why the console stopped being read during the run, or None."""

    def forget_console_before(self, host_ns: int) -> None:
        """Drop the console lines older than ``host_ns`` (already stored)."""


@runtime_checkable
class PowersOn(Target, Protocol):
    """A board whose power is switched and whose console is read (a labgrid place or environment):
    a boot is one power cycle, timed from the power-on order."""

    def open(self) -> None:
        """Reach the board and hold what it needs (a labgrid place is acquired); raises BootError
        when it cannot be reached. Safe to call twice; :meth:`power_cycle` opens it when needed."""

    def accel(self) -> AccelChoice:
        """Return what runs the machine's instructions and why (a board: its own hardware; a libvirt
        domain: KVM or TCG, as its definition says); raises BootError when it cannot be reached."""

    def power_cycle(
        self,
        timeout_s: float,
        marker_regex: str,
        on_line: LineCallback | None,
        keep_on: bool = False,
        on_start: StartCallback | None = None,
        variant: BoardVariant | None = None,
    ) -> Boot:
        """Switch the board off (if on) and on, with the command line ``variant`` makes of the
        board's own where the board takes one (labgrid's QEMU driver, or U-Boot's prompt after
        :meth:`give_command_lines` chose it), read its console until a line matches
        ``marker_regex`` or ``timeout_s`` passes, switch it off (unless ``keep_on`` and it
        reached the marker with its own command line: a warm or kexec reboot may follow); return the
        boot, its lines stamped on arrival and ``host_start_ns`` the power-on order. ``on_start`` gets
        the pid of the board's process on this host, where it is one (labgrid's QEMU). Raises
        BootError when the power or the console cannot be driven, or the board takes no command
        line and ``variant`` gives one."""

    def check_shell(self) -> None:
        """Raise BootError in one line when the board has no shell to order a warm or kexec reboot on."""

    def check_boot_args(self) -> None:
        """Raise BootError in one line when a cold boot of the board cannot be given a command line."""

    def give_command_lines(self, timeout_s: float, marker_regex: str, need_own: bool) -> None:
        """Make ready to give cold boots command lines of their own (where the board takes them: its
        power driver, or U-Boot's prompt), learning the board's own first when ``need_own``. Raises
        BootError in one line when it takes none, or its own cannot be learnt."""

    def reboot(
        self,
        way: str,
        timeout_s: float,
        marker_regex: str,
        on_line: LineCallback | None,
        on_start: StartCallback | None = None,
        variant: BoardVariant | None = None,
    ) -> Boot:
        """Reboot the running board ``way`` (warm or kexec; ``variant``: the command line a kexec reboot
        loads, made of the one the board last booted with from power-on or warm) through its shell,
        reading its console until the new boot's marker; return the boot, its lines since the order and
        ``host_start_ns`` the order (a board that is not up is booted from power-on first); ``on_start``
        as for :meth:`power_cycle`. Raises BootError when the power, the console or the shell cannot
        be driven."""

    def close(self) -> None:
        """Switch the board off and let go of it (a labgrid place is released); safe to call twice."""


_PROTOCOLS: dict[str, type] = {
    BOOTS_GUESTS: BootsGuests,
    RUNS_COMMANDS: RunsCommands,
    REBOOTS: Reboots,
    POWERS_ON: PowersOn,
}


def missing(target: Target, needs: Sequence[str]) -> list[str]:
    """Return the capabilities of ``needs`` that ``target`` lacks (in order)."""
    return [name for name in needs if not isinstance(target, _PROTOCOLS[name])]


def require(target: Target, needs: Sequence[str], who: str) -> None:
    """Raise InputError in one line naming the capability ``target`` lacks for ``who`` (a workload's
    kind); checked when a run starts, before anything is stored."""
    lacking = missing(target, needs)
    if lacking:
        raise InputError(
            f"the {who} workload needs a target that {' and '.join(lacking)}; {target.name} does not"
        )


def guests(target: Target, who: str) -> BootsGuests:
    """Return ``target`` as one that boots guests; raises InputError (see :func:`require`)."""
    if not isinstance(target, BootsGuests):
        require(target, (BOOTS_GUESTS,), who)
        raise AssertionError  # pragma: no cover - require raised
    return target


def commands(target: Target, who: str) -> RunsCommands:
    """Return ``target`` as one that runs commands; raises InputError (see :func:`require`)."""
    if not isinstance(target, RunsCommands):
        require(target, (RUNS_COMMANDS,), who)
        raise AssertionError  # pragma: no cover - require raised
    return target


def powered(target: Target, who: str) -> PowersOn:
    """Return ``target`` as a board whose power is switched; raises InputError (see :func:`require`)."""
    if not isinstance(target, PowersOn):
        require(target, (POWERS_ON,), who)
        raise AssertionError  # pragma: no cover - require raised
    return target


def rebooting(target: Target, who: str) -> Reboots:
    """Return ``target`` as one that reboots; raises InputError (see :func:`require`)."""
    if not isinstance(target, Reboots):
        require(target, (REBOOTS,), who)
        raise AssertionError  # pragma: no cover - require raised
    return target

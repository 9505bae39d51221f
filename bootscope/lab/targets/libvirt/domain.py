"""A libvirt domain the user defined, as a machine bootscope powers on and reboots.

A cold boot is one start of the domain: started paused, its serial console opened (so nothing it
prints is lost), then resumed at the moment every time is measured from; its console is read until
the marker, every line stamped on this host as it arrives, and the domain destroyed (unless a warm or
kexec reboot follows). A cold boot with a command line of its own starts the domain's own definition
with that line in its ``<cmdline>`` (a transient start over the inactive domain: the defined domain is
never changed); a domain that boots from its disk takes none, and is refused in one line.

A warm reboot is ``reboot`` typed on the shell of its console, a kexec reboot ``kexec -l`` of the
running kernel with the variant's command line and then ``kexec -e`` (:mod:`console_shell`); each is
timed from the order. ``latency run`` runs its tool on the same shell.
"""

from __future__ import annotations

import contextlib
import re
import time
import xml.etree.ElementTree as ElementTree
from typing import Any

from bootscope.errors import BootError
from bootscope.lab.hostinfo import measuring_host
from bootscope.lab.qemu.accel import AccelChoice
from bootscope.lab.reboot_variant import REBOOT_KEXEC, BoardVariant
from bootscope.lab.targets.base import LineCallback, StartCallback
from bootscope.lab.targets.console_read import BoardConsole, ConsoleRead
from bootscope.lab.targets.console_shell import ConsoleShell
from bootscope.lab.targets.libvirt.address import DomainSpec
from bootscope.lab.targets.libvirt.connection import ConsoleStream, binding, connect
from bootscope.lab.targets.reboot_commands import console_order
from bootscope.lab.targets.shell_ops import CommandsOnShell, one_line
from bootscope.model import Boot, Outcome

SHELL_WAIT_S = 120.0  # a domain switched on for commands: how long its console's shell may take
WHO = "libvirt"


class LibvirtDomain(CommandsOnShell):
    """The domain ``libvirt:NAME[?connect=URI]`` names; connected on first use, destroyed and let go
    by :meth:`close`. It runs commands on its console's shell too (``latency run libvirt:...``)."""

    on_this_host = False

    def __init__(self, spec: DomainSpec) -> None:
        self.spec = spec
        self._conn: Any = None
        self._domain: Any = None
        self._kernel: str | None = None  # the defined domain's <kernel> (None: it boots its disk)
        self._own = ""  # the defined domain's <cmdline>
        self._type = ""  # the defined domain's type: kvm, qemu (TCG)
        self._xml = ""
        self._stream: ConsoleStream | None = None
        self._reader: BoardConsole | None = None
        self._shell: ConsoleShell | None = None
        self._up = False  # booted to its marker and left running (a shell may be reached)
        self._kexeced = False  # the running system came from a kexec here
        self._cmdline: str | None = None  # the command line the running system booted with

    @property
    def name(self) -> str:
        """The domain as the plan names it."""
        return self.spec.url

    @property
    def where(self) -> str:
        """The domain, for the user."""
        return self.spec.url

    def host_info(self) -> dict[str, Any]:
        """Return this host's description, the domain and the connection it is reached through."""
        info = measuring_host() | {"libvirt_domain": self.spec.name, "libvirt_uri": self.spec.uri or ""}
        if self._conn is not None:
            with contextlib.suppress(Exception):
                info["libvirt_uri"] = self._conn.getURI()
        return info

    def open(self) -> None:
        """Connect and find the domain; raises BootError in one line when libvirt refuses the
        connection or has no such domain. Safe to call twice."""
        if self._domain is not None:
            return
        libvirt = binding()
        conn = connect(self.spec.uri)
        try:
            domain = conn.lookupByName(self.spec.name)
            self._xml = domain.XMLDesc(libvirt.VIR_DOMAIN_XML_INACTIVE)
        except libvirt.libvirtError as error:
            with contextlib.suppress(Exception):
                conn.close()
            raise BootError(f"libvirt: domain {self.spec.name!r}: {one_line(error)}") from None
        self._conn, self._domain = conn, domain
        root = ElementTree.fromstring(self._xml)
        self._kernel = root.findtext("os/kernel")
        self._type = root.get("type", "")
        self._own = (root.findtext("os/cmdline") or "").strip()
        if root.find("devices/serial") is None and root.find("devices/console") is None:
            self.close()
            raise BootError(f"libvirt: domain {self.spec.name!r} has no serial console to read")

    def accel(self) -> AccelChoice:
        """Return KVM or TCG, as the domain's definition says (``type='kvm'`` or ``'qemu'``)."""
        self.open()
        accel = "kvm" if self._type == "kvm" else "tcg"
        return AccelChoice(
            accel, f"libvirt domain {self.spec.name!r} of type {self._type!r}: its definition chooses"
        )

    def power_cycle(
        self,
        timeout_s: float,
        marker_regex: str,
        on_line: LineCallback | None,
        keep_on: bool = False,
        on_start: StartCallback | None = None,
        variant: BoardVariant | None = None,
    ) -> Boot:
        """Boot the domain once from power-on (see the module's docstring) with the command line
        ``variant`` makes of its own; raises BootError when libvirt cannot start it or it takes no
        command line and ``variant`` gives one, KeyboardInterrupt when ``on_line`` raises it (the
        domain is destroyed either way, and after the boot unless ``keep_on``)."""
        self.open()
        self._power_off()
        words = variant is not None and variant.has_words
        if words:
            self.check_boot_args()
        line = variant.command_line(self._own) if variant is not None and words else self._own
        self._start_paused(line if words else None)
        reader = self._console_reader()
        start_ns = time.monotonic_ns()
        try:
            self._domain.resume()
            read = reader.read_until(start_ns, timeout_s, re.compile(marker_regex), on_line)
        except BaseException:
            self._power_off()
            raise
        end_ns = time.monotonic_ns()
        self._up = keep_on and read.outcome is Outcome.OK
        self._kexeced, self._cmdline = False, line
        if not self._up:
            self._power_off()
        return self._boot(read, read.why(timeout_s, "power-on"), start_ns, end_ns, ("start",))

    def check_shell(self) -> None:
        """Nothing to check before a boot: the console's shell is reached after one (a domain
        without a serial console is refused when it is opened)."""
        self.open()

    def check_boot_args(self) -> None:
        """Raise BootError in one line when a cold boot cannot be given a command line: the domain
        boots from its disk (no ``<kernel>`` in its definition)."""
        self.open()
        if not self._kernel:
            raise BootError(
                f"libvirt: domain {self.spec.name!r} boots from its disk: a cold boot's command line needs"
                " direct kernel boot (<kernel> and <cmdline> in its definition); reboot it by kexec instead"
            )

    def give_command_lines(self, timeout_s: float, marker_regex: str, need_own: bool) -> None:
        """Make ready to give cold boots command lines of their own (the domain's own is its
        ``<cmdline>``); raises BootError in one line when it boots from its disk."""
        self.check_boot_args()

    def boot_command_line(self, timeout_s: float, marker_regex: str) -> str:
        """Return the command line the domain boots with from power-on: its ``<cmdline>`` (direct
        kernel boot), else its shell's ``/proc/cmdline`` after one boot. Raises BootError when none
        can be read."""
        self.open()
        if self._kernel:
            return self._own
        return str(self.kernel_facts().get("cmdline") or "").strip()

    def reboot(
        self,
        way: str,
        timeout_s: float,
        marker_regex: str,
        on_line: LineCallback | None,
        on_start: StartCallback | None = None,
        variant: BoardVariant | None = None,
    ) -> Boot:
        """Reboot the running domain ``way`` (warm, or kexec with the command line ``variant`` makes of
        the one it last booted from power-on or warm) through its console's shell, reading the
        console until the new boot's marker; a domain that is not up is booted from power-on first
        (not measured). Raises BootError when libvirt or the shell cannot be driven,
        KeyboardInterrupt when ``on_line`` raises it (the domain is destroyed then)."""
        self.open()
        if not self._up:
            first = self.power_cycle(timeout_s, marker_regex, None, keep_on=True)
            if first.outcome is not Outcome.OK:
                reason = f"the domain did not come up before the {way} reboot: {first.reason}"
                return Boot((), first.outcome, reason, machine=self.name, command=self._command(()))
        shell = self._reach_shell()
        if not self._kexeced or self._cmdline is None:
            self._cmdline = shell.cmdline()
        done: tuple[str, ...] = ()
        if way == REBOOT_KEXEC:
            loading, problem = shell.load_kexec(
                (variant or BoardVariant(way, way)).command_line(self._cmdline)
            )
            done = (loading,)
            if problem:
                return Boot((), Outcome.KEXEC_ERROR, problem, machine=self.name, command=self._command(done))
        reader = self._console_reader()
        reader.drain()
        order = console_order(way, shell.root)
        self._up, self._shell = False, None
        try:
            start_ns = shell.order(order)
            read = reader.read_until(start_ns, timeout_s, re.compile(marker_regex), on_line)
        except BaseException:
            self._power_off()
            raise
        self._up = read.outcome is Outcome.OK
        self._kexeced = way == REBOOT_KEXEC
        reason = read.why(timeout_s, f"the {way} reboot's order")
        return self._boot(read, reason, start_ns, time.monotonic_ns(), (*done, order))

    def close(self) -> None:
        """Destroy the domain (if running), let its console and the connection go; safe to call twice."""
        self._power_off()
        conn, self._conn, self._domain = self._conn, None, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()

    def _command_shell(self) -> ConsoleShell:
        """Return the domain's shell, reached: the domain is booted first unless a boot of this run
        left it up."""
        self.open()
        if not self._up:
            self._power_off()
            self._start_paused(None)
            self._domain.resume()
            self._up, self._kexeced, self._cmdline = True, False, self._own
        return self._reach_shell()

    def _reach_shell(self) -> ConsoleShell:
        if self._shell is None:
            shell = ConsoleShell(self._console_reader(), self.name, WHO)
            shell.reach(SHELL_WAIT_S)
            self._shell = shell
        return self._shell

    def _start_paused(self, cmdline: str | None) -> None:
        """Start the domain paused (its own definition, or with ``cmdline`` in its ``<cmdline>``)
        and open its console before it runs."""
        libvirt = binding()
        try:
            if cmdline is None:
                self._domain.createWithFlags(libvirt.VIR_DOMAIN_START_PAUSED)
            else:
                self._domain = self._conn.createXML(self._xml_with(cmdline), libvirt.VIR_DOMAIN_START_PAUSED)
        except libvirt.libvirtError as error:
            raise BootError(f"libvirt: cannot start domain {self.spec.name!r}: {one_line(error)}") from None
        self._stream = ConsoleStream(self._conn, self._domain, self.spec.name)
        self._reader = BoardConsole(self._stream, self.spec.name, WHO)

    def _xml_with(self, cmdline: str) -> str:
        root = ElementTree.fromstring(self._xml)
        os_element = root.find("os")
        assert os_element is not None
        element = os_element.find("cmdline")
        if element is None:
            element = ElementTree.SubElement(os_element, "cmdline")
        element.text = cmdline
        return ElementTree.tostring(root, encoding="unicode")

    def _power_off(self) -> None:
        """Destroy the domain if it runs, and let its console go (nothing raised)."""
        self._up, self._shell = False, None
        if self._stream is not None:
            self._stream.close()
            self._stream, self._reader = None, None
        if self._domain is not None:
            with contextlib.suppress(Exception):
                if self._domain.isActive():
                    self._domain.destroy()
            with contextlib.suppress(Exception):  # after a transient start: the defined domain again
                self._domain = self._conn.lookupByName(self.spec.name)

    def _console_reader(self) -> BoardConsole:
        assert self._reader is not None
        return self._reader

    def _command(self, done: tuple[str, ...]) -> tuple[str, ...]:
        return ("libvirt", self.spec.uri or "", self.spec.name, *done)

    def _boot(
        self, read: ConsoleRead, reason: str, start_ns: int, end_ns: int, done: tuple[str, ...]
    ) -> Boot:
        return Boot(
            lines=tuple(read.lines),
            outcome=read.outcome,
            reason=reason,
            machine=self.name,
            host_start_ns=start_ns,
            host_end_ns=end_ns,
            command=self._command(done),
        )

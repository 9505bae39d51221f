"""``bootscope target check libvirt:NAME``: can this domain be measured, and what should change?

Read from libvirt without starting the domain: the binding, the connection, the domain's definition
(:func:`advise_domain`, a pure function of its XML, so its advice is tested without a daemon).
What the guest has inside (kexec-tools, a shell on its console) shows only when it runs: a warm or
kexec run says so in one line at its first reboot.
"""

from __future__ import annotations

import contextlib
import xml.etree.ElementTree as ElementTree

from bootscope.errors import BootError
from bootscope.lab.targets.checks import BAD, GOOD, WARN, Check
from bootscope.lab.targets.libvirt.address import DomainSpec
from bootscope.lab.targets.libvirt.connection import INSTALL_HINT, binding, connect
from bootscope.lab.targets.shell_ops import one_line


def check_domain(spec: DomainSpec) -> list[Check]:
    """Return the checks of the domain ``spec`` names: the binding, the connection, then those of
    its definition. Raises nothing: a missing part is a bad check."""
    try:
        libvirt = binding()
    except BootError as error:
        return [Check("binding", BAD, str(error), INSTALL_HINT)]
    checks = [Check("binding", GOOD, f"libvirt-python against libvirt {_version(libvirt.getVersion())}")]
    try:
        conn = connect(spec.uri)
    except BootError as error:
        advice = "start the daemon, or name it: libvirt:NAME?connect=URI (or set LIBVIRT_DEFAULT_URI)"
        return [*checks, Check("connection", BAD, str(error), advice)]
    try:
        checks.append(
            Check("connection", GOOD, f"{conn.getURI()} ({conn.getType()} {_version(conn.getVersion())})")
        )
        try:
            domain = conn.lookupByName(spec.name)
            xml = domain.XMLDesc(libvirt.VIR_DOMAIN_XML_INACTIVE)
        except libvirt.libvirtError as error:
            advice = "define it (virsh define DOMAIN.xml) or name one that `virsh list --all` shows"
            return [*checks, Check("domain", BAD, one_line(error), advice)]
        state = "running" if domain.isActive() else "shut off"
        checks.append(
            Check(
                "domain",
                WARN if state == "running" else GOOD,
                f"{spec.name}: {state}",
                _running_advice(state),
            )
        )
        return checks + advise_domain(xml)
    finally:
        with contextlib.suppress(Exception):
            conn.close()


def advise_domain(xml: str) -> list[Check]:
    """Return the checks of a domain's definition (its XML as libvirt keeps it)."""
    root = ElementTree.fromstring(xml)
    checks: list[Check] = []
    serial = root.find("devices/serial") is not None or root.find("devices/console") is not None
    checks.append(
        Check("console", GOOD, "a serial console")
        if serial
        else Check(
            "console", BAD, "no serial console", "add <serial type='pty'/>: bootscope reads every boot there"
        )
    )
    kernel = root.findtext("os/kernel")
    if kernel:
        cmdline = (root.findtext("os/cmdline") or "").strip()
        checks.append(Check("command line", GOOD, f"direct kernel boot: {cmdline or '(empty)'}"))
        if "console=" not in cmdline:
            checks.append(
                Check(
                    "kernel console",
                    WARN,
                    "no console= on its command line",
                    "add console=ttyS0: the kernel's lines",
                )
            )
    else:
        checks.append(
            Check(
                "command line",
                WARN,
                "boots from its disk (no <kernel>)",
                "a cold boot cannot be given a command line (tune --reboot cold, variants with append=);"
                " kexec reboots can",
            )
        )
    kind = root.get("type", "")
    checks.append(
        Check("accelerator", GOOD, "kvm")
        if kind == "kvm"
        else Check(
            "accelerator",
            WARN,
            f"{kind or 'unknown'} (TCG)",
            "type='kvm' where /dev/kvm works: TCG is slow and noisier",
        )
    )
    on_reboot = root.findtext("on_reboot") or "restart"
    checks.append(
        Check("on_reboot", GOOD, on_reboot)
        if on_reboot == "restart"
        else Check(
            "on_reboot", WARN, on_reboot, "<on_reboot>restart</on_reboot>: a warm reboot must come back"
        )
    )
    return checks


def _running_advice(state: str) -> str:
    if state != "running":
        return ""
    return "a run powers it off and on: stop what it runs first (virsh shutdown)"


def _version(number: int) -> str:
    return f"{number // 1_000_000}.{number // 1000 % 1000}.{number % 1000}"

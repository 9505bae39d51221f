"""The tests' own libvirt daemon: Debian's libvirtd, started in a private mount namespace so that it
touches nothing of the host's libvirt, and a domain defined in it from the cached kernel.

libvirtd as root keeps its state in fixed places (/etc/libvirt, /var/lib/libvirt, /run/libvirt...).
The daemon is started by ``unshare -m`` with a fresh /run and those folders bound to a temporary one,
its socket in that folder too, so that the tests connect with ``qemu:///system?socket=PATH`` and the
host's own libvirt (if any) never sees it. Its QEMU runs as root without a security driver, cgroups
or virtlogd (none of which a test needs). :func:`stop_daemon` destroys every domain still running,
then ends the daemon: its mounts go with it.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

LIBVIRTD = "/usr/sbin/libvirtd"
_MOUNTS = ("etc", "lib", "cache", "log")  # bound over /etc/libvirt, /var/lib/libvirt, ...
_DAEMON_CONF = """unix_sock_dir = "{sock}"
unix_sock_rw_perms = "0700"
auth_unix_rw = "none"
auth_unix_ro = "none"
log_outputs = "3:stderr"
"""
_QEMU_CONF = """user = "root"
group = "root"
dynamic_ownership = 0
security_driver = "none"
cgroup_controllers = [ ]
stdio_handler = "file"
"""
_START = """set -e
mount -t tmpfs tmpfs /run
mkdir -p /run/libvirt /run/lock /var/lib/libvirt /var/cache/libvirt /var/log/libvirt
mount --bind {root}/etc /etc/libvirt
mount --bind {root}/lib /var/lib/libvirt
mount --bind {root}/cache /var/cache/libvirt
mount --bind {root}/log /var/log/libvirt
exec {libvirtd} --config {root}/etc/libvirtd.conf --pid-file {root}/libvirtd.pid
"""
_DOMAIN = """<domain type='qemu' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>
  <name>{name}</name>
  <memory unit='MiB'>512</memory>
  <vcpu>1</vcpu>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <kernel>{kernel}</kernel>
    <initrd>{initrd}</initrd>
    <cmdline>{cmdline}</cmdline>
  </os>
  <on_reboot>restart</on_reboot>
  <devices>
    <serial type='pty'><target port='0'/></serial>
    <console type='pty'><target type='serial' port='0'/></console>
    <controller type='usb' model='none'/>
    <memballoon model='none'/>
  </devices>{extra}
</domain>
"""


@dataclass(frozen=True)
class Daemon:
    """A running test daemon: its URI, its process and its folder."""

    uri: str
    process: subprocess.Popen[bytes]
    root: Path


def start_daemon(root: Path, wait_s: float = 30.0) -> Daemon:
    """Start a private libvirtd with its state under ``root``; raise AssertionError (the test fails,
    never skips) when libvirtd or unshare is missing or the daemon does not answer."""
    assert Path(LIBVIRTD).exists(), f"{LIBVIRTD} missing: apt-get install libvirt-daemon-system (make setup)"
    assert shutil.which("unshare"), "unshare missing (util-linux)"
    for name in (*_MOUNTS, "sock"):
        (root / name).mkdir(parents=True, exist_ok=True)
    (root / "etc/libvirtd.conf").write_text(_DAEMON_CONF.format(sock=root / "sock"))
    (root / "etc/qemu.conf").write_text(_QEMU_CONF)
    script = _START.format(root=root, libvirtd=LIBVIRTD)
    log = (root / "daemon.log").open("wb")
    process = subprocess.Popen(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", script],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    socket = root / "sock/libvirt-sock"
    deadline = time.monotonic() + wait_s
    while not socket.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"libvirtd did not start: {(root / 'daemon.log').read_text()[-2000:]}")
        time.sleep(0.1)
    return Daemon(f"qemu:///system?socket={socket}", process, root)


def stop_daemon(daemon: Daemon) -> None:
    """Destroy every domain the daemon runs, then end it (and with it its mounts)."""
    import libvirt

    with contextlib.suppress(libvirt.libvirtError):
        conn = libvirt.open(daemon.uri)
        for domain in conn.listAllDomains():
            with contextlib.suppress(libvirt.libvirtError):
                if domain.isActive():
                    domain.destroy()
            with contextlib.suppress(libvirt.libvirtError):
                domain.undefine()
        conn.close()
    daemon.process.send_signal(signal.SIGTERM)
    try:
        daemon.process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        daemon.process.kill()
        daemon.process.wait()


@contextlib.contextmanager
def running_daemon(root: Path) -> Iterator[Daemon]:
    """A test daemon for the block's length."""
    daemon = start_daemon(root)
    try:
        yield daemon
    finally:
        stop_daemon(daemon)


def domain_xml(name: str, kernel: Path, initrd: Path, cmdline: str, qemu_args: tuple[str, ...] = ()) -> str:
    """Return the definition of a TCG domain that boots ``kernel`` with ``initrd`` and ``cmdline``
    (direct kernel boot), its serial port the console, ``qemu_args`` passed to its QEMU as they are
    (libvirt's qemu:commandline)."""
    extra = ""
    if qemu_args:
        args = "".join(f"<qemu:arg value='{arg}'/>" for arg in qemu_args)
        extra = f"\n  <qemu:commandline>{args}</qemu:commandline>"
    return _DOMAIN.format(name=name, kernel=kernel, initrd=initrd, cmdline=cmdline, extra=extra)


def define_domain(uri: str, xml: str) -> str:
    """Define the domain ``xml`` describes in the daemon at ``uri``; return its inactive XML as
    libvirt keeps it (the tests compare it after a run: bootscope never changes a definition)."""
    import libvirt

    conn = libvirt.open(uri)
    try:
        domain = conn.defineXML(xml)
        return str(domain.XMLDesc(libvirt.VIR_DOMAIN_XML_INACTIVE))
    finally:
        conn.close()

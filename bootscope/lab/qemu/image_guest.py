"""What bootscope adds to a debootstrapped Debian tree to make it a measurable image.

Everything here is written into the tree as plain files (no chroot): the root file system's fstab,
the host name, a getty on the serial console, and ``bootscope-collect.service``, which prints
systemd's own boot accounting to the console once the boot has finished, and
``bootscope-delay.service``, a known delay a user switches on from the kernel command line
(``bootscope.delay_s=N``) to check that a set-up sees an N-second change. ``RECIPE_VERSION`` is part
of every image's cache key: change it whenever what this module writes changes.
"""

from __future__ import annotations

import os
from pathlib import Path

from bootscope import defaults

# 2: an image with openssh-server gets systemd-networkd (DHCP on every Ethernet link) and kexec-tools
# is told not to take over reboots.
# 3: bootscope-delay.service, a known delay switched on from the kernel command line.
# 4: the collector lists inactive units too (a oneshot that ran and exited), and lists them first.
# 5: the initramfs has the NVDIMM drivers (nfit, nd_pmem), so the disk can be attached as an NVDIMM
# (lab/qemu/disk.py), and fstab names the root by its label, which either attach finds.
RECIPE_VERSION = 5
# The first recipe whose images boot with their disk attached as an NVDIMM.
NVDIMM_RECIPE = 5
# The root file system's label (mkfs.ext4 -L), by which fstab names it.
ROOT_LABEL = "bootscope-root"
# Drivers the image's initramfs loads besides what initramfs-tools finds: the NVDIMM's bus (ACPI NFIT)
# and its block device, where the kernel has them as modules.
INITRAMFS_MODULES = ("nfit", "nd_pmem")
HOSTNAME = "bootscope"
COLLECTOR_UNIT = "bootscope-collect.service"
DELAY_UNIT = "bootscope-delay.service"
# The kernel option that switches the delay on and says how long it is (s): bootscope.delay_s=N.
DELAY_OPTION = "bootscope.delay_s"
# Sections the collector prints, in order; bootscope.parse.systemd reads them by these names.
SECTIONS = ("state", "units", "time", "blame", "critical-chain", "failed")
# Per-unit timestamps (systemd's CLOCK_MONOTONIC, microseconds), as systemd-analyze plot reads them.
UNIT_PROPERTIES = (
    "Id",
    "InactiveExitTimestampMonotonic",
    "ActiveEnterTimestampMonotonic",
    "ActiveExitTimestampMonotonic",
    "InactiveEnterTimestampMonotonic",
)
# How long the collector waits for the boot to finish before it reports what it has.
COLLECT_WAIT_S = 900

# Type=simple, not oneshot: a oneshot's start job stays queued until its command returns, and systemd
# counts the boot as finished only when no job is queued, so a oneshot waiting in
# `systemctl is-system-running --wait` would wait for itself.
_UNIT = """[Unit]
Description=bootscope: print systemd's boot accounting to the console
After=multi-user.target

[Service]
Type=simple
ExecStart=/usr/local/sbin/bootscope-collect
StandardOutput=null
StandardError=null

[Install]
WantedBy=multi-user.target
"""


# A oneshot (no RemainAfterExit: it runs and exits, as many real oneshots do) that multi-user.target
# waits for, skipped unless the kernel command line names the option: images boot as Debian's do
# until a variant asks for the delay. systemd orders a target after the units it wants, and Before=
# says so explicitly.
_DELAY_UNIT = f"""[Unit]
Description=bootscope: a known delay before multi-user.target ({DELAY_OPTION}=N on the kernel command line)
ConditionKernelCommandLine={DELAY_OPTION}
Before=multi-user.target

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/bootscope-delay

[Install]
WantedBy=multi-user.target
"""

_DELAY_SCRIPT = f"""#!/bin/sh
# bootscope-delay: sleep for the seconds that {DELAY_OPTION}=N on the kernel command line asks for.
for word in $(cat /proc/cmdline); do
    case "$word" in
        {DELAY_OPTION}=*) exec sleep "${{word#*=}}" ;;
    esac
done
"""


_NETWORK = """[Match]
Name=en* eth*

[Network]
DHCP=ipv4
"""


def collector_commands(wait_s: int = COLLECT_WAIT_S) -> str:
    """Return the shell commands that wait up to ``wait_s`` for systemd to finish the boot and print
    its accounting between bootscope's markers (the collector's body; the SSH target runs it too)."""
    section = defaults.COLLECT_SECTION
    properties = ",".join(UNIT_PROPERTIES)
    # The leading newline ends the getty's prompt line ("bootscope login: " has none) so that the
    # begin marker starts a line of its own. Every command's stderr goes to the console too: a
    # "Bootup is not yet finished" is a result to record. `systemctl show '*'` expands the pattern
    # to the loaded units that are not inactive (systemctl's default unit filter), which drops every
    # oneshot that ran and exited; --all keeps them (and, with -p, prints the listed properties only).
    return f"""state=$(timeout {wait_s} systemctl is-system-running --wait)
echo
echo "{defaults.COLLECT_BEGIN}"
echo "{section} state"
echo "$state"
echo "{section} units"
systemctl show --all --no-pager -p {properties} '*'
echo "{section} time"
systemd-analyze time --no-pager
echo "{section} blame"
systemd-analyze blame --no-pager
echo "{section} critical-chain"
systemd-analyze critical-chain --no-pager
echo "{section} failed"
systemctl list-units --failed --plain --no-legend --no-pager
echo "{defaults.COLLECT_END}"
"""


def _collector_script() -> str:
    return f"""#!/bin/sh
# bootscope-collect: systemd's boot accounting on the console, between markers (bootscope image).
exec >/dev/console 2>&1
{collector_commands()}"""


def write_guest_files(root: Path, ssh_key: str | None, packages: tuple[str, ...] = ()) -> None:
    """Write bootscope's configuration into the Debian tree ``root``: fstab (root by its label), the
    modules its initramfs must hold (INITRAMFS_MODULES; the initramfs is rebuilt after this), host
    name, a getty on ttyS0, the collector unit and the delay unit (both enabled), when given root's
    authorized SSH key and, for an image with ``openssh-server`` among its ``packages``, DHCP on every
    Ethernet link (systemd-networkd), so that ``bootscope image serve`` can forward a port to its SSH
    server.
    Raises OSError if the tree cannot be written."""
    etc = root / "etc"
    (etc / "fstab").write_text(f"LABEL={ROOT_LABEL} / ext4 rw,errors=remount-ro 0 0\n")
    modules = etc / "initramfs-tools" / "modules"
    modules.parent.mkdir(parents=True, exist_ok=True)
    with modules.open("a", encoding="utf-8") as handle:
        handle.write("".join(f"{name}\n" for name in INITRAMFS_MODULES))
    (etc / "hostname").write_text(HOSTNAME + "\n")
    (etc / "hosts").write_text(f"127.0.0.1 localhost\n127.0.1.1 {HOSTNAME}\n")
    systemd = etc / "systemd" / "system"
    _enable(
        systemd / "getty.target.wants",
        "serial-getty@ttyS0.service",
        "/lib/systemd/system/serial-getty@.service",
    )
    script = root / "usr" / "local" / "sbin" / "bootscope-collect"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(_collector_script())
    script.chmod(0o755)
    (systemd / COLLECTOR_UNIT).write_text(_UNIT)
    _enable(systemd / "multi-user.target.wants", COLLECTOR_UNIT, f"/etc/systemd/system/{COLLECTOR_UNIT}")
    delay = script.parent / "bootscope-delay"
    delay.write_text(_DELAY_SCRIPT)
    delay.chmod(0o755)
    (systemd / DELAY_UNIT).write_text(_DELAY_UNIT)
    _enable(systemd / "multi-user.target.wants", DELAY_UNIT, f"/etc/systemd/system/{DELAY_UNIT}")
    if ssh_key is not None:
        ssh_dir = root / "root" / ".ssh"
        ssh_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        keys = ssh_dir / "authorized_keys"
        keys.write_text(ssh_key.strip() + "\n")
        keys.chmod(0o600)
    if "openssh-server" in packages:
        _write_network(root)
    if "kexec-tools" in packages:
        # Debian's kexec-tools can load a kernel at every reboot (LOAD_KEXEC): a firmware reboot must
        # stay one, and bootscope loads the kernel itself for a kexec reboot.
        (etc / "default" / "kexec").write_text("LOAD_KEXEC=false\nUSE_GRUB_CONFIG=false\n")


def _write_network(root: Path) -> None:
    """DHCP on every Ethernet link with systemd-networkd (part of Debian's systemd package)."""
    network = root / "etc" / "systemd" / "network"
    network.mkdir(parents=True, exist_ok=True)
    (network / "20-bootscope.network").write_text(_NETWORK)
    systemd = root / "etc" / "systemd" / "system"
    _enable(
        systemd / "multi-user.target.wants",
        "systemd-networkd.service",
        "/lib/systemd/system/systemd-networkd.service",
    )
    _enable(
        systemd / "sockets.target.wants",
        "systemd-networkd.socket",
        "/lib/systemd/system/systemd-networkd.socket",
    )


def _enable(wants: Path, name: str, target: str) -> None:
    """Link ``wants/name`` to ``target`` (a path inside the guest), as `systemctl enable` would."""
    wants.mkdir(parents=True, exist_ok=True)
    link = wants / name
    if link.is_symlink() or link.exists():
        link.unlink()
    os.symlink(target, link)

"""bootscope's shell initramfs: a small system a board reboots warm and by kexec from its own shell.

BusyBox's ``init`` (as a Buildroot board's) runs ``/etc/init.d/rcS``, which prints the marker, then
keeps a root shell on the console (prompt ``PROMPT``) that labgrid's ``ShellDriver`` drives. After
the marker, rcS prepares what ``kexec -l`` of the running system needs where a distribution keeps it:
the kernel at ``/boot/vmlinuz-RELEASE`` (carried in the archive) and ``/boot/initrd.img-RELEASE``
(this root file system archived again into a tmpfs). ``reboot`` goes through BusyBox's init (its
shutdown actions, then the firmware); ``kexec -e`` starts the loaded kernel at once. The host's
cyclictest comes along where it is installed, so ``latency run`` measures on the board too.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from bootscope import defaults
from bootscope.lab.qemu.initramfs import InitramfsSpec, build_initramfs
from bootscope.lab.qemu.kexec_chain import find_kexec

PROMPT = "bootscope-board# "
# Tools a latency run on the board uses (rt-tests' cyclictest), copied in with their libraries
LATENCY_TOOLS = ("cyclictest",)
KERNEL_GUEST_PATH = "/boot/vmlinuz"

_INIT = """#!/bin/busybox sh
# bootscope shell board: BusyBox init runs /etc/init.d/rcS, then a shell on the console.
exec /sbin/init
"""

_INITTAB = """# bootscope shell board (bootscope.lab.qemu.shell_initramfs)
::sysinit:/etc/init.d/rcS
::respawn:-/bin/sh
::ctrlaltdel:/bin/busybox reboot
::shutdown:/bin/busybox umount -a -r
"""

_RCS = f"""#!/bin/sh
# bootscope shell board: mount, print the marker, prepare kexec's files (after the marker).
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
# The first field of /proc/uptime is the guest's seconds since boot (fs/proc/uptime.c).
read up idle < /proc/uptime
echo "{defaults.MARKER_PREFIX} init uptime=$up"
mkdir -p /run && mount -t tmpfs tmpfs /run
cd / && find . -xdev | cpio -o -H newc > /run/initrd.cpio 2>/dev/null
release=$(uname -r)
ln -sf vmlinuz "/boot/vmlinuz-$release"
ln -sf /run/initrd.cpio "/boot/initrd.img-$release"
"""

_PROFILE = f"""export PATH=/bin:/sbin:/usr/bin:/usr/sbin
export PS1='{PROMPT}'
"""


def build_shell_initramfs(kernel: Path, kexec: Path | None = None) -> Path:
    """Return bootscope's shell initramfs (cached by content) carrying ``kernel`` for its kexec
    reboots, the host's kexec-tools and, where installed, its cyclictest. Raises BootError when
    busybox, kexec, a library or ``kernel`` cannot be read."""
    files = defaults.cache_dir() / "shell-board"
    files.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text, mode in (
        ("inittab", _INITTAB, 0o644),
        ("rcS", _RCS, 0o755),
        ("profile", _PROFILE, 0o644),
    ):
        path = files / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        path.chmod(mode)
        written.append(path)
    inittab, rcs, profile = written
    spec = InitramfsSpec(
        init_script=_INIT,
        extra_files=(
            (kernel, KERNEL_GUEST_PATH),
            (inittab, "/etc/inittab"),
            (rcs, "/etc/init.d/rcS"),
            (profile, "/etc/profile"),
        ),
        extra_binaries=(find_kexec(kexec), *_tools()),
    )
    return build_initramfs(spec)


def _tools() -> tuple[Path, ...]:
    """The host's latency tools the board carries, where installed (``latency run labgrid:...``)."""
    found = (shutil.which(name) for name in LATENCY_TOOLS)
    return tuple(Path(path) for path in found if path)

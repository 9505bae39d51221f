"""Drive a chain of kexec reboots inside one guest: its initramfs, its ``/init`` and the QEMU run.

One QEMU process boots the FROM kernel with an initramfs that holds busybox, the host's ``kexec``
(kexec-tools, with the shared libraries ``ldd`` names) and the TO kernel. Its ``/init`` prints a marker,
archives its own root file system into a tmpfs (that archive is the next kernel's initramfs, so every
hop carries everything the next one needs), loads the TO kernel with ``kexec -l`` (or ``-s``), prints
two more markers and calls ``kexec -e``. The kernel command line counts the hops
(``bootscope.hop=K bootscope.hops=N``); the last kernel powers off. The same initramfs runs the chain
on a real machine: boot it with ``bootscope.hops=N`` on the command line.
"""

from __future__ import annotations

import gzip
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bootscope import defaults
from bootscope.errors import BootError, InputError
from bootscope.lab.qemu.initramfs import InitramfsSpec, build_initramfs
from bootscope.lab.qemu.process import BootConfig, boot_once
from bootscope.model import Boot, LogLine

# Where the TO kernel lives inside the guest.
TARGET_GUEST_PATH = "/boot/bootscope-kexec-target"
# The guest prints this (and powers off) when loading or executing the next kernel fails.
KEXEC_ERROR_PREFIX = "BOOTSCOPE-KEXEC-ERROR"
KEXEC_CANDIDATES = (Path("/usr/sbin/kexec"), Path("/sbin/kexec"))
# kexec with a ~14 MB kernel plus an archive of the whole initramfs in a tmpfs needs room; 512 MiB
# works but leaves little, and TCG does not charge for guest RAM it never touches.
DEFAULT_KEXEC_MEM_MB = 1024
TIMEOUT_PER_HOP_S = defaults.KEXEC_TIMEOUT_PER_KERNEL_S

_INIT_SCRIPT = r"""#!/bin/busybox sh
# bootscope kexec chain /init (bootscope.lab.qemu.kexec_chain). Command line: bootscope.hop=K (this kernel's
# position, 0 = the first), bootscope.hops=N (kexec reboots in the chain), bootscope.kexec_load=l|s
# (kexec_load or kexec_file_load), bootscope.kexec_checks=0|1 (0: kexec -i, purgatory skips its
# checksum). Markers carry /proc/uptime (fs/proc/uptime.c), the guest's seconds since boot.
B=/bin/busybox
KEXEC=@KEXEC@
TARGET=@TARGET@
export PATH=/sbin:/bin:/usr/sbin:/usr/bin
$B mount -t proc proc /proc
$B mount -t sysfs sysfs /sys
$B mount -t devtmpfs devtmpfs /dev 2>/dev/null
hop=0; hops=0; load=l; checks=1
for word in $($B cat /proc/cmdline); do
  case "$word" in
    bootscope.hop=*) hop=${word#*=} ;;
    bootscope.hops=*) hops=${word#*=} ;;
    bootscope.kexec_load=*) load=${word#*=} ;;
    bootscope.kexec_checks=*) checks=${word#*=} ;;
  esac
done
marker() {
  read -r up _ < /proc/uptime
  echo "@MARKER@ $1 uptime=$up hop=$hop"
}
fail() {
  echo "@ERROR@ hop=$hop $*"
  $B poweroff -f
}
marker init
[ "$hop" -lt "$hops" ] 2>/dev/null || $B poweroff -f
next=""
for word in $($B cat /proc/cmdline); do
  case "$word" in
    bootscope.hop=*) word="bootscope.hop=$((hop + 1))" ;;
  esac
  next="$next $word"
done
# The next kernel gets this root file system again: archive it (without /proc, /sys, /dev and the
# archive itself, which live on other file systems) into a tmpfs.
$B mkdir -p /scratch && $B mount -t tmpfs tmpfs /scratch || fail "cannot mount a tmpfs for the next initramfs"
cd / && $B find . -xdev | $B cpio -o -H newc > /scratch/next.cpio 2>/dev/null \
  || fail "cannot archive the initramfs"
marker kexec-prep
# -s only picks the syscall: without -l, kexec would load and then run shutdown(8) itself.
case "$load" in s) opts="-l -s" ;; *) opts="-l" ;; esac
[ "$checks" = 0 ] && opts="$opts -i"
out=$($KEXEC $opts --initrd=/scratch/next.cpio --command-line="${next# }" "$TARGET" 2>&1) \
  || fail "kexec $opts failed: $(echo "$out" | $B tr '\n' ' ')"
marker kexec-load
marker kexec-exec
out=$($KEXEC -e 2>&1)
fail "kexec -e returned: $(echo "$out" | $B tr '\n' ' ')"
"""


@dataclass(frozen=True, slots=True)
class KexecOptions:
    """How the guest loads the next kernel: ``file_load`` uses ``kexec -s`` (kexec_file_load) instead
    of ``kexec -l``; ``no_checks`` adds ``kexec -i`` (purgatory skips its SHA-256 check; seed 004)."""

    file_load: bool = False
    no_checks: bool = False


@dataclass(frozen=True, slots=True)
class ChainConfig:
    """One QEMU run of a kexec chain: FROM kernel, the chain initramfs, how many kexec reboots."""

    from_kernel: Path
    initrd: Path
    hops: int
    options: KexecOptions = KexecOptions()
    append: str = ""
    smp: int = defaults.DEFAULT_SMP
    mem_mb: int = DEFAULT_KEXEC_MEM_MB
    accel: str = "tcg"
    timeout_s: float | None = None
    cpu_affinity: tuple[int, ...] | None = None


def find_kexec(explicit: Path | None = None) -> Path:
    """Return the host's kexec binary (``explicit`` if given); raises BootError if there is none."""
    candidates = (explicit,) if explicit is not None else KEXEC_CANDIDATES
    for candidate in candidates:
        if candidate is not None and candidate.is_file():
            return candidate
    found = shutil.which("kexec")
    if explicit is None and found:
        return Path(found)
    where = explicit if explicit is not None else " or ".join(str(path) for path in KEXEC_CANDIDATES)
    raise BootError(f"kexec not found at {where}: install Debian's kexec-tools (apt-get install kexec-tools)")


def chain_init_script(kexec_guest_path: str) -> str:
    """Return the text of the chain's ``/init`` (busybox sh) that calls kexec at ``kexec_guest_path``."""
    return (
        _INIT_SCRIPT.replace("@KEXEC@", kexec_guest_path)
        .replace("@TARGET@", TARGET_GUEST_PATH)
        .replace("@MARKER@", defaults.MARKER_PREFIX)
        .replace("@ERROR@", KEXEC_ERROR_PREFIX)
    )


def chain_initramfs_spec(to_kernel: Path, kexec: Path) -> InitramfsSpec:
    """Return the InitramfsSpec of a chain whose every hop kexecs into ``to_kernel``.

    Raises InputError if ``to_kernel`` is not a readable file (its contents are not checked here: a
    bad image is the guest's kexec to refuse, and that failure is measured too).
    """
    if not to_kernel.is_file():
        raise InputError(f"no such TO kernel: {to_kernel}")
    return InitramfsSpec(
        init_script=chain_init_script(str(kexec)),
        extra_files=((to_kernel, TARGET_GUEST_PATH),),
        extra_binaries=(kexec,),
    )


def build_chain_initramfs(to_kernel: Path, kexec: Path | None = None, cache_root: Path | None = None) -> Path:
    """Return the path of the chain initramfs (gzip newc cpio, cached) that kexecs into ``to_kernel``.

    Raises InputError for a missing TO kernel and BootError if kexec, busybox or a library is missing.
    """
    return build_initramfs(chain_initramfs_spec(to_kernel, find_kexec(kexec)), cache_root=cache_root)


def write_initramfs(initrd: Path, out: Path) -> Path:
    """Copy the chain initramfs ``initrd`` to ``out`` and return ``out``.

    ``out`` ending in ``.cpio`` gets the uncompressed archive, anything else the gzip one (both are
    what a boot loader or ``kexec --initrd`` accepts). Raises InputError if ``out`` cannot be written.
    """
    try:
        data = initrd.read_bytes()
        if out.suffix == ".cpio":
            data = gzip.decompress(data)
        out.write_bytes(data)
    except OSError as error:
        raise InputError(f"cannot write {out}: {error.strerror}") from error
    return out


def chain_append(hops: int, options: KexecOptions, append: str = "") -> str:
    """Return the FROM kernel's command line for a chain of ``hops`` kexec reboots.

    ``append`` (the user's own options) comes first and reaches every kernel of the chain. Raises
    InputError if ``hops`` is negative or ``append`` already sets a ``bootscope.`` option.
    """
    if hops < 0:
        raise InputError(f"the number of kexec reboots must be >= 0 (got {hops})")
    if "bootscope." in append:
        raise InputError("--append must not set bootscope.* options: bootscope sets them per hop")
    words = [
        *append.split(),
        "bootscope.hop=0",
        f"bootscope.hops={hops}",
        f"bootscope.kexec_load={'s' if options.file_load else 'l'}",
        f"bootscope.kexec_checks={0 if options.no_checks else 1}",
    ]
    return " ".join(words)


def chain_timeout_s(hops: int) -> float:
    """Return the whole chain's timeout in seconds: one budget for the first boot and one per hop."""
    return TIMEOUT_PER_HOP_S * (hops + 1)


def boot_config(config: ChainConfig) -> BootConfig:
    """Return the QEMU BootConfig for a chain (raises InputError via ``chain_append``)."""
    return BootConfig(
        kernel=config.from_kernel,
        initrd=config.initrd,
        append=chain_append(config.hops, config.options, config.append),
        smp=config.smp,
        mem_mb=config.mem_mb,
        accel=config.accel,
        timeout_s=config.timeout_s if config.timeout_s is not None else chain_timeout_s(config.hops),
        # The chain ends when the last kernel powers off; the first marker only says the guest started.
        marker_regex=defaults.MARKER_PREFIX,
        stop_on_marker=False,
        cpu_affinity=config.cpu_affinity,
    )


def run_chain(config: ChainConfig, on_line: Callable[[LogLine], None] | None = None) -> Boot:
    """Boot the FROM kernel once and let the guest kexec ``config.hops`` times; return the whole chain
    as one Boot (every serial line stamped on the host; outcome of the QEMU process as a whole).

    A failed load shows up as a ``BOOTSCOPE-KEXEC-ERROR`` line in an ok Boot; split the chain into
    reboots with ``bootscope.analyze.kexec.chain_hops``. Raises BootError if QEMU or a file is missing
    and InputError for bad options.
    """
    return boot_once(boot_config(config), on_line=on_line)

"""Choose QEMU's accelerator: KVM when it really boots this kernel, else TCG, and say why.

``/dev/kvm`` existing is not enough: on some hosts (nested virtualisation without the needed CPU
features, for one) a KVM guest hangs right after the kernel decompresses itself. So "auto" boots the
kernel once under KVM with a short timeout and uses KVM only if that probe reaches the marker. The
answer is remembered per host, kernel and QEMU version (:mod:`bootscope.lab.qemu.probe_memory`), so a host
where KVM hangs pays the probe's timeout once; ``reprobe`` probes again.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from bootscope import defaults
from bootscope.errors import BootError, InputError
from bootscope.lab.qemu import probe_memory
from bootscope.lab.qemu.process import BootConfig, boot_once
from bootscope.model import Outcome

KVM_DEVICE = Path("/dev/kvm")
_PRINTABLE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b.|[\x00-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class AccelChoice:
    """The accelerator to use ("kvm" or "tcg") and a sentence saying why."""

    accel: str
    reason: str


# Probe results for the life of the process, keyed by (kernel, initrd, kernel mtime): one probe boot
# per kernel, however many experiments ask. Guarded by a lock because -j N boots run in threads.
_probe_cache: dict[tuple[str, str, int], AccelChoice] = {}
_probe_lock = threading.Lock()


def kvm_usable(device: Path = KVM_DEVICE) -> str | None:
    """Return None if ``device`` can be opened read-write, else the reason it cannot."""
    try:
        fd = os.open(device, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        return f"{device} does not exist (no KVM on this host)"
    except OSError as error:
        return f"cannot open {device}: {error.strerror}"
    os.close(fd)
    return None


def choose_accel(
    requested: str,
    kernel: Path,
    initrd: Path | None,
    probe_timeout_s: float = defaults.KVM_PROBE_TIMEOUT_S,
    device: Path = KVM_DEVICE,
    *,
    reprobe: bool = False,
    memory: Path | None = None,
) -> AccelChoice:
    """Return the accelerator for ``requested`` ("auto", "kvm" or "tcg") and the reason.

    "auto" probes KVM with one boot of ``kernel`` (at most ``probe_timeout_s`` seconds) and falls back
    to TCG if KVM is absent or the probe does not reach the marker. The probe's answer is kept for the
    process and remembered in ``memory`` (default: the user cache dir) per host, kernel, initramfs and
    QEMU version; the reason says when a remembered answer is used. ``reprobe`` ignores both and probes
    again. Raises InputError for an unknown accelerator, BootError for "kvm" without a usable /dev/kvm
    or a missing kernel.
    """
    if requested == "tcg":
        return AccelChoice("tcg", "TCG as requested (software emulation)")
    problem = kvm_usable(device) if requested in ("kvm", "auto") else None
    if requested == "kvm":
        if problem is not None:
            raise BootError(f"--accel kvm: {problem}; use --accel tcg or auto")
        return AccelChoice("kvm", "KVM as requested")
    if requested != "auto":
        raise InputError(f"--accel must be auto, kvm or tcg, not {requested!r}")
    if problem is not None:
        return AccelChoice("tcg", f"KVM unusable: {problem}; using TCG")
    try:
        key = (str(kernel.resolve()), str(initrd.resolve()) if initrd else "", kernel.stat().st_mtime_ns)
    except OSError as error:
        raise BootError(f"no such kernel: {kernel}") from error
    with _probe_lock:
        cached = None if reprobe else _probe_cache.get(key)
        if cached is None:
            cached = _remembered_or_probed(kernel, initrd, probe_timeout_s, reprobe, memory)
            _probe_cache[key] = cached
    return cached


def _remembered_or_probed(
    kernel: Path, initrd: Path | None, timeout_s: float, reprobe: bool, memory: Path | None
) -> AccelChoice:
    try:
        memory_key = probe_memory.probe_key(kernel, initrd)
    except OSError as error:
        raise BootError(f"cannot read {error.filename}: {error.strerror}") from error
    directory = memory if memory is not None else probe_memory.memory_dir()
    remembered = None if reprobe else probe_memory.recall(memory_key, directory)
    if remembered is not None:
        said = f"KVM probe: remembered from {remembered.probed_at}: {remembered.reason}"
        return AccelChoice(remembered.accel, f"{said}; --reprobe to probe again")
    choice, settled = _probe(kernel, initrd, timeout_s)
    if settled:
        probe_memory.remember(memory_key, choice.accel, choice.reason, directory)
    return choice


def _probe(kernel: Path, initrd: Path | None, timeout_s: float) -> tuple[AccelChoice, bool]:
    # The second value: whether the answer is worth remembering (the guest reached the marker, or
    # hung); a QEMU error or a panic may be passing, so the next run probes again.
    config = BootConfig(
        kernel=kernel, initrd=initrd, append="", accel="kvm", timeout_s=timeout_s, stop_on_marker=True
    )
    boot = boot_once(config)
    if boot.outcome is Outcome.OK:
        assert boot.host_end_ns is not None and boot.host_start_ns is not None
        took_s = (boot.host_end_ns - boot.host_start_ns) / 1e9
        return AccelChoice("kvm", f"KVM probe boot reached the marker in {took_s:.1f} s"), True
    kernel_lines = sum(1 for line in boot.lines if line.text.startswith("["))
    printable = [_PRINTABLE.sub("", line.text).strip() for line in boot.lines]
    last = next((text for text in reversed(printable) if text), "(nothing)")
    if boot.outcome is Outcome.TIMEOUT and kernel_lines == 0:
        # Seen on this project's build host: SeaBIOS and the boot stub print, then the guest is silent.
        why = (
            f"the KVM probe boot hung: no kernel message within {timeout_s:g} s, the last output was "
            f"{last[:80]!r} (the guest stops after the boot loader, during or after decompression)"
        )
    else:
        why = f"the KVM probe boot ended {boot.outcome.value} ({boot.reason})"
    return AccelChoice("tcg", f"{why}; using TCG"), boot.outcome is Outcome.TIMEOUT

"""Remember the KVM probe's answer across runs, so that a host where KVM hangs pays the probe once.

The answer holds for one host (machine id or host name, and CPU model), one kernel image (path, size,
mtime), one initramfs and one QEMU version; a change of any of them makes a new key, so a new probe.
Each answer is one small JSON file under the user cache dir, written to a temporary file and renamed.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bootscope import defaults

MACHINE_ID = Path("/etc/machine-id")
CPUINFO = Path("/proc/cpuinfo")
QEMU_BINARY = "qemu-system-x86_64"  # the binary the probe boots (bootscope.lab.qemu.process.BootConfig)


@dataclass(frozen=True, slots=True)
class RememberedProbe:
    """A stored probe answer: the accelerator ("kvm" or "tcg"), the sentence that said why, and when
    (UTC, ISO 8601) the probe ran."""

    accel: str
    reason: str
    probed_at: str


def memory_dir() -> Path:
    """Return the directory of remembered probe answers (in the user cache dir; created on demand)."""
    path = defaults.cache_dir() / "kvm-probe"
    path.mkdir(parents=True, exist_ok=True)
    return path


def probe_key(kernel: Path, initrd: Path | None, qemu_binary: str = QEMU_BINARY) -> dict[str, str]:
    """Return what the probe's answer depends on: host, CPU model, kernel and initramfs identity, QEMU
    version. Raises OSError if ``kernel`` (or ``initrd``) cannot be read."""
    return {
        "host": _host_id(),
        "cpu_model": _cpu_model(),
        "kernel": _file_id(kernel),
        "initrd": _file_id(initrd) if initrd is not None else "",
        "qemu": _qemu_version(qemu_binary),
    }


def recall(key: dict[str, str], directory: Path) -> RememberedProbe | None:
    """Return the answer remembered for ``key`` in ``directory``, or None (none, or unreadable)."""
    try:
        stored = json.loads(_path(key, directory).read_text(encoding="utf-8"))
        if stored.get("key") != key:
            return None
        return RememberedProbe(str(stored["accel"]), str(stored["reason"]), str(stored["probed_at"]))
    except (OSError, ValueError, KeyError, AttributeError):
        return None


def remember(key: dict[str, str], accel: str, reason: str, directory: Path) -> None:
    """Store the probe's answer for ``key`` in ``directory`` (atomically); a failure to write is
    ignored: the next run probes again, which is slow but right."""
    probed_at = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    document = {"key": key, "accel": accel, "reason": reason, "probed_at": probed_at}
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=directory, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=1)
        os.replace(temporary, _path(key, directory))
    except OSError:
        return


def _path(key: dict[str, str], directory: Path) -> Path:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:24]
    return directory / f"{digest}.json"


def _host_id() -> str:
    try:
        machine = MACHINE_ID.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        machine = ""
    return machine or socket.gethostname()


def _cpu_model() -> str:
    try:
        with CPUINFO.open(encoding="utf-8", errors="replace") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return "unknown"


def _file_id(path: Path) -> str:
    stat = path.stat()
    return f"{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"


def _qemu_version(qemu_binary: str) -> str:
    try:
        done = subprocess.run(
            [qemu_binary, "--version"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return done.stdout.partition("\n")[0].strip() or "unknown"

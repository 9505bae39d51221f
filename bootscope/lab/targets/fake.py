"""A fake target: deterministic synthetic consoles, no QEMU, for fast tests of the runner and the
workloads (scheduling, resume, stopping, quiet-host, kexec chains) and for the runner's benchmark.

Each boot prints the lines bootscope reads from a real console (``Linux version``, ``Command line``,
``Run /init as init process``, bootscope's marker; a kexec chain's markers per hop), stamped on a
virtual host clock that advances by the guest's time, so nothing sleeps. Times come from the
command line: ``fake.init_ms=N`` sets the kernel's time to init (default 1000 ms), ``fake.fail=panic``
or ``fake.fail=timeout`` makes the boot fail, and a seeded jitter of ``jitter_ms`` is added per boot.
A kexec chain stops with a load error at the hop named by ``fake.kexec_fail_hop=K``. With a login
marker, ``fake.unit_ms=NAME:MS`` adds what an image's collector prints after the prompt: the unit
``NAME`` activating for MS ms (plus the jitter), on systemd's clock.

:class:`FakeRebootingMachine` is a fake machine that reboots (the ``reboots`` capability): it answers
the shell commands of the SSH reboot workload as a machine would (boot id, kexec -l, the reboot
order, the collection of the new boot), goes away for a probe or two after each reboot, and can be
told to stay away (a machine that does not come back) and to come back (for ``--resume``).
"""

from __future__ import annotations

import itertools
import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bootscope import defaults
from bootscope.errors import BootError
from bootscope.lab.qemu.accel import AccelChoice
from bootscope.lab.qemu.image import Image
from bootscope.lab.qemu.kernels import KernelImage
from bootscope.lab.qemu.process import BootConfig
from bootscope.lab.qemu.root_initramfs import RootInitramfs
from bootscope.lab.targets.base import LineCallback, ShellResult, StartCallback
from bootscope.lab.targets.ssh.client import SSH_FAILED
from bootscope.model import Boot, LogLine, Outcome

FAKE_RELEASE = "6.1.0-fake-amd64"
_WORD = re.compile(r"(?:^|\s)(fake\.[a-z_]+|bootscope\.[a-z_]+)=(\S+)")
_NS = 1_000_000_000
_FIRMWARE_NS = 400_000_000  # what the fake's "firmware and decompression" take on the host clock


def _params(append: str) -> dict[str, str]:
    return {match.group(1): match.group(2) for match in _WORD.finditer(append)}


@dataclass(slots=True)
class FakeTarget:
    """Boots nothing: returns synthetic consoles. ``boots`` counts the boots made; ``before_boot``
    (if set) runs before each one, e.g. to raise KeyboardInterrupt like a Ctrl-C mid-run;
    ``line_hook`` (if set) sees every console line before the runner does."""

    seed: int = 0
    jitter_ms: float = 5.0
    name: str = "fake"
    boots: int = 0
    before_boot: Callable[[BootConfig], None] | None = None
    line_hook: Callable[[LogLine], None] | None = None
    _clock_ns: itertools.count[int] = field(default_factory=lambda: itertools.count(10**12, 10**11))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def resolve_kernel(self, spec: str, initrd: Path | None = None) -> KernelImage:
        """Return a kernel named ``spec`` (nothing is read: every spec is a fake kernel)."""
        return KernelImage(image=Path(spec), initrd=initrd, release=FAKE_RELEASE, package=None, spec=spec)

    def resolve_image(self, name: str) -> Image:
        """Raise BootError: the fake target boots synthetic consoles, not system images."""
        raise BootError(f"the fake target has no system images (asked for {name!r})")

    def build_root_initramfs(self, kernel: KernelImage) -> RootInitramfs:
        """Raise BootError: the fake target boots no system images."""
        raise BootError(
            f"the fake target has no system images (asked for a root initramfs for {kernel.spec!r})"
        )

    def resolve_to(self, spec: str) -> tuple[Path, str | None]:
        """Return ``spec`` as the kernel to kexec into, with the fake release."""
        return Path(spec), FAKE_RELEASE

    def build_initramfs(self, commands: tuple[str, ...], files: tuple[tuple[Path, str], ...]) -> Path:
        """Return a made-up path (nothing is built)."""
        return Path("/fake/initramfs.cpio")

    def build_chain_initramfs(self, to_kernel: Path) -> Path:
        """Return a made-up path (nothing is built)."""
        return Path("/fake/chain.cpio")

    def choose_accel(
        self, requested: str, kernel: Path, initrd: Path | None, reprobe: bool = False
    ) -> AccelChoice:
        """Return TCG, saying it is fake."""
        return AccelChoice("tcg", "fake target: no guest runs")

    def check(self, config: BootConfig) -> None:
        """Accept every config."""

    def host_info(self) -> dict[str, Any]:
        """Return a host description that says it is fake."""
        return {"hostname": "fake", "target": self.name}

    def boot(self, config: BootConfig, on_line: LineCallback | None, on_start: StartCallback | None) -> Boot:
        """Return one synthetic boot of ``config`` (a kexec chain when the command line asks for one),
        calling ``on_line`` per line. Raises BootError for ``fake.fail=error``."""
        if self.before_boot is not None:
            self.before_boot(config)
        with self._lock:
            self.boots += 1
            number = self.boots
            start_ns = next(self._clock_ns)
        params = _params(config.append)
        if params.get("fake.fail") == "error":
            raise BootError("fake target: cannot start the guest (fake.fail=error)")
        rng = random.Random(f"{self.seed}:{config.append}:{number}")
        lines: list[LogLine] = []
        outcome, reason = Outcome.OK, ""
        hops = int(params.get("bootscope.hops", "-1"))
        host_ns = start_ns + _FIRMWARE_NS
        for hop in range(max(hops, 0) + 1):
            init_s = float(params.get("fake.init_ms", "1000")) / 1000 + rng.uniform(0, self.jitter_ms / 1000)
            own = config.marker_regex == defaults.MARKER_PREFIX
            kernel, host_ns = _kernel_lines(config.append, hop, hops, init_s, host_ns, own)
            lines += kernel
            if params.get("fake.fail") in ("panic", "timeout") and hop == 0:
                outcome = Outcome(params["fake.fail"])
                reason = "fake target: the guest failed as asked"
                lines = lines[:3]
                break
            if hops < 0 or hop == hops:
                break
            if str(hop + 1) == params.get("fake.kexec_fail_hop"):
                lines.append(
                    LogLine(f"BOOTSCOPE-KEXEC-ERROR hop={hop} kexec -l failed: fake", host_ns=host_ns)
                )
                break
            host_ns += 20_000_000
            for name in ("kexec-prep", "kexec-load", "kexec-exec"):
                host_ns += 50_000_000
                uptime = init_s + (host_ns - start_ns) / _NS * 0.01
                lines.append(
                    LogLine(f"{defaults.MARKER_PREFIX} {name} uptime={uptime:.2f} hop={hop}", host_ns=host_ns)
                )
            host_ns += _FIRMWARE_NS
        if (
            outcome is Outcome.OK
            and "fake.unit_ms" in params
            and config.marker_regex != defaults.MARKER_PREFIX
        ):
            lines += _collector_lines(params["fake.unit_ms"], rng.uniform(0, self.jitter_ms / 1000), host_ns)
        for line in lines:
            if self.line_hook is not None:
                self.line_hook(line)
            if on_line is not None:
                on_line(line)
        return Boot(
            lines=tuple(lines),
            outcome=outcome,
            reason=reason,
            accel="tcg",
            command=("fake-qemu", str(config.kernel), config.append),
            host_start_ns=start_ns,
            host_end_ns=host_ns,
        )


def _kernel_lines(
    append: str, hop: int, hops: int, init_s: float, host_ns: int, own_marker: bool
) -> tuple[list[LogLine], int]:
    """Return one kernel's console lines (printk-stamped, host-stamped from ``host_ns``) and the host
    time after its marker: bootscope's marker, or (``own_marker`` False, a user's initramfs) a timed
    line from its init 0.3 s later and an untimed ``login:`` prompt."""
    texts = [
        (0.0, f"Linux version {FAKE_RELEASE} (fake@bootscope) (gcc 12.2.0) #1 SMP PREEMPT_DYNAMIC"),
        (0.0, f"Command line: console=ttyS0 {append}"),
        (init_s * 0.3, "smp: Brought up 1 node, 1 CPU"),
        (init_s, "Run /init as init process"),
    ]
    if not own_marker:
        texts.append((init_s + 0.3, "fake-init: starting a getty on ttyS0"))
    lines = [LogLine(f"[{t:12.6f}] {text}", host_ns=host_ns + int(t * _NS)) for t, text in texts]
    if not own_marker:
        host_ns += int((init_s + 0.35) * _NS)
        return [*lines, LogLine("fake login: ", host_ns=host_ns)], host_ns
    uptime_s = init_s + 0.05
    host_ns += int(uptime_s * _NS)
    suffix = f" hop={hop}" if hops >= 0 else ""
    name = " init" if hops >= 0 else ""
    lines.append(LogLine(f"{defaults.MARKER_PREFIX}{name} uptime={uptime_s:.3f}{suffix}", host_ns=host_ns))
    lines.append(LogLine("fake login: ", host_ns=host_ns + 1_000_000))
    return lines, host_ns


def _collector_lines(unit_ms: str, jitter_s: float, host_ns: int) -> list[LogLine]:
    """Return a collector block (as bootscope-collect.service prints it) in which the unit of
    ``NAME:MS`` takes MS ms plus ``jitter_s`` to activate, starting 2 s after the kernel did."""
    unit, _, ms = unit_ms.partition(":")
    activating_us = 2_000_000
    active_us = activating_us + round((float(ms or "0") / 1000 + jitter_s) * 1e6)
    texts = [
        defaults.COLLECT_BEGIN,
        f"{defaults.COLLECT_SECTION} state",
        "running",
        f"{defaults.COLLECT_SECTION} units",
        f"Id={unit}",
        f"InactiveExitTimestampMonotonic={activating_us}",
        f"ActiveEnterTimestampMonotonic={active_us}",
        "",
        defaults.COLLECT_END,
    ]
    return [LogLine(text, host_ns=host_ns + 2_000_000 + i) for i, text in enumerate(texts)]


_BOOT_ID = "cat /proc/sys/kernel/random/boot_id"  # bootscope.lab.targets.ssh.machine.boot_id_command
_COLLECT_START = 'echo "BOOTSCOPE-SSH-FACT boot_id'  # bootscope.lab.workloads.ssh_collect.collect_command
_AWAY = "ssh: connect to host fake port 22: Connection refused"


@dataclass(slots=True)
class FakeRebootingMachine:
    """A machine that reboots, faked: every reboot gives a new boot id after ``away_probes`` probes
    that find it gone; ``stay_away_after`` (if set) is the reboot after which it never answers again
    until :meth:`come_back`. ``commands`` keeps every command it was given, in order."""

    name: str = "ssh://root@fake.invalid"
    away_probes: int = 1
    stay_away_after: int | None = None
    commands: list[str] = field(default_factory=list)
    reboots: int = 0
    _away_left: int = 0
    _gone: bool = False

    @property
    def url(self) -> str:
        """The fake machine's URL (its name: a plan that names it runs on it)."""
        return self.name

    @property
    def host(self) -> str:
        """The fake machine's host name."""
        return "fake"

    @property
    def root_prefix(self) -> str:
        """It is logged in as root."""
        return ""

    @property
    def has_console(self) -> bool:
        """No console is read."""
        return False

    def host_info(self) -> dict[str, Any]:
        """Return a host description that says it is fake."""
        return {"hostname": "fake", "target": self.name}

    def come_back(self) -> None:
        """Answer again (after a reboot it stayed away from)."""
        self._gone, self.stay_away_after = False, None

    def run(self, command: str, timeout_s: float, connect_timeout_s: float | None = None) -> ShellResult:
        """Answer ``command`` as the machine would; away, every command fails as ssh does."""
        self.commands.append(command)
        started_ns = time.monotonic_ns()
        if self._gone or (command == _BOOT_ID and self._away_left > 0):
            self._away_left = max(0, self._away_left - 1)
            return ShellResult(SSH_FAILED, "", _AWAY, started_ns, time.monotonic_ns())
        if command == _BOOT_ID:
            return ShellResult(0, f"fake-boot-{self.reboots}\n", "", started_ns, time.monotonic_ns())
        if command.startswith(_COLLECT_START):
            return ShellResult(0, self._collected(), "", started_ns, time.monotonic_ns())
        if "systemctl --no-block" in command:
            self.reboots += 1
            self._away_left = self.away_probes
            self._gone = self.stay_away_after is not None and self.reboots >= self.stay_away_after
        return ShellResult(0, "", "", started_ns, time.monotonic_ns())

    def boot_id(self, timeout_s: float) -> str:
        """Return the running boot's id; raises BootError, as an SSH machine does, when it is away."""
        result = self.run(_BOOT_ID, timeout_s)
        if not result.ok:
            raise BootError(f"{self.name} does not answer SSH ({_AWAY}) after {timeout_s:g} s")
        return result.stdout.strip()

    def machine_facts(self) -> dict[str, str]:
        """Return the facts of a machine where kexec can load a kernel."""
        return {"machine-id": "fake-machine", "kexec": "/usr/sbin/kexec", "kexec-load-disabled": "0",
                "cmdline": "BOOT_IMAGE=/vmlinuz root=/dev/vda1 ro"}  # fmt: skip

    def start(self) -> None:
        """No console to read."""

    def stop(self) -> None:
        """No console to stop."""

    def console_since(self, host_ns: int) -> list[LogLine]:
        """No console lines."""
        return []

    def console_lost(self) -> str | None:
        """No console to lose."""
        return None

    def forget_console_before(self, host_ns: int) -> None:
        """No console lines to forget."""

    def _collected(self) -> str:
        """What the collection prints on the new boot: facts, then its journal (kernel and PID 1)."""
        journal = [
            f"Linux version {FAKE_RELEASE} (fake@bootscope) (gcc 12.2.0) #1 SMP PREEMPT_DYNAMIC",
            "Command line: BOOT_IMAGE=/vmlinuz root=/dev/vda1 ro",
            "Run /init as init process",
        ]
        stamps = (0.0, 0.0, 0.8)
        return "\n".join(
            [
                f"BOOTSCOPE-SSH-FACT boot_id fake-boot-{self.reboots}",
                "BOOTSCOPE-SSH-FACT uptime_s 3.20",
                f"BOOTSCOPE-SSH-FACT release {FAKE_RELEASE}",
                "BOOTSCOPE-SSH-LOG-BEGIN",
                "journal",
                *(f"[{t:12.6f}] fake kernel: {text}" for t, text in zip(stamps, journal, strict=True)),
                "BOOTSCOPE-SSH-LOG-END",
                "",
            ]
        )

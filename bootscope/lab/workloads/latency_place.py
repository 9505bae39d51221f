"""Where a latency tool runs: a machine that runs commands (:class:`CommandPlace`: this host or an
SSH machine) or a QEMU guest on a target that boots guests (:class:`GuestPlace`).

Both print the same transcript (:mod:`bootscope.parse.latency_transcript`): the facts a latency
depends on (kernel release, ``/sys/kernel/realtime``, preemption model, cmdline, CPU governor and
idle state, the exact tool and load command lines), ``/proc/interrupts`` before and after, the
tool's output and exit status. The guest gets the host's tools and the shared libraries ``ldd``
names copied into bootscope's busybox initramfs, as kexec-tools is for kexec chains, and its
``/init`` (:func:`guest_script`) starts the load, runs the tool and powers off. On a machine that
runs commands, every step is one command there, so this host and an SSH machine are measured alike.

``timerlat`` runs ``rtla timerlat hist`` where rtla is installed and the kernel has the timerlat
tracer; otherwise cyclictest runs in its place with the same interval, priority and histogram, and
the run says so (in a guest the fallback is decided by the guest's own kernel, and recorded there).
"""

from __future__ import annotations

import shlex
import shutil
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from bootscope import defaults
from bootscope.errors import BootError
from bootscope.lab.plans.latency import LatencyVariant
from bootscope.lab.plans.latency_tools import LatencySettings, command_text, load_argv, tool_argv
from bootscope.lab.qemu.initramfs import InitramfsSpec, build_initramfs
from bootscope.lab.qemu.process import BootConfig
from bootscope.lab.targets.base import RunsCommands, Target, commands, guests
from bootscope.lab.workloads.protocol import SlotRun
from bootscope.model import LogLine, Outcome
from bootscope.parse.latency_transcript import section_line

TRACER_FILES = (
    Path("/sys/kernel/tracing/available_tracers"),
    Path("/sys/kernel/debug/tracing/available_tracers"),
)
GUEST_JSON = "/tmp/bootscope-cyclictest.json"
DONE_MARKER = f"{defaults.MARKER_PREFIX} latency-done"
GUEST_BOOT_S = 120.0  # a TCG guest's boot to /init, with room; the tool's duration comes on top
PACKAGE_OF = {"cyclictest": "rt-tests", "hackbench": "rt-tests", "oslat": "rt-tests", "rtla": "rtla",
              "stress-ng": "stress-ng"}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Measurement:
    """One run's transcript ``lines``, the tool's command line, and how the place ended it (a QEMU
    guest that timed out or panicked: ``outcome`` and ``reason``; ``accel`` the guest's)."""

    lines: tuple[LogLine, ...]
    command: tuple[str, ...]
    outcome: str = Outcome.OK.value
    reason: str = ""
    accel: str = ""
    host_start_ns: int | None = None


class LatencyPlace(Protocol):
    """A place that runs latency tools on the target the runner hands over. ``prepare`` raises
    BootError (a missing tool, kernel) or InputError before anything is stored and returns notes for
    the user; ``measure`` runs once."""

    name: str

    def prepare(self, variant: LatencyVariant, target: Target, accel: str) -> list[str]:
        """Get ``variant`` ready to run on this place; return notes (e.g. a timerlat fallback)."""

    def measure(self, variant: LatencyVariant, run: SlotRun, target: Target) -> Measurement:
        """Run ``variant``'s tool once under its load; return the transcript."""


def fallback_settings(settings: LatencySettings) -> LatencySettings:
    """Return cyclictest settings in place of timerlat (same interval, priority, histogram, load)."""
    return replace(settings, tool="cyclictest")


def _which(name: str) -> Path:
    path = shutil.which(name)
    if path is None:
        raise BootError(
            f"{name}: not installed on this host (Debian: apt-get install {PACKAGE_OF.get(name, name)})"
        )
    return Path(path)


def has_timerlat(target: RunsCommands) -> bool:
    """Return True when rtla is installed on ``target`` and its kernel's tracefs lists the timerlat
    tracer."""
    files = " ".join(str(path) for path in TRACER_FILES)
    probe = f"command -v rtla >/dev/null && grep -qsw timerlat {files}"
    return target.run_command(("sh", "-c", probe), timeout_s=60).returncode == 0


def require_tool(target: RunsCommands, name: str) -> None:
    """Raise BootError naming the package when ``name`` is not installed on ``target``."""
    found = target.run_command(("sh", "-c", f"command -v {shlex.quote(name)}"), timeout_s=60)
    if found.returncode != 0:
        raise BootError(
            f"{name}: not installed on {target.where} (Debian: apt-get install {PACKAGE_OF.get(name, name)})"
        )


def pinned_settings(settings: LatencySettings, cores: tuple[int, ...] | None) -> LatencySettings:
    """Return ``settings`` kept on ``cores`` (a slot's cores: a Dask worker's, None: no pinning):
    without an ``affinity`` of its own the tool measures one thread on each of those cores, and its
    housekeeping thread moves onto the first of them when its ``main_cpu`` lies elsewhere (another
    worker's core). A variant's own ``affinity`` is left as given."""
    if not cores or settings.affinity is not None:
        return settings
    main_cpu = settings.main_cpu
    if main_cpu is not None and main_cpu not in cores:
        main_cpu = min(cores)
    return replace(settings, affinity=",".join(str(core) for core in sorted(set(cores))), main_cpu=main_cpu)


@dataclass(slots=True)
class CommandPlace:
    """A machine that runs commands (the target: this host, an SSH machine); each step is a command."""

    name: str = "commands"
    effective: dict[str, LatencySettings] = field(default_factory=dict)

    def prepare(self, variant: LatencyVariant, target: Target, accel: str) -> list[str]:
        """Check the tool and the load are installed on the target; fall back from timerlat if it
        cannot run there. Raises BootError naming the missing package, InputError for a target that
        runs no commands."""
        machine = commands(target, "latency")
        settings, notes = variant.settings, []
        if settings.tool == "timerlat" and not has_timerlat(machine):
            settings = fallback_settings(settings)
            notes.append(
                f"variant {variant.name}: timerlat needs rtla and the kernel's timerlat tracer (not found"
                f" on {machine.where}): cyclictest runs in its place with the same interval, priority"
                " and histogram"
            )
        require_tool(machine, tool_argv(settings)[0])
        load = load_argv(settings.load, 1)
        if load is not None:
            require_tool(machine, load[0])
        self.effective[variant.name] = settings
        return notes

    def measure(self, variant: LatencyVariant, run: SlotRun, target: Target) -> Measurement:
        """Run the tool on the target under its load; the transcript is built from what each command
        printed there."""
        machine = commands(target, "latency")
        cores = run.affinity if machine.on_this_host else None  # a slot's cores are this host's
        settings = pinned_settings(self.effective.get(variant.name, variant.settings), cores)
        made = machine.run_command(("mktemp", "-d", "/tmp/bootscope-latency-XXXXXX"), timeout_s=60)
        scratch = made.output.strip()
        if made.returncode != 0 or not scratch:
            raise BootError(f"{machine.where}: cannot make a scratch directory: {made.output.strip()}")
        try:
            json_path = f"{scratch}/cyclictest.json" if settings.tool == "cyclictest" else None
            argv = tool_argv(settings, json_path)
            lines, status, start_ns = self._run(machine, settings, argv, run)
            if json_path:
                saved = machine.run_command(("cat", json_path), timeout_s=60)
                if saved.returncode == 0:
                    lines += [section_line("tool-json"), *saved.output.splitlines()]
            lines += status
        finally:
            machine.run_command(("rm", "-rf", scratch), timeout_s=60)
        return Measurement(tuple(LogLine(text=line) for line in lines), argv, host_start_ns=start_ns)

    def _run(
        self, machine: RunsCommands, settings: LatencySettings, argv: tuple[str, ...], run: SlotRun
    ) -> tuple[list[str], list[str], int]:
        """Return the transcript up to the tool's output (facts, interrupts, output), its exit status
        lines (none when it outlived its time) and the host time the load started."""
        info = machine.kernel_facts()
        load = load_argv(settings.load, int(info.get("cpus") or 1))
        lines = [section_line("facts")]
        lines += [f"{key}={'' if value is None else value}" for key, value in info.items()]
        lines += [
            f"tool_command={command_text(argv)}",
            f"load_command={command_text(load) if load else ''}",
        ]
        lines += [section_line("interrupts-before"), *_interrupts(machine)]
        start_ns = time.monotonic_ns()
        handle = machine.start_load(settings.load)
        pid = getattr(handle, "pid", None)
        if isinstance(pid, int):
            run.on_start(pid)  # Ctrl-C then stops the load's process group too
        try:
            output = machine.run_command(argv, timeout_s=settings.duration_s + 60)
            status: list[str] = [section_line("exit"), str(output.returncode)]
            tool_lines = output.output.splitlines()
        except BootError as error:  # outlived its time: no exit status, the record says timeout
            status, tool_lines = [], [str(error)]
        finally:
            machine.stop_load(handle)
        lines += [section_line("interrupts-after"), *_interrupts(machine)]
        lines += [section_line("tool"), *tool_lines]
        return lines, status, start_ns


def _interrupts(machine: RunsCommands) -> list[str]:
    done = machine.run_command(("cat", "/proc/interrupts"), timeout_s=10)
    return done.output.splitlines() if done.returncode == 0 else []


def guest_script(settings: LatencySettings, cpus: int) -> str:
    """Return the guest's ``/init``: mount the pseudo file systems, print the facts and
    ``/proc/interrupts``, start the load, run the tool (timerlat: cyclictest when the kernel lacks
    the tracer or the initramfs lacks rtla), stop the load, print the rest and power off."""
    json_path = GUEST_JSON if settings.tool in ("cyclictest", "timerlat") else None
    argv = tool_argv(settings, json_path if settings.tool == "cyclictest" else None)
    fallback = tool_argv(fallback_settings(settings), json_path)
    load = load_argv(settings.load, cpus)
    names = ("facts", "interrupts-before", "tool", "interrupts-after", "tool-json", "exit")
    sections = {name: section_line(name) for name in names}
    lines = [
        "#!/bin/sh",
        "# bootscope latency guest /init (lab/workloads/latency_place.py): facts, load, tool, poweroff.",
        "export PATH=/bin:/sbin:/usr/bin:/usr/sbin",
        "mount -t proc proc /proc",
        "mount -t sysfs sysfs /sys",
        "mount -t devtmpfs devtmpfs /dev 2>/dev/null",
        "mount -t debugfs nodev /sys/kernel/debug 2>/dev/null",
        "mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null",
        "mkdir -p /tmp && mount -t tmpfs tmpfs /tmp",
        # cyclictest keeps its per-thread statistics in POSIX shared memory (shm_open: /dev/shm).
        "mkdir -p /dev/shm && mount -t tmpfs tmpfs /dev/shm",
        'r() { cat "$1" 2>/dev/null | head -n 1; }',
        f"TOOL={shlex.quote(command_text(argv))}",
        f"FALLBACK={shlex.quote(command_text(fallback))}",
        "timerlat=no",
        "grep -qw timerlat /sys/kernel/tracing/available_tracers 2>/dev/null && timerlat=yes",
    ]
    if settings.tool == "timerlat":
        lines.append(
            'if [ "$timerlat" != yes ] || ! command -v rtla >/dev/null; then TOOL="$FALLBACK";'
            ' echo "bootscope: no timerlat tracer or rtla in this guest: cyclictest runs instead"; fi'
        )
    lines += [
        f"echo '{sections['facts']}'",
        'echo "kernel_release=$(uname -r)"',
        'echo "kernel_version=$(uname -v)"',
        'echo "realtime=$(r /sys/kernel/realtime)"',
        'echo "sched_preempt=$(r /sys/kernel/debug/sched/preempt)"',
        'echo "cmdline=$(r /proc/cmdline)"',
        'echo "governor=$(r /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor)"',
        'echo "idle_driver=$(r /sys/devices/system/cpu/cpuidle/current_driver)"',
        'echo "idle_governor=$(r /sys/devices/system/cpu/cpuidle/current_governor_ro)"',
        'echo "cpus=$(grep -c ^processor /proc/cpuinfo)"',
        'echo "timerlat_tracer=$timerlat"',
        'echo "tool_command=$TOOL"',
        f"echo 'load_command={command_text(load) if load else ''}'",
        f"echo '{sections['interrupts-before']}'",
        "cat /proc/interrupts",
    ]
    if load is not None:
        lines.append(f"{command_text(load)} >/dev/null 2>&1 &")
    lines += [
        f"echo '{sections['tool']}'",
        "$TOOL 2>&1",
        "status=$?",
    ]
    if load is not None:
        # hackbench forks its groups: stop every process of the load by name (inside the guest only).
        lines += [f"killall {load[0]} 2>/dev/null", "sleep 1", f"killall -9 {load[0]} 2>/dev/null"]
    lines += [
        f"echo '{sections['interrupts-after']}'",
        "cat /proc/interrupts",
        f"echo '{sections['tool-json']}'",
        f"cat {GUEST_JSON} 2>/dev/null",
        "echo",
        f"echo '{sections['exit']}'",
        'echo "$status"',
        f"echo '{DONE_MARKER}'",
        "poweroff -f",
    ]
    return "\n".join(lines) + "\n"


@dataclass(slots=True)
class GuestPlace:
    """A QEMU guest per run on a target that boots guests: the variant's kernel and command line,
    bootscope's busybox initramfs with the host's tools; the console is the transcript."""

    name: str = "qemu"
    configs: dict[str, BootConfig] = field(default_factory=dict)
    commands: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def prepare(self, variant: LatencyVariant, target: Target, accel: str) -> list[str]:
        """Resolve the kernel, copy the tools into an initramfs, check the QEMU options.
        Raises BootError (no kernel, tool or busybox) or InputError."""
        target = guests(target, "latency")
        settings, notes = variant.settings, []
        names = [tool_argv(settings)[0]]
        if settings.tool == "timerlat":
            names.append("cyclictest")  # the guest falls back to it without the tracer
            if shutil.which("rtla") is None:
                names.remove("rtla")
                notes.append(
                    f"variant {variant.name}: timerlat needs rtla, which this host lacks: the guest runs"
                    " cyclictest in its place with the same interval, priority and histogram"
                )
        load = load_argv(settings.load, variant.smp)
        if load is not None:
            names.append(load[0])
        binaries = tuple(_which(name) for name in names)
        kernel = target.resolve_kernel(variant.kernel)
        initrd = build_initramfs(
            InitramfsSpec(init_script=guest_script(settings, variant.smp), extra_binaries=binaries)
        )
        config = BootConfig(
            kernel=kernel.image,
            initrd=initrd,
            # quiet: kernel messages would interleave with the tool's output on the one console.
            append=f"quiet {variant.append}".strip(),
            smp=variant.smp,
            mem_mb=variant.mem_mb,
            accel=accel,
            timeout_s=GUEST_BOOT_S + 2 * settings.duration_s + 30,
            marker_regex=DONE_MARKER,
            stop_on_marker=True,
        )
        target.check(config)
        self.configs[variant.name] = config
        self.commands[variant.name] = tool_argv(
            settings, GUEST_JSON if settings.tool == "cyclictest" else None
        )
        return notes

    def measure(self, variant: LatencyVariant, run: SlotRun, target: Target) -> Measurement:
        """Boot the variant's guest once; its console lines are the transcript."""
        target = guests(target, "latency")
        config = replace(self.configs[variant.name], cpu_affinity=run.affinity)
        boot = target.boot(config, run.on_line, run.on_start)
        host = (
            LogLine(text=section_line("host")),
            LogLine(text=f"qemu_command={command_text(boot.command)}"),
        )
        return Measurement(
            lines=boot.lines + host,  # after the console: kernel lines never fall into it
            command=self.commands[variant.name],
            outcome=boot.outcome.value,
            reason=boot.reason,
            accel=boot.accel,
            host_start_ns=boot.host_start_ns,
        )


def place_for(variant: LatencyVariant) -> LatencyPlace:
    """Return the place that runs ``variant``: the machine that runs commands for ``local`` or an SSH
    URL, else a QEMU guest."""
    return GuestPlace() if variant.guest else CommandPlace()

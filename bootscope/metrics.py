"""The metric registry: every metric bootscope measures, declared once.

Each entry says what the number is (name with its unit, the clock it is read on, the exact line or
event that starts and ends it), which way is better, and which workload produces it. Reports, the
store's exports, comparisons, the stopping rule and the CLI iterate this table; no other module
spells a metric's name. A metric is read from a boot's :class:`bootscope.model.Metrics` by its name
(the dataclass field of the same name), so a new metric is one field there and one entry here.

Units other than seconds fit: ``unit`` is a short symbol (``s``, ``us``, ``count``) and ``scale``
says how to print it next to seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from bootscope.errors import InputError


class Clock(StrEnum):
    """Which clock a metric is read on."""

    GUEST_PRINTK = "guest printk time"
    GUEST_UPTIME = "guest uptime"
    HOST_MONOTONIC = "host monotonic time"
    BOOTLOADER_TIMER = "boot loader timer (from reset)"
    EARLY_COUNTER = "early cycle counter (from its start, about power-on)"


@dataclass(frozen=True, slots=True)
class Metric:
    """One registered metric: its name (with its unit), unit symbol, clock, definition (the line or
    event that starts and ends it), whether lower is better, and the workloads that produce it."""

    name: str
    unit: str
    clock: Clock
    definition: str
    lower_is_better: bool = True
    workloads: tuple[str, ...] = ("boot",)


KERNEL_INIT_S = "kernel_init_s"
USERSPACE_S = "userspace_s"
HOST_WALL_S = "host_wall_s"
HOST_KERNEL_START_S = "host_kernel_start_s"
POWERON_TO_KERNEL_S = "poweron_to_kernel_s"
BOOTLOADER_HANDOFF_S = "bootloader_handoff_s"
EARLY_KERNEL_START_S = "early_kernel_start_s"
BEFORE_TIMEKEEPING_S = "before_timekeeping_s"
KEXEC_DOWNTIME_S = "kexec_downtime_s"
KEXEC_BLIND_S = "kexec_blind_s"
KEXEC_LOAD_S = "kexec_load_s"
INITRD_S = "initrd_s"
SYSTEMD_USERSPACE_S = "systemd_userspace_s"
LOGIN_PROMPT_S = "login_prompt_s"
REBOOT_DOWNTIME_S = "reboot_downtime_s"
REBOOT_SHUTDOWN_S = "reboot_shutdown_s"
REBOOT_STOP_S = "reboot_stop_s"
REBOOT_BLIND_S = "reboot_blind_s"
RESTART_TO_MARKER_S = "restart_to_marker_s"
LATENCY_MAX_US = "latency_max_us"
LATENCY_P99_US = "latency_p99_us"
LATENCY_P999_US = "latency_p999_us"
LATENCY_P9999_US = "latency_p9999_us"

_TABLE = (
    Metric(
        LATENCY_MAX_US,
        "us",
        Clock.HOST_MONOTONIC,
        "the largest latency any thread of cyclictest, oslat or rtla reported in one run (its own Max).",
        workloads=("latency",),
    ),
    Metric(
        LATENCY_P99_US,
        "us",
        Clock.HOST_MONOTONIC,
        "the largest per-thread 99th percentile of one run, from the tool's histogram (order statistic).",
        workloads=("latency",),
    ),
    Metric(
        LATENCY_P999_US,
        "us",
        Clock.HOST_MONOTONIC,
        "the largest per-thread 99.9th percentile of one run, from the tool's histogram (order statistic).",
        workloads=("latency",),
    ),
    Metric(
        LATENCY_P9999_US,
        "us",
        Clock.HOST_MONOTONIC,
        "the largest per-thread 99.99th percentile of one run, from the tool's histogram (None when a"
        " thread has fewer than 10 expected samples beyond it, or it lies in the overflow).",
        workloads=("latency",),
    ),
    Metric(
        KERNEL_INIT_S,
        "s",
        Clock.GUEST_PRINTK,
        "guest printk time of the line 'Run /init as init process' (or /sbin/init and kin); in a log"
        " without one (older kernels print none), of the last 'Freeing unused kernel ... memory' line,"
        " which kernel_init() prints just before it runs init (a note says so).",
        workloads=("boot", "kexec", "ssh", "board"),
    ),
    Metric(
        USERSPACE_S,
        "s",
        Clock.GUEST_UPTIME,
        "guest uptime printed by the initramfs's first BOOTSCOPE-MARKER line, or the guest time of the"
        " first line that the user's --marker regex matches.",
        workloads=("boot", "board"),
    ),
    Metric(
        HOST_WALL_S,
        "s",
        Clock.HOST_MONOTONIC,
        "host time from QEMU start to the marker line's arrival (includes firmware and decompression).",
        workloads=("boot", "board"),
    ),
    Metric(
        HOST_KERNEL_START_S,
        "s",
        Clock.HOST_MONOTONIC,
        "host time from QEMU start to the arrival of the first line with a kernel timestamp"
        " (firmware, boot loader and decompression).",
    ),
    Metric(
        POWERON_TO_KERNEL_S,
        "s",
        Clock.HOST_MONOTONIC,
        "host time from the power-on order (a labgrid power driver; a libvirt domain's resume after its"
        " paused start) to the arrival of the machine's first console line with a kernel timestamp:"
        " firmware, boot loader, kernel load and decompression.",
        workloads=("board",),
    ),
    Metric(
        BOOTLOADER_HANDOFF_S,
        "s",
        Clock.BOOTLOADER_TIMER,
        "U-Boot's bootstage report before the kernel (CONFIG_BOOTSTAGE_REPORT, 'Timer summary in"
        " microseconds'): the time from reset to its 'start_kernel' mark, or to its last mark when it"
        " names none (the report is printed just before the OS starts), on U-Boot's timer; or barebox's"
        " log printed with its times before the kernel ('dmesg -t'): the time of its last message, on"
        " barebox's clock.",
        workloads=("boot", "board"),
    ),
    Metric(
        EARLY_KERNEL_START_S,
        "s",
        Clock.EARLY_COUNTER,
        "a kernel that stamps its first lines from the cycle counter (the 2025-2026 printk"
        " early-timestamp patches): the stamp of its first line, the time from the counter's start"
        " (about power-on, or a VM's start) to the kernel's first printk.",
        workloads=("boot", "board"),
    ),
    Metric(
        BEFORE_TIMEKEEPING_S,
        "s",
        Clock.EARLY_COUNTER,
        "the same kernel's time on the early counter before timekeeping started: from its first line"
        " to its last line stamped on the counter (printk stamps zero there without the patches).",
        workloads=("boot", "board"),
    ),
    Metric(
        KEXEC_DOWNTIME_S,
        "s",
        Clock.HOST_MONOTONIC,
        "host time from the old kernel's last line before 'kexec -e' to the new kernel's marker (a"
        " machine over SSH with --console: from the old kernel's last console line before the new"
        " kernel's banner to the new kernel's 'Run /init as init process' console line; a capture with"
        " host stamps given to analyze, such as grabserial's: from the old kernel's 'kexec_core:"
        " Starting new kernel' line to the line that ends the new kernel's kernel_init_s).",
        workloads=("kexec", "ssh", "board"),
    ),
    Metric(
        KEXEC_BLIND_S,
        "s",
        Clock.HOST_MONOTONIC,
        "host time from the old kernel's last line before 'kexec -e' to the new kernel's printk time"
        " zero (purgatory, decompression and early setup, which the new kernel cannot log; a capture"
        " given to analyze: from the 'kexec_core: Starting new kernel' line, the zero placed by the line"
        " that ends kernel_init_s, its host stamp less its printk time).",
        workloads=("kexec",),
    ),
    Metric(
        KEXEC_LOAD_S,
        "s",
        Clock.HOST_MONOTONIC,
        "host time that the guest's 'kexec -l' (or -s) took to load the next kernel.",
        workloads=("kexec",),
    ),
    Metric(
        INITRD_S,
        "s",
        Clock.GUEST_PRINTK,
        "guest printk time from 'Run /init as init process' to the last 'systemd[1]: systemd VERSION"
        " running in system mode' line (the real root's systemd starting; needs systemd.log_target=kmsg,"
        " which image variants set): the initramfs's whole time. For a kernel foreign to the image that is"
        " bootscope's initramfs (the kernel's disk modules, mount, switch_root), not the image's own."
        " None for a boot without an initramfs ('Run /sbin/init as init process': not /init, nor rdinit=).",
        workloads=("boot", "ssh"),
    ),
    Metric(
        SYSTEMD_USERSPACE_S,
        "s",
        Clock.GUEST_PRINTK,
        "guest printk time from the real root's 'systemd[1]: systemd VERSION running in system mode'"
        " line to systemd's 'systemd[1]: Startup finished in ...' line (no start job left).",
        workloads=("boot", "ssh"),
    ),
    Metric(
        REBOOT_DOWNTIME_S,
        "s",
        Clock.HOST_MONOTONIC,
        "host time from the moment the machine confirmed the reboot order (the ssh command that gave"
        " it returned) to the end of the first ssh command that ran on the new boot (a new boot id).",
        workloads=("ssh",),
    ),
    Metric(
        REBOOT_SHUTDOWN_S,
        "s",
        Clock.HOST_MONOTONIC,
        "host time from the moment the machine confirmed the reboot order to the start of the first"
        " ssh probe that found SSH no longer answering (the old system's shutdown, seen from outside).",
        workloads=("ssh",),
    ),
    Metric(
        REBOOT_STOP_S,
        "s",
        Clock.HOST_MONOTONIC,
        "host time from the moment the machine confirmed the reboot order (the ssh command that gave"
        " it returned; a labgrid board's shell: the order written to its console) to the old kernel's"
        " last console line (the last with a printk stamp) before the new kernel's banner (--console):"
        " the old system's whole shutdown, services, file systems and devices, until the kernel hands"
        " over.",
        workloads=("ssh", "board"),
    ),
    Metric(
        REBOOT_BLIND_S,
        "s",
        Clock.HOST_MONOTONIC,
        "host time from the old kernel's last console line to the new kernel's printk time zero (the"
        " host stamp of the new kernel's 'Run /init as init process' console line less that line's"
        " printk time; --console): with kexec, purgatory, decompression and early setup; with a"
        " firmware reboot, the firmware and the boot loader too.",
        workloads=("ssh", "board"),
    ),
    Metric(
        RESTART_TO_MARKER_S,
        "s",
        Clock.HOST_MONOTONIC,
        "a labgrid board or a libvirt domain: host time from the order that restarted it to the arrival"
        " of the new boot's marker line: a cold boot's power-on order; a warm or kexec reboot's order on"
        " its shell (as reboot_stop_s starts), so it holds the old system's shutdown too. The one number"
        " that compares cold, warm and kexec reboots of one machine.",
        workloads=("board",),
    ),
    Metric(
        LOGIN_PROMPT_S,
        "s",
        Clock.HOST_MONOTONIC,
        "host time from QEMU start to the arrival of the getty's 'HOSTNAME login: ' prompt on the"
        " serial console (firmware, kernel, initramfs and systemd up to the serial getty).",
    ),
)

REGISTRY: dict[str, Metric] = {metric.name: metric for metric in _TABLE}
DEFINITIONS: dict[str, str] = {metric.name: metric.definition for metric in _TABLE}
UNITS: dict[str, str] = {metric.name: metric.unit for metric in _TABLE}
# The metrics a boot's console gives (a boot, a kexec reboot, a full userspace boot): what analyze
# reports for a log. A latency run's metrics come from a tool's output, never from a boot log.
BOOT_LOG_DEFINITIONS: dict[str, str] = {
    metric.name: metric.definition for metric in _TABLE if {"boot", "kexec"} & set(metric.workloads)
}

# What a QEMU boot stores per boot (read from its breakdown), and the subsets the end-of-run summary
# shows and compares. host_wall_s is summarised but not compared: it also holds firmware and QEMU
# start-up, which no kernel change moves.
BOOT_METRICS = (KERNEL_INIT_S, USERSPACE_S, HOST_WALL_S, HOST_KERNEL_START_S)
# What a full userspace boot (an image variant) stores besides BOOT_METRICS, and what a run of image
# variants summarises and compares (login_prompt_s, like host_wall_s, also holds firmware and QEMU).
IMAGE_METRICS = (INITRD_S, SYSTEMD_USERSPACE_S, LOGIN_PROMPT_S)
IMAGE_SUMMARY_METRICS = (KERNEL_INIT_S, INITRD_S, SYSTEMD_USERSPACE_S, LOGIN_PROMPT_S)
IMAGE_COMPARED_METRICS = (KERNEL_INIT_S, INITRD_S, SYSTEMD_USERSPACE_S)
SUMMARY_METRICS = (KERNEL_INIT_S, USERSPACE_S, HOST_WALL_S)
COMPARED_METRICS = (KERNEL_INIT_S, USERSPACE_S)
# Every export names these, even when a boot did not reach them (value None).
EXPORT_METRICS = SUMMARY_METRICS
# A latency run's metrics (each run's own histogram), in the order reports show them.
LATENCY_METRICS = (LATENCY_MAX_US, LATENCY_P99_US, LATENCY_P999_US, LATENCY_P9999_US)
# What `latency run` compares across runs (each run one observation; the tail statistics).
LATENCY_COMPARED_METRICS = (LATENCY_P999_US, LATENCY_P9999_US, LATENCY_MAX_US)
# A kexec reboot's metrics, in the order reports show them.
KEXEC_METRICS = (KEXEC_DOWNTIME_S, KEXEC_BLIND_S, KEXEC_LOAD_S, KERNEL_INIT_S)
# A machine rebooted over SSH: the reboot seen from outside, then the new boot from its own journal.
SSH_METRICS = (
    REBOOT_DOWNTIME_S,
    REBOOT_SHUTDOWN_S,
    REBOOT_STOP_S,
    REBOOT_BLIND_S,
    KEXEC_DOWNTIME_S,
    KERNEL_INIT_S,
    INITRD_S,
    SYSTEMD_USERSPACE_S,
)
# A board booted from power-on (labgrid): the time to the kernel, then the kernel's own metrics.
BOARD_METRICS = (POWERON_TO_KERNEL_S, KERNEL_INIT_S, USERSPACE_S, HOST_WALL_S)
# A board rebooted warm or by kexec through its shell (labgrid): the reboot seen on its console.
BOARD_REBOOT_METRICS = (REBOOT_STOP_S, REBOOT_BLIND_S, KEXEC_DOWNTIME_S)
# What a board boot stores besides BOOT_METRICS: what its console shows before the kernel's clock.
PREKERNEL_METRICS = (BOOTLOADER_HANDOFF_S, EARLY_KERNEL_START_S, BEFORE_TIMEKEEPING_S)
# The metric that decides --until precise for a boot run (seed 000 times the boot to the shell).
BOOT_STOP_METRIC = USERSPACE_S
# The default metric of compare and friends: the kernel's own time to init.
DEFAULT_METRIC = KERNEL_INIT_S
# The headline numbers of one boot in a report.
HEADLINE_METRICS = (KERNEL_INIT_S, USERSPACE_S, HOST_WALL_S, KEXEC_DOWNTIME_S)
# What the progress bar shows as a boot's last sample, first one present wins.
PROGRESS_METRICS = (USERSPACE_S, KERNEL_INIT_S, KEXEC_DOWNTIME_S)


def metric(name: str) -> Metric:
    """Return the registered metric ``name``; raises KeyError for an unknown name."""
    return REGISTRY[name]


def definition(name: str) -> Metric:
    """Return the registered metric ``name``, the one lookup of a metric name a user gave.

    Raises InputError (one line, naming every known metric) for a name not registered.
    """
    entry = REGISTRY.get(name)
    if entry is None:
        raise InputError(f"unknown metric {name!r}; known metrics: {', '.join(REGISTRY)}")
    return entry


def unit_of(name: str) -> str:
    """Return the unit symbol of ``name``, ``s`` for a name not registered (e.g. a user's column)."""
    entry = REGISTRY.get(name)
    return entry.unit if entry is not None else "s"


# A named unit's activation time: ``unit:systemd-udevd.service`` (no registry entry: any unit name).
UNIT_METRIC_PREFIX = "unit:"


def unit_metric(name: str) -> str | None:
    """Return the unit named by a metric ``unit:NAME`` (``unit:systemd-udevd.service``), None when
    ``name`` is not a unit metric. Raises ValueError for ``unit:`` with no unit name."""
    if not name.startswith(UNIT_METRIC_PREFIX):
        return None
    unit = name.removeprefix(UNIT_METRIC_PREFIX).strip()
    if not unit:
        raise ValueError(f"{name!r} names no unit; give unit:NAME.service")
    return unit


def unit_definition(unit: str) -> str:
    """Return the definition of ``unit:UNIT``, the unit's activation time in seconds."""
    return (
        f"guest monotonic time (systemd's clock, the kernel's printk clock) from {unit}'s "
        "InactiveExitTimestampMonotonic (activating) to its ActiveEnterTimestampMonotonic (active), or "
        "to its InactiveEnterTimestampMonotonic for a oneshot that ran and exited without ever being "
        "active (as systemd-analyze blame counts it), as bootscope-collect.service printed them after "
        "the boot; boots where it never finished starting are left out."
    )

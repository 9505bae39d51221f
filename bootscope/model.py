"""The plain dataclasses that every stage passes on.

Units are in the names: ``_s`` seconds, ``_us`` microseconds, ``_ns`` nanoseconds, ``_kb`` KiB.
A value that a log does not state is ``None``: never guessed, never invented.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from bootscope.prekernel import BootstageReport, EarlyCounter


@dataclass(frozen=True, slots=True)
class LogLine:
    """One console or log line.

    ``guest_s`` is the kernel's printk time (None for untimed lines such as firmware or userspace
    output); ``host_ns`` is the host's ``time.monotonic_ns()`` (or a grabserial stamp converted to
    ns) at arrival, None when unknown.
    """

    text: str
    guest_s: float | None = None
    host_ns: int | None = None
    level: int | None = None
    facility: int | None = None
    seq: int | None = None
    caller: str | None = None


class Outcome(StrEnum):
    """How a boot ended."""

    OK = "ok"
    TIMEOUT = "timeout"
    PANIC = "panic"
    QEMU_ERROR = "qemu-error"
    KEXEC_ERROR = "kexec-error"
    REBOOT_ERROR = "reboot-error"  # an SSH target: the reboot could not be ordered or did not happen
    LOG_MISSING = "log-missing"  # an SSH target came back, but its journal lacks this boot
    LOADER_ERROR = "loader-error"  # a board's boot loader did not boot the command line given at its prompt


@dataclass(frozen=True, slots=True)
class Boot:
    """One boot: its lines, where it ran and how it ended."""

    lines: tuple[LogLine, ...]
    outcome: Outcome = Outcome.OK
    reason: str = ""
    variant: str = ""
    kernel: str = ""
    cmdline: str = ""
    machine: str = ""
    accel: str = ""
    host_start_ns: int | None = None
    host_end_ns: int | None = None
    command: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Identity:
    """What the log says about the kernel and machine it ran on."""

    release: str | None = None
    cmdline: str | None = None
    cpus: int | None = None
    arch: str | None = None
    memory_kb: int | None = None


@dataclass(frozen=True, slots=True)
class Phase:
    """The span between two milestones; ``share`` is the fraction of the boot's total (0..1)."""

    name: str
    start_s: float | None
    end_s: float | None
    duration_s: float | None
    share: float | None
    missing: str | None = None


@dataclass(frozen=True, slots=True)
class Gap:
    """A silence between two consecutive timed lines."""

    start_s: float
    duration_s: float
    before: str
    after: str


@dataclass(frozen=True, slots=True)
class Initcall:
    """One initcall from ``initcall_debug``; ``duration_us`` and ``ret`` are None if it never returned."""

    name: str
    start_s: float | None
    duration_us: int | None
    ret: int | None
    pid: int | None = None
    module: str | None = None


@dataclass(frozen=True, slots=True)
class InitcallSummary:
    count: int
    total_s: float
    failed: tuple[Initcall, ...]
    unfinished: tuple[Initcall, ...]
    top: tuple[Initcall, ...]
    all: tuple[Initcall, ...] = ()


@dataclass(frozen=True, slots=True)
class CpuBringup:
    """One secondary CPU's bring-up; ``phases_cycles`` holds per-phase cycle counts where logged."""

    cpu: int
    start_s: float | None
    duration_s: float | None
    phases_cycles: tuple[int, ...] = ()
    total_cycles: int | None = None


@dataclass(frozen=True, slots=True)
class CpuBringupSummary:
    cpus: tuple[CpuBringup, ...]
    serial_s: float | None
    parallel_estimate_s: float | None


@dataclass(frozen=True, slots=True)
class Metrics:
    """The boot's headline numbers (definitions in ``bootscope.metrics.DEFINITIONS``)."""

    kernel_init_s: float | None = None
    userspace_s: float | None = None
    host_wall_s: float | None = None
    host_kernel_start_s: float | None = None
    kexec_downtime_s: float | None = None
    # kexec only (bootscope.analyze.kexec): host time from `kexec -e` to the new kernel's clock zero
    # (purgatory, decompression, early setup), and host time that `kexec -l`/`-s` took to load.
    kexec_blind_s: float | None = None
    kexec_load_s: float | None = None
    # Full userspace boots (bootscope image): the initramfs, systemd's own start, the getty's prompt.
    initrd_s: float | None = None
    systemd_userspace_s: float | None = None
    login_prompt_s: float | None = None
    # A machine rebooted over SSH (bootscope.lab.workloads.ssh), on the host clock: order -> SSH back,
    # and order -> SSH no longer answering.
    reboot_downtime_s: float | None = None
    reboot_shutdown_s: float | None = None
    reboot_stop_s: float | None = None
    reboot_blind_s: float | None = None
    # A board booted from power-on (bootscope.lab.workloads.board): the power-on order -> the kernel's
    # first stamped console line, on the host clock.
    poweron_to_kernel_s: float | None = None
    # A board (labgrid): the order that restarted it (power-on, or a warm or kexec reboot's order on
    # its shell) -> the new boot's marker line, on the host clock.
    restart_to_marker_s: float | None = None
    # Before the kernel's clock (bootscope.prekernel): U-Boot's bootstage report (reset -> its last
    # mark), and early cycle-counter stamps (counter start -> the kernel's first line; the kernel's
    # time before timekeeping).
    bootloader_handoff_s: float | None = None
    early_kernel_start_s: float | None = None
    before_timekeeping_s: float | None = None
    # Latency workload (bootscope latency run): the worst thread of one tool run, in us.
    latency_max_us: float | None = None
    latency_p99_us: float | None = None
    latency_p999_us: float | None = None
    latency_p9999_us: float | None = None


@dataclass(frozen=True, slots=True)
class SystemdTime:
    """``systemd-analyze time``: each phase systemd names (s, None where it names none), or
    ``finished`` False when it said "Bootup is not yet finished" (then every phase is None)."""

    finished: bool
    firmware_s: float | None = None
    loader_s: float | None = None
    kernel_s: float | None = None
    initrd_s: float | None = None
    userspace_s: float | None = None
    total_s: float | None = None
    target: str | None = None
    target_reached_s: float | None = None


@dataclass(frozen=True, slots=True)
class UnitSpan:
    """One unit's activation on systemd's monotonic clock (s since the kernel started; None where
    systemd has no timestamp): activating from ``activating_s``, active from ``active_s``,
    deactivating from ``deactivating_s``, inactive again from ``inactive_s``."""

    unit: str
    activating_s: float | None
    active_s: float | None
    deactivating_s: float | None = None
    inactive_s: float | None = None

    @property
    def start_s(self) -> float | None:
        """When the unit started activating (s), or became active where systemd has no activating
        time (an instant unit: a target, a device); None where it has neither."""
        return self.activating_s if self.activating_s is not None else self.active_s

    @property
    def ready_s(self) -> float | None:
        """When the unit finished starting (s): when it became active, or, for a unit that ran and
        exited without ever being active (a ``Type=oneshot`` service without ``RemainAfterExit=``),
        when it became inactive again; None where systemd has neither."""
        if self.active_s is not None:
            return self.active_s
        started, ended = self.activating_s, self.inactive_s
        return ended if started is not None and ended is not None and ended >= started else None

    @property
    def activation_s(self) -> float | None:
        """How long the unit took to start (s): activating to active, or activating to inactive for a
        oneshot that ran and exited (as ``systemd-analyze blame`` counts it); None where it never
        finished starting or systemd has no activating time."""
        ready = self.ready_s
        if self.activating_s is None or ready is None or ready < self.activating_s:
            return None
        return ready - self.activating_s


@dataclass(frozen=True, slots=True)
class ChainLink:
    """One line of ``systemd-analyze critical-chain``: the unit, when it became active (``at_s``),
    how long it took to start (``took_s``, None where not printed) and its depth in the tree."""

    unit: str
    at_s: float | None
    took_s: float | None
    depth: int


@dataclass(frozen=True, slots=True)
class SystemdAccounting:
    """What systemd says about one boot: its state when asked (running, degraded, starting...), its
    time, blame (unit, s, longest first), critical chain, per-unit spans and failed units.
    ``complete`` is False when the output was cut short (no end marker)."""

    state: str | None
    time: SystemdTime | None
    blame: tuple[tuple[str, float], ...]
    critical_chain: tuple[ChainLink, ...]
    units: tuple[UnitSpan, ...]
    failed: tuple[str, ...]
    complete: bool


@dataclass(frozen=True, slots=True)
class Breakdown:
    """Where one boot's time went."""

    identity: Identity
    metrics: Metrics
    milestones: dict[str, float]
    phases: tuple[Phase, ...]
    gaps: tuple[Gap, ...]
    initcalls: InitcallSummary
    cpu_bringup: CpuBringupSummary
    first_s: float | None
    last_s: float | None
    line_count: int
    timed_line_count: int
    warnings: tuple[str, ...] = ()
    advice: tuple[Advice, ...] = ()
    # What systemd's own "Startup finished in ..." line says (its clock, in its text), exact even
    # where the log's stamps are whole seconds; None without such a line.
    systemd_stated: SystemdTime | None = None
    # The boot's first "Kernel panic - not syncing: ..." line; None if it did not panic.
    panic: Panic | None = None
    # The boot loader's bootstage report before the kernel, and the early cycle-counter lines.
    bootstage: BootstageReport | None = None
    early_counter: EarlyCounter | None = None


@dataclass(frozen=True, slots=True)
class Panic:
    """Where a boot panicked: the guest time of the panic line (None if untimed) and its reason."""

    t_s: float | None
    reason: str


@dataclass(frozen=True, slots=True)
class Advice:
    """A known boot-time sink seen in this boot, and what addresses it."""

    title: str
    evidence: str
    cost_s: float | None
    remedy: str


@dataclass(frozen=True, slots=True)
class Sample:
    """The metrics of one stored boot, ready for the stats stage."""

    variant: str
    index: int
    outcome: Outcome
    metrics: dict[str, float | None] = field(default_factory=dict)
    warmup: bool = False
    disturbed: bool = False


@dataclass(frozen=True, slots=True)
class SideSummary:
    """One side of a comparison (units of the metric)."""

    name: str
    n: int
    median: float
    median_ci: tuple[float, float] | None
    mean: float
    std: float | None
    min: float
    max: float
    outliers: tuple[float, ...] = ()
    values: tuple[float, ...] = ()


@dataclass(frozen=True, slots=True)
class TestResult:
    name: str
    p: float | None
    alternative: str
    method: str
    statistic: float | None = None
    note: str = ""


@dataclass(frozen=True, slots=True)
class Comparison:
    """Two sets of samples of one metric: estimates, intervals, tests and the verdict.

    ``shift`` is b minus a (negative: b is smaller, i.e. faster).
    """

    metric: str
    unit: str
    alpha: float
    a: SideSummary
    b: SideSummary
    shift_estimate: float | None
    shift_ci: tuple[float, float] | None
    shift_relative: float | None
    tests: tuple[TestResult, ...]
    verdict: str
    p_adjusted: float | None = None
    power_detect: float | None = None
    power_n_per_side: int | None = None
    bootstrap_ci: tuple[float, float] | None = None
    bootstrap_seed: int | None = None
    notes: tuple[str, ...] = ()
    method: str = "mw"
    shift_method: str = ""
    power_achieved: float | None = None
    power_detect_relative: float | None = None
    power_max_n: int | None = None
    correction: str = ""


@dataclass(frozen=True, slots=True)
class FactDifference:
    """One fact on which two groups of boots differ: its name (``kernel release``, ``cpus``,
    ``initcall_debug``...), the values seen on each side (as text, sorted), and whether it changes
    what the log prints (then rows seen on one side only may come from it, not from the kernel)."""

    field: str
    a: tuple[str, ...]
    b: tuple[str, ...]
    changes_printing: bool = False


@dataclass(frozen=True, slots=True)
class LikeForLike:
    """Whether two groups of boots are alike in what shapes a boot time apart from the change under
    test: ``differences`` empty means like for like (as far as the logs and records state)."""

    differences: tuple[FactDifference, ...] = ()

    @property
    def ok(self) -> bool:
        """Return True when no stated fact differs."""
        return not self.differences

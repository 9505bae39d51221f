"""One boot's lines -> its Breakdown: identity, milestones, phases, gaps, initcalls, CPU bring-up."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from bootscope.analyze.advisor import advise
from bootscope.analyze.cpus import CpuSeen, summarize_cpus
from bootscope.analyze.gaps import top_gaps
from bootscope.analyze.initcalls import summarize_initcalls
from bootscope.analyze.machine import read_machine
from bootscope.analyze.phases import MILESTONE_LINES, PHASES, Mark, build_phases
from bootscope.analyze.prekernel import prekernel_metrics, read_prelude
from bootscope.errors import InputError
from bootscope.metrics import KEXEC_BLIND_S, KEXEC_DOWNTIME_S
from bootscope.model import Breakdown, Identity, LogLine, Metrics, Panic, SystemdTime
from bootscope.parse.columns import BootColumns, columns_from_lines
from bootscope.parse.early_counter import split_early
from bootscope.parse.systemd import parse_time

_FIRST_ONLY = {"memory": "memory_available", "smp_start": "smp_start", "smp_done": "smp_done"}
_FIRST_ONLY |= {"devtmpfs": "devtmpfs", "free_init": "free_init", "run_init": "run_init"}
__all__ = ["MILESTONE_LINES", "PHASES", "analyze_boot", "analyze_columns"]
_ARCH_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("amd64", "x86_64"),
    ("x86_64", "x86_64"),
    ("arm64", "arm64"),
    ("aarch64", "arm64"),
    ("686-pae", "x86"),
    ("686", "x86"),
    ("riscv64", "riscv64"),
    ("ppc64el", "ppc64le"),
    # Debian's armhf kernels (-armmp, -armmp-lpae) and the Raspberry Pi's (-v7+, -v7l+; -v8+ is arm64)
    ("armmp", "arm"),
    ("armmp-lpae", "arm"),
    ("-v7+", "arm"),
    ("-v7l+", "arm"),
    ("-v8+", "arm64"),
    ("loong64", "loongarch64"),
)


def analyze_boot(
    lines: Sequence[LogLine],
    *,
    top_n: int = 10,
    marker_regex: str | None = None,
    host_start_ns: int | None = None,
    kexec_start_ns: int | None = None,
) -> Breakdown:
    """Return where one boot's time went (all times in guest seconds, durations in s or us as named).

    ``marker_regex`` (Python regex) marks the end of userspace start when there is no BOOTSCOPE-MARKER
    line; ``host_start_ns`` (the host's monotonic ns at QEMU start) enables the host-side metrics.
    ``kexec_start_ns``: the host stamp (ns, the clock of this boot's host stamps) of the previous
    kernel's "kexec_core: Starting new kernel" line when this boot is a kexec reboot in one capture
    (bootscope.analyze.handover): it gives kexec_downtime_s and kexec_blind_s.
    Raises InputError for a marker regex that does not compile. Values the log does not state are None.
    """
    return analyze_columns(
        columns_from_lines(lines),
        top_n=top_n,
        marker_regex=marker_regex,
        host_start_ns=host_start_ns,
        kexec_start_ns=kexec_start_ns,
    )


@dataclass(slots=True)
class _Seen:
    """What one pass over a boot's known lines found (:func:`_scan_known`): its identity, the first
    time of each milestone and its line, the CPUs' bring-up, bootscope's marker, systemd's start and
    finish, a panic, the init path, and the stand-ins for phase boundaries."""

    identity: dict[str, object] = field(default_factory=dict)
    milestones: dict[str, float] = field(default_factory=dict)
    milestone_index: dict[str, int] = field(default_factory=dict)
    cpus: CpuSeen = field(default_factory=CpuSeen)
    marker_uptime: float | None = None
    marker_index: int | None = None
    marker_resolution_s: float = 0.0  # of the marker's uptime: 0.01 for "uptime=1.70"
    systemd_start_s: float | None = None
    finished_s: float | None = None
    finished_index: int | None = None
    panic: Panic | None = None
    init_path: str | None = None  # the first "Run PATH as init process"
    # stand-ins for phase boundaries (analyze/phases.py): milestones only where a phase uses them
    free_last: Mark | None = None  # the last "Freeing unused kernel ... memory" line
    slab: Mark | None = None  # the first "SLUB: HWalign=" line


def _scan_known(cols: BootColumns, first_index: int | None) -> _Seen:
    """Return what the known lines of ``cols`` say (``first_index``: the kernel's first timed line;
    a command line printed before it is the boot loader's)."""
    seen = _Seen()
    for name, index, groups, t in cols.known:
        if name == "run_init" and seen.init_path is None:
            seen.init_path = groups[0]
        if name in _FIRST_ONLY:
            key = _FIRST_ONLY[name]
            if key not in seen.milestones and t is not None:
                seen.milestones[key] = t
                seen.milestone_index[key] = index
            if name == "memory" and "memory_kb" not in seen.identity:
                seen.identity["memory_kb"] = int(groups[1] or 0)
            elif name == "smp_done":
                seen.identity["cpus"] = int(groups[1] or 0)
            elif name == "free_init" and t is not None:
                seen.free_last = Mark(t, index)
        elif name == "slub" and seen.slab is None and t is not None:
            seen.slab = Mark(t, index)
        elif name == "cpu_progress":
            seen.cpus.progress(cols.line(index).text, t)
        elif name == "cpu_up_cycles":
            seen.cpus.cycles(groups, t)
        elif name == "deferred_done" and t is not None:
            seen.milestones["deferred_pages_done"] = t  # the last node's line
        elif name == "marker" and seen.marker_index is None:
            seen.marker_uptime = float(groups[1] or 0.0)
            seen.marker_index = index
            seen.marker_resolution_s = _resolution_s(groups[1] or "")
        elif name == "banner":
            seen.identity.setdefault("release", groups[0])
        elif name == "cmdline" and index >= (first_index or 0):  # U-Boot's zboot prints one before the kernel
            seen.identity.setdefault("cmdline", (groups[0] or "").strip())
        elif name == "tsc_mhz":
            seen.cpus.tsc_mhz = float(groups[0] or groups[1] or 0.0) or seen.cpus.tsc_mhz
        elif name == "cpus_allowed":
            seen.identity.setdefault("cpus_allowed", int(groups[0] or 0))
        elif name == "systemd_start" and t is not None:
            seen.systemd_start_s, seen.finished_s = t, None  # the last start is the real root's
            seen.finished_index = None
        elif name == "panic" and seen.panic is None:
            seen.panic = Panic(t, (groups[0] or "").strip())
        elif name == "startup_finished" and seen.finished_index is None:
            seen.finished_index = index
            if t is not None:
                seen.finished_s = t
    return seen


def analyze_columns(
    cols: BootColumns,
    *,
    top_n: int = 10,
    marker_regex: str | None = None,
    host_start_ns: int | None = None,
    all_initcalls: bool = True,
    kexec_start_ns: int | None = None,
) -> Breakdown:
    """Return the Breakdown of one boot given as columns (see ``analyze_boot``; same units and errors).

    ``all_initcalls`` False leaves ``initcalls.all`` empty (nothing else changes), for callers that
    only report the top N.
    """
    user_rx = _compile_marker(marker_regex)
    cols, early = split_early(cols)
    timed_count = len(cols.timed_index)
    first_index = int(cols.timed_index[0]) if timed_count else None  # lines before it: the boot loader's
    seen = _scan_known(cols, first_index)
    milestones, marker_index = seen.milestones, seen.marker_index  # (the marker: a --marker match)

    first_s = float(cols.timed_s[0]) if timed_count else None
    gaps, high_s = top_gaps(cols, top_n)
    last_s = high_s if timed_count else None
    if first_s is not None:
        milestones["first_line"] = first_s

    run_init_index = seen.milestone_index.get("run_init")
    if run_init_index is not None:
        user_index = _first_userspace(cols, run_init_index)
        user_s = _time_at_or_before(cols, user_index)
        if user_s is not None:
            milestones["first_userspace"] = user_s

    userspace_s: float | None = None
    if seen.marker_uptime is not None:
        userspace_s = seen.marker_uptime
    elif user_rx is not None:
        for i in range(cols.line_count):
            if user_rx.search(cols.line(i).text):
                marker_index = i
                userspace_s = _time_at_or_before(cols, i)
                break
    if userspace_s is not None:
        milestones["userspace"] = userspace_s

    marks = {key: Mark(milestones[key], i) for key, i in seen.milestone_index.items() if key in milestones}
    if first_index is not None and first_s is not None:
        marks["first_line"] = Mark(first_s, first_index)
    if userspace_s is not None:
        marks["userspace"] = Mark(
            userspace_s, cols.line_count if marker_index is None else marker_index, seen.marker_resolution_s
        )
    if seen.free_last is not None:
        marks["free_init_last"] = seen.free_last
    if seen.slab is not None:
        marks["slab_ready"] = seen.slab
    kernel_end = marks.get("run_init") or (seen.free_last if "run_init" not in marks else None)
    end_s = userspace_s if userspace_s is not None else (kernel_end.t_s if kernel_end else last_s)
    table = build_phases(marks, end_s)
    for used in table.chosen.values():  # a stand-in line that a phase uses is a milestone too
        milestones.setdefault(used, marks[used].t_s)
    if table.chosen.get("run_init") != "free_init_last" and "run_init" not in marks:
        kernel_end = None  # the last Freeing line came out of order: no end of kernel init

    if seen.systemd_start_s is not None:
        milestones["systemd_start"] = seen.systemd_start_s
    if seen.finished_s is not None:
        milestones["startup_finished"] = seen.finished_s
    metrics = Metrics(
        kernel_init_s=None if kernel_end is None else kernel_end.t_s,
        userspace_s=userspace_s,
        host_wall_s=_host_delta(cols, marker_index, host_start_ns),
        host_kernel_start_s=_host_delta(cols, first_index, host_start_ns),
        initrd_s=_span(milestones.get("run_init"), seen.systemd_start_s)
        if _ran_initramfs(seen.init_path, seen.identity.get("cmdline"))
        else None,
        systemd_userspace_s=_span(seen.systemd_start_s, seen.finished_s),
    )
    bootstage = read_prelude(cols, first_index)
    metrics = replace(metrics, **prekernel_metrics(bootstage, early))
    if kexec_start_ns is not None and kernel_end is not None:
        metrics = replace(metrics, **_kexec_metrics(cols.line(kernel_end.index), kexec_start_ns))
    warnings: list[str] = list(table.notes)
    if user_rx is not None and seen.marker_uptime is None and userspace_s is None:
        warnings.append(f"no line matches the marker regex {marker_regex!r}")
    stated = None if seen.finished_index is None else parse_time((cols.line(seen.finished_index).text,))
    disagreement = _stated_disagreement(metrics, stated)
    if disagreement:
        warnings.append(disagreement)
    breakdown = Breakdown(
        identity=_identity(seen.identity, seen.cpus.tsc_mhz is not None),
        metrics=metrics,
        milestones=dict(sorted(milestones.items(), key=lambda item: item[1])),
        phases=table.phases,
        gaps=gaps,
        initcalls=summarize_initcalls(cols.initcalls, top_n, keep_all=all_initcalls),
        cpu_bringup=summarize_cpus(seen.cpus, milestones.get("smp_start"), milestones.get("smp_done")),
        first_s=first_s,
        last_s=last_s,
        line_count=cols.line_count,
        timed_line_count=timed_count,
        warnings=tuple(warnings),
        systemd_stated=stated,
        panic=seen.panic,
        bootstage=bootstage,
        early_counter=early,
    )
    return replace(breakdown, advice=advise(breakdown, read_machine(cols)))


# systemd's own userspace figure counts from a timestamp taken a little before its first log line
# (0.3 s under TCG here): a wider disagreement means the log's stamps are not the boot's clock.
_STATED_AGREE_S = 1.5


def _stated_disagreement(metrics: Metrics, stated: SystemdTime | None) -> str | None:
    """A warning when the log's stamps put systemd's start-to-finished far from systemd's own
    userspace figure (journalctl's wall-clock formats re-stamp early lines), else None."""
    if stated is None or stated.userspace_s is None or metrics.systemd_userspace_s is None:
        return None
    if abs(stated.userspace_s - metrics.systemd_userspace_s) <= _STATED_AGREE_S:
        return None
    return (
        f"this log's stamps put systemd's start-to-finished at {metrics.systemd_userspace_s:.3f} s, systemd"
        f" itself says {stated.userspace_s:.3f} s: trust systemd's own figures (or read"
        " `journalctl -b -o short-monotonic`, which keeps the boot's clock)"
    )


def _span(start_s: float | None, end_s: float | None) -> float | None:
    return None if start_s is None or end_s is None or end_s < start_s else end_s - start_s


def _ran_initramfs(init_path: str | None, cmdline: object) -> bool:
    """Whether the kernel's first init was an initramfs's: ``rdinit=`` on the command line, or
    "/init" (init/main.c ramdisk_execute_command). A kernel without an initramfs runs the root's
    ``init=`` or /sbin/init ("Run /sbin/init as init process"): there is no initrd time then."""
    rdinit = re.search(r"(?:^|\s)rdinit=(\S+)", cmdline) if isinstance(cmdline, str) else None
    return init_path == (rdinit.group(1) if rdinit else "/init")


def _compile_marker(marker_regex: str | None) -> re.Pattern[str] | None:
    if marker_regex is None:
        return None
    try:
        return re.compile(marker_regex)
    except re.error as error:
        raise InputError(f"--marker {marker_regex!r} is not a valid regular expression: {error}") from None


def _first_userspace(cols: BootColumns, after: int) -> int | None:
    # A userspace line is one without a kernel stamp on a console, or a non-kernel facility in a
    # journal or dmesg -r (user messages written to /dev/kmsg carry facility 1).
    if cols.maybe_userspace is None:
        rows: Iterable[int] = range(after + 1, cols.line_count)
    else:
        candidates = cols.maybe_userspace
        rows = map(int, candidates[bisect_right(candidates, after) :])
    for i in rows:
        line = cols.line(i)
        unstamped = line.guest_s is None and line.text.strip() and not _continued(line.text)
        if (unstamped and not _soft_wrapped(cols, i)) or (line.facility or 0) > 0:
            return i
    return None


def _soft_wrapped(cols: BootColumns, index: int) -> bool:
    """Whether line ``index`` is the rest of the line before it, cut by a mail client: a log pasted
    in a mail sent as format=flowed (RFC 3676) ends each soft-broken line with a space
    (tests/data/hw/loongarch64-ls2k2000-evb-6.10-dmesg.log: "[    4.765047] input: HID 0c45:760b
    System Control as " then "/devices/pci0000:00/...")."""
    return index > 0 and cols.line(index - 1).text.endswith(" ")


# dmesg prints the further lines of a multi-line kernel record without a stamp, indented to where the
# text of its first line starts: "[%5lu.%06lu] " is 15 characters (tests/data/hw/s390x-z14-lpar-5.6-dmesg.log:
# "               with link type OSD_10GIG.")
_CONTINUATION_INDENT = len("[    7.154070]")


def _continued(text: str) -> bool:
    """Whether an unstamped line is the continuation of a kernel record (dmesg's indentation)."""
    return len(text) > _CONTINUATION_INDENT and text[:_CONTINUATION_INDENT].isspace()


def _host_delta(cols: BootColumns, index: int | None, host_start_ns: int | None) -> float | None:
    if index is None or host_start_ns is None:
        return None
    host_ns = cols.line(index).host_ns
    return None if host_ns is None else (host_ns - host_start_ns) / 1e9


def _identity(found: dict[str, object], has_tsc: bool) -> Identity:
    release = found.get("release")
    arch: str | None = None
    if isinstance(release, str):
        arch = next((name for suffix, name in _ARCH_SUFFIXES if release.endswith(suffix)), None)
    if arch is None and has_tsc:
        arch = "x86"  # tsc: lines come from arch/x86 only
    cpus = found.get("cpus", found.get("cpus_allowed"))
    return Identity(
        release=release if isinstance(release, str) else None,
        cmdline=found.get("cmdline") if isinstance(found.get("cmdline"), str) else None,  # type: ignore[arg-type]
        cpus=cpus if isinstance(cpus, int) else None,
        arch=arch,
        memory_kb=found.get("memory_kb") if isinstance(found.get("memory_kb"), int) else None,  # type: ignore[arg-type]
    )


def _resolution_s(number: str) -> float:
    """Return the resolution (s) of a decimal number as printed: 0.01 for "1.70", 1.0 for "3"."""
    _, dot, decimals = number.partition(".")
    return 10.0 ** -len(decimals) if dot else 1.0


def _kexec_metrics(end_line: LogLine, kexec_start_ns: int) -> dict[str, float]:
    """Return kexec_downtime_s (the previous kernel's "Starting new kernel" line to ``end_line``, the
    line that ends kernel init, on the host's clock) and kexec_blind_s (to this kernel's printk time
    zero: ``end_line``'s host stamp less its printk time), where the stamps give them; in s."""
    found: dict[str, float] = {}
    if end_line.host_ns is None or end_line.host_ns < kexec_start_ns:
        return found
    found[KEXEC_DOWNTIME_S] = (end_line.host_ns - kexec_start_ns) / 1e9
    if end_line.guest_s is not None:
        zero_ns = end_line.host_ns - round(end_line.guest_s * 1e9)
        if zero_ns >= kexec_start_ns:
            found[KEXEC_BLIND_S] = (zero_ns - kexec_start_ns) / 1e9
    return found


def _time_at_or_before(cols: BootColumns, index: int | None) -> float | None:
    """Return the guest time of line ``index``, or of the nearest timed line before it (s)."""
    if index is None:
        return None
    position = bisect_right(cols.timed_index, index) - 1
    return float(cols.timed_s[position]) if position >= 0 else None

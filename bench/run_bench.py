"""What `bootscope run` costs and how steady its numbers are, on the Debian cloud kernel under TCG.

Usage: ``.venv/bin/python -m bench.run_bench [--quick] [-n N] [--kernel SPEC] [--no-write]``.
Three settings, one after the other in one invocation, each N measured boots (default 24, --quick 6)
after one warm-up, through the same code as ``bootscope run`` (smp 1, no warm-up kept):

- ``-j 1``: harness overhead per boot, as (1) host_wall_s - userspace_s (the issue's definition),
  (2) that minus host_kernel_start_s (firmware and decompression are the guest's boot, not ours),
  (3) the QEMU start and teardown around ``boot_once`` (its call time minus host_wall_s), and
  (4) the rest of bootscope's per-boot work (analysis, store write, load meter);
- ``-j 2``: boots per minute against ``-j 1``, and how far two boots at once move kernel_init_s;
- ``--icount 3``: the coefficient of variation of kernel_init_s against ``-j 1``'s.

The machine is shared with other engineers' tests, so the load average before and after, and the
CPU time other processes used during the boots, are recorded with the numbers. Writes a "run"
section into bench/RESULTS.md unless --no-write.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bench.results import write_section
from bootscope.analyze.captured import terminal_text
from bootscope.lab.plans.boot import Plan, VariantSpec
from bootscope.lab.qemu.process import BootConfig
from bootscope.lab.targets.qemu import LocalQemu
from bootscope.lab.workloads.boot import BootWorkload
from bootscope.model import Boot, LogLine
from bootscope.store import BootRecord, Store
from bootscope.usecases import run as execute

ICOUNT_SHIFT = 3
_COLUMNS = (
    "kernel_init_s", "userspace_s", "host_wall_s", "host_kernel_start_s", "over_wall_s", "over_net_s",
    "clock_zero_s", "over_zero_s", "spawn_s", "qemu_start_s", "qemu_teardown_s", "other_cpus",
)  # fmt: skip
SETTINGS = (("-j 1", 1, None), ("-j 2", 2, None), (f"--icount {ICOUNT_SHIFT}", 1, ICOUNT_SHIFT))
# A dmesg-style printk stamp at line start (kernel/printk/printk.c, print_time()).
_PRINTK = re.compile(r"^\[\s*(\d+\.\d+)\]")


@dataclass(frozen=True)
class _Call:
    """One boot_once call, host monotonic ns: before the call, QEMU start, first console line
    (the firmware's banner), marker arrival, return."""

    called_ns: int
    host_start_ns: int | None
    first_line_ns: int | None
    marker_ns: int | None
    returned_ns: int


@dataclass(frozen=True)
class Setting:
    """One setting's measured boots (seconds unless named otherwise)."""

    name: str
    jobs: int
    icount: int | None
    boots: int
    ok: int
    run_wall_s: float
    kernel_init_s: list[float]
    userspace_s: list[float]
    host_wall_s: list[float]
    host_kernel_start_s: list[float]
    over_wall_s: list[float]  # host_wall_s - userspace_s
    over_net_s: list[float]  # ... - host_kernel_start_s
    clock_zero_s: list[float]  # host time of the guest's clock zero (earliest line: arrival - printk)
    over_zero_s: list[float]  # host_wall_s - userspace_s - clock_zero_s: the marker's own delay
    spawn_s: list[float]  # boot_once called -> QEMU process started
    qemu_start_s: list[float]  # QEMU process started -> the firmware's first console line
    qemu_teardown_s: list[float]  # marker arrived -> boot_once returned (QEMU killed and reaped)
    other_cpus: list[float]  # CPUs other processes kept busy during each boot
    harness_rest_s: float  # per boot: run wall minus the boot_once calls, over the boots (-j 1 only)

    @property
    def boots_per_min(self) -> float:
        """Boots (warm-ups included) per minute of the whole run's wall time."""
        return self.boots / self.run_wall_s * 60


def _median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _cv(values: Sequence[float]) -> float:
    """Coefficient of variation: sample standard deviation over mean (NaN for fewer than 2)."""
    return statistics.stdev(values) / statistics.mean(values) if len(values) > 1 else float("nan")


def _clock_zero_ns(lines: Sequence[LogLine]) -> int | None:
    """Upper bound of the host time at which the guest's printk clock read zero: a line cannot arrive
    before it was printed, so min(arrival - printk time) over the timed lines."""
    best: int | None = None
    for line in lines:
        match = _PRINTK.match(terminal_text(line.text))
        if match and line.host_ns is not None:
            zero = line.host_ns - round(float(match.group(1)) * 1e9)
            best = zero if best is None else min(best, zero)
    return best


class _TimedQemu(LocalQemu):
    """QEMU on this host, with each boot's host times noted (when the runner called, QEMU started,
    the first line and the marker arrived, the boot returned)."""

    def __init__(self, calls: list[_Call]) -> None:
        self.calls = calls

    def boot(
        self,
        config: BootConfig,
        on_line: Callable[[LogLine], None] | None,
        on_start: Callable[[int], None] | None,
    ) -> Boot:
        called = time.monotonic_ns()
        boot = super().boot(config, on_line, on_start)
        returned = time.monotonic_ns()
        marker = next(
            (line.host_ns for line in reversed(boot.lines) if "BOOTSCOPE-MARKER" in line.text), None
        )
        first = next((line.host_ns for line in boot.lines if line.host_ns is not None), None)
        self.calls.append(_Call(called, boot.host_start_ns, first, marker, returned))
        return boot


def run_setting(name: str, kernel: str, n: int, jobs: int, icount: int | None, db: Path) -> Setting:
    """Run one setting (n measured boots after one warm-up) and return its measures."""
    plan = Plan(
        variants=(VariantSpec(name="base", kernel=kernel, smp=1, icount_shift=icount),),
        seed=1,
        samples_per_variant=n,
        warmup_per_variant=1,
        accel="tcg",
        jobs=jobs,
    )
    BootWorkload(plan).prepare(LocalQemu(), "tcg")  # kernel download and initramfs build out of the timing
    calls: list[_Call] = []
    # Timed where the runner calls the target, so every boot of a real `bootscope run` is measured.
    target = _TimedQemu(calls)
    with Store.open(db) as store:
        started = time.monotonic()
        result = execute.start_experiment(plan, store, target=target)
        run_wall_s = time.monotonic() - started
        boots = store.boots(result.experiment.id)
        logs = store.logs(result.experiment.id)
    by_start = {call.host_start_ns: call for call in calls}
    columns: dict[str, list[float]] = {name: [] for name in _COLUMNS}
    for boot in boots:
        call = by_start.get(boot.host_start_ns)
        if boot.warmup or boot.superseded or boot.outcome != "ok" or call is None or boot.id is None:
            continue
        for key, value in _boot_measures(boot, call, logs[boot.id]).items():
            columns[key].append(value)
    in_calls_s = sum((c.returned_ns - c.called_ns) / 1e9 for c in calls)
    return Setting(
        name=name,
        jobs=jobs,
        icount=icount,
        boots=len(calls),
        ok=len(columns["kernel_init_s"]),
        run_wall_s=run_wall_s,
        harness_rest_s=(run_wall_s - in_calls_s) / len(calls) if jobs == 1 and calls else float("nan"),
        **columns,
    )


def _boot_measures(boot: BootRecord, call: _Call, lines: Sequence[LogLine]) -> dict[str, float]:
    """Return one ok boot's measures (seconds), or {} if it lacks a metric or a host time."""
    m = boot.metrics
    k, u, w, h = (m.get(x) for x in ("kernel_init_s", "userspace_s", "host_wall_s", "host_kernel_start_s"))
    zero_ns = _clock_zero_ns(lines)
    start = boot.host_start_ns
    if None in (k, u, w, h, zero_ns, start, call.first_line_ns, call.marker_ns):
        return {}
    assert k is not None and u is not None and w is not None and h is not None
    assert zero_ns is not None and start is not None
    assert call.first_line_ns is not None and call.marker_ns is not None
    zero_s = (zero_ns - start) / 1e9
    call_s = (call.returned_ns - call.called_ns) / 1e9
    return {
        "kernel_init_s": k,
        "userspace_s": u,
        "host_wall_s": w,
        "host_kernel_start_s": h,
        "over_wall_s": w - u,
        "over_net_s": w - u - h,
        "clock_zero_s": zero_s,
        "over_zero_s": w - u - zero_s,
        "spawn_s": (start - call.called_ns) / 1e9,
        "qemu_start_s": (call.first_line_ns - start) / 1e9,
        "qemu_teardown_s": (call.returned_ns - call.marker_ns) / 1e9,
        "other_cpus": (boot.other_cpu_s or 0.0) / call_s,
    }


def _over(s: Setting, values: Sequence[float], signed: bool = False) -> str:
    if s.icount is not None:  # guest seconds are virtual: no host time can be subtracted from them
        return "n/a"
    return f"{_median(values):+.3f}" if signed else f"{_median(values):.3f}"


def _row(s: Setting) -> str:
    cells = [
        s.name,
        f"{s.ok}/{s.boots - 1}",
        f"{s.boots_per_min:.1f}",
        f"{_median(s.kernel_init_s):.3f}",
        f"{100 * _cv(s.kernel_init_s):.3g} %",
        f"{_median(s.userspace_s):.3f}",
        f"{_median(s.host_wall_s):.3f}",
        f"{_median(s.host_kernel_start_s):.3f}",
        _over(s, s.over_wall_s),
        _over(s, s.over_net_s, signed=True),
        _over(s, s.over_zero_s, signed=True),
        f"{_median(s.spawn_s):.3f} / {_median(s.qemu_start_s):.3f} / {_median(s.qemu_teardown_s):.3f}",
        f"{_median(s.other_cpus):.2f}",
    ]
    return "| " + " | ".join(cells) + " |"


def render(settings: Sequence[Setting], n: int, load_before: float, load_after: float, quick: bool) -> str:
    """Return the RESULTS.md section for ``settings`` (the first is -j 1, then -j 2, then icount)."""
    j1, j2, ic = settings
    shift = _median(j2.kernel_init_s) / _median(j1.kernel_init_s) - 1
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    command = "`.venv/bin/python -m bench.run_bench" + (" --quick`" if quick else "`")
    headers = (
        "setting", "ok", "boots/min", "kernel_init_s", "CV of kernel_init_s", "userspace_s", "host_wall_s",
        "host_kernel_start_s", "wall - userspace", "wall - userspace - kernel_start",
        "wall - userspace - clock zero", "spawn / QEMU start / teardown", "others' CPUs",
    )  # fmt: skip
    return (
        "## run\n\n"
        f"{command}, {when}: Debian cloud kernel 6.1, TCG, smp 1, 512 MiB, {n} measured boots per setting"
        " after one warm-up, the three settings one after the other in one invocation through the code of"
        " `bootscope run`. The machine (2 cores) is shared with other engineers' test runs: load average"
        f" (1 min) {load_before:.2f} before, {load_after:.2f} after; the last column is the median number"
        " of CPUs other processes kept busy while each boot ran, so the spreads are this shared host's,"
        " not a quiet machine's.\n\n"
        "| "
        + " | ".join(headers)
        + " |\n"
        + "|"
        + " --- |" * len(headers)
        + "\n"
        + "\n".join(_row(s) for s in settings)
        + "\n\nMedians in seconds. Spawn: boot_once called to QEMU started; QEMU start: to the firmware's"
        " first console line; teardown: marker line to QEMU killed and reaped. Clock zero: the host time"
        " at which the guest's printk clock read 0, bounded by min(arrival - printk time) over the lines."
        "\n\n"
        f"- Harness overhead per boot (-j 1): wall - userspace_s = {_median(j1.over_wall_s):.3f} s (target"
        " < 0.5 s). Most of it is firmware and decompression, which are the guest's boot, not the harness:"
        f" host_kernel_start_s is {_median(j1.host_kernel_start_s):.3f} s (and the guest's clock zero,"
        f" bounded from all lines, {_median(j1.clock_zero_s):.3f} s after QEMU starts)."
        " Without it the overhead is"
        f" {_median(j1.over_net_s):+.3f} s (without clock zero instead: {_median(j1.over_zero_s):+.3f} s):"
        " the marker's delay from guest to host, as small as the drift between the guest's and the"
        " host's clocks, which can make it negative. Measured around boot_once: spawn"
        f" {_median(j1.spawn_s):.3f} s, QEMU start to the firmware's first line"
        f" {_median(j1.qemu_start_s):.3f} s, teardown (marker to QEMU reaped)"
        f" {_median(j1.qemu_teardown_s):.3f} s; the rest of bootscope's"
        f" per-boot work (analysis, store write, load meter) {j1.harness_rest_s:.3f} s.\n"
        f"- Boots per minute: {j1.boots_per_min:.1f} with -j 1, {j2.boots_per_min:.1f} with -j 2"
        f" (x{j2.boots_per_min / j1.boots_per_min:.2f}); -j 2 moves the median kernel_init_s by"
        f" {100 * shift:+.1f} % ({_median(j1.kernel_init_s):.3f} -> {_median(j2.kernel_init_s):.3f} s), the"
        " price of parallel boots in accuracy.\n"
        f"- Spread: CV of kernel_init_s {100 * _cv(j1.kernel_init_s):.3g} % without and"
        f" {100 * _cv(ic.kernel_init_s):.3g} % with --icount {ICOUNT_SHIFT} (guest time then counts"
        " instructions, so its kernel_init_s is in virtual seconds and host load cannot move it), for"
        f" {ic.boots_per_min:.1f} instead of {j1.boots_per_min:.1f} boots per minute.\n"
    )


def main(argv: Sequence[str] = ()) -> list[Setting]:
    """Run the three settings, print the section, write it to RESULTS.md (unless --no-write) and
    return the measures."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="6 boots per setting instead of 24")
    parser.add_argument("-n", type=int, default=None, help="measured boots per setting (default 24)")
    parser.add_argument("--kernel", default="debian:cloud")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(list(argv))
    n = args.n or (6 if args.quick else 24)
    load_before = os.getloadavg()[0]
    settings: list[Setting] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, jobs, icount in SETTINGS:
            setting = run_setting(name, args.kernel, n, jobs, icount, Path(tmp) / f"{len(settings)}.db")
            settings.append(setting)
            print(_row(setting), flush=True)
    section = render(settings, n, load_before, os.getloadavg()[0], args.quick)
    print(section)
    if not args.no_write:
        write_section("run", section)
    return settings


if __name__ == "__main__":
    main(sys.argv[1:])

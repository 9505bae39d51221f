"""Phases stay ordered and never negative on every kernel series (issue 26, points 7 and 8).

Expected boundaries are read by hand from the logs; the line numbers are the file's (1-based).
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest

from bootscope.analyze.breakdown import analyze_boot
from bootscope.analyze.phases import Mark, build_phases
from bootscope.model import Breakdown, LogLine
from bootscope.parse import parse_log
from bootscope.sources.files import read_text_lines

DATA = Path(__file__).resolve().parents[1] / "data"
HW = DATA / "hw"
# Logs without a single kernel timestamp: no boot to split into phases.
UNTIMED = {"x86-piii-440bx-2.6.27-untimed.log", "x86-t61p-2.6.25-untimed.log"}


def _boots(path: Path) -> list[Breakdown]:
    return [analyze_boot(boot) for boot in parse_log(read_text_lines(str(path))).boots]


def _phase(b: Breakdown, name: str) -> tuple[float | None, float | None, float | None]:
    found = next(p for p in b.phases if p.name == name)
    return found.start_s, found.end_s, found.duration_s


def _assert_ordered(b: Breakdown) -> None:
    """Every timed phase is non-negative, ends where the next timed one starts or before, and the
    shares add up to at most the whole boot."""
    timed = [p for p in b.phases if p.duration_s is not None]
    for p in timed:
        assert p.start_s is not None and p.end_s is not None
        assert p.duration_s is not None and p.duration_s >= 0, p
        assert p.duration_s == pytest.approx(p.end_s - p.start_s)
    for before, after in pairwise(timed):
        assert before.end_s is not None and after.start_s is not None
        assert before.end_s <= after.start_s + 1e-9, (before, after)
    assert sum(p.share or 0.0 for p in timed) <= 1.0 + 1e-9


# Debian's 6.12.115 cloud kernel booted by bootscope (tests/data/debian-6.12-cloud-smp2.log):
#   line   3  [    0.000000] Linux version 6.12.115+deb12-cloud-amd64 ...
#   line  85  [    0.000000] SLUB: HWalign=64, Order=0-3, MinObjects=0, CPUs=2, Nodes=1
#   line 138  [    0.499199] smp: Bringing up secondary CPUs ...
#   line 143  [    0.726223] smp: Brought up 1 node, 2 CPUs
#   line 145  [    0.771650] node 0 deferred pages initialised in 8ms
#   line 146  [    0.789172] Memory: 463376K/523768K available (...)   <- after the CPUs, unlike 6.1
#   line 147  [    0.841052] devtmpfs: initialized
#   line 338  [    6.920117] Freeing unused kernel image (initmem) memory: 4020K
#   line 342  [    7.000311] Run /init as init process
#   line 343  BOOTSCOPE-MARKER init uptime=7.29
SERIES_612 = {
    "setup": (0.0, 0.0),
    "mm_init": (0.0, 0.499199),
    "smp_bringup": (0.499199, 0.726223),
    "post_smp": (0.726223, 0.841052),
    "initcalls": (0.841052, 6.920117),
    "free_init": (6.920117, 7.000311),
    "userspace": (7.000311, 7.29),
}
# Debian's 6.1.192 cloud kernel (tests/data/debian-6.1-cloud-smp2.log): line 3 Linux version at
# 0.000000, line 77 Memory: at 0.143513 (before the CPUs), 128 smp: Bringing up at 0.791428, 132 smp:
# Brought up at 0.927245, 136 devtmpfs at 1.014513, 345 the first Freeing unused kernel line at
# 3.176794, 350 Run /init at 3.194636, 351 BOOTSCOPE-MARKER uptime=3.28.
SERIES_61 = {
    "setup": (0.0, 0.143513),
    "mm_init": (0.143513, 0.791428),
    "smp_bringup": (0.791428, 0.927245),
    "post_smp": (0.927245, 1.014513),
    "initcalls": (1.014513, 3.176794),
    "free_init": (3.176794, 3.194636),
    "userspace": (3.194636, 3.28),
}


@pytest.mark.parametrize(
    ("name", "expected"),
    [("debian-6.12-cloud-smp2.log", SERIES_612), ("debian-6.1-cloud-smp2.log", SERIES_61)],
)
def test_phases_of_debian_cloud_kernels_by_hand(name: str, expected: dict[str, tuple[float, float]]) -> None:
    (b,) = _boots(DATA / name)
    _assert_ordered(b)
    for phase, (start_s, end_s) in expected.items():
        start, end, duration = _phase(b, phase)
        assert (start, end) == (pytest.approx(start_s), pytest.approx(end_s)), phase
        assert duration == pytest.approx(end_s - start_s), phase


def test_6_12_says_why_setup_ends_at_the_slub_line() -> None:
    (b,) = _boots(DATA / "debian-6.12-cloud-smp2.log")
    (note,) = [w for w in b.warnings if "Memory:" in w]
    assert "0.789 s" in note and "SLUB: HWalign=" in note and "smp: Bringing up secondary CPUs" in note
    assert b.milestones["memory_available"] == pytest.approx(0.789172)  # the line is still a milestone
    assert b.milestones["slab_ready"] == pytest.approx(0.0)
    assert b.metrics.kernel_init_s == pytest.approx(7.000311)


def test_6_1_keeps_its_memory_line_and_has_no_note() -> None:
    (b,) = _boots(DATA / "debian-6.1-cloud-smp2.log")
    assert not [w for w in b.warnings if "Memory:" in w or "Run /init" in w]
    assert "slab_ready" not in b.milestones and "free_init_last" not in b.milestones


def test_riscv64_6_12_memory_line_after_the_cpus_even_at_equal_stamps() -> None:
    # dmesg -T stamps to the second: lines 61 (SLUB), 103/104 (smp), 105 (Memory:) all read 10:17:44.
    # The order of the lines still tells that 6.12's Memory: line comes after the CPUs.
    (b,) = _boots(HW / "riscv64-spacemit-k3-6.12-dmesg-T.log")
    _assert_ordered(b)
    assert any("Memory:" in w and "SLUB: HWalign=" in w for w in b.warnings)
    assert "slab_ready" in b.milestones


# every timed real log: the hardware corpus and the Debian cloud kernels' consoles (6.1, 6.12)
ORDER_LOGS = [p for p in sorted(HW.glob("*.log")) if p.name not in UNTIMED] + sorted(
    DATA.glob("debian-6.1*.log")
)


@pytest.mark.parametrize("path", ORDER_LOGS, ids=lambda p: p.name)
def test_phases_are_ordered_and_never_negative(path: Path) -> None:
    boots = _boots(path)
    assert boots
    for b in boots:
        _assert_ordered(b)


# Kernels before "Run /init as init process" existed: the last "Freeing unused kernel" line ends kernel
# init. (file, its first Freeing line, its last one, the last one's line number)
OLD_KERNELS = [
    ("x86-alienware-m11x-3.16-dmesg.log", 1.012920, 1.018065, 544),
    ("x86-msi-ms7721-4.4-dmesg.log", 0.938481, 0.939236, 515),
    ("x86-surface-book-4.4-dmesg.log", 7.890696, 7.891765, 691),
]


@pytest.mark.parametrize(("name", "first_s", "last_s", "line"), OLD_KERNELS)
def test_old_kernels_end_kernel_init_at_the_last_freeing_line(
    name: str, first_s: float, last_s: float, line: int
) -> None:
    text = (HW / name).read_text(encoding="utf-8", errors="replace").splitlines()
    assert "Freeing unused kernel memory" in text[line - 1]
    assert not any("as init process" in row for row in text)
    (b,) = _boots(HW / name)
    assert b.metrics.kernel_init_s == pytest.approx(last_s)
    assert _phase(b, "free_init")[:2] == (pytest.approx(first_s), pytest.approx(last_s))
    assert b.milestones["free_init_last"] == pytest.approx(last_s)
    (note,) = [w for w in b.warnings if "Run /init" in w]
    assert "Freeing unused kernel" in note and f"{last_s:.3f} s" in note
    _assert_ordered(b)


def test_run_init_wins_over_the_freeing_lines() -> None:
    (b,) = _boots(DATA / "debian-6.1-cloud-smp2.log")
    assert b.metrics.kernel_init_s == pytest.approx(3.194636)  # line 350, not 348's last Freeing line


def _line(t: float | None, text: str) -> LogLine:
    return LogLine(text, t)


def test_a_boundary_out_of_order_is_left_out_with_a_note() -> None:
    # devtmpfs printed before the CPUs came up (an order no kernel series prints, made here by hand)
    lines = [
        _line(0.0, "Linux version 6.1.0-56-cloud-amd64 (x)"),
        _line(0.10, "Memory: 260860K/523768K available (x)"),
        _line(0.20, "devtmpfs: initialized"),
        _line(0.30, "smp: Bringing up secondary CPUs ..."),
        _line(0.40, "smp: Brought up 1 node, 2 CPUs"),
        _line(1.00, "Freeing unused kernel image (initmem) memory: 2612K"),
        _line(1.10, "Run /init as init process"),
    ]
    b = analyze_boot(lines)
    _assert_ordered(b)
    assert _phase(b, "mm_init") == (pytest.approx(0.10), pytest.approx(0.30), pytest.approx(0.20))
    assert _phase(b, "smp_bringup") == (pytest.approx(0.30), pytest.approx(0.40), pytest.approx(0.10))
    for name in ("post_smp", "initcalls"):
        missing = next(p for p in b.phases if p.name == name)
        assert missing.duration_s is None
        assert missing.missing is not None and "devtmpfs: initialized" in missing.missing
        assert "out of boot order" in missing.missing
    assert any("devtmpfs" in w and "post_smp and initcalls not timed" in w for w in b.warnings)


def test_two_swapped_boundaries_are_both_left_out() -> None:
    # smp_start and smp_done swapped in time: nothing says which one moved
    marks = {
        "first_line": Mark(0.0, 0),
        "memory_available": Mark(0.1, 1),
        "smp_start": Mark(0.5, 2),
        "smp_done": Mark(0.4, 3),
        "devtmpfs": Mark(0.6, 4),
    }
    table = build_phases(marks, 0.6)
    assert "smp_start" not in table.chosen and "smp_done" not in table.chosen
    durations = {p.name: p.duration_s for p in table.phases}
    assert durations["setup"] == pytest.approx(0.1)
    assert durations["mm_init"] is None and durations["smp_bringup"] is None and durations["post_smp"] is None


def _marker_boot(uptime: str) -> Breakdown:
    # run 1 boot 13 of tests/data/golden/demo-6.1-cloud.db: "[    1.700341] Run /init as init process",
    # then the initramfs's "BOOTSCOPE-MARKER uptime=1.70" (/proc/uptime truncated to centiseconds)
    lines = [
        _line(0.0, "Linux version 6.1.0-56-cloud-amd64 (x)"),
        _line(1.690277, "Freeing unused kernel image (initmem) memory: 2612K"),
        _line(1.700341, "Run /init as init process"),
        _line(None, f"BOOTSCOPE-MARKER uptime={uptime}"),
    ]
    return analyze_boot(lines)


def test_a_marker_within_its_centisecond_of_run_init_is_not_out_of_order() -> None:
    b = _marker_boot("1.70")
    assert _phase(b, "userspace") == (pytest.approx(1.700341), pytest.approx(1.70), 0.0)  # was -0.000341
    assert _phase(b, "free_init")[2] == pytest.approx(1.700341 - 1.690277)
    assert not [w for w in b.warnings if "out of boot order" in w]


def test_a_marker_more_than_its_resolution_before_run_init_is_out_of_order() -> None:
    # 1.68 + 0.01 is before both Freeing (1.690277) and Run /init (1.700341): the marker moved
    b = _marker_boot("1.68")
    assert _phase(b, "userspace")[2] is None
    assert _phase(b, "free_init")[2] == pytest.approx(1.700341 - 1.690277)
    (note,) = [w for w in b.warnings if "out of boot order" in w]
    assert "BOOTSCOPE-MARKER" in note and "userspace not timed" in note

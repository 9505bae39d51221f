"""Early cycle-counter stamps (Tim Bird's printk series, 2025-2026): lines before timekeeping are
stamped on a counter from about power-on, then the clock jumps back once when timekeeping starts.

The real lines (Michael Kelley's Hyper-V guest, tests/data/bootloader) show the counter's stamps
but not the jump, which the public mail does not quote. The jump is built here from a real boot
(tests/data/debian-6.1-cloud-smp2.log): its lines printed at clock zero, the blind spot, get the
stamps the patch would give them (counter stamps from 27.994891 s, 13 us apart). Every expectation
is computed from the files by this test's own reading, not by bootscope."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bootscope.analyze.breakdown import analyze_boot, analyze_columns
from bootscope.analyze.components import line_gaps
from bootscope.parse import iter_boots, scan_boots
from bootscope.report.json_out import breakdown_to_dict

DATA = Path(__file__).parents[1] / "data"
_STAMP = re.compile(r"\[\s*(\d+\.\d+)\] ")
COUNTER_START_S = 27.994891
STEP_S = 0.000013


def _with_counter(text: str, restart_at_zero: bool = False) -> tuple[str, list[float]]:
    """The log with its clock-zero lines stamped on an early counter; and those stamps. With
    ``restart_at_zero`` the first line after them is stamped 0.000000 (timekeeping's first stamp)."""
    out: list[str] = []
    stamps: list[float] = []
    restarted = False
    for line in text.split("\n"):
        found = _STAMP.search(line)
        if found is not None and float(found[1]) == 0.0:
            stamp = COUNTER_START_S + len(stamps) * STEP_S
            stamps.append(round(stamp, 6))
            line = f"{line[: found.start()]}[{stamp:12.6f}] {line[found.end() :]}"
        elif found is not None and stamps and restart_at_zero and not restarted:
            line = f"{line[: found.start()]}[    0.000000] {line[found.end() :]}"
            restarted = True
        out.append(line)
    return "\n".join(out), stamps


def _both_paths(text: str) -> tuple[list[object], list[str]]:
    """The Breakdowns of ``text`` by the line path and by the block scan, asserted equal."""
    slow_stream = iter_boots(text.split("\n"))
    slow = [analyze_boot(boot) for boot in slow_stream]
    fast_stream = scan_boots([text], line_path_chars=0)
    fast = [analyze_columns(columns) for columns in fast_stream]
    assert [breakdown_to_dict(b) for b in fast] == [breakdown_to_dict(b) for b in slow]
    assert fast_stream.warnings == slow_stream.warnings
    return slow, slow_stream.warnings  # type: ignore[return-value]


def test_the_real_early_stamps_are_read_as_they_are() -> None:
    text = (DATA / "bootloader" / "early-counter-hyperv-excerpt.log").read_text()
    (boot,) = list(iter_boots(text.splitlines()))
    breakdown = analyze_boot(boot)
    assert (breakdown.timed_line_count, breakdown.first_s, breakdown.last_s) == (7, 27.994891, 27.995209)
    assert breakdown.early_counter is None  # no banner first and no jump: nothing to say


@pytest.mark.parametrize("restart_at_zero", [False, True])
def test_a_boot_with_early_counter_stamps_analyses_as_without_them(restart_at_zero: bool) -> None:
    original = (DATA / "debian-6.1-cloud-smp2.log").read_text()
    text, stamps = _with_counter(original, restart_at_zero)
    assert len(stamps) == 15  # the blind spot of this boot: its lines at 0.000000
    if restart_at_zero:
        original, _ = _with_counter(original, restart_at_zero=True)
        original = _STAMP.sub(lambda m: m[0] if float(m[1]) < 27 else "[    0.000000] ", original)
    (plain,), plain_warnings = _both_paths(original)
    (early,), warnings = _both_paths(text)
    assert warnings == plain_warnings  # the jump back is not a step back
    found = early.early_counter  # type: ignore[attr-defined]
    assert found is not None
    assert (found.lines, found.kernel_start_s, found.last_s) == (15, stamps[0], stamps[-1])
    assert early.metrics.early_kernel_start_s == stamps[0]  # type: ignore[attr-defined]
    assert early.metrics.before_timekeeping_s == pytest.approx(stamps[-1] - stamps[0])  # type: ignore[attr-defined]
    as_plain = breakdown_to_dict(early)  # type: ignore[arg-type]
    as_plain["early_counter"] = None
    for name in ("early_kernel_start_s", "before_timekeeping_s"):
        as_plain["metrics"][name] = None
    assert as_plain == breakdown_to_dict(plain)  # type: ignore[arg-type]


def test_gaps_per_line_are_on_the_kernels_clock() -> None:
    original = (DATA / "debian-6.1-cloud-smp2.log").read_text()
    text, _ = _with_counter(original)
    (plain,) = list(iter_boots(original.split("\n")))
    (early,) = list(iter_boots(text.split("\n")))
    assert line_gaps(early) == pytest.approx(line_gaps(plain))


def test_two_such_boots_are_two_boots_and_a_reboot_still_splits() -> None:
    text, _ = _with_counter((DATA / "debian-6.1-cloud-smp2.log").read_text())
    boots, _ = _both_paths(text + "\n" + text)
    assert len(boots) == 2 and all(b.early_counter is not None for b in boots)  # type: ignore[attr-defined]
    # A log that starts mid-boot (no banner) and falls to zero is still two boots, as before.
    lines = [
        "[    5.000000] late line",
        "[    6.000000] later line",
        "[    0.000000] next boot",
        "[    0.1] x",
    ]
    assert len(list(iter_boots(lines))) == 2
    assert len(list(scan_boots(["\n".join(lines)], line_path_chars=0))) == 2

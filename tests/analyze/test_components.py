"""A boot's components from real 6.1 cloud logs with initcall_debug (tests/data): phases that add up
to kernel_init_s, initcalls by name, CPU bring-up per CPU, every line's silence."""

from __future__ import annotations

from pathlib import Path

import pytest

from bootscope.analyze import analyze_boot
from bootscope.analyze.components import (
    CPU,
    GAP,
    INITCALL,
    PHASE,
    boot_components,
    gap_name,
    line_gaps,
    top_gap_names,
)
from bootscope.model import Breakdown, LogLine
from bootscope.parse import parse_log
from bootscope.sources.files import read_text_lines


def _boot(data_dir: Path, name: str) -> tuple[list[LogLine], Breakdown]:
    (lines,) = parse_log(read_text_lines(str(data_dir / name))).boots
    return list(lines), analyze_boot(lines, top_n=20)


def test_phases_add_up_to_kernel_init_s(data_dir: Path) -> None:
    lines, breakdown = _boot(data_dir, "debian-6.1-cloud-initcall-smp4.log")
    parts = boot_components(breakdown, kernel_only=True, lines=lines)
    phases = {name: v for (kind, name), v in parts.items() if kind == PHASE}
    assert set(phases) == {"setup", "mm_init", "smp_bringup", "post_smp", "initcalls", "free_init"}
    assert breakdown.first_s is not None and breakdown.metrics.kernel_init_s is not None
    kernel_s = breakdown.metrics.kernel_init_s - breakdown.first_s
    assert sum(phases.values()) == pytest.approx(kernel_s, abs=1e-9)
    with_userspace = boot_components(breakdown)
    assert (PHASE, "userspace") in with_userspace


def test_initcalls_cpus_and_gaps(data_dir: Path) -> None:
    lines, breakdown = _boot(data_dir, "debian-6.1-cloud-initcall-smp4.log")
    parts = boot_components(breakdown, lines=lines)
    # "initcall crypto_algapi_init+0x0/0x7e returned 0 after 522082 usecs" in the log.
    assert parts[(INITCALL, "crypto_algapi_init")] == pytest.approx(0.522082)
    # Names called twice in one boot (xenbus_init: a late and an early initcall) are summed.
    twice = [c for c in breakdown.initcalls.all if c.name == "xenbus_init"]
    assert len(twice) == 2
    assert parts[(INITCALL, "xenbus_init")] == pytest.approx(sum(c.duration_us or 0 for c in twice) / 1e6)
    assert {name for kind, name in parts if kind == CPU} == {"cpu1", "cpu2", "cpu3"}
    # The largest gap of the breakdown is the silence after its line, measured line by line too.
    largest = breakdown.gaps[0]
    assert parts[(GAP, gap_name(largest.before))] == pytest.approx(largest.duration_s)
    assert gap_name(largest.before) in top_gap_names(breakdown)
    # Every silence is counted once: they add up to the span from the first line to the last.
    gaps = line_gaps(lines)
    assert breakdown.last_s is not None
    assert sum(gaps.values()) == pytest.approx(breakdown.last_s - breakdown.first_s)


def test_one_cpu_has_no_bringup_components(data_dir: Path) -> None:
    lines, breakdown = _boot(data_dir, "debian-6.1-cloud-initcall-smp1.log")
    parts = boot_components(breakdown, lines=lines)
    assert not [name for kind, name in parts if kind == CPU]
    assert len([name for kind, name in parts if kind == INITCALL]) > 500


def test_gap_names_mask_numbers_and_survive_hostile_text() -> None:
    assert gap_name("calling  crypto_algapi_init+0x0/0x7e @ 1") == "calling crypto_algapi_init+#/# @ #"
    assert gap_name("Freeing unused kernel image (initmem) memory: 2744K") == (
        "Freeing unused kernel image (initmem) memory: #K"
    )
    lines = [LogLine("\x00\xff" * 50_000, 0.0), LogLine("x", 1.0), LogLine("back", 0.5), LogLine("y", 2.0)]
    # A stamp that steps back neither hides nor invents a silence.
    assert line_gaps(lines) == {gap_name("\x00\xff" * 50_000): 1.0, "x": 1.0}


def test_units_of_a_full_userspace_boot(data_dir: Path) -> None:
    """systemd's collector block (bootscope image, systemd 252): each unit's activating-to-active time."""
    from bootscope.analyze.components import UNIT
    from bootscope.analyze.systemd import systemd_accounting

    text = (data_dir / "systemd-252-collector-tcg.txt").read_text(encoding="utf-8")
    accounting = systemd_accounting([LogLine(line) for line in text.splitlines()])
    assert accounting is not None
    _lines, breakdown = _boot(data_dir, "debian-6.1-cloud-initcall-smp1.log")
    parts = boot_components(breakdown, accounting.units, kinds=(UNIT,))
    timed = {u.unit: u.activation_s for u in accounting.units if u.activation_s is not None}
    assert len(timed) > 10 and {name for _, name in parts} == set(timed)
    assert all(parts[(UNIT, name)] == seconds for name, seconds in timed.items())

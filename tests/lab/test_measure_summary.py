"""Measuring one captured boot (a real console log) and summarizing stored boots, without booting."""

from __future__ import annotations

import re
import statistics
from pathlib import Path

import numpy as np
import pytest

from bootscope.analyze.captured import measure
from bootscope.lab.plans.boot import VariantSpec
from bootscope.model import Boot, LogLine
from bootscope.stats.compare import Options
from bootscope.store import BootRecord
from bootscope.usecases.summary import compare_variants, failed_boots, summarize

START_NS = 50_000_000_000


def _captured(path: Path) -> list[LogLine]:
    """The log as boot_once would capture it: one line per newline, 1 ms of host time apart."""
    raw = path.read_bytes().decode("utf-8", errors="replace").split("\n")
    return [LogLine(text=t.rstrip("\r"), host_ns=START_NS + 1_000_000 * (i + 1)) for i, t in enumerate(raw)]


def _expected(lines: list[LogLine]) -> tuple[float, float, int]:
    run_init = next(line for line in lines if "Run /init as init process" in line.text)
    marker_index = next(i for i, line in enumerate(lines) if "BOOTSCOPE-MARKER" in line.text)
    init_s = float(re.search(r"\[\s*(\d+\.\d+)\]", run_init.text).group(1))  # type: ignore[union-attr]
    uptime_s = float(re.search(r"uptime=(\d+\.\d+)", lines[marker_index].text).group(1))  # type: ignore[union-attr]
    return init_s, uptime_s, marker_index


def test_measure_reads_the_guests_own_times(data_dir: Path) -> None:
    lines = _captured(data_dir / "debian-6.1-cloud-smp2.log")
    init_s, uptime_s, marker_index = _expected(lines)
    boot = Boot(lines=tuple(lines), host_start_ns=START_NS)
    metrics, release, note = measure(boot, VariantSpec(name="a", kernel="k").marker, "hint")
    assert note == ""
    assert metrics["kernel_init_s"] == init_s == 3.194636
    assert metrics["userspace_s"] == uptime_s == 3.28
    # host_wall_s: QEMU start to the marker's arrival, in this synthetic capture (index+1) ms.
    assert metrics["host_wall_s"] == (marker_index + 1) / 1000
    assert release == "6.1.0-56-cloud-amd64"


def test_marker_after_firmware_escapes_and_no_kernel_lines(data_dir: Path) -> None:
    # With `quiet` the console shows only firmware output, and its terminal reset can share the
    # marker's line (seen in a real run here). The guest's uptime must still be read.
    lines = [
        LogLine(
            text="\x1bc\x1b[?7l\x1b[2J\x1b[0mSeaBIOS (version 1.16.2-debian-1.16.2-1)", host_ns=START_NS + 10
        ),
        LogLine(text="Booting from ROM...", host_ns=START_NS + 20),
        LogLine(
            text="\x1bc\x1b[?7l\x1b[2JBOOTSCOPE-MARKER init uptime=5.62", host_ns=START_NS + 4_000_000_000
        ),
    ]
    metrics, release, note = measure(
        Boot(lines=tuple(lines), host_start_ns=START_NS), VariantSpec("q", "k").marker, "r"
    )
    assert metrics["userspace_s"] == 5.62
    assert metrics["kernel_init_s"] is None
    assert metrics["host_wall_s"] == 4.0
    assert release == "r"
    assert "kernel_init_s" in note


def test_measure_of_an_empty_boot_is_not_an_error() -> None:
    empty = Boot(lines=(), host_start_ns=START_NS)
    metrics, release, _note = measure(empty, VariantSpec("a", "k").marker, None)
    assert release is None
    assert all(value is None for value in metrics.values())


def test_summary_counts_and_spreads() -> None:
    boots = [
        BootRecord("a", 1, True, "ok", metrics={"kernel_init_s": 9.0}),
        BootRecord("b", 2, True, "timeout"),
        BootRecord("a", 3, False, "ok", metrics={"kernel_init_s": 1.0, "userspace_s": 2.0}),
        BootRecord("b", 4, False, "panic", reason="Kernel panic - not syncing"),
        BootRecord("a", 5, False, "ok", disturbed=True, superseded=True, metrics={"kernel_init_s": 50.0}),
        BootRecord("a", 5, False, "ok", attempt=1, metrics={"kernel_init_s": 3.0, "userspace_s": 4.0}),
        BootRecord("a", 6, False, "ok", disturbed=True, metrics={"kernel_init_s": 2.5}),
    ]
    a, b = summarize(boots, ["a", "b"])
    assert (a.ok, a.failed, a.warmup, a.disturbed) == (3, 0, 1, 2)
    assert (b.ok, b.failed, b.warmup, b.disturbed) == (0, 1, 1, 0)
    spread = a.metrics["kernel_init_s"]
    assert (spread.n, spread.median, spread.min, spread.max) == (
        3,
        statistics.median([1.0, 3.0, 2.5]),
        1.0,
        3.0,
    )
    assert a.metrics["userspace_s"].median == 3.0
    assert b.metrics["kernel_init_s"].median is None
    assert [(f.index, f.outcome) for f in failed_boots(boots)] == [(2, "timeout"), (4, "panic")]


def test_marker_after_a_midline_terminal_reset() -> None:
    # Seen in a real `--append quiet` run here: SeaBIOS's "Booting from ROM.." then its terminal reset
    # and clear, then the marker, all on one console line.
    lines = [
        LogLine(
            text="Booting from ROM..\x1bc\x1b[?7l\x1b[2JBOOTSCOPE-MARKER init uptime=1.88",
            host_ns=START_NS + 3,
        )
    ]
    metrics, _release, note = measure(
        Boot(lines=tuple(lines), host_start_ns=START_NS), VariantSpec("q", "k").marker, None
    )
    assert metrics["userspace_s"] == 1.88 and metrics["host_wall_s"] == 3e-9
    assert "kernel_init_s" in note


def test_end_of_run_comparison_picks_variants_with_two_samples() -> None:
    rng = np.random.default_rng(3)
    a, b = list(2.0 + rng.normal(0, 0.05, 8)), list(2.2 + rng.normal(0, 0.05, 7))
    samples = {
        "kernel_init_s": {"a": a, "b": b, "c": [2.0]},
        "userspace_s": {"a": [2.5], "b": b, "c": b},
    }
    comparisons, notes = compare_variants(
        samples, ["a", "b", "c"], Options(bootstrap_resamples=0, power=False)
    )
    (group,) = comparisons  # userspace_s: the baseline has one value, nothing to compare with
    (only_b,) = group  # c has a single kernel_init_s value
    assert (only_b.metric, only_b.a.name, only_b.b.name) == ("kernel_init_s", "a", "b")
    # Hodges-Lehmann shift by hand: the median of all pairwise differences b - a.
    assert only_b.shift_estimate == pytest.approx(float(np.median(np.subtract.outer(b, a))))
    assert only_b.verdict == "slower"
    assert notes == [
        "kernel_init_s: c has 1 value(s); not compared",
        "userspace_s: baseline a has 1 value(s); not compared",
    ]
    assert compare_variants(samples, ["a"]) == ([], [])

"""What moved before the kernel: ``diff`` per U-Boot stage. Both sides are the real capture of
Debian's U-Boot then Debian's kernel (tests/data/bootloader); on side b this test makes U-Boot's
``usb_start`` stage 0.5 s longer (its mark and every later mark move by as much), and every boot of
either side gets a few microseconds of jitter of its own in that stage, so that the sides are
samples. The expected shift is the one written here, not read back from bootscope."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bootscope.analyze.components import BOOTLOADER
from bootscope.usecases.diff import diff

DATA = Path(__file__).parents[1] / "data" / "bootloader"
SHIFT_US = 500_000
_ROW = re.compile(r"^(\s*)([\d,]+)(\s+)([\d,]+)(  )(\S.*?)(\r?)$", re.M)


def _side(folder: Path, shift_us: int, boots: int) -> Path:
    folder.mkdir()
    text = (DATA / "uboot-2023.01-qemu-x86-then-6.1-cloud.log").read_text(encoding="utf-8", errors="replace")
    for number in range(boots):
        jitter_us = 3 * number + (1 if shift_us else 0)
        moved = {
            "usb_start": (shift_us + jitter_us, shift_us + jitter_us),
            "start_kernel": (shift_us + jitter_us, 0),
        }

        def bump(row: re.Match[str], moved: dict[str, tuple[int, int]] = moved) -> str:
            mark_us, elapsed_us = (int(row[i].replace(",", "")) for i in (2, 4))
            extra_mark, extra_elapsed = moved.get(row[6], (0, 0))
            return f"{mark_us + extra_mark:>11,}{elapsed_us + extra_elapsed:>11,}  {row[6]}{row[7]}"

        (folder / f"boot{number}.log").write_text(_ROW.sub(bump, text), encoding="utf-8")
    return folder


def test_a_slower_boot_loader_stage_is_named_with_its_shift(tmp_path: Path) -> None:
    a, b = _side(tmp_path / "a", 0, 6), _side(tmp_path / "b", SHIFT_US, 6)
    result = diff(None, [a], [b], db="", metric="bootloader_handoff_s", by=(), top=20,
                  baseline=None, variant=None, alpha=0.05, fdr=0.05, warn=lambda _line: None)  # fmt: skip
    assert result.kinds == (BOOTLOADER,)
    moved = [c for c in result.attribution.components if c.moved]
    assert [(c.kind, c.name) for c in moved] == [(BOOTLOADER, "usb_start")]
    assert moved[0].shift_s == pytest.approx(SHIFT_US / 1e6, abs=20e-6)
    low, high = moved[0].shift_ci_s or (None, None)
    assert low is not None and high is not None and low <= SHIFT_US / 1e6 <= high
    assert high - low < 50e-6  # the jitter's width, not more
    total = result.attribution.total
    assert total.verdict == "slower" and total.shift_estimate == pytest.approx(SHIFT_US / 1e6, abs=20e-6)


def test_a_kernel_metric_has_no_boot_loader_stage_in_it(tmp_path: Path) -> None:
    a, b = _side(tmp_path / "a", 0, 3), _side(tmp_path / "b", SHIFT_US, 3)
    result = diff(None, [a], [b], db="", metric="kernel_init_s", by=(), top=20,
                  baseline=None, variant=None, alpha=0.05, fdr=0.05, warn=lambda _line: None)  # fmt: skip
    assert BOOTLOADER not in result.kinds
    assert all(c.kind != BOOTLOADER for c in (*result.attribution.components, *result.attribution.too_few))

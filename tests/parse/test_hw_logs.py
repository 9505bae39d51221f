"""Real-hardware logs of every architecture family: boots, release and milestones (tests/data/hw)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bootscope.analyze.breakdown import analyze_columns
from bootscope.parse import parse_log, scan_boots
from bootscope.parse.chunked import BLOCK_BYTES
from bootscope.sources.files import read_text_lines

HW = Path(__file__).resolve().parents[1] / "data" / "hw"

# (file, boots, release of the last boot, cmdline start, milestones that must be found)
CASES = [
    ("arm32-ast2400-bmc-3.14-uboot.log", 1, "3.14.17-ami", "root=/dev/mtdblock3", ("free_init",)),
    ("arm64-imx8mp-dart-6.6-uboot.log", 1, "6.6.144-le", "clk-imx8mp.mcore_booted", ()),
]


@pytest.mark.parametrize(("name", "boots", "release", "cmdline", "milestones"), CASES)
def test_hw_log_boots_release_and_milestones(
    name: str, boots: int, release: str, cmdline: str, milestones: tuple[str, ...]
) -> None:
    path = str(HW / name)
    # the per-line parser and the block scan agree on the boots
    assert len(parse_log(read_text_lines(path)).boots) == boots
    stream = scan_boots(read_text_lines(path).blocks(BLOCK_BYTES))
    found = [analyze_columns(columns) for columns in stream]
    assert len(found) == boots == stream.boot_count
    last = found[-1]
    assert last.identity.release == release
    assert (last.identity.cmdline or "").startswith(cmdline)
    for milestone in milestones:
        assert milestone in last.milestones


def test_arm_cpu_line_before_the_banner_is_not_a_boot() -> None:
    # arm64 smp_setup_processor_id() prints this at 0.000000 before the banner: one boot, not two,
    # also after an earlier boot of the same log
    text = (HW / "arm64-imx8mp-dart-6.6-uboot.log").read_text()
    doubled = (text + text).splitlines()
    parsed = parse_log(doubled)
    assert len(parsed.boots) == 2
    assert all(any(line.text.startswith("Linux version 6.6.144") for line in boot) for boot in parsed.boots)
    assert parsed.boots[1][0].text.startswith("Booting Linux on physical CPU")

"""Real-hardware logs of every architecture family: boots, release and milestones (tests/data/hw)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bootscope.analyze.breakdown import analyze_columns
from bootscope.parse import parse_log, scan_boots
from bootscope.sources.files import BLOCK_BYTES, read_text_lines

HW = Path(__file__).resolve().parents[1] / "data" / "hw"

# (file, boots, release of the last boot, cmdline start, milestones that must be found, CPUs printed)
CASES = [
    ("arm32-ast2400-bmc-3.14-uboot.log", 1, "3.14.17-ami", "root=/dev/mtdblock3", ("free_init",), None),
    ("arm64-imx8mp-dart-6.6-uboot.log", 1, "6.6.144-le", "clk-imx8mp.mcore_booted", ("smp_done",), 4),
    (
        "arm64-xgene-mustang-4.19-dmesg.log",
        1,
        "4.19.0-323-arm64",
        "BOOT_IMAGE=/vmlinuz-4.19.0-323-arm64 root=UUID=",
        ("smp_start", "smp_done", "devtmpfs", "free_init", "run_init"),
        8,
    ),
    (
        "x86-epyc7262-romed8-6.3-dmesg.log",
        1,
        "6.3.0-2.el9.elrepo.x86_64",
        "BOOT_IMAGE=(hd6,gpt2)/vmlinuz-6.3.0-2.el9.elrepo.x86_64 root=",
        ("smp_start", "smp_done", "deferred_pages_done", "devtmpfs"),
        16,
    ),
]


@pytest.mark.parametrize(("name", "boots", "release", "cmdline", "milestones", "cpus"), CASES)
def test_hw_log_boots_release_and_milestones(
    name: str, boots: int, release: str, cmdline: str, milestones: tuple[str, ...], cpus: int | None
) -> None:
    path = str(HW / name)
    # the per-line parser and the block scan agree on the boots
    assert len(parse_log(read_text_lines(path)).boots) == boots
    stream = scan_boots(read_text_lines(path).blocks(BLOCK_BYTES), line_path_chars=0)
    found = [analyze_columns(columns) for columns in stream]
    assert len(found) == boots == stream.boot_count
    last = found[-1]
    assert last.identity.release == release
    assert (last.identity.cmdline or "").startswith(cmdline)
    for milestone in milestones:
        assert milestone in last.milestones
    assert last.identity.cpus == cpus


def test_arm64_server_run_init_time() -> None:
    # X-Gene Mustang: "Run /init as init process" at 1.522958, after the initramfs unpack (0.51 s)
    found = analyze_columns(
        next(
            iter(
                scan_boots(
                    read_text_lines(str(HW / "arm64-xgene-mustang-4.19-dmesg.log")).blocks(BLOCK_BYTES),
                    line_path_chars=0,
                )
            )
        )
    )
    assert found.milestones["run_init"] == pytest.approx(1.522958)
    assert found.milestones["smp_done"] - found.milestones["smp_start"] == pytest.approx(0.001458)


def test_x86_server_cpu_bring_up_across_an_interrupted_progress_line() -> None:
    # "#9 ... #15" continues the ".... node  #0, CPUs:" line after a Spectre message cut it
    found = analyze_columns(
        next(
            iter(
                scan_boots(
                    read_text_lines(str(HW / "x86-epyc7262-romed8-6.3-dmesg.log")).blocks(BLOCK_BYTES),
                    line_path_chars=0,
                )
            )
        )
    )
    assert found.identity.cpus == 16
    assert found.milestones["smp_done"] - found.milestones["smp_start"] == pytest.approx(0.02308)


def test_arm_cpu_line_before_the_banner_is_not_a_boot() -> None:
    # arm64 smp_setup_processor_id() prints this at 0.000000 before the banner: one boot, not two,
    # also after an earlier boot of the same log
    text = (HW / "arm64-imx8mp-dart-6.6-uboot.log").read_text()
    doubled = (text + text).splitlines()
    parsed = parse_log(doubled)
    assert len(parsed.boots) == 2
    assert all(any(line.text.startswith("Linux version 6.6.144") for line in boot) for boot in parsed.boots)
    assert parsed.boots[1][0].text.startswith("Booting Linux on physical CPU")

"""Splitting a log into boots; backward steps inside a boot are flagged, not split on."""

from __future__ import annotations

from pathlib import Path

from bootscope.parse import iter_boots, parse_log, scan_boots
from bootscope.sources.files import read_text_lines


def test_concatenated_console_captures_are_two_boots(data_dir: Path) -> None:
    parsed = parse_log(read_text_lines(str(data_dir / "multiboot-6.1-cloud-smp2-then-smp1.log")))
    assert len(parsed.boots) == 2
    one = parse_log(read_text_lines(str(data_dir / "debian-6.1-cloud-initcall-smp1.log"))).boots[0]
    # the second boot starts at its banner; the first boot keeps the console junk before it
    second = parsed.boots[1]
    assert second[0].text.startswith("Linux version ")
    assert [line.text for line in second] == [line.text for line in one][-len(second) :]


def test_secondary_cpu_clock_steps_back_without_a_split(data_dir: Path) -> None:
    # -smp 4 under TCG: APs print "calibrate_delay_direct() failed" at 0.046 s after 0.94 s
    parsed = parse_log(read_text_lines(str(data_dir / "debian-6.1-cloud-initcall-smp4.log")))
    assert len(parsed.boots) == 1
    assert any("backwards" in warning and "0.046130" in warning for warning in parsed.warnings)


def test_stream_yields_boots_one_at_a_time(data_dir: Path) -> None:
    stream = iter_boots(read_text_lines(str(data_dir / "multiboot-6.1-cloud-smp2-then-smp1.log")))
    iterator = iter(stream)
    first = next(iterator)
    assert stream.boot_count == 1 and stream.format == "dmesg"
    assert any(line.text.startswith("BOOTSCOPE-MARKER") for line in first)
    assert len(list(iterator)) == 1 and stream.boot_count == 2


def test_time_reset_to_zero_without_banner_splits() -> None:
    lines = ["[    0.000000] a", "[    2.500000] b", "[    0.000000] c", "[    0.100000] d"]
    assert [len(boot) for boot in parse_log(lines).boots] == [2, 2]


def test_kmsg_sequence_restart_splits() -> None:
    lines = ["6,0,0,-;a", "6,1,5000,-;b", "6,0,0,-;c"]
    parsed = parse_log(lines)
    assert parsed.format == "kmsg" and [len(b) for b in parsed.boots] == [2, 1]


def test_pre_clock_stamps_of_old_kernels_are_clock_zero_not_a_boot() -> None:
    # 2.6-era i386 at HZ=250: lines before the clock is set carry jiffies at INITIAL_JIFFIES.
    # The shape of an Ubuntu 6.06 dmesg, written here (no verbatim capture of one was found).
    lines = [
        "[17179569.184000] Linux version 2.6.15-26-386 (buildd@rothera) (gcc version 4.0.3)",
        "[17179569.184000] BIOS-provided physical RAM map:",
        "[    0.000000] Initializing CPU#0",
        "[   20.504000] Freeing unused kernel memory: 232k freed",
    ]
    parsed = parse_log(lines)
    assert len(parsed.boots) == 1
    assert [line.guest_s for line in parsed.boots[0]] == [0.0, 0.0, 0.0, 20.504]
    assert len(list(scan_boots(["\n".join(lines)], line_path_chars=0))) == 1

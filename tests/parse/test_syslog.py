"""journalctl's short format and syslog files: timed to the second, split at banners and separators.

The real log is tests/data/hw/arm64-siemens-foxxy-5.10-journalctl.log (see its README); the other
forms below are its lines rewritten as journalctl -b (separators), a locale with lower-case month
names, and rsyslog's RFC 3339 stamps print them.
"""

from __future__ import annotations

from pathlib import Path

from bootscope.analyze.breakdown import analyze_columns
from bootscope.parse import detect_format, parse_log, scan_boots
from bootscope.sources.files import BLOCK_BYTES, read_text_lines

LOG = Path(__file__).resolve().parents[1] / "data" / "hw" / "arm64-siemens-foxxy-5.10-journalctl.log"


def _lines() -> list[str]:
    return LOG.read_text().splitlines()


def test_journal_short_is_one_boot_timed_to_the_second() -> None:
    assert detect_format(_lines()) == "syslog"
    stream = scan_boots(read_text_lines(str(LOG)).blocks(BLOCK_BYTES))
    boots = [analyze_columns(columns) for columns in stream]
    assert stream.format == "syslog" and len(boots) == 1  # the CPU line before the banner is no boot
    assert boots[0].identity.release == "5.10.158-cip22+ind1"
    assert boots[0].identity.cpus == 4
    assert any("about 1 s" in warning for warning in stream.warnings)


def test_boot_separators_and_banners_split() -> None:
    lines = _lines()
    later = [line.replace("Feb 06 12:10:59", "Feb 07 08:00:03") for line in lines]
    with_separator = [*lines, "-- Boot 5e1f0c2b8a5d4c0d9b8c7a6f5e4d3c2b --", *later]
    assert len(parse_log(with_separator).boots) == 2
    assert len(parse_log([*lines, "-- Reboot --", *later]).boots) == 2
    # no separator (a syslog file): the banner splits
    assert len(parse_log([*lines, *later]).boots) == 2


def test_lower_case_months_and_rfc3339_stamps() -> None:
    lines = _lines()
    lower = [line.replace("Feb 06", "févr. 06") for line in lines]
    assert detect_format(lower) == "syslog" and len(parse_log(lower).boots) == 1
    rfc = [line.replace("Feb 06 12:10:59", "2023-02-06T12:10:59.250000+01:00") for line in lines]
    rfc[-1] = rfc[-1].replace("59.250000", "59.750000")
    parsed = parse_log(rfc)
    assert parsed.format == "syslog" and len(parsed.boots) == 1
    assert parsed.boots[0][-1].guest_s == 0.5  # fractional seconds kept
    assert not parsed.warnings


def test_klogd_lines_keep_the_printk_stamp() -> None:
    # old sysklogd/rsyslog wrote the printk stamp after "kernel:"
    lines = [
        "Jul 10 14:44:20 host kernel: [    0.000000] Linux version 3.2.0-4-amd64",
        "Jul 10 14:44:20 host kernel: [    1.234567] Freeing unused kernel memory: 1024K",
    ]
    boot = parse_log(lines).boots[0]
    assert [line.guest_s for line in boot] == [0.0, 1.234567]

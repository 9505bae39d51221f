"""Every input format on a real excerpt (tests/data/README.md says where each came from)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bootscope.errors import InputError, ParseError
from bootscope.model import LogLine
from bootscope.parse import parse_captured, parse_log
from bootscope.sources.files import read_text_lines


def _parse(data_dir: Path, name: str, fmt: str = "auto"):  # type: ignore[no-untyped-def]
    return parse_log(read_text_lines(str(data_dir / name)), fmt)


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("debian-6.1-cloud-smp2.log", "dmesg"),
        ("debian-6.1-cloud-smp2-dmesg-r.log", "dmesg"),
        ("excerpt-6.1-cloud-caller-id.log", "dmesg"),
        ("debian-6.1-cloud-smp2-kmsg.log", "kmsg"),
        ("debian-6.1-cloud-smp2-journal-short-monotonic.log", "journal"),
        ("debian-6.1-cloud-smp2-journal.json", "journal-json"),
        ("debian-6.1-cloud-smp2-grabserial.log", "grabserial"),
        ("excerpt-6.1-cloud-dmesg-T.log", "dmesg-T"),
    ],
)
def test_format_is_detected(data_dir: Path, name: str, fmt: str) -> None:
    assert _parse(data_dir, name).format == fmt


def test_console_capture_keeps_firmware_lines_untimed(data_dir: Path) -> None:
    boot = _parse(data_dir, "debian-6.1-cloud-smp2.log").boots[0]
    assert boot[0].guest_s is None and "SeaBIOS" in boot[0].text
    banner = next(line for line in boot if line.text.startswith("Linux version "))
    assert banner.guest_s == 0.0
    # the junk before the banner on the same console line is kept as its own untimed line
    index = boot.index(banner)
    assert boot[index - 1].guest_s is None and "Probing EDD" in boot[index - 1].text
    marker = next(line for line in boot if line.text.startswith("BOOTSCOPE-MARKER"))
    assert marker.guest_s is None


def test_dmesg_r_levels_and_facilities(data_dir: Path) -> None:
    boot = _parse(data_dir, "debian-6.1-cloud-smp2-dmesg-r.log").boots[0]
    assert (boot[0].level, boot[0].facility) == (5, 0)  # <5> Linux version
    hello = next(line for line in boot if line.text == "hello from userspace")
    assert (hello.level, hello.facility, hello.guest_s) == (4, 1, 3.068486)  # <12> = user.warning


def test_caller_ids(data_dir: Path) -> None:
    boot = _parse(data_dir, "excerpt-6.1-cloud-caller-id.log").boots[0]
    assert {line.caller for line in boot} == {"T0"}
    assert boot[0].text.startswith("Command line: ")


def test_kmsg_records_and_continuations(data_dir: Path) -> None:
    text = (data_dir / "debian-6.1-cloud-smp2-kmsg.log").read_text()
    records = re.findall(r"^(\d+),(\d+),(\d+),[^;]*;(.*)$", text, re.MULTILINE)
    boot = _parse(data_dir, "debian-6.1-cloud-smp2-kmsg.log").boots[0]
    timed = [line for line in boot if line.guest_s is not None]
    assert len(timed) == len(records)
    assert [line.seq for line in timed] == [int(r[1]) for r in records]
    assert [line.guest_s for line in timed] == [int(r[2]) / 1e6 for r in records]
    assert not any(line.text.startswith(" SUBSYSTEM=") for line in boot)
    # kmsg escapes newlines as \x0a; the parser restores them
    assert any("\n" in line.text for line in timed)


def test_journal_short_monotonic_agrees_with_kmsg(data_dir: Path) -> None:
    kmsg = [
        line
        for line in _parse(data_dir, "debian-6.1-cloud-smp2-kmsg.log").boots[0]
        if line.guest_s is not None
    ]
    journal = _parse(data_dir, "debian-6.1-cloud-smp2-journal-short-monotonic.log").boots[0]
    assert journal[0].text == kmsg[0].text
    assert {line.guest_s for line in journal} == {line.guest_s for line in kmsg}
    assert all(line.facility == 0 for line in journal)


def test_journal_json_byte_array_message_and_boot_ids(data_dir: Path) -> None:
    parsed = _parse(data_dir, "debian-6.1-cloud-smp2-journal.json")
    assert len(parsed.boots) == 2
    assert [line.text for line in parsed.boots[0]] == [line.text for line in parsed.boots[1]]
    assert any(line.text == "hello from userspace" for line in parsed.boots[0])


def test_grabserial_host_stamps(data_dir: Path) -> None:
    boot = _parse(data_dir, "debian-6.1-cloud-smp2-grabserial.log").boots[0]
    first = (data_dir / "debian-6.1-cloud-smp2-grabserial.log").read_text().split("]", 1)[0]
    assert boot[0].host_ns == round(float(first[1:].split()[0]) * 1e9)
    banner = next(line for line in boot if line.text.startswith("Linux version "))
    assert banner.guest_s == 0.0 and banner.host_ns is not None
    hosts = [line.host_ns for line in boot if line.host_ns is not None]
    assert hosts == sorted(hosts)


def test_dmesg_t_is_relative_to_the_first_line_with_a_warning(data_dir: Path) -> None:
    parsed = _parse(data_dir, "excerpt-6.1-cloud-dmesg-T.log")
    assert any("rounded to a second" in warning for warning in parsed.warnings)
    times = [line.guest_s for line in parsed.boots[0]]
    assert times[0] == 0.0 and all(t == int(t) for t in times if t is not None)


def test_log_without_timestamps_cannot_be_timed() -> None:
    with pytest.raises(ParseError, match="cannot be timed"):
        parse_log(["hello", "world"])


def test_unknown_format_is_an_input_error() -> None:
    with pytest.raises(InputError):
        parse_log(["[    1.000000] x"], "xml")


def test_parse_captured_keeps_host_times(data_dir: Path) -> None:
    raw = (data_dir / "debian-6.1-cloud-smp2.log").read_text().replace("\r", "").split("\n")
    captured = [LogLine(text, host_ns=1000 * i) for i, text in enumerate(raw)]
    parsed = parse_captured(captured)
    boot = parsed.boots[0]
    command = next(line for line in boot if line.text.startswith("Command line:"))
    assert command.guest_s == 0.0
    assert command.host_ns == 1000 * next(i for i, t in enumerate(raw) if "Command line:" in t)
    banner = next(line for line in boot if line.text.startswith("Linux version"))
    junk = boot[boot.index(banner) - 1]
    assert banner.host_ns == junk.host_ns  # one console line, split in two: same arrival time

"""Format detection's one regex against each format's own regex, tried one by one in its order."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from bootscope.parse import formats
from bootscope.parse.formats import _line_format


def _one_by_one(line: str) -> str | None:
    """The detection as the formats' own regexes give it (the order _line_format documents)."""
    if line.startswith("{") and "__MONOTONIC_TIMESTAMP" in line:
        return "journal-json"
    if formats._KMSG.match(line):
        return "kmsg"
    if formats._GRAB.match(line):
        return "grabserial"
    if formats._DMESG_T.match(line):
        return "dmesg-T"
    m = formats._JOURNAL.match(line)
    if m is not None and m.group(3) == "kernel":
        return "journal"
    s = formats._SYSLOG.match(line)
    if s is not None and s.group(8) == "kernel":
        return "syslog"
    if formats._DMESG.match(line) or formats._DMESG_ANYWHERE.search(line):
        return "dmesg"
    return None


_PIECES = st.sampled_from(
    [
        "[",
        "]",
        " ",
        "  ",
        "1",
        "12",
        ".",
        "123456",
        "1.5",
        ":",
        ",",
        ";",
        "-",
        "kernel",
        "kernel:",
        "kernel[3]:",
        "sshd[1]:",
        "host",
        "Jul",
        "Mon Jan  1 12:00:00 2024",
        "2024-07-10T",
        "14:44:20",
        ".123",
        "+02:00",
        "Z",
        "{",
        "__MONOTONIC_TIMESTAMP",
        "<6>",
        "\t",
        "\u00e9",
        "x",
    ]
)


@settings(max_examples=2000, deadline=None)
@given(st.lists(_PIECES, max_size=14).map("".join))
def test_one_regex_detects_as_the_formats_regexes_do(line: str) -> None:
    assert _line_format(line) == _one_by_one(line)


def test_every_real_line_is_detected_as_before(data_dir: Path) -> None:
    checked = 0
    for path in sorted(data_dir.rglob("*")):
        if path.suffix not in (".log", ".txt", ".json") or not path.is_file():
            continue
        for line in path.read_text(errors="replace").split("\n"):
            assert _line_format(line) == _one_by_one(line), (path.name, line[:80])
            checked += 1
    assert checked > 10_000

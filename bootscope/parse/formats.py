"""Line formats: detect which one a log is in, and turn its text lines into LogLines.

Each parser is a generator over text lines that yields ``LogLine`` objects, or ``BOUNDARY`` where the
format itself says a new boot begins (a journal's ``-- Boot`` line or a new ``_BOOT_ID``).
The hot path is one precompiled regex ``match`` per line; nothing loops over a pattern table here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime

from bootscope.errors import InputError
from bootscope.model import LogLine

BOUNDARY = None  # yielded between boots when the format marks the boundary itself
# A stored SSH boot keeps the machine's serial console after its journal, each line behind this
# prefix (bootscope.lab.workloads.ssh_collect): such lines stay untimed in every format and do not count when
# the format is detected, so the console's printk stamps never mix with the journal's.
CONSOLE_PREFIX = "console| "

ParsedItem = LogLine | None
Warn = Callable[[str], None]

# dmesg and console captures: optional "<level>" (dmesg -r), "[    1.234567]", optional caller
# "[    T1]" (CONFIG_PRINTK_CALLER, kernel/printk/printk.c info_print_prefix())
# ([^\S\n] is \s that never crosses a line end, so that bootscope.parse.chunked can scan whole blocks)
# printk pads the seconds to five columns ("%5lu"), so below 10000 s a space always follows "[":
# "[2.873679]" is a boot loader imitating the form (PolarFire's Hart Software Services), not printk
STAMP_OPEN = r"\[(?:[^\S\n]+|(?=\d{5}))"
DMESG_PREFIX = r"(?:<(\d{1,3})>)?" + STAMP_OPEN + r"(\d{1,10}\.\d{1,9})\](?:\[[^\S\n]*([TC]\d+)\])? ?"
_DMESG = re.compile(DMESG_PREFIX)
# A kernel stamp that follows console junk on the same line (firmware escapes, a boot loader's dots)
DMESG_ANYWHERE = r"(?:<\d{1,3}>)?" + STAMP_OPEN + r"\d{1,10}\.\d{6}\](?:\[[^\S\n]*[TC]\d+\])? ?"
_DMESG_ANYWHERE = re.compile(DMESG_ANYWHERE)
# /dev/kmsg records, Documentation/ABI/testing/dev-kmsg: "prefix,seq,usec,flags[,caller=T1];text"
_KMSG = re.compile(r"(\d{1,4}),(\d+),(\d+),[^;,]*(?:,caller=([TC]\d+))?[^;]*;")
# journalctl -o short-monotonic: "[    1.234567] host ident[pid]: message"
_JOURNAL_HEAD = r"\[\s*(\d+\.\d+)\] (\S+) "  # stamp and host; then the identifier
_JOURNAL = re.compile(_JOURNAL_HEAD + r"([^\s:\[]+)(?:\[\d+\])?: ?")
# grabserial -t / -m: "[host_s delta_s] text"
_GRAB = re.compile(r"\[(\d+\.\d+) +(-?\d+\.\d+)\] ?")
# dmesg -T: "[Mon Jan  1 12:00:00 2024] text" (wall clock, a second of resolution)
_DMESG_T = re.compile(r"\[([A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4})\] ?")


# Until its clock was set, a 2.6-era kernel stamped lines with jiffies still at INITIAL_JIFFIES
# (include/linux/jiffies.h: -300 s worth of ticks as an unsigned 32-bit count), printed through
# kernel/printk.c printk_clock() as 2^32/HZ - 300 s: "[17179569.184000]" at HZ=250. Such a stamp
# (within a second of that value, for HZ 100, 250, 300, 1000) is read as clock zero.
_PRE_CLOCK_S = tuple(2**32 / hz - 300 for hz in (100, 250, 300, 1000))


def stamp_s(stamp: str) -> float:
    """Return a printk stamp's seconds; a pre-clock stamp of old kernels (see above) is 0.0."""
    seconds = float(stamp)
    if seconds > 4e6 and any(0 <= seconds - early < 1 for early in _PRE_CLOCK_S):
        return 0.0
    return seconds


def parse_dmesg(lines: Iterable[str], warn: Warn) -> Iterator[ParsedItem]:
    """Yield LogLines of a dmesg or console log; untimed lines are kept with ``guest_s`` None."""
    match = _DMESG.match
    for line in lines:
        m = match(line)
        if m is None:
            if line.startswith(CONSOLE_PREFIX):
                yield LogLine(line)
            else:
                yield from _untimed_or_embedded(line)
            continue
        level_text, stamp, caller = m.groups()
        if level_text is None:
            yield LogLine(line[m.end() :], stamp_s(stamp), None, None, None, None, caller)
        else:
            prefix = int(level_text)
            yield LogLine(line[m.end() :], stamp_s(stamp), None, prefix & 7, prefix >> 3, None, caller)


def _untimed_or_embedded(line: str) -> Iterator[ParsedItem]:
    if "[" in line:
        m = _DMESG_ANYWHERE.search(line)
        if m is not None:
            # Console junk before a kernel line: keep both, the junk as an untimed line.
            head = line[: m.start()]
            if head.strip():
                yield LogLine(head)
            yield from parse_dmesg((line[m.start() :],), _ignore)
            return
    yield LogLine(line)


def _ignore(_message: str) -> None:
    return None


def parse_kmsg(lines: Iterable[str], warn: Warn) -> Iterator[ParsedItem]:
    """Yield LogLines of /dev/kmsg records; continuation lines (starting with a space) are metadata."""
    match = _KMSG.match
    last_seq = -1
    for line in lines:
        m = match(line)
        if m is None:
            if not line.startswith(" ") and line.strip():
                yield LogLine(line)
            continue
        prefix_text, seq_text, usec_text, caller = m.groups()
        prefix, seq = int(prefix_text), int(seq_text)
        if seq < last_seq:
            yield BOUNDARY  # the sequence number restarts only when a new kernel starts
        last_seq = seq
        text = line[m.end() :]
        if "\\x" in text:
            text = _unescape_kmsg(text)
        yield LogLine(text, int(usec_text) / 1e6, None, prefix & 7, prefix >> 3, seq, caller)


def _unescape_kmsg(text: str) -> str:
    # kernel/printk/printk.c devkmsg_read() escapes non-printable bytes as \xNN
    return re.sub(r"\\x([0-9a-f]{2})", lambda m: chr(int(m.group(1), 16)), text)


def parse_journal(lines: Iterable[str], warn: Warn) -> Iterator[ParsedItem]:
    """Yield LogLines of ``journalctl -o short-monotonic``; non-kernel lines get facility 1 (user)."""
    match = _JOURNAL.match
    for line in lines:
        m = match(line)
        if m is None:
            if line.startswith("-- "):
                if line.startswith("-- Boot "):
                    yield BOUNDARY
                continue  # "-- Logs begin at ...", "-- No entries --"
            yield LogLine(line)
            continue
        stamp, _host, ident = m.groups()
        if ident == "kernel":
            yield LogLine(line[m.end() :], float(stamp), None, None, 0)
        else:
            yield LogLine(line[m.end(2) + 1 :], float(stamp), None, None, 1)


def parse_journal_json(lines: Iterable[str], warn: Warn) -> Iterator[ParsedItem]:
    """Yield LogLines of ``journalctl -o json``; a change of ``_BOOT_ID`` is a boot boundary."""
    boot_id: object = None
    bad = 0
    for line in lines:
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            stamp = int(record["__MONOTONIC_TIMESTAMP"]) / 1e6
        except (ValueError, KeyError, TypeError, RecursionError):
            bad += 1
            continue
        if not isinstance(record, dict):
            bad += 1
            continue
        if boot_id is not None and record.get("_BOOT_ID") != boot_id:
            yield BOUNDARY
        boot_id = record.get("_BOOT_ID")
        text = _journal_message(record.get("MESSAGE"))
        kernel = record.get("_TRANSPORT") == "kernel"
        if not kernel:
            ident = record.get("SYSLOG_IDENTIFIER") or record.get("_COMM") or "?"
            text = f"{ident}: {text}"
        level = _int_or_none(record.get("PRIORITY"))
        yield LogLine(text, stamp, None, level, 0 if kernel else 1, _int_or_none(record.get("SEQNUM")))
    if bad:
        warn(f"{bad} journal JSON line(s) could not be read and were skipped")


def _journal_message(message: object) -> str:
    # journald stores a MESSAGE that is not valid UTF-8 as an array of byte values
    if isinstance(message, str):
        return message
    if isinstance(message, list):
        try:
            return bytes(int(b) & 0xFF for b in message).decode("utf-8", errors="replace")
        except (ValueError, TypeError):
            return ""
    return "" if message is None else str(message)


def _int_or_none(value: object) -> int | None:
    try:
        return int(value)  # type: ignore[call-overload,no-any-return]
    except (TypeError, ValueError):
        return None


def parse_grabserial(lines: Iterable[str], warn: Warn) -> Iterator[ParsedItem]:
    """Yield LogLines of a grabserial log: the host stamp becomes ``host_ns``, the rest is parsed as dmesg."""
    match = _GRAB.match
    for line in lines:
        m = match(line)
        if m is None:
            yield from parse_dmesg((line,), warn)
            continue
        host_ns = round(float(m.group(1)) * 1e9)
        for item in parse_dmesg((line[m.end() :],), warn):
            if item is not None:
                yield LogLine(
                    item.text, item.guest_s, host_ns, item.level, item.facility, item.seq, item.caller
                )


def parse_dmesg_t(lines: Iterable[str], warn: Warn) -> Iterator[ParsedItem]:
    """Yield LogLines of ``dmesg -T``: seconds since the first stamp, which is near boot (±1 s)."""
    warn("dmesg -T wall-clock stamps are rounded to a second: times are only good to about 1 s")
    match = _DMESG_T.match
    first: datetime | None = None
    for line in lines:
        m = match(line)
        if m is None:
            yield LogLine(line)
            continue
        try:
            wall = datetime.strptime(m.group(1), "%a %b %d %H:%M:%S %Y")
        except ValueError:
            yield LogLine(line)
            continue
        if first is None:
            first = wall
        yield LogLine(line[m.end() :], (wall - first).total_seconds())


# journalctl's default short format (and -b, -k; short-precise adds microseconds) and syslog files
# (/var/log/messages, kern.log), written by systemd src/shared/logs-show.c output_short() and by
# rsyslog/syslog-ng: "Jul 10 14:44:20 host ident[pid]: text" with a locale's month name (any word,
# lower case or not: only day and time are read), or RFC 3339 "2024-07-10T14:44:20.123456+02:00".
_SYSLOG_HEAD = (  # date, time and host; then the identifier
    r"\s*(?:\S{1,12} {1,2}(\d{1,2})|\d{4}-\d\d-(\d\d)T)[ ]?(\d\d):(\d\d):(\d\d)(\.\d{1,9})?"
    r"(?:Z|[+-]\d\d:?\d\d)? (\S+) "
)
_SYSLOG = re.compile(_SYSLOG_HEAD + r"([^\s:\[]+)(?:\[\d+\])?: ?")
# journalctl's boot separators: "-- Boot 0123abcd... --" (systemd >= 249) and "-- Reboot --" (older)
_SYSLOG_BOUNDARY = ("-- Boot ", "-- Reboot --")


def parse_syslog(lines: Iterable[str], warn: Warn) -> Iterator[ParsedItem]:
    """Yield LogLines of journalctl's short format or a syslog file, timed from the wall clock.

    A kernel line that still carries printk's stamp (klogd of old) keeps that exact time. Other
    lines get the seconds since the boot's ``Linux version`` line (or the log's first line), only
    as fine as the stamp (usually a second), which a warning says. Non-kernel lines get facility 1.
    """
    match = _SYSLOG.match
    dmesg = _DMESG.match
    origin_s: float | None = None
    coarse = False
    for line in lines:
        m = match(line)
        if m is None:
            if line.startswith(_SYSLOG_BOUNDARY):
                origin_s = None
                yield BOUNDARY
            elif not line.startswith("-- "):  # "-- Logs begin at ...", "-- No entries --"
                yield LogLine(line)
            continue
        day, iso_day, hours, minutes, seconds, fraction, _host, ident = m.groups()
        wall_s: float = int(day or iso_day) * 86400 + int(hours) * 3600 + int(minutes) * 60 + int(seconds)
        if fraction:
            wall_s += float(fraction)
        text = line[m.end() :]
        kernel = ident == "kernel"
        if kernel:
            stamped = dmesg(text)
            if stamped is not None:
                yield LogLine(text[stamped.end() :], float(stamped.group(2)), None, None, 0)
                continue
            if text.startswith("Linux version "):
                origin_s = wall_s
        if origin_s is None or wall_s < origin_s - 43200:  # the first line, or a new month
            origin_s = wall_s
        coarse = coarse or not fraction
        if kernel:
            yield LogLine(text, wall_s - origin_s, None, None, 0)
        else:
            yield LogLine(line[m.start(8) :], wall_s - origin_s, None, None, 1)
    if coarse:
        warn("syslog/journal stamps are wall-clock seconds: times are only good to about 1 s")


PARSERS: dict[str, Callable[[Iterable[str], Warn], Iterator[ParsedItem]]] = {
    "dmesg": parse_dmesg,
    "dmesg-T": parse_dmesg_t,
    "kmsg": parse_kmsg,
    "journal": parse_journal,
    "journal-json": parse_journal_json,
    "grabserial": parse_grabserial,
    "syslog": parse_syslog,
}
# The format names, as --input-format takes them: the parsers' own (one list, so none is left out)
FORMATS = tuple(PARSERS)


# _line_format's alternatives, in its order; a name of PARSERS is the name of its group, made a
# valid identifier. A journal or syslog line counts only with the identifier "kernel".
_DETECTED = {name.replace("-", "_"): name for name in PARSERS}
_DETECT = re.compile(
    "|".join(
        f"(?P<{group}>{pattern})"
        for group, pattern in (
            ("journal_json", r"\{.*__MONOTONIC_TIMESTAMP"),
            ("kmsg", _KMSG.pattern),
            ("grabserial", _GRAB.pattern),
            ("dmesg_T", _DMESG_T.pattern),
            ("journal", _JOURNAL_HEAD + r"kernel(?:\[\d+\])?:"),
            ("syslog", _SYSLOG_HEAD + r"kernel(?:\[\d+\])?:"),
            ("dmesg", DMESG_PREFIX + "|.*?" + DMESG_ANYWHERE),
        )
    )
)


def detect_format(sample: list[str]) -> str:
    """Return the format name whose stamps most lines of ``sample`` carry ('dmesg' if none do)."""
    return stamped_format(sample) or "dmesg"


def stamped_format(sample: list[str]) -> str | None:
    """Return the format name whose stamps most lines of ``sample`` carry, None if no line has one."""
    counts = dict.fromkeys(PARSERS, 0)
    lead = 0  # counts[leader] - (the largest other count)
    leader = ""
    for index, line in enumerate(sample):
        # once the leader is ahead by more than the lines left to read, it has won
        if lead > len(sample) - index:
            break
        if line.startswith(CONSOLE_PREFIX):
            continue
        found = _line_format(line)
        if found is None:
            continue
        counts[found] += 1
        if found == leader:
            lead += 1
        else:
            leader = max(counts, key=lambda name: counts[name])
            lead = counts[leader] - max(c for name, c in counts.items() if name != leader)
    best = max(counts, key=lambda name: counts[name])
    return best if counts[best] else None


def _line_format(line: str) -> str | None:
    """Return the format whose stamp ``line`` carries (None if none), tried in a fixed order.

    One regex (``_DETECT``) holds each format's stamp as an alternative, in that order: a
    journal or syslog line counts only when its identifier is ``kernel``, and a dmesg stamp may
    follow console junk. tests/parse/test_formats_detect.py checks it against the formats'
    own regexes, one by one.
    """
    m = _DETECT.match(line)
    return None if m is None else _DETECTED[m.lastgroup or ""]


def check_format(fmt: str) -> str:
    """Return ``fmt`` if it names a known format or 'auto'; raises InputError otherwise."""
    if fmt == "auto" or fmt in PARSERS:
        return fmt
    raise InputError(f"unknown log format {fmt!r}: use auto, {', '.join(FORMATS)}")

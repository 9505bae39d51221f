"""Split a stream of LogLines into boots, one boot in memory at a time.

A new boot begins where the format says so (a journal ``-- Boot`` line, a new ``_BOOT_ID``, a kmsg
sequence number that restarts), at a ``Linux version`` banner once the current boot has timed lines,
or where the time falls back to zero. A banner at clock zero after lines that are all at clock zero
starts no boot: arm and arm64 print ``Booting Linux on physical CPU 0x0`` (arch/arm/kernel/setup.c,
arch/arm64/kernel/setup.c smp_setup_processor_id()) at 0.000000 just before the banner. That line
belongs to its banner's boot whatever its stamp: some arm64 kernels (Rockchip's 5.10) start the
clock where the boot loader left it, at 1.7 s.
A boot whose banner is stamped above zero and whose clock later falls below that stamp with no new
banner is one boot with early cycle-counter stamps (Tim Bird's 2025-2026 printk series stamps the
lines before timekeeping from the cycle counter, with one jump back when timekeeping starts): that
jump is neither a new boot nor a backward step (bootscope.parse.early_counter, where the analysis
reads those lines).
Any other backward step is flagged, never split on: under TCG a
secondary CPU prints with its own, not yet synchronised clock (tests/data shows 0.046 s after 0.94 s).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator

from bootscope.errors import ParseError
from bootscope.model import LogLine
from bootscope.parse.early_counter import BANNER, CLOCK_ZERO_S, CPU_LINE, starts_early
from bootscope.parse.formats import PARSERS, check_format, detect_format

DETECT_SAMPLE_LINES = 2000
# A drop to (nearly) zero after this much boot time is a new boot even without a banner.
RESET_AFTER_S = 1.0


class BootStream:
    """An iterable of boots (tuples of LogLine), parsed lazily from text lines.

    ``format`` is known once iteration started; ``warnings`` and ``timed_lines`` grow while iterating.
    Iterating raises ParseError at the end if no line of the whole log carried a timestamp.
    """

    def __init__(self, lines: Iterable[str], fmt: str = "auto", *, keep_host_ns: bool = False) -> None:
        """``keep_host_ns``: ``lines`` are captured LogLines; their host times are kept."""
        self._fmt = check_format(fmt)
        self._lines = lines
        self._keep_host_ns = keep_host_ns
        self.format = "" if self._fmt == "auto" else self._fmt
        self.warnings: list[str] = []
        self.boot_count = 0
        self.timed_lines = 0
        self._used = False
        self._backward_boots = 0
        self._first_backward = ""

    def _warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    def __iter__(self) -> Iterator[tuple[LogLine, ...]]:
        if self._used:
            raise ParseError("a BootStream can be iterated once")
        self._used = True
        host_ns: list[int | None] = [None]
        if self._keep_host_ns:
            captured = list(self._lines)
            lines: Iterator[str] = _texts_noting_host(captured, host_ns)  # type: ignore[arg-type]
            sample = [line.text for line in captured[:DETECT_SAMPLE_LINES]]  # type: ignore[attr-defined]
        else:
            lines = iter(self._lines)
            sample = list(itertools.islice(lines, DETECT_SAMPLE_LINES)) if self._fmt == "auto" else []
            lines = itertools.chain(sample, lines)
        if self._fmt == "auto":
            self.format = detect_format(sample)
        items = PARSERS[self.format](lines, self._warn)
        if self._keep_host_ns:
            items = _with_host_ns(items, host_ns)
        yield from self._split(items)
        if self._backward_boots:
            self._warn(
                f"timestamps go backwards within {self._backward_boots} boot(s) ({self._first_backward});"
                " gaps are measured from the latest time seen"
            )
        if self.timed_lines == 0:
            raise ParseError("the log cannot be timed: no line carries a kernel timestamp")

    def _split(self, items: Iterable[LogLine | None]) -> Iterator[tuple[LogLine, ...]]:
        current: list[LogLine] = []
        append = current.append
        high_s = -1.0  # the highest guest time seen in the current boot
        timed = 0
        backwards = 0
        first_back = ""
        # Where the trailing run of clock-zero lines of the current boot starts (-1: none), and the
        # backward steps counted before it: a banner takes that run with it (arm's CPU line).
        zero_run_at, zero_run_backwards = -1, 0
        # The stamp of the boot's first timed line when it is its banner (or arm's CPU line) stamped
        # above zero: a clock that fell below it later started after the banner (early counter).
        early_s: float | None = None
        early_known = False  # early_s is known for the current boot
        for line in items:
            if line is None:
                if timed:
                    yield self._finish(current, timed, backwards, first_back)
                    current.clear()
                    high_s, timed, backwards, zero_run_at, early_known = -1.0, 0, 0, -1, False
                continue
            t = line.guest_s
            if t is not None:
                if early_s is not None and t < early_s and not line.text.startswith(BANNER):
                    high_s, early_s = -1.0, None  # timekeeping starts: not a new boot, not a step back
                if timed and t <= CLOCK_ZERO_S and high_s > RESET_AFTER_S:
                    yield self._finish(current, timed, backwards, first_back)
                    current.clear()
                    high_s, timed, backwards, zero_run_at, early_known = -1.0, 0, 0, -1, False
                elif (
                    timed
                    and line.text.startswith(BANNER)
                    and not (high_s <= CLOCK_ZERO_S >= t)
                    and timed > _timed_count(current[(cut := _banner_cut(current, zero_run_at)) :])
                ):
                    carried = current[cut:]
                    if cut < len(current):
                        backwards = zero_run_backwards
                    yield self._finish(current[:cut], timed - _timed_count(carried), backwards, first_back)
                    current[:] = carried
                    high_s, timed, backwards = (0.0 if carried else -1.0), _timed_count(carried), 0
                    zero_run_at, early_known = (0 if carried else -1), False
                elif t < high_s:
                    if not backwards:
                        first_back = f"{high_s:.6f} -> {t:.6f} s at '{line.text[:60]}'"
                    backwards += 1
                if t > CLOCK_ZERO_S:
                    zero_run_at = -1
                elif zero_run_at < 0:
                    zero_run_at, zero_run_backwards = len(current), backwards - (0 <= t < high_s)
                timed += 1
                if t > high_s:
                    high_s = t
                if not early_known:
                    first = next((kept for kept in current if kept.guest_s is not None), line)
                    early_s = first.guest_s if starts_early(first.text, first.guest_s or 0.0) else None
                    early_known = True
            append(line)
        if timed:
            yield self._finish(current, timed, backwards, first_back)

    def _finish(
        self, current: list[LogLine], timed: int, backwards: int, first_back: str
    ) -> tuple[LogLine, ...]:
        self.boot_count += 1
        boot = tuple(current)
        self.timed_lines += timed
        if backwards:
            self._backward_boots += 1
            if not self._first_backward:
                self._first_backward = f"boot {self.boot_count}: {backwards} time(s), first {first_back}"
        return boot


def _banner_cut(current: list[LogLine], zero_run_at: int) -> int:
    """Return where the boot that a banner starts begins in ``current``: the trailing clock-zero run
    (arm's CPU line at 0.000000 and what came with it), else a timed arm CPU line just before it."""
    if zero_run_at > 0:
        return zero_run_at
    last = current[-1] if current else None
    if last is not None and last.guest_s is not None and last.text.startswith(CPU_LINE):
        return len(current) - 1
    return len(current)


def _timed_count(lines: list[LogLine]) -> int:
    return sum(line.guest_s is not None for line in lines)


def _texts_noting_host(captured: list[LogLine], host_ns: list[int | None]) -> Iterator[str]:
    for line in captured:
        host_ns[0] = line.host_ns
        yield line.text


def _with_host_ns(items: Iterable[LogLine | None], host_ns: list[int | None]) -> Iterator[LogLine | None]:
    # Parsers yield a text line's LogLines before they pull the next text line, so host_ns[0] still
    # holds the host time of the captured line that produced ``item``.
    for item in items:
        if item is None or host_ns[0] is None:
            yield item
        else:
            yield LogLine(
                item.text, item.guest_s, host_ns[0], item.level, item.facility, item.seq, item.caller
            )

"""U-Boot's ``bootstage`` report, read from a console log.

With ``CONFIG_BOOTSTAGE_REPORT`` U-Boot prints, just before it starts the OS (and on ``bootstage
report``), a table of its marks in microseconds on its own timer, counted from reset (U-Boot's
common/bootstage.c; the Kconfig help and doc/usage/cmd/bootstage.rst show it)::

    Timer summary in microseconds (9 records):
           Mark    Elapsed  Stage
              0          0  reset
        583,290    583,290  board_init_f
      2,348,898  1,765,608  board_init_r
      ...
    Accumulated time:
                    41,696  dm_r

Older U-Boots print no record count and leave the first record's ``Elapsed`` blank; a stage may have
no name (a record with neither name nor id: Chromium OS's coral logs show three), a name with spaces
(``board_init_f start``), ``id=64`` or ``user_N``; a vendor's copy prints ``overflow`` for an
elapsed time that went backwards. Numbers carry thousands separators. The report is read from the
lines' text whatever stamps them (a serial capture, a host-stamped console, printk-style prefixes
are not expected: U-Boot prints none). Only the last report of the text is kept: U-Boot prints one
per boot, and a ``bootstage report`` typed later repeats it with more marks.

barebox keeps no such report, but its log buffer keeps each message's time on its own clock
(nanoseconds from its clocksource's start), and ``dmesg -t`` prints it (barebox's
commands/dmesg.c, common/console_common.c ``log_print``): ``[    123456us] message`` (``-d`` adds
or, alone, prints ``< 1234us``, the time since the message before; ``-r`` puts ``<6>``, the level,
first). A run of such lines is read as the loader's stages, each message a mark named by its text;
a time earlier than the line before starts the log again (``dmesg -t`` typed twice). A boot script
that prints ``dmesg -t`` just before ``boot`` puts the handoff at its last mark.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from bootscope.prekernel import BAREBOX, UBOOT, BootstageReport, Stage

HEADER = "Timer summary in microseconds"
ACCUMULATED = "Accumulated time:"
_HEADER = re.compile(r"Timer summary in microseconds(?: \((\d+) records\))?:\s*$")
_COLUMNS = re.compile(r"^\s*Mark\s+Elapsed\s+Stage\s*$")
_NUMBER = r"\d{1,3}(?:,\d{3})*|\d+"
# Mark, then Elapsed (a number, "overflow", or nothing in old U-Boots' first record), then two
# spaces and the stage's name (possibly empty).
_ROW = re.compile(rf"^\s*(?P<mark>{_NUMBER})(?:\s+(?P<elapsed>{_NUMBER}|overflow))?(?:  (?P<name>.*))?$")
_ACCUMULATED_ROW = re.compile(rf"^\s*(?P<us>{_NUMBER})\s+(?P<name>\S.*)$")
MAX_ROWS = 1000  # a report longer than this is not a report (U-Boot keeps 30 to 50 records)
# barebox's `dmesg -t` / `-d` / `-t -d` / `-r` line: level, time since its clock started, time since
# the message before, the message.
_BAREBOX = re.compile(r"^(?:<\d>)?\[(?:\s*(?P<us>\d+)us)?(?:\s*<\s*(?P<diff>\d+)us)?\] (?P<name>.*)$")
# A console's leading escape sequences (barebox shows its cursor again before the shell's output).
_ESCAPES = re.compile(r"^(?:\x1b\[[0-9;?]*[A-Za-z])+")
BAREBOX_ROWS = 5000  # barebox keeps global.log_max_messages (1000 by default) messages
NAME_CHARS = 120  # a message names its mark with at most this many characters


def read_bootstage(texts: Iterable[str]) -> BootstageReport | None:
    """Return the last bootstage report in ``texts`` (one console line each), or None when there is
    none; a report whose rows cannot be read ends where they stop (a cut capture keeps its marks)."""
    reader = BootstageReader()
    for text in texts:
        reader.feed(text)
    return reader.report()


class BootstageReader:
    """Reads bootstage reports one line at a time (:meth:`feed`), for a caller that reads the lines
    for more than this (bootscope.parse.untimed); :meth:`report` is the last one so far."""

    def __init__(self) -> None:
        self._found: BootstageReport | None = None
        self._rows: list[Stage] = []
        self._accumulated: list[tuple[str, float]] = []
        self._stated: int | None = None
        self._start = -1
        self._index = -1
        # "" (outside a report), "columns", "rows", "blank" (after the rows), "accumulated"
        self._state = ""

    def feed(self, raw: str) -> None:
        """Read the next line."""
        self._index += 1
        text = raw.rstrip("\r\n")
        bare = _ESCAPES.sub("", text) if text[:1] == "\x1b" else text
        barebox = _BAREBOX.match(bare) if bare[:1] in ("[", "<") and "us" in bare else None
        if barebox is not None and (barebox["us"] or barebox["diff"]) and self._state in ("", "barebox"):
            self._barebox(barebox)
            return
        if self._state == "barebox":
            self._found, self._rows, self._state = self.report(), [], ""
        header = _HEADER.search(text) if HEADER in text else None
        if header is not None:
            self._found = self.report()
            self._rows, self._accumulated, self._start, self._state = [], [], self._index, "columns"
            self._stated = int(header[1]) if header[1] else None
        elif self._state == "columns":
            self._state = "rows" if _COLUMNS.match(text) else ""
        elif self._state == "rows":
            row = _ROW.match(text) if len(self._rows) < MAX_ROWS else None
            if row is not None:
                self._rows.append(_stage(row))
            else:
                self._state = {"": "blank", ACCUMULATED: "accumulated"}.get(text.strip(), "")
        elif self._state == "blank":
            self._state = "accumulated" if text.strip() == ACCUMULATED else ""
        elif self._state == "accumulated" and text.strip() != ACCUMULATED:
            item = _ACCUMULATED_ROW.match(text) if len(self._accumulated) < MAX_ROWS else None
            if item is None:
                self._state = ""
            else:
                self._accumulated.append((item["name"].strip(), _us(item["us"]) / 1e6))

    def _barebox(self, line: re.Match[str]) -> None:
        """Read one line of barebox's timed log (see the module docstring) as the next mark."""
        printed_again = (
            bool(self._rows) and bool(line["us"]) and int(line["us"]) / 1e6 < self._rows[-1].mark_s
        )
        if self._state != "barebox" or printed_again:  # a new run, or the log printed once more
            self._found = self.report()
            self._rows, self._accumulated, self._stated = [], [], None
            self._start, self._state = self._index, "barebox"
        if len(self._rows) >= BAREBOX_ROWS:
            return
        before = self._rows[-1].mark_s if self._rows else 0.0
        mark_s = int(line["us"]) / 1e6 if line["us"] else before + int(line["diff"]) / 1e6
        self._rows.append(Stage(line["name"].strip()[:NAME_CHARS], mark_s, mark_s - before))

    def report(self) -> BootstageReport | None:
        """Return the last report read so far (the one being read, once it has a mark), or None."""
        if not self._rows:
            return self._found
        loader = BAREBOX if self._state == "barebox" else UBOOT
        return BootstageReport(tuple(self._rows), tuple(self._accumulated), self._stated, self._start, loader)


def _stage(row: re.Match[str]) -> Stage:
    elapsed = row["elapsed"]
    return Stage(
        name=(row["name"] or "").strip(),
        mark_s=_us(row["mark"]) / 1e6,
        elapsed_s=None if elapsed in (None, "overflow") else _us(elapsed) / 1e6,
    )


def _us(number: str) -> int:
    return int(number.replace(",", ""))

"""The command line a kernel printed on a console that may lose a byte, read by the tests' own reader.

An x86 kernel prints its command line twice (``Command line:`` in setup_arch, ``Kernel command line:``
in start_kernel). labgrid's QEMU driver reads its console from a unix socket: a host too busy to read
it for a few milliseconds lets QEMU's UART drop a byte (seen once in CI: ``bootscop.tune_cold=1`` in
the first print, the second intact). The line is the one both prints give, or the one whose other
print lacks exactly one of its characters; anything else is a different line and fails the test."""

from __future__ import annotations

import re
from collections.abc import Sequence

_PRINT = re.compile(r"\] (?:Kernel )?[Cc]ommand line: (.*)$")


def _one_byte_short(seen: str, sent: str) -> bool:
    """Whether ``seen`` is ``sent`` with exactly one character lost."""
    return len(seen) == len(sent) - 1 and any(sent[:i] + sent[i + 1 :] == seen for i in range(len(sent)))


def printed_cmdline(texts: Sequence[str]) -> str:
    """Return the command line the last kernel in ``texts`` (console lines) printed: its prints after
    its banner agree, or one lost one byte of the other. Raises AssertionError otherwise."""
    banner = max(i for i, text in enumerate(texts) if "Linux version " in text)
    prints = [m[1].strip() for text in texts[banner:] if (m := _PRINT.search(text))]
    assert prints, "no command line printed after the last banner"
    line = max(prints, key=len)
    assert all(p == line or _one_byte_short(p, line) for p in prints), prints
    return line

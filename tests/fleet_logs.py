"""A reader of fleet logs for the tests' expected values, simpler than bootscope's and sharing none of
its code: plain regexes over the raw text of a file, and the ranks of a quantile's interval by plain
enumeration of the binomial distribution.

What it reads (enough for the real logs the fleet tests import, checked by hand in
tests/usecases/test_fleet_import.py):

- a boot starts at each ``Linux version`` banner (init/version.c's linux_banner); text before the first
  banner belongs to the first boot;
- its kernel_init_s is the printk stamp of ``Run /init as init process`` (init/main.c
  run_init_process), ``[    3.194636] Run /init ...`` anywhere in a line (a console capture, a
  ``dmesg -r`` line after ``<6>``, a LAVA ``msg``), or, in a journal export, the
  ``__MONOTONIC_TIMESTAMP`` (microseconds) of the record whose MESSAGE is that line;
- it failed when it printed ``Kernel panic - not syncing`` (kernel/panic.c); it is ok when it ran init,
  and incomplete otherwise (no failure, no end of the kernel's init);
- a file with no printk stamp and no journal stamp cannot be timed: None.

Oopses and hangs before init (failed boots too) are not read: none of the logs read with it has one.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass
from pathlib import Path

_BANNER = re.compile(r"Linux version \S+")
_PRINTK_STAMP = re.compile(r"\[\s*\d+\.\d+\]")
_JOURNAL_STAMP = re.compile(r'"__MONOTONIC_TIMESTAMP": "\d+"')
_RUN_INIT_PRINTK = re.compile(r"\[\s*(\d+\.\d+)\] Run /init as init process")
_RUN_INIT_JOURNAL = re.compile(
    r'"__MONOTONIC_TIMESTAMP": "(\d+)"[^\n]*"MESSAGE": "Run /init as init process"'
)
_PANIC = "Kernel panic - not syncing"


@dataclass(frozen=True)
class ReadBoot:
    """One boot as the raw text says: its outcome (ok, failed, incomplete) and kernel_init_s (s)."""

    outcome: str
    kernel_init_s: float | None


def read_boots(path: Path) -> list[ReadBoot] | None:
    """Return the boots of the log at ``path`` in file order, None when it carries no stamp."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if not (_PRINTK_STAMP.search(text) or _JOURNAL_STAMP.search(text)):
        return None
    starts = [m.start() for m in _BANNER.finditer(text)] or [0]
    starts[0] = 0
    boots = []
    for start, end in zip(starts, [*starts[1:], len(text)], strict=True):
        part = text[start:end]
        printk = _RUN_INIT_PRINTK.search(part)
        journal = _RUN_INIT_JOURNAL.search(part)
        init_s = float(printk.group(1)) if printk else int(journal.group(1)) / 1e6 if journal else None
        outcome = "failed" if _PANIC in part else "ok" if init_s is not None else "incomplete"
        boots.append(ReadBoot(outcome, init_s))
    return boots


def _binomial_pmf(k: int, n: int, p: float) -> float:
    log = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
    return math.exp(log + k * math.log(p) + (n - k) * math.log1p(-p))


def equal_tailed_ranks(n: int, p: float, confidence: float) -> tuple[int, int]:
    """Return the 1-based ranks (l, u) of the distribution-free interval of the p-quantile of n values.

    B, the number of the n values below the true quantile, is Binomial(n, p); X_(l) misses it from
    above when B < l, X_(u) from below when B >= u. l is the largest rank (at least 1) with
    P(B < l) below the tail (1 - confidence) / 2, u the smallest with P(B >= u) below it; u = n + 1
    means no sample value bounds the quantile from above."""
    tail = (1 - confidence) / 2
    below = [0.0, *itertools.accumulate(_binomial_pmf(k, n, p) for k in range(n + 1))]  # P(B < r)
    low = max([r for r in range(1, n + 1) if below[r] <= tail + 1e-12], default=1)
    high = min(r for r in range(n + 2) if 1 - below[r] <= tail + 1e-12)
    return low, high

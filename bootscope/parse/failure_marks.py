"""The kernel lines that say a boot died or hung: what tells a failed boot from one whose log was cut.

A log that stops before the kernel ran init is either a boot that failed (it printed why) or an
excerpt, a ring buffer that wrapped or a capture stopped early (it printed nothing of the kind). This
table holds the lines of the first kind, each with the kernel file that prints it (paths of the
Linux tree):

- ``Kernel panic - not syncing: ...``: kernel/panic.c panic().
- ``Oops: ...`` (x86, arch/x86/kernel/dumpstack.c __die_header(); since 6.x also before ``general
  protection fault``), ``Internal error: Oops: ...`` (arch/arm/kernel/traps.c __die(),
  arch/arm64/kernel/traps.c die()), ``Oops - ...`` (arch/riscv/kernel/traps.c die()).
- ``general protection fault``: arch/x86/kernel/traps.c (before 6.x without ``Oops:``).
- ``Unable to handle kernel ...``: arch/arm/mm/fault.c, arch/arm64/mm/fault.c, arch/riscv/mm/fault.c.
- ``BUG: ...``: many places (arch/x86/mm/fault.c, lib/list_debug.c), and the soft-lockup detector
  (kernel/watchdog.c, ``watchdog: BUG: soft lockup - CPU#0 stuck for 22s!``).
- ``Watchdog detected hard LOCKUP on cpu N``: kernel/watchdog_perf.c (kernel/watchdog_hld.c before 6.5).
- ``INFO: task NAME:PID blocked for more than N seconds.``: kernel/hung_task.c.
- ``rcu: INFO: rcu_sched self-detected stall on CPU`` and ``... detected stalls on CPUs/tasks``:
  kernel/rcu/tree_stall.h.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

FAILURE_RE = re.compile(
    r"Kernel panic - not syncing"
    r"|(?:^|\]\s?|Internal error: )Oops(?::| -|$)"
    r"|general protection fault"
    r"|Unable to handle kernel "
    r"|\bBUG: "
    r"|Watchdog detected hard LOCKUP"
    r"|INFO: task \S+ blocked for more than \d+ seconds"
    r"|\bdetected stalls? on CPU"
)


def first_failure(texts: Iterable[str]) -> str | None:
    """Return the first of ``texts`` (log lines without their stamps, or with them) that says the
    kernel panicked, oopsed, hit a BUG or hung, stripped; None when none does. Never raises."""
    for text in texts:
        if FAILURE_RE.search(text):
            return text.strip()
    return None

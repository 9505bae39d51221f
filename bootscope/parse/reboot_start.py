"""Where the new boot begins in the console lines of a reboot of a running system (a warm or kexec
reboot ordered on its shell): the lines since the order hold the old system's last ones first."""

from __future__ import annotations

from collections.abc import Sequence

from bootscope.model import LogLine
from bootscope.parse.patterns import CONSOLE_BANNER_RE, PRINTK_STAMP_RE


def new_boot_start(lines: Sequence[LogLine]) -> int:
    """Return the index in ``lines`` (console lines since a reboot's order) of the first line after
    the old kernel's last one. With the new kernel's banner on the console: after the old kernel's
    last line with a printk stamp before it (what follows is the firmware's and the boot loader's,
    then the new kernel's; 0 when the old kernel printed none). Without one (a ``quiet`` new kernel):
    after the last stamped line before the stamps go back in time (the new kernel's clock starting
    again), or after the last stamped line when they never do (the new kernel printed none)."""
    banner = max((i for i, line in enumerate(lines) if CONSOLE_BANNER_RE.search(line.text)), default=None)
    if banner is not None:
        stamped = (i for i in range(banner - 1, -1, -1) if PRINTK_STAMP_RE.search(lines[i].text))
        return next(stamped, -1) + 1
    last: tuple[int, float] | None = None
    start = 0
    for i, line in enumerate(lines):
        found = PRINTK_STAMP_RE.search(line.text)
        if found is None:
            continue
        stamp = float(found.group(1))
        if last is not None and stamp < last[1]:
            return last[0] + 1  # the new kernel's clock began again: its first stamped line
        last = (i, stamp)
        start = i + 1
    return start

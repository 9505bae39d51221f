"""Consecutive boots of one capture: the host stamp at which a kexec reboot left the old kernel.

A console capture with host stamps (grabserial, ``bootscope run``'s serial log) of a kexec reboot
holds the old kernel's ``kexec_core: Starting new kernel`` line, then the new kernel's lines; the
log splits them into two boots. The new boot's kexec metrics (``analyze_columns``'s
``kexec_start_ns``) need the old boot's last such stamp, which :func:`with_kexec_start` hands on.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TypeVar

from bootscope.model import LogLine
from bootscope.parse.columns import BootColumns
from bootscope.parse.patterns import BY_NAME

_KEXEC_START = BY_NAME["kexec_start"].regex
_KEXEC_WORDS = "Starting new kernel"
Boot = TypeVar("Boot", bound=BootColumns | Sequence[LogLine])


def kexec_start_ns(boot: BootColumns | Sequence[LogLine]) -> int | None:
    """Return the host stamp (ns) of the boot's last "Starting new kernel" line (kernel/kexec_core.c),
    None where it has none or the line carries no host stamp. Raises nothing."""
    if isinstance(boot, BootColumns):
        found = [index for name, index, _, _ in boot.known if name == "kexec_start"]
        return boot.line(found[-1]).host_ns if found else None
    for line in reversed(boot):
        if _KEXEC_WORDS in line.text and _KEXEC_START.match(line.text):
            return line.host_ns
    return None


def with_kexec_start(boots: Iterable[Boot]) -> Iterator[tuple[Boot, int | None]]:
    """Yield each boot with the host stamp (ns) at which the boot before it started this one by
    kexec (its "Starting new kernel" line), or None: the first boot, a boot after a reboot that was
    not a kexec, or a log without host stamps. Holds one boot besides the current one. Raises nothing."""
    previous_ns: int | None = None
    for boot in boots:
        yield boot, previous_ns
        previous_ns = kexec_start_ns(boot)

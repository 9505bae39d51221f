"""The fields a fleet boot gets from its own log: architecture, CPUs and memory, for ``--by``.

``analyze`` reads them from every kernel log (``model.Identity``); ``fleet import`` stores them with
each boot, beside the host metadata of the ``--meta`` CSV (a CSV column of the same name wins: the
user knows the host better than a log excerpt does). ``kernel_series`` is not stored: the queries
derive it from the stored kernel release (``query.py``), so stores imported before it have it too.

- ``arch``: the architecture analyze names (from the release's suffix, or ``tsc:`` lines for x86);
  absent where the log does not say.
- ``cpus``: the CPUs the kernel brought up (``smp: Brought up N nodes, M CPUs`` and its older forms).
- ``memory_gib``: the kernel's total memory (the second number of ``Memory: A/B available``),
  rounded up to the next usual size, 1, 1.5, 2, 3, 4, 6, 8, 12 ... GiB (halved again below 1 GiB:
  0.75, 0.5, 0.375 ...): the kernel counts less than is fitted (firmware and reserved memory), so a
  4 GiB machine says 3.9 GiB and a 1.5 TiB server 1535.7 GiB.
"""

from __future__ import annotations

from collections.abc import Mapping

from bootscope.model import Identity

ARCH = "arch"
CPUS = "cpus"
MEMORY_GIB = "memory_gib"
KERNEL_SERIES = "kernel_series"
LOG_FIELDS = (ARCH, CPUS, MEMORY_GIB)
# fields whose values are decimal numbers (sorted as such: 0.0625 before 0.75 before 4)
DECIMAL_FIELDS = (MEMORY_GIB,)
_KIB_PER_GIB = 1 << 20
# The kernel may count a little more than a round size (a few MiB of a 4 GiB board): within 1 %
# of a size is that size.
_SIZE_SLACK = 1.01
_SMALLEST_GIB = 1 / 64  # 16 MiB: below it, the size itself


def memory_bucket_gib(memory_kib: int) -> float:
    """Return the usual memory size (GiB) that ``memory_kib`` (KiB the kernel counts) rounds up to:
    the smallest of 2**k and 1.5 * 2**k GiB not below it (within 1 %). Raises ValueError for a
    size that is not positive."""
    if memory_kib <= 0:
        raise ValueError(f"a memory size must be positive, not {memory_kib} KiB")
    gib = memory_kib / _KIB_PER_GIB / _SIZE_SLACK
    size = _SMALLEST_GIB
    while True:
        for candidate in (size, size * 1.5):
            if candidate >= gib:
                return candidate
        size *= 2


def format_gib(size_gib: float) -> str:
    """Return a size in GiB as the field's text: ``4``, ``1536``, ``0.75``, ``0.0625``."""
    return f"{size_gib:.0f}" if size_gib >= 1 else f"{size_gib:g}"


def log_fields(identity: Identity, given: Mapping[str, str] | None = None) -> dict[str, str]:
    """Return the fields a boot's log gives (``arch``, ``cpus``, ``memory_gib``; those it states), less
    any that ``given`` (the host's metadata) already holds."""
    found: dict[str, str] = {}
    if identity.arch:
        found[ARCH] = identity.arch
    if identity.cpus:
        found[CPUS] = str(identity.cpus)
    if identity.memory_kb:
        found[MEMORY_GIB] = format_gib(memory_bucket_gib(identity.memory_kb))
    return {key: value for key, value in found.items() if not given or key not in given}

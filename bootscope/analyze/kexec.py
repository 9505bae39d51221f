"""Split a captured kexec chain into its reboots and measure each one from the host's time stamps.

Hop 0 is the kernel QEMU started; hop k >= 1 is the k-th kexec reboot, and its metrics span the old
kernel's last markers and the new kernel's lines:

- ``kexec_downtime_s``: host arrival of the old kernel's ``kexec-exec`` marker (printed just before
  ``kexec -e``) to host arrival of the new kernel's ``init`` marker.
- ``kexec_blind_s``: host time from that ``kexec-exec`` marker to the new kernel's printk time zero,
  i.e. purgatory, decompression and the setup before the kernel's clock starts. The new kernel's first
  lines reach the serial port late (printk buffers them until the console registers), so time zero is
  placed by the latest timed kernel line before the ``init`` marker: its host arrival minus its printk
  time.
- ``kexec_load_s``: host time between the old kernel's ``kexec-prep`` and ``kexec-load`` markers, the
  ``kexec -l``/``-s`` call that loaded this hop's kernel.
- ``kernel_init_s``, ``userspace_s``: the new kernel's own, as for any boot (``analyze_boot``).

A capture that bootscope did not make (grabserial on real hardware) has no markers: ``analyze`` pairs
its boots itself (bootscope.analyze.handover), from the old kernel's ``Starting new kernel`` line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from bootscope import defaults
from bootscope.analyze import analyze_boot
from bootscope.errors import ParseError
from bootscope.model import Boot, LogLine, Metrics, Outcome
from bootscope.parse import parse_captured

# Printed by the chain's /init (bootscope.lab.qemu.kexec_chain), e.g. "BOOTSCOPE-MARKER kexec-exec uptime=6.49
# hop=0"; the plain initramfs prints "BOOTSCOPE-MARKER uptime=3.28" (no name: it is the init marker).
MARKER_RE = re.compile(
    re.escape(defaults.MARKER_PREFIX)
    + r"(?: (?P<name>[A-Za-z][\w-]*))? uptime=(?P<up>\d+(?:\.\d+)?)(?: hop=(?P<hop>\d+))?"
)
ERROR_RE = re.compile(r"BOOTSCOPE-KEXEC-ERROR(?: hop=(?P<hop>\d+))?\s*(?P<text>.*)")
_NS_PER_S = 1e9


@dataclass(frozen=True, slots=True)
class MarkerStamp:
    """One marker line: its name, the guest uptime it printed (s) and its host arrival (ns)."""

    name: str
    uptime_s: float
    hop: int | None
    host_ns: int | None


@dataclass(frozen=True, slots=True)
class KexecHop:
    """One kernel of a chain: ``hop`` 0 is the boot QEMU started, k >= 1 the k-th kexec reboot.

    ``lines`` are this kernel's own lines (for a failed load: the guest's error line). ``metrics``
    carries the kexec fields for k >= 1 (None where a marker is missing). ``start_host_ns`` is when
    this kernel's boot began on the host: QEMU's start for hop 0, the ``kexec-exec`` marker's arrival
    for a reboot (None if unknown).
    """

    hop: int
    lines: tuple[LogLine, ...]
    outcome: Outcome
    reason: str
    metrics: Metrics
    markers: tuple[MarkerStamp, ...] = ()
    start_host_ns: int | None = None
    # The same kernel's lines as captured (printk prefixes and all), for the store: re-parsing them
    # gives ``lines`` again, which re-parsing ``lines`` cannot (their timestamps are split off).
    raw_lines: tuple[LogLine, ...] = ()

    @property
    def is_reboot(self) -> bool:
        """True for a kexec reboot (hop >= 1), False for the boot QEMU started."""
        return self.hop >= 1


def markers(lines: Sequence[LogLine]) -> tuple[MarkerStamp, ...]:
    """Return every marker in ``lines`` in order (a nameless marker is named ``init``)."""
    found: list[MarkerStamp] = []
    for line in lines:
        match = MARKER_RE.search(line.text)
        if match is not None:
            hop = match.group("hop")
            found.append(
                MarkerStamp(
                    name=match.group("name") or "init",
                    uptime_s=float(match.group("up")),
                    hop=int(hop) if hop is not None else None,
                    host_ns=line.host_ns,
                )
            )
    return tuple(found)


def _split_with_raw(
    lines: Sequence[LogLine],
) -> list[tuple[tuple[LogLine, ...], tuple[LogLine, ...]]]:
    """Return (parsed lines, captured lines) per kernel: each kernel's captured lines run from the
    captured line its first parsed line came from to the next kernel's."""
    try:
        boots = [tuple(boot) for boot in parse_captured(lines).boots if boot]
    except ParseError:
        return [(tuple(lines), tuple(lines))] if lines else []
    cuts = [0]
    for boot in boots[1:]:
        first = boot[0]
        position = next(
            (
                index
                for index in range(cuts[-1], len(lines))
                if lines[index].host_ns == first.host_ns and lines[index].text.endswith(first.text)
            ),
            None,
        )
        if position is None:  # not found (should not happen): keep the parsed lines for the store
            return [(boot, boot) for boot in boots]
        cuts.append(position)
    cuts.append(len(lines))
    return [(boot, tuple(lines[cuts[k] : cuts[k + 1]])) for k, boot in enumerate(boots)]


def _first(stamps: Sequence[MarkerStamp], name: str) -> MarkerStamp | None:
    return next((stamp for stamp in stamps if stamp.name == name), None)


def _seconds(start_ns: int | None, end_ns: int | None) -> float | None:
    if start_ns is None or end_ns is None:
        return None
    return (end_ns - start_ns) / _NS_PER_S


def clock_zero_ns(lines: Sequence[LogLine], before_ns: int | None = None) -> int | None:
    """Return the host time (ns) at which this kernel's printk clock read zero, or None.

    Uses the latest line with both a printk time and a host time that arrived no later than
    ``before_ns``: its host arrival minus its printk time (the later the line, the less printk's
    buffering before the console registered distorts it).
    """
    anchor: LogLine | None = None
    for line in lines:
        if line.guest_s is None or line.host_ns is None:
            continue
        if before_ns is not None and line.host_ns > before_ns:
            break
        anchor = line
    if anchor is None or anchor.guest_s is None or anchor.host_ns is None:
        return None
    return anchor.host_ns - round(anchor.guest_s * _NS_PER_S)


def _errors(lines: Sequence[LogLine]) -> list[tuple[LogLine, str]]:
    found = []
    for line in lines:
        match = ERROR_RE.search(line.text)
        if match is not None:
            found.append((line, match.group("text").strip() or "kexec failed (no message)"))
    return found


def _kernel_metrics(lines: Sequence[LogLine], start_ns: int | None) -> Metrics:
    try:
        return analyze_boot(list(lines), host_start_ns=start_ns).metrics
    except ParseError:
        return Metrics()


def chain_hops(chain: Boot, hops_planned: int | None = None) -> tuple[KexecHop, ...]:
    """Return the chain's kernels as KexecHops, hop 0 first, with per-reboot metrics in seconds.

    A kernel that printed its ``init`` marker is ok. After the last such kernel the chain's fault
    becomes one failed hop: the guest's ``BOOTSCOPE-KEXEC-ERROR`` text (outcome kexec-error), or the
    QEMU run's own outcome (timeout, panic, qemu-error), or, if the guest powered off early without
    saying why, kexec-error. Every hop completed before a fault is returned. ``hops_planned`` is the
    number of kexec reboots asked for (None: do not check). Never raises on a hostile log.
    """
    segments = _split_with_raw(chain.lines)
    result: list[KexecHop] = []
    previous_stamps: tuple[MarkerStamp, ...] = ()
    previous_lines: tuple[LogLine, ...] = ()
    for position, (segment, raw) in enumerate(segments):
        stamps = markers(segment)
        init = _first(stamps, "init")
        hop = init.hop if init is not None and init.hop is not None else position
        exec_stamp = _first(previous_stamps, "kexec-exec") if position else None
        if position and exec_stamp is None:
            # The previous kernel never reached kexec -e, yet a new printk clock started: a reset
            # (panic=-1, triple fault) that QEMU's -no-reboot did not catch, or a clock that jumped.
            # Nothing here is a kexec reboot; keep the lines with the hop before.
            if result:
                last = result[-1]
                result[-1] = replace(last, lines=last.lines + segment, raw_lines=last.raw_lines + raw)
            continue
        start_ns = exec_stamp.host_ns if exec_stamp is not None else chain.host_start_ns
        metrics = _kernel_metrics(segment, start_ns)
        if position:
            assert exec_stamp is not None
            init_ns = init.host_ns if init is not None else None
            zero_ns = clock_zero_ns(segment, init_ns)
            metrics = replace(
                metrics,
                kexec_downtime_s=_seconds(exec_stamp.host_ns, init_ns),
                kexec_blind_s=_seconds(exec_stamp.host_ns, zero_ns),
                kexec_load_s=_seconds(
                    _host_ns(previous_stamps, "kexec-prep"), _host_ns(previous_stamps, "kexec-load")
                ),
            )
        if init is not None:
            outcome, reason = Outcome.OK, ""
        else:
            outcome, reason = _fault(chain, f"kernel {hop} never printed its init marker")
        result.append(KexecHop(hop, segment, outcome, reason, metrics, stamps, start_ns, raw))
        previous_stamps, previous_lines = stamps, segment
        if outcome is not Outcome.OK:
            return tuple(result)
    if not result:
        outcome, reason = _fault(chain, "the first kernel printed nothing")
        return (KexecHop(0, tuple(chain.lines), outcome, reason, Metrics()),)
    last = result[-1]
    errors = _errors(previous_lines)
    next_hop = last.hop + 1
    if errors:
        text = " | ".join(message for _, message in errors)
        failed_lines = tuple(line for line, _ in errors)
        result.append(KexecHop(next_hop, failed_lines, Outcome.KEXEC_ERROR, text, Metrics()))
    elif chain.outcome is not Outcome.OK:
        outcome, reason = _fault(chain, "")
        result.append(KexecHop(next_hop, (), outcome, reason, Metrics()))
    elif hops_planned is not None and last.hop < hops_planned:
        reason = f"the guest powered off after kexec reboot {last.hop} of {hops_planned} without an error"
        result.append(KexecHop(next_hop, (), Outcome.KEXEC_ERROR, reason, Metrics()))
    return tuple(result)


def _host_ns(stamps: Sequence[MarkerStamp], name: str) -> int | None:
    stamp = _first(stamps, name)
    return stamp.host_ns if stamp is not None else None


def _fault(chain: Boot, fallback: str) -> tuple[Outcome, str]:
    """The outcome of a kernel that did not finish: the QEMU run's, or kexec-error if QEMU was fine."""
    if chain.outcome is not Outcome.OK:
        return chain.outcome, chain.reason or fallback
    return Outcome.KEXEC_ERROR, fallback or "the chain stopped early"

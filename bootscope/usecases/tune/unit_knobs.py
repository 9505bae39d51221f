"""systemd units `bootscope tune` may mask: the slow services of systemd's own accounting.

systemd's accounting (printed by the image's collector after the prompt) names the units the
default target waited for and how long each took to start (``critical-chain``) and how long every
unit took (``blame``). The chain alone misses a oneshot without ``RemainAfterExit=``: it is never
"active", so the chain goes through another unit even when the target waited for the oneshot (the
test image's bootscope-delay.service, sleeping 5 s, is in blame and absent from the chain). A
service in either that took at least ``SLOW_UNIT_S`` is a candidate for ``systemd.mask=UNIT`` on the
kernel command line (systemd reads it at boot; see systemd(1), "Kernel Command Line"): risk
``feature``, since whatever the unit does is no longer done. Units a measurable boot needs are never
proposed: systemd's own plumbing (``systemd-*.service``: udev, the journal, remounting the root,
tmpfiles, logind...; its wait-online services excepted, the classic slow units that only wait;
``modprobe@*`` and ``kmod-static-nodes``),
D-Bus, the gettys (the login prompt) and bootscope's collector (the accounting itself). A user can
still ask for one with ``--try``; the tuned boots then show what broke.
"""

from __future__ import annotations

import re

from bootscope.model import SystemdAccounting
from bootscope.usecases.tune.knob import FEATURE, Knob

SLOW_UNIT_S = 0.5
SLOW_UNITS_TRIED = 3
SOURCE = "systemd(1), kernel command line systemd.mask=; systemd-analyze critical-chain and blame"
_NEVER_MASKED = re.compile(
    r"^(?:systemd-.*|dbus.*|(?:serial-)?getty@.*|modprobe@.*|kmod-static-nodes\.service"
    r"|bootscope-collect\.service)$"
)
_WAITS_ONLY = re.compile(r"^systemd-(?:networkd-wait-online|time-wait-sync)\.service$")


def unit_knobs(accounting: SystemdAccounting | None, masked: set[str]) -> list[Knob]:
    """Return a ``systemd.mask=`` knob for each of the slowest services (at most SLOW_UNITS_TRIED)
    in ``accounting``'s critical chain or blame that took at least SLOW_UNIT_S, other than those in
    ``masked`` (already masked) and those a measurable boot needs."""
    if accounting is None:
        return []
    slow: dict[str, float] = {}
    where: dict[str, str] = {}
    timed = [(link.unit, link.took_s or 0.0, "on the critical chain") for link in accounting.critical_chain]
    timed += [(unit, took, "in systemd-analyze blame") for unit, took in accounting.blame]
    for unit, took, seen in timed:
        if took < SLOW_UNIT_S or not unit.endswith(".service") or unit in masked:
            continue
        if _NEVER_MASKED.match(unit) and not _WAITS_ONLY.match(unit):
            continue
        if took > slow.get(unit, 0.0):
            slow[unit], where[unit] = took, seen
    ranked = sorted(slow.items(), key=lambda item: -item[1])[:SLOW_UNITS_TRIED]
    return [
        Knob(
            f"+systemd.mask={unit}",
            FEATURE,
            SOURCE,
            f"{unit} not started: what it does is not done",
            f"{unit} took {took:.2f} s {where[unit]}",
            add=(f"systemd.mask={unit}",),
        )
        for unit, took in ranked
    ]

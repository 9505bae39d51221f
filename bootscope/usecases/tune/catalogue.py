"""The knobs `bootscope tune` may try, and which of them one boot gives a reason to try.

A knob is a change to the kernel command line: words removed (by their name before ``=``) and words
added. Each carries its risk class (``safe``: nothing is lost; ``feature``: something is switched
off; ``unsafe``: security or correctness traded away), where it is documented or measured, what it
should save, and the evidence in this boot that the sink it removes is there. A knob is proposed
only with such evidence: a command line that prints every initcall, a console that prints hundreds
of lines, a slow initcall (here); machine checks that ran (``machine_knobs.py``); slow services on
systemd's critical chain (``unit_knobs.py``); devices of QEMU's PC machine the kernel met, for a
QEMU guest (``qemu_knobs.py``). The knob type and command-line editing are in
``knob.py``.
"""

from __future__ import annotations

from collections.abc import Sequence

from bootscope.analyze.systemd import systemd_accounting
from bootscope.errors import InputError
from bootscope.metrics import Clock
from bootscope.metrics import definition as metric_of
from bootscope.model import Breakdown, LogLine
from bootscope.usecases.tune.knob import (
    FEATURE,
    PARAMETERS_DOC,
    RISKS,
    SAFE,
    UNSAFE,
    Knob,
    masked_units,
    word_key,
    words_of,
)
from bootscope.usecases.tune.machine_knobs import machine_knobs
from bootscope.usecases.tune.qemu_knobs import qemu_knobs
from bootscope.usecases.tune.unit_knobs import unit_knobs

# A console that prints more lines than this pays for each one (a serial console: 10 to 100 us a
# character at 115200 baud); fewer is not worth a boot's time to try.
QUIET_MIN_LINES = 300
# Initcalls at least this slow are proposed for initcall_blacklist (feature: the driver is lost).
SLOW_INITCALL_US = 20_000
SLOW_INITCALLS_TRIED = 3


def _console_knobs(append: str, breakdown: Breakdown, console_metric: bool) -> list[Knob]:
    words = {word_key(w) for w in words_of(append)}
    found = []
    if "initcall_debug" in words:
        found.append(
            Knob(
                "-initcall_debug",
                SAFE,
                f"{PARAMETERS_DOC} (initcall_debug)",
                "no two console lines per initcall",
                f"{breakdown.initcalls.count} initcalls printed",
                remove=("initcall_debug",),
            )
        )
    if "ignore_loglevel" in words:
        found.append(
            Knob(
                "-ignore_loglevel",
                SAFE,
                f"{PARAMETERS_DOC} (ignore_loglevel)",
                "debug messages no longer printed on the console",
                f"{breakdown.line_count} console lines",
                remove=("ignore_loglevel",),
            )
        )
    if not words & {"quiet", "loglevel"} and breakdown.line_count >= QUIET_MIN_LINES and not console_metric:
        found.append(
            Knob(
                "+quiet",
                SAFE,
                f"{PARAMETERS_DOC} (quiet)",
                "only warnings and worse printed on the console",
                f"{breakdown.line_count} console lines",
                add=("quiet",),
            )
        )
    return found


def _initcall_knobs(breakdown: Breakdown) -> list[Knob]:
    slow = sorted(
        (c for c in breakdown.initcalls.all if (c.duration_us or 0) >= SLOW_INITCALL_US),
        key=lambda c: -(c.duration_us or 0),
    )
    return [
        Knob(
            f"+initcall_blacklist={call.name}",
            FEATURE,
            f"{PARAMETERS_DOC} (initcall_blacklist)",
            f"{call.name} not run: its driver is lost",
            f"{call.name} took {(call.duration_us or 0) / 1000:.1f} ms",
            add=(f"initcall_blacklist={call.name}",),
        )
        for call in slow[:SLOW_INITCALLS_TRIED]
    ]


def candidates(
    append: str,
    breakdown: Breakdown,
    lines: Sequence[LogLine],
    metric: str,
    allow: Sequence[str] = (),
    only: Sequence[str] = (),
    qemu_args: Sequence[str] | None = None,
) -> list[Knob]:
    """Return the knobs this boot gives a reason to try for ``metric``, safe ones first: those of
    risk ``feature`` or ``unsafe`` only when ``allow`` names that class; with ``only``, those whose
    name (without its leading ``+``/``-``) starts with one of them. ``quiet`` is never proposed for a
    metric read on the kernel's printk clock: it silences the lines that metric is read from (the
    kernel's ``Run /init`` line is an info message). ``qemu_args``: the QEMU guest's own options
    (None: not a QEMU guest, so no ``-machine`` knob). Raises InputError for an unknown risk class."""
    unknown = [risk for risk in allow if risk not in (FEATURE, UNSAFE)]
    if unknown:
        raise InputError(f"--allow {unknown[0]}: choose {FEATURE} or {UNSAFE}")
    allowed = {SAFE, *allow}
    if UNSAFE in allowed:
        allowed.add(FEATURE)
    console_metric = metric_of(metric).clock == Clock.GUEST_PRINTK
    words = {word_key(w) for w in words_of(append)}
    found = [
        *_console_knobs(append, breakdown, console_metric),
        *machine_knobs(words, breakdown, lines),
        *_initcall_knobs(breakdown),
        *(qemu_knobs(lines, qemu_args) if qemu_args is not None else ()),
        *unit_knobs(systemd_accounting(lines), set(masked_units(append))),
    ]
    kept = [k for k in found if k.risk in allowed]
    if only:
        kept = [k for k in kept if any(k.name[1:].startswith(prefix.lstrip("+-")) for prefix in only)]
    return sorted(kept, key=lambda k: RISKS.index(k.risk))

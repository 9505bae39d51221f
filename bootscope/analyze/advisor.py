"""Match a Breakdown against known boot-time sinks, and say what addresses each on this kind of machine.

Every rule reads the Breakdown (phases, gaps, initcalls, CPU bring-up, identity) and the machine facts
of the log's head (``machine.py``), quotes its evidence, and suggests only what the boot does not
already do. ``cost_s`` is the time the evidence shows (None where the log cannot say). The silences
between lines are read in ``advice_gaps.py``. Remedies cite where to read more: a kernel file or
documentation path, or a public talk or mailing-list thread, never this project's own notes.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bootscope.analyze.advice_basis import PARAMS, TALK, big, kernel_version, version_text
from bootscope.analyze.advice_gaps import GAP_RULES
from bootscope.analyze.cpus import announced_in_parallel
from bootscope.analyze.machine import HARDWARE, VM, MachineFacts
from bootscope.model import Advice, Breakdown

Rule = Callable[[Breakdown, MachineFacts], Advice | None]

# Below this much memory, struct page initialisation cannot explain a slow setup phase (about 3 ms per
# GiB on the 512 GiB server of the LPC 2023 talk cited below: 1.7 s).
MIN_STRUCT_PAGE_MEMORY_KB = 8 * 1024 * 1024

# x86_64 brings secondary CPUs up in parallel by default from Linux 6.5 (arch/x86/Kconfig selects
# HOTPLUG_PARALLEL for SMP && X86_64; kernel/cpu.c cpuhp.parallel defaults on).
PARALLEL_SINCE = (6, 5)
_PARALLEL_OFF_ARG = re.compile(r"(?:^|\s)cpuhp\.parallel=(?:0|n|no|off|false)\b", re.IGNORECASE)
_TSC_RELIABLE = re.compile(r"(?:^|\s)tsc=(?:\S*,)?reliable\b")
# initcall_debug's lines are KERN_DEBUG (init/main.c): a console shows them only when its level lets
# debug messages through (kernel/printk/printk.c): ignore_loglevel, loglevel=8 or more, or "debug".
_VERBOSE_CONSOLE = re.compile(r"(?:^|\s)(?:ignore_loglevel|debug|loglevel=(?:[89]|\d\d+))(?:\s|$)")
# console=ttyS0, ttyAMA0, ttymxc0...: a serial console (console=tty0/tty1 is the screen).
_SERIAL_CONSOLE = re.compile(r"(?:^|\s)console=tty(?![0-9])[A-Za-z]")


def advise(b: Breakdown, machine: MachineFacts | None = None) -> tuple[Advice, ...]:
    """Return advice for the known sinks this boot shows, costliest first (cost in seconds).

    ``machine`` (from ``machine.read_machine``) lets the advice fit a virtual machine or hardware;
    without it the advice names both. Raises nothing.
    """
    facts = machine if machine is not None else MachineFacts()
    found: list[Advice] = []
    for rule in (*_RULES, *GAP_RULES):
        advice = rule(b, facts)
        if advice is not None:
            found.append(advice)
    return tuple(sorted(found, key=lambda a: -(a.cost_s or 0.0)))


def _struct_pages(b: Breakdown, machine: MachineFacts) -> Advice | None:
    # The talk cited below: 1.7 s (40 %) before "Memory: ... available" on a 512 GiB server, removed
    # by deferring struct page initialisation.
    phase = next((p for p in b.phases if p.name == "setup"), None)
    memory_kb = b.identity.memory_kb
    if phase is None or not big(phase.duration_s, b) or "deferred_pages_done" in b.milestones:
        return None
    if memory_kb is None or memory_kb < MIN_STRUCT_PAGE_MEMORY_KB or b.identity.arch in ("x86", "arm"):
        return None  # too little memory to explain it, or a 32-bit kernel (no deferred init there)
    return Advice(
        "struct page initialisation before 'Memory: ... available' (likely)",
        f"{phase.duration_s:.3f} s from the first line to the 'Memory:' line with"
        f" {memory_kb / 1024 / 1024:.0f} GiB of memory, and no 'node N deferred pages initialised' line",
        phase.duration_s,
        "CONFIG_DEFERRED_STRUCT_PAGE_INIT=y (mm/Kconfig) initialises most struct pages later, in"
        " parallel threads per node; it cut 1.7 s on a 512 GiB server in " + TALK,
    )


def _serial_smpboot(b: Breakdown, machine: MachineFacts) -> Advice | None:
    cpus = b.cpu_bringup
    secondaries = (b.identity.cpus - 1) if b.identity.cpus else len(cpus.cpus)
    if cpus.serial_s is None or secondaries < 1 or not big(cpus.serial_s, b):
        return None
    remedy = _parallel_remedy(b, machine)
    if remedy is None:
        return None
    seen = f"{secondaries} secondary CPUs brought up in {cpus.serial_s:.3f} s"
    if cpus.parallel_estimate_s is None:
        return Advice("secondary CPUs are brought up one at a time", seen, cpus.serial_s, remedy)
    saving = cpus.serial_s - cpus.parallel_estimate_s
    seen += f"; the slowest CPU alone took {cpus.parallel_estimate_s:.3f} s"
    return Advice("secondary CPUs are brought up one at a time", seen, saving, remedy)


def _parallel_remedy(b: Breakdown, machine: MachineFacts) -> str | None:
    """What brings CPUs up in parallel on this kernel, or None where it already does (or cannot)."""
    arch = b.identity.arch
    version = kernel_version(b.identity.release)
    where = f"cpuhp.parallel= in {PARAMS}"
    if arch not in ("x86_64", "x86"):
        return (
            "mainline brings CPUs up in parallel on x86_64 since 6.5 (CONFIG_HOTPLUG_PARALLEL); whether"
            f" {arch or 'this architecture'} can depends on whether its arch/*/Kconfig selects"
            " HOTPLUG_PARALLEL"
        )
    kicked = announced_in_parallel(b.cpu_bringup)
    if kicked or machine.parallel_off_line is not None:
        return None  # already parallel (a backport, say), or the platform rules it out
    if _PARALLEL_OFF_ARG.search(b.identity.cmdline or ""):
        return f"remove cpuhp.parallel=off from the command line ({where})"
    if b.identity.release and b.identity.release.endswith(("686", "686-pae")):
        return None  # 32-bit x86 has no parallel bring-up
    if version is not None and version >= PARALLEL_SINCE:
        if kicked is None:
            return None  # on by default, and nothing in the log says otherwise
        return (
            f"Linux {version_text(version)} brings CPUs up in parallel by default, yet this boot did not:"
            f" check CONFIG_HOTPLUG_PARALLEL=y ({where})"
        )
    now = "the log does not name the kernel" if version is None else f"this kernel is {version_text(version)}"
    return (
        f"Linux 6.5+ brings x86_64 CPUs up in parallel by default ({where}; arch/x86/kernel/smpboot.c);"
        f" {now}; it cut bring-up of 128 CPUs from 1.7 s to 60 ms in " + TALK
    )


def _tsc_sync(b: Breakdown, machine: MachineFacts) -> Advice | None:
    # The "CPU#N up in a, b, c, d ( total)" cycle lines come from David Woodhouse's timing patch
    # (LKML, "Re: [PATCH] use x86 cpu park to speedup smp_init in kexec situation", 2021-01-19); under
    # QEMU the third wait, check_tsc_sync_source(), took 60M cycles per CPU.
    timed = [c for c in b.cpu_bringup.cpus if len(c.phases_cycles) >= 3 and c.total_cycles]
    if not timed or _TSC_RELIABLE.search(b.identity.cmdline or ""):
        return None
    sync = sum(c.phases_cycles[2] for c in timed)
    total = sum(c.total_cycles or 0 for c in timed)
    if total == 0 or sync / total < 0.5:
        return None
    seconds = [
        c.duration_s * c.phases_cycles[2] / c.total_cycles for c in timed if c.duration_s and c.total_cycles
    ]
    if machine.kind == VM:
        when = "where the hypervisor guarantees a stable TSC shared by all vCPUs (KVM with invariant TSC)"
    elif machine.kind == HARDWARE:
        when = "only on a machine whose TSCs are known to stay in step (one socket, invariant TSC)"
    else:
        when = "only where the TSCs are known to stay in step (a VM whose hypervisor guarantees it)"
    return Advice(
        "TSC synchronisation check dominates CPU bring-up",
        f"{sync} of {total} bring-up cycles ({sync / total:.0%}) were spent in the TSC sync phase"
        f" over {len(timed)} CPUs",
        sum(seconds) if seconds else None,
        f"tsc=reliable ({PARAMS}) skips the bring-up sync check (arch/x86/kernel/tsc_sync.c), {when};"
        " a wrong tsc=reliable hides real clock skew",
    )


# What some initcalls spend their time on, and what removes it (initcall -> (why, remedy)).
_KNOWN_INITCALLS: dict[str, tuple[str, str]] = {
    "crypto_algapi_init": (
        "it runs the self-tests of the built-in crypto algorithms at late_initcall (crypto/algapi.c)",
        "CONFIG_CRYPTO_MANAGER_DISABLE_TESTS=y or cryptomgr.notests on the command line skips the"
        " self-tests (crypto/testmgr.c), at the price of not testing the algorithms (FIPS needs them)",
    ),
}


def _slow_initcall(b: Breakdown, machine: MachineFacts) -> Advice | None:
    top = b.initcalls.top[0] if b.initcalls.top else None
    if top is None or top.duration_us is None or not big(top.duration_us / 1e6, b):
        return None
    seen = f"initcall {top.name}" + (f" [{top.module}]" if top.module else "")
    seen += f" returned after {top.duration_us} usecs"
    known = _KNOWN_INITCALLS.get(top.name)
    if known is not None:
        return Advice(f"initcall {top.name} is slow", f"{seen}; {known[0]}", top.duration_us / 1e6, known[1])
    if top.module:
        remedy = (
            f"if the machine does not need {top.module}, keep it from loading"
            f" (modprobe.blacklist={top.module});"
            f" else let it probe asynchronously (driver_async_probe=, {PARAMS})"
        )
    else:
        remedy = (
            f"initcall_blacklist={top.name} boots without it to confirm the cost; a driver the machine"
            " does not need can be left out of the kernel, a needed one can probe asynchronously"
            f" (driver_async_probe=; both in {PARAMS})"
        )
    return Advice(f"initcall {top.name} is slow", seen, top.duration_us / 1e6, remedy)


def _serial_console(b: Breakdown, machine: MachineFacts) -> Advice | None:
    cmdline = b.identity.cmdline or ""
    if "initcall_debug" not in cmdline or not _SERIAL_CONSOLE.search(cmdline):
        return None
    if not _VERBOSE_CONSOLE.search(cmdline):
        return None  # the console's level keeps initcall_debug's KERN_DEBUG lines off the serial line
    return Advice(
        "initcall_debug on a serial console slows the boot it measures",
        f"command line '{cmdline[:100]}' lets every initcall line through to a serial console",
        None,
        "measure headline times without initcall_debug, or drop ignore_loglevel/loglevel=8 so its lines"
        f" stay in the ring buffer (read them with dmesg) and off the console ({PARAMS}: initcall_debug,"
        " loglevel=); use initcall_debug only to find the slow initcall",
    )


_RULES: tuple[Rule, ...] = (_struct_pages, _serial_smpboot, _tsc_sync, _slow_initcall, _serial_console)

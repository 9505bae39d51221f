"""What a log with no timestamps still says: release, command line, CPU count, initcall durations.

A console captured without ``printk.time`` (or pasted from a 2.6-era mail) cannot be split into
timed phases, but its text names the kernel, its command line, how many CPUs came up, and, with
``initcall_debug``, how long each initcall took. ``read_untimed`` collects those in one pass.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from bootscope.parse.bootstage import BootstageReader
from bootscope.parse.patterns import DONE_TAIL, initcall_duration_us
from bootscope.prekernel import BootstageReport

# init/main.c start_kernel() prints linux_banner (init/version.c)
_BANNER_RE = re.compile(r"Linux version (\S+)")
# 2.6 arch/x86/kernel/process_{32,64}.c __show_regs() and lib/dump_stack.c (3.x on): a warning's
# "Pid: N, comm: NAME Not tainted RELEASE #BUILD" or "CPU: N PID: N Comm: NAME Tainted: ... RELEASE #N"
_TAINT_RE = re.compile(r"(?:Not tainted|Tainted: [A-Z ]*?) (\d+\.\d+\S*) #")
# arch/x86/kernel/setup.c setup_arch() ("Command line:") and init/main.c start_kernel()
_CMDLINE_RE = re.compile(r"(?:Kernel )?[Cc]ommand line: (.*)")
# kernel/smp.c smp_init() "smp: Brought up N nodes, M CPUs" (4.x on); init/main.c smp_init() in
# 2.6 and 3.x "Brought up N CPUs"; arch/x86/kernel/smpboot.c "Total of N processors activated"
# and arch/arm64/kernel/smp.c "SMP: Total of N processors activated."
_CPUS_RES = (
    re.compile(r"smp: Brought up \d+ nodes?, (\d+) CPUs?"),
    re.compile(r"Brought up (\d+) CPUs?\b"),
    re.compile(r"(?:smpboot: |SMP: )?Total of (\d+) processors activated"),
)
# init/main.c do_one_initcall_debug(): "initcall NAME returned R after N usecs" (2.6.29 on) and
# "... after N msecs" (2.6.25 to 2.6.28, where the name may carry "()" after its offset)
_INITCALL_RE = re.compile(r"initcall (\S+?)(?:\+0x[0-9a-f]+/0x[0-9a-f]+)?(?:\(\))?(?: \[\S+\])?" + DONE_TAIL)


@dataclass(frozen=True, slots=True)
class UntimedInitcall:
    """One initcall's own report: its name, return value and duration (``duration_us``)."""

    name: str
    returned: int
    duration_us: int


@dataclass(frozen=True, slots=True)
class UntimedFacts:
    """What an untimed log says; ``None`` where it did not say. Durations are the kernel's own text."""

    release: str | None
    cmdline: str | None
    cpus: int | None
    initcalls: tuple[UntimedInitcall, ...]
    bootstage: BootstageReport | None = None  # the boot loader's report (the last one)


def read_untimed(lines: Iterable[str]) -> UntimedFacts:
    """Return the release, command line, CPU count and initcall durations found in ``lines``.

    Each message may sit anywhere in a line (consoles prefix them with levels or noise). The last
    banner, command line and CPU count win (the last boot of the log). Never raises on odd text.
    """
    release = tainted = cmdline = None
    cpus: int | None = None
    initcalls: list[UntimedInitcall] = []
    stages = BootstageReader()
    for line in lines:
        stages.feed(line)
        if "initcall " in line and (m := _INITCALL_RE.search(line)):
            initcalls.append(UntimedInitcall(m[1], int(m[2]), initcall_duration_us(m[3], m[4])))
            continue
        if (m := _BANNER_RE.search(line)) is not None:
            release, cpus, initcalls = m[1], None, []
            continue
        if "ommand line: " in line and (m := _CMDLINE_RE.search(line)):
            cmdline = m[1].rstrip()
            continue
        if "ainted" in line and (m := _TAINT_RE.search(line)):
            tainted = m[1]
            continue
        if "Brought up" in line or "Total of" in line:
            for regex in _CPUS_RES:
                if (m := regex.search(line)) is not None:
                    cpus = int(m[1])
                    break
    return UntimedFacts(release or tainted, cmdline, cpus, tuple(initcalls), stages.report())

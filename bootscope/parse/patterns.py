"""Every kernel message that bootscope understands, in one table.

Each entry is anchored at the start of a line's text (after the timestamp). ``COMBINED`` joins them
into one regex so that a whole boot is scanned in one pass (``finditer`` over the joined text); the
fields of a hit are read from the combined match itself (``GROUP_SLICES``).
Kernel source paths are those of Linux 6.1 unless noted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Pattern:
    """One kernel message: its regex (anchored where it is used), the kernel source that prints it.

    ``first`` holds every ASCII character a match can start with, so that the block scan tries the
    regex only on lines that start with one (tests/parse/test_block_fastpath.py checks it against
    the regex itself). ``follows`` narrows that to the first two characters: each entry is (first
    characters, the characters that can come second after any of them); a first character with no
    entry may be followed by anything. "\x80" stands for every non-ASCII character.
    ``prefixes`` pins first characters further: a match that starts with the first character of one
    of them starts with one of them (each at least four characters long); a pattern whose match can
    start with that character some other way must not list one (tests/parse/test_block_fastpath.py
    feeds each entry's own matches, written by hypothesis from the regex, and every real line in
    tests/data through the filters).
    """

    name: str
    regex: re.Pattern[str]
    source: str
    first: str
    follows: tuple[tuple[str, str], ...] = ()
    prefixes: tuple[str, ...] = ()


def _p(
    name: str,
    regex: str,
    source: str,
    first: str,
    follows: tuple[tuple[str, str], ...] = (),
    prefixes: tuple[str, ...] = (),
) -> Pattern:
    return Pattern(name, re.compile(regex), source, first, follows, prefixes)


# Whitespace that stays on its line: a line holds no newline, so per line this is \s, and a scan of a
# whole block of lines (bootscope.parse.chunked) can never match across a line end.
_SP = r"[^\S\n]"
_SP_CHARS = "".join(c for c in map(chr, range(128)) if c.isspace() and c != "\n")
# An initcall's name, then "+0xoff/0xsize" and " [module]" where printed. The name is the shortest run
# of non-space characters after which the rest matches, as a lazy \S+? would take it, but it only
# tries to end before a "+" or a space (the only characters the rest can start with), run by run:
# the lazy per-character form made the block scan twice as slow. 2.6.25's "%pF()" put "()" after
# the offset.
_FN_TOKEN = r"(\S[^\s+]*+(?:\+[^\s+]*+)*?)(?:\+0x[0-9a-f]+/0x[0-9a-f]+(?:\(\))?)?"
_FN = _FN_TOKEN + r"(?: \[([^\]\s]+)\])?"
# " @ PID" since 2.6.27; 2.6.25 and 2.6.26 printed the name alone. The line ends there (or a space
# follows), so that a name holding a "+" is not cut short where no pid follows.
_CALL_TAIL = r"(?: @ (\d+))?(?!\S)"
# "after N usecs" since 2.6.29; 2.6.25 to 2.6.28 printed "after N msecs" (the last group: "m"). Its
# groups: the return value, the number, the unit (initcall_duration_us reads the last two).
DONE_TAIL = r" returned (-?\d+) after (\d+) (?:usecs|(m)secs)"


def initcall_duration_us(number: str, unit: str | None) -> int:
    """Return a returned initcall's duration in us from DONE_TAIL's number and unit groups ("m":
    the number is in ms). Raises ValueError if ``number`` is not digits."""
    return int(number) * (1000 if unit else 1)


# kernel/panic.c prints "Kernel panic - not syncing: ..."; arch/x86/kernel/dumpstack.c prints "Oops: ..."
# (__die_header); "BUG: ..." comes from many places (arch/x86/mm/fault.c, kernel/watchdog.c,
# lib/list_debug.c). A boot whose console shows one of these has died (the lab stops it as a panic).
PANIC_RE = re.compile(r"(?:^|\]\s?)(?:Kernel panic - not syncing|Oops: |Oops$|BUG: )")

PATTERNS: tuple[Pattern, ...] = (
    # init/main.c start_kernel() prints linux_banner from init/version.c
    _p("banner", r"Linux version (\S+)", "init/version.c", "L", (("L", "i"),), ("Linux version ",)),
    # arch/x86/kernel/setup.c setup_arch() (x86) and init/main.c start_kernel() ("Kernel command line")
    _p(
        "cmdline",
        r"(?:Kernel )?[Cc]ommand line: (.*)",
        "arch/x86/kernel/setup.c, init/main.c",
        "KCc",
        (("K", "e"), ("Cc", "o")),
        ("Kernel command line: ", "Kernel Command line: ", "Command line: ", "command line: "),
    ),
    # arch/x86/kernel/tsc.c: "Detected %lu.%03lu MHz processor" and the refined calibration
    _p(
        "tsc_mhz",
        r"tsc: (?:Detected (\d+\.\d+) MHz processor|Refined TSC clocksource calibration: (\d+\.\d+) MHz)",
        "arch/x86/kernel/tsc.c",
        "t",
        (("t", "s"),),
        ("tsc: Detected ", "tsc: Refined TSC clocksource calibration: "),
    ),
    # arch/x86/kernel/smpboot.c prefill_possible_map()
    _p(
        "cpus_allowed",
        r"smpboot: Allowing (\d+) CPUs",
        "arch/x86/kernel/smpboot.c",
        "s",
        (("s", "m"),),
        ("smpboot: Allowing ",),
    ),
    # mm/page_alloc.c mem_init_print_info() (mm/mm_init.c since 6.5)
    # (a lowercase "k" before 3.11, as in "Memory: 760944k/760944k available")
    _p(
        "memory",
        r"Memory: (\d+)[Kk]/(\d+)[Kk] available",
        "mm/page_alloc.c",
        "M",
        (("M", "e"),),
        ("Memory: ",),
    ),
    # mm/slub.c kmem_cache_init(), called by mm_core_init() (mm/mm_init.c since 6.5; init/main.c
    # mm_init() before) right after mem_init(): the slab allocator's start, on every series with SLUB.
    # 6.12 prints the "Memory:" line later (mm/mm_init.c page_alloc_init_late(), after the secondary
    # CPUs), so this line ends the setup phase there (bootscope/analyze/phases.py)
    _p("slub", r"SLUB: HWalign=", "mm/slub.c", "S", (("S", "L"),), ("SLUB: HWalign=",)),
    # kernel/smp.c smp_init() since 4.11. Before it, x86 printed "x86: Booting SMP configuration:" and
    # "x86: Booted up N node(s), M CPUs" (arch/x86/kernel/smpboot.c native_cpu_up(), smp_announce())
    # and other arches "Brought up M CPUs" (kernel/smp.c smp_init()); group 1 (nodes) is then empty
    _p(
        "smp_start",
        r"(?:smp: Bringing up secondary CPUs|x86: Booting SMP configuration:)",
        "kernel/smp.c, arch/x86/kernel/smpboot.c (before 4.11)",
        "sx",
        (("s", "m"), ("x", "8")),
        ("smp: Bringing up secondary CPUs", "x86: Booting SMP configuration:"),
    ),
    _p(
        "smp_done",
        r"(?:(?:smp: Brought|x86: Booted) up (\d+) nodes?, |Brought up )(\d+) CPUs?",
        "kernel/smp.c, arch/x86/kernel/smpboot.c (before 4.11)",
        "sxB",
        (("s", "m"), ("x", "8"), ("B", "r")),
        ("smp: Brought up ", "x86: Booted up ", "Brought up "),
    ),
    # arch/x86/kernel/smpboot.c announce_cpu(): ".... node  #N, CPUs:  " then pr_cont("#N") per CPU;
    # a continuation shows up as its own line (" #2") when another message interrupts it
    _p(
        "cpu_progress",
        r"(?:(?:\.\.\.\. )?node" + _SP + r"+#\d+, CPUs:)?(?:" + _SP + r"*#\d+)+" + _SP + "*$",
        "arch/x86/kernel/smpboot.c",
        ".n#" + _SP_CHARS,
        ((".", "."), ("n", "o"), ("#", "0123456789\x80"), (_SP_CHARS, _SP_CHARS + "#\x80")),
        ("....", "node"),
    ),
    # The per-CPU timing printk of the parallel bring-up prototype in seed 002 (a patch to
    # arch/x86/kernel/smpboot.c do_wait_cpu()): four wait phases and the total, in TSC cycles
    _p(
        "cpu_up_cycles",
        r"CPU#(\d+) up in{0}(\d+),{0}(\d+),{0}(\d+),{0}(\d+){0}\({0}(\d+)\)".format(_SP + "*"),
        "arch/x86/kernel/smpboot.c (a CPU bring-up timing patch posted to LKML)",
        "C",
        (("C", "P"),),
        ("CPU#",),
    ),
    # mm/page_alloc.c deferred_init_memmap() (mm/mm_init.c since 6.5); older kernels printed the
    # page count too: "node 0 initialised, 32136731 pages in 1020ms" (5.6,
    # tests/data/hw/s390x-z14-lpar-5.6-dmesg.log)
    _p(
        "deferred_done",
        r"node (\d+) (?:deferred pages initialised|initialised, \d+ pages) in (\d+)ms",
        "mm/page_alloc.c",
        "n",
        (("n", "o"),),
        ("node ",),
    ),
    # drivers/base/devtmpfs.c devtmpfs_init()
    _p("devtmpfs", r"devtmpfs: initialized", "drivers/base/devtmpfs.c", "d", (("d", "e"),), ("devtmpfs: ",)),
    # mm/page_alloc.c free_reserved_area() called from free_initmem() (arch/x86/mm/init.c), which
    # init/main.c kernel_init() calls just before it runs init; mark_readonly() (mark_rodata_ro(),
    # arch/x86/mm/init_64.c) then frees the section gaps with more such lines. 3.x printed the range
    # too: "Freeing unused kernel memory: 1204K (ffffffff818ee000 - ffffffff81a1b000)". Kernels that
    # print no "Run /init" line (the corpus's 3.10 to 4.18) end kernel init at the last of them.
    _p(
        "free_init",
        r"Freeing unused kernel",
        "mm/page_alloc.c",
        "F",
        (("F", "r"),),
        ("Freeing unused kernel",),
    ),
    # init/main.c run_init_process() and kernel_init()
    _p("run_init", r"Run (/\S+) as init process", "init/main.c", "R", (("R", "u"),), ("Run /",)),
    # kernel/kexec_core.c kernel_kexec() prints "Starting new kernel" (its pr_fmt adds "kexec_core: ")
    # just before machine_kexec() jumps to the loaded kernel (kernel/kexec.c before 4.3): the old
    # kernel's last line of a kexec reboot (tests/data/kexec-chain-2hops-nochecks.tsv)
    _p(
        "kexec_start",
        r"(?:kexec_core: |kexec: )?Starting new kernel",
        "kernel/kexec_core.c",
        "kS",
        (("k", "e"), ("S", "t")),
        ("kexec_core: Starting new kernel", "kexec: Starting new kernel", "Starting new kernel"),
    ),
    # init/main.c do_one_initcall() with initcall_debug: trace_initcall_start_cb()/..._finish_cb()
    _p("initcall_start", r"calling  " + _FN + _CALL_TAIL, "init/main.c", "c"),
    _p("initcall_done", r"initcall " + _FN + DONE_TAIL, "init/main.c", "i"),
    # systemd src/core/main.c: PID 1's first line, "systemd VERSION running in system mode (...)",
    # stamped on the printk clock with systemd.log_target=kmsg and in the journal (short-monotonic). An
    # initramfs that runs systemd prints one too: a boot's last one is the real root's. Distribution
    # builds may add their release in parentheses: "systemd 239 (239-56.el8) running in system mode."
    # (RHEL 8, tests/data/hw/ppc64le-power8-powernv-5.19-dmesg.log)
    _p(
        "systemd_start",
        r"systemd\[1\]: systemd (\S+)(?: \([^)\s]*\))? running in system mode",
        "systemd main.c",
        "s",
        (("s", "y"),),
        ("systemd[1]: systemd ",),
    ),
    # systemd src/core/manager.c manager_notify_finished(): no start job is left
    _p(
        "startup_finished",
        r"systemd\[1\]: Startup finished in ",
        "systemd src/core/manager.c",
        "s",
        (("s", "y"),),
        ("systemd[1]: Startup finished in ",),
    ),
    # kernel/panic.c panic(): pr_emerg("Kernel panic - not syncing: %s\n", buf); the boot ends there
    # (the closing "---[ end Kernel panic ..." line does not start with it)
    _p(
        "panic",
        r"Kernel panic - not syncing: ?(.*)",
        "kernel/panic.c",
        "K",
        (("K", "e"),),
        ("Kernel panic - not syncing:",),
    ),
    # bootscope's own initramfs (bootscope/lab/qemu/initramfs.py): "BOOTSCOPE-MARKER [name] uptime=S"
    _p(
        "marker",
        r"BOOTSCOPE-MARKER(?: (\S+))? uptime=(\d+(?:\.\d+)?)",
        "bootscope initramfs /init",
        "B",
        (("B", "O"),),
        ("BOOTSCOPE-MARKER",),
    ),
)

BY_NAME: dict[str, Pattern] = {p.name: p for p in PATTERNS}

# One pass over a boot's joined text finds every candidate line. Each entry is wrapped in a group
# named after it; its own groups stay capturing, and GROUP_SLICES says where they sit in m.groups().
_ALTERNATION = "(?:" + "|".join(f"(?P<{p.name}>{p.regex.pattern})" for p in PATTERNS) + ")"
COMBINED: re.Pattern[str] = re.compile("^" + _ALTERNATION, re.MULTILINE)
# Both initcall_debug entries in one regex whose groups are one row (call, name, module, pid, ret,
# usecs, m; m is "m" where the duration is in ms): ``call`` is "c" for a calling line and "" for a
# returned line, whose tail the conditional group then requires; a ``findall`` returns each line's
# fields in the same columns. Each starts with a literal that no earlier entry of the table can match
# (tests/parse/test_chunked.py checks that), so such a line is always an initcall line.
INITCALL_LITERALS: tuple[str, ...] = ("calling  ", "initcall ")
INITCALL_SCAN: re.Pattern[str] = re.compile(
    r"(?:(?P<call>c)alling  |initcall )" + _FN + "(?(call)" + _CALL_TAIL + "|" + DONE_TAIL + ")"
)

# The name and offset of an initcall line without the module, to ``fullmatch`` the text between the
# literal and the next space: its group 1 is the name INITCALL_SCAN reads when no module follows.
INITCALL_TOKEN: re.Pattern[str] = re.compile(_FN_TOKEN)


def _group_slices(combined: re.Pattern[str], names: tuple[str, ...]) -> dict[str, tuple[int, int]]:
    slices: dict[str, tuple[int, int]] = {}
    for name in names:
        outer = combined.groupindex[name]  # 1-based; m.groups() is 0-based
        slices[name] = (outer, outer + BY_NAME[name].regex.groups)
    return slices


GROUP_SLICES: dict[str, tuple[int, int]] = _group_slices(COMBINED, tuple(BY_NAME))


def table_scan(exclude: tuple[str, ...] = ()) -> tuple[re.Pattern[str], dict[str, tuple[int, int]], str]:
    """Return the table (minus ``exclude``) as one regex to ``match(text, pos, endpos)`` at a line's text.

    Also returns where each entry's own groups sit in ``m.groups()`` (keyed by ``m.lastgroup``) and
    every ASCII character a match can start with. The first entry that matches wins, in table order.
    """
    kept = tuple(p for p in PATTERNS if p.name not in exclude)
    body = "|".join(f"(?P<{p.name}>{p.regex.pattern})" for p in kept)
    scan = re.compile(body, re.MULTILINE)  # MULTILINE: "$" also before a "\n" inside a block
    first = "".join(sorted({c for p in kept for c in p.first}))
    return scan, _group_slices(scan, tuple(p.name for p in kept)), first


def start_pairs(exclude: tuple[str, ...] = ()) -> dict[str, str | None]:
    """Return, per character a match of the table (minus ``exclude``) can start with, what can follow it.

    None means any character; "\x80" in a value stands for every non-ASCII character.
    """
    pairs: dict[str, str | None] = {}
    for p in PATTERNS:
        if p.name in exclude:
            continue
        declared = {c: seconds for firsts, seconds in p.follows for c in firsts}
        for c in p.first:
            seconds = declared.get(c)
            if seconds is None or pairs.get(c, "") is None:
                pairs[c] = None
            else:
                pairs[c] = "".join(sorted(set(pairs.get(c) or "") | set(seconds)))
    return pairs


def start_prefixes(exclude: tuple[str, ...] = ()) -> dict[str, tuple[str, ...]]:
    """Return, per first character that the table (minus ``exclude``) pins, the literals a match
    starting with it starts with: a character is pinned when every entry that can start with it
    lists prefixes for it (``Pattern.prefixes``)."""
    pinned: dict[str, set[str]] = {}
    loose: set[str] = set()
    for p in PATTERNS:
        if p.name in exclude:
            continue
        own = {c: {q for q in p.prefixes if q[0] == c} for c in p.first}
        for c, prefixes in own.items():
            if prefixes:
                pinned.setdefault(c, set()).update(prefixes)
            else:
                loose.add(c)
    return {c: tuple(sorted(prefixes)) for c, prefixes in sorted(pinned.items()) if c not in loose}


# Kernel messages searched anywhere in a line, outside the anchored table: a serial console's line may
# carry terminal noise before the kernel's text, and a machine's dmesg is read as it printed it.
# init/version.c linux_banner, which init/main.c start_kernel() prints first: a kernel's first line.
CONSOLE_BANNER_RE = re.compile(r"\bLinux version \S+")
# init/main.c run_init_process(): "Run %s as init process", as the kernel hands over to init.
CONSOLE_RUN_INIT_RE = re.compile(r"Run \S+ as init process")
# kernel/printk/printk.c print_time(): the "[%5lu.%06lu]" stamp before a message (printk.time=1).
PRINTK_STAMP_RE = re.compile(r"\[\s*(\d+\.\d+)\]")
# dmesg(1): one record per line, its printk stamp (kernel/printk/printk.c print_time()) then the text.
DMESG_LINE_RE = re.compile(r"^\[\s*(\d+\.\d+)\] ?(.*)$")

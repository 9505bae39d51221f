"""What bootscope reads from a machine over SSH once it is back, and the stored log it makes of it.

One SSH command prints, between markers: the facts of the boot (boot id, ``/proc/uptime``, kernel
release, command line), systemd's accounting once the boot has finished (the same commands as the
image's collector, :func:`bootscope.lab.qemu.image_guest.collector_commands`) and the boot's kernel
log from the machine's own journal (``journalctl -b -o short-monotonic``, kernel lines and PID 1's,
so that systemd's start and its "Startup finished" are there too) or, without a journal, ``dmesg``.

The stored log is that journal text (dmesg lines rewritten in the journal's form, so every stored
SSH boot parses the same way), then systemd's accounting, then the facts, then the serial console
as the host saw it (each line prefixed with ``console| `` and stamped on the host clock): the
pipeline reads the journal part as it reads any journal, while the console stays for the reader and
for the faults (a timeout keeps only what the console showed).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from bootscope.analyze.captured import terminal_text
from bootscope.lab.qemu.image_guest import collector_commands
from bootscope.model import LogLine
from bootscope.parse.formats import CONSOLE_PREFIX
from bootscope.parse.patterns import CONSOLE_BANNER_RE, DMESG_LINE_RE

FACT = "BOOTSCOPE-SSH-FACT"
LOG_BEGIN = "BOOTSCOPE-SSH-LOG-BEGIN"
LOG_END = "BOOTSCOPE-SSH-LOG-END"
CONSOLE_BEGIN = "BOOTSCOPE-CONSOLE-BEGIN"
_FACT_RE = re.compile(rf"^{FACT} (\w+) ?(.*)$")


def collect_command(wait_s: int) -> str:
    """Return the shell commands that print a boot's facts, systemd's accounting (waiting up to
    ``wait_s`` for the boot to finish, where systemd runs) and its kernel log, between markers."""
    return f"""echo "{FACT} boot_id $(cat /proc/sys/kernel/random/boot_id)"
echo "{FACT} uptime_s $(cut -d' ' -f1 /proc/uptime)"
echo "{FACT} release $(uname -r)"
echo "{FACT} cmdline $(cat /proc/cmdline)"
if [ -d /run/systemd/system ] && command -v systemd-analyze >/dev/null 2>&1; then
echo "{FACT} systemd yes"
{collector_commands(wait_s)}fi 2>&1
echo "{LOG_BEGIN}"
if command -v journalctl >/dev/null 2>&1; then
echo journal
journalctl -b -q -o short-monotonic --no-pager _TRANSPORT=kernel + _PID=1 2>&1
else
echo dmesg
dmesg 2>&1
fi
echo "{LOG_END}"
"""


@dataclass(frozen=True, slots=True)
class Collected:
    """What the collection printed: the facts (name -> text), the log's source (journal or dmesg),
    its lines in journal form, systemd's accounting block (empty without systemd) and whether the
    log holds the boot's start (the kernel banner)."""

    facts: dict[str, str] = field(default_factory=dict)
    source: str = ""
    log: tuple[str, ...] = ()
    accounting: tuple[str, ...] = ()

    @property
    def has_start(self) -> bool:
        """True when the log holds the kernel's banner, i.e. this boot from its first line."""
        return any(CONSOLE_BANNER_RE.search(line) for line in self.log)

    def fact_float(self, name: str) -> float | None:
        """Return fact ``name`` as a number, None if absent or not a number."""
        try:
            return float(self.facts[name])
        except (KeyError, ValueError):
            return None


def parse_collected(output: str, host: str = "machine") -> Collected:
    """Return what :func:`collect_command` printed; dmesg lines are rewritten in the journal's form
    (``[  1.234567] HOST kernel: text``). Never raises: a part that is missing is empty."""
    facts: dict[str, str] = {}
    accounting: list[str] = []
    log: list[str] = []
    source = ""
    in_log = False
    for line in output.splitlines():
        if in_log:
            if line == LOG_END:
                in_log = False
            elif not source:
                source = line.strip()
            else:
                log.append(line)
            continue
        if line == LOG_BEGIN:
            in_log = True
            continue
        match = _FACT_RE.match(line)
        if match is not None:
            facts.setdefault(match.group(1), match.group(2).strip())
        elif line.strip():
            accounting.append(line)
    if source == "dmesg":
        log = [_journal_form(line, host) for line in log]
    return Collected(facts, source, tuple(log), tuple(accounting))


def _journal_form(line: str, host: str) -> str:
    match = DMESG_LINE_RE.match(line)
    if match is None:
        return line
    return f"[{float(match.group(1)):12.6f}] {host} kernel: {match.group(2)}"


def console_lines(lines: Sequence[LogLine]) -> list[LogLine]:
    """Return the console ``lines`` as stored: a begin line, then each line's visible text (after the
    terminal's resets) prefixed with ``console| ``, its host stamp kept; empty for no lines."""
    if not lines:
        return []
    first_ns = lines[0].host_ns
    return [LogLine(CONSOLE_BEGIN, host_ns=first_ns)] + [
        LogLine(CONSOLE_PREFIX + terminal_text(line.text), host_ns=line.host_ns) for line in lines
    ]


def stored_lines(collected: Collected, console: Sequence[LogLine]) -> list[LogLine]:
    """Return the stored log of a boot that came back: the journal, systemd's accounting, the facts,
    then the console (see the module's docstring)."""
    lines = [LogLine(text) for text in collected.log]
    lines += [LogLine(text) for text in collected.accounting]
    lines += [LogLine(f"{FACT} {name} {value}") for name, value in collected.facts.items()]
    return lines + console_lines(console)


def stored_console(console: Sequence[LogLine]) -> list[LogLine]:
    """Return the console part of :func:`stored_lines`, the stored log of a boot without a journal
    (one that never came back, a failed kexec load)."""
    return console_lines(console)


def split_console(stored: Sequence[LogLine]) -> list[LogLine]:
    """Return the console lines of a stored SSH boot (prefix removed, host stamps kept), in order."""
    return [
        LogLine(line.text.removeprefix(CONSOLE_PREFIX), host_ns=line.host_ns)
        for line in stored
        if line.text.startswith(CONSOLE_PREFIX)
    ]

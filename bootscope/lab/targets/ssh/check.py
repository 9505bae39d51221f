"""``bootscope target check ssh://...``: can this machine be measured, and what should change?

One SSH command reads what matters (:data:`FACTS_COMMAND`); :func:`advise` turns it into checks, each
with what was found and, where it is not as good as it could be, what to change and why. ``advise``
is a pure function of the facts, so its advice is tested without a machine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bootscope.errors import BootError
from bootscope.lab.targets.base import ShellResult
from bootscope.lab.targets.checks import BAD, GOOD, WARN, Check
from bootscope.lab.targets.ssh.client import SshAddress, first_error_line, refusal, run_ssh

FACT = "BOOTSCOPE-CHECK"
# Free space under /var/log below which a run's journals may not fit (KiB).
MIN_FREE_KB = 200 * 1024
# Clock sources that count time finely and cheaply; others (jiffies, acpi_pm, hpet) are coarse or slow.
GOOD_CLOCKSOURCES = ("tsc", "kvm-clock", "arch_sys_counter", "hyperv_clocksource_tsc_page", "timebase")
FACTS_COMMAND = (
    f'f() {{ echo "{FACT} $1 $2"; }}; '
    'f machine-id "$(cat /etc/machine-id 2>/dev/null)"; '
    'f release "$(uname -r)"; '
    'f cmdline "$(cat /proc/cmdline)"; '
    'f kexec "$(command -v kexec || echo missing)"; '
    'f kexec-load-disabled "$(cat /proc/sys/kernel/kexec_load_disabled 2>/dev/null || echo unknown)"; '
    'f journal-dir "$([ -d /var/log/journal ] && echo yes || echo no)"; '
    'f journalctl "$(command -v journalctl || echo missing)"; '
    'f systemd "$([ -d /run/systemd/system ] && echo yes || echo no)"; '
    'f printk-time "$(cat /sys/module/printk/parameters/time 2>/dev/null || echo unknown)"; '
    'f clocksource "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)"; '
    "f free-kb \"$(df -Pk /var/log 2>/dev/null | awk 'NR==2 {print $4}')\"; "
    'f user "$(id -u)"; '
    'f sudo "$(sudo -n true 2>/dev/null && echo yes || echo no)"'
)


def parse_facts(output: str) -> dict[str, str]:
    """Return the facts :data:`FACTS_COMMAND` printed (name -> value)."""
    facts: dict[str, str] = {}
    for line in output.splitlines():
        if line.startswith(FACT + " "):
            name, _, value = line.removeprefix(FACT + " ").partition(" ")
            facts.setdefault(name, value.strip())
    return facts


def advise(facts: dict[str, str], local_machine_id: str | None = None) -> list[Check]:
    """Return the checks for a machine's ``facts``: kexec installed and allowed, root or sudo, the
    journal persistent, printk times, the clock source, initcall_debug, free disk for logs and
    whether it is this host (:data:`ADVICE`, one rule a check). Missing facts give a ``warn`` saying
    they could not be read."""
    found = (rule(Facts(facts, local_machine_id)) for rule in ADVICE)
    return [check for check in found if check is not None]


@dataclass(frozen=True, slots=True)
class Facts:
    """What one rule of :data:`ADVICE` reads: the machine's facts and this host's machine-id."""

    facts: dict[str, str]
    local_machine_id: str | None

    def get(self, name: str, default: str = "") -> str:
        """Return the fact ``name`` (``default`` when it was not read)."""
        return self.facts.get(name, default)

    @property
    def words(self) -> list[str]:
        """The words of the running kernel's command line."""
        return self.get("cmdline").split()


def _kexec(f: Facts) -> Check:
    kexec, disabled = f.get("kexec", "missing"), f.get("kexec-load-disabled", "unknown")
    if kexec == "missing":
        return Check("kexec", BAD, "kexec-tools not installed", "install kexec-tools for --reboot kexec")
    if disabled == "1":
        return Check(
            "kexec",
            BAD,
            "kexec_load_disabled = 1",
            "no kernel can be loaded until the next reboot (the switch cannot be turned back):"
            " reboot, and keep the boot from setting kernel.kexec_load_disabled; or use --reboot reboot",
        )
    return Check("kexec", GOOD, f"{kexec}, kexec_load_disabled = {disabled}")


def _root(f: Facts) -> Check:
    if f.get("user") == "0" or f.get("sudo") == "yes":
        return Check("root", GOOD, "root or sudo -n")
    return Check(
        "root",
        BAD,
        "neither root nor password-less sudo",
        "rebooting needs root: log in as root or allow this user sudo -n for kexec and systemctl",
    )


def _journal(f: Facts) -> Check:
    if f.get("journalctl", "missing") == "missing":
        return Check("journal", WARN, "no journalctl", "bootscope reads dmesg instead (no PID 1 lines)")
    if f.get("journal-dir") != "yes":
        return Check(
            "journal",
            WARN,
            "volatile (no /var/log/journal)",
            "mkdir /var/log/journal (Storage=auto makes it persistent): a boot whose reading fails"
            " can be read again later",
        )
    return Check("journal", GOOD, "persistent (/var/log/journal)")


def _printk_time(f: Facts) -> Check:
    time_on = f.get("printk-time", "unknown")
    if time_on in ("Y", "1") and "printk.time=0" not in f.words:
        return Check("printk.time", GOOD, "on")
    return Check(
        "printk.time",
        BAD,
        f"printk.time = {time_on}",
        "add printk.time=1 to the command line: without kernel timestamps there is no kernel breakdown",
    )


def _clocksource(f: Facts) -> Check:
    source = f.get("clocksource")
    if source in GOOD_CLOCKSOURCES:
        return Check("clocksource", GOOD, source)
    return Check(
        "clocksource",
        WARN,
        source or "unknown",
        "printk stamps follow the clock source; a coarse or slow one (jiffies, hpet, acpi_pm)"
        " blurs short initcalls: check dmesg for why tsc was rejected",
    )


def _initcall_debug(f: Facts) -> Check:
    if "initcall_debug" in f.words:
        return Check(
            "initcall_debug",
            WARN,
            "on",
            "every initcall is logged: good for finding the slow one, but it slows the boot a little;"
            " measure A/B with it off",
        )
    return Check(
        "initcall_debug",
        GOOD,
        "off",
        "add initcall_debug (a kexec variant: append=initcall_debug) to see which initcalls take the time",
    )


def _disk(f: Facts) -> Check:
    try:
        free_kb = int(f.get("free-kb"))
    except ValueError:
        return Check("disk", WARN, "free space under /var/log unknown")
    if free_kb < MIN_FREE_KB:
        return Check(
            "disk",
            WARN,
            f"{free_kb // 1024} MiB free under /var/log",
            "journald rotates old boots away when the disk is short: free some space",
        )
    return Check("disk", GOOD, f"{free_kb // 1024} MiB free under /var/log")


def _this_machine(f: Facts) -> Check | None:
    remote_id = f.get("machine-id")
    if not (f.local_machine_id and remote_id and f.local_machine_id.strip() == remote_id.strip()):
        return None
    return Check(
        "machine",
        WARN,
        "this is the machine bootscope runs on",
        "a run reboots it and ends itself: run bootscope elsewhere, or give --yes-this-machine",
    )


# The rules of :func:`advise`, in the order the checks are shown.
ADVICE: tuple[Callable[[Facts], Check | None], ...] = (
    _kexec,
    _root,
    _journal,
    _printk_time,
    _clocksource,
    _initcall_debug,
    _disk,
    _this_machine,
)


def read_machine_facts(
    run: Callable[[str, float], ShellResult], url: str, timeout_s: float = 60.0
) -> dict[str, str]:
    """Return a machine's facts (the one reading of them: machine-id, release, cmdline, kexec (its
    path or ``missing``), kexec-load-disabled, journal, printk time, clock source, free disk, user,
    sudo), running :data:`FACTS_COMMAND` with ``run`` (command, timeout in s). Raises BootError when
    SSH refuses the machine or it does not answer."""
    result = run(FACTS_COMMAND, timeout_s)
    why = refusal(result)
    if why is not None:
        raise BootError(f"{url}: {why}")
    if not result.ok:
        raise BootError(f"{url}: not reachable over SSH ({first_error_line(result)})")
    return parse_facts(result.stdout)


def kexec_refusal(facts: dict[str, str]) -> str | None:
    """Return why kexec cannot load a kernel on the machine of ``facts`` (not installed, or
    kexec_load_disabled is 1), None when it can."""
    if facts.get("kexec", "missing") == "missing":
        return "no kexec there: install kexec-tools on the machine"
    if facts.get("kexec-load-disabled", "") == "1":
        return (
            "kexec_load_disabled is 1, so no kernel can be loaded until the next reboot (it cannot be"
            " set back to 0); use --reboot reboot"
        )
    return None


def check_target(address: SshAddress, local_machine_id: str | None, timeout_s: float = 60.0) -> list[Check]:
    """Return the checks of the machine at ``address`` (first: it answered). Raises BootError when
    SSH refuses it or it does not answer."""
    facts = read_machine_facts(
        lambda command, limit_s: run_ssh(address, command, limit_s), address.url, timeout_s
    )
    reached = Check("reachable", GOOD, f"ssh, kernel {facts.get('release', '?')}")
    return [reached, *advise(facts, local_machine_id)]

"""The SSH target on a real Debian machine: the test image (openssh-server, kexec-tools, the test key;
tests/conftest.py) served ONCE for the whole session by `bootscope image serve` (QEMU under TCG,
127.0.0.1:PORT forwarded to its SSH port, its serial console on a UNIX socket), measured as any
machine with `bootscope run ssh://...`: kexec reboots with an A/B over --append, firmware reboots,
a bad host key refused, `target check`, `latency run ssh://...` (cyclictest on the machine, rt-tests
in the image), and a machine that never comes back (QEMU stopped mid-run).
Every stored breakdown is checked against the guest's own journal, read over SSH by the test, and
every downtime against the console's host stamps stored with the boot."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from kernel_pin import TEST_IMAGE
from ssh_keys import ssh_test_key

from bootscope.analyze.stored import analyze_stored_boot
from bootscope.metrics import (
    INITRD_S,
    KERNEL_INIT_S,
    KEXEC_DOWNTIME_S,
    REBOOT_BLIND_S,
    REBOOT_DOWNTIME_S,
    REBOOT_SHUTDOWN_S,
    REBOOT_STOP_S,
    SYSTEMD_USERSPACE_S,
)
from bootscope.model import LogLine
from bootscope.store import Store

BOOTSCOPE = (sys.executable, "-m", "bootscope")
UP_WAIT_S = 600.0  # a TCG boot of the image on a loaded 2-core host
RUN_TIMEOUT = "900"  # seconds a reboot may take before it counts as a timeout (a TCG guest on a busy host)


@dataclass(frozen=True, slots=True)
class Served:
    port: int
    console_socket: Path
    known_hosts: Path
    key: Path
    qemu_pid: int

    @property
    def url(self) -> str:
        return f"ssh://root@127.0.0.1:{self.port}"

    def ssh_args(self) -> list[str]:
        return ["--identity", str(self.key), "--known-hosts", str(self.known_hosts)]

    def console(self) -> str:
        return f"socat -u UNIX-CONNECT:{self.console_socket} -"

    def run(self, command: str, timeout_s: float = 120.0) -> subprocess.CompletedProcess[str]:
        argv = [
            "ssh",
            "-o",
            "BatchMode=yes",
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            f"UserKnownHostsFile={self.known_hosts}",
            "-o",
            "IdentitiesOnly=yes",
            "-o",
            "ConnectTimeout=5",
            "-i",
            str(self.key),
            "-p",
            str(self.port),
            "root@127.0.0.1",
            command,
        ]
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)

    def wait_up(self) -> None:
        deadline = time.monotonic() + UP_WAIT_S
        while time.monotonic() < deadline:
            with contextlib.suppress(subprocess.TimeoutExpired):
                if self.run("systemctl is-system-running --wait", 300).stdout.strip() in (
                    "running",
                    "degraded",
                ):
                    return
            time.sleep(2)
        pytest.fail(f"the served machine did not answer SSH within {UP_WAIT_S:g} s")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def served_session(default_image: object, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The test image served once for the session (every test that uses it is in this module, which
    the random order keeps together); stopped (SIGTERM) after the module's last test, since an idle
    TCG guest still takes host CPU (its timer ticks, its services) from the tests that follow."""
    where = tmp_path_factory.mktemp("served")
    port = _free_port()
    socket_path = where / "console.sock"
    known_hosts = where / "known_hosts"
    proc = subprocess.Popen(
        [
            *BOOTSCOPE,
            "image",
            "serve",
            TEST_IMAGE,
            "--ssh-port",
            str(port),
            "--console-socket",
            str(socket_path),
            "--known-hosts",
            str(known_hosts),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert "QEMU pid" in first, first + (proc.stderr.read() if proc.stderr else "")
    qemu_pid = int(first.split("QEMU pid ")[1].split(",")[0])
    machine = Served(port, socket_path, known_hosts, ssh_test_key(), qemu_pid)
    try:
        machine.wait_up()
        yield machine
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(qemu_pid, signal.SIGCONT)
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0 and "stopped on request; QEMU stopped" in rest, rest


@pytest.fixture
def served(served_session: Served) -> Served:
    """The session's served machine, up and answering SSH before each test: a test that leaves it
    rebooting (the stop test resumes a machine it froze mid-kexec) does not decide the next one's fate,
    so the tests pass in any order."""
    served_session.wait_up()
    return served_session


def _bootscope(*args: str, timeout_s: float = 3000) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*BOOTSCOPE, *args], capture_output=True, text=True, timeout=timeout_s, check=False)


def _journal_of(served: Served, boot_id: str) -> list[str]:
    boot = boot_id.replace("-", "")
    done = served.run(f"journalctl -b {boot} -o short-monotonic -q --no-pager _TRANSPORT=kernel + _PID=1")
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def _stamp(lines: list[str], text: str) -> float:
    """The monotonic stamp of the first journal line holding ``text``, read by the test itself."""
    line = next(line for line in lines if text in line)
    return float(line[1 : line.index("]")].strip())


CONSOLE_LINE = "console| "


@dataclass(frozen=True, slots=True)
class _Marks:
    last_old_ns: int  # host stamp of the old kernel's last console line
    banner_ns: int  # host stamp of the new kernel's "Linux version" banner
    init_ns: int  # host stamp of the new kernel's "Run /init" line
    init_printk_s: float  # that line's own printk stamp (the new kernel's clock)


def _console_of(lines: list[LogLine]) -> list[tuple[int, str]]:
    """(host ns, text) of every stored console line, in order: the lines bootscope stored with the
    console's prefix, read by this test without the product's splitter."""
    return [
        (line.host_ns or 0, line.text[len(CONSOLE_LINE) :])
        for line in lines
        if line.text.startswith(CONSOLE_LINE)
    ]


def _marks_of(console: list[tuple[int, str]]) -> _Marks:
    """The new kernel's banner (the last "Linux version" line), the old kernel's line just before it,
    and the first "Run /init" after it, found by plain substring search."""
    banner = max(i for i, (_, text) in enumerate(console) if "Linux version " in text)
    assert banner > 0, "no console line of the old kernel before the new banner"
    init_ns, init_text = next(
        (ns, text) for ns, text in console[banner:] if "Run /init as init process" in text
    )
    stamp = init_text[init_text.index("[") + 1 : init_text.index("]")]
    return _Marks(console[banner - 1][0], console[banner][0], init_ns, float(stamp.strip()))


def _check_against_journal(served: Served, db: Path, experiment: int, kexec: bool) -> list[dict[str, str]]:
    """Check every stored boot against the guest's own journal and the console's host stamps; return
    each boot's facts (boot id, command line) as stored."""
    facts_seen = []
    with Store.open(str(db)) as store:
        boots = store.boots(experiment)
        for boot in boots:
            assert boot.outcome == "ok", boot.reason
            lines = store.boot_log(experiment, boot.index)
            facts = {
                line.text.split(" ", 2)[1]: line.text.split(" ", 2)[2]
                for line in lines
                if line.text.startswith("BOOTSCOPE-SSH-FACT ") and line.text.count(" ") >= 2
            }
            facts_seen.append(facts)
            journal = _journal_of(served, facts["boot_id"])
            init_s = _stamp(journal, "Run /init as init process")
            systemd_s = _stamp(journal, "running in system mode")
            finished_s = _stamp(journal, "Startup finished in")
            assert boot.metrics[KERNEL_INIT_S] == pytest.approx(init_s, abs=1e-6)
            assert boot.metrics[INITRD_S] == pytest.approx(systemd_s - init_s, abs=1e-5)
            assert boot.metrics[SYSTEMD_USERSPACE_S] == pytest.approx(finished_s - systemd_s, abs=1e-5)
            assert boot.kernel_release == served.run("uname -r").stdout.strip()
            # The one stored-boot analysis (analyze/report/trace --run) gives the same numbers.
            again = analyze_stored_boot(store, experiment, boot.index)
            assert again.analysis.format == "journal"
            assert again.analysis.breakdown.metrics.kernel_init_s == boot.metrics[KERNEL_INIT_S]
            # Host clock: ordered <= old kernel's last console line <= new banner <= Run /init <= SSH back.
            # The console is read here with the test's own plain reader, not the product's.
            console = _console_of(lines)
            marks = _marks_of(console)
            back_ns = boot.host_start_ns + boot.metrics[REBOOT_DOWNTIME_S] * 1e9
            assert boot.host_start_ns <= marks.banner_ns <= marks.init_ns <= back_ns
            assert 0 <= boot.metrics[REBOOT_SHUTDOWN_S] < boot.metrics[REBOOT_DOWNTIME_S]
            start_ns = boot.host_start_ns
            between = [text for host_ns, text in console if start_ns <= host_ns < marks.banner_ns]
            # The bars: order -> old kernel's last line (stop) -> new kernel's time zero (blind),
            # each from the console's host stamps, the test reading them itself.
            stop_s = (marks.last_old_ns - start_ns) / 1e9
            assert boot.metrics[REBOOT_STOP_S] == pytest.approx(stop_s, abs=1e-5)
            blind_s = (marks.init_ns - marks.init_printk_s * 1e9 - marks.last_old_ns) / 1e9
            assert boot.metrics[REBOOT_BLIND_S] == pytest.approx(blind_s, abs=1e-5)
            assert stop_s + boot.metrics[REBOOT_BLIND_S] < boot.metrics[REBOOT_DOWNTIME_S]
            if kexec:
                seen_s = (marks.init_ns - marks.last_old_ns) / 1e9
                assert boot.metrics[KEXEC_DOWNTIME_S] == pytest.approx(seen_s, abs=1e-5)
                assert any("Starting new kernel" in text for text in between)
                assert not any("Restarting system" in text for text in between)
            else:
                assert KEXEC_DOWNTIME_S not in boot.metrics
                # kernel/reboot.c: the old kernel hands over to the firmware, not to a new kernel
                assert any("reboot: Restarting system" in text for text in between)
                assert not any("Starting new kernel" in text for text in between)
    return facts_seen


# Words of a command line that are the test's own append or the boot loader's (kexec drops BOOT_IMAGE=).
_OURS = ("bootscope.ab=", "BOOT_IMAGE=")


@pytest.mark.boot
@pytest.mark.timeout(2400)
def test_kexec_reboots_with_an_append_ab_agree_with_the_guest_journal(served: Served, tmp_path: Path) -> None:
    db = tmp_path / "kexec.db"
    original_cmdline = [w for w in served.run("cat /proc/cmdline").stdout.split() if not w.startswith(_OURS)]
    assert original_cmdline
    done = _bootscope(
        "run",
        served.url,
        *served.ssh_args(),
        "--console",
        served.console(),
        "--reboot",
        "kexec",
        "-n",
        "1",
        "--seed",
        "3",
        "--timeout",
        RUN_TIMEOUT,
        "--format",
        "json",
        "--db",
        str(db),
        "--variant",
        "a:append=bootscope.ab=a",
        "--variant",
        "b:append=bootscope.ab=b",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    document = json.loads(done.stdout)
    # Two appended variants, one reboot each (the second reboot starts from the first's command line):
    # the second's append must replace the first's, never pile onto it. The unappended command line
    # is the one the machine booted with (checked against /proc/cmdline before the run).
    assert [v["name"] for v in document["variants"]] == ["a", "b"]
    assert all(v["ok"] == 1 for v in document["variants"])
    with Store.open(str(db)) as store:
        variants = {boot.index: boot.variant for boot in store.boots(1)}
    facts = _check_against_journal(served, db, 1, kexec=True)
    assert len({f["boot_id"] for f in facts}) == 2  # two new boots
    for (index, variant), seen in zip(sorted(variants.items()), facts, strict=True):
        words = seen["cmdline"].split()
        assert index >= 1
        other = "b" if variant == "a" else "a"
        assert words.count(f"bootscope.ab={variant}") == 1  # added once, never piled up
        assert f"bootscope.ab={other}" not in words  # the previous reboot's append was replaced
        assert [w for w in words if not w.startswith(_OURS)] == original_cmdline
    shown = _bootscope("analyze", "--run", "1", "--boot", "2", "--db", str(db))
    # the view fits 80 columns: where the status line wraps depends on the database path's length
    words = " ".join((shown.stdout + shown.stderr).split())
    assert shown.returncode == 0 and "format journal" in words, shown.stderr


@pytest.mark.boot
@pytest.mark.timeout(2400)
def test_firmware_reboots_go_through_seabios_and_agree_with_the_journal(
    served: Served, tmp_path: Path
) -> None:
    db = tmp_path / "reboot.db"
    before_boot_id = served.run("cat /proc/sys/kernel/random/boot_id").stdout.strip()
    done = _bootscope(
        "run",
        served.url,
        *served.ssh_args(),
        "--console",
        served.console(),
        "--reboot",
        "reboot",
        "-n",
        "1",
        "--seed",
        "4",
        "--timeout",
        RUN_TIMEOUT,
        "--format",
        "json",
        "--db",
        str(db),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    facts = _check_against_journal(served, db, 1, kexec=False)
    # One firmware reboot: a new boot id, through SeaBIOS (checked in _check_against_journal).
    assert len(facts) == 1 and facts[0]["boot_id"] != before_boot_id


@pytest.mark.boot
@pytest.mark.timeout(2400)
def test_target_check_and_a_bad_host_key_refused(served: Served, tmp_path: Path) -> None:
    checked = _bootscope("target", "check", served.url, *served.ssh_args(), "--format", "json")
    assert checked.returncode == 0, checked.stderr
    statuses = {c["name"]: c["status"] for c in json.loads(checked.stdout)["checks"]}
    assert statuses["reachable"] == statuses["kexec"] == statuses["journal"] == "ok"
    assert statuses["printk.time"] == statuses["root"] == "ok"
    # Another machine's host key under this address: refused before anything is stored.
    other = tmp_path / "other_host_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    kind, key = other.with_suffix(".pub").read_text().split()[:2]
    wrong = tmp_path / "known_hosts"
    wrong.write_text(f"[127.0.0.1]:{served.port} {kind} {key}\n")
    db = tmp_path / "refused.db"
    args = ["--identity", str(served.key), "--known-hosts", str(wrong)]
    refused = _bootscope("run", served.url, *args, "-n", "1", "--db", str(db), timeout_s=300)
    assert refused.returncode == 3, refused.stderr
    assert "host key" in refused.stderr and "Traceback" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    with Store.open(str(db)) as store:
        assert store.list_experiments() == []
    check_refused = _bootscope("target", "check", served.url, *args)
    assert check_refused.returncode == 3 and "host key" in check_refused.stderr


@pytest.mark.boot
@pytest.mark.timeout(1800)
def test_latency_runs_over_ssh_as_on_this_host_with_the_machines_facts(
    served: Served, tmp_path: Path
) -> None:
    # The seam's proof: an SSH machine runs commands as this host does, so `latency run` measures it.
    db = tmp_path / "latency.db"
    done = _bootscope(
        "latency", "run", served.url, *served.ssh_args(), "--tool", "cyclictest", "--duration", "2s",
        "-n", "2", "--db", str(db), "--format", "json", timeout_s=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    release = served.run("uname -r").stdout.strip()
    cmdline = served.run("cat /proc/cmdline").stdout.strip()
    assert release and cmdline
    with Store.open(str(db)) as store:
        (summary,) = store.list_experiments()
        experiment = summary.experiment
        assert experiment.accel == "none" and experiment.plan["variants"][0]["kernel"] == served.url
        boots = store.boots(experiment.id)
        assert len(boots) == 2 and not any(boot.superseded for boot in boots)  # each run stored once
        for boot in boots:
            assert boot.outcome == "ok", boot.reason
            assert boot.kernel_release == release  # the machine's kernel, not this host's
            log = [line.text for line in store.boot_log(experiment.id, boot.index)]
            assert f"kernel_release={release}" in log and f"cmdline={cmdline}" in log
            assert any(line.startswith("preemption=") and line != "preemption=" for line in log)
            assert any(line.startswith("tool_command=cyclictest ") for line in log)
            assert boot.metrics.get("latency_max_us") is not None


@pytest.mark.boot
@pytest.mark.timeout(2400)
def test_a_machine_that_never_comes_back_is_a_timeout_and_the_run_stops(
    served: Served, tmp_path: Path
) -> None:
    console_copy = tmp_path / "console.txt"
    db = tmp_path / "timeout.db"
    console = f"{served.console()} | tee {console_copy}"
    proc = subprocess.Popen(
        [
            *BOOTSCOPE,
            "run",
            served.url,
            *served.ssh_args(),
            "--console",
            console,
            "--reboot",
            "kexec",
            "-n",
            "2",
            "--seed",
            "5",
            "--timeout",
            "40",
            "--db",
            str(db),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            if console_copy.exists() and "Starting new kernel" in console_copy.read_text(errors="replace"):
                os.kill(served.qemu_pid, signal.SIGSTOP)  # the old kernel is gone; the new one never runs
                break
            time.sleep(0.05)
        else:
            pytest.fail("the reboot never reached kexec")
        _out, err = proc.communicate(timeout=600)
    finally:
        os.kill(served.qemu_pid, signal.SIGCONT)
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3, err[-2000:]
    assert "did not come back" in err and "--resume" in err and "Traceback" not in err
    with Store.open(str(db)) as store:
        boots = store.boots(1)
        assert len(boots) == 1  # the run stopped: no second reboot of an unreachable machine
        (boot,) = boots
        assert boot.outcome == "timeout" and "within 40 s" in boot.reason
        assert "last console line" in boot.reason
        shown = [text for _, text in _console_of(store.boot_log(1, boot.index))]
        assert any("Starting new kernel" in text for text in shown)
        assert store.experiment(1).status == "interrupted"

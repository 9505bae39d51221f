"""Fast tests of the SSH target's own logic, beside the real machine tests (test_ssh_target.py): the
URL and the ssh client's options, what ssh's refusals mean, how a reboot is classified and timed, the
kexec command line (no pile-up from boot to boot), the plan, the stored log (journal and console
kept apart, on real captures), the console reader on a real command, `target check`'s advice, and
the CLI's one-line errors."""

from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
from cli_here import run_in_process

from bootscope.analyze.captured import analyze_captured
from bootscope.errors import InputError
from bootscope.lab.plans.schedule import Slot
from bootscope.lab.plans.ssh import (
    SshPlan,
    SshVariant,
    build_ssh_variants,
    ssh_plan_from_dict,
    validate_ssh_plan,
)
from bootscope.lab.targets.base import ShellResult
from bootscope.lab.targets.ssh.check import BAD, GOOD, WARN, advise, parse_facts
from bootscope.lab.targets.ssh.client import parse_ssh_url, refusal, ssh_argv
from bootscope.lab.targets.ssh.serial_console import ConsoleReader
from bootscope.lab.workloads import workload_from_document
from bootscope.lab.workloads.ssh import SshWorkload, same_machine
from bootscope.lab.workloads.ssh_collect import (
    Collected,
    parse_collected,
    split_console,
    stored_console,
    stored_lines,
)
from bootscope.lab.workloads.ssh_reboot import load_command, order_command
from bootscope.lab.workloads.ssh_timeline import (
    ConsoleMarks,
    Timeline,
    classify,
    console_marks,
    reboot_metrics,
)
from bootscope.metrics import (
    KERNEL_INIT_S,
    KEXEC_DOWNTIME_S,
    REBOOT_BLIND_S,
    REBOOT_DOWNTIME_S,
    REBOOT_SHUTDOWN_S,
    REBOOT_STOP_S,
)
from bootscope.model import LogLine, Outcome
from bootscope.store.records import BootRecord

DATA = Path(__file__).resolve().parents[1] / "data"
# Provenance: the pinned 6.1 cloud kernel booted under TCG with smp=2; the same boot's journal
# (journalctl -o short-monotonic) and serial console (tests/data/README.md).
JOURNAL = DATA / "debian-6.1-cloud-smp2-journal-short-monotonic.log"
CONSOLE = DATA / "debian-6.1-cloud-smp2.log"


def test_url_takes_user_host_and_port_and_refuses_the_rest(tmp_path: Path) -> None:
    address = parse_ssh_url("ssh://root@127.0.0.1:2222")
    assert (address.user, address.host, address.port) == ("root", "127.0.0.1", 2222)
    assert parse_ssh_url("ssh://me@[fe80::1]").host == "fe80::1"
    assert parse_ssh_url("ssh://me@[fe80::1]:22").url == "ssh://me@[fe80::1]:22"
    for bad in (
        "ssh://127.0.0.1",
        "ssh://root:secret@host",
        "ssh://root@host/path",
        "ssh://root@host:99999",
        "ssh://root@host:x",
        "http://root@host",
        "ssh://ro ot@host",
    ):
        with pytest.raises(InputError):
            parse_ssh_url(bad)
    with pytest.raises(InputError, match="--identity"):
        parse_ssh_url("ssh://root@host", identity=tmp_path / "missing")


def test_ssh_never_prompts_and_checks_host_keys_strictly(tmp_path: Path) -> None:
    known = tmp_path / "known_hosts"
    known.write_text("")
    key = tmp_path / "id"
    key.write_text("")
    argv = ssh_argv(parse_ssh_url("ssh://u@h:2", identity=key, known_hosts=known), "true")
    joined = " ".join(argv)
    for option in ("BatchMode=yes", "StrictHostKeyChecking=yes", "PasswordAuthentication=no"):
        assert option in joined
    assert f"UserKnownHostsFile={known.resolve()}" in joined and "IdentitiesOnly=yes" in joined
    assert argv[-3:] == ["--", "u@h", "true"] and argv[argv.index("-p") + 1] == "2"


def _failed(stderr: str, code: int = 255) -> ShellResult:
    return ShellResult(code, "", stderr, 0, 1)


def test_refusals_are_told_apart_from_a_machine_that_is_away() -> None:
    # OpenSSH 9.2's own words (sshconnect.c, ssh.c).
    changed = (
        "@@@@@\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\nHost key verification failed."
    )
    assert "CHANGED" in (refusal(_failed(changed)) or "")
    unknown = "No ED25519 host key is known for [127.0.0.1]:2222 and you have requested strict checking."
    assert "known_hosts" in (refusal(_failed(unknown)) or "")
    assert "Permission denied" in (refusal(_failed("root@h: Permission denied (publickey).")) or "")
    assert refusal(_failed("ssh: connect to host h port 22: Connection refused")) is None
    assert refusal(_failed("kex_exchange_identification: read: Connection reset by peer")) is None
    assert refusal(_failed("Permission denied", code=1)) is None  # the remote command's own failure


def _collected(log: tuple[str, ...]) -> Collected:
    return Collected({"release": "6.1"}, "journal", log, ())


def test_outcomes_and_their_reasons() -> None:
    banner = ("[    0.000000] m kernel: Linux version 6.1.0 (x)",)
    common = {"timeout_s": 30.0, "collect_error": None, "console_tail": "last words"}
    assert classify(came_back=True, panic_line=None, collected=_collected(banner), **common) == (
        Outcome.OK,
        "",
    )
    outcome, reason = classify(came_back=False, panic_line=None, collected=None, **common)
    assert outcome is Outcome.TIMEOUT and "within 30 s" in reason and "last words" in reason
    outcome, reason = classify(
        came_back=False, panic_line="Kernel panic - not syncing: x", collected=None, **common
    )
    assert outcome is Outcome.PANIC and "Kernel panic" in reason and "did not come back" in reason
    outcome, reason = classify(came_back=True, panic_line=None, collected=_collected(()), **common)
    assert outcome is Outcome.LOG_MISSING and "journalctl" in reason
    later = ("[    5.000000] m kernel: eth0: link up",)
    outcome, reason = classify(came_back=True, panic_line=None, collected=_collected(later), **common)
    assert outcome is Outcome.LOG_MISSING and "Linux version" in reason
    outcome, reason = classify(
        came_back=True, panic_line=None, collected=None, **(common | {"collect_error": "broken pipe"})
    )
    assert outcome is Outcome.LOG_MISSING and "broken pipe" in reason


def _line(text: str, host_ns: int) -> LogLine:
    return LogLine(text, host_ns=host_ns)


def test_console_marks_and_the_reboot_metrics() -> None:
    second = 1_000_000_000
    console = [
        _line("[  459.0] systemd-shutdown[1]: Rebooting with kexec.", 10 * second),
        _line("[  459.1] kexec_core: Starting new kernel", 11 * second),
        _line("Probing EDD... \x1b[2J[    0.000000] Linux version 6.1.0-50-cloud-amd64 (x)", 17 * second),
        _line("[    4.0] Run /init as init process", 26 * second),
        _line("[   10.0] systemd[1]: systemd 252 running in system mode", 30 * second),
    ]
    marks = console_marks(console)
    assert marks == ConsoleMarks(11 * second, 17 * second, 26 * second, 4.0)
    assert marks.kernel_zero_ns == 22 * second  # Run /init arrived at 26 s, printk-stamped 4.0 s
    timeline = Timeline(
        ordered_ns=9 * second, down_ns=9 * second + 250_000_000, back_ns=60 * second, marks=marks
    )
    metrics = reboot_metrics(timeline, kexec=True)
    assert metrics[REBOOT_DOWNTIME_S] == 51.0 and metrics[KEXEC_DOWNTIME_S] == 15.0
    assert metrics[REBOOT_SHUTDOWN_S] == 0.25
    # The bars of seed 004: the old system stops (9 -> 11 s), the machine is blind (11 -> 22 s).
    assert metrics[REBOOT_STOP_S] == 2.0 and metrics[REBOOT_BLIND_S] == 11.0
    unstamped = console_marks([*console[:3], _line("Run /init as init process", 26 * second)])
    assert unstamped.init_printk_s is None and unstamped.kernel_zero_ns is None
    assert REBOOT_BLIND_S not in reboot_metrics(replace(timeline, marks=unstamped), kexec=True)
    assert KEXEC_DOWNTIME_S not in reboot_metrics(timeline, kexec=False)
    assert reboot_metrics(Timeline(ordered_ns=5), kexec=True) == {}
    assert console_marks(console[:2]) == ConsoleMarks()


def test_kexec_command_line_is_the_runs_base_plus_the_variants_append() -> None:
    plan = SshPlan(target="ssh://r@h", variants=(), base_cmdline="BOOT_IMAGE=/vmlinuz root=/dev/vda ro")
    command = load_command(plan, SshVariant("a", append="quiet"), "")
    assert "--command-line='root=/dev/vda ro quiet'" in command and "BOOT_IMAGE" not in command
    assert '"/boot/vmlinuz-$(uname -r)"' in command and '[ -e "$i" ]' in command
    fresh = load_command(plan, SshVariant("f", append="root=/dev/sda", reuse_cmdline=False), "sudo -n ")
    assert "--command-line=root=/dev/sda" in fresh and "sudo -n kexec -l" in fresh
    own = load_command(
        SshPlan(target="ssh://r@h", variants=(), no_checks=True),
        SshVariant("k", kernel="/boot/my kernel", initrd="/boot/i"),
        "",
    )
    assert "k='/boot/my kernel'" in own and own.endswith(" -i") and "if true;" in own
    assert "systemctl --no-block kexec" in order_command("kexec", "")
    assert "systemctl --no-block reboot" in order_command("reboot", "sudo -n ")


def test_plan_checks_and_round_trip() -> None:
    variants = build_ssh_variants(SshVariant("default"), ["a:append=x=1,y=2", "b:setup=echo hi, there"])
    assert variants[0].append == "x=1,y=2" and variants[1].setup == "echo hi, there"
    plan = validate_ssh_plan(
        SshPlan(target="ssh://r@h:2", variants=variants, reboot="kexec", base_cmdline="ro")
    )
    workload = workload_from_document(SshWorkload(plan).document())
    assert isinstance(workload, SshWorkload) and workload.plan == plan
    with pytest.raises(InputError, match="boot loader"):
        validate_ssh_plan(SshPlan(target="ssh://r@h", variants=variants, reboot="reboot"))
    with pytest.raises(InputError):
        validate_ssh_plan(SshPlan(target="ssh://r@h", variants=variants, reboot="halt"))
    with pytest.raises(InputError):
        build_ssh_variants(SshVariant("default"), ["a:", "a:"])
    with pytest.raises(InputError):
        ssh_plan_from_dict({"workload": "ssh"})
    # tune's first look boots the baseline more often a round; stored as JSON, read back the same
    often = SshPlan(
        target="ssh://r@h", variants=(SshVariant("a"), SshVariant("b")), slots_a_round=(("a", 4),)
    )
    assert ssh_plan_from_dict(json.loads(json.dumps({"workload": "ssh", **often.to_dict()}))) == often
    assert often.settings().slots_a_round == (("a", 4),)
    with pytest.raises(InputError, match="slots a round"):
        validate_ssh_plan(replace(often, slots_a_round=(("a", 0),)))


def test_a_timed_out_reboot_leaves_its_slot_for_resume() -> None:
    workload = SshWorkload(SshPlan(target="ssh://r@h", variants=(SshVariant("default"),)))
    slot = Slot(index=1, variant="default", round=0, warmup=False)

    def record(outcome: str) -> BootRecord:
        return BootRecord(variant="default", index=1, warmup=False, outcome=outcome)

    assert not workload.slot_done(slot, [record("timeout")])
    assert not workload.slot_done(slot, [])
    for done in ("ok", "kexec-error", "panic", "log-missing"):
        assert workload.slot_done(slot, [record(done)])


def test_same_machine_needs_the_same_machine_id() -> None:
    assert same_machine("d154df\n", "d154df")
    assert not same_machine("d154df", "0a0b0c")
    assert not same_machine(None, "") and not same_machine("", "")


def test_stored_log_reads_as_the_journal_with_the_console_kept_apart() -> None:
    journal = JOURNAL.read_text().splitlines()
    output = "\n".join(
        [
            "BOOTSCOPE-SSH-FACT boot_id 1234",
            "BOOTSCOPE-SSH-FACT release 6.1.0-56-cloud-amd64",
            "BOOTSCOPE-SSH-LOG-BEGIN",
            "journal",
            *journal,
            "BOOTSCOPE-SSH-LOG-END",
        ]
    )
    collected = parse_collected(output)
    assert collected.has_start and collected.source == "journal"
    assert collected.facts == {"boot_id": "1234", "release": "6.1.0-56-cloud-amd64"}
    console = [_line(text, 1000 + i) for i, text in enumerate(CONSOLE.read_text().splitlines())]
    lines = stored_lines(collected, console)
    analysis = analyze_captured(lines, host_start_ns=0)
    alone = analyze_captured([LogLine(text) for text in collected.log], host_start_ns=None)
    assert analysis.format == "journal"
    init = analysis.breakdown.metrics.kernel_init_s
    assert init is not None and init == alone.breakdown.metrics.kernel_init_s
    # The console is stored with its host stamps and read back without its prefix.
    back = split_console(lines)
    assert len(back) == len(console) and back[-1].host_ns == console[-1].host_ns
    assert "\x1b" not in "".join(line.text for line in back)
    assert stored_console([]) == []
    assert KERNEL_INIT_S  # the metric the journal gives


def test_dmesg_output_is_stored_in_the_journal_form() -> None:
    output = (
        "BOOTSCOPE-SSH-LOG-BEGIN\ndmesg\n[    0.000000] Linux version 6.1\n"
        "[    1.500000] Run /init as init process\nBOOTSCOPE-SSH-LOG-END\n"
    )
    collected = parse_collected(output, host="box")
    assert collected.log[0] == "[    0.000000] box kernel: Linux version 6.1"
    analysis = analyze_captured([LogLine(text) for text in collected.log], host_start_ns=None)
    assert analysis.format == "journal" and analysis.breakdown.metrics.kernel_init_s == 1.5


def test_console_reader_stamps_every_line_of_a_real_command() -> None:
    reader = ConsoleReader("printf 'one\\r\\ntwo\\nthree'")
    reader.start()
    for _ in range(100):
        if reader.ended:
            break
        time.sleep(0.02)
    reader.stop()
    lines = reader.lines_since(0)
    assert [line.text for line in lines] == ["one", "two", "three"]
    assert all(line.host_ns for line in lines)
    reader.forget_before(lines[-1].host_ns or 0)
    assert [line.text for line in reader.lines_since(0)] == ["three"]


def test_socat_console_stays_connected_while_the_machine_is_quiet(tmp_path: Path) -> None:
    # `socat - UNIX-CONNECT:...` (the README's console for a served machine) ends the connection half
    # a second after its standard input ends: a reader that gave it /dev/null heard nothing at all
    # from a real served guest. A socket server that speaks only after 1.5 s stands in for QEMU's.
    path = tmp_path / "console.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(1)

    def speak_late() -> None:
        conn, _ = server.accept()
        time.sleep(1.5)
        conn.sendall(b"[    0.000000] Linux version 6.1.0\r\nbootscope login: \r\n")
        time.sleep(0.5)
        conn.close()

    thread = threading.Thread(target=speak_late, daemon=True)
    thread.start()
    reader = ConsoleReader(f"socat - UNIX-CONNECT:{path}")
    reader.start()
    thread.join(timeout=10)
    for _ in range(200):
        if reader.ended:
            break
        time.sleep(0.02)
    reader.stop()
    server.close()
    texts = [line.text for line in reader.lines_since(0)]
    assert texts == ["[    0.000000] Linux version 6.1.0", "bootscope login: "]


def _facts(**changes: str) -> dict[str, str]:
    facts = {
        "machine-id": "abc",
        "release": "6.1",
        "cmdline": "root=/dev/vda ro",
        "kexec": "/usr/sbin/kexec",
        "kexec-load-disabled": "0",
        "journal-dir": "yes",
        "journalctl": "/usr/bin/journalctl",
        "printk-time": "Y",
        "clocksource": "tsc",
        "free-kb": "1048576",
        "user": "0",
        "sudo": "no",
    }
    return facts | changes


def _status(checks: list[object], name: str) -> str:
    return next(c.status for c in checks if c.name == name)  # type: ignore[attr-defined]


def test_check_advice() -> None:
    good = advise(_facts(), local_machine_id="other")
    assert all(c.status == GOOD for c in good) and "machine" not in {c.name for c in good}
    disabled = advise(_facts(**{"kexec-load-disabled": "1"}))
    assert _status(disabled, "kexec") == BAD
    assert "reboot" in next(c.advice for c in disabled if c.name == "kexec")
    assert _status(advise(_facts(kexec="missing")), "kexec") == BAD
    assert _status(advise(_facts(**{"journal-dir": "no"})), "journal") == WARN
    assert _status(advise(_facts(**{"printk-time": "N"})), "printk.time") == BAD
    assert _status(advise(_facts(clocksource="jiffies")), "clocksource") == WARN
    assert _status(advise(_facts(cmdline="ro initcall_debug")), "initcall_debug") == WARN
    assert _status(advise(_facts(**{"free-kb": "1024"})), "disk") == WARN
    assert _status(advise(_facts(user="1000", sudo="no")), "root") == BAD
    assert _status(advise(_facts(user="1000", sudo="yes")), "root") == GOOD
    assert _status(advise(_facts(), local_machine_id="abc"), "machine") == WARN
    assert parse_facts("junk\nBOOTSCOPE-CHECK release 6.1 x\n") == {"release": "6.1 x"}


def test_cli_refuses_bad_ssh_options_in_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = str(tmp_path / "x.db")
    code = run_in_process("run", "ssh://root@h", "--reboot", "reboot", "--append", "quiet", "--db", db)
    assert code == 2
    assert "boot loader" in capsys.readouterr().err
    code = run_in_process("run", "ssh://h", "--db", db)
    assert code == 2 and "user" in capsys.readouterr().err
    code = run_in_process("run", "debian:cloud", "--reboot", "kexec", "--db", db)
    assert code == 2 and "ssh://" in capsys.readouterr().err
    code = run_in_process("target", "check", "ssh://root:pw@h")
    assert code == 2 and "password" in capsys.readouterr().err

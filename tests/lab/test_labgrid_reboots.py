"""Cold, warm and kexec reboots of one board through real labgrid, interleaved as the variants of one
run (examples/labgrid-shell-qemu.yaml): labgrid's QEMU driver boots the pinned Debian cloud kernel
with bootscope's shell initramfs under -icount, labgrid's ShellDriver logs in on its console, and a
warm reboot is `reboot` there, a kexec reboot `kexec -l` of the running kernel then `kexec -e`. Every
stored number is read again from the stored console by this test's own reader: the old kernel's last
stamped line, the new banner, 'Run /init' and the marker, each with its host stamp."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from bootscope.lab.qemu.initramfs import read_newc
from bootscope.lab.qemu.shell_initramfs import build_shell_initramfs
from bootscope.lab.targets.labgrid.examples import INITRD_VARIABLE, KERNEL_VARIABLE, SHELL_INITRD_VARIABLE
from bootscope.model import LogLine
from bootscope.store import Store
from tests.cli_here import run_in_process
from tests.lab.printed_cmdline import printed_cmdline

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "labgrid-shell-qemu.yaml"
NO_SHELL = ROOT / "examples" / "labgrid-qemu.yaml"
_STAMP = re.compile(r"\[\s*(\d+\.\d+)\]")
# The marker rcS prints; the last boot's own lines start after the old kernel's last stamped line
_MARKER = "BOOTSCOPE-MARKER"
# What the old kernel prints last (arch/x86/kernel/reboot.c's machine_restart; kernel/kexec_core.c)
_LAST_OLD = {"warm": "reboot: machine restart", "kexec": "kexec_core: Starting new kernel"}


@pytest.fixture
def shell_board(cloud_kernel: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The example environment with the pinned kernel; bootscope builds the shell initramfs."""
    monkeypatch.setenv(KERNEL_VARIABLE, str(cloud_kernel))
    monkeypatch.delenv(SHELL_INITRD_VARIABLE, raising=False)
    return f"labgrid:{EXAMPLE}"


def _seconds(start_ns: int, line: LogLine) -> float:
    assert line.host_ns is not None
    return (line.host_ns - start_ns) / 1e9


def _check_reboot(way: str, metrics: dict[str, float | None], log: list[LogLine], start_ns: int) -> None:
    """A warm or kexec reboot's numbers, against its console read here."""
    banner = max(i for i, line in enumerate(log) if "Linux version " in line.text)
    run_init = next(line for line in log[banner:] if "Run /init as init process" in line.text)
    stamp = _STAMP.search(run_init.text)
    assert stamp is not None and metrics["kernel_init_s"] == pytest.approx(float(stamp[1]))
    marker = next(line for line in log[banner:] if _MARKER in line.text)
    assert metrics["restart_to_marker_s"] == pytest.approx(_seconds(start_ns, marker))
    assert metrics.get("poweron_to_kernel_s") is None  # nothing was powered on
    last_old = max((i for i in range(banner) if _STAMP.search(log[i].text)), default=None)
    if last_old is None:  # a quiet old kernel: none of its lines reached the console
        assert metrics.get("reboot_stop_s") is None and metrics.get("kexec_downtime_s") is None
        return
    assert _LAST_OLD[way] in log[last_old].text, log[last_old].text
    # reboot_stop_s and kexec_downtime_s are stored to the microsecond (as over SSH)
    assert metrics["reboot_stop_s"] == pytest.approx(_seconds(start_ns, log[last_old]), abs=1e-6)
    if way == "kexec":
        downtime = (run_init.host_ns or 0) - (log[last_old].host_ns or 0)
        assert metrics["kexec_downtime_s"] == pytest.approx(downtime / 1e9, abs=1e-6)
    else:
        assert metrics.get("kexec_downtime_s") is None


_WORDS = "bootscope.cold_words=1"


def _command_line(log: list[LogLine]) -> str:
    """The command line of the last kernel that booted in ``log``, as that kernel printed it."""
    return printed_cmdline([line.text for line in log])


@pytest.mark.boot
def test_cold_warm_and_kexec_reboots_are_variants_of_one_board_run(
    shell_board: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "reboots.db"
    # A fourth variant: a cold boot with words added to the QEMU driver's boot_args (labgrid's QEMU
    # starts the kernel itself); the warm and kexec reboots still boot the board's own line.
    code = run_in_process(
        "run", shell_board, "--reboot", "cold", "--variant", "cold:", "--variant", "warm:reboot=warm",
        "--variant", "kexec:reboot=kexec", "--variant", f"words:append={_WORDS}", "-n", "1", "--seed", "2",
        "--timeout", "120", "--db", str(db), "--format", "json",
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    document = json.loads(out)
    assert [(v["name"], v["ok"], v["failed"]) for v in document["variants"]] == [
        ("cold", 1, 0),
        ("warm", 1, 0),
        ("kexec", 1, 0),
        ("words", 1, 0),
    ]
    with Store.open(db) as store:
        boots = {boot.variant: boot for boot in store.boots(1)}
        logs = {way: store.boot_log(1, boot.index) for way, boot in boots.items()}
    lines = {way: _command_line(logs[way]) for way in boots}
    assert lines["words"] == f"console=ttyS0 panic=-1 {_WORDS}", lines
    assert all(lines[way] == "console=ttyS0 panic=-1" for way in ("cold", "warm", "kexec")), lines
    assert "poweron_to_kernel_s" in boots["words"].metrics
    cold = boots["cold"]
    assert cold.host_start_ns is not None
    first = next(line for line in logs["cold"] if _STAMP.search(line.text))
    assert cold.metrics["poweron_to_kernel_s"] == pytest.approx(_seconds(cold.host_start_ns, first))
    marker = next(line for line in logs["cold"] if _MARKER in line.text)
    assert cold.metrics["restart_to_marker_s"] == pytest.approx(_seconds(cold.host_start_ns, marker))
    assert cold.metrics["restart_to_marker_s"] == cold.metrics["host_wall_s"]
    for way in ("warm", "kexec"):
        boot = boots[way]
        assert boot.outcome == "ok" and boot.host_start_ns is not None, boot.reason
        _check_reboot(way, boot.metrics, logs[way], boot.host_start_ns)
    assert boots["warm"].command[-1] == "reboot"  # written to the console: root's shell, no sudo
    assert "kexec -l" in boots["kexec"].command[-2] and "kexec -e" in boots["kexec"].command[-1]
    # The kexec reboot skips the firmware: SeaBIOS prints on the cold and warm consoles only
    assert any("SeaBIOS" in line.text for line in logs["warm"])
    assert not any("SeaBIOS" in line.text for line in logs["kexec"])


@pytest.mark.boot
def test_a_board_without_a_shell_is_refused_before_anything_is_stored(
    cloud_kernel: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(KERNEL_VARIABLE, str(cloud_kernel))
    monkeypatch.setenv(INITRD_VARIABLE, "/nonexistent-initrd")  # never booted: refused first
    db = tmp_path / "x.db"
    code = run_in_process("run", f"labgrid:{NO_SHELL}", "--reboot", "cold,warm", "--db", str(db))
    err = capsys.readouterr().err.strip()
    assert code == 3 and "has no shell" in err and len(err.splitlines()) == 1, err
    if db.exists():
        with Store.open(db) as store:
            assert all(run.boots == 0 for run in store.list_experiments())


def test_bad_reboot_lists_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "x.db")
    for reboot in ("hot", "cold,cold", "cold,,warm"):
        code = run_in_process("run", f"labgrid:{EXAMPLE}", "--reboot", reboot, "--db", db)
        err = capsys.readouterr().err.strip()
        assert code == 2 and "reboots cold, warm, kexec" in err and len(err.splitlines()) == 1, (reboot, err)


def test_the_shell_initramfs_carries_what_a_kexec_reboot_needs(cloud_kernel: Path) -> None:
    archive = build_shell_initramfs(cloud_kernel)
    entries = {name: data for name, _mode, data in read_newc(gzip.decompress(archive.read_bytes()))}
    assert entries["boot/vmlinuz"] == cloud_kernel.read_bytes()
    assert any(name.endswith("sbin/kexec") for name in entries)
    assert "::respawn:-/bin/sh" in entries["etc/inittab"].decode()
    rcs = entries["etc/init.d/rcS"].decode()
    assert rcs.index(_MARKER) < rcs.index("cpio -o")  # the archive is made after the marker
    assert "bootscope-board# " in entries["etc/profile"].decode()


def test_named_variants_reboot_their_own_way_and_add_words_to_kexec_and_cold(tmp_path: Path) -> None:
    from bootscope.errors import InputError
    from bootscope.lab.plans.board import BoardPlan, BoardVariant, board_plan_from_dict, build_board_variants

    board = f"labgrid:{EXAMPLE.resolve()}:main"
    named = build_board_variants(
        ("loud:reboot=kexec", "quiet:reboot=kexec,append=quiet loglevel=3", "off"), "cold"
    )
    assert named == (
        BoardVariant("loud", "kexec"),
        BoardVariant("quiet", "kexec", "quiet loglevel=3"),
        BoardVariant("off", "cold"),
    )
    plan = BoardPlan(board=board, seed=1, variants=named)
    assert plan.variant_names == ("loud", "quiet", "off") and plan.needs_shell
    assert board_plan_from_dict({"workload": "board", **plan.to_dict()}) == plan
    # tune's first look boots one variant more often a round; stored as JSON, read back the same
    often = BoardPlan(board=board, seed=1, variants=named, slots_a_round=(("loud", 4),))
    assert board_plan_from_dict(json.loads(json.dumps({"workload": "board", **often.to_dict()}))) == often
    assert often.settings().slots_a_round == (("loud", 4),)
    with pytest.raises(InputError, match="slots a round"):
        BoardPlan(board=board, seed=1, variants=named, slots_a_round=(("nobody", 4),))
    # a whole command line in place of the board's own (what `tune` tries), words appended after it
    (whole,) = build_board_variants(("t:cmdline=console=ttyS0 quiet,append=loglevel=3",), "kexec")
    assert whole.command_line("console=ttyS0 panic=-1") == "console=ttyS0 quiet loglevel=3"
    assert named[1].command_line("console=ttyS0 panic=-1") == "console=ttyS0 panic=-1 quiet loglevel=3"
    # a plan stored before named variants reads back with the ways of --reboot
    old = board_plan_from_dict({"workload": "board", "board": board, "seed": 1, "reboot": "cold,kexec"})
    assert old.ways == (BoardVariant("cold", "cold"), BoardVariant("kexec", "kexec"))
    # a cold boot takes words too (where the power driver starts the kernel: checked when it boots)
    (cold,) = build_board_variants(("q:append=quiet",), "cold")
    assert cold.command_line("console=ttyS0") == "console=ttyS0 quiet"
    for texts, reboot, message in (
        (("q:reboot=warm,append=quiet",), "cold", "append= needs reboot=kexec or cold"),
        (("q:reboot=warm,cmdline=console=ttyS0 quiet",), "cold", "cmdline= needs reboot=kexec or cold"),
        (("a:reboot=kexec", "a:reboot=warm"), "cold", "unique"),
        (("a:reboot=hot",), "cold", "reboot=hot"),
        (("a:reboot=kexec",), "cold,warm", "names the one way"),
    ):
        with pytest.raises(InputError, match=message):
            BoardPlan(board=board, seed=1, reboot=reboot, variants=build_board_variants(texts, "cold"))


@pytest.mark.boot
def test_the_consoles_cost_is_two_kexec_variants_whose_words_do_not_pile_up(
    shell_board: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "console.db"
    code = run_in_process(
        "run", shell_board, "--reboot", "kexec", "--variant", "loud:", "--variant", "quiet:append=quiet",
        "-n", "2", "--seed", "5", "--timeout", "120", "--db", str(db), "--format", "json",
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    assert [(v["name"], v["ok"]) for v in json.loads(out)["variants"]] == [("loud", 2), ("quiet", 2)]
    with Store.open(db) as store:
        boots = store.boots(1)
        logs = [store.boot_log(1, boot.index) for boot in boots]
    # Two rounds: some loud boot follows a quiet one, and still runs the board's own command line
    order = [boot.variant for boot in boots]
    assert any(order[i] == "quiet" and order[i + 1] == "loud" for i in range(len(order) - 1)), order
    for boot, log in zip(boots, logs, strict=True):
        assert boot.host_start_ns is not None
        loading = boot.command[-2]
        marker = next(line for line in log if _MARKER in line.text)
        assert boot.metrics["restart_to_marker_s"] == pytest.approx(_seconds(boot.host_start_ns, marker))
        if boot.variant == "loud":
            assert "--command-line='console=ttyS0 panic=-1'" in loading, loading
            assert _command_line(log) == "console=ttyS0 panic=-1"
            _check_reboot("kexec", boot.metrics, log, boot.host_start_ns)
        else:
            assert "--command-line='console=ttyS0 panic=-1 quiet'" in loading, loading
            # quiet keeps the new kernel's own lines (its banner, 'Run /init') off the console: the
            # marker ends the boot all the same; the kernel's numbers are not on the console to read
            assert not any("Linux version " in line.text for line in log[1:])
            assert boot.metrics.get("kernel_init_s") is None
            assert len(log) < 40, len(log)


@pytest.mark.boot
def test_a_latency_run_measures_on_the_boards_own_shell(
    shell_board: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "latency.db"
    code = run_in_process(
        "latency", "run", shell_board, "--duration", "2s", "-n", "1", "--histogram", "50", "--seed", "1",
        "--db", str(db), "--format", "json",
    )  # fmt: skip
    _out, err = capsys.readouterr()
    assert code == 0, err
    with Store.open(db) as store:
        (boot,) = store.boots(1)
        log = [line.text for line in store.boot_log(1, boot.index)]
    assert boot.outcome == "ok", boot.reason
    # The facts are the board's (its kernel, its command line), not this host's
    facts = dict(line.partition("=")[::2] for line in log if "=" in line and not line.startswith("#"))
    assert facts["cmdline"] == "console=ttyS0 panic=-1" and facts["kernel_release"].endswith("-cloud-amd64")
    assert facts["cpus"] == "1"
    assert facts["tool_command"].startswith("cyclictest ")
    # The stored worst case is the one cyclictest printed on the board's console
    worst = next(line for line in log if line.startswith("# Max Latencies:"))
    assert boot.metrics["latency_max_us"] == max(int(word) for word in worst.split(":", 1)[1].split())

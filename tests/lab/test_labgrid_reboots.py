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
from bootscope.model import LogLine
from bootscope.store import Store
from bootscope.usecases.board import INITRD_VARIABLE, KERNEL_VARIABLE, SHELL_INITRD_VARIABLE
from tests.cli_here import run_in_process

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
    last_old = max(i for i in range(banner) if _STAMP.search(log[i].text))
    assert _LAST_OLD[way] in log[last_old].text, log[last_old].text
    # reboot_stop_s and kexec_downtime_s are stored to the microsecond (as over SSH)
    assert metrics["reboot_stop_s"] == pytest.approx(_seconds(start_ns, log[last_old]), abs=1e-6)
    run_init = next(line for line in log[banner:] if "Run /init as init process" in line.text)
    stamp = _STAMP.search(run_init.text)
    assert stamp is not None and metrics["kernel_init_s"] == pytest.approx(float(stamp[1]))
    marker = next(line for line in log[banner:] if _MARKER in line.text)
    assert metrics["restart_to_marker_s"] == pytest.approx(_seconds(start_ns, marker))
    if way == "kexec":
        downtime = (run_init.host_ns or 0) - (log[last_old].host_ns or 0)
        assert metrics["kexec_downtime_s"] == pytest.approx(downtime / 1e9, abs=1e-6)
    else:
        assert metrics.get("kexec_downtime_s") is None
    assert metrics.get("poweron_to_kernel_s") is None  # nothing was powered on


@pytest.mark.boot
def test_cold_warm_and_kexec_reboots_are_variants_of_one_board_run(
    shell_board: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "reboots.db"
    code = run_in_process(
        "run", shell_board, "--reboot", "cold,warm,kexec", "-n", "1", "--seed", "2", "--timeout", "120",
        "--db", str(db), "--format", "json",
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    document = json.loads(out)
    assert [(v["name"], v["ok"], v["failed"]) for v in document["variants"]] == [
        ("cold", 1, 0),
        ("warm", 1, 0),
        ("kexec", 1, 0),
    ]
    with Store.open(db) as store:
        boots = {boot.variant: boot for boot in store.boots(1)}
        logs = {way: store.boot_log(1, boot.index) for way, boot in boots.items()}
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

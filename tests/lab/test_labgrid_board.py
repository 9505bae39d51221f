"""A board booted from power-on through real labgrid: its QEMU driver is the board (power on and off
through labgrid's power protocol, the console through its console protocol), booting the pinned
Debian cloud kernel with bootscope's initramfs under -icount (examples/labgrid-qemu.yaml, the
README's example). Every stored number is read again from the stored console by a simple reader of
its own: the time from power-on to the first kernel-stamped line, and the printk stamp of 'Run
/init'. labgrid's coordinator and places are not covered yet (issue 30)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from bootscope.errors import InputError
from bootscope.lab.targets.labgrid.address import parse_board
from bootscope.lab.targets.labgrid.board import LabgridBoard
from bootscope.lab.targets.labgrid.examples import INITRD_VARIABLE, KERNEL_VARIABLE
from bootscope.lab.targets.qemu import LocalQemu
from bootscope.store import Store
from tests.cli_here import run_in_process

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "labgrid-qemu.yaml"
_STAMP = re.compile(r"^\[\s*(\d+\.\d+)\]")


@pytest.fixture
def example_board(cloud_kernel: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The example environment, its kernel and initramfs given as the README says (variables)."""
    monkeypatch.setenv(KERNEL_VARIABLE, str(cloud_kernel))
    monkeypatch.setenv(INITRD_VARIABLE, str(LocalQemu().build_initramfs((), ())))
    return f"labgrid:{EXAMPLE}"


def test_a_board_is_an_environment_file_and_a_target(tmp_path: Path) -> None:
    env = tmp_path / "lab.yaml"
    env.write_text("targets: {}\n")
    assert parse_board(f"labgrid:{env}").target == "main"
    assert parse_board(f"labgrid:{env}:board-7").url == f"labgrid:{env.resolve()}:board-7"
    for bad, message in (
        ("labgrid:/no/such.yaml", "no environment file"),
        (f"labgrid:{env}:", "names no target"),
        ("ssh://x", "not a labgrid board"),
    ):
        with pytest.raises(InputError, match=message):
            parse_board(bad)


@pytest.mark.boot
def test_cold_boots_through_labgrid_are_stored_with_their_power_on_times(
    example_board: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "board.db"
    code = run_in_process(
        "run", example_board, "--reboot", "cold", "-n", "2", "--seed", "3", "--timeout", "120",
        "--db", str(db), "--format", "json",
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    variant = json.loads(out)["variants"][0]
    assert (variant["name"], variant["ok"], variant["failed"]) == ("cold", 2, 0)
    with Store.open(db) as store:
        experiment = store.experiment(1)
        boots = store.boots(1)
        logs = [store.boot_log(1, boot.index) for boot in boots]
    assert experiment.plan["workload"] == "board" and experiment.accel == "hardware"
    assert experiment.plan["board"] == f"labgrid:{EXAMPLE}:main"
    init_s: list[float] = []
    for boot, log in zip(boots, logs, strict=True):
        assert boot.outcome == "ok" and boot.host_start_ns is not None
        first = next(line for line in log if _STAMP.match(line.text))
        assert first.host_ns is not None
        assert boot.metrics["poweron_to_kernel_s"] == pytest.approx(
            (first.host_ns - boot.host_start_ns) / 1e9
        )
        assert 0 < boot.metrics["poweron_to_kernel_s"] < 60
        run_init = next(line.text for line in log if "Run /init as init process" in line.text)
        stamp = _STAMP.match(run_init)
        assert stamp is not None and boot.metrics["kernel_init_s"] == pytest.approx(float(stamp[1]))
        init_s.append(boot.metrics["kernel_init_s"])
    # No claim that the two -icount boots repeat each other: through labgrid they do not (4 quiet
    # boots here spread 11.610 to 11.628 s, CI with both lanes running saw 11.493 and 11.619 s),
    # where bootscope's own QEMU repeats to the microsecond; the cause is not found yet (issue 30).
    assert all(8.0 < value < 20.0 for value in init_s), init_s


@pytest.mark.boot
def test_ctrl_c_mid_boot_switches_the_board_off(example_board: str) -> None:
    board = LabgridBoard(example_board)
    seen: list[str] = []

    def interrupt(line: object) -> None:
        seen.append(str(line))
        if len(seen) == 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        board.power_cycle(60.0, "BOOTSCOPE-MARKER", interrupt)  # type: ignore[arg-type]
    assert not _labgrid_qemus(), "the board was left on"
    board.close()
    board.close()  # twice is fine


def _labgrid_qemus() -> list[str]:
    """The QEMUs labgrid started for this process: the other lane's tests start their own boards
    (the image through labgrid), which are not this test's to find."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "qemu-system" in cmdline and "labgrid-qemu-tmp" in cmdline and _ours(int(proc.name)):
            found.append(cmdline)
    return found


def _ours(pid: int) -> bool:
    """Whether process ``pid`` descends from this one (its parents read from /proc/PID/stat)."""
    while pid > 1:
        if pid == os.getpid():
            return True
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        pid = int(stat.rsplit(")", 1)[1].split()[1])  # the field after the state: the parent's pid
    return False


def test_bad_board_runs_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "x.db")
    for args, message in (
        (["run", "labgrid:/no/such.yaml", "--db", db], "no environment file"),
        (["run", f"labgrid:{EXAMPLE}", "--smp", "2", "--db", db], "QEMU options do not apply"),
        (["run", f"labgrid:{EXAMPLE}", "--reboot", "hot", "--db", db], "reboots cold, warm, kexec"),
    ):
        code = run_in_process(*args)
        err = capsys.readouterr().err.strip()
        assert code == 2 and message in err and len(err.splitlines()) == 1, (args, err)


class _Qemu:
    """Stands in for LocalQemu: says which kernel and initramfs it would give."""

    def resolve_kernel(self, spec: str) -> object:
        assert spec == "debian:cloud"
        return type("K", (), {"image": Path("/k/vmlinuz")})()

    def build_initramfs(self, commands: tuple[str, ...], files: tuple[object, ...]) -> Path:
        assert commands == () and files == ()
        return Path("/i/initramfs.cpio.gz")


def test_the_example_gets_its_kernel_and_initramfs_unless_given(monkeypatch: pytest.MonkeyPatch) -> None:
    from bootscope.lab.plans.board import BoardPlan
    from bootscope.lab.targets.labgrid.examples import provide_example_paths

    plan = BoardPlan(board=f"labgrid:{EXAMPLE}:main", seed=1)
    monkeypatch.setenv(KERNEL_VARIABLE, "")  # recorded, so that the value the test sets is undone
    monkeypatch.delenv(KERNEL_VARIABLE)
    monkeypatch.setenv(INITRD_VARIABLE, "/mine.cpio")
    notes = provide_example_paths(plan.board, _Qemu())  # type: ignore[arg-type]
    assert notes == [f"{KERNEL_VARIABLE}=/k/vmlinuz (debian:cloud)"]
    assert os.environ[KERNEL_VARIABLE] == "/k/vmlinuz" and os.environ[INITRD_VARIABLE] == "/mine.cpio"
    assert provide_example_paths(plan.board, _Qemu()) == []  # type: ignore[arg-type]  # both given now

"""A cold boot's command line on a labgrid board (fast, beside the real board in
test_labgrid_reboots.py, whose fourth variant boots labgrid's QEMU driver with words added): the
power driver is given the variant's line only when it changes, re-activated with the console, and
a driver that starts no kernel (stand-ins, and real labgrid's QEMU driver booting U-Boot with no
UBootDriver to give U-Boot a line) refuses words in one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bootscope.errors import BootError
from bootscope.lab.plans.board import BoardVariant
from bootscope.lab.targets.labgrid.boot_args import own_boot_args, set_boot_args
from bootscope.store import Store
from tests.cli_here import run_in_process

UBOOT = Path(__file__).resolve().parents[2] / "examples" / "labgrid-uboot-qemu.yaml"


def _without_uboot_driver(into: Path) -> Path:
    """Write the U-Boot example without its UBootDriver (U-Boot's prompt out of bootscope's reach)."""
    text = UBOOT.read_text(encoding="utf-8")
    start = text.index("      UBootDriver:")
    end = text.index("tools:", start)
    assert "UBootDriver" not in text[end:]
    env = into / "uboot-no-driver.yaml"
    env.write_text(text[:start] + text[end:], encoding="utf-8")
    return env


class _Qemu:
    """Stands in for labgrid's QEMUDriver: the kernel's command line is ``boot_args``."""

    def __init__(self, boot_args: str | None, kernel: str | None = "kernel") -> None:
        self.boot_args = boot_args
        self.kernel = kernel  # None: it boots a boot loader as its firmware (-bios), no kernel


class _Relay:
    """Stands in for a power driver that only switches power (a PDU, a relay)."""


class _Target:
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def deactivate(self, driver: Any) -> None:
        self.calls.append(("deactivate", driver))

    def activate(self, driver: Any) -> None:
        self.calls.append(("activate", driver))


def test_a_qemu_board_boots_the_variants_line_and_then_its_own_again() -> None:
    target, qemu, console = _Target(), _Qemu("console=ttyS0 panic=-1"), object()
    own = own_boot_args(qemu)
    assert own == "console=ttyS0 panic=-1"
    set_boot_args(target, (qemu, console), own, BoardVariant("loud", "cold"), "main")
    assert target.calls == []  # its own line already: nothing re-activated
    set_boot_args(target, (qemu, console), own, BoardVariant("q", "cold", append="quiet"), "main")
    assert qemu.boot_args == "console=ttyS0 panic=-1 quiet"
    assert target.calls == [("deactivate", qemu), ("activate", qemu), ("activate", console)]
    set_boot_args(target, (qemu, console), own, BoardVariant("w", "cold", cmdline="console=ttyS0"), "main")
    assert qemu.boot_args == "console=ttyS0"
    set_boot_args(target, (qemu, console), own, None, "main")  # a warm or kexec reboot's first boot
    assert qemu.boot_args == "console=ttyS0 panic=-1" and len(target.calls) == 9
    assert own_boot_args(_Qemu(None)) == ""
    assert own_boot_args(_Qemu("console=ttyS0", kernel=None)) is None  # U-Boot as QEMU's firmware


def test_a_board_whose_power_starts_no_kernel_refuses_words_in_one_line() -> None:
    target, relay = _Target(), _Relay()
    assert own_boot_args(relay) is None
    set_boot_args(target, (relay, object()), None, BoardVariant("plain", "cold"), "bench")  # no words
    with pytest.raises(
        BootError, match=r"'bench': its power driver _Relay does not start the kernel"
    ) as error:
        set_boot_args(target, (relay, object()), None, BoardVariant("q", "cold", append="quiet"), "bench")
    assert "or use reboot=kexec" in str(error.value) and "\n" not in str(error.value)
    assert target.calls == []


def test_real_labgrid_refuses_words_for_qemu_booting_u_boot_before_any_boot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # labgrid's QEMU driver with U-Boot as its firmware (no kernel of its own): its boot_args would be
    # ignored, and no UBootDriver reaches U-Boot's prompt, so the words are refused when the board is
    # opened, before anything boots.
    db = tmp_path / "u.db"
    code = run_in_process(
        "run",
        f"labgrid:{_without_uboot_driver(tmp_path)}",
        "--reboot",
        "cold",
        "--variant",
        "q:append=quiet",
        "-n",
        "1",
        "--db",
        str(db),
    )
    err = capsys.readouterr().err.strip()
    assert code == 3 and len(err.splitlines()) == 1, err
    assert "its power driver QEMUDriver does not start the kernel" in err and "reboot=kexec" in err
    assert "give the target a UBootDriver" in err
    if db.exists():
        with Store.open(db) as store:
            assert all(run.boots == 0 for run in store.list_experiments())


def test_a_tune_from_power_on_of_a_u_boot_board_is_refused_before_it_is_switched_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "t.db"
    env = _without_uboot_driver(tmp_path)
    code = run_in_process("tune", f"labgrid:{env}", "--reboot", "cold", "-n", "4", "--db", str(db))
    err = capsys.readouterr().err.strip()
    assert code == 3 and len(err.splitlines()) == 1, err
    assert "its power driver QEMUDriver does not start the kernel" in err
    if db.exists():
        with Store.open(db) as store:
            assert store.list_experiments() == []


def test_a_given_kernel_that_is_no_file_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The U-Boot example's disk is built from LG_BOOTSCOPE_KERNEL when the caller gives it.
    monkeypatch.setenv("LG_BOOTSCOPE_KERNEL", str(tmp_path / "missing-vmlinuz"))
    monkeypatch.delenv("LG_BOOTSCOPE_UBOOT_DISK", raising=False)
    code = run_in_process(
        "run", f"labgrid:{UBOOT}", "--reboot", "cold", "-n", "1", "--db", str(tmp_path / "k.db")
    )
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert f"LG_BOOTSCOPE_KERNEL={tmp_path / 'missing-vmlinuz'}: no such file" in err

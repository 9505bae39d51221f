"""A board with a real boot loader: labgrid's QEMU driver powering a PC whose firmware is Debian's
U-Boot for QEMU (examples/labgrid-uboot-qemu.yaml), which finds the boot script on the disk
bootscope writes, prints its bootstage report and starts the pinned cloud kernel with bootscope's
initramfs. The stored numbers are checked against the stored console by a reader of this test's
own: U-Boot's start_kernel row, the first kernel-stamped line's arrival, 'Run /init'.

The disk's layout is checked byte by byte against the formats it follows (MBR partition entry,
ext2 superblock magic, U-Boot's legacy image header and its CRC32s), independently of U-Boot."""

from __future__ import annotations

import json
import re
import struct
import zlib
from pathlib import Path

import pytest

from bootscope.errors import InputError
from bootscope.lab.qemu.uboot import INITRD_ADDR, KERNEL_ADDR, boot_disk, boot_script
from bootscope.lab.targets.labgrid.examples import (
    INITRD_VARIABLE,
    KERNEL_VARIABLE,
    UBOOT_DISK_VARIABLE,
    UBOOT_VARIABLE,
)
from bootscope.lab.targets.qemu import LocalQemu
from bootscope.store import Store
from tests.cli_here import run_in_process

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "labgrid-uboot-qemu.yaml"
_STAMP = re.compile(r"^\[\s*(\d+\.\d+)\]")
_KERNEL_ROW = re.compile(r"^\s*([\d,]+)\s+[\d,]+\s+start_kernel\s*$")


def test_the_boot_script_is_a_legacy_script_image() -> None:
    image = boot_script("console=ttyS0 panic=-1")
    magic, header_crc, _time, size, _load, _entry, data_crc, os_, arch, kind, comp, name = struct.unpack(
        ">7I4B32s", image[:64]
    )
    assert (magic, os_, arch, kind, comp) == (0x27051956, 5, 3, 6, 0)  # Linux, x86, script, none
    body = image[64:]
    assert size == len(body) and data_crc == zlib.crc32(body)
    assert header_crc == zlib.crc32(image[:4] + b"\0\0\0\0" + image[8:64])
    length, end = struct.unpack(">II", body[:8])
    script = body[8 : 8 + length].decode()
    assert end == 0 and name.rstrip(b"\0") == b"bootscope"
    assert script.splitlines() == [
        "setenv bootargs console=ttyS0 panic=-1",
        f"ext2load virtio 0:1 {KERNEL_ADDR:08x} /vmlinuz",
        f"ext2load virtio 0:1 {INITRD_ADDR:08x} /initrd.gz",
        f"zboot {KERNEL_ADDR:08x} 0 {INITRD_ADDR:08x} ${{filesize}}",
    ]
    for bad in ("quiet; reset", "a=$b", 'x="y"', "x\nreset"):
        with pytest.raises(InputError, match="command line"):
            boot_script(bad)


def test_the_disk_holds_one_ext2_partition(tmp_path: Path) -> None:
    kernel, initrd = tmp_path / "k", tmp_path / "i"
    kernel.write_bytes(b"K" * 3000)
    initrd.write_bytes(b"I" * 5000)
    disk = boot_disk(kernel, initrd, "console=ttyS0", into=tmp_path)
    data = disk.read_bytes()
    assert data[510:512] == b"\x55\xaa"
    boot, kind, start, sectors = struct.unpack("<B3xB3xII", data[446:462])
    assert (boot, kind, start) == (0x80, 0x83, 2048)
    assert len(data) == (start + sectors) * 512
    (ext_magic,) = struct.unpack("<H", data[start * 512 + 1024 + 56 : start * 512 + 1024 + 58])
    assert ext_magic == 0xEF53
    assert boot_disk(kernel, initrd, "console=ttyS0", into=tmp_path) == disk  # kept by content
    assert boot_disk(kernel, initrd, "console=ttyS1", into=tmp_path) != disk


@pytest.mark.boot
def test_cold_boots_through_u_boot_store_its_bootstage_report(
    cloud_kernel: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(KERNEL_VARIABLE, str(cloud_kernel))
    monkeypatch.setenv(INITRD_VARIABLE, str(LocalQemu().build_initramfs((), ())))
    for variable in (UBOOT_VARIABLE, UBOOT_DISK_VARIABLE):
        monkeypatch.delenv(variable, raising=False)  # bootscope fetches the ROM and writes the disk
    db = tmp_path / "uboot.db"
    code = run_in_process(
        "run", f"labgrid:{EXAMPLE}", "--reboot", "cold", "-n", "2", "--seed", "5", "--timeout", "120",
        "--db", str(db), "--format", "json",
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    variant = json.loads(out)["variants"][0]
    assert (variant["ok"], variant["failed"]) == (2, 0)
    with Store.open(db) as store:
        boots = store.boots(1)
        logs = [store.boot_log(1, boot.index) for boot in boots]
    for boot, log in zip(boots, logs, strict=True):
        texts = [line.text for line in log]
        assert any("U-Boot 2023.01" in text for text in texts), "not U-Boot's console"
        rows = [m for text in texts if (m := _KERNEL_ROW.match(text))]
        assert len(rows) == 1
        assert boot.metrics["bootloader_handoff_s"] == pytest.approx(int(rows[0][1].replace(",", "")) / 1e6)
        first = next(line for line in log if _STAMP.match(line.text))
        assert first.host_ns is not None and boot.host_start_ns is not None
        assert boot.metrics["poweron_to_kernel_s"] == pytest.approx(
            (first.host_ns - boot.host_start_ns) / 1e9
        )
        run_init = next(line.text for line in log if "Run /init as init process" in line.text)
        stamp = _STAMP.match(run_init)
        assert stamp is not None and boot.metrics["kernel_init_s"] == pytest.approx(float(stamp[1]))
        # U-Boot's report comes before the kernel's first line on the console
        assert texts.index(rows[0][0]) < texts.index(first.text)


_SETENV = re.compile(r"=> setenv bootargs '(.*)'$")
_UBOOT_LINE = re.compile(r'^Kernel command line: "(.*)"$')
_STAGE = re.compile(r"^\s*[\d,]+\s+[\d,]+\s+(\w+)\s*$")


@pytest.mark.boot
def test_each_cold_boot_is_given_its_arms_line_at_u_boots_prompt(
    cloud_kernel: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The example's UBootDriver: every cold boot of a run with words is interrupted at U-Boot's
    # countdown, bootargs set and the kernel booted; the board's own line is learnt from one boot
    # first. Checked by reading each stored console: what was typed, what U-Boot handed the
    # kernel, and U-Boot's own report (cli_loop: its prompt ran; no usb_start: distro boot did not).
    monkeypatch.setenv(KERNEL_VARIABLE, str(cloud_kernel))
    monkeypatch.setenv(INITRD_VARIABLE, str(LocalQemu().build_initramfs((), ())))
    for variable in (UBOOT_VARIABLE, UBOOT_DISK_VARIABLE):
        monkeypatch.delenv(variable, raising=False)
    db = tmp_path / "prompt.db"
    code = run_in_process(
        "run", f"labgrid:{EXAMPLE}", "--reboot", "cold", "-n", "1", "--seed", "3", "--timeout", "120",
        "--variant", "plain:", "--variant", "quiet:append=quiet", "--db", str(db), "--format", "json",
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0, err
    own = "console=ttyS0 panic=-1"  # the line the example's boot script gives (usecases/board.py)
    wanted = {"plain": own, "quiet": f"{own} quiet"}
    with Store.open(db) as store:
        boots = store.boots(1)
        logs = [store.boot_log(1, boot.index) for boot in boots]
    assert sorted(boot.variant for boot in boots) == ["plain", "quiet"]
    for boot, log in zip(boots, logs, strict=True):
        texts = [line.text for line in log]
        assert boot.outcome == "ok", boot.reason
        typed = [m[1] for text in texts if (m := _SETENV.search(text))]
        handed = [m[1] for text in texts if (m := _UBOOT_LINE.match(text))]
        assert typed == handed == [wanted[boot.variant]]
        stages = [m[1] for text in texts if (m := _STAGE.match(text))]
        assert "cli_loop" in stages and "usb_start" not in stages, stages
        assert boot.metrics["bootloader_handoff_s"] is not None
    plain = next(i for i, boot in enumerate(boots) if boot.variant == "plain")
    first = next(line for line in logs[plain] if _STAMP.match(line.text))
    assert first.host_ns is not None and boots[plain].host_start_ns is not None
    assert boots[plain].metrics["poweron_to_kernel_s"] == pytest.approx(
        (first.host_ns - boots[plain].host_start_ns) / 1e9
    )

    # A boot command that sets bootargs itself (U-Boot's own bootcmd: the disk's script) boots
    # another line than the arm's: stored as a boot loader error, never as the arm's boot.
    text = EXAMPLE.read_text(encoding="utf-8")
    own_command = re.sub(r'boot_command: ".*"', 'boot_command: "run bootcmd"', text)
    assert own_command != text
    env = tmp_path / "uboot-own-bootcmd.yaml"
    env.write_text(own_command, encoding="utf-8")
    code = run_in_process(
        "run", f"labgrid:{env}", "--reboot", "cold", "-n", "1", "--timeout", "120",
        "--variant", "q:cmdline=console=ttyS0 panic=-1 quiet", "--db", str(tmp_path / "own.db"),
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 3 and "loader-error" in err, err
    with Store.open(tmp_path / "own.db") as store:
        (boot,) = store.boots(1)
    assert boot.outcome == "loader-error"
    assert "booted 'console=ttyS0 panic=-1', not the 'console=ttyS0 panic=-1 quiet'" in boot.reason

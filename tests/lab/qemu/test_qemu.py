"""One QEMU boot: the command line, line stamping, and each outcome on a real Debian cloud kernel."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from bootscope import defaults
from bootscope.errors import BootError, InputError
from bootscope.lab.hostload import HostLoadMeter
from bootscope.lab.qemu import process
from bootscope.lab.qemu.initramfs import BUSYBOX, InitramfsSpec, build_initramfs
from bootscope.lab.qemu.process import (
    BootConfig,
    LineSplitter,
    boot_once,
    build_command,
    disk_format,
    kernel_cmdline,
)
from bootscope.model import LogLine, Outcome
from bootscope.parse.patterns import PANIC_RE

KERNEL = Path("/nonexistent-kernel")
needs_qemu = pytest.mark.skipif(shutil.which("qemu-system-x86_64") is None, reason="QEMU not installed")


@pytest.fixture(scope="module")
def initrd() -> Path:
    if not BUSYBOX.is_file():
        pytest.skip("busybox-static not installed")
    return build_initramfs(InitramfsSpec(commands_before_marker=("echo guest-says-hello",)))


def test_command_has_no_network_no_sharing_and_serial_on_stdio() -> None:
    argv = build_command(BootConfig(kernel=KERNEL, initrd=Path("/i"), append="quiet", smp=2, mem_mb=256))
    joined = " ".join(argv)
    assert argv[0] == "qemu-system-x86_64"
    assert "-nic none" in joined and "-nodefaults" in argv and "-no-reboot" in argv
    assert "-serial stdio" in joined and "-accel tcg" in joined
    assert "-smp 2" in joined and "-m 256" in joined and "-initrd /i" in joined
    assert not any(option in argv for option in ("-virtfs", "-fsdev", "-netdev", "-drive", "-icount"))
    assert argv[argv.index("-append") + 1] == "quiet console=ttyS0 panic=-1"


def test_cmdline_keeps_the_users_console_and_panic() -> None:
    assert kernel_cmdline("console=ttyS1 panic=5 x") == "console=ttyS1 panic=5 x"
    assert kernel_cmdline("") == "console=ttyS0 panic=-1"


def test_icount_options_are_validated() -> None:
    argv = build_command(BootConfig(kernel=KERNEL, initrd=None, append="", icount_shift=3))
    assert argv[argv.index("-icount") + 1] == "shift=3,sleep=off"
    # Nothing of the host's time reaches an instruction-counted guest: its real-time clock starts at a
    # set date and runs on the virtual clock; a date given, or the user's own -rtc, is kept.
    assert argv[argv.index("-rtc") + 1] == "base=2030-01-01T00:00:00,clock=vm"
    dated = build_command(
        BootConfig(kernel=KERNEL, initrd=None, append="", icount_shift=3, rtc_base="2031-02-03T04:05:06")
    )
    assert dated[dated.index("-rtc") + 1] == "base=2031-02-03T04:05:06,clock=vm"
    own = ("-rtc", "base=utc")
    users = build_command(
        BootConfig(kernel=KERNEL, initrd=None, append="", icount_shift=3, extra_qemu_args=own)
    )
    assert users.count("-rtc") == 1 and users[users.index("-rtc") + 1] == "base=utc"
    plain = build_command(BootConfig(kernel=KERNEL, initrd=None, append=""))
    assert "-rtc" not in plain
    with pytest.raises(InputError, match="tcg"):
        build_command(BootConfig(kernel=KERNEL, initrd=None, append="", accel="kvm", icount_shift=3))
    with pytest.raises(InputError, match="smp 1"):
        build_command(BootConfig(kernel=KERNEL, initrd=None, append="", smp=2, icount_shift=3))
    with pytest.raises(InputError, match="regex"):
        build_command(BootConfig(kernel=KERNEL, initrd=None, append="", marker_regex="("))


def _drive(argv: list[str]) -> str:
    assert argv.count("-drive") == 1
    return argv[argv.index("-drive") + 1]


def test_an_nvdimm_maps_a_raw_disk_privately_beside_the_ram(tmp_path: Path) -> None:
    disk = tmp_path / "root,disk.img"
    disk.write_bytes(b"\0" * ((3 << 20) + 1))  # 3 MiB and one byte: room is rounded up to 4 MiB
    config = BootConfig(
        kernel=KERNEL, initrd=None, append="", disk=disk, disk_format="raw", disk_attach="nvdimm"
    )
    argv = build_command(config)
    assert "-drive" not in argv
    # One -m, with one slot and the RAM (256 MiB by default) plus the disk as the most memory.
    assert (
        argv.count("-m") == 1
        and argv[argv.index("-m") + 1] == f"{config.mem_mb},slots=1,maxmem={config.mem_mb + 4}M"
    )
    assert argv[argv.index("-machine") + 1] == "nvdimm=on"
    escaped = str(disk).replace(",", ",,")
    backend = f"memory-backend-file,id=bootscope-disk,share=off,mem-path={escaped},size={(3 << 20) + 1}"
    assert argv[argv.index("-object") + 1] == backend
    assert argv[argv.index("-device") + 1] == "nvdimm,memdev=bootscope-disk,id=bootscope-nvdimm"


def test_an_nvdimm_takes_raw_images_only(tmp_path: Path) -> None:
    disk = tmp_path / "d.qcow2"
    disk.write_bytes(b"\0" * 4096)
    with pytest.raises(InputError, match="an NVDIMM maps the disk's bytes: it takes a raw image, not qcow2"):
        build_command(
            BootConfig(
                kernel=KERNEL, initrd=None, append="", disk=disk, disk_format="qcow2", disk_attach="nvdimm"
            )
        )
    with pytest.raises(InputError, match="disk attach must be one of virtio, nvdimm"):
        build_command(BootConfig(kernel=KERNEL, initrd=None, append="", disk=disk, disk_attach="scsi"))


@pytest.mark.skipif(shutil.which("qemu-img") is None, reason="qemu-img not installed")
def test_disk_is_a_virtio_snapshot_in_the_format_qemu_img_reports(tmp_path: Path) -> None:
    # qemu-img reads the header, not the name: a raw file called .qcow2 stays raw, and a real qcow2
    # with a misleading name is still qcow2.
    raw = tmp_path / "looks-like.qcow2"
    raw.write_bytes(b"\0" * 65536)
    qcow = tmp_path / "disk,with,commas.img"
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", str(qcow), "1M"], check=True)
    assert (disk_format(raw), disk_format(qcow)) == ("raw", "qcow2")
    argv = build_command(BootConfig(kernel=KERNEL, initrd=None, append="root=/dev/vda", disk=raw))
    assert _drive(argv) == f"file={raw},if=virtio,format=raw,snapshot=on"
    assert argv.index("-drive") < argv.index("-append")
    # QEMU splits option values at commas; a doubled comma is a literal one.
    escaped = str(qcow).replace(",", ",,")
    argv = build_command(BootConfig(kernel=KERNEL, initrd=None, append="", disk=qcow))
    assert _drive(argv) == f"file={escaped},if=virtio,format=qcow2,snapshot=on"
    # A format given in the config is used as is (no qemu-img call, so no file needed).
    given = BootConfig(kernel=KERNEL, initrd=None, append="", disk=tmp_path / "x", disk_format="qcow2")
    assert "format=qcow2" in _drive(build_command(given))
    with pytest.raises(InputError, match="disk format"):
        build_command(BootConfig(kernel=KERNEL, initrd=None, append="", disk=raw, disk_format="raw,x=y"))


def test_disk_format_falls_back_to_the_suffix_and_rejects_unreadable_images(tmp_path: Path) -> None:
    image = tmp_path / "a.QCOW2"
    image.write_bytes(b"not really")
    assert disk_format(image, qemu_img="no-such-qemu-img") == "qcow2"
    plain = tmp_path / "a.img"
    plain.write_bytes(b"x")
    assert disk_format(plain, qemu_img="no-such-qemu-img") == "raw"
    with pytest.raises(BootError, match="no such disk image"):
        disk_format(tmp_path / "missing.img")
    with pytest.raises(BootError, match="no such disk image"):
        disk_format(tmp_path)  # a directory is no image
    with pytest.raises(BootError, match="no such disk image"):
        build_command(BootConfig(kernel=KERNEL, initrd=None, append="", disk=tmp_path / "missing.img"))


def test_missing_qemu_kernel_or_initrd_is_a_boot_error(tmp_path: Path) -> None:
    kernel = tmp_path / "k"
    kernel.write_bytes(b"x")
    with pytest.raises(BootError, match="QEMU not found"):
        boot_once(BootConfig(kernel=kernel, initrd=None, append="", qemu_binary="no-such-qemu-binary"))
    with pytest.raises(BootError, match="no such kernel"):
        boot_once(BootConfig(kernel=tmp_path / "none", initrd=None, append=""))
    with pytest.raises(BootError, match="no such initrd"):
        boot_once(BootConfig(kernel=kernel, initrd=tmp_path / "none", append=""))


def test_splitter_strips_cr_cuts_huge_lines_and_survives_junk() -> None:
    splitter = LineSplitter()
    assert splitter.feed(b"partial", 1) == []
    lines = splitter.feed(b" line\r\n\xff\xfe<b>\nnext", 2)
    assert [line.text for line in lines] == ["partial line", "\ufffd\ufffd<b>"]
    assert all(line.host_ns == 2 and line.guest_s is None for line in lines)
    huge = splitter.feed(b"y" * (1 << 17), 3)
    assert [len(line.text) for line in huge] == [len("next") + (1 << 16) - 4, 1 << 16]
    assert [line.text for line in splitter.flush(4)] == ["y" * 4]


@needs_qemu
def test_a_getty_prompt_is_a_line_of_its_own_when_it_arrives() -> None:
    # agetty prints "bootscope login: " and no newline; a kernel line may follow on the same line.
    splitter = LineSplitter(re.compile(rb"\S login: "))
    assert splitter.feed(b"\r\nDebian GNU/Linux 12 bootscope ttyS0\r\n\r\nbootscope log", 1) == [
        LogLine("", host_ns=1),
        LogLine("Debian GNU/Linux 12 bootscope ttyS0", host_ns=1),
        LogLine("", host_ns=1),
    ]
    assert splitter.feed(b"in: ", 2) == [LogLine("bootscope login: ", host_ns=2)]
    lines = splitter.feed(b"[   73.6] systemd[1]: Started x.\r\nbootscope login: \r\nBEGIN\r\n", 3)
    assert [line.text for line in lines] == ["[   73.6] systemd[1]: Started x.", "bootscope login: ", "BEGIN"]


def test_a_getty_prompt_split_by_another_writer_is_still_the_prompt() -> None:
    # Seen in CI: a starved guest's getty wrote its host name, the collector's output ended that
    # line, then the getty wrote " login: ", and the collector went on on the same line.
    splitter = LineSplitter(re.compile(defaults.LOGIN_PROMPT.encode()))
    assert [line.text for line in splitter.feed(b"\r\nbootscope", 1)] == [""]
    assert [line.text for line in splitter.feed(b"\r\n", 2)] == ["bootscope"]
    assert splitter.feed(b" login: ", 3) == [LogLine(" login: ", host_ns=3)]
    assert [line.text for line in splitter.feed(b"Id=modprobe@configfs.service\r\n", 4)] == [
        "Id=modprobe@configfs.service"
    ]
    # A line that merely holds the words is no prompt unless they start it or follow a name.
    assert [line.text for line in splitter.feed(b"no login: here\r\n", 5)] == ["no login: ", "here"]
    assert [line.text for line in splitter.feed(b"x  login:  y\r\n", 6)] == ["x  login:  y"]


def test_qemu_that_fails_to_start_is_a_qemu_error(tmp_path: Path) -> None:
    kernel = tmp_path / "k"
    kernel.write_bytes(b"x")
    boot = boot_once(BootConfig(kernel=kernel, initrd=None, append="", extra_qemu_args=("-no-such-option",)))
    assert boot.outcome is Outcome.QEMU_ERROR
    assert "exited with status 1" in boot.reason and "no-such-option" in boot.reason


@pytest.mark.boot
@needs_qemu
def test_ok_boot_stamps_every_line_and_reaches_the_marker(cloud_kernel: Path, initrd: Path) -> None:
    seen: list[LogLine] = []
    affinity: list[str] = []
    meter = HostLoadMeter()

    def started(pid: int) -> None:
        meter.watch(pid)
        status = Path(f"/proc/{pid}/status").read_text()
        affinity.append(re.search(r"Cpus_allowed_list:\s*(\S+)", status).group(1))  # type: ignore[union-attr]

    meter.start()
    boot = boot_once(
        BootConfig(kernel=cloud_kernel, initrd=initrd, append="", cpu_affinity=(0,)),
        on_line=seen.append,
        on_start=started,
    )
    load = meter.stop()
    assert boot.outcome is Outcome.OK, boot.reason
    assert list(boot.lines) == seen
    texts = [line.text for line in boot.lines]
    marker = next(
        i for i, text in enumerate(texts) if re.fullmatch(r"BOOTSCOPE-MARKER init uptime=\d+\.\d+", text)
    )
    assert "guest-says-hello" in texts[:marker]
    assert any("Run /init as init process" in text for text in texts[:marker])
    stamps = [line.host_ns for line in boot.lines]
    assert all(stamp is not None for stamp in stamps)
    assert stamps == sorted(stamps)  # type: ignore[type-var]
    assert boot.host_start_ns is not None and boot.host_end_ns is not None
    assert boot.host_start_ns < stamps[0] and stamps[-1] <= boot.host_end_ns  # type: ignore[operator]
    assert all("\n" not in text and not text.endswith("\r") for text in texts)
    assert boot.command[0] == "qemu-system-x86_64" and "-append" in boot.command
    assert affinity == ["0"]
    assert load.wall_s >= (boot.host_end_ns - boot.host_start_ns) / 1e9
    # Other processes and the hypervisor cannot use more than every CPU for the whole boot.
    capacity_s = load.wall_s * (os.cpu_count() or 1) + 0.1  # + one tick of rounding per CPU
    assert 0 <= load.other_cpu_s <= capacity_s and 0 <= load.steal_s <= capacity_s


@pytest.mark.boot
@needs_qemu
def test_missing_init_panics_and_qemu_exits(cloud_kernel: Path) -> None:
    # The pattern table's panic pattern, as the local QEMU target hands it to every boot.
    config = BootConfig(
        kernel=cloud_kernel,
        initrd=None,
        append="init=/nonexistent",
        timeout_s=60,
        panic_regex=PANIC_RE.pattern,
    )
    boot = boot_once(config)
    assert boot.outcome is Outcome.PANIC
    assert "Kernel panic - not syncing" in boot.reason
    assert boot.reason in [line.text for line in boot.lines]


@pytest.mark.boot
@needs_qemu
def test_timeout_kills_the_guest(cloud_kernel: Path) -> None:
    # An /init that never prints the marker and never powers off: the timeout is reached however fast
    # the host boots the kernel (under KVM the whole boot takes less than the 1.5 s limit).
    silent = build_initramfs(InitramfsSpec(init_script="#!/bin/sh\nwhile :; do sleep 1; done\n"))
    boot = boot_once(BootConfig(kernel=cloud_kernel, initrd=silent, append="", timeout_s=1.5))
    assert boot.outcome is Outcome.TIMEOUT
    assert "1.5 s" in boot.reason and "without the marker" in boot.reason
    assert boot.host_end_ns is not None and boot.host_start_ns is not None
    assert (boot.host_end_ns - boot.host_start_ns) / 1e9 >= 1.5
    assert not any("BOOTSCOPE-MARKER" in line.text for line in boot.lines)


@pytest.mark.boot
@needs_qemu
def test_icount_boot_stopped_on_the_marker(cloud_kernel: Path) -> None:
    # No poweroff: the guest would sit in a shell, so only stop_on_marker can end this boot as ok.
    shell = build_initramfs(InitramfsSpec(poweroff=False))
    boot = boot_once(
        BootConfig(
            kernel=cloud_kernel, initrd=shell, append="", icount_shift=2, stop_on_marker=True, timeout_s=90
        )
    )
    assert boot.outcome is Outcome.OK, boot.reason
    assert "-icount" in boot.command and "shift=2,sleep=off" in boot.command
    assert not any("reboot: Power down" in line.text for line in boot.lines)


@pytest.mark.boot
@needs_qemu
def test_an_end_line_before_the_marker_waits_for_the_marker(
    cloud_kernel: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An image's collector can print its end line before the getty prints the login prompt (a loaded
    # host, one CI run): the boot goes on until the marker, and is ok.
    late = build_initramfs(
        InitramfsSpec(
            init_script="#!/bin/sh\necho TEST-END\nsleep 1\necho TEST-MARKER\nwhile :; do sleep 1; done\n"
        )
    )
    # quiet: a kernel message printed while init writes (a late clocksource switch on a loaded host,
    # one CI run) can land inside the end line on the serial console, and the line is then not
    # "TEST-END" alone; only warnings reach the console under quiet.
    config = BootConfig(
        kernel=cloud_kernel,
        initrd=late,
        append="quiet",
        marker_regex="TEST-MARKER",
        end_regex="TEST-END",
        timeout_s=120,
    )
    boot = boot_once(config)
    assert boot.outcome is Outcome.OK, boot.reason
    texts = [line.text for line in boot.lines]
    end_at = [i for i, text in enumerate(texts) if "TEST-END" in text]
    marker_at = [i for i, text in enumerate(texts) if "TEST-MARKER" in text]
    assert len(end_at) == 1 and marker_at == [len(texts) - 1] and end_at[0] < marker_at[0], texts[-20:]
    # No marker at all after the end line: a failed boot once the grace period is over, not a timeout.
    monkeypatch.setattr(process, "END_GRACE_S", 2.0)
    silent_after_end = "#!/bin/sh\necho TEST-END\nwhile :; do sleep 1; done\n"
    never = build_initramfs(InitramfsSpec(init_script=silent_after_end))
    boot = boot_once(replace(config, initrd=never))
    assert boot.outcome is Outcome.QEMU_ERROR
    assert "end line seen and no marker 2 s later" in boot.reason

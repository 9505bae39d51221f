"""One test per architecture family on the whole real-hardware logs of tests/data/hw.

Every expected value was read off the log text by hand (the line is quoted beside it), not copied
from bootscope's output. Each log goes through both readers: the per-line parser (``parse_log``,
``analyze_boot``) and the block scan that ``bootscope analyze`` uses (``scan_boots``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bootscope.analyze.breakdown import analyze_boot, analyze_columns
from bootscope.model import Breakdown, Panic
from bootscope.parse import parse_log, scan_boots
from bootscope.sources.files import BLOCK_BYTES, read_text_lines

HW = Path(__file__).resolve().parents[1] / "data" / "hw"


def _boots(name: str) -> list[Breakdown]:
    """The boots of one log by the block scan, after checking that the per-line path agrees."""
    path = str(HW / name)
    found = [
        analyze_columns(columns)
        for columns in scan_boots(read_text_lines(path).blocks(BLOCK_BYTES), line_path_chars=0)
    ]
    slow = [analyze_boot(boot) for boot in parse_log(read_text_lines(path)).boots]
    assert [b.identity for b in slow] == [b.identity for b in found]
    assert [b.milestones for b in slow] == [b.milestones for b in found]
    assert [b.panic for b in slow] == [b.panic for b in found]
    return found


def _one(name: str) -> Breakdown:
    boots = _boots(name)
    assert len(boots) == 1
    return boots[0]


def test_x86_server_384_cpus_crlf_whole_log() -> None:
    found = _one("x86-supermicro-384cpu-5.14-el9-dmesg.log")
    assert found.identity.release == "5.14.0-570.23.1.el9_6.x86_64"
    assert found.identity.arch == "x86_64"
    cmdline = found.identity.cmdline or ""
    # "Command line: BOOT_IMAGE=(hd2,gpt2)/vmlinuz-5.14.0-570.23.1.el9_6.x86_64 root=/dev/mapper/rl-root ro
    # crashkernel=... rhgb quiet\r": the CR of the CRLF line end is not part of it
    assert cmdline.startswith(
        "BOOT_IMAGE=(hd2,gpt2)/vmlinuz-5.14.0-570.23.1.el9_6.x86_64 root=/dev/mapper/rl-root"
    )
    assert cmdline.endswith("rhgb quiet")
    assert found.identity.cpus == 384  # "smp: Brought up 2 nodes, 384 CPUs"
    assert found.milestones["smp_start"] == pytest.approx(0.325707)  # "smp: Bringing up secondary CPUs ..."
    assert found.milestones["smp_done"] == pytest.approx(0.882097)
    assert found.milestones["devtmpfs"] == pytest.approx(1.114020)
    assert found.metrics.kernel_init_s == pytest.approx(4.122063)  # "Run /init as init process"
    assert found.last_s == pytest.approx(24.691019)  # the last line of the file


@pytest.mark.parametrize(
    ("name", "release", "cpus", "smp_start", "smp_done", "last_freeing"),
    [
        # "x86: Booting SMP configuration:" / "x86: Booted up 1 node, 2 CPUs" (before 4.11 kernels);
        # the last "Freeing unused kernel memory: 216K (...)" is line 544
        ("x86-alienware-m11x-3.16-dmesg.log", "3.16.0-4-amd64", 2, 0.084000, 0.096048, 1.018065),
        # "smpboot: Allowing 4 CPUs, 2 hotplug CPUs", but "x86: Booted up 1 node, 2 CPUs"; line 818
        ("x86-thinkpad-t400-3.13-dmesg.log", "3.13.0-39-lowlatency", 2, 0.045070, 0.057282, 1.171458),
        # "smpboot: Allowing 8 CPUs, 4 hotplug CPUs", but "x86: Booted up 1 node, 4 CPUs"; line 691
        ("x86-surface-book-4.4-dmesg.log", "4.4.0-21-generic", 4, 0.053185, 0.066342, 7.891765),
        # line 515
        ("x86-msi-ms7721-4.4-dmesg.log", "4.4.5-1-ARCH", 4, 0.280030, 0.302211, 0.939236),
    ],
)
def test_x86_laptops_and_desktop_before_4_11(
    name: str, release: str, cpus: int, smp_start: float, smp_done: float, last_freeing: float
) -> None:
    # 3.x/4.x print "Initializing cgroup subsys cpuset" at 0.000000 before the banner: still one boot
    found = _one(name)
    assert found.identity.release == release
    assert found.identity.cpus == cpus
    assert found.milestones["smp_start"] == pytest.approx(smp_start)
    assert found.milestones["smp_done"] == pytest.approx(smp_done)
    # these kernels print no "Run /init as init process" line: kernel init ends at the last
    # "Freeing unused kernel memory" line (tests/analyze/test_phases_every_series.py has more)
    assert "run_init" not in found.milestones
    assert found.metrics.kernel_init_s == pytest.approx(last_freeing)
    assert (found.identity.cmdline or "").startswith("BOOT_IMAGE=")


def test_arm32_board_3_10() -> None:
    # "Booting Linux on physical CPU 0x200" and "Initializing cgroup subsys ..." precede the banner
    found = _one("arm32-odroid-c1plus-3.10-dmesg.log")
    assert found.identity.release == "3.10.107"
    cmdline = found.identity.cmdline or ""
    assert cmdline.startswith("root=UUID=e139ce78-9841-40fe-8823-96a304a09859 rootwait ro")
    assert found.identity.cpus == 4  # "Brought up 4 CPUs" (kernel/smp.c before 4.11)
    assert found.milestones["smp_done"] == pytest.approx(0.590430)
    assert found.identity.memory_kb == 760944  # "Memory: 760944k/760944k available, ..."
    assert found.milestones["free_init"] == pytest.approx(4.124552)


def test_arm64_board_whose_clock_starts_at_1_7_s() -> None:
    # "[    1.702674] Booting Linux on physical CPU 0x0000000000 [0x412fd050]" then the banner at
    # 1.702697: the CPU line opens the boot, it is not a boot of its own
    name = "arm64-orangepi5-rk3588-5.10-dmesg.log"
    found = _one(name)
    assert found.first_s == pytest.approx(1.702674)
    assert found.identity.release == "5.10.110+"
    assert found.identity.cpus == 8  # "smp: Brought up 1 node, 8 CPUs"
    assert found.milestones["smp_done"] == pytest.approx(2.209496)
    assert found.metrics.kernel_init_s == pytest.approx(5.246573)  # "Run /init as init process"
    # twice in a row: two boots, the second one starting at its CPU line, by both readers
    lines = (HW / name).read_text().splitlines()
    doubled = parse_log(lines + lines)
    assert len(doubled.boots) == 2
    assert doubled.boots[1][0].text.startswith("Booting Linux on physical CPU")
    stream = scan_boots(["\n".join(lines + lines) + "\n"], line_path_chars=0)
    assert [b.first_s for b in map(analyze_columns, stream)] == [pytest.approx(1.702674)] * 2


def test_riscv64_serial_capture_single_hart_with_proc_version_after_login() -> None:
    # Milk-V Duo: a UP kernel (no smp: lines); after login "cat /proc/version" prints an untimed
    # "Linux version ..." line, which is shell output, not a boot
    found = _one("riscv64-milkv-duo-5.10-serial.log")
    assert found.identity.release == "5.10.4-yocto-standard-milkv-duo"
    cmdline = "root=/dev/mmcblk0p2 console=ttyS0,115200 earlycon=sbi loglevel=9 rootwait rw"
    assert found.identity.cmdline == cmdline
    assert found.identity.cpus is None
    assert found.metrics.kernel_init_s == pytest.approx(1.222782)  # "Run /sbin/init as init process"


def test_riscv64_board_behind_uboot_and_opensbi_that_panics() -> None:
    found = _one("riscv64-milkv-meles-th1520-5.10-uboot-opensbi-panic.log")
    assert found.identity.release == "5.10.113-7.oe2403.riscv64"
    assert found.identity.arch == "riscv64"
    assert found.identity.cpus == 4  # "smp: Brought up 1 node, 4 CPUs"
    assert found.milestones["smp_done"] - found.milestones["smp_start"] == pytest.approx(0.111519 - 0.069040)
    # "Kernel panic - not syncing: VFS: Unable to mount root fs" at 3.516603: never reached /init
    assert found.metrics.kernel_init_s is None
    assert found.last_s == pytest.approx(3.539603)
    # the panic line, not the "---[ end Kernel panic" line after it
    assert found.panic == Panic(3.516603, "VFS: Unable to mount root fs on unknown-block(179,4)")


def test_a_boot_that_panics_is_said_so_and_the_others_are_not(capsys: pytest.CaptureFixture[str]) -> None:
    from cli_here import run_in_process

    panicked = str(HW / "riscv64-milkv-meles-th1520-5.10-uboot-opensbi-panic.log")
    assert run_in_process("analyze", panicked) == 0
    assert "the kernel panicked at 3.517 s: VFS: Unable to mount root fs" in " ".join(
        capsys.readouterr().out.split()
    )
    healthy = str(HW / "x86-epyc7262-romed8-6.3-dmesg.log")
    assert run_in_process("analyze", "--json", healthy) == 0
    document = json.loads(capsys.readouterr().out)
    assert [boot["panic"] for boot in document["boots"]] == [None] * len(document["boots"])


def test_riscv64_16_cpus_dmesg_t_wall_clock() -> None:
    # dmesg -T: "[Tue Jan 20 10:17:44 2026] Linux version 6.12.16-generic" ...
    # "[Tue Jan 20 10:17:51 2026] Run /init as init process": 7 s, to the second
    found = _one("riscv64-spacemit-k3-6.12-dmesg-T.log")
    assert found.identity.release == "6.12.16-generic"
    assert found.identity.cpus == 16
    assert found.metrics.kernel_init_s == pytest.approx(7.0)
    stream = scan_boots(
        read_text_lines(str(HW / "riscv64-spacemit-k3-6.12-dmesg-T.log")).blocks(BLOCK_BYTES),
        line_path_chars=0,
    )
    list(stream)
    assert any("to about 1 s" in warning for warning in stream.warnings)


def test_riscv64_icicle_kernel_boot_behind_hss_opensbi_uboot() -> None:
    # Hart Software Services prints "[2.873679] DDR-Lo size is   32 MiB" before OpenSBI: not printk's
    # padded stamp, so boot-loader text (untimed) of the one boot, not a boot of its own
    found = _one("riscv64-icicle-polarfire-6.1-hss-opensbi-uboot.log")
    assert found.identity.release == "6.1.74-linux4microchip+fpga-2024.02"
    cmdline = "earlycon=sbi root=/dev/mmcblk0p3 rootwait uio_pdrv_genirq.of_id=generic-uio"
    assert found.identity.cmdline == cmdline
    assert found.identity.cpus == 4  # "smp: Brought up 1 node, 4 CPUs"
    assert found.metrics.kernel_init_s == pytest.approx(3.113390)  # "Run /sbin/init as init process"
    assert found.first_s == 0.0
    assert found.last_s == pytest.approx(14.936786)


def test_mips_router_serial_capture_behind_two_u_boots() -> None:
    # U-Boot 1.1.4 twice (a boot loader that chain-loads itself), "Starting kernel ...", then the
    # kernel; a shell prompt later holds a kernel line after "root@C60:/# " on the same line
    found = _one("mips-archer-c60-4.19-uboot.log")
    assert found.identity.release == "4.19.57"  # "Linux version 4.19.57 (builder@buildhost) ..."
    assert found.identity.cmdline == "console=ttyS0,115200n8 rootfstype=squashfs,jffs2"
    assert found.identity.cpus is None  # a uniprocessor kernel prints no smp: lines
    assert found.metrics.kernel_init_s == pytest.approx(2.066037)  # "Run /sbin/init as init process"
    assert found.milestones["free_init"] == pytest.approx(2.054664)  # "Freeing unused kernel memory: 1236K"
    # "Press the [f] key ..." (procd's preinit, no stamp) comes after the line stamped 6.249598
    assert found.milestones["first_userspace"] == pytest.approx(6.249598)
    # "root@C60:/# [   39.419873] device wlan1 left promiscuous mode": the kernel line is timed
    assert found.last_s == pytest.approx(39.469238)
    assert found.panic is None


def test_ppc64le_power8_server_80_cpus_with_warning_traces_and_rhel_systemd() -> None:
    found = _one("ppc64le-power8-powernv-5.19-dmesg.log")
    assert found.identity.release == "5.19.0-rc4-next-20220629"
    assert found.identity.cpus == 80  # "smp: Brought up 2 nodes, 80 CPUs"
    assert found.identity.memory_kb == 67108864  # "Memory: 62853696K/67108864K available"
    assert found.milestones["smp_done"] - found.milestones["smp_start"] == pytest.approx(0.119186 - 0.063378)
    assert found.metrics.kernel_init_s == pytest.approx(1.695433)  # "Run /init as init process"
    # RHEL 8's systemd: "systemd 239 (239-56.el8) running in system mode."; the initramfs' at 1.707110,
    # the real root's at 38.303400
    assert found.milestones["systemd_start"] == pytest.approx(38.3034)
    assert found.metrics.initrd_s == pytest.approx(38.3034 - 1.695433)


def test_s390x_lpar_old_deferred_line_and_a_continuation_line() -> None:
    found = _one("s390x-z14-lpar-5.6-dmesg.log")
    assert found.identity.release == "5.6.0-rc3+"
    assert found.identity.cpus == 64  # "smp: Brought up 1 node, 64 CPUs"
    assert found.first_s == pytest.approx(0.229052)  # s390's clock does not start at zero: one boot
    # "node 0 initialised, 32136731 pages in 1020ms": 5.6's form of the deferred-pages line
    assert found.milestones["deferred_pages_done"] == pytest.approx(1.570355)
    assert found.metrics.kernel_init_s == pytest.approx(5.446577)  # "Run /init as init process"
    # the initramfs's systemd at 5.462181, the real root's at 9.791767
    assert found.milestones["systemd_start"] == pytest.approx(9.791767)
    # "               with link type OSD_10GIG." continues the qeth line above it (dmesg's indent
    # for a multi-line record): not the first userspace line
    assert "first_userspace" not in found.milestones
    assert found.panic is None  # a WARNING trace, not a panic


def test_a_dmesg_continuation_line_is_not_userspace() -> None:
    found = _one("arm64-orangepi5-rk3588-5.10-dmesg.log")
    # line 1016, after Run /init: "               r0p0 status 5 is unknown; treating as r0p0 status 0"
    assert found.metrics.kernel_init_s == pytest.approx(5.246573)
    assert "first_userspace" not in found.milestones


def test_x86_2_6_26_timed_initcalls_in_msecs_and_callings_without_a_pid() -> None:
    found = _one("x86-saa7134-pctv300i-2.6.26-msecs-excerpt.log")
    slow = analyze_boot(
        parse_log(read_text_lines(str(HW / "x86-saa7134-pctv300i-2.6.26-msecs-excerpt.log"))).boots[0]
    )
    assert found.initcalls == slow.initcalls  # both readers, the same initcalls
    calls = found.initcalls
    # seven "initcall NAME+0xOFF/0xSIZE returned 0 after N msecs" lines: 0, 0, 149, 0, 0, 39, 14 ms
    assert calls.count == 7 and calls.total_s == pytest.approx(0.202)
    assert [(c.name, c.duration_us) for c in calls.top[:3]] == [
        ("saa7134_init", 149_000),
        ("dvb_register", 39_000),
        ("v4l2_i2c_drv_init", 14_000),
    ]
    # "[    1.718095] calling  saa7134_init+0x0/0x4a": 2.6.26 prints no " @ PID", yet the start is
    # the calling line's, not the returned line's time less the duration
    assert calls.top[0].start_s == pytest.approx(1.718095) and calls.top[0].pid is None
    assert not calls.failed and not calls.unfinished
    assert found.panic is None  # the WARNING trace inside saa7134_init is not a panic


def test_arm32_raspberry_pi_5_15_without_an_initramfs() -> None:
    # "[    0.000000] Booting Linux on physical CPU 0xf00" precedes the banner: one boot, not two
    found = _one("arm32-raspberrypi2b-5.15-dmesg.log")
    assert found.identity.release == "5.15.84-v7+" and found.identity.arch == "arm"  # the Pi's -v7 kernel
    assert found.identity.cpus == 4  # "smp: Brought up 1 node, 4 CPUs"
    assert found.identity.memory_kb == 970752  # "Memory: 681112K/970752K available"
    assert found.milestones["smp_start"] == pytest.approx(0.008837)
    assert found.milestones["smp_done"] == pytest.approx(0.014816)
    assert found.metrics.kernel_init_s == pytest.approx(3.200510)  # "Run /sbin/init as init process"
    # the kernel ran the root's init, so there was no initramfs: no initrd time, though systemd
    # ("systemd 247.3-7+rpi1+deb11u1 running in system mode") starts 0.96 s later
    assert found.milestones["systemd_start"] == pytest.approx(4.160518)
    assert found.metrics.initrd_s is None


def test_loongarch64_board_log_soft_wrapped_by_a_mail_client() -> None:
    found = _one("loongarch64-ls2k2000-evb-6.10-dmesg.log")
    assert found.identity.release == "6.10.0-rc5+"  # the banner's first line; 3 wrapped lines follow
    assert found.identity.cpus == 2  # "smp: Brought up 1 node, 2 CPUs"
    assert found.identity.memory_kb == 8099008  # "Memory: 7900832K/8099008K available (20736K kernel code, "
    assert found.milestones["smp_done"] == pytest.approx(0.001767)
    assert found.metrics.kernel_init_s == pytest.approx(4.725571)  # "Run /init as init process"
    assert found.milestones["systemd_start"] == pytest.approx(10.047571)  # "systemd 253.5-2-arch ..."
    assert found.metrics.initrd_s == pytest.approx(10.047571 - 4.725571)
    # "[    4.765047] input: HID 0c45:760b System Control as " goes on in the next, unstamped line
    # ("/devices/pci0000:00/..."): the rest of a kernel line, not userspace
    assert "first_userspace" not in found.milestones


def test_i386_4_18_secondary_cpus_print_with_their_own_clock() -> None:
    path = str(HW / "i386-celeron-j1900-4.18-dmesg.log")
    stream = scan_boots(read_text_lines(path).blocks(BLOCK_BYTES), line_path_chars=0)
    boots = [analyze_columns(columns) for columns in stream]
    assert len(boots) == 1 and boots == [analyze_boot(b) for b in parse_log(read_text_lines(path)).boots]
    # "[    0.026585] .... node  #0, CPUs:      #1" then "[    0.004000] Initializing CPU#1", three times
    assert any("backwards" in w and "3 time(s)" in w for w in stream.warnings)
    found = boots[0]
    assert found.identity.release == "4.18.0-16-generic"
    assert found.identity.arch == "x86"  # i686: the release says nothing, its tsc: lines say x86
    assert found.identity.cpus == 4 and len(found.cpu_bringup.cpus) == 3
    assert found.identity.memory_kb == 4082152  # "Memory: 3922664K/4082152K available"
    assert found.milestones["smp_start"] == pytest.approx(0.026317)
    assert found.milestones["smp_done"] == pytest.approx(0.029078)
    assert found.milestones["free_init"] == pytest.approx(1.488036)  # "Freeing unused kernel image memory"
    # 4.18 prints no "Run /init" line: its one "Freeing unused kernel image memory" line ends kernel init
    assert found.metrics.kernel_init_s == pytest.approx(1.488036)

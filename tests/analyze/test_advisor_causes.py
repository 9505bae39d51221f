"""The advisor on real logs (tests/data, tests/data/hw): causes read from the right phase and from both
lines of a silence, advice fitted to the kind of machine, suggestions checked against what the boot
already does, and plain words. Expected facts are read from the log text here with regexes of this
file, not with the product's own readers.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bootscope.analyze import analyze_boot
from bootscope.analyze.machine import HARDWARE, VM, read_machine
from bootscope.model import Breakdown, LogLine
from bootscope.parse import parse_log
from bootscope.parse.columns import columns_from_lines
from bootscope.sources.files import read_text_lines

SUPERMICRO = "hw/x86-supermicro-384cpu-5.14-el9-dmesg.log"
SMP4 = "debian-6.1-cloud-initcall-smp4.log"


def _lines(data_dir: Path, name: str) -> tuple[LogLine, ...]:
    return parse_log(read_text_lines(str(data_dir / name))).boots[-1]


def _advice_text(b: Breakdown) -> str:
    return "\n".join(f"{a.title} | {a.evidence} | {a.remedy}" for a in b.advice)


def _stamp(raw: str, message: str) -> float:
    m = re.search(r"\[\s*(\d+\.\d+)\] " + re.escape(message), raw)
    assert m is not None, message
    return float(m.group(1))


def _all_logs(data_dir: Path) -> list[Path]:
    return sorted(p for p in [*data_dir.glob("*.log"), *data_dir.glob("hw/*.log")] if "untimed" not in p.name)


def test_no_internal_names_in_any_advice(data_dir: Path) -> None:
    # "seed 004", "(seed 002)" named the project's own notes: a user cannot look them up.
    for path in _all_logs(data_dir):
        b = analyze_boot(_lines(data_dir, str(path.relative_to(data_dir))))
        text = _advice_text(b)
        assert not re.search(r"\bseeds?\b", text, re.IGNORECASE), (path.name, text)


def test_a_silence_in_userspace_after_a_drm_line_is_not_acpi(data_dir: Path) -> None:
    # udev loads drm (printing "ACPI: bus type drm_connector registered") 11 s after Run /init; the
    # 0.45 s that follows ends at an i2c_designware line: userspace, not ACPI table loading.
    raw = (data_dir / SUPERMICRO).read_text()
    opened = _stamp(raw, "ACPI: bus type drm_connector registered")
    ended = _stamp(raw, "i2c_designware AMDI0010:00:")
    assert ended - opened == pytest.approx(0.449108, abs=1e-6)
    assert opened > _stamp(raw, "Run /init as init process")
    b = analyze_boot(_lines(data_dir, SUPERMICRO))
    assert any(g.duration_s == pytest.approx(ended - opened) for g in b.gaps)
    assert not any("ACPI" in a.title for a in b.advice), _advice_text(b)


def test_a_silence_is_laid_to_pci_only_when_both_its_lines_are_pci(data_dir: Path) -> None:
    # ppc64le: 1.158 s between a "pci ... BAR 13: failed to assign" line and "Problem loading in-kernel
    # X.509 certificate": the excerpt dropped the lines between, nothing says it was PCI.
    b = analyze_boot(_lines(data_dir, "hw/ppc64le-power8-powernv-5.19-dmesg.log"))
    assert not any("PCI" in a.title for a in b.advice), _advice_text(b)


def test_the_doe_timeouts_are_named_and_not_called_probing(data_dir: Path) -> None:
    raw = (data_dir / SUPERMICRO).read_text()
    waits = [
        _stamp(raw, f"pci {dev}: DOE: [2c8] ABORT timed out")
        - _stamp(raw, f"pci {dev}: VF BAR 3 [mem {mem} 64bit pref]:")
        for dev, mem in (
            ("0000:e1:00.0", "0x68000000000-0x6803fffffff"),
            ("0000:c1:00.0", "0x78000000000-0x7803fffffff"),
        )
    ]
    b = analyze_boot(_lines(data_dir, SUPERMICRO))
    doe = [a for a in b.advice if "DOE" in a.title]
    assert len(doe) == 1 and doe[0].cost_s == pytest.approx(sum(waits))
    assert "0000:c1:00.0" in doe[0].remedy and "VM" not in _advice_text(b)


@pytest.mark.parametrize(
    ("name", "kind", "line"),
    [
        (SUPERMICRO, HARDWARE, "DMI: Supermicro AS -4125GS-TNRT/H13DSG-O-CPU, BIOS 3.2 11/21/2024"),
        ("debian-6.1-cloud-smp2.log", VM, "DMI: QEMU Standard PC (i440FX + PIIX, 1996)"),
        ("hw/s390x-z14-lpar-5.6-dmesg.log", HARDWARE, "setup: Linux is running natively in 64-bit mode"),
        ("hw/ppc64le-power8-powernv-5.19-dmesg.log", HARDWARE, "Using PowerNV machine description"),
        ("hw/arm32-raspberrypi2b-5.15-dmesg.log", HARDWARE, "OF: fdt: Machine model: Raspberry Pi 2 Model B"),
        ("debian-12-image-journal-b-short.log", VM, "DMI: QEMU Standard PC"),
        ("hw/loongarch64-ls2k2000-evb-6.10-dmesg.log", HARDWARE, "DMI: Loongson"),
    ],
)
def test_the_kind_of_machine_is_read_from_the_log(data_dir: Path, name: str, kind: str, line: str) -> None:
    facts = read_machine(columns_from_lines(_lines(data_dir, name)))
    assert facts.kind == kind
    assert facts.kind_line is not None and facts.kind_line.startswith(line)


def _without_doe(data_dir: Path, dmi: str | None = None) -> list[LogLine]:
    """The Supermicro boot without its DOE lines (so the silence before them is PCI's, line to line),
    with its DMI line replaced by ``dmi`` if given."""
    lines = [line for line in _lines(data_dir, SUPERMICRO) if "DOE:" not in line.text]
    if dmi is not None:
        lines = [LogLine(dmi, line.guest_s) if line.text.startswith("DMI:") else line for line in lines]
    return lines


def test_pci_advice_fits_the_kind_of_machine(data_dir: Path) -> None:
    hardware = analyze_boot(_without_doe(data_dir))
    vm = analyze_boot(_without_doe(data_dir, "DMI: QEMU Standard PC (Q35 + ICH9, 2009), BIOS 1.16.2"))
    (pci_hw,) = [a for a in hardware.advice if a.title.startswith("PCI")]
    (pci_vm,) = [a for a in vm.advice if a.title.startswith("PCI")]
    assert "VM" not in pci_hw.remedy and "firmware setup" in pci_hw.remedy
    assert "this VM" in pci_vm.remedy
    assert (
        "'pci 0000:c1:00.0: VF BAR 3" in pci_hw.evidence
        and "'pci 0000:c0:01.1: PCI bridge" in pci_hw.evidence
    )


def test_parallel_bringup_already_on_is_not_suggested(data_dir: Path) -> None:
    # RHEL 9's 5.14 announces 95 CPUs within 13 ms (".... node  #0, CPUs: #1 ... #95" at 0.325839, the
    # next node's line at 0.339130): they were kicked in parallel, whatever the version says.
    raw = (data_dir / SUPERMICRO).read_text()
    span = _stamp(raw, ".... node  #1, CPUs:    #96") - _stamp(raw, ".... node  #0, CPUs:          #1 ")
    assert span / 95 < 0.0003
    b = analyze_boot(_lines(data_dir, SUPERMICRO))
    assert not any("one at a time" in a.title for a in b.advice), _advice_text(b)


def _as_release(lines: tuple[LogLine, ...], release: str, cmdline_extra: str = "") -> list[LogLine]:
    """The smp4 boot, its banner naming ``release`` and its command line with ``cmdline_extra``."""
    out = []
    for line in lines:
        text = line.text.replace("6.1.0-56-cloud-amd64", release)
        if text.startswith("Command line:") and cmdline_extra:
            text += " " + cmdline_extra
        out.append(LogLine(text, line.guest_s))
    return out


def test_parallel_bringup_suggestion_checks_the_kernel_and_its_command_line(data_dir: Path) -> None:
    lines = _lines(data_dir, SMP4)
    old = analyze_boot(lines)
    (serial,) = [a for a in old.advice if "one at a time" in a.title]
    assert "6.5" in serial.remedy and "this kernel is 6.1" in serial.remedy
    # 6.12 with parallel bring-up off on the command line: say so, not "upgrade"
    off = analyze_boot(_as_release(lines, "6.12.0-1-cloud-amd64", "cpuhp.parallel=0"))
    (serial,) = [a for a in off.advice if "one at a time" in a.title]
    assert "cpuhp.parallel=off" in serial.remedy and "6.5+" not in serial.remedy
    # 6.12 where the platform turned it off (an encrypted guest): nothing to suggest
    disabled = list(_as_release(lines, "6.12.0-1-cloud-amd64"))
    at = next(i for i, line in enumerate(disabled) if line.text.startswith("smp: Bringing up"))
    disabled.insert(
        at + 1, LogLine("smpboot: Parallel CPU startup disabled by the platform", disabled[at].guest_s)
    )
    assert not any("one at a time" in a.title for a in analyze_boot(disabled).advice)


def test_no_per_cpu_time_is_quoted_where_the_log_has_none(data_dir: Path) -> None:
    for path in _all_logs(data_dir):
        b = analyze_boot(_lines(data_dir, str(path.relative_to(data_dir))))
        for a in b.advice:
            assert "0.000 s" not in a.evidence, (path.name, a.evidence)
            if b.cpu_bringup.parallel_estimate_s is None:
                assert "slowest" not in a.evidence, (path.name, a.evidence)


def test_initcall_debug_hidden_by_the_console_level_is_not_blamed(data_dir: Path) -> None:
    # console=ttyS0 initcall_debug without ignore_loglevel: the KERN_DEBUG initcall lines never reach
    # the serial console (the log has none of them).
    raw = (data_dir / "debian-6.1-cloud-smp2.log").read_text()
    assert "initcall_debug" in raw and "ignore_loglevel" not in raw
    assert not re.search(r"\] (?:calling  |initcall )", raw)  # only drivers/pci/quirks.c's KERN_INFO ones
    quiet = analyze_boot(_lines(data_dir, "debian-6.1-cloud-smp2.log"))
    assert not any("initcall_debug" in a.title for a in quiet.advice)
    loud = analyze_boot(_lines(data_dir, "debian-6.1-cloud-initcall-smp1.log"))
    assert any("initcall_debug" in a.title for a in loud.advice)


def test_no_hugepage_advice_when_none_were_reserved(data_dir: Path) -> None:
    name = "hw/riscv64-milkv-meles-th1520-5.10-uboot-opensbi-panic.log"
    assert "pre-allocated 0 pages" in (data_dir / name).read_text()
    b = analyze_boot(_lines(data_dir, name))
    assert not any("hugepage" in a.title for a in b.advice), _advice_text(b)


def test_a_userspace_silence_on_a_desktop_is_not_acpi(data_dir: Path) -> None:
    # 0.873 s between systemd-journald's flush request and "ACPI: acpi_idle registered with cpuidle"
    # (a module udev loaded), long after the kernel freed its init memory.
    name = "hw/x86-msi-ms7721-4.4-dmesg.log"
    raw = (data_dir / name).read_text()
    assert _stamp(raw, "ACPI: acpi_idle registered") > _stamp(raw, "Freeing unused kernel memory")
    b = analyze_boot(_lines(data_dir, name))
    assert not any("ACPI" in a.title for a in b.advice), _advice_text(b)


def test_the_crypto_self_tests_are_named(data_dir: Path) -> None:
    raw = (data_dir / SMP4).read_text()
    usecs = int(re.search(r"initcall crypto_algapi_init\+\S+ returned 0 after (\d+) usecs", raw).group(1))  # type: ignore[union-attr]
    b = analyze_boot(_lines(data_dir, SMP4))
    (slow,) = [a for a in b.advice if "crypto_algapi_init" in a.title]
    assert slow.cost_s == pytest.approx(usecs / 1e6)
    assert "CONFIG_CRYPTO_MANAGER_DISABLE_TESTS" in slow.remedy

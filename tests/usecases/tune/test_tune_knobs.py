"""The knobs `tune` finds beyond the console: machine checks a log shows ran (real logs from QEMU
guests and from bare-metal machines, tests/data/hw), slow services on systemd's critical chain (a
real image boot's collector output), the knobs a user asks for with --try, and a unit that fails only
in the tuned boots. Values are read by hand from the logs, line numbers given."""

from __future__ import annotations

from pathlib import Path

import pytest
from captures import load_chain_capture

from bootscope.analyze.systemd import systemd_accounting
from bootscope.model import LogLine
from bootscope.store.records import BootRecord
from bootscope.usecases.tune.catalogue import candidates
from bootscope.usecases.tune.decide import same_system
from bootscope.usecases.tune.knob import Knob, given_knob, with_knobs
from bootscope.usecases.tune.machine_knobs import machine_knobs
from bootscope.usecases.tune.qemu_knobs import qemu_knobs
from bootscope.usecases.tune.unit_knobs import unit_knobs
from bootscope.usecases.views import boots_from_logs

DATA = Path(__file__).resolve().parents[2] / "data"
IMAGE_BOOT = DATA / "debian-12-image-systemd-tcg.tsv"


def _names(path: Path, words: frozenset[str] = frozenset()) -> list[str]:
    view = boots_from_logs([path])[0]
    return [knob.name for knob in machine_knobs(set(words), view.breakdown, view.lines)]


def test_a_qemu_guest_gets_the_vm_knobs_and_bare_metal_does_not() -> None:
    # debian-6.12-cloud-smp2.log: "DMI: QEMU Standard PC" (a guest), "..TIMER: vector=0x30" (the
    # IO-APIC timer check ran) and a second CPU brought up (its TSC checked against CPU 0's).
    names = _names(DATA / "debian-6.12-cloud-smp2.log")
    assert "+no_timer_check" in names and "+tsc=reliable" in names
    # Already on the command line: not proposed again.
    assert "+no_timer_check" not in _names(DATA / "debian-6.12-cloud-smp2.log", frozenset({"no_timer_check"}))
    # Real machines run the same checks ("..TIMER:" in each; the T400 and the M11x even mark their
    # TSC unstable), but the kernel needs them there: never proposed.
    for log in ("x86-thinkpad-t400-3.13-dmesg.log", "x86-alienware-m11x-3.16-dmesg.log",
                "x86-epyc7262-romed8-6.3-dmesg.log", "x86-supermicro-384cpu-5.14-el9-dmesg.log"):  # fmt: skip
        names = _names(DATA / "hw" / log)
        assert "+no_timer_check" not in names and "+tsc=reliable" not in names, log


def test_reserved_huge_pages_give_the_vmemmap_knob() -> None:
    line = LogLine("[    0.310214] HugeTLB: registered 1.00 GiB page size, pre-allocated 16 pages")
    view = boots_from_logs([DATA / "debian-6.1-cloud-initcall-smp1.log"])[0]
    knobs = machine_knobs(set(), view.breakdown, [*view.lines, line])
    huge = [k for k in knobs if k.name == "+hugetlb_free_vmemmap=on"]
    assert len(huge) == 1 and huge[0].evidence == "16 huge pages reserved at boot" and huge[0].risk == "safe"
    # The log's own line (pre-allocated 0 pages) is no reason.
    assert "+hugetlb_free_vmemmap=on" not in [
        k.name for k in machine_knobs(set(), view.breakdown, view.lines)
    ]


def _lines_with_link(link: str) -> list[LogLine]:
    """The real image boot's lines with one more link under multi-user.target on its chain."""
    lines = list(load_chain_capture(IMAGE_BOOT).lines)
    at = next(i for i, line in enumerate(lines) if line.text.startswith("└─multi-user.target @"))
    return [*lines[: at + 1], LogLine(link, host_ns=lines[at].host_ns), *lines[at + 1 :]]


def test_slow_services_of_chain_and_blame_are_masked_but_not_systemd_itself() -> None:
    # The real chain (lines 536-549 of the capture): systemd-logind +5.638s, systemd-remount-fs
    # +2.319s, systemd-udevd +2.022s... all systemd's own plumbing. Its blame (from line 515): the
    # slowest service that is not is "6.577s e2scrub_reap.service" (kmod-static-nodes 2.833s and
    # the modprobe@ units are plumbing too).
    accounting = systemd_accounting(load_chain_capture(IMAGE_BOOT).lines)
    assert accounting is not None and ("systemd-logind.service", 5.638) in [
        (link.unit, link.took_s) for link in accounting.critical_chain
    ]
    assert [(k.name, k.risk, k.evidence) for k in unit_knobs(accounting, set())] == [
        (
            "+systemd.mask=e2scrub_reap.service",
            "feature",
            "e2scrub_reap.service took 6.58 s in systemd-analyze blame",
        )
    ]
    # A planted slow unit on the chain (bootscope-delay.service, 5 s) comes after it, by time.
    lines = _lines_with_link("  └─bootscope-delay.service @18.712s +5.004s")
    knobs = unit_knobs(systemd_accounting(lines), set())
    assert [(k.name, k.evidence) for k in knobs] == [
        ("+systemd.mask=e2scrub_reap.service", "e2scrub_reap.service took 6.58 s in systemd-analyze blame"),
        (
            "+systemd.mask=bootscope-delay.service",
            "bootscope-delay.service took 5.00 s on the critical chain",
        ),
    ]
    assert with_knobs("quiet", knobs[1:]) == "quiet systemd.mask=bootscope-delay.service"
    masked = {"bootscope-delay.service", "e2scrub_reap.service"}
    assert unit_knobs(systemd_accounting(lines), masked) == []
    waits = _lines_with_link("  └─systemd-networkd-wait-online.service @3.1s +9.5s")
    assert next(k.name for k in unit_knobs(systemd_accounting(waits), set())) == (
        "+systemd.mask=systemd-networkd-wait-online.service"
    )


def test_asked_knobs_add_replace_or_remove_a_word() -> None:
    assert given_knob("loglevel=3").apply("console=ttyS0 loglevel=7") == "console=ttyS0 loglevel=3"
    assert given_knob("+quiet").apply("console=ttyS0") == "console=ttyS0 quiet"
    assert given_knob("-initcall_debug").apply("initcall_debug=1 quiet") == "quiet"
    # A name the kernel or systemd reads as a list gets one more word, the others kept.
    masked = given_knob("systemd.mask=b.service").apply("systemd.mask=a.service")
    assert masked == "systemd.mask=a.service systemd.mask=b.service"
    assert given_knob("mitigations=off").risk == "unsafe" and given_knob("quiet").risk == "feature"
    for bad in ("", "-", "two words"):
        with pytest.raises(ValueError, match="one command-line word"):
            given_knob(bad)


def test_a_unit_failing_only_in_the_tuned_boots_is_not_the_same_system() -> None:
    base = list(load_chain_capture(IMAGE_BOOT).lines)
    failed_at = next(i for i, line in enumerate(base) if line.text.endswith("SECTION failed"))
    failed = LogLine("  e2scrub_reap.service loaded failed failed Remove Stale Metadata")
    broken = [*base[: failed_at + 1], failed, *base[failed_at + 1 :]]
    ok = [BootRecord("baseline", 1, False, "ok", metrics={"login_prompt_s": 25.0})]
    tuned = [BootRecord("tuned", 2, False, "ok", metrics={"login_prompt_s": 20.0})]
    why = same_system(ok, tuned, [base], [broken], "login_prompt_s")
    assert why == "a unit failed that never failed in the baseline's boots: e2scrub_reap.service"
    assert same_system(ok, tuned, [base], [base], "login_prompt_s") == ""


def test_an_image_boot_without_its_login_prompt_is_not_the_same_system() -> None:
    # Tuning systemd's own time: a knob that masks the getty makes systemd finish, faster even, but
    # the prompt every baseline boot showed never comes.
    both = {"systemd_userspace_s": 20.0, "login_prompt_s": 25.0}
    base = [BootRecord("baseline", i, False, "ok", metrics=both) for i in (1, 2)]
    tuned = [
        BootRecord("tuned", 3, False, "ok", metrics={"systemd_userspace_s": 18.0}),
        BootRecord("tuned", 4, False, "ok", metrics=both),
    ]
    why = same_system(base, tuned, [[]], [[]], "systemd_userspace_s")
    assert why == "1 of 2 boots did not reach login_prompt_s's milestone"
    # A kernel boot has no prompt: nothing to miss.
    kernel = [BootRecord("baseline", 1, False, "ok", metrics={"kernel_init_s": 2.0})]
    assert same_system(kernel, [BootRecord("tuned", 2, False, "ok", metrics={"kernel_init_s": 1.9})],
                       [[]], [[]], "kernel_init_s") == ""  # fmt: skip


def _qemu_names(path: Path, qemu_args: tuple[str, ...] = ()) -> dict[str, Knob]:
    view = boots_from_logs([path])[0]
    return {knob.name: knob for knob in qemu_knobs(view.lines, qemu_args)}


def test_a_qemu_pc_guest_gets_a_knob_per_device_its_kernel_met_and_hardware_none() -> None:
    # Read here with grep's eyes: the smp1 log's DMI names QEMU's i440FX PC, and the kernel set up
    # the HPET ("hpet0: at MMIO"), the PS/2 controller ("serio: i8042 KBD port") and PIIX4's SMBus
    # ("claimed by PIIX4 SMB"); no VMware mouse.
    log = DATA / "debian-6.1-cloud-initcall-smp1.log"
    text = log.read_text()
    assert "DMI: QEMU Standard PC (i440FX + PIIX" in text and "VMMouse" not in text
    found = _qemu_names(log)
    assert set(found) == {
        "+machine:type=q35",
        "+machine:hpet=off",
        "+machine:i8042=off",
        "+machine:smbus=off",
    }
    # an i440FX PC: the other PC machine, q35, is a knob of its own
    assert found["+machine:type=q35"].qemu_args == ("-machine", "type=q35")
    assert "+machine:type=q35" not in _qemu_names(log, ("-machine", "q35,hpet=off"))
    for prop in ("hpet", "i8042", "smbus"):
        knob = found[f"+machine:{prop}=off"]
        assert knob.qemu_args == ("-machine", f"{prop}=off") and knob.risk == "feature"
        assert not knob.add and not knob.remove and knob.evidence.removesuffix("...") in text
    # a property the variant's own QEMU options set is not proposed again
    assert "+machine:hpet=off" not in _qemu_names(log, ("-machine", "hpet=on"))
    # real machines have the devices they have: never proposed
    for other in ("x86-thinkpad-t400-3.13-dmesg.log", "x86-alienware-m11x-3.16-dmesg.log"):
        assert _qemu_names(DATA / "hw" / other) == {}, other


def test_a_machine_knob_is_asked_for_as_machine_property_and_only_given() -> None:
    knob = given_knob("machine:i8042=off")
    assert (knob.name, knob.qemu_args, knob.add, knob.remove) == (
        "+machine:i8042=off", ("-machine", "i8042=off"), (), ()
    )  # fmt: skip
    for bad in ("-machine:hpet=off", "machine:hpet", "machine:=off"):
        with pytest.raises(ValueError, match="machine:PROPERTY=VALUE"):
            given_knob(bad)
    # the catalogue proposes machine knobs only for a QEMU guest (qemu_args given), and as features
    view = boots_from_logs([DATA / "debian-6.1-cloud-initcall-smp1.log"])[0]
    args = (view.breakdown, view.lines, "kernel_init_s")
    assert not [k for k in candidates("", *args, allow=("feature",)) if k.qemu_args]
    assert not [k for k in candidates("", *args, qemu_args=()) if k.qemu_args]  # safe only
    machine = [k.name for k in candidates("", *args, allow=("feature",), qemu_args=()) if k.qemu_args]
    assert machine == ["+machine:type=q35", "+machine:hpet=off", "+machine:i8042=off", "+machine:smbus=off"]

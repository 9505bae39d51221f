"""U-Boot bootstage reports read from real consoles (tests/data/bootloader, each file's source in
its README): every expected number below was read off the file by hand, and each report's own
record count (U-Boot counts its marks and accumulated entries, "reset" included) is checked against
what was read, so a row the reader dropped or invented shows."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest

from bootscope.analyze.breakdown import analyze_boot
from bootscope.parse import iter_boots
from bootscope.parse.bootstage import MAX_ROWS, read_bootstage
from bootscope.parse.untimed import read_untimed

DATA = Path(__file__).parents[1] / "data" / "bootloader"


def _report(name: str) -> object:
    report = read_bootstage((DATA / name).read_text(encoding="utf-8", errors="replace").splitlines())
    assert report is not None, name
    return report


@pytest.mark.parametrize(
    ("name", "marks", "first", "last", "handoff_s", "accumulated"),
    [
        # STM32MP157C-DK2 from SD card, TF-A trusted boot, before and after Patrick Delaunay's series
        # that turned the data cache on in SPL and before relocation: board_init_r 1.765608 -> 0.144324 s
        ("uboot-stm32mp157c-dk2-trusted-before.log", 7, "reset", "id=175", 5.563519,
          {"dm_r": 0.041696, "dm_f": 0.615561}),
        ("uboot-stm32mp157c-dk2-trusted-after.log", 7, "reset", "id=175", 3.680827,
          {"dm_f": 0.036047, "dm_r": 0.041718}),
        # four reports in one console: the last is the one kept
        ("uboot-stm32mp157c-ev1-four-reports.log", 7, "reset", "id=175", 1.366785,
          {"log": 0.024837, "dm_f": 0.059676, "dm_r": 0.070916}),
        # three marks with no name, names with a space, start_kernel
        ("uboot-coral-chromebook.log", 27, "", "start_kernel", 5.381751,
          {"boot_device_info": 1.114692, "dm_r": 0.000952}),
        # 17 fit_image_load marks, an accumulated name with a space, the payload's lines right after
        ("uboot-x86-upl-handoff.log", 23, "reset", "upl_prepare", 2.264384,
          {"vesa display": 0.006648, "dm_f": 0.003046}),
        # the old format: no record count, tab-indented, names with a space
        ("uboot-kconfig-help-old-format.log", 8, "reset", "start_kernel", 30.361327,
          {}),
        # Debian's U-Boot 2023.01 in QEMU on this machine, then the kernel (CRLF, backspaces)
        ("uboot-2023.01-qemu-x86-then-6.1-cloud.log", 7, "reset", "start_kernel", 2.220782,
          {"vesa display": 0.007288}),
    ],
)  # fmt: skip
def test_each_report_reads_as_printed(
    name: str, marks: int, first: str, last: str, handoff_s: float, accumulated: dict[str, float]
) -> None:
    report = _report(name)
    assert len(report.stages) == marks  # type: ignore[attr-defined]
    assert (report.stages[0].name, report.stages[-1].name) == (first, last)  # type: ignore[attr-defined]
    assert report.handoff_s == pytest.approx(handoff_s, abs=1e-9)  # type: ignore[attr-defined]
    got = dict(report.accumulated)  # type: ignore[attr-defined]
    assert {key: got[key] for key in accumulated} == pytest.approx(accumulated, abs=1e-9)
    if report.records_stated is not None:  # type: ignore[attr-defined]
        assert report.records_stated == marks + len(got)  # type: ignore[attr-defined]
    # Every mark's elapsed time is its mark less the previous one, as U-Boot computed it.
    stages = report.stages  # type: ignore[attr-defined]
    for before, after in pairwise(stages):
        assert after.elapsed_s == pytest.approx(after.mark_s - before.mark_s, abs=1e-9)
    assert not report.went_backwards  # type: ignore[attr-defined]


def test_the_data_cache_series_is_read_as_its_author_measured_it() -> None:
    before, after = (
        _report("uboot-stm32mp157c-dk2-trusted-before.log"),
        _report("uboot-stm32mp157c-dk2-trusted-after.log"),
    )
    by_name = {s.name: s.elapsed_s for s in before.stages}, {s.name: s.elapsed_s for s in after.stages}  # type: ignore[attr-defined]
    assert by_name[0]["board_init_r"] - by_name[1]["board_init_r"] == pytest.approx(1.621284, abs=1e-9)
    assert before.handoff_s - after.handoff_s == pytest.approx(1.882692, abs=1e-9)  # type: ignore[attr-defined]


def test_a_cut_or_broken_report_keeps_what_it_showed() -> None:
    text = (DATA / "uboot-coral-chromebook.log").read_text().splitlines()
    cut = text[: text.index("      894,430     68,281  user_13") + 1]
    report = read_bootstage(cut)
    assert report is not None and len(report.stages) == 17 and report.stages[-1].name == "user_13"
    assert report.accumulated == ()
    # a header with no column line, or columns with no rows, is no report
    assert read_bootstage(["Timer summary in microseconds (3 records):", "nothing here"]) is None
    assert read_bootstage(["Timer summary in microseconds:", "       Mark    Elapsed  Stage", ""]) is None
    # overflow (a vendor's copy of the report prints it for a mark earlier than the last)
    report = read_bootstage(
        ["Timer summary in microseconds (2 records):", "       Mark    Elapsed  Stage",
         "          0          0  reset", "    500,000   overflow  late"]
    )  # fmt: skip
    assert report is not None and report.stages[-1].elapsed_s is None and report.handoff_s == 0.5


@pytest.mark.parametrize(
    "junk",
    [
        "\x00\xff" * 5000,
        "x" * 1_000_000,
        "<script>alert(1)</script>  1,000  2,000  <b>",
        "Timer summary in microseconds (99999999999999999999 records):",
        "          0          0  " + "n" * 200_000,
    ],
)
def test_hostile_lines_neither_raise_nor_run_away(junk: str) -> None:
    lines = ["Timer summary in microseconds (2 records):", "       Mark    Elapsed  Stage", junk,
             "          0          0  reset"]  # fmt: skip
    report = read_bootstage(lines)
    assert report is None or len(report.stages) <= 2
    many = ["Timer summary in microseconds:", "       Mark    Elapsed  Stage"] + ["  1  1  x"] * (
        MAX_ROWS + 50
    )
    report = read_bootstage(many)
    assert report is not None and len(report.stages) == MAX_ROWS


def test_a_boot_loader_report_before_the_kernel_is_in_the_analysis() -> None:
    """The real capture of Debian's U-Boot then Debian's kernel: U-Boot's report is the boot's, the
    kernel's own numbers do not move, and U-Boot's quoted 'Kernel command line' is not the kernel's."""
    lines = (DATA / "uboot-2023.01-qemu-x86-then-6.1-cloud.log").read_text(errors="replace").splitlines()
    boots = list(iter_boots(lines))
    assert len(boots) == 1
    breakdown = analyze_boot(boots[0])
    assert breakdown.metrics.bootloader_handoff_s == pytest.approx(2.220782, abs=1e-9)
    assert breakdown.metrics.kernel_init_s == pytest.approx(1.728151, abs=1e-9)  # "Run /init" read by hand
    assert breakdown.identity.cmdline == "console=ttyS0 panic=-1"
    kernel_only = [line for line in boots[0] if line.guest_s is not None]
    alone = analyze_boot(kernel_only)
    assert alone.bootstage is None and alone.metrics.bootloader_handoff_s is None

    def kernel_phases(b: object) -> list[tuple[str, float | None, float | None]]:
        return [(p.name, p.start_s, p.end_s) for p in b.phases if p.name != "userspace"]  # type: ignore[attr-defined]

    assert kernel_phases(alone) == kernel_phases(breakdown)
    assert alone.metrics.kernel_init_s == breakdown.metrics.kernel_init_s


def test_an_untimed_log_still_shows_its_report() -> None:
    facts = read_untimed((DATA / "uboot-stm32mp157c-ev1-four-reports.log").read_text().splitlines())
    assert facts.bootstage is not None and facts.bootstage.handoff_s == pytest.approx(1.366785, abs=1e-9)


# barebox: its log buffer printed with times by `dmesg -t` (and `-t -d`), from a real barebox
# (2026.06.0, sandbox_defconfig, built and run here; tests/data/bootloader/README.md). Read off the
# file by hand: eight messages, their times in microseconds and, in the `-d` column, since the one
# before.
BAREBOX_US = [462, 476, 482, 1059, 1143, 1171, 1617, 1659]
BAREBOX_SINCE_US = [462, 14, 6, 577, 84, 28, 446, 42]


def test_barebox_dmesg_t_is_read_as_the_loaders_stages() -> None:
    lines = (DATA / "barebox-2026.06.0-sandbox-dmesg.log").read_text(encoding="utf-8").splitlines()
    report = read_bootstage(lines)
    assert report is not None
    assert report.loader == "barebox"
    # printed twice (-t, then -t -d): the second run is kept, from its first line
    assert report.line_index == next(i for i, line in enumerate(lines) if " <  " in line)
    assert [round(s.mark_s * 1e6) for s in report.stages] == BAREBOX_US
    assert [round((s.elapsed_s or 0.0) * 1e6) for s in report.stages] == BAREBOX_SINCE_US
    assert report.stages[0].name == "barebox 2026.06.0 #1 Sat Nov 28 20:49:53 UTC 2026"
    assert report.stages[1].name == "Board: Sandbox"
    assert report.handoff_s == pytest.approx(0.001659) and not report.went_backwards
    # the first run began after the console's escape sequence (ESC [ ? 25 h): read all the same
    first = read_bootstage(lines[: report.line_index])
    assert first is not None and [round(s.mark_s * 1e6) for s in first.stages] == BAREBOX_US


def test_barebox_lines_of_each_form_and_what_is_not_one() -> None:
    # The forms of barebox's log_print (common/console_common.c): -r puts the level first, -d alone
    # prints only the time since the message before.
    raw = read_bootstage(["<6>[      1000us] a", "<7>[      3500us] b"])
    assert raw is not None and [s.mark_s for s in raw.stages] == [0.001, 0.0035]
    diffs = read_bootstage(["[ <       1000us] a", "[ <       2500us] b", "[ <        500us] c"])
    assert diffs is not None and [round(s.mark_s * 1e6) for s in diffs.stages] == [1000, 3500, 4000]
    # the kernel's printk stamps, systemd's status and a bracket with no time are not barebox's
    assert read_bootstage(["[    0.000000] Linux version 6.1", "[  OK  ] Started x", "[] y", ""]) is None

"""A file with no kernel line is a bad file of `fleet import`, not an incomplete boot.

tests/data/hw/README.md (the provenance table of the real-hardware logs) quotes one stamped line in a
table cell ("[OpenWrt-Devel] [14445.624549] ath10k_pci 0000:00:00.0: peer-unmap-event: ..."): it was
imported as a timed "dmesg" boot and counted incomplete. A file none of whose lines is a kernel line
(no `Linux version` banner, no line the kernel prints at boot, no initcall, no timed panic, oops or
hang) is listed as bad with its reason, like an HTML page; a log cut short that holds a kernel line is
still a boot (incomplete, or failed when it says so).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_here import run_in_process

from bootscope.usecases.fleet.logfile import read_fleet_file

HW = Path(__file__).resolve().parents[1] / "data" / "hw"
BANNER = "[    0.000000] Linux version 6.1.0-test (builder@example) (gcc 12.2.0) #1 SMP\n"
NOT_A_KERNEL_LOG = "not a kernel log"

# SYNTHETIC texts that carry a printk-like stamp but no kernel line
NOT_BOOTS = {
    "notes.md": "# Boot notes\n\nThe router printed `[14445.624549] ath10k_pci 0000:00:00.0: peer id 0`.\n",
    "app.log": "[   12.345678] myapp: listening on port 8080\n[   12.400000] myapp: ready\n",
    "mail.txt": "Hi,\n\n> [  101.000001] my tool says hello\n\nThanks\n",
}
# SYNTHETIC logs cut short that do hold a kernel line: boots, each with the outcome its lines say
CUT_BOOTS = {
    # the banner (init/version.c) and nothing after it
    "banner-only.log": (BANNER, "incomplete"),
    # no banner, one line of mm/mm_init.c's memory report
    "memory-only.log": (
        "[    0.010000] Memory: 500000K/524288K available (14336K kernel code)\n",
        "incomplete",
    ),
    # no banner, an initcall_debug pair (init/main.c)
    "initcall.log": (
        "[    0.500000] calling  foo_init+0x0/0x10 @ 1\n"
        "[    0.500100] initcall foo_init+0x0/0x10 returned 0 after 100 usecs\n",
        "incomplete",
    ),
    # no banner, a BUG line (arch/x86/mm/fault.c): the boot died
    "oops.log": (
        "[    1.000000] BUG: kernel NULL pointer dereference, address: 0000000000000000\n",
        "failed",
    ),
}


@pytest.mark.parametrize("name", sorted(NOT_BOOTS))
def test_a_text_with_a_stamp_but_no_kernel_line_is_bad(name: str, tmp_path: Path) -> None:
    path = tmp_path / name
    path.write_text(NOT_BOOTS[name])
    result = read_fleet_file(str(path))
    assert not result.boots and result.error is not None and NOT_A_KERNEL_LOG in result.error
    assert "\n" not in result.error


def test_the_hw_readme_is_bad_not_a_boot() -> None:
    result = read_fleet_file(str(HW / "README.md"))
    assert not result.boots and result.error is not None and NOT_A_KERNEL_LOG in result.error


@pytest.mark.parametrize("name", sorted(CUT_BOOTS))
def test_a_cut_log_with_a_kernel_line_is_still_a_boot(name: str, tmp_path: Path) -> None:
    text, outcome = CUT_BOOTS[name]
    path = tmp_path / name
    path.write_text(text)
    result = read_fleet_file(str(path))
    assert result.error is None and [boot.outcome for boot in result.boots] == [outcome]


def test_importing_the_hw_folder_lists_the_readme_with_its_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    code = run_in_process(
        "fleet", "import", str(HW), "--db", str(tmp_path / "hw.db"), "-j", "1", "--format", "json"
    )
    document = json.loads(capsys.readouterr().out)
    assert code == 0
    reasons = {
        Path(file).name: reason for file, reason in ((b["file"], b["reason"]) for b in document["bad"])
    }
    # By hand: the README, and the two 2.6 mail pastes without one stamp (x86-t61p-..., x86-piii-...)
    assert set(reasons) == {"README.md", "x86-t61p-2.6.25-untimed.log", "x86-piii-440bx-2.6.27-untimed.log"}
    assert NOT_A_KERNEL_LOG in reasons["README.md"]
    # 26 files, 3 bad; of the 23 boots 4 are cut short (tests/fleet/test_fleet_outcomes.py reads them)
    assert (document["files"], document["imported"]) == (26, 23)
    assert document["outcomes"] == {"ok": 18, "failed": 1, "incomplete": 4, "not_run": 0}


def test_a_readme_alone_exits_5_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    code = run_in_process("fleet", "import", str(HW / "README.md"), "--db", str(tmp_path / "r.db"))
    assert code == 5
    lines = capsys.readouterr().err.strip().splitlines()
    assert (
        len(lines) == 1 and lines[0].startswith("bootscope: error:") and "none of the 1 file(s)" in lines[0]
    )

"""Failed against incomplete boots in `fleet import` and every fleet output, on the real logs of
tests/data/hw (real boots of varied hosts: tests/data/hw/README.md gives each one's provenance).

The expected outcomes come from a small reader of this file's own (a few greps: kernel stamps,
panic/oops/hang lines, `Run /init` and `Freeing unused kernel` lines), checked in turn against the
counts read by hand, never from bootscope's parser.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_here import run_in_process, run_json
from scipy.stats import beta

from bootscope.usecases.fleet.logfile import read_fleet_file

HW = Path(__file__).resolve().parents[1] / "data" / "hw"
HW_LOGS = sorted(HW.glob("*.log"))

# The reader: its own regexes, simpler than the product's.
_STAMP = re.compile(r"^\s*\[\s*\d+\.\d+\]|^\[\w{3} \w{3} |^\w{3} \d\d \d\d:\d\d:\d\d \S+ kernel: ", re.M)
_PANIC = re.compile(r"Kernel panic - not syncing")
_DIED = re.compile(r"Oops|BUG: |blocked for more than|detected stall")
_END_OF_KERNEL = re.compile(r"Run /\S* as init process|Freeing unused kernel")


def expected_outcome(path: Path) -> str:
    """bad (no kernel stamp), failed (a panic anywhere, or an oops/BUG/hang and no end of the
    kernel's init), ok (the kernel ran init), or incomplete (none of these: the log stops early)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if not _STAMP.search(text):
        return "bad"
    if _PANIC.search(text):
        return "failed"
    if _END_OF_KERNEL.search(text):
        return "ok"
    return "failed" if _DIED.search(text) else "incomplete"


def _tally() -> dict[str, int]:
    tally = {"ok": 0, "failed": 0, "incomplete": 0, "bad": 0}
    for path in HW_LOGS:
        tally[expected_outcome(path)] += 1
    return tally


def test_the_reader_agrees_with_the_logs_read_by_hand() -> None:
    # By hand: the two 2.6 mail excerpts have no stamps; the Milk-V Meles panics (VFS: Unable to mount
    # root fs); the i.MX8MP (to 0.086 s), the Siemens journal (44 lines), the EPYC (to 0.42 s) and
    # the saa7134 initcall excerpt stop before init; the 18 others reach `Run /init` or, on 3.x,
    # 4.4 and 4.18 kernels that print none, `Freeing unused kernel memory`.
    assert len(HW_LOGS) == 25
    assert _tally() == {"ok": 18, "failed": 1, "incomplete": 4, "bad": 2}
    incomplete = {p.name for p in HW_LOGS if expected_outcome(p) == "incomplete"}
    assert incomplete == {
        "arm64-imx8mp-dart-6.6-uboot.log",
        "arm64-siemens-foxxy-5.10-journalctl.log",
        "x86-epyc7262-romed8-6.3-dmesg.log",
        "x86-saa7134-pctv300i-2.6.26-msecs-excerpt.log",
    }


@pytest.mark.parametrize("path", HW_LOGS, ids=lambda p: p.name)
def test_each_real_log_gets_the_outcome_its_lines_say(path: Path) -> None:
    result = read_fleet_file(str(path))
    expected = expected_outcome(path)
    if expected == "bad":
        assert result.error is not None and not result.boots
        return
    assert [boot.outcome for boot in result.boots] == [expected]
    if expected == "incomplete":
        assert result.boots[0].reason.startswith("incomplete:")


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    return run_json(capsys, *args)


def test_summary_counts_incomplete_apart_and_leaves_them_out_of_the_failure_rate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "hw.db")
    imported = _json(capsys, "fleet", "import", *map(str, HW_LOGS), "--db", db, "-j", "1")
    tally = _tally()
    assert imported["outcomes"] == {
        "ok": tally["ok"],
        "failed": tally["failed"],
        "incomplete": tally["incomplete"],
        "not_run": 0,
    }
    summary = _json(capsys, "fleet", "summary", "--db", db)
    (group,) = summary["groups"]  # type: ignore[misc]
    assert (group["ok"], group["failed"], group["incomplete"]) == (18, 1, 4)
    assert group["boots"] == 23
    # 1 failed of the 19 boots whose log says how they ended; the 4 cut logs are in no rate
    assert group["failed_rate"] == pytest.approx(1 / 19)
    # the exact (Clopper-Pearson) 95 % interval, from the beta quantiles
    assert group["failed_ci"] == pytest.approx([beta.ppf(0.025, 1, 19), beta.ppf(0.975, 2, 18)])
    assert "incomplete" in summary["definitions"]  # type: ignore[operator]

    outliers = _json(capsys, "fleet", "outliers", "--db", db)
    assert outliers["boots"] == {"ok": 18, "failed": 1, "incomplete": 4, "not_run": 0}


def test_compare_counts_each_cohorts_incomplete_boots(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    names = [p.name for p in HW_LOGS if expected_outcome(p) != "bad"]
    meta = tmp_path / "hosts.csv"
    # every other log a canary: the cohorts only need boots on both sides
    meta.write_text(
        "file,cohort\n" + "".join(f"{n},{'canary' if i % 2 else 'control'}\n" for i, n in enumerate(names))
    )
    db = str(tmp_path / "c.db")
    _json(capsys, "fleet", "import", str(HW), "--meta", str(meta), "--db", db, "-j", "1")
    capsys.readouterr()
    code = run_in_process(
        "fleet", "compare", "--canary", "canary", "--control", "control", "--db", db, "--format", "json"
    )
    document = json.loads(capsys.readouterr().out)
    assert code in (0, 1)
    for cohort in ("canary", "control"):
        mine = [n for i, n in enumerate(names) if (i % 2 == 1) == (cohort == "canary")]
        wanted = {"ok": 0, "failed": 0, "incomplete": 0, "not_run": 0}
        for name in mine:
            wanted[expected_outcome(HW / name)] += 1
        assert document["boots"][cohort] == wanted
    # the table: within 80 columns, each cohort's incomplete boots named
    capsys.readouterr()
    run_in_process("fleet", "compare", "--canary", "canary", "--control", "control", "--db", db)
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80
    assert sum("incomplete" in line for line in lines) == 2


def test_an_oops_before_init_is_a_failure_and_a_cut_log_is_not(tmp_path: Path) -> None:
    # SYNTHETIC: the first 60 lines of a real 6.1 console (tests/data/debian-6.1-cloud-smp2.log), then
    # an x86 oops as arch/x86/kernel/dumpstack.c prints it; the same 60 lines alone are a cut log.
    real = (Path(__file__).resolve().parents[1] / "data" / "debian-6.1-cloud-smp2.log").read_text()
    head = "".join(real.splitlines(keepends=True)[:60])
    cut = tmp_path / "cut.log"
    cut.write_text(head)
    oops = tmp_path / "oops.log"
    oops.write_text(
        head + "[    0.200000] Oops: general protection fault, probably for non-canonical address\n"
    )
    (cut_boot,) = read_fleet_file(str(cut)).boots
    (oops_boot,) = read_fleet_file(str(oops)).boots
    assert cut_boot.outcome == "incomplete"
    assert oops_boot.outcome == "failed" and "Oops: general protection fault" in oops_boot.reason


def test_tables_fit_80_columns_and_name_incomplete_boots(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = str(tmp_path / "w.db")
    _json(capsys, "fleet", "import", *map(str, HW_LOGS), "--db", db, "-j", "1")
    monkeypatch.setenv("COLUMNS", "80")
    for args in (
        ("fleet", "summary", "--db", db),
        ("fleet", "summary", "--db", db, "--by", "kernel_series,memory_gib"),
        ("fleet", "outliers", "--db", db, "--z", "1"),
    ):
        capsys.readouterr()
        assert run_in_process(*args) == 0
        lines = capsys.readouterr().out.splitlines()
        assert max(len(line.rstrip()) for line in lines) <= 80, args
        assert any("incomplete" in line for line in lines), args

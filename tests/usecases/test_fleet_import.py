"""`bootscope fleet import|summary|outliers|compare` on a small fleet made of the real logs of
tests/data (and tests/data/hw), with a metadata CSV, through the real CLI, SQLite, Parquet and DuckDB.

The planted-regression fleet is SYNTHETIC (bench/fleet_gen.py: real logs with per-host scaled
timestamps); the summary's numbers are checked against numpy on the values the logs hold, as a
separate reader reads them off the raw text (tests/fleet_logs.py: a few regexes, none of bootscope's
parser), itself checked against the lines read by hand below; the intervals' ranks are enumerated
there and the failure rates' ends come from scipy's beta quantiles, never from bootscope.stats.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from cli_here import run_in_process, run_json
from fleet_logs import ReadBoot, equal_tailed_ranks, read_boots
from scipy.stats import beta

from bench.fleet_gen import make_fleet
from bootscope.usecases.fleet.logfile import read_fleet_file

DATA = Path(__file__).resolve().parents[1] / "data"
# real logs: (file, host, model, kernel, cohort); kernel_init_s as each log prints it
REAL = [
    ("debian-6.1-cloud-smp2.log", "q1", "qemu", "6.1", "control"),
    ("debian-6.1-cloud-initcall-smp1.log", "q2", "qemu", "6.1", "control"),
    ("debian-6.1-cloud-initcall-smp4.log", "q3", "qemu", "6.1", "canary"),
    ("debian-6.1-cloud-smp2-dmesg-r.log", "q4", "qemu", "6.1", "canary"),
    ("multiboot-6.1-cloud-smp2-then-smp1.log", "q5", "qemu", "6.1", "control"),
    ("debian-6.1-cloud-smp2-journal.json", "q6", "qemu", "6.1", "control"),
    ("hw/arm64-xgene-mustang-4.19-dmesg.log", "x1", "xgene", "4.19", "control"),
    ("hw/x86-epyc7262-romed8-6.3-dmesg.log", "e1", "epyc", "6.3", "control"),
    ("hw/x86-t61p-2.6.25-untimed.log", "t1", "t61p", "2.6.25", "control"),  # no timestamp: bad
    ("fleet/lava-qemu-smp2-output.yaml", "l1", "qemu", "6.1", "canary"),
]


def _fleet(root: Path) -> tuple[Path, Path]:
    fleet = root / "fleet"
    fleet.mkdir()
    with (root / "hosts.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["file", "host", "model", "kernel", "cohort"])
        for name, host, model, kernel, cohort in REAL:
            target = fleet / name.replace("/", "-")
            shutil.copy(DATA / name, target)
            writer.writerow([target.name, host, model, kernel, cohort])
    (fleet / "junk.bin").write_bytes(bytes(range(256)) * 40)
    (fleet / "huge-line.log").write_text("x" * 3_000_000 + "\n")
    (fleet / "empty.log").write_bytes(b"")
    return fleet, root / "hosts.csv"


def _exact_binomial_ci(k: int, n: int) -> list[float]:
    """The exact (Clopper-Pearson) 95 % interval of k in n, from the beta distribution's quantiles."""
    low = 0.0 if k == 0 else float(beta.ppf(0.025, k, n - k + 1))
    high = 1.0 if k == n else float(beta.ppf(0.975, k + 1, n - k))
    return [low, high]


def test_the_reader_reads_what_the_logs_say() -> None:
    # By hand, each log's "Run /init as init process" line (file:line):
    expected = {
        # debian-6.1-cloud-smp2.log:350 "[    3.194636] Run /init as init process"
        "debian-6.1-cloud-smp2.log": [ReadBoot("ok", 3.194636)],
        # debian-6.1-cloud-initcall-smp1.log:1510 "[    2.661367] Run /init as init process"
        "debian-6.1-cloud-initcall-smp1.log": [ReadBoot("ok", 2.661367)],
        # debian-6.1-cloud-initcall-smp4.log:1530 "[    4.096560] Run /init as init process"
        "debian-6.1-cloud-initcall-smp4.log": [ReadBoot("ok", 4.09656)],
        # debian-6.1-cloud-smp2-dmesg-r.log:338 "<6>[    2.859905] Run /init as init process"
        "debian-6.1-cloud-smp2-dmesg-r.log": [ReadBoot("ok", 2.859905)],
        # multiboot-6.1-cloud-smp2-then-smp1.log: banners at lines 3 and 377; "[    3.194636] Run /init
        # as init process" at 350, "[    2.661367] Run /init as init process" at 1883
        "multiboot-6.1-cloud-smp2-then-smp1.log": [ReadBoot("ok", 3.194636), ReadBoot("ok", 2.661367)],
        # debian-6.1-cloud-smp2-journal.json: two _BOOT_IDs; lines 334 and 674 are
        # {"__MONOTONIC_TIMESTAMP": "2859905", ..., "MESSAGE": "Run /init as init process"}
        "debian-6.1-cloud-smp2-journal.json": [ReadBoot("ok", 2.859905), ReadBoot("ok", 2.859905)],
        # hw/arm64-xgene-mustang-4.19-dmesg.log:75 "[    1.522958] Run /init as init process"
        "hw/arm64-xgene-mustang-4.19-dmesg.log": [ReadBoot("ok", 1.522958)],
        # hw/x86-epyc7262-romed8-6.3-dmesg.log: a banner (line 1), no "Run /init", no panic (cut at 0.42 s)
        "hw/x86-epyc7262-romed8-6.3-dmesg.log": [ReadBoot("incomplete", None)],
        # hw/x86-t61p-2.6.25-untimed.log: a mail's console paste, not one "[  N.N]" stamp
        "hw/x86-t61p-2.6.25-untimed.log": None,
        # fleet/lava-qemu-smp2-output.yaml:355 "msg": "[    3.194636] Run /init as init process"
        "fleet/lava-qemu-smp2-output.yaml": [ReadBoot("ok", 3.194636)],
    }
    assert set(expected) == {name for name, *_ in REAL}
    for name, boots in expected.items():
        assert read_boots(DATA / name) == boots, name
    # and a panic, before init (hw/riscv64-milkv-meles-...: "Kernel panic - not syncing: VFS: Unable
    # to mount root fs on unknown-block(179,4)", no "Run /init")
    meles = DATA / "hw" / "riscv64-milkv-meles-th1520-5.10-uboot-opensbi-panic.log"
    assert read_boots(meles) == [ReadBoot("failed", None)]


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    return run_json(capsys, *args, ok_codes=(0, 1))


def test_import_is_idempotent_lists_bad_files_and_summary_matches_numpy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fleet, meta = _fleet(tmp_path)
    db = str(tmp_path / "f.db")
    first = _json(capsys, "fleet", "import", str(fleet), "--meta", str(meta), "--db", db, "-j", "2")
    bad = {Path(str(item["file"])).name for item in first["bad"]}  # type: ignore[attr-defined]
    assert bad == {"junk.bin", "huge-line.log", "empty.log", "hw-x86-t61p-2.6.25-untimed.log"}
    assert first["imported"] == len(REAL) - 1 and first["files"] == len(REAL) + 3
    again = _json(capsys, "fleet", "import", str(fleet), "--meta", str(meta), "--db", db)
    assert again["imported"] == 0 and again["boots"] == 0 and again["already_stored"] == len(REAL) - 1
    # The same file under another name is the same content: stored once.
    shutil.copy(fleet / "debian-6.1-cloud-smp2.log", tmp_path / "copy.log")
    third = _json(capsys, "fleet", "import", str(tmp_path / "copy.log"), "--db", db)
    assert third["imported"] == 0 and third["already_stored"] == 1

    # each file's boots as the test's own reader reads the raw text; numpy on their kernel_init_s
    by_model: dict[str, list[float]] = {}
    failed: dict[str, int] = {}
    incomplete: dict[str, int] = {}
    boots: dict[str, int] = {}
    for name, _host, model, _kernel, _cohort in REAL:
        for boot in read_boots(DATA / name) or []:
            boots[model] = boots.get(model, 0) + 1
            if boot.outcome == "ok":
                assert boot.kernel_init_s is not None
                by_model.setdefault(model, []).append(boot.kernel_init_s)
            elif boot.outcome == "incomplete":
                incomplete[model] = incomplete.get(model, 0) + 1
            else:
                failed[model] = failed.get(model, 0) + 1
    summary = _json(capsys, "fleet", "summary", "--by", "model", "--db", db)
    assert summary["metric"] == "kernel_init_s" and summary["by"] == ["model"]
    groups = {g["model"]: g for g in summary["groups"]}  # type: ignore[attr-defined]
    assert set(groups) == set(boots)
    qemu = np.sort(np.array(by_model["qemu"]))
    assert qemu.size >= 8  # the multi-boot log and the journal export hold two boots each
    for p in (0.5, 0.9, 0.99):
        key = f"p{round(p * 100)}"
        assert groups["qemu"][key] == pytest.approx(float(np.quantile(qemu, p, method="inverted_cdf")))
        low, high = equal_tailed_ranks(qemu.size, p, 0.95)
        assert groups["qemu"][key + "_ci"][0] == pytest.approx(qemu[low - 1])
        assert groups["qemu"][key + "_ci"][1] == (
            pytest.approx(qemu[high - 1]) if high <= qemu.size else None
        )
    for model, group in groups.items():
        assert group["n"] == len(by_model.get(model, [])) and group["boots"] == boots[model]
        assert group["failed"] == failed.get(model, 0)
        assert group["incomplete"] == incomplete.get(model, 0)
        # the failure rate's base: the boots whose log says how they ended (ok + failed)
        decided = boots[model] - incomplete.get(model, 0)
        if decided:
            assert group["failed_ci"] == pytest.approx(_exact_binomial_ci(failed.get(model, 0), decided))
        else:
            assert group["failed_ci"] is None and group["failed_rate"] is None
    # the epyc dmesg is cut before "Run /init" (its first 0.42 s) and shows no failure: incomplete,
    # not failed (issue 25), and no time
    assert groups["epyc"]["failed"] == 0 and groups["epyc"]["incomplete"] == 1
    assert groups["epyc"]["p50"] is None

    two = _json(capsys, "fleet", "summary", "--by", "model,kernel", "--metric", "userspace_s", "--db", db)
    assert {(g["model"], g["kernel"]) for g in two["groups"]} == {  # type: ignore[attr-defined]
        ("qemu", "6.1"),
        ("xgene", "4.19"),
        ("epyc", "6.3"),
    }
    outliers = _json(capsys, "fleet", "outliers", "--by", "model", "--z", "1", "--db", db)
    values = {round(o["value"], 6) for o in outliers["outliers"]}  # type: ignore[attr-defined]
    med = float(np.median(qemu))
    mad = float(np.median(np.abs(qemu - med)))
    expected = {round(float(v), 6) for v in qemu if abs(v - med) / (1.4826 * mad) > 1}
    assert values == expected and expected

    capsys.readouterr()
    assert run_in_process("fleet", "summary", "--by", "rack", "--db", db) == 2
    assert "no field 'rack'" in capsys.readouterr().err


def test_planted_regression_in_one_model_is_found_and_unchanged_cohort_is_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    meta = make_fleet(
        tmp_path / "fleet",
        120,
        seed=7,
        models=("qemu-smp2", "xgene"),
        cohorts=(("control", 0.5), ("canary", 0.25), ("canary-b", 0.25)),
        regress_model="xgene",
        regress_factor=1.15,
        failed_fraction=0.0,
        junk_fraction=0.0,
    )
    db = str(tmp_path / "g.db")
    imported = _json(capsys, "fleet", "import", str(tmp_path / "fleet"), "--meta", str(meta), "--db", db)
    assert imported["imported"] == 120 and not imported["bad"]

    capsys.readouterr()
    code = run_in_process(
        "fleet", "compare", "--canary", "canary", "--control", "control", "--strata", "model",
        "--db", db, "--format", "json",
    )  # fmt: skip
    found = json.loads(capsys.readouterr().out)
    assert code == 1  # the canary is slower somewhere
    strata = {row["stratum"]: row for row in found["by_stratum"]}
    assert strata["xgene"]["verdict"] == "slower" and strata["xgene"]["ci"][0] > 0
    # the planted 15 % of xgene's ~1.52 s lies inside the interval
    assert strata["xgene"]["ci"][0] < 0.15 * 1.52 < strata["xgene"]["ci"][1]
    assert strata["qemu-smp2"]["verdict"] == "no difference"

    code = run_in_process(
        "fleet", "compare", "--canary", "canary-b", "--control", "control", "--strata", "model",
        "--db", db, "--format", "json",
    )  # fmt: skip
    unchanged = json.loads(capsys.readouterr().out)
    assert code == 0
    assert unchanged["pooled"]["verdict"] == "no difference"
    assert all(row["verdict"] == "no difference" for row in unchanged["by_stratum"])


def test_kcidb_document_imports_its_boots(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "k.db")
    result = _json(capsys, "fleet", "import", str(DATA / "fleet" / "kcidb-v5-boots.json"), "--db", db)
    assert result["imported"] == 1 and result["boots"] == 4
    summary = _json(capsys, "fleet", "summary", "--by", "platform", "--db", db)
    groups = {g["platform"]: g for g in summary["groups"]}  # type: ignore[attr-defined]
    # boot-1001's number, boot-1002's log excerpt; boot-1003 FAIL; boot-1004 MISS (neither)
    assert groups["qemu-x86"]["p50"] == pytest.approx(3.194636) and groups["qemu-x86"]["boots"] == 2
    assert groups["mustang"]["p50"] == pytest.approx(1.522958) and groups["mustang"]["failed"] == 1
    assert groups["qemu-x86"]["failed"] == 0


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["fleet", "import", "{dir}", "--meta", "{dir}/no-file-column.csv"], 2, "needs a 'file' column"),
        (["fleet", "import", "{dir}", "--meta", "{dir}/missing.csv"], 2, "cannot read the metadata CSV"),
        (["fleet", "import", "{dir}/nothing-here.log"], 2, "no such file"),
        (["fleet", "import", "{dir}/junk.bin"], 5, "none of the 1 file(s)"),
        (["fleet", "summary"], 2, "no database"),
        (["fleet", "summary", "--db", "{dir}/empty.db"], 2, "no fleet boots stored yet"),
        (["fleet", "summary", "--db", "{dir}/empty.db", "--format", "xml"], 2, "choose table or json"),
        (["fleet", "compare", "--canary", "a", "--control", "a", "--db", "{dir}/empty.db"], 2, "same cohort"),
        (["export", "--format", "kcidb", "--db", "{dir}/empty.db"], 2, "no fleet boots stored"),
        (["export", "--format", "kcidb", "--db", "{dir}/empty.db", "--origin", "Bad"], 2, "KCIDB origins"),
    ],
)
def test_bad_input_is_one_line(
    args: list[str], code: int, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "no-file-column.csv").write_text("path,host\na.log,h1\n")
    (tmp_path / "junk.bin").write_bytes(b"\x00\xff" * 500)
    from bootscope.store import Store

    Store.open(tmp_path / "empty.db").close()
    argv = [arg.replace("{dir}", str(tmp_path)) for arg in args]
    if "--db" not in argv and argv[1] == "import":
        argv += ["--db", str(tmp_path / "i.db")]
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path)
        assert run_in_process(*argv) == code
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bootscope: error:") and message in lines[0], lines


def test_duckdb_never_fetches_extensions() -> None:
    from bootscope.usecases.fleet.query import connect

    con = connect()
    settings = dict(
        con.execute(
            "SELECT name, value FROM duckdb_settings() "
            "WHERE name IN ('autoinstall_known_extensions', 'autoload_known_extensions')"
        ).fetchall()
    )
    assert settings == {"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"}
    # Parquet is built in: a round trip works without any extension install
    con.execute("COPY (SELECT 1 AS a) TO '/dev/null' (FORMAT parquet)")


def test_a_boot_that_panicked_is_a_failure_with_the_panic_as_its_reason(tmp_path: Path) -> None:
    hw = Path(__file__).resolve().parents[1] / "data" / "hw"
    early = read_fleet_file(str(hw / "riscv64-milkv-meles-th1520-5.10-uboot-opensbi-panic.log"))
    assert [(b.outcome, b.reason) for b in early.boots] == [
        ("failed", "kernel panic: VFS: Unable to mount root fs on unknown-block(179,4)")
    ]
    # SYNTHETIC: init ran, then died; the boot reached /init but still failed
    late = tmp_path / "late.log"
    late.write_text(
        "[    0.000000] Linux version 6.1.0-test\n"
        "[    1.250000] Run /init as init process\n"
        "[    1.300000] Kernel panic - not syncing: Attempted to kill init! exitcode=0x00000100\n"
    )
    (boot,) = read_fleet_file(str(late)).boots
    assert boot.outcome == "failed" and boot.metrics["kernel_init_s"] == 1.25
    assert boot.reason == "kernel panic: Attempted to kill init! exitcode=0x00000100"

"""`bootscope compare` as a user runs it: a real process, its stdout, stderr and exit code."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_here import run_in_process

SEED_A = "8.7,8.4,8.6,8.2,9.0,8.7,8.8,9.3,8.8,8.3"
SEED_B = "8.5,8.2,7.6,8.2,8.7,8.2,7.8,8.2,9.3,8.4"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bootscope", "compare", *args], capture_output=True, text=True, timeout=300
    )


def run_here(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run ``bootscope compare ARGS`` in this process; return (exit code, stdout, stderr)."""
    code = run_in_process("compare", *args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_seed_000_sign_method_gives_the_reviewers_figure() -> None:
    done = run("--a", SEED_A, "--b", SEED_B, "--method", "sign", "--format", "json", "--detect", "0.4s")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert abs(doc["tests"]["sign"]["p"] - 0.0547) < 1e-4
    assert doc["verdict"] == "no significant difference"


def test_seed_000_default_table_gives_the_exact_tied_p_and_boots_needed() -> None:
    done = run("--a", SEED_A, "--b", SEED_B, "--detect", "100ms")
    assert done.returncode == 0, done.stderr
    # Exact given the 0.1 s ties: p = 0.0332 (the normal approximation printed 0.0357).
    assert "faster at alpha 0.05 (p = 0.0332)" in done.stdout
    assert "exact given the ties" in done.stdout
    assert "boots per side detect a shift of 0.1 s" in done.stdout
    assert "Mann-Whitney" in done.stdout and "Welch" in done.stdout


def test_files_with_comments_units_and_mail(tmp_path: Path) -> None:
    a_file, b_file = tmp_path / "before.txt", tmp_path / "after.txt"
    a_file.write_text("# before the patch (s)\n" + SEED_A.replace(",", "\n") + "\n")
    b_file.write_text("\n".join(SEED_B.split(",")) + "  # after\n")
    done = run("--a-file", str(a_file), "--b-file", str(b_file), "--format", "mail", "--detect", "5%")
    assert done.returncode == 0, done.stderr
    assert all(len(line) <= 72 for line in done.stdout.splitlines())
    assert "after against before" in done.stdout
    ms = run(
        "--a-file", str(a_file), "--b-file", str(b_file), "--format", "csv", "--unit", "ms", "--detect", "5%"
    )
    assert ms.returncode == 0 and ",ms," in ms.stdout


def test_fail_on_slower_exit_code() -> None:
    slow = ",".join(str(float(v) + 2.0) for v in SEED_A.split(","))
    done = run(
        "--a", SEED_A + "," + SEED_A, "--b", slow + "," + slow, "--fail-on", "slower", "--format", "csv"
    )
    assert done.returncode == 1
    assert "slower" in done.stdout


def test_bad_input_is_one_line_with_exit_code_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("8.7\nnan\n")
    cases = [
        ("--a", "1.0", "--b", "1,2,3"),  # one sample
        ("--a", "1,2,abc", "--b", "1,2,3"),  # text
        ("--a-file", str(bad), "--b-file", str(bad)),  # NaN in a file
        ("--a", "1,2", "--b", "3,4", "--detect", "fast"),
        ("--a", "1,2", "--b", "3,4", "--method", "t"),
        ("--a-logs", str(tmp_path), "--b-logs", str(tmp_path), "--metric", "nonsense_s"),
        ("--a", "1,2"),
    ]
    for args in cases:
        code, _, err = run_here(capsys, *args)
        assert code == 2, (args, err)
        assert err.count("\n") == 1 and err.startswith("bootscope: error:"), err
    code, out, _ = run_here(capsys, "--a", "2,2,2", "--b", "2,2,2", "--format", "json")
    assert code == 0
    assert json.loads(out)["verdict"] == "degenerate"


def test_logs_directories_real_boot_logs(tmp_path: Path, data_dir: Path) -> None:
    a_dir, b_dir = tmp_path / "smp1", tmp_path / "smp4"
    a_dir.mkdir()
    b_dir.mkdir()
    shutil.copy(data_dir / "debian-6.1-cloud-initcall-smp1.log", a_dir)
    shutil.copy(data_dir / "debian-6.1-cloud-smp2.log", a_dir)
    shutil.copy(data_dir / "debian-6.1-cloud-initcall-smp4.log", b_dir)
    shutil.copy(data_dir / "debian-6.1-cloud-smp2-kmsg.log", b_dir)
    done = run("--a-logs", str(a_dir), "--b-logs", str(b_dir), "--format", "json", "--detect", "10%")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["metric"] == "kernel_init_s"
    assert doc["a"]["name"] == "smp1" and doc["a"]["n"] == 2 and doc["b"]["n"] == 2
    assert "Run /init" in doc["definition"]
    # Two boots a side cannot settle anything: the smallest possible p is 2 / C(4, 2) = 1/3.
    assert doc["verdict"] == "cannot tell" and "smallest possible p = 0.33" in doc["cannot_tell"]


def test_stored_run_every_variant_against_baseline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bootscope.store import BootRecord, Store, VariantRecord

    db = str(tmp_path / "runs.db")
    values = {
        "base": [float(v) for v in SEED_A.split(",")] * 2,
        "same": [float(v) for v in SEED_A.split(",")][::-1] * 2,
        "slow": [float(v) + 1.0 for v in SEED_A.split(",")] * 2,
    }
    with Store.open(db) as store:
        record = store.create_experiment(
            plan={}, seed=1, accel="tcg", accel_reason="test", host={},
            variants=[VariantRecord(name) for name in values],
        )  # fmt: skip
        index = 0
        for name, samples in values.items():
            for value in samples:
                boot = BootRecord(
                    variant=name, index=index, warmup=False, outcome="ok", metrics={"kernel_init_s": value}
                )
                store.record_boot(record.id, boot, [])
                index += 1
    code, out, err = run_here(capsys, "latest", "--db", db, "--format", "json", "--detect", "10%")
    assert code == 0, err
    docs = json.loads(out)
    assert [d["b"]["name"] for d in docs] == ["same", "slow"]
    assert [d["verdict"] for d in docs] == ["no significant difference", "slower"]
    assert all(d["correction"] == "Holm correction over 2 comparisons" for d in docs)
    assert docs[1]["shift"]["estimate"] > 0.9
    code, _, err = run_here(capsys, "latest", "--db", db, "--baseline", "nope")
    assert code == 2 and "not in run" in err
    code, _, err = run_here(capsys, "latest", "--db", db, "--metric", "bogus_s")
    assert code == 2 and "unknown metric" in err

"""bisect-run: thresholds, looks and exit codes, and a real `git bisect run` that boots a kernel."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_here import run_in_process

from bootscope.errors import InputError
from bootscope.lab.plans.boot import Plan, VariantSpec
from bootscope.store import Store
from bootscope.usecases.bisect import (
    BAD,
    GOOD,
    UNKNOWN,
    exit_code,
    looks_allowed,
    parse_threshold,
)
from bootscope.usecases.run import start_experiment


def test_parse_threshold() -> None:
    assert parse_threshold("5%") == pytest.approx(0.05)
    assert parse_threshold("0.2") == pytest.approx(0.2)
    for bad in ("five", "150%", "-1%"):
        with pytest.raises(InputError):
            parse_threshold(bad)


def test_looks_allowed() -> None:
    assert looks_allowed(6, 6) == 1
    assert looks_allowed(6, 24) == 4
    assert looks_allowed(4, 10) == 3
    with pytest.raises(InputError):
        looks_allowed(6, 5)


def test_exit_codes_of_the_three_verdicts() -> None:
    # git bisect run: 0 good, 1 bad, 125 skip (the decision itself: tests/stats/test_decision.py).
    assert (exit_code(GOOD), exit_code(BAD), exit_code(UNKNOWN)) == (0, 1, 125)


# ---- a real `git bisect run` over a tiny repository whose "build" chooses the kernel command line ----

ICOUNT_SHIFT = 3  # guest time counts instructions: host load cannot move kernel_init_s
PLANTED = "init_on_free=1"  # costs the 512 MiB guest ~0.6 s of guest time (11.30 s -> 11.91 s)


def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _commit(repo: Path, files: dict[str, str], message: str) -> str:
    for name, text in files.items():
        (repo / name).write_text(text)
    _git(repo, "add", *files)
    _git(repo, "commit", "-q", "-m", message)
    return _git(repo, "rev-parse", "HEAD").strip()


def _bootscope() -> str:
    return str(Path(sys.executable).with_name("bootscope"))


@pytest.mark.boot
def test_git_bisect_run_finds_the_planted_commit(cloud_kernel: Path, tmp_path: Path) -> None:
    db = tmp_path / "bisect.db"
    base = VariantSpec(name="good", kernel=str(cloud_kernel), smp=1, icount_shift=ICOUNT_SHIFT)
    # Under --icount each boot's guest time is its instruction count, so two at once (-j 2, one per
    # host core) measure what one at a time would.
    plan = Plan(variants=(base,), seed=5, samples_per_variant=3, warmup_per_variant=0, accel="tcg", jobs=2)
    with Store.open(db) as store:
        run = start_experiment(plan, store).experiment.id
    repo = tmp_path / "tree"
    repo.mkdir()
    _git(repo, "init", "-q")
    good = _commit(repo, {"cmdline.txt": "\n", "notes.txt": "a\n"}, "start")
    _commit(repo, {"notes.txt": "b\n"}, "harmless")
    planted = _commit(repo, {"cmdline.txt": f"{PLANTED}\n"}, "planted slowdown")
    bad = _commit(repo, {"notes.txt": "c\n"}, "harmless again")
    out = tmp_path / "append.txt"
    command = [
        _bootscope(), "bisect-run", "--build", f"cp cmdline.txt {out}", "--kernel", str(cloud_kernel),
        "--reference", f"{run}:good", "--threshold", "2%", "-n", "4", "--max-n", "4", "-j", "2",
        "--db", str(db), "--append-file", str(out),
    ]  # fmt: skip
    _git(repo, "bisect", "start", bad, good)
    done = subprocess.run(
        ["git", "bisect", "run", *command], cwd=repo, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{planted} is the first bad commit" in done.stdout, done.stdout + done.stderr
    # Each tested commit left its boots in the store, next to the reference.
    with Store.open(db) as store:
        assert len(store.list_experiments()) >= 3


def _here(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """Run ``bootscope bisect-run ARGS`` in this process; return (exit code, stderr)."""
    code = run_in_process("bisect-run", *args)
    return code, capsys.readouterr().err


def test_bisect_run_exit_codes_without_booting(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    common = ["--kernel", str(tmp_path / "none"), "--db", str(tmp_path / "empty.db")]
    code, err = _here(capsys, "--build", "exit 3", "--reference", "1:good", *common)
    assert code == 125 and "build failed" in err
    # A reference that does not exist would fail every commit alike: abort the bisect (>= 128).
    code, err = _here(capsys, "--build", "true", "--reference", "7:good", *common)
    assert code == 128 and "no experiment 7" in err
    code, err = _here(capsys, "--reference", "1:good", "--threshold", "lots", *common)
    assert code == 128 and "--threshold" in err
    code, err = _here(capsys, "--build", "exit 3", "--reference", "1:good", "-j", "0", *common)
    assert code == 128 and "-j must be at least 1" in err  # refused before the build runs
    code, err = _here(capsys, "--reference", "nocolon", *common)
    assert code == 128 and "RUN:VARIANT" in err
    # The old spelling still works for one release, with a note.
    code, err = _here(capsys, "--build", "true", "--baseline", "7:good", *common)
    assert code == 128 and "no experiment 7" in err
    assert "note: --baseline 7:good is now --reference 7:good" in err
    code, err = _here(capsys, "--baseline", "1:good", "--reference", "2:good", *common)
    assert code == 128 and "disagree" in err

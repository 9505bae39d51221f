"""One option name, one meaning (issue 10): the renamed options, and the old spellings that still work
for one release, hidden from --help, each with a one-line note on stderr."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_here import run_in_process

from bootscope.cli.kexec_cmd import memory_sizes
from bootscope.lab.qemu.kexec_chain import DEFAULT_KEXEC_MEM_MB
from bootscope.store import Store
from bootscope.store.records import VariantRecord

SEED_A = "8.7,8.4,8.6,8.2,9.0,8.7,8.8,9.3,8.8,8.3"
SEED_B = "8.5,8.2,7.6,8.2,8.7,8.2,7.8,8.2,9.3,8.4"
NOTE = "bootscope: note:"


def _here(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run the CLI's entry point in this process; return (exit code, stdout, stderr)."""
    code = run_in_process(*args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _listed(help_text: str, option: str) -> bool:
    """Whether ``option`` is listed as such (``--seed`` is not inside ``--bootstrap-seed``)."""
    return re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", help_text) is not None


@pytest.mark.parametrize(
    ("command", "shown", "hidden"),
    [
        ("run", ["--format", "--timeout", "--seed", "--mem"], ["--json"]),
        ("runs", ["--format"], ["--json"]),
        ("kexec", ["--format", "--timeout", "--mem", "--mem-sweep", "--quiet-host"], ["--json"]),
        ("compare", ["--format", "--bootstrap-seed", "--baseline"], ["--seed"]),
        ("bisect-run", ["--reference", "--timeout", "-j", "--jobs"], ["--baseline"]),
        ("sweep", ["--format", "--timeout", "--quiet-host", "--until", "--precision", "--max-n", "-j"], []),
        ("history", ["--format", "--timeout", "-j", "--jobs"], []),
    ],
)
def test_help_lists_the_new_spellings_not_the_hidden_ones(
    command: str,
    shown: list[str],
    hidden: list[str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = _here(capsys, command, "--help")
    assert code == 0
    for option in shown:
        assert _listed(out, option), (option, out)
    for option in hidden:
        assert not _listed(out, option), (option, out)


def test_runs_json_alias_prints_the_same_with_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "runs.db")
    with Store.open(db) as store:
        store.create_experiment(
            plan={}, seed=1, accel="tcg", accel_reason="test", host={}, variants=[VariantRecord("a")]
        )
    code, new, err = _here(capsys, "runs", "--db", db, "--format", "json")
    assert code == 0 and NOTE not in err
    assert [row["variants"] for row in json.loads(new)] == [["a"]]
    code, old, err = _here(capsys, "runs", "--db", db, "--json")
    assert code == 0 and old == new
    assert err.strip() == f"{NOTE} --json is now --format json; the old spelling goes in the next release"


@pytest.mark.parametrize(
    ("args", "code", "error"),
    [
        (["run", "--resume", "9"], 2, "no experiment 9"),  # a run that is not there: bad input
        (["kexec"], 2, "give the FROM kernel"),
    ],
)
def test_run_and_kexec_take_the_json_alias(
    args: list[str], code: int, error: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    got, _, err = _here(capsys, *args, "--json", "--db", str(tmp_path / "x.db"))
    lines = err.strip().splitlines()
    assert got == code and len(lines) == 2, lines
    assert lines[0].startswith(f"{NOTE} --json is now --format json") and error in lines[1]


def test_compare_seed_is_the_bootstrap_seed_alias(capsys: pytest.CaptureFixture[str]) -> None:
    common = ["compare", "--a", SEED_A, "--b", SEED_B, "--format", "json"]
    code, new, err = _here(capsys, *common, "--bootstrap-seed", "5")
    assert code == 0 and NOTE not in err
    code, old, err = _here(capsys, *common, "--seed", "5")
    assert code == 0 and json.loads(old) == json.loads(new)
    assert f"{NOTE} --seed 5 is now --bootstrap-seed 5" in err
    code, _, err = _here(capsys, *common, "--seed", "5", "--bootstrap-seed", "6")
    assert code == 2 and "disagree" in err


def test_kexec_mem_is_one_size_and_mem_sweep_the_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert memory_sizes(None, None) == [DEFAULT_KEXEC_MEM_MB]
    assert memory_sizes("2048", None) == [2048]
    assert memory_sizes(None, "1024,2048,4096") == [1024, 2048, 4096]
    assert capsys.readouterr().err == ""
    # The old spelling: a list given to --mem is a sweep, with a note.
    assert memory_sizes("1024,2048", None) == [1024, 2048]
    assert f"{NOTE} --mem 1024,2048 is now --mem-sweep 1024,2048" in capsys.readouterr().err


def test_kexec_mem_list_still_makes_variants(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # --mem-sweep and --variant exclude each other: the error shows the old list went to --mem-sweep.
    code, _, err = _here(
        capsys, "kexec", "/no/such/bzImage", "--mem", "1024,2048", "--variant", "a:smp=2",
        "--db", str(tmp_path / "x.db"),
    )  # fmt: skip
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 2 and lines[0].startswith(f"{NOTE} --mem 1024,2048")
    assert "--variant or --mem-sweep" in lines[1]


# Issue 26, point 14: `--json` is the old spelling of `--format json` in every command that has a
# --format, not only in those that once had it (`latency analyze --json` was refused); `--alpha` is
# the significance level everywhere (`latency analyze --confidence` was its complement).
JSON_NOTE = f"{NOTE} --json is now --format json; the old spelling goes in the next release"
CYCLICTEST_H100 = "latency/cyclictest-h100.json"


@pytest.mark.parametrize(
    "args",
    [
        ["latency", "analyze", CYCLICTEST_H100],
        ["compare", "--a", SEED_A, "--b", SEED_B],
        ["analyze", "debian-6.1-cloud-smp2.log"],
    ],
)
def test_json_is_format_json_with_a_note_in_every_command(
    args: list[str], data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [str(data_dir / a) if a.endswith((".json", ".log")) else a for a in args]
    code, new, err = _here(capsys, *args, "--format", "json")
    assert code == 0 and NOTE not in err
    code, old, err = _here(capsys, *args, "--json")
    assert code == 0 and old == new
    assert JSON_NOTE in err.splitlines()
    for both in (["--json", "--format", "table"], ["--format=table", "--json"]):
        code, _, err = _here(capsys, *args, *both)
        assert code == 2 and err.splitlines()[-1] == "bootscope: error: --json and --format table disagree"


def test_json_as_a_value_or_after_double_dash_is_left_alone(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _here(capsys, "compare", "--a", "--json", "--b", SEED_B)
    assert code == 2 and err == "bootscope: error: --a:1: '--json' is not a number\n"
    code, _, err = _here(capsys, "compare", "--a", SEED_A, "--b", SEED_B, "--", "--json")
    assert code == 2 and NOTE not in err  # the extra argument is the RUN: two inputs given


def test_json_where_there_is_no_format_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _here(capsys, "kernels", "--json")
    assert code == 2 and NOTE not in err and "No such option: --json" in out + err


def test_latency_analyze_alpha_and_its_old_spelling(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(data_dir / CYCLICTEST_H100)
    code, default, _ = _here(capsys, "latency", "analyze", path, "--format", "json")
    assert code == 0
    # The document states the confidence of each quantile interval: 1 - alpha.
    assert {q["confidence"] for row in json.loads(default)["rows"] for q in row["quantiles"]} == {0.95}
    code, strict, err = _here(capsys, "latency", "analyze", path, "--format", "json", "--alpha", "0.01")
    assert code == 0 and NOTE not in err
    assert {q["confidence"] for row in json.loads(strict)["rows"] for q in row["quantiles"]} == {0.99}
    code, old, err = _here(capsys, "latency", "analyze", path, "--format", "json", "--confidence", "0.99")
    assert code == 0 and old == strict
    assert (
        err.strip()
        == f"{NOTE} --confidence 0.99 is now --alpha 0.01; the old spelling goes in the next release"
    )
    code, _, err = _here(capsys, "latency", "analyze", path, "--confidence", "0.99", "--alpha", "0.05")
    assert (
        code == 2 and err.splitlines()[-1] == "bootscope: error: --confidence 0.99 and --alpha 0.05 disagree"
    )
    code, _, err = _here(capsys, "latency", "analyze", path, "--alpha", "1.5")
    assert code == 2 and err == "bootscope: error: --alpha must lie between 0 and 1, not 1.5\n"


@pytest.mark.parametrize(
    ("command", "shown", "hidden"),
    [
        (["latency", "analyze"], ["--alpha", "--format"], ["--confidence", "--json"]),
        (["compare"], ["--alpha", "--a-logs", "--b-logs"], ["--json", "--confidence"]),
        (["diff"], ["--alpha", "--a-logs", "--b-logs"], ["--json"]),
        (["fleet", "compare"], ["--alpha"], ["--json"]),
    ],
)
def test_one_name_for_the_significance_level_and_the_logs(
    command: list[str],
    shown: list[str],
    hidden: list[str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = _here(capsys, *command, "--help")
    assert code == 0
    for option in shown:
        assert _listed(out, option), (option, out)
    for option in hidden:
        assert not _listed(out, option), (option, out)
    if "--a-logs" in shown:
        assert "a log file, a directory of logs or a quoted glob (repeat)" in " ".join(out.split())

"""`bootscope diff`, `baseline save` and `check` on recorded logs and on stored runs of synthetic boots
made from a real 6.1 initcall_debug log (tests/planted_logs.py: a known initcall made slower), run
through the CLI's real entry point; exit codes as CI sees them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_here import run_in_process
from planted_logs import store_planted_run, write_planted

SOURCE = Path(__file__).parent.parent / "data" / "debian-6.1-cloud-initcall-smp4.log"
PLANTED = "init_kprobe_trace"  # 0.195 s in the source log; made 0.4 s slower (about 10 % of the total)
BOOTS = 10


@pytest.fixture(scope="module")
def planted_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A stored run: ``base``, ``same`` (another draw of the same boots) and ``slow`` (PLANTED +0.4 s)."""
    db = tmp_path_factory.mktemp("diff") / "planted.db"
    store_planted_run(db, SOURCE, {"base": {}, "same": {}, "slow": {PLANTED: 400_000}}, BOOTS)
    return db


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    code = run_in_process(*args)
    out = capsys.readouterr().out
    return code, json.loads(out) if code == 0 else {}


def test_diff_of_a_stored_run_names_the_planted_initcall_first(
    planted_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, doc = _json(capsys, "diff", "1", "--db", str(planted_run), "--variant", "slow", "--by", "initcall",
                      "--format", "json")  # fmt: skip
    assert code == 0
    assert {"metric", "baseline", "variant", "total", "components"} <= set(doc)
    assert (doc["metric"], doc["baseline"], doc["variant"]) == ("kernel_init_s", "base", "slow")
    assert {"shift", "ci", "p", "verdict"} <= set(doc["total"]) and doc["total"]["verdict"] == "slower"
    first = doc["components"][0]
    assert {"name", "kind", "a", "b", "shift", "p", "q", "share_of_total"} <= set(first)
    assert (first["kind"], first["name"]) == ("initcall", PLANTED)
    assert 0.35 < first["shift"]["estimate"] < 0.45 and first["shift"]["ci"][0] > 0.3
    assert first["q"] < 0.05 and first["moved"]
    assert 0.8 < first["share_of_total"] < 1.2
    assert [c["name"] for c in doc["components"] if c["moved"]] == [PLANTED]
    assert doc["components_shown"] == 20 and doc["components_total"] > 500
    assert "Benjamini-Hochberg" in doc["correction"]


def test_diff_by_phase_and_an_a_a_run_flags_nothing(
    planted_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, doc = _json(capsys, "diff", "1", "--db", str(planted_run), "--variant", "slow", "--by", "phase",
                      "--format", "json")  # fmt: skip
    assert code == 0 and doc["components"][0]["name"] == "initcalls"
    phases = doc["decomposition"]["phase"]
    assert phases["sum_of_shifts"] == pytest.approx(doc["total"]["shift"], abs=0.05)
    code, doc = _json(capsys, "diff", "1", "--db", str(planted_run), "--variant", "same", "--format", "json",
                      "--top", "1000")  # fmt: skip
    assert code == 0 and doc["total"]["verdict"] == "no significant difference"
    assert len(doc["components"]) > 500
    assert not [c["name"] for c in doc["components"] if c["moved"]]


def test_diff_mail_and_html(planted_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_in_process("diff", "1", "--db", str(planted_run), "--variant", "slow", "--format", "mail") == 0
    mail = capsys.readouterr().out
    assert max(len(line) for line in mail.splitlines()) <= 72
    assert mail.splitlines()[0].startswith("kernel_init_s: slow (10) vs base (10)")
    # First: the planted initcall, or the silence after its "calling" line (the same 0.4 s).
    first = next(line for line in mail.splitlines() if line.startswith("  1. "))
    assert PLANTED in first and "  5. " in mail and "  6. " not in mail
    out = tmp_path / "diff.html"
    assert run_in_process("diff", "1", "--db", str(planted_run), "--variant", "slow", "--format", "html",
                          "-o", str(out)) == 0  # fmt: skip
    page = out.read_text()
    assert '<svg class="waterfall"' in page and PLANTED in page
    assert run_in_process("diff", "1", "--db", str(planted_run), "--variant", "slow", "--top", "3") == 0
    table = capsys.readouterr().out
    assert PLANTED in table and "█" in table and "Benjamini-Hochberg" in table


def test_diff_of_log_directories_and_multi_boot_logs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_planted(SOURCE, tmp_path / "before", 6, seed=1)
    after = write_planted(SOURCE, tmp_path / "after", 6, seed=50, slower_us={PLANTED: 400_000})
    multi = tmp_path / "after-all.log"
    multi.write_text("".join(path.read_text() for path in after))
    for b_side in (str(tmp_path / "after"), str(multi)):
        code, doc = _json(capsys, "diff", "--a-logs", str(tmp_path / "before"), "--b-logs", b_side,
                          "--by", "initcall", "--format", "json")  # fmt: skip
        assert code == 0, b_side
        assert doc["total"]["b"]["n"] == 6
        assert doc["components"][0]["name"] == PLANTED


def test_diff_bad_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_in_process("diff", "--a-logs", str(tmp_path / "missing"), "--b-logs", str(tmp_path)) == 2
    assert run_in_process("diff", "1", "--by", "nothing", "--db", str(tmp_path / "x.db")) == 2
    one = tmp_path / "one"
    write_planted(SOURCE, one, 1, seed=1)
    assert run_in_process("diff", "--a-logs", str(one), "--b-logs", str(one)) == 2  # one boot a side
    err = capsys.readouterr().err
    assert "Traceback" not in err and "at least 2" in err


def test_baseline_save_and_check_as_ci_runs_it(
    planted_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref = tmp_path / "ref.json"
    assert run_in_process("baseline", "save", "1:base", "-o", str(ref), "--db", str(planted_run)) == 0
    document = json.loads(ref.read_text())
    assert (document["format"], document["version"]) == ("bootscope-reference", 1)
    assert len(document["metrics"]["kernel_init_s"]) == BOOTS
    assert len(document["components"]["initcall"][PLANTED]) == BOOTS
    assert document["kernel"]["releases"] == ["6.1.0-56-cloud-amd64"] and document["method"]
    # An identical configuration passes, a slower one fails and names what got slower.
    assert run_in_process("check", "1:same", "--against", str(ref), "--db", str(planted_run)) == 0
    assert "pass" in capsys.readouterr().err
    assert run_in_process("check", "1:slow", "--against", str(ref), "--db", str(planted_run)) == 1
    err = capsys.readouterr().err
    assert "regression" in err and f"initcall {PLANTED}" in err and "total kernel_init_s" in err
    # A slowdown below the threshold on the total still shows in its component.
    code = run_in_process("check", "1:slow", "--against", str(ref), "--db", str(planted_run), "--threshold",
                          "20%", "--format", "json")  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["total"]["verdict"] == "good"
    found = {(f["kind"], f["name"]) for f in out["regressions"]}
    assert ("initcall", PLANTED) in found and all(PLANTED in name for _, name in found), found


def test_check_on_logs_cannot_tell_and_bad_input(
    planted_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref = tmp_path / "ref.json"
    assert run_in_process("baseline", "save", "1:base", "-o", str(ref), "--db", str(planted_run)) == 0
    (one,) = write_planted(SOURCE, tmp_path / "one", 1, seed=7)
    assert run_in_process("check", str(one), "--against", str(ref)) == 125
    assert "1 more" in capsys.readouterr().err
    logs = write_planted(SOURCE, tmp_path / "logs", 6, seed=70)
    assert run_in_process("check", *map(str, logs), "--against", str(ref)) == 0
    junk = tmp_path / "junk.log"
    junk.write_bytes(b"\x00\xff" * 100 + b"\nno timestamps here\n")
    assert run_in_process("check", str(junk), "--against", str(ref)) == 5
    assert run_in_process("check", str(one), "--against", str(tmp_path / "none.json")) == 2
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "bootscope-reference", "version": 99}))
    assert run_in_process("check", str(one), "--against", str(bad)) == 2
    assert run_in_process("check", "1", "--against", str(ref), "--db", str(planted_run)) == 2  # 3 variants
    err = capsys.readouterr().err
    assert "version 99" in err and "Traceback" not in err


def test_diff_of_a_kexec_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A stored kexec run (fake target: a slower init in variant b) diffs on its reboot downtime."""
    from bootscope.lab.plans.kexec import KexecPlan, KexecVariant
    from bootscope.lab.targets.fake import FakeTarget
    from bootscope.store import Store
    from bootscope.usecases.run import start_kexec

    variants = (
        KexecVariant("a", "to", append="fake.init_ms=700"),
        KexecVariant("b", "to", append="fake.init_ms=1500"),
    )
    db = tmp_path / "k.db"
    with Store.open(db) as store:
        start_kexec(
            KexecPlan("from", variants, hops=1, chains=4, seed=1, accel="tcg"), store, target=FakeTarget()
        )
    code, doc = _json(
        capsys, "diff", "1", "--db", str(db), "--metric", "kexec_downtime_s", "--format", "json"
    )
    assert code == 0 and doc["total"]["verdict"] == "slower" and doc["total"]["b"]["n"] == 4
    assert 0.7 < doc["total"]["shift"] < 0.9


def test_the_run_report_draws_a_waterfall_per_variant(planted_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "run.html"
    assert run_in_process("report", "--run", "1", "--db", str(planted_run), "-o", str(out)) == 0
    page = out.read_text()
    assert page.count('<svg class="waterfall"') == 2  # same and slow, each against base
    assert "What moved kernel_init_s: slow vs base" in page and "phase initcalls" in page

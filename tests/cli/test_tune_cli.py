"""`bootscope tune` on real boots: Debian's cloud kernel under -icount (guest time counts
instructions, so the verdicts hold whatever else this host runs), a baseline command line with
console noise (initcall_debug) and, allowed as a feature knob, the slow crypto self-test initcall.
Every saving is checked against the stored boots themselves. One boot at a time (no -j): the image
lane boots beside this one, and two more QEMUs starved its guest past a marker's timeout once."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from bootscope.store import Store
from tests.cli_here import run_in_process

ROOT = Path(__file__).resolve().parents[2]

BASE = "initcall_debug ignore_loglevel"
MACHINE = "i8042=off"  # QEMU's PC without its PS/2 controller: a machine knob asked for with --try


def _bootscope(*args: str) -> subprocess.CompletedProcess[str]:
    exe = str(Path(sys.executable).with_name("bootscope"))
    return subprocess.run([exe, *args], capture_output=True, text=True, check=False, timeout=1200)


@pytest.mark.boot
def test_tune_finds_the_console_noise_and_a_slow_initcall(cloud_kernel: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "tune.db")
    done = _bootscope(
        "tune", str(cloud_kernel), "--append", BASE, "--icount", "3", "-n", "4", "--seed", "5",
        "--allow", "feature", "--only", "initcall_debug", "--only", "initcall_blacklist=crypto_algapi_init",
        "--try", f"machine:{MACHINE}", "--db", db, "--format", "json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    knobs = {c["knob"]: c for c in result["candidates"]}
    assert set(knobs) == {"-initcall_debug", "+initcall_blacklist=crypto_algapi_init", f"+machine:{MACHINE}"}
    assert knobs["+initcall_blacklist=crypto_algapi_init"]["risk"] == "feature"
    # The probe, the screen's stages (the first a first look: 3 knobs, 2 boots each against 8 of
    # the baseline), the final A/B.
    probe, screen, *later, final = result["runs"]
    with Store.open(db) as store:
        screened = store.samples(screen, "kernel_init_s")
        experiment = store.experiment(screen)
        pooled = [store.samples(run, "kernel_init_s") for run in (screen, *later)]
        spent = sum(len(store.boots(run)) for run in result["runs"])
        finals = store.samples(final, "kernel_init_s")
        logs = {b.variant: store.boot_log(screen, b.index) for b in store.boots(screen)}
        probe_meta = store.experiment(probe).meta
        assert store.experiment(final).meta["tune_of"] == str(probe)
    # The probe keeps the request (for --resume); every later run names the probe.
    assert probe_meta["tune"] == "probe" and json.loads(probe_meta["tune_request"])["append"] == BASE
    assert experiment.meta["tune_of"] == str(probe)
    arms = {v.name: v.config["append"] for v in experiment.variants if not v.config["qemu_args"]}
    assert arms["baseline"] == BASE
    # The machine knob's arm: the baseline's command line on a PC without the PS/2 controller, which
    # its console shows (the kernel finds none), where the baseline's sets it up.
    (machine,) = [v for v in experiment.variants if v.config["qemu_args"]]
    assert machine.config["qemu_args"] == ["-machine", MACHINE] and machine.config["append"] == BASE
    assert any("serio: i8042 KBD port" in line.text for line in logs["baseline"])
    assert not any("serio: i8042" in line.text for line in logs[machine.name])
    assert len(screened["baseline"]) == 8 and all(len(screened[v]) == 2 for v in screened if v != "baseline")
    without = knobs[f"+machine:{MACHINE}"]
    assert without["decision"] != "rejected", without
    # Its saving is ~2 ms, so 2 boots may not settle it (Welch's interval of 2 boots is wide): its
    # later stages boot it and the baseline 4 times each, pooled with the first look's.
    assert len(later) <= 2 and without["boots"] == 2 + 4 * len(later)
    machine_base = [v for samples in pooled for v in samples["baseline"]]
    machine_boots = [v for samples in pooled for v in samples.get(machine.name, [])]
    assert without["saving"] == pytest.approx(
        statistics.median(machine_base) - statistics.median(machine_boots), abs=0.002
    )
    base = statistics.median(screened["baseline"])
    assert result["baseline"] == {"append": BASE, "median": pytest.approx(base)}
    for name, append in arms.items():
        if name == "baseline":
            continue
        knob = next(k for k in knobs.values() if _applied(k["knob"], BASE) == append)
        # Under -icount each arm's boots differ by microseconds: the saving is the medians' difference.
        assert knob["saving"] == pytest.approx(base - statistics.median(screened[name]), abs=0.002)
        assert knob["decision"] == "saving" and knob["ci"][0] > 0 and knob["boots"] == 2
    # Two lines per initcall cost a tenth of a second or more; the crypto self-tests seconds under TCG.
    assert 0.05 < knobs["-initcall_debug"]["saving"] < 1.0
    assert knobs["+initcall_blacklist=crypto_algapi_init"]["saving"] > 1.0
    # Where it came from: the blacklisted initcall itself, gone from the tuned boots, and the
    # initcalls phase, each by most of the knob's saving (2 boots against 8 cannot resolve them
    # against hundreds of initcalls: marked so). -initcall_debug's shows in the initcalls phase, resolved.
    where = {(m["kind"], m["name"]): m for m in knobs["+initcall_blacklist=crypto_algapi_init"]["where"]}
    gone = where[("initcall", "crypto_algapi_init")]
    assert gone["status"] == "disappeared" and gone["saving"] > 1.0, where
    assert where[("phase", "initcalls")]["saving"] == pytest.approx(gone["saving"], rel=0.05), where
    quieter = knobs["-initcall_debug"]["where"][0]
    assert (quieter["kind"], quieter["name"], quieter["resolved"]) == ("phase", "initcalls", True)
    # The final A/B of the two together, booted again against the baseline.
    recommended = result["recommended"]
    assert recommended["append"] == "ignore_loglevel initcall_blacklist=crypto_algapi_init"
    kept_machine = without["decision"] == "saving"
    assert recommended["qemu_args"] == (["-machine", MACHINE] if kept_machine else [])
    assert recommended["decision"] == "saving" and recommended["combination"] == ""
    together = statistics.median(finals["baseline"]) - statistics.median(finals["tuned"])
    assert recommended["saving"] == pytest.approx(together, abs=0.002) and recommended["ci"][0] > 0
    assert recommended["sum_of_singles"] == pytest.approx(sum(k["saving"] for k in knobs.values()))
    assert result["boots_spent"] == spent == 1 + 2 * (4 + 3) + 4 * 2 * len(later) + 2 * 4


def _applied(knob: str, base: str) -> str:
    words = base.split()
    if knob.startswith("-"):
        return " ".join(w for w in words if w != knob[1:])
    return " ".join([*words, knob[1:]])


def test_tune_refuses_bad_requests_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "t.db")
    cases = (
        (("-n", "3"), "at least 4 boots an arm"),
        (("--budget", "10"), "one knob needs 17 boots at -n 4"),
        (("--metric", "no_such_metric"), "no_such_metric"),
        (("--format", "yaml"), "--format"),
    )
    for args, message in cases:
        code = run_in_process("tune", "/nonexistent/bzImage", "-n", "4", *args, "--db", db)
        err = capsys.readouterr().err.strip()
        assert code == 2 and message in err and len(err.splitlines()) == 1, (args, err)
    # a board boots its own kernel: a QEMU guest's options are refused before labgrid is touched
    board = f"labgrid:{ROOT / 'examples' / 'labgrid-shell-qemu.yaml'}"
    for args, message in ((("--smp", "2"), "--smp is a QEMU guest's option"),
                          (("--accel", "tcg"), "--accel is a QEMU guest's option"),
                          (("--image", "x"), "--image is a QEMU guest's option")):  # fmt: skip
        code = run_in_process("tune", board, "-n", "4", *args, "--db", db)
        err = capsys.readouterr().err.strip()
        assert code == 2 and message in err and len(err.splitlines()) == 1, (args, err)
    code = run_in_process("tune", "labgrid:/nonexistent.yaml", "-n", "4", "--db", db)
    err = capsys.readouterr().err.strip()
    assert code == 2 and "no environment file" in err and len(err.splitlines()) == 1, err

"""`bootscope tune` on a board through real labgrid (examples/labgrid-shell-qemu.yaml: labgrid's QEMU
driver booting the pinned Debian cloud kernel with bootscope's shell initramfs under -icount). The
board's command line is read on its own shell, and every arm is a kexec reboot with a whole command
line of its own: the test reads each stored boot's `kexec -l` order and the board's `boot_args` from
the environment file itself, and recomputes each saving (Hodges-Lehmann: the median of the pairwise
differences) from the stored values."""

from __future__ import annotations

import itertools
import json
import re
import shlex
import statistics
from pathlib import Path

import pytest

from bootscope.lab.targets.labgrid.examples import KERNEL_VARIABLE, SHELL_INITRD_VARIABLE
from bootscope.store import Store
from tests.cli_here import run_in_process

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "labgrid-shell-qemu.yaml"
_LOADED = re.compile(r"--command-line=('[^']*'|\S+)")


def _board_args() -> str:
    """The board's own command line, as its environment file gives it to labgrid's QEMU driver."""
    found = re.search(r"^\s+boot_args: (.+)$", EXAMPLE.read_text(encoding="utf-8"), re.MULTILINE)
    assert found is not None
    return found[1].strip()


def _hodges_lehmann(baseline: list[float], tuned: list[float]) -> float:
    return statistics.median(b - t for b, t in itertools.product(baseline, tuned))


@pytest.mark.boot
def test_a_board_is_tuned_by_kexec_reboots_with_each_knobs_command_line(
    cloud_kernel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KERNEL_VARIABLE, str(cloud_kernel))
    monkeypatch.delenv(SHELL_INITRD_VARIABLE, raising=False)
    db = tmp_path / "tune.db"
    # The budget pays for the probe and one stage of the baseline and two knobs: one that adds a word,
    # one that takes the board's own word away.
    code = run_in_process(
        "tune", f"labgrid:{EXAMPLE}", "--only", "quiet", "--try", "quiet", "--try=-panic", "-n", "4",
        "--budget", "21", "--metric", "userspace_s", "--seed", "3", "--timeout", "120",
        "--db", str(db), "--format", "json",
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    result = json.loads(out)
    own = _board_args()
    assert result["baseline"]["append"] == own
    knobs = {c["knob"]: c for c in result["candidates"]}
    assert set(knobs) == {"+quiet", "-panic"}, knobs
    lines = {"baseline": own, "+quiet": f"{own} quiet", "-panic": " ".join(
        w for w in own.split() if not w.startswith("panic="))}  # fmt: skip
    probe, screen = result["runs"][:2]
    with Store.open(db) as store:
        experiment = store.experiment(screen)
        arms = {v.name: v.config["cmdline"] for v in experiment.variants}
        values = store.samples(screen, "userspace_s")
        for run in result["runs"]:
            for boot in store.boots(run):
                assert boot.outcome == "ok", boot.reason
                loading = next(part for part in boot.command if "kexec -l" in part)
                given = _LOADED.search(loading)
                assert given is not None, loading
                name = "baseline" if run == probe else boot.variant
                assert shlex.split(given[1])[0] == (arms.get(name) or own), loading
        assert store.experiment(probe).meta["tune"] == "probe"
    # each arm's command line is the board's own with the knob applied, and its saving is the stored
    # values' own Hodges-Lehmann shift against the baseline's
    named = {name: cmdline for name, cmdline in arms.items() if name != "baseline"}
    assert arms["baseline"] == own
    assert sorted(named.values()) == sorted([lines["+quiet"], lines["-panic"]])
    for name, cmdline in named.items():
        knob = knobs["+quiet" if cmdline == lines["+quiet"] else "-panic"]
        assert knob["boots"] == 4 and len(values[name]) == 4
        assert knob["decision"] != "rejected", knob
        assert knob["saving"] == pytest.approx(_hodges_lehmann(values["baseline"], values[name]), abs=1e-6)
    assert result["baseline"]["median"] == pytest.approx(statistics.median(values["baseline"]))
    # under quiet the console shows no phase: the phases are not counted as saved, only unseen
    for knob in knobs.values():
        assert not [m for m in knob.get("where", []) if m["status"] == "disappeared" and m["kind"] == "phase"]
    # --resume takes every stored board run again (their whole command lines match) and boots nothing
    code = run_in_process("tune", "--resume", "latest", "--db", str(db), "--format", "json")
    again, err = capsys.readouterr()
    assert code == 0, err
    resumed = json.loads(again)
    assert resumed["runs"] == result["runs"] and resumed["boots_spent"] == result["boots_spent"]
    assert {c["knob"]: c["saving"] for c in resumed["candidates"]} == {
        k: c["saving"] for k, c in knobs.items()
    }

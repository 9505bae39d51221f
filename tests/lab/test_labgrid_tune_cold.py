"""`bootscope tune labgrid:... --reboot cold`: a board tuned from power-on, through real labgrid
(examples/labgrid-shell-qemu.yaml: labgrid's QEMU driver booting the pinned Debian cloud kernel with
bootscope's shell initramfs under -icount). Each arm is switched on with its own command line given
to the QEMU driver (its ``boot_args``): the test reads, in every stored boot's console, the line the
kernel says it was given (``Command line: ...``, read by ``tests/lab/printed_cmdline.py``) and checks it
against the arm's, the board's own line read from the environment file itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bootscope.lab.targets.labgrid.examples import KERNEL_VARIABLE, SHELL_INITRD_VARIABLE
from bootscope.store import Store
from tests.cli_here import run_in_process
from tests.lab.printed_cmdline import printed_cmdline
from tests.lab.test_labgrid_tune import EXAMPLE
from tests.lab.test_labgrid_tune import _board_args as board_args

WORD = "bootscope.tune_cold=1"  # a word no kernel reads: the arm differs only in its line


@pytest.mark.boot
def test_a_board_is_tuned_from_power_on_each_arm_with_its_own_line(
    cloud_kernel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KERNEL_VARIABLE, str(cloud_kernel))
    monkeypatch.delenv(SHELL_INITRD_VARIABLE, raising=False)
    db = tmp_path / "tune.db"
    code = run_in_process(
        "tune", f"labgrid:{EXAMPLE}", "--reboot", "cold", "--only", "none", "--try", WORD, "-n", "4",
        "--seed", "5", "--timeout", "120", "--db", str(db), "--format", "json",
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    result = json.loads(out)
    own = board_args()
    assert result["baseline"]["append"] == own
    (knob,) = result["candidates"]
    assert knob["knob"] == f"+{WORD}"
    lines = {"baseline": own, "knob": f"{own} {WORD}"}
    probe = result["runs"][0]
    booted = 0
    with Store.open(db) as store:
        for run in result["runs"]:
            experiment = store.experiment(run)
            arms = {v.name: v.config for v in experiment.variants}
            assert all(config["reboot"] == "cold" for config in arms.values()), arms
            for boot in store.boots(run):
                assert boot.outcome == "ok", boot.reason
                # a boot from power-on: the time from switching on to the kernel's first line
                assert (boot.metrics.get("poweron_to_kernel_s") or 0.0) > 0.0, boot.metrics
                given = printed_cmdline([line.text for line in store.boot_log(run, boot.index)])
                name = "baseline" if run == probe or boot.variant == "baseline" else "knob"
                assert given == lines[name], (run, boot.variant, given)
                booted += 1
    assert booted == result["boots_spent"] >= 9  # the probe, then 4 boots a side at least
    # a no-effect word saves nothing worth having
    assert knob["decision"] != "saving" or knob["saving"] < 0.05 * result["baseline"]["median"], knob
    # --resume takes the stored cold runs again and boots nothing
    code = run_in_process("tune", "--resume", "latest", "--db", str(db), "--format", "json")
    again, err = capsys.readouterr()
    assert code == 0, err
    resumed = json.loads(again)
    assert resumed["runs"] == result["runs"] and resumed["boots_spent"] == result["boots_spent"]

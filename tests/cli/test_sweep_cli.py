"""The sweep, history and bisect-run commands as a user runs them (a subprocess, exit codes, JSON)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cli_here import run_in_process
from images import assert_png_drawn, points, record_figures, tick_labels

from bootscope.lab.plans.boot import Plan, VariantSpec
from bootscope.store import BootRecord, Store, VariantRecord


def _bootscope(*args: str) -> subprocess.CompletedProcess[str]:
    exe = str(Path(sys.executable).with_name("bootscope"))
    return subprocess.run([exe, *args], capture_output=True, text=True, check=False)


def _here(capsys: pytest.CaptureFixture[str], *args: str) -> subprocess.CompletedProcess[str]:
    """Run the CLI's real entry point in this process (a process per case costs seconds of imports)."""
    code = run_in_process(*args)
    captured = capsys.readouterr()
    return subprocess.CompletedProcess(list(args), code, captured.out, captured.err)


def test_sweep_rejects_bad_input_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = _here(capsys, "sweep", "/nonexistent/bzImage", "--param", "smp", "--db", str(tmp_path / "x.db"))
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1 and "NAME=V1,V2" in bad.stderr
    plan = tmp_path / "p.toml"
    plan.write_text('kernel = "debian:cloud"\n')
    no_grid = _here(capsys, "sweep", "--plan", str(plan), "--db", str(tmp_path / "x.db"))
    assert no_grid.returncode == 2 and "[grid]" in no_grid.stderr
    # The run settings are run's own options, checked the same way.
    loose = _here(capsys, "sweep", "/k", "--param", "smp=1,2", "--precision", "1%")
    assert loose.returncode == 2 and "only with --until precise" in loose.stderr
    bad_format = _here(capsys, "sweep", "/k", "--param", "smp=1,2", "--format", "yaml")
    assert bad_format.returncode == 2 and "choose table or json" in bad_format.stderr
    neither = _here(capsys, "history", "--db", str(tmp_path / "x.db"))
    assert neither.returncode == 2 and "--from-run" in neither.stderr


def _stored_series(db: Path, levels: list[float], n: int) -> int:
    rng = np.random.default_rng(8)
    variants = tuple(VariantSpec(name=f"v{i}", kernel=f"/k/{i}") for i in range(len(levels)))
    plan = Plan(variants=variants, seed=4, samples_per_variant=n, warmup_per_variant=0)
    with Store.open(db) as store:
        record = store.create_experiment(
            plan=plan.to_dict(),
            seed=4,
            accel="tcg",
            accel_reason="test",
            host={},
            variants=[VariantRecord(v.name, v.config()) for v in variants],
        )
        index = 0
        for _ in range(n):
            for variant, level in zip(variants, levels, strict=True):
                value = float(level + rng.normal(0, 0.01))
                metrics = {"kernel_init_s": value}
                store.record_boot(
                    record.id, BootRecord(variant.name, index, False, "ok", metrics=metrics), []
                )
                index += 1
        return record.id


def test_history_from_a_stored_run_json_and_plot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "h.db"
    run = _stored_series(db, [2.0, 2.0, 2.0, 2.5, 2.5], 5)
    png = tmp_path / "series.png"
    saved = record_figures(monkeypatch)
    done = _here(
        capsys, "history", "--from-run", str(run), "--db", str(db), "--format", "json", "--plot", str(png)
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [p["name"] for p in data["positions"]] == ["v0", "v1", "v2", "v3", "v4"]
    assert [c["after"] for c in data["change_points"]] == [2]
    assert data["change_points"][0]["between"] == ["v2", "v3"]
    assert data["change_points"][0]["shift"]["estimate"] == pytest.approx(0.5, abs=0.03)
    assert "Pettitt" in data["method"]
    assert_png_drawn(png)
    # The picture: every stored boot a dot at its variant's position, the change between v2 and v3.
    with Store.open(db) as store:
        stored = store.samples(run, "kernel_init_s")
    (ax,) = saved[0].axes
    assert [sorted(dots[:, 1]) for dots in points(ax)] == [sorted(stored[f"v{i}"]) for i in range(5)]
    assert tick_labels(ax) == ["v0", "v1", "v2", "v3", "v4"]
    (change,) = [line for line in ax.lines if line.get_linestyle() == "--"]
    assert list(change.get_xdata()) == [2.5, 2.5]
    table = _here(capsys, "history", "--from-run", str(run), "--db", str(db))
    assert table.returncode == 0 and "change between v2 and v3" in table.stdout


# Guest time under -icount counts instructions, so the other engineers' load on this host cannot move
# it; init_on_free=1 costs the 512 MiB guest about 0.6 s of it (measured: 11.30 s -> 11.91 s).
@pytest.mark.boot
def test_sweep_boots_a_real_grid(cloud_kernel: Path, tmp_path: Path) -> None:
    done = _bootscope(
        "sweep", str(cloud_kernel), "--param", "append=,init_on_free=1", "--param", "icount=3",
        "-n", "2", "--warmup", "0", "--accel", "tcg", "--seed", "3", "--format", "json",
        "--db", str(tmp_path / "s.db"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert set(data) >= {"run", "metric", "baseline", "cells"}
    assert data["baseline"]["params"] == {"append": "", "icount": "3"}
    assert [c["params"]["append"] for c in data["cells"]] == ["", "init_on_free=1"]
    for cell in data["cells"]:
        assert set(cell) >= {"params", "n", "median", "shift", "p", "verdict"}
        assert set(cell["shift"]) >= {"estimate", "ci"}
        assert cell["n"] == 2
    assert 0.3 < data["cells"][1]["shift"]["estimate"] < 1.0
    # Only append varies, so "dominant" alone would be a tautology: check the main effects against the
    # cells instead. append's levels are the two cells (n = 2 each, the cells' medians), its spread is
    # their difference; icount has one level over all 4 boots and no spread.
    effects = {p["name"]: p for p in data["main_effects"]["parameters"]}
    medians = {c["params"]["append"]: c["median"] for c in data["cells"]}
    append_levels = {lv["level"]: (lv["n"], lv["median"]) for lv in effects["append"]["levels"]}
    assert append_levels == {"": (2, medians[""]), "init_on_free=1": (2, medians["init_on_free=1"])}
    assert effects["append"]["spread"] == pytest.approx(abs(medians["init_on_free=1"] - medians[""]))
    assert [(lv["n"], lv["level"]) for lv in effects["icount"]["levels"]] == [(4, "3")]
    assert effects["icount"]["spread"] == 0.0
    assert [p["name"] for p in data["main_effects"]["parameters"]] == ["append", "icount"]

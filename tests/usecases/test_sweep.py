"""Sweep: grid parsing and expansion, cells as plan variants, and the analysis of a grid's samples."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from bootscope import defaults
from bootscope.errors import InputError, StatsError
from bootscope.lab.plans.boot import Plan, VariantSpec
from bootscope.lab.plans.settings import GivenSettings
from bootscope.metrics import KERNEL_INIT_S, USERSPACE_S
from bootscope.report.sweep_out import sweep_json
from bootscope.usecases.sweep import (
    analyse_sweep,
    build_sweep,
    cell_variant,
    expand_grid,
    parse_param,
    read_grid_file,
    sweep_plan,
)


def test_parse_param_and_errors() -> None:
    param = parse_param("rcupdate.rcu_expedited=0,1")
    assert param.name == "rcupdate.rcu_expedited" and param.levels == ("0", "1")
    assert parse_param("append=,initcall_debug").levels == ("", "initcall_debug")
    for bad in ("smp", "smp=1,,2", "smp=1,1", "=1,2", "a b=1"):
        with pytest.raises(InputError):
            parse_param(bad)


def test_expand_grid_baseline_first_and_product() -> None:
    cells = expand_grid([parse_param("smp=1,2,4"), parse_param("rcupdate.rcu_expedited=0,1")])
    assert len(cells) == 6
    assert cells[0].as_dict() == {"smp": "1", "rcupdate.rcu_expedited": "0"}
    assert {tuple(c.as_dict().values()) for c in cells} == {
        (s, r) for s in ("1", "2", "4") for r in ("0", "1")
    }
    assert len({c.name for c in cells}) == 6
    with pytest.raises(InputError):
        expand_grid([parse_param("smp=1,2"), parse_param("smp=4")])
    with pytest.raises(InputError):
        expand_grid([])


def test_cells_become_plan_variants() -> None:
    base = VariantSpec(name="base", kernel="debian:cloud", append="quiet")
    cells = expand_grid(
        [
            parse_param("smp=1,2"),
            parse_param("mem=256,512"),
            parse_param("rcupdate.rcu_expedited=0,1"),
            parse_param("append=,initcall_debug"),
            parse_param("kernel=/k/a,debian:cloud"),
        ]
    )
    variant = cell_variant(cells[-1], base)
    assert variant.smp == 2 and variant.mem_mb == 512 and variant.kernel == "debian:cloud"
    assert variant.append == "quiet rcupdate.rcu_expedited=1 initcall_debug"
    first = cell_variant(cells[0], base)
    assert first.append == "quiet rcupdate.rcu_expedited=0" and first.kernel == "/k/a"
    plan = sweep_plan(cells, base, Plan(variants=(base,), seed=3, samples_per_variant=4))
    assert [v.name for v in plan.variants] == [c.name for c in cells]
    assert plan.seed == 3 and plan.samples_per_variant == 4
    with pytest.raises(InputError):
        cell_variant(expand_grid([parse_param("smp=x")])[0], base)


def test_read_grid_file(tmp_path: Path) -> None:
    plan = tmp_path / "sweep.toml"
    plan.write_text('kernel = "debian:cloud"\nsamples = 3\n[grid]\nsmp = [1, 2]\n"a.b" = [0, 1]\n')
    params, settings = read_grid_file(plan)
    assert [(p.name, p.levels) for p in params] == [("smp", ("1", "2")), ("a.b", ("0", "1"))]
    assert settings == {"kernel": "debian:cloud", "samples": 3}
    plan.write_text("kernel = 1\n")
    with pytest.raises(InputError):
        read_grid_file(plan)


def test_build_sweep_takes_the_run_settings_and_the_command_line_wins(tmp_path: Path) -> None:
    plan_file = tmp_path / "sweep.toml"
    plan_file.write_text(
        'kernel = "/k/a"\nmem = 1024\nseed = 4\njobs = 2\nquiet-host = true\nuntil = "precise"\n'
        "precision = 0.02\nmax_n = 40\ntimeout = 30\n"
        f'metric = "{USERSPACE_S}"\n[grid]\nsmp = [1, 2]\n'
    )
    setup = build_sweep(
        kernel=None, param_texts=["append=,quiet"], plan_file=plan_file, settings=GivenSettings(seed=9)
    )
    plan = setup.plan
    assert [p.name for p in setup.params] == ["smp", "append"] and len(setup.cells) == 4
    assert [v.name for v in plan.variants] == [c.name for c in setup.cells]
    assert {v.mem_mb for v in plan.variants} == {1024} and {v.kernel for v in plan.variants} == {"/k/a"}
    assert (plan.seed, plan.jobs, plan.quiet_host, plan.until) == (9, 2, True, "precise")
    assert (plan.precision, plan.max_n, plan.timeout_s) == (0.02, 40, 30.0)
    assert plan.samples_per_variant == defaults.SAMPLES_PER_CELL and setup.metric == USERSPACE_S
    told = build_sweep(
        kernel="/k/b", param_texts=["smp=1,2"], plan_file=None, settings=GivenSettings(samples_per_variant=3),
        metric=KERNEL_INIT_S,
    )  # fmt: skip
    assert told.plan.samples_per_variant == 3 and told.metric == KERNEL_INIT_S
    assert {v.kernel for v in told.plan.variants} == {"/k/b"}
    with pytest.raises(InputError, match="name a KERNEL"):
        build_sweep(kernel=None, param_texts=["smp=1,2"], plan_file=None, settings=GivenSettings())


def test_analyse_sweep_against_scipy_and_holm_by_hand() -> None:
    rng = np.random.default_rng(1)
    cells = expand_grid([parse_param("smp=1,2"), parse_param("x=0,1")])
    shifts = {cells[0].name: 0.0, cells[1].name: 0.0, cells[2].name: -0.5, cells[3].name: -0.6}
    samples = {name: list(3.0 + shift + rng.normal(0, 0.05, 8)) for name, shift in shifts.items()}
    result = analyse_sweep(cells, samples, "kernel_init_s", run=7)
    assert result.baseline.cell == cells[0]
    raw = [
        sps.mannwhitneyu(samples[c.name], samples[cells[0].name], method="exact").pvalue for c in cells[1:]
    ]
    order = np.argsort(raw)
    holm = np.empty(3)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (3 - rank) * raw[index]))
        holm[index] = running
    for item, expected in zip(result.cells, holm, strict=True):
        assert item.comparison is not None
        assert item.comparison.p_adjusted == pytest.approx(expected)
    verdicts = [item.comparison.verdict for item in result.cells if item.comparison]
    assert verdicts == ["no significant difference", "faster", "faster"]
    assert result.best == cells[3]
    assert result.effects.dominant == "smp"
    data = json.loads(json.dumps(sweep_json(result)))
    assert data["run"] == 7 and data["metric"] == "kernel_init_s"
    assert data["baseline"]["params"] == {"smp": "1", "x": "0"}
    assert [c["params"] for c in data["cells"]] == [c.as_dict() for c in cells]
    fourth = data["cells"][3]
    assert fourth["n"] == 8 and fourth["median"] == pytest.approx(np.median(samples[cells[3].name]))
    assert fourth["shift"]["estimate"] == pytest.approx(
        np.median(np.subtract.outer(samples[cells[3].name], samples[cells[0].name]))
    )
    assert fourth["p"] == pytest.approx(holm[2]) and fourth["verdict"] == "faster"


def test_analyse_sweep_needs_two_samples_per_cell() -> None:
    cells = expand_grid([parse_param("smp=1,2")])
    with pytest.raises(StatsError):
        analyse_sweep(cells, {cells[0].name: [1.0, 2.0], cells[1].name: [1.0]}, "kernel_init_s")

"""`tune --resume`: a tune cut short by Ctrl-C goes on from its stored runs through the one runner
(a fake target: synthetic consoles whose kernel_init_s the command line sets, ``fake.init_ms``),
boots only what is missing and reaches the verdicts of a tune never stopped."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from fake_targets import interrupted_at

from bootscope.errors import InputError
from bootscope.lab.plans.boot import Plan
from bootscope.lab.plans.settings import GivenSettings
from bootscope.lab.targets.fake import FakeTarget
from bootscope.store import Store
from bootscope.usecases.run import resume_experiment, start_experiment
from bootscope.usecases.tune.decide import SAVING
from bootscope.usecases.tune.request import TuneRequest
from bootscope.usecases.tune.search import resume_tune, tune

FASTER = "+fake.init_ms=500"
REQUEST = TuneRequest(
    kernel="k", append="fake.init_ms=1000", metric="kernel_init_s", boots_per_arm=4, alpha=0.05,
    tries=(FASTER,), min_saving=0.01, settings=GivenSettings(warmup_per_variant=0),
)  # fmt: skip


def _runner(store: Store, target: FakeTarget) -> object:
    def run(plan: Plan, meta: dict[str, str]) -> int:
        return start_experiment(plan, store, target=target, meta=meta).experiment.id

    return run


def _finish(store: Store, run: int, target: FakeTarget) -> None:
    resume_experiment(run, store, target=target)


def test_a_tune_stopped_by_ctrl_c_resumes_and_boots_only_what_is_missing(tmp_path: Path) -> None:
    with Store.open(tmp_path / "whole.db") as store:
        whole = tune(REQUEST, store, runner=_runner(store, FakeTarget()))  # type: ignore[arg-type]
    with Store.open(tmp_path / "cut.db") as store:
        with pytest.raises(KeyboardInterrupt):  # the probe and 3 of stage 1's 8 boots are stored
            tune(REQUEST, store, runner=_runner(store, interrupted_at(5)))  # type: ignore[arg-type]
        later = FakeTarget()
        resumed = resume_tune(
            "latest", store, runner=_runner(store, later),  # type: ignore[arg-type]
            finish=lambda run: _finish(store, run, later),
        )  # fmt: skip
    assert later.boots == 9 - 4  # the probe and 3 screen boots were kept, not booted again
    assert resumed.runs == whole.runs and resumed.boots_spent == whole.boots_spent == 9
    verdicts = {t.knob.name: t.verdict for t in resumed.tried}
    assert verdicts[FASTER].decision == SAVING and verdicts[FASTER].saving == pytest.approx(0.5, abs=0.02)
    assert resumed.recommended is not None and resumed.recommended.append == "fake.init_ms=500"


def test_resume_names_a_tune(tmp_path: Path) -> None:
    with Store.open(tmp_path / "t.db") as store:
        with pytest.raises(InputError, match="holds no tune"):
            resume_tune("latest", store)
        plan_run = tune(REQUEST, store, runner=_runner(store, FakeTarget())).runs[1]  # type: ignore[arg-type]
        with pytest.raises(InputError, match=f"run {plan_run} is not the first run of a tune"):
            resume_tune(str(plan_run), store)


def test_a_machine_knob_boots_its_qemu_options_and_resumes_by_them(tmp_path: Path) -> None:
    request = replace(REQUEST, tries=(FASTER, "machine:hpet=off"))
    with Store.open(tmp_path / "m.db") as store:
        with pytest.raises(KeyboardInterrupt):  # the probe and 3 of stage 1's 12 boots are stored
            tune(request, store, runner=_runner(store, interrupted_at(5)))  # type: ignore[arg-type]
        stage = store.experiment(2)
        options = {v.name: (v.config["append"], v.config["qemu_args"]) for v in stage.variants}
        later = FakeTarget()
        resumed = resume_tune(
            "latest", store, runner=_runner(store, later),  # type: ignore[arg-type]
            finish=lambda run: _finish(store, run, later),
        )  # fmt: skip
    assert sorted(options.values()) == sorted(
        [("fake.init_ms=1000", []), ("fake.init_ms=500", []), ("fake.init_ms=1000", ["-machine", "hpet=off"])]
    )
    assert later.boots == 13 - 4 and resumed.boots_spent == 13
    machine = next(t for t in resumed.tried if t.knob.qemu_args)
    assert machine.knob.name == "+machine:hpet=off" and machine.verdict.decision != "saving"


def test_a_first_look_cut_short_resumes_with_its_baseline_four_times_a_round(tmp_path: Path) -> None:
    # Three knobs: stage 1 boots each twice against 8 boots of the baseline (4 a round, 2 rounds).
    # Each saves far more than the fake's 5 ms jitter, so every run settles them alike (a knob of no
    # effect could be called a saving now and then, and the fake's jitter follows its boot count,
    # which a resumed run does not share); they set the same word, so one is kept: no final A/B.
    request = replace(REQUEST, tries=(FASTER, "fake.init_ms=700", "fake.init_ms=800"))
    with Store.open(tmp_path / "whole.db") as store:
        whole = tune(request, store, runner=_runner(store, FakeTarget()))  # type: ignore[arg-type]
    with Store.open(tmp_path / "cut.db") as store:
        with pytest.raises(KeyboardInterrupt):  # the probe and 5 of stage 1's 14 boots are stored
            tune(request, store, runner=_runner(store, interrupted_at(7)))  # type: ignore[arg-type]
        first = store.boots(2)
        later = FakeTarget()
        resumed = resume_tune(
            "latest", store, runner=_runner(store, later),  # type: ignore[arg-type]
            finish=lambda run: _finish(store, run, later),
        )  # fmt: skip
        stage = [b.variant for b in store.boots(2)]
    assert len(first) == 5 and len(stage) == 14
    assert {name: stage.count(name) for name in set(stage)} == {"baseline": 8, "k1": 2, "k2": 2, "k3": 2}
    assert later.boots == whole.boots_spent - 6 == 1 + 14 - 6  # the probe and 5 screen boots kept
    assert resumed.runs == whole.runs and resumed.boots_spent == whole.boots_spent
    # The fake's jitter follows its own boot count, so the values differ a little; the decisions not.
    assert [t.verdict.decision for t in resumed.tried] == [t.verdict.decision for t in whole.tried]
    assert [t.verdict.boots for t in resumed.tried] == [t.verdict.boots for t in whole.tried]


def test_a_tune_stored_before_where_is_read_with_its_machine() -> None:
    """A probe run stored before ``TuneRequest.where`` kept its machine as ``board`` or ``ssh``: it is
    read back as the same place, the SSH run's switches kept; a new document round-trips."""
    import json

    from bootscope.lab.where import LABGRID, SSH, Where
    from bootscope.usecases.tune.resume import request_document, request_from_document

    base = {"kernel": "", "append": "quiet", "metric": "kernel_init_s", "boots_per_arm": 4, "alpha": 0.05}
    board = request_from_document(json.dumps({**base, "board": "labgrid:/lab/env.yaml:main", "ssh": None}))
    assert board.where == Where(LABGRID, "labgrid:/lab/env.yaml:main") and not board.no_checks
    ssh = {"url": "ssh://root@h:2222", "identity": "/k", "known_hosts": None, "console": "cat /dev/ttyS1",
           "no_checks": True, "yes_this_machine": False}  # fmt: skip
    machine = request_from_document(json.dumps({**base, "board": None, "ssh": ssh}))
    assert machine.where == Where(SSH, "ssh://root@h:2222", "/k", None, "cat /dev/ttyS1")
    assert machine.no_checks and not machine.yes_this_machine
    again = request_from_document(request_document(machine))
    assert (again.where, again.no_checks, again.append) == (machine.where, True, "quiet")

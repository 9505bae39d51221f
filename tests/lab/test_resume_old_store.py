"""A store written before the move into lab/ and usecases/ still resumes.

tests/data/golden/interrupted-before-the-move.db was written by commit b5c9cf4's package (the layout
before the move) with tests/data/golden/make_interrupted_db.py: a boot run and a kexec run on the fake
target, each cut by Ctrl-C after 3 stored records. Resuming them now must rebuild each workload from
its stored plan document by its kind name and run only the missing slots, in the stored seeded order.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from bootscope.lab.plans.schedule import build_schedule
from bootscope.lab.targets.fake import FakeTarget
from bootscope.store import Store
from bootscope.usecases.run import resume_experiment

OLD_DB = Path(__file__).parent.parent / "data" / "golden" / "interrupted-before-the-move.db"


def test_a_boot_run_stored_before_the_move_resumes(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    shutil.copyfile(OLD_DB, db)
    with Store.open(db) as store:
        assert [b.index for b in store.boots(1)] == [1, 2, 3]
        result = resume_experiment(1, store, target=FakeTarget())
        boots = store.boots(1)
    # the make script's plan: 2 variants x (4 samples + 1 warm-up), seed 7
    order = build_schedule(["fast", "slow"], 4, 1, 7)
    assert result.experiment.status == "complete" and result.boots_run == 7
    assert [(b.index, b.variant, b.warmup) for b in boots] == [(s.index, s.variant, s.warmup) for s in order]


def test_a_kexec_run_stored_before_the_move_resumes(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    shutil.copyfile(OLD_DB, db)
    with Store.open(db) as store:
        result = resume_experiment(2, store, target=FakeTarget())
        boots = store.boots(2)
    # 2 variants x 2 chains x 3 kernels (the FROM kernel and 2 hops); the first chain was complete
    assert result.experiment.status == "complete" and result.boots_run == 9
    assert sorted(b.index for b in boots) == list(range(1, 13)) and not any(b.superseded for b in boots)

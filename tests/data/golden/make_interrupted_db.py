"""How interrupted-before-the-move.db was made: run with commit b5c9cf4's package (the layout before the
move into lab/ and usecases/), e.g. ``git worktree add /tmp/old b5c9cf4`` and
``PYTHONPATH=/tmp/old .venv/bin/python tests/data/golden/make_interrupted_db.py OUT.db``.

A boot run and a kexec run on the fake target, each cut by Ctrl-C after 3 stored records. The imports
name the old modules on purpose; this file is a record, not part of the suite.
"""

import contextlib
import sqlite3
import sys
from pathlib import Path

from bootscope.lab.execute import start_experiment, start_kexec  # type: ignore[import-not-found]
from bootscope.lab.fake import FakeTarget  # type: ignore[import-not-found]
from bootscope.lab.kexec_plan import KexecPlan, KexecVariant  # type: ignore[import-not-found]
from bootscope.lab.plan import Plan, VariantSpec  # type: ignore[import-not-found]
from bootscope.sources.kexec import KexecOptions  # type: ignore[import-not-found]

from bootscope.store import Store

out = Path(sys.argv[1])
plan = Plan(
    variants=(
        VariantSpec("fast", "k", append="fake.init_ms=1000"),
        VariantSpec("slow", "k", append="fake.init_ms=1500"),
    ),
    seed=7,
    samples_per_variant=4,
    warmup_per_variant=1,
)
kplan = KexecPlan(
    from_spec="from",
    variants=(
        KexecVariant("checks", "to", append="fake.init_ms=800"),
        KexecVariant("nochecks", "to", KexecOptions(no_checks=True), append="fake.init_ms=600"),
    ),
    hops=2,
    seed=5,
    chains=2,
    accel="tcg",
    jobs=1,
)


def cut_at(boot_number):
    """A fake target whose ``boot_number``-th boot is cut by Ctrl-C."""
    target = FakeTarget()

    def before(_config):
        if target.boots + 1 == boot_number:
            raise KeyboardInterrupt

    target.before_boot = before
    return target


with Store.open(out) as store:
    for start, run_plan, cut in ((start_experiment, plan, 4), (start_kexec, kplan, 2)):
        with contextlib.suppress(KeyboardInterrupt):
            start(run_plan, store, target=cut_at(cut))
    for summary in store.list_experiments():
        exp = summary.experiment
        print(exp.id, exp.status, [b.index for b in store.boots(exp.id)])
connection = sqlite3.connect(out)  # one self-contained file: the WAL folded in
connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
connection.execute("PRAGMA journal_mode=DELETE")
connection.execute("VACUUM")
connection.close()

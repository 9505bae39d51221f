"""A tune in the HTML report (`bootscope report --run ID`, and serve's run page): any run of a tune
shows the tune's section, its search replayed over the stored runs without booting, equal to what
the tune itself answered; a tune cut short says how to go on; a run of no tune has no section.
The runs are booted by the one runner on a fake target (``fake.init_ms`` sets kernel_init_s)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from fake_targets import interrupted_at
from test_tune_resume import FASTER, REQUEST, _runner

from bootscope.lab.plans.boot import Plan, VariantSpec
from bootscope.lab.targets.fake import FakeTarget
from bootscope.report.html import render_run_report
from bootscope.report.tune_out import tune_document
from bootscope.store import Store
from bootscope.usecases.dashboard import served_run
from bootscope.usecases.run import start_experiment
from bootscope.usecases.tune.search import tune
from bootscope.usecases.view_types import ReportView
from bootscope.usecases.views import report_view

HOSTILE = "+<b>bold</b>"  # a --try word is the user's text: the page must show it, not obey it


def _report(db: Path, run: int) -> ReportView:
    return report_view(None, str(run), str(db), boot=None, vs=None, fmt="auto", alpha=0.05)


def test_every_run_of_a_tune_reports_the_tune_read_again_without_booting(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    with Store.open(db) as store:
        whole = tune(replace(REQUEST, tries=(FASTER, HOSTILE)), store, runner=_runner(store, FakeTarget()))  # type: ignore[arg-type]
        booted = sum(len(store.boots(run)) for run in whole.runs)
    answered = tune_document(whole)
    for run in whole.runs:
        view = _report(db, run)
        assert view.tune is not None and view.tune.probe == whole.runs[0]
        assert view.tune.result is not None and tune_document(view.tune.result) == answered
    with Store.open(db) as store:
        assert sum(len(store.boots(run)) for run in whole.runs) == booted  # nothing was booted
    assert view.run is not None
    page = render_run_report(view.run, tune=view.tune)
    section = page[page.index("Tune: what makes kernel_init_s smaller") :]
    section = section[: section.index("</section>")]
    for tried in whole.tried:
        assert tried.verdict.saving is not None
        assert f"{tried.verdict.saving * 1000:+.1f} ms" in section, tried.knob.name
    assert "&lt;b&gt;bold&lt;/b&gt;" in section and "<b>bold</b>" not in page
    assert whole.recommended is not None and f"<code>{whole.recommended.append}</code>" in section
    # serve's run page draws the same section
    served = served_run(str(db), whole.runs[-1], 0.05)
    assert served.tune is not None and served.tune.result is not None
    assert tune_document(served.tune.result) == answered


def test_a_tune_cut_short_says_how_to_go_on_and_a_plain_run_has_no_tune(tmp_path: Path) -> None:
    db = tmp_path / "cut.db"
    with Store.open(db) as store:
        with pytest.raises(KeyboardInterrupt):  # the probe and 3 of stage 1's 8 boots are stored
            tune(REQUEST, store, runner=_runner(store, interrupted_at(5)))  # type: ignore[arg-type]
        once = Plan(
            variants=(VariantSpec("a", kernel="k"),), seed=1, samples_per_variant=2, warmup_per_variant=0
        )
        plain = start_experiment(once, store, target=FakeTarget()).experiment.id
    for run in (1, 2):
        view = _report(db, run)
        assert view.tune is not None and view.tune.result is None
        assert view.tune.why == "the tune is unfinished: go on with `bootscope tune --resume 1`"
    assert view.run is not None
    page = render_run_report(view.run, tune=view.tune)
    assert "go on with `bootscope tune --resume 1`" in page
    assert _report(db, plain).tune is None

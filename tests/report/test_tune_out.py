"""What a user reads of a tune: the terminal text fits its width, the mail 72 columns, the JSON holds
the documented keys, and every form names the kept knob, its saving and the command line to use.
The tune runs through the one runner on the fake target (fake.init_ms sets kernel_init_s; its jitter
seeded so that the knob without effect shows none: its first look of 2 boots against 8 would show a
saving for about one seed in 45, as a 95 % interval may)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bootscope.lab.plans.boot import Plan
from bootscope.lab.plans.settings import GivenSettings
from bootscope.lab.targets.fake import FakeTarget
from bootscope.report.tune_mail import tune_mail
from bootscope.report.tune_out import tune_json, tune_markdown, tune_text
from bootscope.store import Store
from bootscope.usecases.run import start_experiment
from bootscope.usecases.tune.request import TuneRequest
from bootscope.usecases.tune.search import TuneResult, tune


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> TuneResult:
    request = TuneRequest(
        kernel="k", append="fake.init_ms=1000 console=ttyS0", metric="kernel_init_s", boots_per_arm=4,
        alpha=0.05, tries=("fake.init_ms=600", "+fake.unused=1", "mitigations=off"), min_saving=0.01,
        settings=GivenSettings(warmup_per_variant=0, seed=3),
    )  # fmt: skip
    with Store.open(tmp_path_factory.mktemp("tuneout") / "t.db") as store:

        def run(plan: Plan, meta: dict[str, str]) -> int:
            return start_experiment(plan, store, target=FakeTarget(seed=1), meta=meta).experiment.id

        return tune(request, store, runner=run)


def test_every_form_names_the_saving_and_the_line_to_use(result: TuneResult) -> None:
    document = json.loads(tune_json(result))
    knobs = {c["knob"]: c for c in document["candidates"]}
    assert set(knobs) == {"+fake.init_ms=600", "+fake.unused=1", "+mitigations=off"}
    assert knobs["+fake.init_ms=600"]["decision"] == "saving"
    assert knobs["+fake.init_ms=600"]["saving"] == pytest.approx(0.4, abs=0.01)
    assert knobs["+mitigations=off"]["risk"] == "unsafe" and knobs["+fake.unused=1"]["risk"] == "feature"
    assert document["recommended"]["append"] == "console=ttyS0 fake.init_ms=600"
    assert document["recommended"]["masks"] == []
    assert [p["risk"] for p in document["pareto"]] == ["feature"]  # the one kept knob is a feature knob
    assert all("where" in c for c in document["candidates"])
    for width in (80, 60):
        text = tune_text(result, width)
        assert max(len(line) for line in text.splitlines()) <= width, text
        words = " ".join(text.split())
        assert "recommended (+fake.init_ms=600): 'console=ttyS0 fake.init_ms=600': +4" in words
    mail = tune_mail(result)
    assert max(len(line) for line in mail.splitlines()) <= 72, mail
    assert "Recommended command line:" in mail and "  console=ttyS0 fake.init_ms=600" in mail
    assert mail.index("+fake.init_ms=600") < mail.index("+fake.unused=1")  # largest saving first
    assert "rules out a saving of 0.01 s or more" in " ".join(mail.split())
    assert "| `+fake.init_ms=600` | feature |" in tune_markdown(result)


def test_the_tune_cli_writes_mail(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.cli_here import run_in_process

    code = run_in_process("tune", "--resume", "latest", "--db", str(tmp_path / "none.db"), "--format", "mail")
    assert code == 2 and "holds no tune" in capsys.readouterr().err

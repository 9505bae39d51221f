"""The one typed object of run settings a user gives (GivenSettings): checked once when built, merged
over a plan file's, and turned into a plan whose stored document keeps its format."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from bootscope.errors import InputError
from bootscope.lab.plans.boot import (
    VariantSpec,
    build_plan,
    plan_from_dict,
    plan_with_settings,
    validate_plan,
)
from bootscope.lab.plans.kexec import KexecVariant, build_kexec_plan
from bootscope.lab.plans.settings import GivenSettings, settings_from_mapping


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"samples_per_variant": 0}, "samples per variant must be at least 1 (got 0)"),
        ({"warmup_per_variant": -1}, "warm-up boots cannot be negative (got -1)"),
        ({"jobs": 0}, "-j must be at least 1 (got 0)"),
        ({"timeout_s": 0.0}, "--timeout must be positive (got 0.0)"),
        ({"accel": "xen"}, "--accel must be one of auto, kvm, tcg (got 'xen')"),
        ({"until": "soon"}, "--until must be one of precise (got 'soon')"),
        ({"samples_per_variant": 8, "max_n": 4}, "--max-n (4) must be at least -n (8)"),
        ({"precision": 1.5}, "--precision must be between 0 and 100 % (got 150.000000%)"),
    ],
)
def test_a_bad_setting_is_refused_when_the_object_is_built(given: dict[str, object], message: str) -> None:
    with pytest.raises(InputError) as info:
        GivenSettings(**given)  # type: ignore[arg-type]
    assert str(info.value) == message


def test_given_lists_only_what_was_given_and_over_replaces_it() -> None:
    assert GivenSettings().given() == {}
    cli = GivenSettings(samples_per_variant=3, quiet_host=None)
    assert cli.given() == {"samples_per_variant": 3}
    merged = cli.over(GivenSettings(samples_per_variant=9, seed=4))
    assert (merged.samples_per_variant, merged.seed) == (3, 4)
    with pytest.raises(InputError, match="--max-n"):
        GivenSettings(samples_per_variant=50).over(GivenSettings(samples_per_variant=5, max_n=10))


def test_settings_from_a_plan_file_are_typed() -> None:
    typed = settings_from_mapping({"samples_per_variant": 5, "timeout_s": 30, "quiet_host": True})
    assert typed == GivenSettings(samples_per_variant=5, timeout_s=30.0, quiet_host=True)
    with pytest.raises(InputError, match="not a _bool"):
        settings_from_mapping({"quiet_host": "yes"})
    with pytest.raises(InputError, match="unknown plan setting"):
        settings_from_mapping({"colour": 1})


def test_the_command_line_replaces_a_file_value_before_it_is_typed(tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.toml"
    plan_file.write_text('kernel = "/k"\nsamples = "many"\n')
    with pytest.raises(InputError, match="samples_per_variant"):
        build_plan(
            kernel=None, base_options=[], variant_texts=[], plan_file=plan_file, settings=GivenSettings()
        )
    plan = build_plan(
        kernel=None,
        base_options=[],
        variant_texts=[],
        plan_file=plan_file,
        settings=GivenSettings(samples_per_variant=2, seed=1),
    )
    assert plan.samples_per_variant == 2


def test_the_stored_plan_document_keeps_its_format() -> None:
    plan = plan_with_settings((VariantSpec(name="a", kernel="/k"),), GivenSettings(seed=7, jobs=2))
    document = plan.to_dict()
    assert list(document) == [
        "variants", "seed", "samples_per_variant", "warmup_per_variant", "timeout_s", "accel", "jobs",
        "quiet_host", "until", "precision", "max_n", "retries", "slots_a_round",
    ]  # fmt: skip
    assert (document["seed"], document["jobs"], document["accel"]) == (7, 2, "auto")
    assert plan_from_dict(document) == plan
    # A plan stored before --retries (or slots a round) existed reads back with none.
    older = {key: value for key, value in document.items() if key not in ("retries", "slots_a_round")}
    assert plan_from_dict(older).retries == 0 and plan_from_dict(older).slots_a_round == ()
    # A baseline booted four times a round (tune's first look) is stored as JSON and read back.
    more = plan_with_settings((VariantSpec(name="a", kernel="/k"),), GivenSettings(seed=7))
    more = replace(more, slots_a_round=(("a", 4),))
    assert plan_from_dict(json.loads(json.dumps(more.to_dict()))) == more
    for bad in ((("b", 2),), (("a", 0),), (("a", 2), ("a", 3))):
        with pytest.raises(InputError, match="slots a round"):
            validate_plan(replace(more, slots_a_round=bad))


def test_a_kexec_plan_takes_the_same_settings() -> None:
    variant = KexecVariant(name="default", to="/k")
    plan = build_kexec_plan("/k", [variant], hops=3, chains=2, settings=GivenSettings(seed=5, jobs=2))
    assert (plan.seed, plan.jobs, plan.accel, plan.timeout_s, plan.quiet_host) == (5, 2, "auto", None, False)
    assert plan.settings().samples_per_variant == 2

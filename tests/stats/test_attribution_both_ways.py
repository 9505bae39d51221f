"""A total that held because its parts cancel (issue 26 point 1): mm_init 0.157 s faster offsets
initcalls 0.144 s and smp_bringup 0.099 s slower. The largest move must be shown whichever way it
goes, in the table, the mail and the plot; one sentence says how the total came about; one
unexplained figure everywhere; shares of a total that did not move are not printed as such.
Expected shifts are computed here by the definition of Hodges-Lehmann (median of all b - a)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bootscope.report.diff_mail import to_mail
from bootscope.report.diff_out import diff_dict, to_text, waterfall_svg
from bootscope.report.diff_plot import bar_rows
from bootscope.stats.attribution import SHARE_OF_MOVES, ComponentSamples, DiffResult, attribute

N = 12
MOVES = {"setup": 0.0, "mm_init": -0.157, "initcalls": 0.144, "smp_bringup": 0.099, "post_smp": 0.0}
BASE = {"setup": 0.2, "mm_init": 0.7, "initcalls": 1.0, "smp_bringup": 0.1, "post_smp": 0.5}


def _hl(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    return float(np.median([y - x for x in a for y in b]))


@pytest.fixture(scope="module")
def held() -> DiffResult:
    rng = np.random.default_rng(26)
    a: dict[str, np.ndarray] = {}
    b: dict[str, np.ndarray] = {}
    for name, base in BASE.items():
        # post_smp wobbles by 0.3 s: the total's change (+0.086 s) drowns in it.
        spread = 0.3 if name == "post_smp" else 0.004
        a[name] = base + rng.normal(0, spread, N)
        b[name] = base + MOVES[name] + rng.normal(0, spread, N)
    items = [ComponentSamples("phase", name, tuple(a[name]), tuple(b[name]), N, N) for name in BASE]
    attribution = attribute(
        list(sum(a.values())), list(sum(b.values())), items, metric="kernel_init_s", additive_kind="phase"
    )
    return DiffResult("kernel_init_s", "smp1", "smp2", ("phase",), "test", attribution, ())


def test_the_largest_move_ranks_first_whichever_way(held: DiffResult) -> None:
    a = held.attribution
    assert a.total.verdict == "no significant difference"
    assert [c.name for c in a.components[:3]] == ["mm_init", "initcalls", "smp_bringup"]
    assert a.components[0].shift_s == pytest.approx(-0.157, abs=0.01)
    # Two rows shown: the faster one is among them, in every format.
    assert "mm_init" in to_text(held, top=2)
    assert "phase mm_init" in to_mail(held, top=2)
    assert "phase mm_init" in [row.label for row in bar_rows(held, top=2)]
    assert diff_dict(held, top=2)["components"][0]["name"] == "mm_init"


def test_one_sentence_says_how_the_total_held(held: DiffResult) -> None:
    offsets = held.attribution.offsets
    assert offsets is not None
    assert [name for name, _ in offsets.falling] == ["mm_init"]
    assert [name for name, _ in offsets.rising] == ["initcalls", "smp_bringup"]
    sentence = next(line for line in diff_dict(held)["summary"] if line.startswith("the total held"))
    assert "mm_init (-0.15" in sentence and "offset initcalls (+0.14" in sentence
    assert "smp_bringup (+0.0" in sentence
    text = " ".join(to_text(held, top=5).split())
    assert "the total held" in text and "offset initcalls" in text
    assert "the total held" in " ".join(to_mail(held).split())


def test_one_unexplained_figure_everywhere(held: DiffResult) -> None:
    a = held.attribution
    moved = [c for c in a.components if c.moved]
    assert {c.name for c in moved} == {"mm_init", "initcalls", "smp_bringup"}
    items = {c.name: c for c in a.components}
    # By hand: the total's HL shift less the moved phases' HL shifts.
    totals_a = [sum(v) for v in zip(*(_a(held, n) for n in BASE), strict=True)]
    totals_b = [sum(v) for v in zip(*(_b(held, n) for n in BASE), strict=True)]
    expected = _hl(tuple(totals_a), tuple(totals_b)) - sum(
        items[c].shift_s or 0.0 for c in items if items[c].moved
    )
    assert a.unexplained_s == pytest.approx(expected)
    shown = f"{expected:+.3g} s"
    assert shown in to_text(held, top=5) and shown in to_mail(held)
    doc = json.loads(json.dumps(diff_dict(held)))
    assert doc["unexplained"] == {"kind": "phase", "seconds": pytest.approx(expected)}
    assert all("unexplained" not in d for d in doc["decomposition"].values())
    assert bar_rows(held, top=5)[-1].shift_s == pytest.approx(expected)
    assert f"{expected:+.4f}" in waterfall_svg(held)


def test_shares_of_a_total_that_held_are_not_printed(held: DiffResult) -> None:
    a = held.attribution
    assert a.share_basis == SHARE_OF_MOVES
    assert all(c.share_of_total is None for c in a.components)
    absolute = sum(abs(c.shift_s or 0.0) for c in a.components)
    first = a.components[0]
    assert first.share_of_moves == pytest.approx((first.shift_s or 0.0) / absolute)
    text = to_text(held, top=5)
    assert "of the sum of absolute shifts" in " ".join(text.split())
    assert max(abs(c.share_of_moves or 0.0) for c in a.components) <= 1.0


def test_tables_fit_80_columns(held: DiffResult) -> None:
    assert max(len(line) for line in to_text(held, top=5, width=80).splitlines()) <= 80


def _a(result: DiffResult, name: str) -> tuple[float, ...]:
    return _samples(result, name)[0]


def _b(result: DiffResult, name: str) -> tuple[float, ...]:
    return _samples(result, name)[1]


def _samples(result: DiffResult, name: str) -> tuple[tuple[float, ...], tuple[float, ...]]:
    # The fixture's draws again (same seed, same order): the test's own record of the inputs.
    rng = np.random.default_rng(26)
    found = {}
    for phase, base in BASE.items():
        spread = 0.3 if phase == "post_smp" else 0.004
        found[phase] = (
            tuple(base + rng.normal(0, spread, N)),
            tuple(base + MOVES[phase] + rng.normal(0, spread, N)),
        )
    return found[name]

"""Per-component attribution: Benjamini-Hochberg against independent computations, the A/A promise
over many components (and that it needs the correction), a planted component found first."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as sps

from bootscope.errors import StatsError
from bootscope.stats.attribution import (
    APPEARED,
    COMPARED,
    DISAPPEARED,
    TOO_FEW,
    ComponentSamples,
    attribute,
    presence_p,
)
from bootscope.stats.multiple import benjamini_hochberg


def _bh_by_definition(p: list[float]) -> list[float]:
    """q_i = min over j with p_j >= p_i of m p_j / rank_j: the definition, in O(m^2)."""
    m = len(p)
    ranks = {i: sorted(range(m), key=lambda k: (p[k], k)).index(i) + 1 for i in range(m)}
    return [min(1.0, min(m * p[j] / ranks[j] for j in range(m) if ranks[j] >= ranks[i])) for i in range(m)]


@given(st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=40))
def test_bh_matches_scipy_and_the_definition(p: list[float]) -> None:
    q = benjamini_hochberg(p)
    assert q == pytest.approx(list(sps.false_discovery_control(p, method="bh")), abs=1e-12)
    assert q == pytest.approx(_bh_by_definition(p), abs=1e-12)


def test_bh_keeps_none_out_of_m() -> None:
    assert benjamini_hochberg([0.01, None, 0.04]) == [pytest.approx(0.02), None, pytest.approx(0.04)]
    assert benjamini_hochberg([]) == []


def _family(rng: np.random.Generator, m: int, n: int, planted: dict[int, float]) -> list[ComponentSamples]:
    """m components of lognormal durations (s) around 1..100 ms, n boots a side; b's copy of the
    components in ``planted`` is shifted by the given seconds."""
    scale = rng.uniform(0.001, 0.1, m)
    items = []
    for i in range(m):
        a = scale[i] * rng.lognormal(0.0, 0.05, n)
        b = scale[i] * rng.lognormal(0.0, 0.05, n) + planted.get(i, 0.0)
        items.append(ComponentSamples("initcall", f"call_{i}", tuple(a), tuple(b), n, n))
    return items


def _totals(items: list[ComponentSamples]) -> tuple[list[float], list[float]]:
    a = np.sum([item.a for item in items], axis=0)
    b = np.sum([item.b for item in items], axis=0)
    return list(a), list(b)


def test_a_a_over_many_components_flags_none_and_would_without_the_correction() -> None:
    rng = np.random.default_rng(15)
    families, any_moved, any_raw = 20, 0, 0
    for _ in range(families):
        items = _family(rng, m=200, n=12, planted={})
        result = attribute(*_totals(items), items, metric="kernel_init_s", fdr=0.05)
        any_moved += any(c.moved for c in result.components)
        # What calling each p < 0.05 (no correction) would have flagged: about 10 of 200 per family.
        any_raw += any(c.p is not None and c.p < 0.05 for c in result.components)
    # Every null is true, so the FDR is the chance of any call at all: at most 5 %, here 0 or 1 of 20.
    assert any_moved <= 2
    assert any_raw == families


def test_a_planted_component_is_found_and_ranked_first() -> None:
    rng = np.random.default_rng(7)
    items = _family(rng, m=150, n=16, planted={42: 0.03})
    result = attribute(*_totals(items), items, metric="kernel_init_s", name_a="base", name_b="slow")
    first = result.components[0]
    assert (first.kind, first.name, first.status) == ("initcall", "call_42", COMPARED)
    assert first.moved and first.q is not None and first.q < 0.05
    assert first.shift_ci_s is not None and first.shift_ci_s[0] < 0.03 < first.shift_ci_s[1]
    assert first.share_of_total == pytest.approx(first.shift_s / result.total.shift_estimate)
    assert [c.name for c in result.components if c.moved] == ["call_42"]
    assert result.total.verdict == "slower"
    (initcalls,) = result.by_kind
    assert initcalls.explained_s == pytest.approx(first.shift_s)
    assert result.explained_kind == "initcall"
    assert result.unexplained_s == pytest.approx(result.total.shift_estimate - first.shift_s)


def test_components_on_one_side_and_too_few() -> None:
    n = 6
    a_total = [1.0 + 0.01 * i for i in range(n)]
    b_total = [1.2 + 0.01 * i for i in range(n)]
    items = [
        ComponentSamples("initcall", "gone", tuple(0.2 + 0.001 * i for i in range(n)), (), n, n),
        ComponentSamples("gap", "new line", (), (0.05, 0.06), n, n),
        ComponentSamples("cpu", "cpu3", (0.1,), (0.1, 0.2), n, n),
    ]
    result = attribute(a_total, b_total, items, metric="kernel_init_s")
    by_name = {c.name: c for c in result.components}
    assert by_name["gone"].status == DISAPPEARED and by_name["gone"].shift_s == pytest.approx(-0.2025)
    assert by_name["new line"].status == APPEARED and by_name["new line"].shift_s == pytest.approx(0.055)
    assert [c.name for c in result.too_few] == ["cpu3"] and result.too_few[0].status == TOO_FEW
    # 6 of 6 boots against 0 of 6: Fisher's exact two-sided p = 2 / C(12, 6).
    assert by_name["gone"].p == pytest.approx(2 / 924)
    assert presence_p(items[1]) == pytest.approx(sps.fisher_exact([[0, 6], [2, 4]]).pvalue)
    # Ranked by the size of the move, either way: 0.2025 s gone before 0.055 s new.
    assert [c.name for c in result.components] == ["gone", "new line"]


def test_phases_decompose_the_total() -> None:
    rng = np.random.default_rng(3)
    n = 20
    phases = {"setup": 0.2, "mm_init": 0.7, "initcalls": 2.6}
    a = {name: base * rng.lognormal(0, 0.02, n) for name, base in phases.items()}
    b = {
        name: base * rng.lognormal(0, 0.02, n) + (0.3 if name == "mm_init" else 0.0)
        for name, base in phases.items()
    }
    items = [ComponentSamples("phase", name, tuple(a[name]), tuple(b[name]), n, n) for name in phases]
    result = attribute(list(sum(a.values())), list(sum(b.values())), items, metric="kernel_init_s")
    assert result.components[0].name == "mm_init"
    (decomposition,) = result.by_kind
    # Every boot's phases add up to its total; the Hodges-Lehmann shifts add up roughly.
    assert decomposition.sum_all_s == pytest.approx(result.total.shift_estimate, abs=0.05)


def test_too_few_totals_raise() -> None:
    with pytest.raises(StatsError):
        attribute([1.0], [1.0, 2.0], [], metric="kernel_init_s")


@pytest.mark.parametrize("n", [5, 30])
def test_vectorised_components_equal_the_plain_functions(n: int) -> None:
    """The batched path gives each component what hodges_lehmann and mann_whitney give it alone,
    with continuous values and with microsecond ties (initcall_debug prints whole microseconds)."""
    from bootscope.stats.rank import hodges_lehmann, mann_whitney

    rng = np.random.default_rng(n)
    items = []
    for i in range(12):
        a, b = rng.lognormal(-4, 0.1, n), rng.lognormal(-4, 0.1, n) * (1.05 if i % 3 == 0 else 1.0)
        if i % 2:
            a, b = np.round(a, 3), np.round(b, 3)  # heavy ties
        items.append(ComponentSamples("initcall", f"c{i}", tuple(a), tuple(b), n, n))
    items.append(ComponentSamples("phase", "flat", (0.5,) * n, (0.5,) * n, n, n))
    result = attribute(
        [1.0 + 0.01 * i for i in range(n)], [1.2 + 0.01 * i for i in range(n)], items, metric="kernel_init_s"
    )
    for shift in result.components:
        item = next(i for i in items if i.name == shift.name)
        plain = hodges_lehmann(item.a, item.b, 0.05)
        assert shift.shift_s == pytest.approx(plain.estimate)
        assert (shift.shift_ci_s is None) == (plain.ci is None)
        if plain.ci is not None:
            assert shift.shift_ci_s == pytest.approx(plain.ci)
        expected_p = mann_whitney(item.a, item.b).p
        assert shift.p == (None if expected_p is None else pytest.approx(expected_p))

"""The 72-column mail text and the other compare outputs, from real comparisons."""

from __future__ import annotations

import csv
import io
import json

from bootscope.report.compare_out import to_csv, to_json, to_markdown, to_text
from bootscope.report.mail import to_mail
from bootscope.stats.compare import Options, compare, compare_many

SEED_A = [8.7, 8.4, 8.6, 8.2, 9.0, 8.7, 8.8, 9.3, 8.8, 8.3]
SEED_B = [8.5, 8.2, 7.6, 8.2, 8.7, 8.2, 7.8, 8.2, 9.3, 8.4]
DEFINITION = "time from kernel start to the shell prompt, read off a timer printing every 100 ms"
QUICK = Options(bootstrap_resamples=200, power_replicates=200)


def test_mail_fits_72_columns_and_says_everything() -> None:
    hostile = "patched-" + "x" * 120 + "\x1b[31m"
    comparison = compare(SEED_A, SEED_B, "userspace_s", "s", QUICK, "v6.2", hostile)
    text = to_mail([comparison], DEFINITION)
    lines = text.splitlines()
    assert all(len(line) <= 72 for line in lines), max(lines, key=len)
    assert "\x1b" not in text
    assert "8.2 8.3 8.4 8.6 8.7 8.7 8.8 8.8 9 9.3" in text  # a's samples, sorted
    assert "7.6 7.8 8.2 8.2 8.2 8.2 8.4 8.5 8.7 9.3" in text
    assert "median 8.7 s" in text and "median 8.2 s" in text
    assert "Shift (b - a): -0.4 s (-4.6%), 95% CI [-0.8, 0] s" in text
    assert "Mann-Whitney U" in text
    assert "faster" in text and "0.0332" in text  # exact given the ties
    assert "boots per side" in text
    joined = " ".join(line.strip() for line in lines)
    assert DEFINITION in joined


def test_json_has_the_issue_keys_and_b_minus_a() -> None:
    comparison = compare(SEED_A, SEED_B, "userspace_s", "s", QUICK)
    doc = json.loads(to_json([comparison], "def"))
    assert {"metric", "unit", "alpha", "a", "b", "shift", "tests", "verdict", "power"} <= doc.keys()
    assert {"n", "median", "median_ci"} <= doc["a"].keys()
    assert {"estimate", "ci", "relative"} <= doc["shift"].keys()
    assert {"p", "alternative", "method"} <= doc["tests"]["mann_whitney"].keys()
    assert {"detect", "n_per_side"} <= doc["power"].keys()
    assert doc["shift"]["estimate"] < 0  # b is faster: negative
    assert doc["a"]["median_ci"] == [8.3, 9.0]


def test_several_comparisons_in_markdown_csv_and_table() -> None:
    variants = {"b|<script>": SEED_B, "same": SEED_A[::-1]}
    comparisons = compare_many(SEED_A, variants, "userspace_s", "s", QUICK, "base")
    markdown = to_markdown(comparisons)
    assert "<script>" not in markdown and "b\\|&lt;script&gt;" in markdown
    assert "Holm correction over 2 comparisons" in markdown
    rows = list(csv.DictReader(io.StringIO(to_csv(comparisons))))
    assert [row["b"] for row in rows] == ["b|<script>", "same"]
    assert float(rows[1]["shift"]) == 0.0
    text = to_text(comparisons, "def")
    assert "~" in text and "Holm" in text
    assert isinstance(json.loads(to_json(comparisons)), list)

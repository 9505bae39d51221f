"""Tests that kill mutants mutmut found surviving in bootscope/metrics.py
(make mutation): each asserts a value computed by hand or by scipy, not by the code under test."""

from __future__ import annotations

from bootscope.metrics import unit_of


def test_unit_of_a_registered_metric_is_its_own_unit() -> None:
    # The registry declares latency_max_us in microseconds, not the seconds default.
    assert unit_of("latency_max_us") == "us"
    assert unit_of("kernel_init_s") == "s"


def test_unit_of_an_unregistered_name_is_seconds() -> None:
    assert unit_of("a_users_column") == "s"

"""The real-time clock's start date of an instruction-counted boot (lab/qemu/guest_clock.py)."""

from __future__ import annotations

from datetime import datetime

from bootscope.lab.qemu.guest_clock import DEFAULT_RTC_BASE, round_rtc_base


def test_a_round_has_one_date_for_every_variant_and_rounds_differ() -> None:
    # The date is a function of (seed, round) alone: asked twice (two variants of one round), the same.
    assert round_rtc_base(15, 0) == round_rtc_base(15, 0)
    dates = {round_rtc_base(15, r) for r in range(24)}
    assert len(dates) == 24
    assert round_rtc_base(16, 0) != round_rtc_base(15, 0)


def test_dates_are_what_qemu_takes_and_lie_in_the_year_after_the_epoch() -> None:
    for r in range(50):
        when = datetime.strptime(round_rtc_base(7, r), "%Y-%m-%dT%H:%M:%S")
        assert datetime(2030, 1, 1) <= when < datetime(2031, 1, 1)
    assert DEFAULT_RTC_BASE == "2030-01-01T00:00:00"

"""The date an instruction-counted guest's real-time clock starts at.

Under ``-icount`` QEMU derives the guest's clocks from the instructions it ran, except the real-time
clock, which it reads from the host at start unless told a date. The kernel mixes that date into its
entropy pool (hash seeds, the kernel's random placement), so two boots of one configuration differed by
about 0.1 ms of guest time on 11.3 s (the pinned Debian 6.1 cloud kernel, measured here): enough for 4
boots a side to order themselves by chance and an A/A to read "significant". With the clock started at
a given date and advanced on the virtual clock (``-rtc base=DATE,clock=vm``), a boot is a function of
its configuration and that date alone: three boots at one date gave the same 11.298726 s to the
microsecond.

An experiment gives every round its own date, drawn from the plan's seed, and the same date to every
variant of the round. The boot-to-boot spread that the guest's randomness causes stays in the sample,
and a variant that changes nothing (an A/A) boots exactly the same worlds as its baseline.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

# After any date a test image or Debian's systemd was made on (an earlier real-time clock makes
# systemd move the clock and e2fsck question the last mount time), and far from the end of 32-bit time.
EPOCH = datetime(2030, 1, 1)
SPAN_S = 365 * 24 * 3600  # the round dates are spread over one year after the epoch


def rtc_date(when: datetime) -> str:
    """Return ``when`` as QEMU's ``-rtc base=`` value (``YYYY-MM-DDTHH:MM:SS``)."""
    return when.strftime("%Y-%m-%dT%H:%M:%S")


DEFAULT_RTC_BASE = rtc_date(EPOCH)


def round_rtc_base(seed: int, round_number: int) -> str:
    """Return the real-time clock's start date for round ``round_number`` of an experiment seeded with
    ``seed``: the same for every variant of that round, different from round to round."""
    offset_s = random.Random(f"rtc:{seed}:{round_number}").randrange(SPAN_S)
    return rtc_date(EPOCH + timedelta(seconds=offset_s))

"""A pytest plugin that fails the run when a test needing a real part skipped.

A suite whose integration tests skip on a machine that lacks QEMU, busybox, kexec, Chromium or
PostgreSQL passes without having tested anything real. The guard counts a skip as a real-part skip when
the test is marked ``boot``, ``browser`` or ``postgres``, or when the skip reason names a part (the reason
text is checked too, so that a new ``skipif`` on a missing tool cannot slip past a forgotten marker).
Such skips turn the exit status into a failure unless ``BOOTSCOPE_ALLOW_SKIPS=1`` is set; CI never sets it.
``BOOTSCOPE_NO_POSTGRES=1`` still leaves the PostgreSQL tests out, and is a failure without the allow
variable too.
"""

from __future__ import annotations

import os
import re

import pytest

ALLOW_VARIABLE = "BOOTSCOPE_ALLOW_SKIPS"
REAL_PART_MARKERS = frozenset({"boot", "browser", "postgres"})
# The parts scripts/setup.sh installs; a skip reason that names one is a real-part skip.
REAL_PART_REASON = re.compile(
    r"qemu|busybox|kexec|chromium|playwright|postgres|mke2fs|e2fsprogs|cpio|\bapt\b|/dev/kvm|virtio|pgrep",
    re.IGNORECASE,
)


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def is_real_part_skip(markers: set[str], reason: str) -> bool:
    """True when a skipped test with these marker names and this skip reason needed a real part."""
    return bool(markers & REAL_PART_MARKERS) or REAL_PART_REASON.search(reason) is not None


def skips_allowed() -> bool:
    """True when the environment explicitly allows real-part skips (``BOOTSCOPE_ALLOW_SKIPS=1``)."""
    return os.environ.get(ALLOW_VARIABLE) == "1"


class SkipGuard:
    """Collects real-part skips during the run and fails the session at its end."""

    def __init__(self) -> None:
        self.skipped: list[str] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not report.skipped or hasattr(report, "wasxfail"):
            return
        reason = _skip_reason(report)
        if is_real_part_skip({str(name) for name in report.keywords}, reason):
            self.skipped.append(f"{report.nodeid}: {reason}")

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.skipped and not skips_allowed() and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.skipped:
            return
        if skips_allowed():
            terminalreporter.write_line(
                f"{len(self.skipped)} test(s) needing a real part skipped; allowed by {ALLOW_VARIABLE}=1",
                yellow=True,
            )
            return
        terminalreporter.section("tests needing a real part skipped", red=True, bold=True)
        for line in self.skipped:
            terminalreporter.write_line(line)
        terminalreporter.write_line(
            f"FAILED: {len(self.skipped)} test(s) needing a real part skipped. Install the parts with "
            f"scripts/setup.sh, or set {ALLOW_VARIABLE}=1 to accept the skips (never in CI).",
            red=True,
            bold=True,
        )


def register(config: pytest.Config) -> None:
    """Register the guard on this pytest run (called from the tests' conftest)."""
    config.pluginmanager.register(SkipGuard(), "bootscope-skip-guard")

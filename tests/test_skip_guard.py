"""The skip guard itself, on tiny suites run by pytester: a real-part skip fails the run."""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).parent

SUITE = """
import pytest

@pytest.mark.boot
def test_boots():
    pytest.skip("QEMU not installed")

@pytest.mark.skipif(True, reason="qemu-img not installed")
def test_disk():
    pass

def test_plain():
    pytest.skip("only on Tuesdays")
"""


def _run(pytester: pytest.Pytester, body: str) -> pytest.RunResult:
    pytester.makeconftest(
        f"import sys\nsys.path.insert(0, {str(TESTS)!r})\n"
        "from skip_guard import register\n"
        "def pytest_configure(config):\n"
        "    config.addinivalue_line('markers', 'boot: b')\n"
        "    register(config)\n"
    )
    pytester.makepyfile(test_tiny=body)
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly")


def test_real_part_skips_fail_the_run_and_are_listed(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("BOOTSCOPE_ALLOW_SKIPS", raising=False)
    result = _run(pytester, SUITE)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*test_tiny.py::test_boots: QEMU not installed",
            "*test_tiny.py::test_disk: qemu-img not installed",
            "FAILED: 2 test(s) needing a real part skipped*",
        ]
    )
    assert "test_plain" not in result.stdout.str().split("needing a real part skipped")[1]


def test_allow_variable_accepts_the_skips(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOOTSCOPE_ALLOW_SKIPS", "1")
    result = _run(pytester, SUITE)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        ["*2 test(s) needing a real part skipped; allowed by BOOTSCOPE_ALLOW_SKIPS=1"]
    )


def test_other_skips_and_passes_leave_the_run_green(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("BOOTSCOPE_ALLOW_SKIPS", raising=False)
    result = _run(pytester, "import pytest\ndef test_ok():\n    pytest.skip('only on Tuesdays')\n")
    assert result.ret == pytest.ExitCode.OK

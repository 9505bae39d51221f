"""Golden outputs: the same commands over the same inputs give byte-identical stdout and exit status.

Recorded before the move into lab/ and usecases/ (see golden_cases.py); a deliberate change of output
re-records them with BOOTSCOPE_GOLDEN_UPDATE=1 and says why in its commit.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from golden_cases import DEMO_DB, EXPECTED, STORE_CASES, Case, analyze_cases

from bootscope.cli import main

ROOT = Path(__file__).parent.parent
UPDATE = os.environ.get("BOOTSCOPE_GOLDEN_UPDATE") == "1"
# What differs from one run to the next and is not the command's answer: wall-clock times.
_VOLATILE = ((re.compile(rb'"(elapsed_s|created)": ("[^"]*"|[-0-9.e]+)'), rb'"\1": "(varies)"'),)


# A float printed with all its digits (a p-value, a bootstrap bound in JSON) may change in its last
# one or two when numpy or scipy changes how it sums (numpy 2.4.6 against the recorded files: p
# 0.02074368393689572 became 0.020743683936895664): compared to 12 significant digits, as the answer.
_LONG_FLOAT = re.compile(rb"-?\d+\.\d{13,}(?:e[-+]?\d+)?")


def _steady(output: bytes) -> bytes:
    for pattern, replacement in _VOLATILE:
        output = pattern.sub(replacement, output)
    return output


def _answer(output: bytes) -> bytes:
    """``output`` with every long float cut to 12 significant digits (see _LONG_FLOAT)."""
    return _LONG_FLOAT.sub(lambda found: b"%.12g" % float(found.group()), output)


def _run(argv: tuple[str, ...]) -> bytes:
    """Run ``bootscope ARGV`` in this process; return 'exit N' and its stdout as bytes."""
    saved_argv, saved_out = sys.argv, sys.stdout
    buffer = io.BytesIO()
    wrapper = io.TextIOWrapper(buffer, encoding="utf-8", write_through=True)
    sys.stdout = wrapper
    sys.argv = ["bootscope", *argv]
    code = 0
    try:
        main()
    except SystemExit as stop:
        code = int(stop.code or 0)
    finally:
        wrapper.flush()
        wrapper.detach()  # keep the buffer open when the wrapper goes
        sys.stdout, sys.argv = saved_out, saved_argv
    return f"exit {code}\n".encode() + buffer.getvalue()


def _check(case: Case, got: bytes) -> None:
    path = EXPECTED / f"{case.name}.out"
    got = _steady(got)
    if UPDATE:
        path.write_bytes(got)
        return
    assert path.exists(), f"no golden file for {case.name}: record with BOOTSCOPE_GOLDEN_UPDATE=1"
    want = path.read_bytes()
    if _answer(got) != _answer(want):
        got_lines, want_lines = (
            got.decode(errors="replace").splitlines(),
            want.decode(errors="replace").splitlines(),
        )
        first = next(
            (i for i, (g, w) in enumerate(zip(got_lines, want_lines, strict=False)) if g != w),
            min(len(got_lines), len(want_lines)),
        )
        pytest.fail(
            f"{case.name}: output differs from {path.name} at line {first + 1}:\n"
            f"  want: {want_lines[first] if first < len(want_lines) else '<end>'}\n"
            f"  got:  {got_lines[first] if first < len(got_lines) else '<end>'}"
        )


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("COLUMNS", "80")


@pytest.mark.parametrize("case", analyze_cases(), ids=lambda c: c.name)
def test_analyze_output_is_unchanged(case: Case) -> None:
    _check(case, _run(case.argv))


@pytest.fixture(scope="module")
def store_outputs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, bytes]]:
    """Every store case run once, in order, on a copy of the demo store and a fresh fleet store."""
    tmp = tmp_path_factory.mktemp("golden")
    db = tmp / "demo.db"
    shutil.copyfile(DEMO_DB, db)
    values = {"db": str(db), "fleet": str(tmp / "fleet.db"), "tmp": str(tmp)}
    saved = Path.cwd()
    os.chdir(ROOT)
    try:
        outputs = {c.name: _run(tuple(a.format(**values) for a in c.argv)) for c in STORE_CASES}
        outputs["baseline-file"] = (tmp / "ref.json").read_bytes()
        outputs["check-reports-markdown"] = (tmp / "check.md").read_bytes()
        outputs["check-reports-junit"] = (tmp / "check.xml").read_bytes()
    finally:
        os.chdir(saved)
    yield {name: out.replace(str(tmp).encode(), b"{tmp}") for name, out in outputs.items()}


_FILES = [Case(name, ()) for name in ("baseline-file", "check-reports-markdown", "check-reports-junit")]


@pytest.mark.parametrize("case", [*STORE_CASES, *_FILES], ids=lambda c: c.name)
def test_store_command_output_is_unchanged(case: Case, store_outputs: dict[str, bytes]) -> None:
    _check(case, store_outputs[case.name])

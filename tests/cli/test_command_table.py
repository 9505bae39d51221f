"""The verb table of `bootscope --help` (bootscope.cli.COMMANDS): every verb runs when invoked, and
listing them imports none of the analysis stack, which is what keeps start-up short."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from cli_here import run_in_process

from bootscope.cli import COMMANDS


@pytest.mark.parametrize("verb", sorted(COMMANDS))
def test_every_verb_is_registered_for_real(verb: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_in_process(verb, "--help") == 0
    out = capsys.readouterr().out
    assert f"bootscope {verb}" in out
    # The real command's help, not the stand-in's: options or subcommands are listed.
    assert "Commands" in out if COMMANDS[verb].group else "--" in out.replace("--help", "")


def _imported(argv: list[str], roots: tuple[str, ...]) -> tuple[str, list[str]]:
    """Run ``bootscope ARGV`` in a fresh interpreter; return its output and which modules under
    ``roots`` (a module or a package) it had imported by its end. Fails on a non-zero exit."""
    probe = (
        "import sys, json\n"
        f"sys.argv = ['bootscope', *{argv!r}]\n"
        "from bootscope.cli import main\n"
        "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        f"found = sorted(m for m in sys.modules if m in {roots!r} or m.split('.')[0] in {roots!r})\n"
        "print('MODULES=' + json.dumps(found))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    output, _, modules = done.stdout.rpartition("MODULES=")
    return output, json.loads(modules)


def test_help_lists_every_verb_without_importing_the_analysis_stack() -> None:
    listed, modules = _imported(["--help"], ("numpy", "scipy", "bootscope.analyze", "bootscope.store"))
    assert modules == []
    for verb, command in COMMANDS.items():
        assert verb in listed and command.short_help.split(":")[0][:30] in " ".join(listed.split())


def test_an_unknown_verb_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_in_process("nosuch") == 2
    assert "No such command" in capsys.readouterr().err


def test_analyze_json_does_not_import_rich(data_dir: object) -> None:
    # `analyze --json` over many logs is start-up bound (bench/RESULTS.md, 50 logs against
    # bootgraph.py): rich, only needed to print tables, stays out of it
    from pathlib import Path

    assert isinstance(data_dir, Path)
    document, modules = _imported(
        ["analyze", "--json", str(data_dir / "debian-6.1-cloud-smp2.log")], ("rich",)
    )
    assert modules == []
    assert json.loads(document)["boots"][0]["identity"]["release"]

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


def test_help_lists_every_verb_without_importing_the_analysis_stack() -> None:
    probe = (
        "import sys\n"
        "sys.argv = ['bootscope', '--help']\n"
        "from bootscope.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "names = ('numpy', 'scipy', 'bootscope.analyze', 'bootscope.store')\n"
        "heavy = sorted(m for m in names if m in sys.modules)\n"
        "print('MODULES=' + __import__('json').dumps(heavy))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    listed, _, modules = done.stdout.rpartition("MODULES=")
    assert json.loads(modules) == []
    for verb, command in COMMANDS.items():
        assert verb in listed and command.short_help.split(":")[0][:30] in " ".join(listed.split())


def test_an_unknown_verb_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_in_process("nosuch") == 2
    assert "No such command" in capsys.readouterr().err

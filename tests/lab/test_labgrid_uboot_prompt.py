"""A cold boot's command line given at U-Boot's prompt (fast, beside the real U-Boot board in
test_labgrid_uboot.py): the settings come from the labgrid target's UBootDriver, the dialogue
answers the console whatever way its bytes are cut, ``bootargs`` is set in commands U-Boot's line
buffer holds, and a boot that did not boot the line given is a boot loader error, never a boot of
the wrong line counted as the arm's."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from bootscope.errors import BootError, InputError
from bootscope.lab.targets.console_read import ConsoleDialogue, ConsoleRead
from bootscope.lab.targets.labgrid.shell import BoardShell
from bootscope.lab.targets.labgrid.uboot import (
    COMMAND_CHARS,
    UBootPrompt,
    booted_command_line,
    given_line_differs,
    judge_loader,
    printed_command_lines,
    setenv_commands,
    uboot_dialogue,
    uboot_prompt_of,
)
from bootscope.model import LogLine, Outcome

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "labgrid-uboot-qemu.yaml"

# What Debian's U-Boot 2023.01 for QEMU prints up to its countdown, and after each command (as in
# the boots test_labgrid_uboot.py stores): the countdown rewrites itself with backspaces.
BANNER = (
    b"\r\nU-Boot 2023.01+dfsg-2+deb12u3 (Jun 22 2026 - 08:38:07 +0000)\r\n\r\nCPU:   QEMU Virtual CPU"
    b" version 2.5+\r\nDRAM:  512 MiB\r\nNet:   No ethernet found.\r\nHit any key to stop autoboot:  2 "
)
PROMPT = b"\x08\x08\x08 0 \r\n=> "


class UBootDriver:
    """Stands in for labgrid's UBootDriver: only its settings are read (it is never activated)."""

    def __init__(self, **settings: object) -> None:
        self.prompt, self.autoboot, self.interrupt = "=> ", "stop autoboot", "\n"
        self.password, self.init_commands, self.boot_command = "", (), "run bootcmd"
        self.__dict__.update(settings)


def _answers(dialogue: ConsoleDialogue, data: bytes, rng: random.Random) -> list[str]:
    """Feed ``data`` to ``dialogue`` cut at random places; return every answer in order."""
    answers: list[str] = []
    at = 0
    while at < len(data):
        step = rng.randint(1, 7)
        answers += dialogue.feed(data[at : at + step])
        at += step
    return answers


def test_the_settings_are_the_uboot_drivers_and_a_password_is_refused() -> None:
    drivers = [object(), UBootDriver(prompt="board> ", init_commands=["pci enum"], boot_command="boot")]
    prompt = uboot_prompt_of(drivers, "main")
    assert prompt == UBootPrompt("stop autoboot", "\n", "board> ", ("pci enum",), "boot")
    assert uboot_prompt_of([object()], "main") is None
    assert uboot_prompt_of([UBootDriver(prompt="")], "main") == UBootPrompt()  # labgrid's empty default
    with pytest.raises(BootError, match=r"'bench': its UBootDriver asks for a password") as error:
        uboot_prompt_of([UBootDriver(password="secret")], "bench")
    assert "\n" not in str(error.value)


def test_bootargs_is_set_in_commands_the_line_buffer_holds() -> None:
    words = [f"opt{i}=value{i}" for i in range(60)]  # about 800 characters: a long board line
    commands = setenv_commands(" ".join(words))
    assert len(commands) > 3
    assert commands[0].startswith("setenv bootargs '") and commands[0].endswith("'")
    rebuilt: list[str] = []
    for command in commands:
        body = re.fullmatch(r"""setenv bootargs (?:'(.*)'|"\$\{bootargs\} (.*)")""", command)
        assert body is not None, command
        chunk = body[1] if body[1] is not None else body[2]
        assert len(chunk) <= COMMAND_CHARS
        rebuilt += chunk.split()
    assert rebuilt == words
    assert setenv_commands("console=ttyS0,115200n8 root=PARTUUID=1a2b-01 rw") == [
        "setenv bootargs 'console=ttyS0,115200n8 root=PARTUUID=1a2b-01 rw'"
    ]
    assert setenv_commands("  ") == ["setenv bootargs"]
    for bad in ("quiet'; reset; '", 'a="b c"', "x=$y", "a\\b", "a`b`", "a\nreset", "a\tb"):
        with pytest.raises(InputError, match="U-Boot's prompt"):
            setenv_commands(bad)


def test_the_dialogue_answers_the_console_however_its_bytes_are_cut() -> None:
    prompt = UBootPrompt(init_commands=("pci enum",), boot_command="run bootcmd")
    for seed in range(20):
        dialogue = uboot_dialogue(prompt, "console=ttyS0 quiet")
        rng = random.Random(seed)
        answers = _answers(dialogue, BANNER, rng)
        assert answers == ["\n"] and dialogue.waiting_for == "U-Boot's prompt before 'pci enum'"
        answers = _answers(dialogue, PROMPT, rng)
        answers += _answers(dialogue, b"pci enum\r\n=> ", rng)
        answers += _answers(dialogue, b"setenv bootargs 'console=ttyS0 quiet'\r\n=> ", rng)
        assert answers == ["pci enum\n", "setenv bootargs 'console=ttyS0 quiet'\n", "run bootcmd\n"]
        assert dialogue.done and not dialogue.failed and dialogue.waiting_for == ""
        tail = b'run bootcmd\r\nKernel command line: "console=ttyS0 quiet"\r\n\r\nStarting kernel ...\r\n'
        assert _answers(dialogue, tail + b"[    0.000000] x => y\r\n", rng) == []
        assert not dialogue.failed  # the kernel's lines are not U-Boot's prompt


def test_a_boot_command_that_fails_brings_the_prompt_back() -> None:
    dialogue = uboot_dialogue(UBootPrompt(boot_command="boot"), "console=ttyS0")
    dialogue.feed(BANNER + PROMPT)
    dialogue.feed(b"setenv bootargs 'console=ttyS0'\r\n=> ")
    assert dialogue.done and not dialogue.failed
    dialogue.feed(b"boot\r\n** Bad device specification virtio 0 **\r\n")
    assert not dialogue.failed
    dialogue.feed(b"=> ")
    assert dialogue.failed


def _lines(*texts: str) -> list[LogLine]:
    return [LogLine(text=text, host_ns=i) for i, text in enumerate(texts)]


def test_a_boot_that_did_not_boot_the_line_given_is_a_boot_loader_error() -> None:
    given = "console=ttyS0 panic=-1 quiet"
    done = uboot_dialogue(UBootPrompt(), given)
    done.feed(BANNER + PROMPT + b"x\r\n=> ")
    assert done.done
    # the kernel printed another line: a boot command that sets bootargs itself
    kernel = "[    0.000000] Command line: console=ttyS0 panic=-1"
    read = ConsoleRead(_lines(kernel, "BOOTSCOPE-MARKER"), Outcome.OK)
    judge_loader(read, done, given)
    assert read.outcome is Outcome.LOADER_ERROR
    assert "booted 'console=ttyS0 panic=-1', not the 'console=ttyS0 panic=-1 quiet'" in read.reason
    # U-Boot's quoted line only (the kernel quiet): the same words, so the boot is the arm's
    read = ConsoleRead(_lines(f'Kernel command line: "{given}"', "BOOTSCOPE-MARKER"), Outcome.OK)
    judge_loader(read, done, given)
    assert read.outcome is Outcome.OK and read.reason == ""
    # a console that lost a byte of one print (seen in CI with labgrid's QEMU console): another
    # print says the line given, so the boot is the arm's
    lossy = (
        "[    0.000000] Command line: console=ttyS0 panic=-1 quet",
        f"[    0.25] Kernel command line: {given}",
    )
    read = ConsoleRead(_lines(*lossy, "BOOTSCOPE-MARKER"), Outcome.OK)
    judge_loader(read, done, given)
    assert read.outcome is Outcome.OK
    # a boot loader that never showed its countdown booted on its own
    never = uboot_dialogue(UBootPrompt(), given)
    never.feed(b"U-Boot 2023.01\r\n")
    read = ConsoleRead(_lines("U-Boot 2023.01", "BOOTSCOPE-MARKER"), Outcome.OK)
    judge_loader(read, never, given)
    assert read.outcome is Outcome.LOADER_ERROR and "never saw U-Boot's 'stop autoboot'" in read.reason
    # the prompt came back: the reason is U-Boot's last words
    failed = uboot_dialogue(UBootPrompt(), given)
    failed.feed(BANNER + PROMPT + b"x\r\n=> run bootcmd\r\nWrong Image Format\r\n=> ")
    read = ConsoleRead(_lines("run bootcmd", "Wrong Image Format", "=> "), Outcome.LOADER_ERROR)
    judge_loader(read, failed, given)
    assert read.outcome is Outcome.LOADER_ERROR and read.reason.endswith("=>")
    assert booted_command_line(["a b", "a b q", "a  b"]) == "a b"  # two prints of three agree
    assert booted_command_line(["a b quet", "a b quiet"]) == "a b quiet"  # a byte lost in one
    assert booted_command_line([]) is None
    assert given_line_differs("a b", []) is False and given_line_differs("a  b", ["a b"]) is False
    assert printed_command_lines(['Kernel command line: "a b"', "[    0.000000] Command line: a b", "x"]) == [
        "a b",
        "a b",
    ]


def test_a_uboot_driver_is_no_shell(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # labgrid's UBootDriver runs commands too, but before the system: a warm or kexec reboot needs
    # the system's shell, so a target with only U-Boot's is refused (real labgrid, nothing activated).
    from labgrid import Environment

    for name in ("LG_BOOTSCOPE_UBOOT", "LG_BOOTSCOPE_UBOOT_DISK"):
        (tmp_path / name).write_bytes(b"")
        monkeypatch.setenv(name, str(tmp_path / name))
    target = Environment(config_file=str(EXAMPLE)).get_target("main")
    assert "UBootDriver" in {type(driver).__name__ for driver in target.drivers}
    with pytest.raises(BootError, match=r"'main' has no shell \(a ShellDriver or SSHDriver\)"):
        BoardShell(target, "main")

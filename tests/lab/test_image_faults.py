"""Faults of a full userspace boot, from the real capture tests/data/debian-12-image-systemd-tcg.tsv:
a guest cut off before its login prompt is recorded with the unit that was starting and its last
lines; a collector that found the boot not finished is recorded as such, never as a number."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from captures import load_chain_capture

from bootscope import defaults
from bootscope.analyze.captured import analyze_captured
from bootscope.analyze.systemd import still_starting
from bootscope.lab.workloads.boot import measure
from bootscope.metrics import IMAGE_METRICS, SYSTEMD_USERSPACE_S
from bootscope.model import Outcome

CAPTURE = "debian-12-image-systemd-tcg.tsv"


def test_a_timeout_names_the_unit_still_starting_and_the_last_lines(data_dir: Path) -> None:
    boot = load_chain_capture(data_dir / CAPTURE)
    # cut the console where PID 1 has begun kmod-static-nodes.service and nothing after it came
    cut = next(i for i, line in enumerate(boot.lines) if "Starting kmod-static-nodes.service" in line.text)
    timed_out = replace(
        boot, lines=boot.lines[: cut + 1], outcome=Outcome.TIMEOUT, reason="no marker after 600 s"
    )
    metrics, _, note = measure(timed_out, defaults.LOGIN_PROMPT, None, IMAGE_METRICS, full_userspace=True)
    assert metrics[SYSTEMD_USERSPACE_S] is None
    assert "still starting: " in note and note.split("still starting: ")[1].split(";")[0].endswith(
        "kmod-static-nodes.service"
    )
    assert "last lines: " in note and "Starting kmod-static-nodes.service" in note


def test_a_whole_boot_has_nothing_left_starting_and_no_note(data_dir: Path) -> None:
    boot = load_chain_capture(data_dir / CAPTURE)
    parsed = analyze_captured(boot.lines, host_start_ns=boot.host_start_ns).lines
    assert still_starting(parsed) == ()
    _, _, note = measure(boot, defaults.LOGIN_PROMPT, None, IMAGE_METRICS, full_userspace=True)
    assert note == ""


def test_bootup_not_yet_finished_is_recorded_as_such(data_dir: Path) -> None:
    boot = load_chain_capture(data_dir / CAPTURE)
    lines = list(boot.lines)
    # what the collector prints when systemd-analyze runs before the boot finished (systemd 252)
    at = next(i for i, line in enumerate(lines) if line.text.startswith("Startup finished in"))
    lines[at] = replace(lines[at], text="Bootup is not yet finished (org.freedesktop.systemd1.Manager.Fini")
    state = next(i for i, line in enumerate(lines) if line.text.strip() == "running")
    lines[state] = replace(lines[state], text="starting")
    _, _, note = measure(
        replace(boot, lines=tuple(lines)), defaults.LOGIN_PROMPT, None, IMAGE_METRICS, full_userspace=True
    )
    assert note == "systemd: Bootup is not yet finished (state starting)"

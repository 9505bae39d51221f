"""`bootscope tune`'s own logic, fast: which knobs a real boot's log gives a reason to try, how a
command line is changed, when a knob's boots count as a saving, and when a tuned boot is not the
same system. The real boots are in tests/cli/test_tune_cli.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bootscope.errors import InputError
from bootscope.model import LogLine
from bootscope.store.records import BootRecord
from bootscope.usecases.tune.catalogue import SLOW_INITCALL_US, candidates
from bootscope.usecases.tune.decide import NO_SAVING, SAVING, SLOWER, Verdict, judge, same_system
from bootscope.usecases.tune.knob import Knob, compatible, given_knob, knob_settings, with_knobs
from bootscope.usecases.tune.pareto import pareto_front
from bootscope.usecases.tune.screen import TriedKnob
from bootscope.usecases.views import boots_from_logs

DATA = Path(__file__).resolve().parents[2] / "data"
SMP1 = DATA / "debian-6.1-cloud-initcall-smp1.log"


def _slow_initcalls(path: Path) -> list[str]:
    """Initcalls of at least SLOW_INITCALL_US, read from the log's own 'returned ... after' lines."""
    pattern = re.compile(r"initcall (\S+?)\+0x\S+ returned -?\d+ after (\d+) usecs")
    found = [(m[1], int(m[2])) for line in path.read_text().splitlines() if (m := pattern.search(line))]
    return [name for name, us in sorted(found, key=lambda f: -f[1]) if us >= SLOW_INITCALL_US]


def test_a_real_boot_with_console_noise_gives_its_knobs() -> None:
    view = boots_from_logs([SMP1])[0]
    append = "console=ttyS0 initcall_debug ignore_loglevel"
    safe = candidates(append, view.breakdown, view.lines, "kernel_init_s")
    # The log's line 17 names QEMU's machine (DMI) and its line 110 is the IO-APIC timer check
    # ("..TIMER: vector=0x30"): no_timer_check. One CPU and no TSC trouble: no tsc=reliable.
    assert [k.name for k in safe] == ["-initcall_debug", "-ignore_loglevel", "+no_timer_check"]
    assert all(k.risk == "safe" and "kernel-parameters.txt" in k.source for k in safe)
    calls = sum(1 for line in SMP1.read_text().splitlines() if " returned " in line and "initcall " in line)
    assert safe[0].evidence == f"{calls} initcalls printed"
    # quiet would silence the 'Run /init' line kernel_init_s is read from; a host-clock metric keeps it.
    assert "+quiet" in [k.name for k in candidates("", view.breakdown, view.lines, "host_wall_s")]
    assert "+quiet" not in [k.name for k in candidates("", view.breakdown, view.lines, "kernel_init_s")]
    # Feature knobs only when allowed: the slowest initcalls, as the log itself times them.
    featured = candidates(append, view.breakdown, view.lines, "kernel_init_s", allow=("feature",))
    blacklisted = [k.name.split("=", 1)[1] for k in featured if k.name.startswith("+initcall_blacklist=")]
    assert blacklisted == _slow_initcalls(SMP1)[:3] and blacklisted
    assert all(k.risk == "feature" for k in featured if k.name.startswith("+initcall_blacklist="))
    # Unsafe only when allowed, and this boot shows active mitigations.
    unsafe = candidates(append, view.breakdown, view.lines, "kernel_init_s", allow=("unsafe",))
    assert "+mitigations=off" in [k.name for k in unsafe] and unsafe[-1].risk == "unsafe"
    only = candidates(
        append, view.breakdown, view.lines, "kernel_init_s", allow=("feature",), only=("ignore",)
    )
    assert [k.name for k in only] == ["-ignore_loglevel"]
    with pytest.raises(InputError, match="--allow"):
        candidates(append, view.breakdown, view.lines, "kernel_init_s", allow=("reckless",))


def test_a_delay_loop_calibrated_at_boot_gives_lpj() -> None:
    path = DATA / "hw" / "mips-archer-c60-4.19-uboot.log"
    view = boots_from_logs([path])[0]
    lpj = re.search(r"Calibrating delay loop\.\.\. .*lpj=(\d+)", path.read_text())
    assert lpj is not None
    assert f"+lpj={lpj[1]}" in [k.name for k in candidates("", view.breakdown, view.lines, "kernel_init_s")]
    # Skipped calibration (x86 with a known TSC) gives none.
    smp1 = boots_from_logs([SMP1])[0]
    assert not [
        k for k in candidates("", smp1.breakdown, smp1.lines, "kernel_init_s") if k.name.startswith("+lpj")
    ]


def test_knobs_change_the_command_line_by_word() -> None:
    view = boots_from_logs([SMP1])[0]
    knobs = candidates(
        "console=ttyS0 initcall_debug ignore_loglevel", view.breakdown, view.lines, "kernel_init_s"
    )
    tuned = with_knobs("console=ttyS0 initcall_debug ignore_loglevel", knobs)
    assert tuned == "console=ttyS0 no_timer_check"
    assert knobs[0].apply("initcall_debug=1 initcall_debugx") == "initcall_debugx"


def test_a_saving_counts_only_when_its_whole_interval_is_one() -> None:
    base = [10.00, 10.02, 10.01, 10.03, 9.99, 10.02]
    assert judge(base, [v - 0.5 for v in base], "kernel_init_s", "s", 0.05).decision == SAVING
    found = judge(base, [v - 0.5 for v in base], "kernel_init_s", "s", 0.05)
    assert (
        found.saving == pytest.approx(0.5) and found.ci is not None and 0 < found.ci[0] <= 0.5 <= found.ci[1]
    )
    # The same spread either side, no shift: an interval around zero is no saving, whatever the estimate.
    overlapping = judge(base, [10.01, 10.00, 10.03, 9.98, 10.02, 10.01], "kernel_init_s", "s", 0.05)
    assert overlapping.decision == NO_SAVING and overlapping.ci is not None
    assert overlapping.ci[0] < 0 < overlapping.ci[1]
    assert judge(base, [v + 0.3 for v in base], "kernel_init_s", "s", 0.05).decision == SLOWER
    assert judge(base, [9.0], "kernel_init_s", "s", 0.05).decision == NO_SAVING


def _boot(variant: str, outcome: str = "ok", value: float | None = 1.0, reason: str = "") -> BootRecord:
    metrics = {} if value is None else {"kernel_init_s": value}
    return BootRecord(variant=variant, index=0, warmup=False, outcome=outcome, reason=reason, metrics=metrics)


def test_a_tuned_boot_that_is_not_the_same_system_is_named_so() -> None:
    base = [_boot("baseline")] * 3
    logs = [[LogLine("[    1.000000] Run /init as init process")]] * 3
    assert same_system(base, [_boot("k1")] * 3, logs, logs, "kernel_init_s") == ""
    hung = [_boot("k1"), _boot("k1", "timeout", None, "no marker after 120 s")]
    assert "1 of 2 boots failed (timeout: no marker" in same_system(base, hung, logs, logs, "kernel_init_s")
    silent = [_boot("k1", value=None)] * 3
    assert "did not reach kernel_init_s" in same_system(base, silent, logs, logs, "kernel_init_s")
    oops = [[*logs[0], LogLine("[    2.000000] BUG: kernel NULL pointer dereference, address: 0")]]
    assert "BUG: kernel NULL pointer" in same_system(base, [_boot("k1")], logs, oops, "kernel_init_s")
    # A trouble line the baseline printed too is not new.
    assert same_system(base, [_boot("k1")], oops, oops, "kernel_init_s") == ""


def test_the_pareto_front_adds_risk_only_where_it_buys_saving() -> None:
    def tried(name: str, risk: str, saving: float, decision: str = SAVING) -> TriedKnob:
        return TriedKnob(
            Knob(name, risk, "s", "e", "v"), Verdict(saving, (saving / 2, saving * 2), 6, decision)
        )

    knobs = [
        tried("+a", "safe", 0.2),
        tried("+b", "feature", 5.0),
        tried("+c", "unsafe", 0.3, NO_SAVING),  # not kept: buys nothing
        tried("+d", "safe", 0.1),
    ]
    front = pareto_front(knobs)
    assert [(p.risk, p.knobs) for p in front] == [("safe", ("+a", "+d")), ("feature", ("+a", "+b", "+d"))]
    assert [p.saving_sum for p in front] == pytest.approx([0.3, 5.3])
    assert pareto_front([tried("+c", "unsafe", 0.3, NO_SAVING)]) == ()


def test_knobs_that_set_the_same_thing_do_not_combine() -> None:
    microvm, q35, hpet = (
        given_knob(w) for w in ("machine:type=microvm", "machine:type=q35", "machine:hpet=off")
    )
    assert knob_settings(q35) == {"machine:type"} and knob_settings(hpet) == {"machine:hpet"}
    assert compatible([microvm, q35, hpet]) == ([microvm, hpet], [q35])
    # a word's value is one setting; list words (masks, blacklists) stand side by side
    assert compatible([given_knob("lpj=1"), given_knob("lpj=2")])[1] == [given_knob("lpj=2")]
    masks = [given_knob("systemd.mask=a.service"), given_knob("systemd.mask=b.service")]
    assert compatible(masks) == (masks, [])
    # the front counts only the better of two machine types
    front = pareto_front(
        [
            TriedKnob(q35, Verdict(0.004, (0.003, 0.005), 4, SAVING)),
            TriedKnob(microvm, Verdict(1.0, (0.9, 1.1), 4, SAVING)),
        ]
    )
    assert [(p.knobs, p.saving_sum) for p in front] == [(("+machine:type=microvm",), 1.0)]

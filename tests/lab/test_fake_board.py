"""The board workload through the one runner on a fake board (lab/targets/fake_board.py): no labgrid,
no libvirt, no boot. The expected numbers are the fake's own schedule, worked out here by hand from its
fields (firmware 1.5 s, the old kernel's last words 0.2 s after the order, 0.9 s to init, the marker
0.05 s after): the real boards' tests (test_labgrid_*.py, test_libvirt_domain.py) stay beside these."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from bootscope.errors import BootError
from bootscope.lab import runner
from bootscope.lab.targets.base import PowersOn
from bootscope.lab.targets.fake_board import FakeBoard
from bootscope.store import Store
from bootscope.store.records import STATUS_COMPLETE, STATUS_INTERRUPTED
from bootscope.usecases.board import BoardRequest, run_board

OWN = "console=ttyS0 root=/dev/mmcblk0p2"


def _board(tmp_path: Path, **fields: object) -> tuple[str, FakeBoard]:
    env = tmp_path / "board.yaml"
    env.write_text("targets: {}\n")
    url = f"labgrid:{env}:main"
    return url, FakeBoard(name=url, **fields)  # type: ignore[arg-type]


def test_the_fake_board_has_the_capability() -> None:
    assert isinstance(FakeBoard(), PowersOn)


def test_cold_warm_and_kexec_give_the_fakes_own_times(tmp_path: Path) -> None:
    url, board = _board(tmp_path)
    with Store.open(str(tmp_path / "b.db")) as store:
        result, summary = run_board(
            BoardRequest(url, "cold,warm,kexec", samples=3, seed=4), store, target=board
        )
        assert result.status == STATUS_COMPLETE and not summary.failed
        boots = store.boots(result.experiment.id)
    assert Counter(b.variant for b in boots) == {"cold": 3, "warm": 3, "kexec": 3}
    expected = {  # by hand from the fake's fields
        "cold": {"poweron_to_kernel_s": 1.5, "restart_to_marker_s": 1.5 + 0.95},
        "warm": {"reboot_stop_s": 0.2, "restart_to_marker_s": 0.2 + 1.5 + 0.95},
        "kexec": {"reboot_stop_s": 0.2, "kexec_downtime_s": 0.9, "restart_to_marker_s": 0.2 + 0.95},
    }
    for boot in boots:
        assert boot.outcome == "ok" and boot.accel == "hardware"
        assert boot.metrics["kernel_init_s"] == pytest.approx(0.9)
        for name, value in expected[boot.variant].items():
            assert boot.metrics[name] == pytest.approx(value, abs=1e-6), (boot.variant, name)
    # every kexec reboot loaded the line the board was running; nothing changed the line
    assert {event.split(": ", 1)[1] for event in board.events if ": " in event} == {OWN}


def test_a_cold_variant_with_words_is_booted_with_them(tmp_path: Path) -> None:
    url, board = _board(tmp_path)
    request = BoardRequest(
        url, "cold", samples=2, seed=1, variants=("plain:", "fast:append=fake.init_ms=500")
    )
    with Store.open(str(tmp_path / "b.db")) as store:
        result, _ = run_board(request, store, target=board)
        boots = store.boots(result.experiment.id)
    init = {b.variant: b.metrics["kernel_init_s"] for b in boots}
    assert init == {"plain": pytest.approx(0.9), "fast": pytest.approx(0.5)}
    assert "lines" in board.events  # the board was asked to take lines before the first boot
    assert sorted({e for e in board.events if e.startswith("power on")}) == [
        f"power on: {OWN}",
        f"power on: {OWN} fake.init_ms=500",
    ]


@pytest.mark.parametrize(
    ("fields", "reboot", "variants", "said"),
    [
        ({"takes_lines": False}, "cold", ("q:append=quiet",), "takes no command line"),
        ({"has_shell": False}, "cold,warm", (), "no shell"),
    ],
)
def test_a_board_that_cannot_is_refused_before_anything_is_stored(
    tmp_path: Path, fields: dict[str, object], reboot: str, variants: tuple[str, ...], said: str
) -> None:
    url, board = _board(tmp_path, **fields)
    with Store.open(str(tmp_path / "b.db")) as store:
        with pytest.raises(BootError, match=said):
            run_board(BoardRequest(url, reboot, samples=2, seed=1, variants=variants), store, target=board)
        assert store.list_experiments() == []
    assert not any(event.startswith(("power on", "warm", "kexec")) for event in board.events)


def test_ctrl_c_keeps_the_finished_boots_and_resume_finishes_the_rest(tmp_path: Path) -> None:
    url, board = _board(tmp_path)
    booted: list[str] = []

    def interrupt_fourth(way: str) -> None:
        booted.append(way)
        if len(booted) == 4:
            raise KeyboardInterrupt

    board.before_boot = interrupt_fourth
    with Store.open(str(tmp_path / "b.db")) as store:
        with pytest.raises(KeyboardInterrupt):
            run_board(BoardRequest(url, "cold,kexec", samples=3, seed=2), store, target=board)
        (summary,) = store.list_experiments()
        experiment = summary.experiment
        assert experiment.status == STATUS_INTERRUPTED
        assert len([b for b in store.boots(experiment.id) if not b.superseded]) == 3
        board.before_boot = None
        result = runner.resume(experiment.id, store, board)
        assert result.status == STATUS_COMPLETE
        final = [b for b in store.boots(experiment.id) if not b.superseded]
    assert Counter(b.variant for b in final) == {"cold": 3, "kexec": 3}
    assert all(b.outcome == "ok" for b in final)

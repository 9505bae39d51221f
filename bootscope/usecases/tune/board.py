"""`bootscope tune labgrid:ENV[:TARGET]`: tune a board's kernel command line.

A board's command line is its boot loader's, so bootscope changes it one of two ways: every arm a
kexec reboot from the board's shell with a whole command line of its own (``BoardVariant``'s
``cmdline``; the default), or with ``--reboot cold`` a boot from power-on with that line given to
the power driver that starts the kernel (labgrid's QEMU driver's ``boot_args``) or, where U-Boot
starts it and the target has a ``UBootDriver``, set in ``bootargs`` at U-Boot's prompt for every
arm (a board that takes neither is refused in one line before anything boots). The baseline's is
the board's own: read from its ``/proc/cmdline`` once before the probe for a kexec tune, and for a
cold one the power driver's, else what one boot from power-on prints (``--append`` adds words to
it); each knob's is that line with the knob's words removed and added, exactly as for a kernel
booted in QEMU. Every stage is a board run labelled as any tune run, so Ctrl-C, a crash and
``--resume`` keep and reuse every finished boot.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from bootscope import defaults
from bootscope.errors import BootError, InputError
from bootscope.lab import runner
from bootscope.lab.plans.board import (
    BOARD_TIMEOUT_S,
    REBOOT_COLD,
    REBOOT_KEXEC,
    BoardPlan,
    BoardVariant,
)
from bootscope.lab.plans.boot import Plan
from bootscope.lab.progress import Reporter
from bootscope.lab.targets import open_target
from bootscope.lab.targets.base import powered
from bootscope.lab.where import Where, parse_where
from bootscope.lab.workloads.board import BoardWorkload
from bootscope.store import Store
from bootscope.usecases.tune.knob import words_of
from bootscope.usecases.tune.request import TuneRequest, qemu_options_given
from bootscope.usecases.tune.screen import Runner


def board_request(request: TuneRequest) -> TuneRequest:
    """Return ``request`` for the board its ``where`` names, its ``append`` the board's own
    command line read on the board (switched on, then off) with the words asked for added: the
    baseline every knob is applied to. Raises InputError for a bad board or an option a board has no
    use for, BootError when labgrid cannot reach the board or its shell."""
    assert request.where is not None
    board = parse_where(request.where.address)  # the environment's absolute path: resumed from anywhere
    given = qemu_options_given(request)
    if given:
        raise InputError(
            f"--{given[0]} is a QEMU guest's option: a board boots its own kernel on its own machine"
        )
    timeout_s = request.settings.timeout_s or BOARD_TIMEOUT_S
    own = board_command_line(board, cold=request.reboot == REBOOT_COLD, timeout_s=timeout_s)
    words = words_of(own) + [w for w in words_of(request.append) if w not in words_of(own)]
    return replace(request, where=board, append=" ".join(words))


def board_command_line(board: Where, cold: bool = False, timeout_s: float = BOARD_TIMEOUT_S) -> str:
    """Return the command line board ``board`` boots with from power-on: its ``/proc/cmdline``, read on
    its shell after switching it on (it is switched off after). With ``cold`` (a tune from power-on)
    the board must take a cold boot's command line (its power driver, or U-Boot's prompt), checked
    before it is switched on, and its own is the power driver's or what a boot from power-on
    (``timeout_s`` at most) prints (``LabgridBoard.boot_command_line``). Raises BootError when
    labgrid cannot reach the board or its shell, or ``cold`` and it takes no command line."""
    opened = open_target(board)
    target: Any = powered(opened, "tune")
    try:
        if cold:
            target.check_boot_args()
            line: object = target.boot_command_line(timeout_s, defaults.MARKER_PREFIX)
        else:
            line = target.kernel_facts().get("cmdline")
    finally:
        target.close()
    if not line:
        raise BootError(f"{board.kind}: {board.address}: /proc/cmdline read empty on the machine's shell")
    return str(line).strip()


def board_runner(request: TuneRequest, store: Store, reporter: Reporter | None) -> Runner:
    """Return the runner that boots a tune's plan on the board ``request`` names: each variant a
    reboot of ``request.reboot``'s kind (default kexec; cold: from power-on) with the variant's
    command line (its ``append``, the whole line), the plan's seed, boots and warm-ups, one boot's
    timeout ``request``'s (default BOARD_TIMEOUT_S)."""
    assert request.where is not None
    board = request.where.address
    reboot = REBOOT_COLD if request.reboot == REBOOT_COLD else REBOOT_KEXEC

    def boot(plan: Plan, meta: dict[str, str]) -> int:
        variants = tuple(BoardVariant(v.name, reboot, cmdline=v.append) for v in plan.variants)
        board_plan = BoardPlan(
            board=board,
            seed=plan.seed,
            samples_per_variant=plan.samples_per_variant,
            warmup_per_variant=plan.warmup_per_variant,
            timeout_s=request.settings.timeout_s or BOARD_TIMEOUT_S,
            reboot=reboot,
            variants=variants,
            slots_a_round=plan.slots_a_round,
        )
        workload = BoardWorkload(board_plan)
        return runner.start(workload, None, store, reporter, meta=meta).experiment.id

    return boot

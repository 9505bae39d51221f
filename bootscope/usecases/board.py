"""The board use case: ``bootscope run labgrid:ENV.yaml[:TARGET] --reboot cold -n N``: boot a board
from power-on again and again through labgrid, every boot stored as it ends.

The environment file may ask bootscope for the kernel and initramfs its boots use: a file that
names ``LG_BOOTSCOPE_KERNEL`` or ``LG_BOOTSCOPE_INITRD`` (labgrid's ``!template $LG_...``) gets Debian's
cloud kernel and bootscope's initramfs, resolved and built here, unless the variable is already set
(``examples/labgrid-qemu.yaml`` is such a board: labgrid's QEMU driver).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, replace

from bootscope.lab import runner
from bootscope.lab.plans.board import BoardPlan, parse_board
from bootscope.lab.plans.boot import resolve_seed
from bootscope.lab.progress import Reporter
from bootscope.lab.runner import RunResult
from bootscope.lab.targets.base import Target
from bootscope.lab.targets.qemu import LocalQemu
from bootscope.lab.workloads.board import BoardWorkload
from bootscope.store import Store
from bootscope.usecases.summary import RunSummary, summarize_run

KERNEL_VARIABLE = "LG_BOOTSCOPE_KERNEL"
INITRD_VARIABLE = "LG_BOOTSCOPE_INITRD"
EXAMPLE_KERNEL = "debian:cloud"


@dataclass(frozen=True, slots=True)
class BoardRequest:
    """A board run as asked for: the board (``labgrid:ENV[:TARGET]``), the reboot, boots and warm-ups,
    the seed (None: drawn), the timeout of one boot (s; None: the plan's default) and the marker."""

    board: str
    reboot: str
    samples: int | None = None
    warmup: int | None = None
    seed: int | None = None
    timeout_s: float | None = None
    marker: str | None = None


def board_plan(request: BoardRequest) -> BoardPlan:
    """Return the plan of ``request``, its board named with the environment's absolute path so that
    ``--resume`` finds it from anywhere. Raises InputError for a bad board, setting or reboot."""
    spec = parse_board(request.board)
    plan = BoardPlan(board=spec.url, seed=resolve_seed(request.seed), reboot=request.reboot)
    return replace(
        plan,
        samples_per_variant=plan.samples_per_variant if request.samples is None else request.samples,
        warmup_per_variant=plan.warmup_per_variant if request.warmup is None else request.warmup,
        timeout_s=plan.timeout_s if request.timeout_s is None else request.timeout_s,
        marker=plan.marker if request.marker is None else request.marker,
    )


def provide_example_paths(plan: BoardPlan, qemu: LocalQemu | None = None) -> list[str]:
    """Set the LG_BOOTSCOPE_* variables the plan's environment file names and the caller left unset
    (Debian's cloud kernel, bootscope's initramfs); return a note per variable set. Raises BootError
    when the kernel cannot be fetched or the initramfs built."""
    text = parse_board(plan.board).env.read_text(encoding="utf-8", errors="replace")
    wanted = [name for name in (KERNEL_VARIABLE, INITRD_VARIABLE) if name in text and name not in os.environ]
    if not wanted:
        return []
    qemu = qemu or LocalQemu()
    notes = []
    if KERNEL_VARIABLE in wanted:
        kernel = qemu.resolve_kernel(EXAMPLE_KERNEL)
        os.environ[KERNEL_VARIABLE] = str(kernel.image)
        notes.append(f"{KERNEL_VARIABLE}={kernel.image} ({EXAMPLE_KERNEL})")
    if INITRD_VARIABLE in wanted:
        initrd = qemu.build_initramfs((), ())
        os.environ[INITRD_VARIABLE] = str(initrd)
        notes.append(f"{INITRD_VARIABLE}={initrd} (bootscope's initramfs)")
    return notes


def run_board(
    request: BoardRequest,
    store: Store,
    reporter: Reporter | None = None,
    cancel: threading.Event | None = None,
    target: Target | None = None,
) -> tuple[RunResult, RunSummary]:
    """Boot the board ``request`` names (``target``: default the board the plan names; a test's
    own) slot by slot and return how the run ended with its summary. Raises InputError for a bad
    request, BootError when labgrid cannot drive the board (before anything is stored when it cannot
    open it), KeyboardInterrupt on Ctrl-C (the boots finished stay stored)."""
    plan = board_plan(request)
    if target is None:
        provide_example_paths(plan)
    result = runner.start(BoardWorkload(plan), target or LocalQemu(), store, reporter, None, cancel)
    return result, summarize_run(store, result.experiment.id)

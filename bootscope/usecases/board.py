"""The board use case: ``bootscope run labgrid:ENV.yaml[:TARGET] --reboot cold -n N``: boot a board
from power-on again and again through labgrid, every boot stored as it ends.

The environment file may ask bootscope for the kernel and initramfs its boots use (labgrid's
``!template $LG_BOOTSCOPE_...``): the labgrid kind provides them when it opens the board
(:mod:`bootscope.lab.targets.labgrid.examples`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace

from bootscope.lab import runner
from bootscope.lab.plans.board import BoardPlan, build_board_variants
from bootscope.lab.plans.boot import resolve_seed
from bootscope.lab.progress import Reporter
from bootscope.lab.runner import RunResult
from bootscope.lab.targets.base import Target
from bootscope.lab.where import parse_where
from bootscope.lab.workloads.board import BoardWorkload
from bootscope.store import Store
from bootscope.usecases.summary import RunSummary, summarize_run


@dataclass(frozen=True, slots=True)
class BoardRequest:
    """A board run as asked for: the board (``labgrid:ENV[:TARGET]``), the reboot, boots and warm-ups,
    the seed (None: drawn), the timeout of one boot (s; None: the plan's default), the marker and the
    ``--variant`` texts (``NAME:reboot=WAY,append=WORDS``)."""

    board: str
    reboot: str
    samples: int | None = None
    warmup: int | None = None
    seed: int | None = None
    timeout_s: float | None = None
    marker: str | None = None
    variants: tuple[str, ...] = ()


def board_plan(request: BoardRequest) -> BoardPlan:
    """Return the plan of ``request``, its machine named as stored (a board by its environment's
    absolute path, a domain with its connection) so that ``--resume`` finds it from anywhere. Raises
    InputError for a bad board or domain, setting or reboot."""
    where = parse_where(request.board)
    named = build_board_variants(request.variants, request.reboot)
    plan = BoardPlan(
        board=where.address, seed=resolve_seed(request.seed), reboot=request.reboot, variants=named
    )
    return replace(
        plan,
        samples_per_variant=plan.samples_per_variant if request.samples is None else request.samples,
        warmup_per_variant=plan.warmup_per_variant if request.warmup is None else request.warmup,
        timeout_s=plan.timeout_s if request.timeout_s is None else request.timeout_s,
        marker=plan.marker if request.marker is None else request.marker,
    )


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
    result = runner.start(BoardWorkload(plan), target, store, reporter, None, cancel)
    return result, summarize_run(store, result.experiment.id)

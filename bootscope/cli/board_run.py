"""``bootscope run labgrid:ENV.yaml[:TARGET] --reboot cold[,warm,kexec]``: boot a board from power-on
(and reboot it warm and by kexec through its shell) through labgrid, boot after boot, and print the
run as ``run`` prints any (the use case: :func:`bootscope.usecases.board.run_board`)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from bootscope.cli.signals import stop_on_signals
from bootscope.errors import BootError, InputError
from bootscope.metrics import POWERON_TO_KERNEL_S, RESTART_TO_MARKER_S
from bootscope.report.console import error_console, output_console

if TYPE_CHECKING:
    from bootscope.usecases.board import BoardRequest


def run_board_cli(
    request: BoardRequest, db: str, as_json: bool, meta: Sequence[str] = (), qemu_options: bool = False
) -> None:
    """Run the board experiment and print it; exit status 0 when every boot was ok, 3 when any
    failed (all are stored), 2 for bad options (QEMU's, given with ``qemu_options``, and ``--meta``
    for now)."""
    if qemu_options:
        raise InputError("a labgrid: board boots what its environment file says: QEMU options do not apply")
    if meta:
        raise InputError("--meta labels QEMU runs; a labgrid: run does not take it yet")
    from bootscope.lab.progress import RichReporter, SilentReporter
    from bootscope.report.run_out import show_run
    from bootscope.store import Store
    from bootscope.usecases.board import run_board
    from bootscope.usecases.run import RunOutcome

    out = output_console()
    reporter = SilentReporter() if as_json else RichReporter(error_console())
    cancel = threading.Event()
    with stop_on_signals(cancel), Store.open(db) as store:
        result, summary = run_board(request, store, reporter, cancel)
    show_run(out, RunOutcome(result, summary, store.name, request.seed is not None), as_json)
    if not as_json:
        metric = POWERON_TO_KERNEL_S if len(result.experiment.variants) == 1 else RESTART_TO_MARKER_S
        out.print(f"see `bootscope compare {result.experiment.id} --metric {metric}`")
    if summary.failed:
        raise BootError(
            f"{len(summary.failed)} of {summary.stored} boots of run {result.experiment.id} failed"
            f" ({', '.join(sorted({boot.outcome for boot in summary.failed}))}); all are stored"
        )

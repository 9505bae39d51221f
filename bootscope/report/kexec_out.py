"""How a kexec run is shown: the warning that QEMU TCG timings are not hardware timings, the notes
on ignored options, and the run's tables (:mod:`bootscope.report.run_out`) with where to look next."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

from bootscope.metrics import KEXEC_DOWNTIME_S
from bootscope.report.run_out import print_notes, show_run
from bootscope.usecases.run import RunOutcome

TCG_WARNING = (
    "QEMU TCG timings are not hardware timings: TCG emulates every instruction (purgatory's SHA-256 "
    "and decompression are far slower than on hardware), and the seed's big items scale with the "
    "machine (struct page init with memory, smpboot with CPUs). Use --mem-sweep and smp= variants for "
    "the trend, and --build-initramfs to run the same chain on a real machine."
)


def print_kexec_start(out: Console, notes: Sequence[str]) -> None:
    """Print, before a kexec run, the TCG warning and the notes on options that have no effect."""
    out.print(Text(f"warning: {TCG_WARNING}", style="yellow"))
    print_notes(out, notes)


def print_initramfs_written(out: Console, path: object) -> None:
    """Print where ``--build-initramfs`` wrote the chain initramfs and how to boot it."""
    out.print(Text(f"wrote {path}: boot it with bootscope.hops=N on the kernel command line"))


def show_kexec_run(out: Console, outcome: RunOutcome, as_json: bool) -> None:
    """Print a finished kexec run: its JSON document, or its tables, the compare command that shows
    the downtime, and the TCG warning again."""
    show_run(out, outcome, as_json, noun="kernels")
    if as_json:
        return
    out.print(Text(f"see `bootscope compare {outcome.result.experiment.id} --metric {KEXEC_DOWNTIME_S}`"))
    out.print(Text(f"warning: {TCG_WARNING}", style="yellow"))

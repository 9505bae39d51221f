"""`bootscope kexec`: measure kexec reboot downtime, chain by chain, and compare variants.

Thin: options are parsed here, the run is :func:`bootscope.experiment.kexec.run_kexec_experiment`
(which stores every reboot as it completes), and the summary is read back from the store.
"""

from __future__ import annotations

import statistics
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from bootscope import defaults
from bootscope.analyze.kexec import KEXEC_METRICS
from bootscope.cli.console import output_console
from bootscope.cli.signals import stop_on_signals
from bootscope.errors import BootError, InputError
from bootscope.model import Comparison
from bootscope.sources import kexec as chain

if TYPE_CHECKING:
    from bootscope.store import BootRecord

TCG_WARNING = (
    "QEMU TCG timings are not hardware timings: TCG emulates every instruction (purgatory's SHA-256 "
    "and decompression are far slower than on hardware), and the seed's big items scale with the "
    "machine (struct page init with memory, smpboot with CPUs). Use --mem/--smp lists for the trend, "
    "and --build-initramfs to run the same chain on a real machine."
)


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _print_summary(
    console: Console, experiment_id: int, names: Sequence[str], boots: list[BootRecord]
) -> None:
    from bootscope.experiment import kexec as runner

    failed = runner.failed_samples(boots)
    counts = Table(title=f"kexec run {experiment_id}", title_justify="left")
    for column in ("variant", "ok reboots", "failed"):
        counts.add_column(column, justify="left" if column == "variant" else "right")
    for name in names:
        ok = [b for b in boots if b.variant == name and not b.warmup and b.outcome == "ok"]
        counts.add_row(escape(name), str(len(ok)), str(sum(1 for b in failed if b.variant == name)))
    console.print(counts)
    table = Table(title="ok kexec reboots (seconds)", title_justify="left")
    for column in ("metric", "variant", "n", "median", "min", "max"):
        table.add_column(column, justify="left" if column in ("metric", "variant") else "right")
    for metric in KEXEC_METRICS:
        for name in names:
            values = runner.metric_values(boots, name, metric)
            median = statistics.median(values) if values else None
            low, high = (min(values), max(values)) if values else (None, None)
            table.add_row(
                metric, escape(name), str(len(values)), _seconds(median), _seconds(low), _seconds(high)
            )
        table.add_section()
    console.print(table)
    for boot in failed:
        console.print(
            f"[red]{escape(boot.variant)} boot {boot.index}: {escape(boot.outcome)}[/red]:"
            f" {escape(boot.reason)}"
        )


def _print_comparisons(console: Console, comparisons: Sequence[Comparison], notes: Sequence[str]) -> None:
    if not comparisons and not notes:
        return
    table = Table(title="variants against the first (shift = variant - first, Hodges-Lehmann)")
    for column in ("metric", "variant", "shift", "interval", "verdict"):
        table.add_column(column, justify="left" if column in ("metric", "variant", "verdict") else "right")
    for comparison in comparisons:
        ci = comparison.shift_ci
        table.add_row(
            comparison.metric,
            escape(comparison.b.name),
            "-" if comparison.shift_estimate is None else f"{comparison.shift_estimate:+.3f}",
            "-" if ci is None else f"[{ci[0]:+.3f}, {ci[1]:+.3f}]",
            escape(comparison.verdict),
        )
    console.print(table)
    for note in notes:
        console.print(f"note: {escape(note)}")


def kexec(
    from_kernel: Annotated[
        str, typer.Argument(metavar="FROM", help="Kernel QEMU boots: bzImage path or debian:cloud.")
    ],
    to: Annotated[str | None, typer.Option("--to", help="Kernel to kexec into (default: FROM).")] = None,
    hops: Annotated[int, typer.Option("-n", "--hops", help="kexec reboots per chain.")] = 24,
    chains: Annotated[int, typer.Option("--chains", help="Chains (fresh QEMU runs) per variant.")] = 1,
    append: Annotated[str, typer.Option("--append", help="Extra kernel command line for every hop.")] = "",
    no_checks: Annotated[
        bool, typer.Option("--no-checks", help="kexec -i: purgatory skips its checksum (not with -s).")
    ] = False,
    file_load: Annotated[bool, typer.Option("--file-load", help="kexec -s (kexec_file_load).")] = False,
    variant: Annotated[
        list[str] | None,
        typer.Option(
            "--variant", help="NAME:no-checks=1,file-load=1,mem=2048,smp=2,to=PATH,append=... (repeat)."
        ),
    ] = None,
    mem: Annotated[
        str, typer.Option("--mem", help="Guest MiB, or a list (1024,2048,4096) as variants.")
    ] = str(chain.DEFAULT_KEXEC_MEM_MB),
    smp: Annotated[int, typer.Option("--smp", help="Guest CPUs.")] = defaults.DEFAULT_SMP,
    timeout: Annotated[
        float | None, typer.Option("--timeout", help="Seconds per chain (default 60 per hop).")
    ] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed of the chain order.")] = None,
    db: Annotated[str, typer.Option("--db", help="SQLite file or PostgreSQL URL.")] = defaults.DEFAULT_DB,
    build_initramfs: Annotated[
        Path | None,
        typer.Option(
            "--build-initramfs", help="Only write the chain initramfs (for real hardware) and exit."
        ),
    ] = None,
) -> None:
    """Measure kexec reboot downtime: one QEMU boot of FROM, then a chain of kexec reboots into TO.

    Every kernel is stored as its own boot as soon as it is complete; Ctrl-C keeps finished reboots.

    Exit status 3 when any kernel failed (kexec-error, timeout, panic), after printing and storing all.

    Exit status 0 when every kernel of every chain ended ok, 2 for bad options.
    """
    from bootscope.experiment import kexec as runner  # scipy, sqlalchemy: only when run
    from bootscope.experiment.progress import RichReporter
    from bootscope.store import Store

    console = output_console()
    try:
        mem_list = [int(part) for part in mem.split(",") if part.strip()]
    except ValueError:
        raise InputError(f"--mem takes MiB or a comma-separated list of MiB, not {mem!r}") from None
    if not mem_list or min(mem_list) < 64:
        raise InputError(f"--mem needs sizes of at least 64 MiB (got {mem!r})")
    to_spec = to if to is not None else from_kernel
    if build_initramfs is not None:
        initrd = chain.build_chain_initramfs(runner.resolve_to(to_spec)[0])
        chain.write_initramfs(initrd, build_initramfs)
        console.print(
            f"wrote {escape(str(build_initramfs))}: boot it with bootscope.hops=N on the kernel command line"
        )
        return
    base = runner.KexecVariant(
        name="default",
        to=to_spec,
        options=chain.KexecOptions(file_load=file_load, no_checks=no_checks),
        mem_mb=mem_list[0],
        smp=smp,
        append=append,
    )
    variants = runner.build_variants(base, variant or [], mem_list)
    console.print(f"[yellow]warning:[/yellow] {TCG_WARNING}")
    for item in variants:
        for note in runner.ignored_options(item):
            console.print(f"[yellow]note:[/yellow] {escape(note)}")
    cancel = threading.Event()
    with stop_on_signals(cancel), Store.open(db) as store:
        result = runner.run_kexec_experiment(
            store, from_kernel, variants, hops, chains, seed, timeout, RichReporter(), cancel
        )
        experiment_id = result.experiment.id
        boots = store.boots(experiment_id)
        comparisons, notes = runner.compare_variants(store, experiment_id)
    _print_summary(console, experiment_id, [v.name for v in variants], boots)
    _print_comparisons(console, comparisons, notes)
    console.print(
        f"stored as run {experiment_id} in {escape(db)}"
        f" (see `bootscope compare {experiment_id} --metric kexec_downtime_s`)"
    )
    console.print(f"[yellow]warning:[/yellow] {TCG_WARNING}")
    failed = runner.failed_samples(boots)
    if failed:
        raise BootError(
            f"{len(failed)} of {len(boots)} kernels of run {experiment_id} failed"
            f" ({', '.join(sorted({boot.outcome for boot in failed}))}); all are stored"
        )

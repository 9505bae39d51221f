"""`bootscope kexec`: measure kexec reboot downtime, chain by chain, and compare variants.

Thin: options are parsed here, the run is :func:`bootscope.usecases.run.start_kexec` (the kexec
workload on the one runner, which stores every reboot as it completes), and the summary is read
back from the store.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.text import Text

from bootscope import defaults
from bootscope.cli import options
from bootscope.cli.signals import stop_on_signals
from bootscope.errors import BootError, InputError
from bootscope.lab.qemu import kexec_chain as chain
from bootscope.metrics import KEXEC_DOWNTIME_S
from bootscope.report.console import output_console

if TYPE_CHECKING:
    from bootscope.lab.progress import Reporter

TCG_WARNING = (
    "QEMU TCG timings are not hardware timings: TCG emulates every instruction (purgatory's SHA-256 "
    "and decompression are far slower than on hardware), and the seed's big items scale with the "
    "machine (struct page init with memory, smpboot with CPUs). Use --mem-sweep and smp= variants for "
    "the trend, and --build-initramfs to run the same chain on a real machine."
)


def kexec(
    from_kernel: Annotated[
        str | None,
        typer.Argument(
            metavar="FROM", help="Kernel QEMU boots: bzImage path or debian:cloud (not with --resume)."
        ),
    ] = None,
    to: Annotated[str | None, typer.Option("--to", help="Kernel to kexec into (default: FROM).")] = None,
    hops: Annotated[
        int, typer.Option("-n", "--hops", help="kexec reboots (measurements) per chain; a chain is one slot.")
    ] = 24,
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
        str | None,
        typer.Option("--mem", help=f"Guest memory in MiB (default: {chain.DEFAULT_KEXEC_MEM_MB})."),
    ] = None,
    mem_sweep: Annotated[
        str | None,
        typer.Option(
            "--mem-sweep", help="MiB,MiB,...: one variant per guest memory size, e.g. 1024,2048,4096."
        ),
    ] = None,
    smp: Annotated[int, typer.Option("--smp", help="Guest CPUs.")] = defaults.DEFAULT_SMP,
    timeout: options.Timeout = None,
    seed: options.Seed = None,
    accel: options.Accel = None,
    jobs: options.Jobs = None,
    executor_spec: options.ExecutorOpt = None,
    quiet_host: options.QuietHost = False,
    resume: options.Resume = None,
    db: options.Db = defaults.DEFAULT_DB,
    fmt: Annotated[str, options.format_option(options.TABLE_JSON, "table")] = "table",
    as_json: options.JsonAlias = False,
    build_initramfs: Annotated[
        Path | None,
        typer.Option(
            "--build-initramfs", help="Only write the chain initramfs (for real hardware) and exit."
        ),
    ] = None,
) -> None:
    """Measure kexec reboot downtime: one QEMU boot of FROM, then a chain of kexec reboots into TO.

    Every kernel is stored as its own boot as soon as it is complete; Ctrl-C keeps finished reboots,
    and --resume ID runs the chains that did not finish.

    Exit status 0 when every kernel of every chain ended ok, 3 when any failed (kexec-error, timeout,
    panic; after printing and storing all), 2 for bad options.
    """
    from bootscope.lab.executors import open_executor
    from bootscope.lab.plans.boot import resolve_seed
    from bootscope.lab.plans.kexec import (
        KexecPlan,
        KexecVariant,
        build_variants,
        ignored_options,
        validate_kexec_plan,
    )
    from bootscope.lab.progress import RichReporter, SilentReporter
    from bootscope.lab.workloads.kexec import resolve_to
    from bootscope.report.run_out import print_notes, print_run, run_document  # scipy: only when run
    from bootscope.store import Store
    from bootscope.usecases.run import resume_experiment, start_kexec
    from bootscope.usecases.summary import summarize_run

    as_json = options.output_format(fmt, as_json) == "json"
    console = output_console()
    reporter: Reporter = SilentReporter() if as_json else RichReporter(Console(stderr=True, highlight=False))
    cancel = threading.Event()
    if resume is not None:
        if from_kernel or variant or build_initramfs:
            raise InputError(
                "--resume takes no FROM, --variant or --build-initramfs: it reruns the stored plan"
            )
        with stop_on_signals(cancel), Store.open(db) as store, open_executor(executor_spec, jobs) as executor:
            result = resume_experiment(resume, store, reporter, cancel=cancel, executor=executor)
            summary = summarize_run(store, result.experiment.id)
    else:
        if not from_kernel:
            raise InputError("give the FROM kernel (path or debian:cloud), or --resume ID")
        mem_list = memory_sizes(mem, mem_sweep)
        to_spec = to if to is not None else from_kernel
        if build_initramfs is not None:
            initrd = chain.build_chain_initramfs(resolve_to(to_spec)[0])
            chain.write_initramfs(initrd, build_initramfs)
            console.print(
                Text(f"wrote {build_initramfs}: boot it with bootscope.hops=N on the kernel command line")
            )
            return
        base = KexecVariant(
            name="default",
            to=to_spec,
            options=chain.KexecOptions(file_load=file_load, no_checks=no_checks),
            mem_mb=mem_list[0],
            smp=smp,
            append=append,
        )
        variants = build_variants(base, variant or [], mem_list)
        plan = validate_kexec_plan(
            KexecPlan(
                from_spec=from_kernel,
                variants=tuple(variants),
                hops=hops,
                seed=resolve_seed(seed),
                chains=chains,
                timeout_s=timeout,
                accel=accel or "auto",
                jobs=jobs or 1,
                quiet_host=quiet_host,
            )
        )
        if not as_json:
            console.print(Text(f"warning: {TCG_WARNING}", style="yellow"))
            print_notes(console, [note for item in variants for note in ignored_options(item)])
        with stop_on_signals(cancel), Store.open(db) as store, open_executor(executor_spec, jobs) as executor:
            result = start_kexec(plan, store, reporter, cancel, executor=executor)
            summary = summarize_run(store, result.experiment.id)
    experiment_id = result.experiment.id
    if as_json:
        console.print_json(json.dumps(run_document(result, summary, store.name)))
    else:
        print_run(console, result, summary, store.name, seed_given=seed is not None, noun="kernels")
        console.print(Text(f"see `bootscope compare {experiment_id} --metric {KEXEC_DOWNTIME_S}`"))
        console.print(Text(f"warning: {TCG_WARNING}", style="yellow"))
    if summary.failed:
        raise BootError(
            f"{len(summary.failed)} of {summary.stored} kernels of run {experiment_id} failed"
            f" ({', '.join(sorted({boot.outcome for boot in summary.failed}))}); all are stored"
        )


def memory_sizes(mem: str | None, mem_sweep: str | None) -> list[int]:
    """Return the guest memory sizes in MiB: ``--mem``'s one size, or ``--mem-sweep``'s list (one
    variant each), or the default size. A list given to ``--mem`` (the old spelling) is taken as
    ``--mem-sweep`` with a note. Raises InputError for both options, a non-number or under 64 MiB."""
    if mem is not None and "," in mem:
        options.deprecated(f"--mem {mem}", f"--mem-sweep {mem} (--mem is one size)")
        if mem_sweep is not None:
            raise InputError("give the list of memory sizes to --mem-sweep only")
        mem, mem_sweep = None, mem
    if mem is not None and mem_sweep is not None:
        raise InputError("give --mem (one size) or --mem-sweep (one variant per size), not both")
    option, text = ("--mem-sweep", mem_sweep) if mem_sweep is not None else ("--mem", mem)
    if text is None:
        return [chain.DEFAULT_KEXEC_MEM_MB]
    try:
        sizes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise InputError(f"{option} takes MiB (e.g. 2048), not {text!r}") from None
    if not sizes or min(sizes) < 64:
        raise InputError(f"{option} needs sizes of at least 64 MiB (got {text!r})")
    return sizes

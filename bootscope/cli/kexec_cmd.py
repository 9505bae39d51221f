"""`bootscope kexec`: measure kexec reboot downtime, chain by chain, and compare variants.

Thin: options are parsed here; the plan, the run and the exit policy are
:mod:`bootscope.usecases.kexec`; the output is :mod:`bootscope.report.kexec_out`.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from bootscope import defaults
from bootscope.cli import options
from bootscope.cli.signals import stop_on_signals
from bootscope.errors import InputError
from bootscope.lab.qemu import kexec_chain as chain
from bootscope.report.console import output_console

if TYPE_CHECKING:
    from bootscope.lab.progress import Reporter


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
    from bootscope.lab.plans.settings import GivenSettings
    from bootscope.lab.progress import RichReporter, SilentReporter
    from bootscope.report import kexec_out  # scipy: only when run
    from bootscope.usecases import kexec as usecase

    as_json = options.check_format(fmt, options.TABLE_JSON) == "json"
    console = output_console()
    reporter: Reporter = SilentReporter() if as_json else RichReporter(Console(stderr=True, highlight=False))
    plan = None
    if resume is not None:
        if from_kernel or variant or build_initramfs:
            raise InputError(
                "--resume takes no FROM, --variant or --build-initramfs: it reruns the stored plan"
            )
    else:
        if not from_kernel:
            raise InputError("give the FROM kernel (path or debian:cloud), or --resume ID")
        mem_list = memory_sizes(mem, mem_sweep)
        to_spec = to if to is not None else from_kernel
        if build_initramfs is not None:
            written = usecase.write_chain_initramfs(to_spec, build_initramfs)
            kexec_out.print_initramfs_written(console, written)
            return
        # `or None`: -j 0 and an empty --accel have always meant the default here.
        settings = GivenSettings(
            seed=seed, timeout_s=timeout, accel=accel or None, jobs=jobs or None, quiet_host=quiet_host
        )
        request = usecase.KexecRequest(
            from_spec=from_kernel, to_spec=to_spec, hops=hops, chains=chains, settings=settings,
            mem_sizes_mb=tuple(mem_list), variant_texts=tuple(variant or ()), smp=smp, append=append,
            no_checks=no_checks, file_load=file_load,
        )  # fmt: skip
        plan = usecase.kexec_plan(request)
        if not as_json:
            kexec_out.print_kexec_start(console, usecase.plan_notes(plan))
    cancel = threading.Event()
    with stop_on_signals(cancel):
        outcome = usecase.run_kexec(
            plan, db=db, resume=resume, executor_spec=executor_spec, jobs=jobs, reporter=reporter,
            cancel=cancel, seed_given=seed is not None,
        )  # fmt: skip
    kexec_out.show_kexec_run(console, outcome, as_json)
    failure = usecase.kexec_failure(outcome)
    if failure is not None:
        raise failure


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

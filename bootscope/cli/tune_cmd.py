"""``bootscope tune``: find what makes this boot faster, try it, and prove each saving."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from bootscope import defaults
from bootscope.cli import options, ssh_run
from bootscope.errors import InputError
from bootscope.metrics import DEFAULT_METRIC, LOGIN_PROMPT_S

if TYPE_CHECKING:
    from bootscope.usecases.tune.search import TuneResult

TUNE_FORMATS = ("table", "json", "markdown", "mail")


def tune(
    kernel: Annotated[
        str | None,
        typer.Argument(
            help="Kernel: a bzImage path or debian:<flavour|package> (with --image: optional);"
            " or a board, labgrid:ENV.yaml[:TARGET] (kexec reboots, or --reboot cold: from power-on), or a"
            " machine, ssh://USER@HOST[:PORT], tuned by kexec reboots."
        ),
    ] = None,
    image: Annotated[
        str | None,
        typer.Option("--image", help="Tune a system image (bootscope image build NAME) to its login prompt."),
    ] = None,
    append: Annotated[
        str,
        typer.Option(
            "--append",
            help="The baseline's kernel command line (a board or a machine: words added to its own).",
        ),
    ] = "",
    metric: Annotated[
        str | None,
        typer.Option(
            "--metric",
            help=f"The metric to make smaller (default {DEFAULT_METRIC}; with --image {LOGIN_PROMPT_S}).",
        ),
    ] = None,
    n: Annotated[int, typer.Option("-n", help="Boots an arm: the baseline and each knob (at least 4).")] = 6,
    budget: Annotated[
        int | None, typer.Option("--budget", help="Most boots in all; knobs past it are left untried.")
    ] = None,
    min_saving: Annotated[
        str,
        typer.Option(
            "--min-saving", help="The smallest saving worth boots: 20ms, 0.02 (s) or 1% of the baseline."
        ),
    ] = "1%",
    allow: Annotated[
        list[str] | None,
        typer.Option("--allow", help="Also try knobs of this risk class: feature, unsafe (repeat)."),
    ] = None,
    only: Annotated[
        list[str] | None, typer.Option("--only", help="Try only knobs named so (e.g. quiet; repeat).")
    ] = None,
    tries: Annotated[
        list[str] | None,
        typer.Option(
            "--try",
            help="Also try this command-line word: WORD or +WORD adds it, -NAME removes it;"
            " machine:PROPERTY=VALUE adds -machine PROPERTY=VALUE to a QEMU guest (repeat).",
        ),
    ] = None,
    smp: Annotated[int | None, typer.Option("--smp", help="vCPUs (default: 1).")] = None,
    mem: Annotated[int | None, typer.Option("--mem", help="Guest memory in MiB (default: 512).")] = None,
    icount: Annotated[
        int | None, typer.Option("--icount", help="TCG: -icount shift=N,sleep=off (one vCPU).")
    ] = None,
    accel: options.Accel = None,
    jobs: options.Jobs = None,
    seed: options.Seed = None,
    timeout: options.Timeout = None,
    alpha: Annotated[
        float, typer.Option(help="1 - the confidence of each saving's interval.")
    ] = defaults.ALPHA,
    resume: Annotated[
        str | None,
        typer.Option(
            "--resume", help="Go on with stored tune ID (its first run; or 'latest') after Ctrl-C or a crash."
        ),
    ] = None,
    reboot: ssh_run.Reboot = None,
    console: ssh_run.ConsoleCmd = None,
    console_device: ssh_run.ConsoleDevice = None,
    baud: ssh_run.Baud = 115200,
    identity: ssh_run.Identity = None,
    known_hosts: ssh_run.KnownHosts = None,
    no_checks: ssh_run.NoChecks = False,
    yes_this_machine: ssh_run.YesThisMachine = False,
    db: options.Db = defaults.DEFAULT_DB,
    fmt: Annotated[str, options.format_option(TUNE_FORMATS, "table")] = "table",
) -> None:
    """Boot the baseline, find the knobs its boot shows a reason for (each with its source and risk),
    boot each against the baseline, keep those whose whole interval is a saving and whose boots are
    still the same system, and confirm their combination in a final A/B."""
    from bootscope.amounts import parse_amount
    from bootscope.lab.plans.settings import GivenSettings
    from bootscope.lab.progress import RichReporter, SilentReporter
    from bootscope.lab.where import SSH, kind_of, stored_where
    from bootscope.store import Store
    from bootscope.usecases.tune.request import TuneRequest
    from bootscope.usecases.tune.search import resume_tune, tune_target
    from bootscope.usecases.tune.ssh import ssh_options

    options.check_format(fmt, TUNE_FORMATS)
    if resume is not None and (kernel or image or tries or only or allow or append or reboot):
        raise InputError(
            "--resume takes no KERNEL, --image, --append, --allow, --only, --try or --reboot:"
            " it goes on with the stored tune"
        )
    if not kernel and not image and resume is None:
        raise InputError("give a KERNEL (path or debian:cloud) or --image NAME to tune, or --resume ID")
    metric = metric or (LOGIN_PROMPT_S if image else DEFAULT_METRIC)
    floor, fraction = parse_amount(min_saving, "s", "--min-saving")
    machine = ssh_options(
        kernel, console, console_device, baud, identity, known_hosts, no_checks, yes_this_machine
    )
    if kernel and kind_of(kernel).tune_reboots and kind_of(kernel).name != SSH:  # a board, a domain
        machine = stored_where(kernel)  # checked after --reboot (tune_target)
    request = TuneRequest(
        kernel="" if machine else kernel or "", image=image, where=machine, tries=tuple(tries or ()),
        append=append, metric=metric,
        boots_per_arm=n, alpha=alpha, budget=budget,
        min_saving=None if floor is None else abs(floor), min_saving_fraction=abs(fraction or 0.01),
        allow=tuple(allow or ()), only=tuple(only or ()), machine={"smp": smp, "mem": mem, "icount": icount},
        settings=GivenSettings(seed=seed, timeout_s=timeout, accel=accel, jobs=jobs, warmup_per_variant=0),
        reboot=reboot, no_checks=no_checks, yes_this_machine=yes_this_machine,
    )  # fmt: skip
    reporter = RichReporter() if fmt == "table" else SilentReporter()
    with Store.open(db) as store:
        if resume is not None:
            result = resume_tune(resume, store, reporter)
        else:
            result = tune_target(request, store, reporter)
    _show(result, fmt)


def _show(result: TuneResult, fmt: str) -> None:
    """Write the tune's answer in ``fmt`` to stdout."""
    from bootscope.report.screen import stdout_width_cells
    from bootscope.report.tune_mail import tune_mail
    from bootscope.report.tune_out import tune_json, tune_markdown, tune_text

    if fmt == "json":
        sys.stdout.write(tune_json(result))
    elif fmt == "markdown":
        sys.stdout.write(tune_markdown(result))
    elif fmt == "mail":
        sys.stdout.write(tune_mail(result))
    else:
        sys.stdout.write(tune_text(result, stdout_width_cells(sys.stdout)))

"""``bootscope run KERNEL``: boot variants many times, interleaved, and store every sample."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from bootscope import defaults
from bootscope.cli import options, ssh_run
from bootscope.cli.signals import stop_on_signals
from bootscope.errors import InputError
from bootscope.metrics import INITRD_S
from bootscope.report.console import error_console, output_console

if TYPE_CHECKING:
    from bootscope.lab.progress import Reporter


def run(
    kernel: Annotated[
        str | None,
        typer.Argument(
            help="bzImage path or debian:cloud|amd64|rt|linux-image-<...> (optional with --plan), or"
            " ssh://USER@HOST[:PORT]: reboot that machine over SSH."
        ),
    ] = None,
    samples: Annotated[
        int | None,
        typer.Option("-n", "--samples", help=f"Boots per variant (default: {defaults.SAMPLES_PER_VARIANT})."),
    ] = None,
    variant: Annotated[
        list[str] | None,
        typer.Option(
            "--variant",
            help="NAME:OPTION=VALUE,... with OPTION append, kernel, smp, mem, cpu, icount, qemu-arg, marker,"
            " initrd, command, file, disk, image (repeat for each variant); labgrid: boards:"
            " reboot=cold|warm|kexec, append=WORDS (kexec reboots only).",
        ),
    ] = None,
    plan_file: Annotated[Path | None, typer.Option("--plan", help="TOML plan (same option names).")] = None,
    warmup: Annotated[
        int | None,
        typer.Option("--warmup", help=f"Warm-up boots per variant (default {defaults.WARMUP_BOOTS})."),
    ] = None,
    append: Annotated[str | None, typer.Option("--append", help="Kernel command line to add.")] = None,
    smp: Annotated[int | None, typer.Option("--smp", help="vCPUs (default: 1).")] = None,
    mem: Annotated[int | None, typer.Option("--mem", help="Guest memory in MiB (default: 512).")] = None,
    cpu: Annotated[str | None, typer.Option("--cpu", help="QEMU -cpu model.")] = None,
    icount: Annotated[
        int | None, typer.Option("--icount", help="TCG: -icount shift=N,sleep=off (one vCPU).")
    ] = None,
    qemu_arg: Annotated[list[str] | None, typer.Option("--qemu-arg", help="Extra QEMU arguments.")] = None,
    marker: Annotated[
        str | None, typer.Option("--marker", help="Regex of the line that ends a boot.")
    ] = None,
    initrd: Annotated[
        Path | None, typer.Option("--initrd", help="Your own initramfs (use --marker).")
    ] = None,
    command: Annotated[
        list[str] | None, typer.Option("--command", help="Shell command the guest runs before the marker.")
    ] = None,
    file: Annotated[
        list[str] | None,
        typer.Option(
            "--file", help="HOST_PATH:GUEST_PATH: copy a host file into bootscope's initramfs (repeatable)."
        ),
    ] = None,
    disk: Annotated[
        Path | None,
        typer.Option(
            "--disk",
            help="Your disk image as a virtio disk (never modified: snapshot=on). Without --initrd the"
            " guest boots from it: give --append 'root=/dev/vda ...' and --marker.",
        ),
    ] = None,
    disk_attach: Annotated[
        str | None,
        typer.Option(
            "--disk-attach",
            help="How the disk or image is attached: virtio, or nvdimm (a raw image as guest memory,"
            " /dev/pmem0; the guest's kernel needs nfit and nd_pmem), so that an --icount guest never"
            " waits on the host's disk and host load cannot reach its clock. Default: nvdimm for an"
            " image under --icount when it can be, else virtio.",
        ),
    ] = None,
    image: Annotated[
        str | None,
        typer.Option(
            "--image",
            help="Boot a system image (bootscope image build NAME) to its login prompt: its own kernel and"
            " initramfs, or KERNEL on the image's root (the image's initramfs when KERNEL is the image's"
            " release, else bootscope's initramfs loading KERNEL's own virtio modules:"
            f" {INITRD_S} is then that initramfs's time).",
        ),
    ] = None,
    seed: options.Seed = None,
    timeout: options.Timeout = None,
    accel: options.Accel = None,
    jobs: options.Jobs = None,
    executor_spec: options.ExecutorOpt = None,
    quiet_host: options.QuietHost = False,
    retries: options.Retries = None,
    until: options.Until = None,
    precision: options.Precision = None,
    max_n: options.MaxN = None,
    resume: options.Resume = None,
    meta: Annotated[
        list[str] | None,
        typer.Option(
            "--meta",
            help="KEY=VALUE label of the run (repeat): revision=SHA names its point in a watched series"
            " (default: the kernel release), revision_time=ISO orders it; other keys join its fingerprint.",
        ),
    ] = None,
    db: options.Db = defaults.DEFAULT_DB,
    fmt: Annotated[str, options.format_option(options.TABLE_JSON, "table")] = "table",
    reprobe: Annotated[
        bool, typer.Option("--reprobe", help="--accel auto: probe KVM again, not the remembered answer.")
    ] = False,
    reboot: ssh_run.Reboot = None,
    console: ssh_run.ConsoleCmd = None,
    console_device: ssh_run.ConsoleDevice = None,
    baud: ssh_run.Baud = 115200,
    identity: ssh_run.Identity = None,
    known_hosts: ssh_run.KnownHosts = None,
    target_kernel: ssh_run.TargetKernel = None,
    reuse_cmdline: ssh_run.ReuseCmdline = True,
    no_checks: ssh_run.NoChecks = False,
    yes_this_machine: ssh_run.YesThisMachine = False,
) -> None:
    """Boot a kernel (and variants) many times in QEMU, interleaved, and store every boot; or reboot
    a machine over SSH (ssh://USER@HOST), reboot after reboot; or boot a board from power-on through
    labgrid (labgrid:ENV.yaml[:TARGET])."""
    as_json = options.check_format(fmt, options.TABLE_JSON) == "json"
    from bootscope.lab.where import SSH, kind_of

    kind = kind_of(kernel) if kernel is not None else None
    if kernel is not None and kind is not None and "cold" in kind.reboots:  # powered: a board, a domain
        from bootscope.cli.board_run import run_board_cli
        from bootscope.usecases.board import BoardRequest

        qemu = any((image, append, smp, mem, cpu, icount, initrd, disk, qemu_arg, command, file))
        board = BoardRequest(
            kernel, reboot or "cold", samples, warmup, seed, timeout, marker, tuple(variant or ())
        )
        return run_board_cli(board, db, as_json, meta or (), qemu_options=qemu or plan_file is not None)
    if kernel is not None and kind is not None and kind.name == SSH:
        ssh_run.run_ssh(
            ssh_run.SshOptions(
                target=kernel, reboot=reboot, console=console, console_device=console_device, baud=baud,
                identity=identity, known_hosts=known_hosts, kernel=target_kernel, initrd=initrd,
                append=append, reuse_cmdline=reuse_cmdline, no_checks=no_checks,
                yes_this_machine=yes_this_machine, variants=tuple(variant or ()), samples=samples,
                warmup=warmup, seed=seed, timeout=timeout,
            ),
            db, as_json, meta or (),
        )  # fmt: skip
        return
    if reboot or console or console_device or identity or known_hosts or target_kernel or no_checks:
        raise InputError(
            "--reboot, --console, --console-device, --identity, --known-hosts, --kernel and --no-checks"
            " are for an ssh:// target"
        )
    # Imported here, not at the top: they pull in scipy and sqlalchemy, and every other command's
    # start-up (bootscope --help, analyze) would pay for them.
    from bootscope.lab.progress import RichReporter, SilentReporter
    from bootscope.report.run_out import show_run
    from bootscope.usecases.run import BootRequest, base_options, run_boots

    # Settings are read only for a new run: --resume reruns the stored plan's, whatever is given.
    settings = None if resume is not None else options.run_settings(
        samples=samples, warmup=warmup, seed=seed, timeout=timeout, accel=accel, jobs=jobs,
        quiet_host=quiet_host, until=until, precision=precision, max_n=max_n, retries=retries,
    )  # fmt: skip
    singles = {
        "image": image, "append": append, "smp": smp, "mem": mem, "cpu": cpu, "icount": icount,
        "marker": marker, "initrd": initrd, "disk": disk, "disk-attach": disk_attach,
    }  # fmt: skip
    given = base_options(singles, {"qemu-arg": qemu_arg, "command": command, "file": file})
    request = BootRequest(kernel, settings, given, tuple(variant or ()), plan_file, tuple(meta or ()))
    reporter: Reporter = SilentReporter() if as_json else RichReporter(error_console())
    cancel = threading.Event()
    with stop_on_signals(cancel):
        outcome = run_boots(
            request, db=db, resume=resume, executor_spec=executor_spec, jobs=jobs, reporter=reporter,
            cancel=cancel, reprobe=reprobe,
        )  # fmt: skip
    show_run(output_console(), outcome, as_json)

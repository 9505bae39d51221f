"""``bootscope run KERNEL``: boot variants many times, interleaved, and store every sample."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from bootscope import defaults
from bootscope.cli.console import error_console, output_console
from bootscope.cli.signals import stop_on_signals
from bootscope.errors import InputError

if TYPE_CHECKING:
    from bootscope.experiment.execute import RunResult
    from bootscope.experiment.progress import Reporter
    from bootscope.experiment.summary import VariantSummary

_MAX_FAILED_SHOWN = 10


def _precision(text: str | None) -> float | None:
    if text is None:
        return None
    raw = text.strip()
    try:
        return float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise InputError(
            f"--precision {text!r}: give a percentage such as 1% or a fraction such as 0.01"
        ) from None


def run(
    kernel: Annotated[
        str | None,
        typer.Argument(
            help="bzImage path or debian:cloud|amd64|rt|linux-image-<...> (optional with --plan)."
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
            " initrd, command, file, disk (repeat for each variant).",
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
    seed: Annotated[int | None, typer.Option("--seed", help="Boot order seed (default: random).")] = None,
    timeout: Annotated[
        float | None,
        typer.Option("--timeout", help=f"Seconds per boot (default {defaults.BOOT_TIMEOUT_S:g})."),
    ] = None,
    accel: Annotated[str | None, typer.Option("--accel", help="auto, kvm or tcg (default: auto).")] = None,
    jobs: Annotated[int | None, typer.Option("-j", "--jobs", help="Boots at once (default: 1).")] = None,
    quiet_host: Annotated[
        bool, typer.Option("--quiet-host", help="Wait for an idle host; re-run disturbed boots.")
    ] = False,
    until: Annotated[
        str | None,
        typer.Option(
            "--until",
            help="'precise': after -n rounds, add rounds until the 95% interval of each variant's shift"
            " against the first (one variant: of its median) is within +-precision of the first's median"
            " (userspace_s); never stops on a p-value.",
        ),
    ] = None,
    precision: Annotated[
        str | None, typer.Option("--precision", help="Target for --until, e.g. 1% (default 1%).")
    ] = None,
    max_n: Annotated[
        int | None,
        typer.Option("--max-n", help="--until: at most this many boots per variant (default 4 x -n)."),
    ] = None,
    resume: Annotated[
        str | None, typer.Option("--resume", help="Finish experiment ID (or 'latest').")
    ] = None,
    db: Annotated[str, typer.Option("--db", help="SQLite path or database URL.")] = defaults.DEFAULT_DB,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    reprobe: Annotated[
        bool, typer.Option("--reprobe", help="--accel auto: probe KVM again, not the remembered answer.")
    ] = False,
) -> None:
    """Boot a kernel (and variants) many times in QEMU, interleaved, and store every boot."""
    out = output_console()
    err = error_console()
    # Imported here, not at the top: they pull in scipy and sqlalchemy, and every other command's
    # start-up (bootscope --help, analyze) would pay for them.
    from bootscope.analyze.metrics import DEFINITIONS
    from bootscope.experiment.execute import resume_experiment, start_experiment
    from bootscope.experiment.plan import build_plan
    from bootscope.experiment.progress import RichReporter, SilentReporter
    from bootscope.experiment.summary import COMPARED_METRICS, compare_variants, failed_boots, summarize
    from bootscope.report import compare_out
    from bootscope.store import Store

    reporter: Reporter = SilentReporter() if as_json else RichReporter(err)
    cancel = threading.Event()
    with stop_on_signals(cancel), Store.open(db) as store:
        if resume is not None:
            if kernel or variant or plan_file:
                raise InputError("--resume takes no KERNEL, --variant or --plan: it reruns the stored plan")
            result = resume_experiment(resume, store, reporter, cancel=cancel)
        else:
            if not kernel and plan_file is None:
                raise InputError("give a KERNEL (path or debian:cloud), a --plan file, or --resume ID")
            if until is None and (precision is not None or max_n is not None):
                raise InputError("--precision and --max-n apply only with --until precise")
            options: list[tuple[str, Any]] = [
                (name, value)
                for name, value in (
                    ("append", append),
                    ("smp", smp),
                    ("mem", mem),
                    ("cpu", cpu),
                    ("icount", icount),
                    ("marker", marker),
                    ("initrd", initrd),
                    ("disk", disk),
                )
                if value is not None
            ]
            options += [("qemu-arg", value) for value in qemu_arg or []]
            options += [("command", value) for value in command or []]
            options += [("file", value) for value in file or []]
            plan = build_plan(
                kernel=kernel,
                base_options=options,
                variant_texts=variant or [],
                plan_file=plan_file,
                settings={
                    "samples_per_variant": samples,
                    "warmup_per_variant": warmup,
                    "seed": seed,
                    "timeout_s": timeout,
                    "accel": accel,
                    "jobs": jobs,
                    "quiet_host": quiet_host or None,
                    "until": until,
                    "precision": _precision(precision),
                    "max_n": max_n,
                },
            )
            result = start_experiment(plan, store, reporter, cancel=cancel, reprobe=reprobe)
        boots = store.boots(result.experiment.id)
        names = [v.name for v in result.experiment.variants]
        summaries = summarize(boots, names)
        failed = failed_boots(boots)
        comparisons, compare_notes = compare_variants(
            {metric: store.samples(result.experiment.id, metric) for metric in COMPARED_METRICS}, names
        )
        if as_json:
            document = _document(result, summaries, store.name)
            document["comparisons"] = [
                compare_out.comparison_dict(c, DEFINITIONS.get(c.metric, ""))
                for group in comparisons
                for c in group
            ]
            out.print_json(json.dumps(document))
            return
        _print_summary(out, result, summaries, store.name, seed_given=seed is not None or resume is not None)
        for group in comparisons:
            out.print(compare_out.table(group, DEFINITIONS.get(group[0].metric, "")))
        for note in compare_notes if comparisons else ():
            out.print(Text(f"not compared: {note}"))
        for boot in failed[:_MAX_FAILED_SHOWN]:
            out.print(
                f"  boot {boot.index} ({escape(boot.variant)}): [red]{escape(boot.outcome)}[/red]"
                f" {escape(boot.reason)}"
            )
        if len(failed) > _MAX_FAILED_SHOWN:
            out.print(f"  ... and {len(failed) - _MAX_FAILED_SHOWN} more failed boots (bootscope export)")


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _print_summary(
    out: Console, result: RunResult, summaries: list[VariantSummary], db: str, seed_given: bool
) -> None:
    exp = result.experiment
    counts = Table(title=f"experiment {exp.id}: {exp.status}", title_justify="left")
    counts.add_column("variant")
    for heading in ("ok", "failed", "warm-up", "disturbed"):
        counts.add_column(heading, justify="right")
    for summary in summaries:
        counts.add_row(
            escape(summary.name),
            str(summary.ok),
            str(summary.failed),
            str(summary.warmup),
            str(summary.disturbed),
        )
    out.print(counts)
    metrics = Table(title="measured ok boots (seconds)", title_justify="left")
    for heading in ("metric", "variant", "n", "median", "min", "max"):
        metrics.add_column(heading, justify="left" if heading in ("metric", "variant") else "right")
    from bootscope.experiment.summary import SUMMARY_METRICS

    for metric in SUMMARY_METRICS:
        for summary in summaries:
            spread = summary.metrics[metric]
            metrics.add_row(
                metric,
                escape(summary.name),
                str(spread.n),
                _fmt(spread.median),
                _fmt(spread.min),
                _fmt(spread.max),
            )
        metrics.add_section()
    out.print(metrics)
    out.print(f"accelerator: {escape(exp.accel)} ({escape(exp.accel_reason)})")
    how = "" if seed_given else f" (drawn at random: --seed {exp.seed} repeats this order)"
    out.print(f"seed: {exp.seed}{how}; boots run now: {result.boots_run}")
    if result.until_satisfied:
        how = "before --max-n" if result.stopped_early else "at --max-n"
        out.print(f"--until precise: the samples are precise enough ({how})")
    elif result.until_satisfied is False:
        out.print("--until precise: [yellow]not precise enough[/yellow] when --max-n was reached")
    out.print(f"stored: experiment {exp.id} in {escape(db)} (bootscope export {exp.id} --db {escape(db)})")


def _document(result: RunResult, summaries: list[VariantSummary], db: str) -> dict[str, Any]:
    exp = result.experiment
    return {
        "experiment": exp.id,
        "db": db,
        "status": exp.status,
        "seed": exp.seed,
        "accel": exp.accel,
        "accel_reason": exp.accel_reason,
        "boots_run": result.boots_run,
        "stopped_early": result.stopped_early,
        "until_satisfied": result.until_satisfied,
        "notes": list(result.notes),
        "variants": [
            {
                "name": s.name,
                "ok": s.ok,
                "failed": s.failed,
                "warmup": s.warmup,
                "disturbed": s.disturbed,
                "metrics": {
                    name: {"n": m.n, "median": m.median, "min": m.min, "max": m.max}
                    for name, m in s.metrics.items()
                },
            }
            for s in summaries
        ],
    }

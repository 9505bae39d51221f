"""`bootscope kexec`: measure kexec reboot downtime, chain by chain, and compare variants.

Each chain is one QEMU run (bootscope.sources.kexec); the chains of all variants run in the experiment
loop's interleaved, seeded order (bootscope.experiment.schedule). Every kernel of a chain is stored as
its own boot: the one QEMU started as a warm-up, each kexec reboot as a sample with
``kexec_downtime_s``, ``kexec_blind_s``, ``kexec_load_s`` and its own ``kernel_init_s``.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from bootscope import defaults
from bootscope.analyze.kexec import KexecHop, chain_hops
from bootscope.errors import BootError, InputError, StatsError
from bootscope.experiment.hostinfo import host_info
from bootscope.experiment.plan import resolve_seed
from bootscope.experiment.schedule import build_schedule
from bootscope.model import Comparison, Outcome
from bootscope.sources import kexec as chain
from bootscope.sources.kernels import read_image_release, resolve_kernel
from bootscope.stats.compare import compare_many
from bootscope.store import BootRecord, Store, VariantRecord

KEXEC_METRICS = ("kexec_downtime_s", "kexec_blind_s", "kexec_load_s", "kernel_init_s")
TCG_WARNING = (
    "QEMU TCG timings are not hardware timings: TCG emulates every instruction (purgatory's SHA-256 "
    "and decompression are far slower than on hardware), and the seed's big items scale with the "
    "machine (struct page init with memory, smpboot with CPUs). Use --mem/--smp lists for the trend, "
    "and --build-initramfs to run the same chain on a real machine."
)
_VARIANT_KEYS = ("no-checks", "file-load", "mem", "smp", "to", "append")


@dataclass(frozen=True, slots=True)
class KexecVariant:
    """One variant of a kexec experiment: the TO kernel spec, the load options and the machine."""

    name: str
    to: str
    options: chain.KexecOptions = field(default_factory=chain.KexecOptions)
    mem_mb: int = chain.DEFAULT_KEXEC_MEM_MB
    smp: int = defaults.DEFAULT_SMP
    append: str = ""

    def config(self) -> dict[str, object]:
        """Return the variant as JSON-able options for the store."""
        return {"to": self.to, "mem_mb": self.mem_mb, "smp": self.smp, "append": self.append} | asdict(
            self.options
        )


@dataclass(slots=True)
class KexecRun:
    """What a kexec experiment produced: its id and every kernel of every chain, by variant."""

    experiment_id: int
    hops_by_variant: dict[str, list[KexecHop]] = field(default_factory=dict)


def _flag(key: str, value: str) -> bool:
    if value.lower() in ("1", "true", "yes", "on"):
        return True
    if value.lower() in ("0", "false", "no", "off"):
        return False
    raise InputError(f"variant option {key} takes 1 or 0, not {value!r}")


def _positive_int(key: str, value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise InputError(f"variant option {key} takes a whole number, not {value!r}") from None
    if number < 1:
        raise InputError(f"variant option {key} must be >= 1 (got {number})")
    return number


def parse_variant(text: str, base: KexecVariant) -> KexecVariant:
    """Return ``base`` changed by ``NAME:key=value,...`` (keys: no-checks, file-load, mem, smp, to,
    append); raises InputError for a missing name, an unknown key or a bad value."""
    name, _, rest = text.partition(":")
    if not name.strip():
        raise InputError(f"variant {text!r} needs a name: NAME:no-checks=1,file-load=1,mem=2048,...")
    variant = replace(base, name=name.strip())
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, sep, value = item.partition("=")
        if not sep or key not in _VARIANT_KEYS:
            raise InputError(
                f"variant option {item!r}: use key=value with key one of {', '.join(_VARIANT_KEYS)}"
            )
        if key == "no-checks":
            variant = replace(variant, options=replace(variant.options, no_checks=_flag(key, value)))
        elif key == "file-load":
            variant = replace(variant, options=replace(variant.options, file_load=_flag(key, value)))
        elif key == "mem":
            variant = replace(variant, mem_mb=_positive_int(key, value))
        elif key == "smp":
            variant = replace(variant, smp=_positive_int(key, value))
        elif key == "to":
            variant = replace(variant, to=value)
        else:
            variant = replace(variant, append=value)
    return variant


def build_variants(base: KexecVariant, texts: Sequence[str], mem_list: Sequence[int]) -> list[KexecVariant]:
    """Return the experiment's variants: ``texts`` parsed against ``base``, or one per memory size in
    ``mem_list`` (the trend), or ``base`` alone; raises InputError for duplicates or a bad spec."""
    if texts and len(mem_list) > 1:
        raise InputError("give either --variant or a --mem list, not both")
    if texts:
        variants = [parse_variant(text, base) for text in texts]
    elif len(mem_list) > 1:
        variants = [replace(base, name=f"mem{mem}", mem_mb=mem) for mem in mem_list]
    else:
        variants = [base]
    names = [variant.name for variant in variants]
    if len(set(names)) != len(names):
        raise InputError(f"variant names must be unique, got {names}")
    return variants


def resolve_to(spec: str) -> tuple[Path, str | None]:
    """Return the TO kernel's path and release. A plain path is taken as is, even if it is not a
    kernel: the guest's kexec refusing it is a result to record. Raises BootError/InputError."""
    if spec.startswith("debian:"):
        image = resolve_kernel(spec)
        return image.image, image.release
    path = Path(spec).expanduser()
    if not path.is_file():
        raise InputError(f"no such TO kernel: {spec}")
    try:
        return path.resolve(), read_image_release(path)
    except BootError:
        return path.resolve(), None


def _metrics_dict(hop: KexecHop) -> dict[str, float | None]:
    return {key: value for key, value in asdict(hop.metrics).items() if value is not None}


def run_kexec_experiment(
    store: Store,
    from_spec: str,
    variants: Sequence[KexecVariant],
    hops: int,
    chains: int,
    seed: int | None = None,
    timeout_s: float | None = None,
    console: Console | None = None,
) -> KexecRun:
    """Run ``chains`` chains of ``hops`` kexec reboots per variant in interleaved seeded order and
    store every kernel as its own boot as soon as its chain ends; return what ran.

    Raises BootError (no QEMU, kernel, kexec or busybox), InputError (bad options) or StoreError.
    """
    if hops < 1 or chains < 1:
        raise InputError(f"need at least one kexec reboot and one chain (got -n {hops}, --chains {chains})")
    from_image = resolve_kernel(from_spec)
    initrds = {variant.name: chain.build_chain_initramfs(resolve_to(variant.to)[0]) for variant in variants}
    releases = {variant.name: resolve_to(variant.to)[1] for variant in variants}
    seed = resolve_seed(seed)
    plan = {
        "command": "kexec",
        "from": from_spec,
        "hops": hops,
        "chains": chains,
        "variants": [{"name": v.name, **v.config()} for v in variants],
    }
    experiment = store.create_experiment(
        plan=plan,
        seed=seed,
        accel="tcg",
        accel_reason="bootscope kexec runs under TCG",
        host=host_info(),
        variants=[VariantRecord(name=v.name, config=v.config()) for v in variants],
    )
    run = KexecRun(experiment.id, {variant.name: [] for variant in variants})
    by_name = {variant.name: variant for variant in variants}
    index = 0
    for slot in build_schedule([v.name for v in variants], samples=chains, warmup=0, seed=seed):
        variant = by_name[slot.variant]
        if console is not None:
            console.print(
                f"chain {slot.round + 1}/{chains} of variant {escape(variant.name)}: {hops} kexec reboots"
            )
        config = chain.ChainConfig(
            from_kernel=from_image.image,
            initrd=initrds[variant.name],
            hops=hops,
            options=variant.options,
            append=variant.append,
            smp=variant.smp,
            mem_mb=variant.mem_mb,
            timeout_s=timeout_s,
        )
        boot = chain.run_chain(config)
        for hop in chain_hops(boot, hops):
            record = BootRecord(
                variant=variant.name,
                index=index,
                warmup=not hop.is_reboot,
                outcome=hop.outcome.value,
                reason=hop.reason,
                accel=boot.accel,
                command=boot.command,
                kernel_release=releases[variant.name] if hop.is_reboot else from_image.release,
                host_start_ns=hop.start_host_ns,
                metrics=_metrics_dict(hop),
            )
            store.record_boot(experiment.id, record, hop.lines)
            run.hops_by_variant[variant.name].append(hop)
            index += 1
    store.set_status(experiment.id, "complete")
    return run


def metric_values(hops: Sequence[KexecHop], metric: str) -> list[float]:
    """Return the values (s) of ``metric`` over the ok kexec reboots in ``hops``."""
    values = []
    for hop in hops:
        value = getattr(hop.metrics, metric)
        if hop.is_reboot and hop.outcome is Outcome.OK and value is not None:
            values.append(float(value))
    return values


def compare_variants(run: KexecRun) -> tuple[list[Comparison], list[str]]:
    """Return each later variant compared with the first, per kexec metric, and notes on metrics that
    could not be compared (fewer than 2 samples a side)."""
    names = list(run.hops_by_variant)
    comparisons: list[Comparison] = []
    notes: list[str] = []
    if len(names) < 2:
        return comparisons, notes
    for metric in KEXEC_METRICS:
        baseline = metric_values(run.hops_by_variant[names[0]], metric)
        others = {name: metric_values(run.hops_by_variant[name], metric) for name in names[1:]}
        try:
            comparisons += compare_many(baseline, others, metric, "s", baseline_name=names[0])
        except StatsError as error:
            notes.append(f"{metric}: not compared ({error})")
    return comparisons, notes


def _median(values: Sequence[float]) -> str:
    return f"{statistics.median(values):.3f}" if values else "-"


def _print_summary(console: Console, run: KexecRun) -> None:
    table = Table(title=f"kexec reboots (run {run.experiment_id}), medians in seconds")
    for column in ("variant", "ok", "failed", *KEXEC_METRICS):
        table.add_column(column, justify="left" if column == "variant" else "right")
    for name, hops in run.hops_by_variant.items():
        reboots = [hop for hop in hops if hop.is_reboot]
        failed = [hop for hop in hops if hop.outcome is not Outcome.OK]
        ok = [hop for hop in reboots if hop.outcome is Outcome.OK]
        cells = [_median(metric_values(hops, metric)) for metric in KEXEC_METRICS]
        table.add_row(escape(name), str(len(ok)), str(len(failed)), *cells)
    console.print(table)
    for name, hops in run.hops_by_variant.items():
        for hop in hops:
            if hop.outcome is not Outcome.OK:
                console.print(
                    f"[red]{escape(name)} kernel {hop.hop}: {hop.outcome.value}[/red]: {escape(hop.reason)}"
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
        bool, typer.Option("--no-checks", help="kexec -i: purgatory skips its checksum.")
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
    """Measure kexec reboot downtime: one QEMU boot of FROM, then a chain of kexec reboots into TO."""
    console = Console()
    try:
        mem_list = [int(part) for part in mem.split(",") if part.strip()]
    except ValueError:
        raise InputError(f"--mem takes MiB or a comma-separated list of MiB, not {mem!r}") from None
    if not mem_list or min(mem_list) < 64:
        raise InputError(f"--mem needs sizes of at least 64 MiB (got {mem!r})")
    to_spec = to if to is not None else from_kernel
    if build_initramfs is not None:
        initrd = chain.build_chain_initramfs(resolve_to(to_spec)[0])
        chain.write_initramfs(initrd, build_initramfs)
        console.print(
            f"wrote {escape(str(build_initramfs))}: boot it with bootscope.hops=N on the kernel command line"
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
    console.print(f"[yellow]warning:[/yellow] {TCG_WARNING}")
    with Store.open(db) as store:
        run = run_kexec_experiment(store, from_kernel, variants, hops, chains, seed, timeout, console)
    _print_summary(console, run)
    comparisons, notes = compare_variants(run)
    _print_comparisons(console, comparisons, notes)
    console.print(
        f"stored as run {run.experiment_id} in {escape(db)} (see `bootscope compare {run.experiment_id}`)"
    )
    console.print(f"[yellow]warning:[/yellow] {TCG_WARNING}")

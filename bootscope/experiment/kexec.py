"""Run a kexec experiment: chains of kexec reboots per variant, interleaved, each reboot stored at once.

A chain is one QEMU run (bootscope.sources.kexec): QEMU boots the FROM kernel and the guest kexecs
``hops`` times. The chains of all variants run in the experiment package's seeded, interleaved order
(:func:`~bootscope.experiment.schedule.build_schedule`, one chain per slot). Every kernel of a chain is
stored as its own boot while QEMU still runs: the kernel QEMU started as a warm-up, each kexec reboot
as a sample with ``kexec_downtime_s``, ``kexec_blind_s``, ``kexec_load_s`` and its own
``kernel_init_s``. Ctrl-C keeps every reboot whose new kernel printed its init marker.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from bootscope import defaults
from bootscope.analyze.kexec import KEXEC_METRICS, MARKER_RE, KexecHop, chain_hops
from bootscope.errors import BootError, BootscopeError, InputError, StatsError
from bootscope.experiment.execute import RunResult, recording_status
from bootscope.experiment.hostinfo import host_info
from bootscope.experiment.plan import resolve_seed
from bootscope.experiment.progress import Reporter, SilentReporter
from bootscope.experiment.schedule import Slot, build_schedule
from bootscope.model import Boot, Comparison, LogLine, Outcome
from bootscope.sources import kexec as chain
from bootscope.sources.kernels import read_image_release, resolve_kernel
from bootscope.sources.qemu import build_command, validate
from bootscope.stats.compare import compare_many
from bootscope.store import BootRecord, Store, VariantRecord
from bootscope.store.records import STATUS_COMPLETE

_VARIANT_KEYS = ("no-checks", "file-load", "mem", "smp", "to", "append")
# Why `-i` does nothing with `-s`: kexec_file_load(2) takes only the flags KEXEC_FILE_UNLOAD,
# KEXEC_FILE_ON_CRASH and KEXEC_FILE_NO_INITRAMFS (include/uapi/linux/kexec.h), and the kernel loads
# its own purgatory (arch/x86/purgatory/purgatory.c), which always verifies the SHA-256 digest.
FILE_LOAD_IGNORES_NO_CHECKS = (
    "kexec -s (kexec_file_load) ignores -i/--no-checks: the kernel loads its own purgatory, which"
    " always verifies its SHA-256 digest, and the syscall has no flag to skip that"
)
INTERRUPTED_REASON = "stored when the chain was interrupted: the log ends there"


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


def ignored_options(variant: KexecVariant) -> tuple[str, ...]:
    """Return notes on options of ``variant`` that have no effect (``-i`` with ``-s``), for the user."""
    if variant.options.file_load and variant.options.no_checks:
        return (f"variant {variant.name}: {FILE_LOAD_IGNORES_NO_CHECKS}",)
    return ()


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


class ChainRecorder:
    """Stores one chain's kernels while QEMU runs: pass :meth:`on_line` to ``run_chain``.

    When kernel k's init marker arrives, kernel k-1 is complete (its last lines, ``kexec-exec`` and
    the old kernel's ``Starting new kernel``, came before) and is stored with its whole log. Kernel k
    waits for the next init marker or :meth:`finish`; on Ctrl-C :meth:`flush` stores it with the log
    so far, since its measurement (the reboot ending at its init marker) is complete.
    Only the last three kernels' lines are re-split per init marker, so the work per line stays small
    and the host stamps of the lines that follow are not delayed.
    """

    def __init__(
        self,
        store: Store,
        experiment_id: int,
        variant: str,
        *,
        first_index: int,
        round_number: int,
        releases: tuple[str | None, str | None],
        hops_planned: int | None = None,
        command: tuple[str, ...] = (),
        accel: str = "tcg",
        reporter: Reporter | None = None,
        cancel: threading.Event | None = None,
    ) -> None:
        self.store = store
        self.experiment_id = experiment_id
        self.variant = variant
        self.next_index = first_index
        self.round_number = round_number
        self.hops_planned = hops_planned
        self.from_release, self.to_release = releases
        self.accel = accel
        self.reporter = reporter or SilentReporter()
        self.cancel = cancel or threading.Event()
        self.host_start_ns: int | None = None
        self.command = command
        self.lines: list[LogLine] = []
        self.records: list[BootRecord] = []
        self._init_at: dict[int, int] = {}
        self._done: set[int] = set()

    def start(self, host_start_ns: int | None = None) -> None:
        """Note QEMU's start (host ns, default now) and tell the reporter hop 0 begins."""
        self.host_start_ns = time.monotonic_ns() if host_start_ns is None else host_start_ns
        self.reporter.boot_started(self._slot(self.next_index, warmup=True))

    def on_line(self, line: LogLine) -> None:
        """Take one serial line; store the kernel before this one if ``line`` is an init marker.

        Raises KeyboardInterrupt if ``cancel`` is set, StoreError if the store fails."""
        if self.cancel.is_set():
            raise KeyboardInterrupt
        self.lines.append(line)
        match = MARKER_RE.search(line.text)
        if match is None or (match.group("name") or "init") != "init" or match.group("hop") is None:
            return
        hop = int(match.group("hop"))
        self._init_at.setdefault(hop, len(self.lines) - 1)
        if hop >= 1:
            self._record(first_hop=hop - 2, wanted=(hop - 1,), reason="")

    def flush(self) -> None:
        """Store every kernel whose init marker arrived and is not stored yet (Ctrl-C, a failure
        that stopped the chain), with its log so far. Raises StoreError."""
        if self._init_at:
            latest = max(self._init_at)
            self._record(first_hop=latest - 2, wanted=(latest - 1, latest), reason=INTERRUPTED_REASON)

    def finish(self, boot: Boot, hops_planned: int) -> None:
        """Store the rest of the chain from QEMU's whole capture ``boot``: the last kernels and the
        chain's fault (kexec-error, timeout, panic) as a failed sample. Raises StoreError."""
        self.command = boot.command
        for hop in chain_hops(boot, hops_planned):
            if hop.hop not in self._done:
                self._store(hop, "")

    def _record(self, first_hop: int, wanted: tuple[int, ...], reason: str) -> None:
        # Split only from the init marker of ``first_hop`` on: that kernel's tail carries the
        # kexec-prep/-load/-exec markers the next reboot's metrics need; its own metrics would be
        # wrong in this window, so it is never among the ``wanted`` hops (it is stored already).
        start = self._init_at.get(first_hop, 0) if first_hop >= 1 else 0
        window = Boot(lines=tuple(self.lines[start:]), outcome=Outcome.OK, host_start_ns=self.host_start_ns)
        for hop in chain_hops(window):
            if hop.outcome is Outcome.OK and hop.hop in wanted and hop.hop not in self._done:
                self._store(hop, reason)

    def _store(self, hop: KexecHop, reason: str) -> None:
        record = BootRecord(
            variant=self.variant,
            index=self.next_index,
            warmup=not hop.is_reboot,
            outcome=hop.outcome.value,
            reason=hop.reason or reason,
            accel=self.accel,
            command=self.command,
            kernel_release=self.to_release if hop.is_reboot else self.from_release,
            host_start_ns=hop.start_host_ns,
            metrics=_metrics_dict(hop),
        )
        self.store.record_boot(self.experiment_id, record, hop.raw_lines or hop.lines)
        self._done.add(hop.hop)
        self.records.append(record)
        self.reporter.boot_done(self._slot(record.index, record.warmup), record)
        self.next_index += 1
        if hop.outcome is Outcome.OK and (self.hops_planned is None or hop.hop < self.hops_planned):
            self.reporter.boot_started(self._slot(self.next_index, warmup=False))

    def _slot(self, index: int, warmup: bool) -> Slot:
        return Slot(index=index, variant=self.variant, warmup=warmup, round=self.round_number)


def _plan(from_spec: str, variants: Sequence[KexecVariant], hops: int, chains: int) -> dict[str, Any]:
    notes = [note for variant in variants for note in ignored_options(variant)]
    return {
        "command": "kexec",
        "from": from_spec,
        "hops": hops,
        "chains": chains,
        "variants": [{"name": v.name, **v.config()} for v in variants],
        "notes": notes,
    }


def run_kexec_experiment(
    store: Store,
    from_spec: str,
    variants: Sequence[KexecVariant],
    hops: int,
    chains: int,
    seed: int | None = None,
    timeout_s: float | None = None,
    reporter: Reporter | None = None,
    cancel: threading.Event | None = None,
) -> RunResult:
    """Run ``chains`` chains of ``hops`` kexec reboots per variant in interleaved seeded order, store
    every kernel as its own boot as soon as it is complete, and return how the run ended (``boots_run``
    counts stored kernels; ``notes`` name ignored options).

    Setting ``cancel`` stops the run like Ctrl-C. Raises BootError (no QEMU, kernel, kexec or
    busybox) or InputError (bad options) before anything is stored, StoreError if the store fails,
    KeyboardInterrupt on Ctrl-C after storing the completed reboots and marking the run interrupted.
    """
    if hops < 1 or chains < 1:
        raise InputError(f"need at least one kexec reboot and one chain (got -n {hops}, --chains {chains})")
    if not variants:
        raise InputError("a kexec experiment needs at least one variant")
    reporter = reporter or SilentReporter()
    cancel = cancel or threading.Event()
    from_image = resolve_kernel(from_spec)
    targets = {variant.name: resolve_to(variant.to) for variant in variants}
    initrds = {name: chain.build_chain_initramfs(path) for name, (path, _release) in targets.items()}
    configs = {
        v.name: chain.ChainConfig(
            from_kernel=from_image.image,
            initrd=initrds[v.name],
            hops=hops,
            options=v.options,
            append=v.append,
            smp=v.smp,
            mem_mb=v.mem_mb,
            timeout_s=timeout_s,
        )
        for v in variants
    }
    for config in configs.values():
        validate(chain.boot_config(config))  # InputError for bad options before anything is stored
    seed = resolve_seed(seed)
    plan = _plan(from_spec, variants, hops, chains)
    experiment = store.create_experiment(
        plan=plan,
        seed=seed,
        accel="tcg",
        accel_reason="bootscope kexec runs under TCG (KVM hangs on this kind of host)",
        host=host_info(),
        variants=[VariantRecord(name=v.name, config=v.config()) for v in variants],
    )
    schedule = build_schedule([v.name for v in variants], samples=chains, warmup=0, seed=seed)
    reporter.started(experiment.id, len(schedule) * (hops + 1), 0)
    stored = 0
    with recording_status(store, experiment.id, reporter):
        for slot in schedule:
            recorder = ChainRecorder(
                store,
                experiment.id,
                slot.variant,
                first_index=stored + 1,
                round_number=slot.round,
                releases=(from_image.release, targets[slot.variant][1]),
                hops_planned=hops,
                command=tuple(build_command(chain.boot_config(configs[slot.variant]))),
                reporter=reporter,
                cancel=cancel,
            )
            recorder.start()
            try:
                boot = chain.run_chain(configs[slot.variant], on_line=recorder.on_line)
            except BaseException:
                with contextlib.suppress(BootscopeError):
                    recorder.flush()
                stored += len(recorder.records)
                raise
            recorder.finish(boot, hops)
            stored += len(recorder.records)
    return RunResult(
        experiment=store.experiment(experiment.id),
        status=STATUS_COMPLETE,
        boots_run=stored,
        notes=tuple(plan["notes"]),
    )


def failed_samples(boots: Sequence[BootRecord]) -> list[BootRecord]:
    """Return the stored kernels that did not end ok (kexec-error, timeout, panic, ...), in order."""
    return [boot for boot in boots if not boot.superseded and boot.outcome != Outcome.OK.value]


def metric_values(boots: Sequence[BootRecord], variant: str, metric: str) -> list[float]:
    """Return the values (s) of ``metric`` over ``variant``'s ok kexec reboots (warm-ups left out)."""
    values = []
    for boot in boots:
        value = boot.metrics.get(metric)
        if boot.variant == variant and not boot.warmup and boot.outcome == "ok" and value is not None:
            values.append(float(value))
    return values


def compare_variants(store: Store, experiment_id: int) -> tuple[list[Comparison], list[str]]:
    """Return each later variant of a stored kexec run compared with the first, per kexec metric (s),
    and notes on metrics that could not be compared (fewer than 2 samples a side). Raises StoreError."""
    names = [variant.name for variant in store.experiment(experiment_id).variants]
    comparisons: list[Comparison] = []
    notes: list[str] = []
    if len(names) < 2:
        return comparisons, notes
    for metric in KEXEC_METRICS:
        samples = store.samples(experiment_id, metric)
        baseline = samples.get(names[0], [])
        others = {name: samples.get(name, []) for name in names[1:]}
        try:
            comparisons += compare_many(baseline, others, metric, "s", baseline_name=names[0])
        except StatsError as error:
            notes.append(f"{metric}: not compared ({error})")
    return comparisons, notes

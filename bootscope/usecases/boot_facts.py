"""The facts of boots that the like-for-like guard compares (``analyze.like_for_like.BootFacts``),
read from where a command's boots come from: a stored run's records (cheap: the QEMU command line,
the kernel release and the placement each boot stored) or log files (each boot's own statement of
its release, command line, CPUs and memory)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from bootscope.analyze.like_for_like import BootFacts, facts_from_identity

if TYPE_CHECKING:  # sqlalchemy: only for stored runs
    from bootscope.store import BootRecord, Store


def _option(command: Sequence[str], name: str) -> str | None:
    """Return the value after the last ``name`` in ``command`` (a QEMU argv), or None."""
    found = None
    for i, word in enumerate(command[:-1]):
        if word == name:
            found = command[i + 1]
    return found


def _leading_int(text: str | None) -> int | None:
    head = (text or "").split(",")[0].split("=")[-1]
    return int(head) if head.isdigit() else None


def facts_from_record(record: BootRecord) -> BootFacts:
    """Return what a stored boot's record states: kernel release, the ``-append`` command line, the
    ``-smp`` CPUs and ``-m`` memory (MiB) of its QEMU command, the accelerator, the host it ran
    on, its kernel release and CPU model (None where the record does not say: a boot on hardware
    has no QEMU command). Raises nothing."""
    command = tuple(record.command)
    memory = _leading_int(_option(command, "-m"))
    placement = record.placement or {}
    host = placement.get("host")
    return BootFacts(
        release=record.kernel_release,
        cmdline=_option(command, "-append"),
        cpus=_leading_int(_option(command, "-smp")),
        memory_mib=None if memory is None else float(memory),
        accelerator=record.accel or None,
        host=str(host) if host else None,
        host_kernel=str(placement["host_kernel"]) if placement.get("host_kernel") else None,
        host_cpu=str(placement["cpu_model"]) if placement.get("cpu_model") else None,
    )


def facts_of_run(store: Store, run: int | str) -> dict[str, list[BootFacts]]:
    """Return, per variant of stored run ``run``, the facts of its counting boots (ok, final,
    measured). Raises StoreError for an unknown run."""
    experiment = store.experiment(run)
    return facts_by_variant([variant.name for variant in experiment.variants], store.boots(experiment.id))


def facts_by_variant(names: Sequence[str], records: Sequence[BootRecord]) -> dict[str, list[BootFacts]]:
    """Return, per variant (``names`` first, in order), the facts of its counting boots among
    ``records`` (ok, final, measured)."""
    found: dict[str, list[BootFacts]] = {name: [] for name in names}
    for record in records:
        if record.counts:
            found.setdefault(record.variant, []).append(facts_from_record(record))
    return found


def facts_of_logs(paths: Sequence[Path]) -> list[BootFacts]:
    """Return the facts every boot of the logs that ``paths`` name states (as ``compare`` reads
    them); a file that cannot be read is left out (the reading of its times says why). Raises
    nothing for unreadable files; InputError for a path that names no file."""
    from bootscope.analyze import analyze_boot  # the analysis stack: only for logs
    from bootscope.errors import BootscopeError
    from bootscope.parse import parse_log
    from bootscope.sources.files import read_text_lines
    from bootscope.sources.paths import log_files

    found: list[BootFacts] = []
    for file in log_files(paths):
        try:
            parsed = parse_log(read_text_lines(str(file)))
        except BootscopeError:
            continue
        found += [facts_from_identity(analyze_boot(lines).identity) for lines in parsed.boots]
    return found

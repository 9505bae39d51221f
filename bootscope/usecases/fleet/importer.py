"""``bootscope fleet import``: many logs with host metadata into the store, analysed on every core.

The files are hashed here first (sha256 of their bytes): a file whose hash the store already holds,
or that appeared earlier in the same import, is skipped, so importing twice stores once. The rest
are analysed in a process pool (one analysis per file, in chunks of files per task so that a
thousand small logs do not cost a thousand round trips) and written by this process alone, in
batches of files, one transaction each. A file that cannot be read or timed, or that holds no kernel
line (a README quoting one stamped line), is counted and listed, never a reason to stop. Pasted
systemd-analyze output is imported as one boot of userspace timings and counted apart
(``systemd_pastes``). A field that a boot's log gives (``arch``, ``cpus``,
``memory_gib``) is left out where the metadata CSV gives the same field for the file.
"""

from __future__ import annotations

import csv
import hashlib
import os
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from bootscope.errors import InputError, ParseError
from bootscope.store import Store
from bootscope.store.fleet import (
    OUTCOME_FAILED,
    OUTCOME_INCOMPLETE,
    OUTCOME_NOT_RUN,
    OUTCOME_OK,
    FleetBoot,
    FleetFile,
    known_hashes,
    record_files,
)
from bootscope.usecases.fleet.host_fields import LOG_FIELDS
from bootscope.usecases.fleet.logfile import SYSTEMD_FORMAT, FileBoots, read_fleet_files
from bootscope.usecases.fleet.results import OutcomeCounts

META_FILE_COLUMN = "file"
FILES_PER_TASK = 16  # a task of 16 small logs takes ~0.1 s: pool overhead stays a few percent
FILES_PER_TRANSACTION = 256
_HASH_CHUNK_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class FleetInput:
    """One file to import: its path and its metadata fields (empty when the CSV has no row)."""

    path: str
    meta: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What an import did: files found, imported, already stored (or repeated), boots stored, the
    bad files with their one-line reasons, files the metadata CSV did not name, the seconds, and
    how many of the imported files were systemd-analyze pastes (userspace timings, no kernel log)
    and the imported boots by outcome."""

    files: int
    imported: int
    already_stored: int
    boots: int
    bad: tuple[tuple[str, str], ...]
    without_meta: int
    elapsed_s: float
    systemd_pastes: int = 0
    counts: OutcomeCounts = field(default_factory=OutcomeCounts)

    @property
    def failure(self) -> ParseError | None:
        """Return the error the command exits with (5) when no file given could be read as a boot
        log and none was stored before; None otherwise."""
        if self.bad and self.imported == 0 and self.already_stored == 0:
            return ParseError(f"none of the {self.files} file(s) could be read as a boot log")
        return None


def read_meta(csv_path: Path) -> dict[str, dict[str, str]]:
    """Return file (as the CSV names it) -> metadata fields of a host metadata CSV (a header row
    with a ``file`` column; every other column is a field). Raises InputError for a missing file,
    no ``file`` column or a file named twice."""
    try:
        with csv_path.open(newline="", encoding="utf-8-sig") as handle:  # a spreadsheet's BOM too
            reader = csv.DictReader(handle)
            if reader.fieldnames is None or META_FILE_COLUMN not in reader.fieldnames:
                raise InputError(f"{csv_path}: the metadata CSV needs a '{META_FILE_COLUMN}' column")
            rows: dict[str, dict[str, str]] = {}
            for line, row in enumerate(reader, start=2):
                name = (row.get(META_FILE_COLUMN) or "").strip()
                if not name:
                    raise InputError(f"{csv_path}:{line}: empty '{META_FILE_COLUMN}'")
                if name in rows:
                    raise InputError(f"{csv_path}:{line}: {name} is named twice")
                rows[name] = {
                    key.strip(): (value or "").strip()
                    for key, value in row.items()
                    if key and key != META_FILE_COLUMN and (value or "").strip()
                }
            return rows
    except OSError as error:
        raise InputError(f"cannot read the metadata CSV {csv_path}: {error.strerror or error}") from error
    except (UnicodeError, csv.Error) as error:
        raise InputError(f"{csv_path}: not a readable CSV ({error})") from error


def _walk(directory: Path, skip: Path | None) -> Iterator[Path]:
    for root, dirs, names in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            path = Path(root) / name
            if not name.startswith(".") and (skip is None or path.resolve() != skip) and path.is_file():
                yield path


def fleet_inputs(
    targets: Sequence[str], meta_csv: Path | None
) -> tuple[list[FleetInput], list[tuple[str, str]]]:
    """Return the files to import and the CSV rows naming no file (path, reason).

    One directory: every file under it (hidden ones and the CSV itself left out), CSV names relative
    to it. Files: each as given, CSV names relative to the CSV's directory. Raises InputError for a
    path that does not exist or a directory given with other paths."""
    meta = read_meta(meta_csv) if meta_csv is not None else {}
    skip = meta_csv.resolve() if meta_csv is not None else None
    if not targets:
        raise InputError("give a directory or files to import")
    directories = [t for t in targets if Path(t).is_dir()]
    if directories and len(targets) > 1:
        raise InputError("give one directory, or files, not both")
    base = Path(directories[0]) if directories else (meta_csv.parent if meta_csv is not None else Path("."))
    if directories:
        paths = list(_walk(base, skip))
    else:
        missing = [t for t in targets if not Path(t).exists()]
        if missing:
            raise InputError(f"no such file: {missing[0]}")
        paths = [Path(t) for t in targets]
    by_resolved = {(base / name).resolve(): name for name in meta}
    inputs, named = [], set()
    for path in paths:
        name = by_resolved.get(path.resolve())
        if name is not None:
            named.add(name)
        inputs.append(FleetInput(str(path), meta.get(name, {}) if name is not None else {}))
    unnamed = [
        (str(base / name), "named in the metadata CSV, not found") for name in meta if name not in named
    ]
    return inputs, unnamed


def file_sha256(path: str) -> str | None:
    """Return the sha256 (hex) of a file's bytes, None when it cannot be read."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(_HASH_CHUNK_BYTES):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()


def _chunks(items: Sequence[str], size: int) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


def _analysed(paths: Sequence[str], workers: int) -> Iterator[FileBoots]:
    if workers <= 1 or len(paths) <= FILES_PER_TASK:
        yield from read_fleet_files(paths)
        return
    # forkserver: the workers do not inherit this process's database connections or threads.
    import multiprocessing

    context = multiprocessing.get_context("forkserver")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        for batch in pool.map(read_fleet_files, _chunks(paths, FILES_PER_TASK)):
            yield from batch


def _under_given(boot: FleetBoot, given: Mapping[str, str]) -> FleetBoot:
    """``boot`` without the log fields that the file's metadata gives too (the CSV wins: a stored
    boot's own metadata would otherwise be read over the file's)."""
    if not given or not any(key in given for key in LOG_FIELDS):
        return boot
    return replace(boot, meta={k: v for k, v in boot.meta.items() if k not in LOG_FIELDS or k not in given})


def import_fleet(
    store: Store, targets: Sequence[str], meta_csv: Path | None = None, workers: int | None = None
) -> ImportReport:
    """Import fleet logs into ``store`` and return what happened (see the module docstring).
    ``workers`` defaults to every core. Raises InputError for bad arguments or metadata CSV,
    StoreError for a database failure (the batches written before it stay stored)."""
    started = time.monotonic()
    inputs, bad = fleet_inputs(targets, meta_csv)
    hashes: dict[str, str] = {}
    for item in inputs:
        digest = file_sha256(item.path)
        if digest is None:
            bad.append((item.path, "cannot be read"))
        else:
            hashes[item.path] = digest
    stored = known_hashes(store, hashes.values())
    seen: set[str] = set(stored)
    todo: list[FleetInput] = []
    for item in inputs:
        digest = hashes.get(item.path)
        if digest is not None and digest not in seen:
            seen.add(digest)
            todo.append(item)
    repeated = len(hashes) - len(todo)
    meta_of = {item.path: item.meta for item in todo}
    pending: list[FleetFile] = []
    imported = boots = pastes = 0
    outcomes: Counter[str] = Counter()
    for result in _analysed([item.path for item in todo], workers or os.cpu_count() or 1):
        if result.error is not None:
            bad.append((result.path, result.error))
            continue
        meta = meta_of[result.path]
        pastes += result.format == SYSTEMD_FORMAT
        outcomes.update(boot.outcome for boot in result.boots)
        pending.append(
            FleetFile(
                path=result.path,
                sha256=hashes[result.path],
                format=result.format,
                meta=meta,
                boots=tuple(_under_given(boot, meta) for boot in result.boots),
            )
        )
        if len(pending) >= FILES_PER_TRANSACTION:
            boots += record_files(store, pending)
            imported += len(pending)
            pending = []
    boots += record_files(store, pending)
    imported += len(pending)
    return ImportReport(
        files=len(inputs),
        imported=imported,
        already_stored=repeated,
        boots=boots,
        bad=tuple(bad),
        without_meta=sum(1 for item in inputs if not item.meta) if meta_csv is not None else 0,
        elapsed_s=time.monotonic() - started,
        systemd_pastes=pastes,
        counts=OutcomeCounts(
            outcomes[OUTCOME_OK],
            outcomes[OUTCOME_FAILED],
            outcomes[OUTCOME_INCOMPLETE],
            outcomes[OUTCOME_NOT_RUN],
        ),
    )


def import_into(
    db: str, parquet: Path | None, targets: Sequence[str], meta_csv: Path | None, workers: int | None
) -> ImportReport:
    """Import fleet logs into the store ``db`` (see :func:`import_fleet`) and bring its Parquet copy
    (in ``parquet``, default beside ``db``) up to date. The report's ``failure`` is the command's
    exit. Raises InputError for ``workers`` below 1, and as :func:`import_fleet` does."""
    from bootscope.store.parquet import default_parquet_dir, refresh_parquet

    if workers is not None and workers < 1:
        raise InputError("-j must be at least 1")
    with Store.open(db) as store:
        report = import_fleet(store, targets, meta_csv, workers=workers)
        refresh_parquet(store, parquet or default_parquet_dir(db))
    return report

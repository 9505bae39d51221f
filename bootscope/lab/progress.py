"""Tell the user how an experiment goes: a rich progress bar on stderr, or nothing."""

from __future__ import annotations

from typing import Protocol

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from bootscope.lab.plans.schedule import Slot
from bootscope.metrics import PROGRESS_METRICS
from bootscope.store.records import BootRecord


class Reporter(Protocol):
    """Receives the experiment's events; every method returns None and must not raise."""

    def started(self, experiment_id: int, total: int, done: int) -> None:
        """The run begins: ``total`` positions in the order, ``done`` of them stored before (resume)."""

    def boot_started(self, slot: Slot) -> None:
        """A boot (or a re-run of a disturbed one) at ``slot`` starts."""

    def boot_done(self, slot: Slot, record: BootRecord) -> None:
        """A boot ended and ``record`` is stored (``record.superseded``: it will be re-run)."""

    def note(self, message: str) -> None:
        """Something the user should know (a warning); plain text, not markup."""

    def finished(self) -> None:
        """The run ended, however it ended."""


class SilentReporter:
    """Says nothing (``--json``, tests); notes are kept in ``notes``."""

    def __init__(self) -> None:
        self.notes: list[str] = []

    def started(self, experiment_id: int, total: int, done: int) -> None:
        return None

    def boot_started(self, slot: Slot) -> None:
        return None

    def boot_done(self, slot: Slot, record: BootRecord) -> None:
        return None

    def note(self, message: str) -> None:
        self.notes.append(message)

    def finished(self) -> None:
        return None


def _last_sample(record: BootRecord) -> str:
    if not record.ok:
        return f"[red]{escape(record.outcome)}[/red]"
    value = next((record.metrics[m] for m in PROGRESS_METRICS if record.metrics.get(m) is not None), None)
    text = "ok" if value is None else f"{value:.3f} s"
    return text + (" [yellow](disturbed)[/yellow]" if record.disturbed else "")


class RichReporter:
    """A progress bar with the running variant, boot k of n, the last sample and an ETA (on stderr)."""

    def __init__(self, console: Console | None = None) -> None:
        # emoji off: a variant named "debian:cloud" must not print as "debian☁" (rich's :cloud:)
        self._console = console or Console(stderr=True, highlight=False, emoji=False)
        self._progress = Progress(
            # plain text: rich reads markup columns with emoji codes on, whatever the console says,
            # and the description holds the variant's name
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            TextColumn("{task.completed}/{task.total}"),
            TextColumn("last: {task.fields[last]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self._console,
            transient=False,
        )
        self._task: TaskID | None = None
        self._done = 0
        self._total = 0

    def started(self, experiment_id: int, total: int, done: int) -> None:
        self._done, self._total = done, total
        self._progress.start()
        self._task = self._progress.add_task(
            f"experiment {experiment_id}", total=total, completed=done, last="-"
        )

    def boot_started(self, slot: Slot) -> None:
        if self._task is not None:
            kind = "warm-up" if slot.warmup else "boot"
            description = f"{slot.variant}: {kind} {slot.index} of {self._total}"
            self._progress.update(self._task, description=description)

    def boot_done(self, slot: Slot, record: BootRecord) -> None:
        if self._task is not None and not record.superseded:
            self._progress.update(self._task, advance=1, last=_last_sample(record))
        elif self._task is not None:
            self._progress.update(self._task, last=_last_sample(record) + " [yellow]re-running[/yellow]")

    def note(self, message: str) -> None:
        self._progress.console.print(f"[yellow]bootscope:[/yellow] {escape(message)}")

    def finished(self) -> None:
        self._progress.stop()

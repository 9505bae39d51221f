"""Options shared by several commands, declared once so that one name means one thing everywhere.

``-n`` is always the number of measurements per variant (boots; for ``kexec``, reboots per chain, a
chain being one slot), ``--format`` always the output format, ``--seed`` always the seed of the
measurement order (``compare --bootstrap-seed`` seeds its resampling), ``--db`` the store.
"""

from __future__ import annotations

from typing import Annotated

import typer

Db = Annotated[str, typer.Option("--db", help="SQLite path or database URL.")]
Seed = Annotated[int | None, typer.Option("--seed", help="Seed of the measurement order (default: random).")]
Jobs = Annotated[int | None, typer.Option("-j", "--jobs", help="Slots run at once (default: 1).")]
Accel = Annotated[str | None, typer.Option("--accel", help="auto, kvm or tcg (default: auto).")]
QuietHost = Annotated[
    bool, typer.Option("--quiet-host", help="Wait for an idle host; re-run disturbed measurements.")
]
Resume = Annotated[
    str | None, typer.Option("--resume", help="Finish stored experiment ID (or 'latest') after a crash.")
]
Timeout = Annotated[float | None, typer.Option("--timeout", help="Seconds one slot may take.")]

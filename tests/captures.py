"""Reading the real kexec chain captures in tests/data (kexec-chain-*.tsv) back into a Boot.

Each file starts with a `# outcome=... host_start_ns=...` header, then one `host_ns<TAB>line` per serial
line, exactly as boot_once captured it. tests/ is on sys.path through tests/conftest.py.
"""

from __future__ import annotations

from pathlib import Path

from bootscope.model import Boot, LogLine, Outcome


def load_chain_capture(path: Path) -> Boot:
    """Return the captured chain as the Boot that boot_once returned (host stamps in ns)."""
    header, *rows = path.read_text(encoding="utf-8").splitlines()
    fields = dict(item.split("=", 1) for item in header.lstrip("# ").split())
    lines = []
    for row in rows:
        host_ns, _, text = row.partition("\t")
        lines.append(LogLine(text=text, host_ns=int(host_ns)))
    return Boot(
        lines=tuple(lines), outcome=Outcome(fields["outcome"]), host_start_ns=int(fields["host_start_ns"])
    )

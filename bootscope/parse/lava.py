"""LAVA job logs (``output.yaml``): the device's console lines with the dispatcher's host stamps.

Format (LAVA's job log as its dispatcher writes it, and as tuxrun and the lava-api crate read it):
a YAML list with one flow mapping per line, ``- {"dt": "2024-05-02T10:00:01.123456", "lvl":
"target", "msg": "..."}``. ``dt`` is the dispatcher host's time (UTC) when the line was logged;
``lvl`` is one of debug, info, warning, error, results, input, feedback and target, and only
``target`` lines are the device's own console output; ``msg`` is a string or a list of strings.

Each line is read on its own as JSON (which LAVA's flow mappings are: double-quoted keys and
strings), so a 100 MB job log is never loaded as one YAML document and one broken line (a job cut
mid-write) costs that line only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime

from bootscope.errors import ParseError
from bootscope.model import LogLine

_LINE_START = "- {"
TARGET_LEVEL = "target"


def looks_like_lava(first_lines: Iterable[str]) -> bool:
    """Return True when the first line of a log that is not empty or a YAML comment is a LAVA
    job-log entry."""
    for line in first_lines:
        text = line.strip()
        if text and not text.startswith("#"):
            return text.startswith(_LINE_START) and '"dt"' in text[:40]
    return False


def _entry(line: str) -> dict[str, object] | None:
    body = line.strip()[2:]
    try:
        value = json.loads(body)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _host_ns(stamp: object) -> int | None:
    if not isinstance(stamp, str):
        return None
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)  # the dispatcher writes UTC without an offset
    return int(moment.timestamp() * 1_000_000) * 1000


def lava_console(lines: Iterable[str]) -> Iterator[LogLine]:
    """Yield the device console lines of a LAVA job log (``lvl: target``) with ``host_ns`` set to the
    dispatcher's stamp (ns since the epoch, UTC). Lines that are not entries are skipped.
    Raises ParseError (after the last line) when no line was a LAVA entry."""
    entries = 0
    for line in lines:
        if not line.lstrip().startswith("- "):
            continue
        entry = _entry(line)
        if entry is None:
            continue
        entries += 1
        if entry.get("lvl") != TARGET_LEVEL:
            continue
        host_ns = _host_ns(entry.get("dt"))
        message = entry.get("msg")
        texts = message if isinstance(message, list) else [message]
        for text in texts:
            if isinstance(text, str):
                yield LogLine(text=text, host_ns=host_ns)
    if entries == 0:
        raise ParseError("no LAVA job-log entry (- {dt: ..., lvl: ..., msg: ...}) in the file")

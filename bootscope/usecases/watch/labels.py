"""The ``--meta KEY=VALUE`` labels of a run: what a watched series orders its points by and what it
is keyed on besides the machine.

``revision`` names the point (a commit, a build id); without it, a run's points are named by the
kernel release each boot printed. ``revision_time`` (ISO 8601 or Unix seconds) orders revisions; without
it the run's start time does. Every other label (``config_hash``, ``firmware``, ``board``...) joins the
fingerprint: a series never mixes two values of a label.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from bootscope.errors import InputError

REVISION = "revision"
REVISION_TIME = "revision_time"
ORDER_LABELS = (REVISION, REVISION_TIME)
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")
MAX_VALUE_CHARS = 255


def parse_labels(texts: Sequence[str]) -> dict[str, str]:
    """Return the labels of ``--meta KEY=VALUE`` texts, in the order given. Raises InputError for a
    text without ``=``, a key that is not a name (letters, digits, ``_.-``, up to 64), a key given
    twice, a value longer than 255 characters or holding a control character, or a revision_time
    that is neither ISO 8601 nor Unix seconds."""
    labels: dict[str, str] = {}
    for text in texts:
        key, sep, value = text.partition("=")
        if not sep:
            raise InputError(f"--meta {text[:80]!r}: write KEY=VALUE, e.g. --meta revision=3f2a91c")
        if _KEY.fullmatch(key) is None:
            raise InputError(f"--meta {key[:80]!r}: a key is a name of letters, digits and _.- (up to 64)")
        if key in labels:
            raise InputError(f"--meta {key}: given twice")
        if len(value) > MAX_VALUE_CHARS or any(ord(c) < 32 or ord(c) == 127 for c in value):
            raise InputError(f"--meta {key}: a value is one line of at most {MAX_VALUE_CHARS} characters")
        if key == REVISION_TIME and revision_epoch_s(value) is None:
            raise InputError(f"--meta revision_time={value[:40]!r}: give ISO 8601 or Unix seconds")
        labels[key] = value
    return labels


def revision_epoch_s(value: str | None) -> float | None:
    """Return a revision time (ISO 8601, naive read as UTC, or Unix seconds) in Unix seconds; None
    for None or a value that is neither."""
    if value is None:
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        return seconds if seconds == seconds and abs(seconds) < 1e11 else None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


def fingerprint_labels(labels: Mapping[str, str]) -> dict[str, str]:
    """Return the labels that key a series (every one but revision and revision_time)."""
    return {key: value for key, value in labels.items() if key not in ORDER_LABELS}

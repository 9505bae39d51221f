"""Boot logs in the store: zstd-compressed JSON of ``[[host_ns, text], ...]``."""

from __future__ import annotations

import json
from collections.abc import Iterable

import zstandard

from bootscope.errors import StoreError
from bootscope.model import LogLine

_LEVEL = 10  # measured on a 100 kB boot log: ~10x smaller, a few ms; higher levels gain little


def encode_log(lines: Iterable[LogLine]) -> bytes:
    """Return the compressed bytes of ``lines`` (host arrival time in ns, or None, and the raw text)."""
    pairs = [[line.host_ns, line.text] for line in lines]
    # ensure_ascii keeps hostile text (NULs, lone surrogates from undecodable bytes) representable.
    raw = json.dumps(pairs, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    return zstandard.ZstdCompressor(level=_LEVEL).compress(raw)


def decode_log(data: bytes) -> list[LogLine]:
    """Return the lines stored by :func:`encode_log`; raises StoreError if the bytes are corrupt."""
    try:
        raw = zstandard.ZstdDecompressor().decompress(data)
        pairs = json.loads(raw)
        return [LogLine(text=str(text), host_ns=None if ns is None else int(ns)) for ns, text in pairs]
    except (zstandard.ZstdError, ValueError, TypeError) as error:
        raise StoreError(f"a stored boot log is corrupt ({error}); the database was damaged") from error

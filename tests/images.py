"""Checks that a written PNG is a real picture: decodes, has the expected size, and is not blank."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def assert_png_drawn(path: Path, size_px: tuple[int, int] = (1920, 1080), min_ink: float = 0.01) -> None:
    """Assert ``path`` decodes as a PNG of ``size_px`` (width, height) on which at least ``min_ink`` of
    the pixels are not background and at least three colours appear (axes, text, data)."""
    import matplotlib.image  # heavy: only for the tests that draw

    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", path
    pixels = matplotlib.image.imread(path)
    height, width = pixels.shape[:2]
    assert (width, height) == size_px
    rgb = np.round(pixels[..., :3] * 255).astype(np.int64)
    flat = rgb.reshape(-1, 3)
    colours, counts = np.unique(flat, axis=0, return_counts=True)
    background = colours[np.argmax(counts)]
    ink = float(np.mean(np.any(flat != background, axis=1)))
    assert ink >= min_ink, f"{path}: only {ink:.2%} of the pixels are drawn"
    assert len(colours) >= 3, f"{path}: {len(colours)} colours"

"""analyze stage: one boot's lines -> its Breakdown, and advice on known boot-time sinks."""

from __future__ import annotations

from bootscope.analyze.breakdown import PHASES, analyze_boot

__all__ = ["PHASES", "analyze_boot"]

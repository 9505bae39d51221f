"""The block scan's C part (bootscope/parse/_scan.c), or None where it was not built.

setup.py builds it as an optional extension: where no C compiler or Python headers are installed,
``scanner`` is None and the scan runs its numpy code, which gives the same results
(tests/parse/test_native_scan.py checks both).
`python -c "from bootscope.parse.native import scanner; print(scanner)"` tells which one runs.
"""

from __future__ import annotations

import importlib
from types import ModuleType

scanner: ModuleType | None
try:
    scanner = importlib.import_module("bootscope.parse._scan")
except ImportError:  # pragma: no cover - where no compiler was installed
    scanner = None

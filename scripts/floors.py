"""Print pip constraints that pin every dependency in pyproject.toml to its floor (``>=X`` -> ``==X``).

``make test-floors`` installs with these constraints and runs the fast tests, so that a floor in
pyproject.toml is a version the code was tested with, not a guess.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

_FLOOR = re.compile(r"^([A-Za-z0-9_.-]+)(\[[^\]]*\])?\s*>=\s*([^,;\s]+)")


def floor_constraints(pyproject: Path) -> list[str]:
    """Return ``name==floor`` for each dependency (and dev extra) that has a ``>=`` floor."""
    project = tomllib.loads(pyproject.read_text())["project"]
    requirements = [*project["dependencies"], *project["optional-dependencies"].get("dev", [])]
    pins = []
    for requirement in requirements:
        match = _FLOOR.match(requirement)
        if match:
            pins.append(f"{match.group(1)}=={match.group(3)}")
    return pins


if __name__ == "__main__":
    pyproject = Path(sys.argv[1] if len(sys.argv) > 1 else "pyproject.toml")
    sys.stdout.write("\n".join(floor_constraints(pyproject)))
    sys.stdout.write("\n")

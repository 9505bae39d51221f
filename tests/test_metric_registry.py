"""The metric registry: every metric declared once, with a unit and a definition, and no other module
under bootscope/ spelling a metric's name in a string (docstrings and comments aside)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from bootscope.metrics import REGISTRY, Clock, metric, unit_of
from bootscope.model import Metrics

PACKAGE = Path(__file__).resolve().parents[1] / "bootscope"
REGISTRY_MODULE = PACKAGE / "metrics.py"


def test_every_registered_metric_has_a_unit_a_clock_and_a_definition() -> None:
    assert len(REGISTRY) >= 7
    for name, entry in REGISTRY.items():
        assert entry.name == name and name.endswith(f"_{entry.unit}"), name
        assert entry.unit in ("s", "us", "ns", "count") and isinstance(entry.clock, Clock)
        assert len(entry.definition) > 40 and entry.definition.endswith("."), name
        assert entry.workloads, name
        # Every metric is read from a boot's Metrics by its name.
        assert name in Metrics.__dataclass_fields__, name
    assert metric("kernel_init_s").unit == "s" and unit_of("not_a_metric") == "s"


def _strings_outside_docstrings(tree: ast.AST) -> list[tuple[int, str]]:
    docstrings: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


def test_no_module_but_the_registry_spells_a_metric_name() -> None:
    names = re.compile(r"\b(" + "|".join(map(re.escape, REGISTRY)) + r")\b")
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == REGISTRY_MODULE:
            continue
        for line, text in _strings_outside_docstrings(ast.parse(path.read_text(encoding="utf-8"))):
            if names.search(text):
                found.append(f"{path.relative_to(PACKAGE)}:{line}: {text[:60]!r}")
    assert found == []


def test_definition_is_the_one_lookup_and_names_every_metric_when_unknown() -> None:
    import pytest

    from bootscope.errors import InputError
    from bootscope.metrics import definition

    assert definition("kernel_init_s") is REGISTRY["kernel_init_s"]
    with pytest.raises(InputError) as raised:
        definition("kernel_int_s")
    message = str(raised.value)
    assert message == f"unknown metric 'kernel_int_s'; known metrics: {', '.join(REGISTRY)}"
    assert "\n" not in message and raised.value.exit_code == 2


def test_each_metric_names_every_workload_that_stores_it() -> None:
    """The registry's ``workloads`` and the tuples each workload stores by are one truth: a metric a
    workload stores names that workload (the registry had drifted: kernel_init_s lacked the board)."""
    from bootscope import metrics as m

    stored = {
        "boot": (*m.BOOT_METRICS, *m.IMAGE_METRICS),
        "kexec": m.KEXEC_METRICS,
        "ssh": m.SSH_METRICS,
        "board": (*m.BOARD_METRICS, *m.BOARD_REBOOT_METRICS, *m.PREKERNEL_METRICS, m.RESTART_TO_MARKER_S),
        "latency": m.LATENCY_METRICS,
    }
    missing = sorted(
        f"{name}: {workload}"
        for workload, names in stored.items()
        for name in names
        if workload not in REGISTRY[name].workloads
    )
    assert missing == []

"""``bootscope compare``'s one render: the comparisons in the format asked for, on stdout."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from bootscope.model import Comparison, LikeForLike
from bootscope.report import compare_out, mail
from bootscope.report.console import output_console

FORMATS = ("table", "json", "markdown", "csv", "mail")


def write_comparisons(
    comparisons: Sequence[Comparison],
    definition: str,
    fmt: str,
    guards: Sequence[LikeForLike | None] = (),
) -> None:
    """Write ``comparisons`` (with the metric's ``definition`` and each one's like-for-like guard)
    to stdout as ``fmt``: one of :data:`FORMATS`, a rich table for ``table`` (or anything else)."""
    if fmt == "json":
        sys.stdout.write(compare_out.to_json(comparisons, definition, guards) + "\n")
    elif fmt == "csv":
        sys.stdout.write(compare_out.to_csv(comparisons, guards))
    elif fmt == "markdown":
        sys.stdout.write(compare_out.to_markdown(comparisons, definition, guards))
    elif fmt == "mail":
        sys.stdout.write(mail.to_mail(comparisons, definition, guards))
    else:
        output_console().print(compare_out.table(comparisons, definition, guards))

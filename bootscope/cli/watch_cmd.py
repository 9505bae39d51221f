"""``bootscope watch``, ``alerts`` and ``alert``: every stored series judged, alerts kept and triaged.

Thin: the use cases are :mod:`bootscope.usecases.watch.alerts`, the output
:mod:`bootscope.report.alerts_out`.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from bootscope import defaults
from bootscope.cli import options

STATE_HELP = "untriaged, acknowledged, invalid, confirmed, fixed or wontfix."


def watch(
    db: options.Db = defaults.DEFAULT_DB,
    metric: Annotated[
        list[str] | None, typer.Option("--metric", help="Judge only this metric's series (repeat).")
    ] = None,
    run: Annotated[
        str | None,
        typer.Option("--run", help="Add this run (ID or latest) to its series and judge only those (fast)."),
    ] = None,
    by: Annotated[
        list[str] | None,
        typer.Option(
            "--by",
            help="Also a series per component: phase, initcall, cpu, gap, unit, bootloader (repeat;"
            " reads the logs; components under 1 ms at every revision are left out).",
        ),
    ] = None,
    alpha: Annotated[float, typer.Option(help="Significance level of the window test.")] = 1e-4,
    jitter_ratio: Annotated[
        float, typer.Option("--jitter-ratio", help="A step is at least this many times the series' jitter.")
    ] = 1.5,
    back: Annotated[int, typer.Option(help="Revisions before a step that judge it (at most).")] = 24,
    fore: Annotated[int, typer.Option(help="Revisions after a step that judge it (at most).")] = 12,
    min_back: Annotated[int, typer.Option("--min-back", help="Fewest revisions before a step.")] = 8,
    min_fore: Annotated[int, typer.Option("--min-fore", help="Fewest revisions after a step.")] = 4,
    fmt: Annotated[str, options.format_option(options.TABLE_JSON, "table")] = "table",
) -> None:
    """Judge every series of the store (one per fingerprint and metric, a point per revision) and
    open or update its alerts; print what changed and the untriaged alerts."""
    from bootscope.report.alerts_out import watch_json, watch_text
    from bootscope.report.screen import stdout_width_cells
    from bootscope.usecases.watch.alerts import watch_command, watch_rule

    as_json = options.check_format(fmt, options.TABLE_JSON) == "json"
    rule = watch_rule(back, fore, min_back, min_fore, jitter_ratio, alpha)
    update = watch_command(db, rule, metrics=metric or None, run=run, by=tuple(by or ()))
    out = watch_json(update) if as_json else watch_text(update, db, stdout_width_cells(sys.stdout))
    sys.stdout.write(out)


def alerts(
    db: options.Db = defaults.DEFAULT_DB,
    state: Annotated[
        str | None, typer.Option("--state", help="Only alerts in this state: " + STATE_HELP)
    ] = None,
    fmt: Annotated[str, options.format_option(options.TABLE_JSON, "table")] = "table",
) -> None:
    """List the stored alerts, newest first (`bootscope watch` finds them)."""
    from bootscope.report.alerts_out import alerts_json, alerts_text
    from bootscope.report.screen import stdout_width_cells
    from bootscope.usecases.watch.alerts import list_alerts

    as_json = options.check_format(fmt, options.TABLE_JSON) == "json"
    found = list_alerts(db, state)
    sys.stdout.write(
        alerts_json(found) if as_json else alerts_text(found, db, stdout_width_cells(sys.stdout))
    )


def alert(
    alert_id: Annotated[int, typer.Argument(metavar="ID", help="The alert (see `bootscope alerts`).")],
    action: Annotated[str | None, typer.Argument(metavar="[triage]", help="triage: set its state.")] = None,
    state: Annotated[str | None, typer.Option("--state", help="With triage: " + STATE_HELP)] = None,
    note: Annotated[str, typer.Option("--note", help="With triage: why (kept with who and when).")] = "",
    who: Annotated[str | None, typer.Option("--who", help="With triage: who (default: $USER).")] = None,
    by: Annotated[
        list[str] | None,
        typer.Option(
            "--by", help="Show, per step, which components moved: phase, initcall, gap, cpu, unit (repeat)."
        ),
    ] = None,
    db: options.Db = defaults.DEFAULT_DB,
    fmt: Annotated[str, options.format_option(options.TABLE_JSON, "table")] = "table",
) -> None:
    """Show one alert (what moved, where, its series and history; with --by, the components that
    moved at each step, from the stored logs), or triage it."""
    import getpass

    from bootscope.errors import InputError
    from bootscope.report.alerts_out import alert_document, alert_text, print_explained
    from bootscope.report.console import output_console
    from bootscope.report.screen import stdout_width_cells
    from bootscope.usecases.watch.alerts import show_alert, triage_alert
    from bootscope.usecases.watch.explain import explain_alert

    as_json = options.check_format(fmt, options.TABLE_JSON) == "json"
    if action is None:
        if state is not None or note or who is not None:
            raise InputError("--state, --note and --who go with triage: bootscope alert ID triage --state S")
        found = show_alert(db, alert_id)
    elif action == "triage":
        if state is None:
            raise InputError("triage needs --state: " + STATE_HELP)
        if by:
            raise InputError("--by shows an alert; triage takes --state, --note and --who")
        found = triage_alert(db, alert_id, state, note, who if who is not None else _user(getpass.getuser))
    else:
        raise InputError(f"unknown action {action[:40]!r}: the one action is triage")
    explained = explain_alert(db, found, by, defaults.ALPHA) if by else None
    if as_json:
        sys.stdout.write(alert_document(found, explained))
        return
    sys.stdout.write(alert_text(found, stdout_width_cells(sys.stdout)))
    if explained is not None:
        print_explained(explained, output_console())


def _user(lookup: object) -> str:
    try:
        return str(lookup())  # type: ignore[operator]
    except (KeyError, OSError):
        return "unknown"

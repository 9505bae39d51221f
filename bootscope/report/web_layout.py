"""The frame of every dashboard page (``bootscope serve``): the navigation bar, the page around a
body, tables and sections, and the error page. Every string passes through ``html.escape``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape

from bootscope.report.text_cells import clean

NAV = (
    ("/", "Overview"),
    ("/alerts", "Alerts"),
    ("/runs", "Runs"),
    ("/compare", "Compare"),
    ("/fleet", "Fleet"),
)
# Longest text shown in a table cell (a label or a revision can be any length).
CELL_CHARS = 120


def text(value: object, limit: int = CELL_CHARS) -> str:
    """Return ``value`` as HTML text: control characters shown, cut to ``limit`` characters, escaped."""
    return escape(clean(str(value), limit))


def nav_bar(here: str = "") -> str:
    """Return the navigation bar, the page at ``here`` marked as the current one."""
    links = "".join(
        f'<a href="{href}"{" aria-current=page" if href == here else ""}>{name}</a>' for href, name in NAV
    )
    return f'<nav class="top"><span class="brand">bootscope</span>{links}</nav>\n'


def layout(title: str, body: str, *, here: str = "") -> str:
    """Return a whole page: the navigation bar (``here`` marked), ``title`` and ``body`` (HTML)."""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{text(title)} · bootscope</title>\n"
        '<link rel="stylesheet" href="/static/dash.css">\n'
        '<script src="/static/dash.js" defer></script>\n</head>\n<body>\n'
        f"{nav_bar(here)}<header><h1>{text(title, 200)}</h1></header>\n"
        f"<main>\n{body}\n</main>\n</body>\n</html>\n"
    )


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], *, cls: str = "") -> str:
    """Return an HTML table in a scrolling box; ``rows`` hold HTML already escaped by the caller."""
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return (
        f'<div class="scroll"><table class="{cls}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def section(title: str, inner: str, *, id_: str = "") -> str:
    """Return a titled section (``title`` escaped, ``inner`` HTML)."""
    anchor = f' id="{escape(id_)}"' if id_ else ""
    return f"<section{anchor}><h2>{escape(title)}</h2>{inner}</section>"


def error_page(status: int, message: str) -> str:
    """Return the page of a refused or failed request: its status and one line."""
    what = {400: "Bad request", 403: "Refused", 404: "Not found", 503: "Store unavailable"}.get(
        status, "Error"
    )
    return layout(f"{status} {what}", f'<p class="error" role="alert">{text(message, 400)}</p>')

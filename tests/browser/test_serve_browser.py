"""`bootscope serve` in a real browser: a real server process on loopback, Debian's chromium clicking
from the overview to a series, an alert (triage refused without the token, done with it), a run, a
boot, a comparison and the fleet; every page drawn, no request leaves the server, no script from a
log runs, and the overview fits a phone's width."""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "serve"))
import dashboard_store
from served import serving

pytestmark = pytest.mark.browser

TOKEN = "browser-token-0123456789"
LOAD_LIMIT_MS = 60_000


class Tab:
    """A page of the browser with its console errors, dialogs and the requests it made elsewhere."""

    def __init__(self, browser: Any, origin: str, width: int, height: int) -> None:
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.elsewhere: list[str] = []
        self.page = browser.new_page(viewport={"width": width, "height": height})
        self.page.set_default_timeout(LOAD_LIMIT_MS)
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", self._dialog)
        self.page.on("request", lambda r: None if r.url.startswith(origin) else self.elsewhere.append(r.url))

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()


def drawn(png: bytes) -> int:
    """The number of distinct colours in a screenshot (a blank or failed page has a handful)."""
    image = Image.open(io.BytesIO(png)).convert("RGB").reduce(4)
    return len(image.getcolors(maxcolors=1 << 24) or ())


@pytest.fixture(scope="module")
def served_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("browse")
    db = str(folder / "dash.db")
    dashboard_store.build(db)
    token = folder / "token"
    token.write_text(TOKEN + "\n")
    with serving(db, "--token-file", str(token)) as url:
        yield url


def test_click_through_the_dashboard(browser: Any, served_url: str, artifacts: Path) -> None:
    tab = Tab(browser, served_url, 1280, 800)
    page = tab.page
    page.goto(served_url + "/")
    assert page.locator("#open-alerts tbody tr").count() == 1
    # Overview -> the series.
    page.locator("#series a.series").first.click()
    page.wait_for_url("**/series/**")
    assert page.locator("svg.series-chart circle.point").count() == dashboard_store.REVISIONS
    assert page.locator("svg.series-chart line.alert.regression").count() == 1
    shot = page.screenshot(path=str(artifacts / "serve-series.png"))
    assert drawn(shot) > 8
    series_url = page.url
    # The series -> its alert; triage refused with a wrong token, done with the right one.
    page.locator("table a[href='/alerts/1']").first.click()
    page.wait_for_url("**/alerts/1")
    assert "bisect-run --alert 1" in (page.locator("#bisect-command").text_content() or "")
    page.select_option("#triage select[name=state]", "confirmed")
    page.fill("#triage input[name=note]", "<img src=x onerror=alert(3)> seen on r21")
    page.fill("#triage input[name=who]", "browser")
    page.fill("#triage input[name=token]", "wrong-token")
    page.click("#triage button")
    # (no wait_for_function: it evaluates a string, which the server's policy forbids, rightly)
    page.locator("#triage-result", has_text="refused").wait_for()
    assert "403" in (page.locator("#triage-result").text_content() or "")
    assert page.locator("#alert-state").text_content() == "untriaged"
    page.fill("#triage input[name=token]", TOKEN)
    page.click("#triage button")
    page.locator("#triage-result", has_text="now confirmed").wait_for()
    page.reload()
    assert page.locator("#alert-state").text_content() == "confirmed"
    history = page.locator("section", has_text="History").text_content() or ""
    assert "browser" in history and "<img src=x onerror=alert(3)> seen on r21" in history
    # The series -> a point's run (a click on the dot).
    page.goto(series_url)
    page.locator("svg.series-chart circle.point").nth(dashboard_store.STEP_AT - 1).click()
    page.wait_for_url("**/runs/*")
    page.wait_for_selector("body[data-rendered=yes]")
    # The real run: its report drawn with the package's Plotly, then one boot's timeline and console.
    page.goto(served_url + "/runs/1")
    page.wait_for_selector("body[data-rendered=yes]")
    assert page.locator("#dists .main-svg").count() > 0
    assert drawn(page.screenshot(path=str(artifacts / "serve-run.png"))) > 8
    page.locator("#boots a.boot").nth(1).click()
    page.wait_for_url("**/runs/1/boots/1")
    page.wait_for_selector("body[data-rendered=yes]")
    assert page.locator("#timeline .main-svg").count() > 0
    page.fill("#log-search", "evil <script>")
    assert page.locator("#log .log-row").count() == 1
    assert "<script>alert(1)</script>" in (page.locator("#log .log-row").first.text_content() or "")
    assert drawn(page.screenshot(path=str(artifacts / "serve-boot.png"))) > 8
    # Compare the run's two variants from the form.
    page.goto(served_url + "/compare")
    page.fill("input[name=a]", "1:smp1")
    page.fill("input[name=b]", "1:smp4")
    page.click("form.filter button")
    page.wait_for_selector("#diff svg")
    assert "What moved kernel_init_s" in (page.locator("#diff").text_content() or "")
    assert drawn(page.screenshot(path=str(artifacts / "serve-compare.png"), full_page=True)) > 8
    # The run page's own link to what moved between its variants: the same comparison.
    page.goto(served_url + "/runs/1")
    page.locator("a.moved").click()
    page.wait_for_selector("#diff svg")
    assert "kernel_init_s: 1:smp4" in (page.locator("#diff").text_content() or "")
    # The fleet by kernel series: one row per series imported.
    page.goto(served_url + "/fleet?by=kernel_series")
    assert page.locator("#summary tbody tr").count() == 2
    assert page.locator("#summary svg.quantiles circle.p50").count() == 2
    # The one error: the browser's own note of the refused triage.
    assert [e for e in tab.errors if "403 (Forbidden)" not in e] == [], tab.errors
    assert len(tab.errors) <= 1 and tab.dialogs == [] and tab.elsewhere == []
    page.close()


def test_the_overview_fits_a_phone(browser: Any, served_url: str, artifacts: Path) -> None:
    tab = Tab(browser, served_url, 390, 844)
    page = tab.page
    for path in ("/", "/alerts/1", "/runs"):
        page.goto(served_url + path)
        # Nothing but a table's own scrolling box is wider than the screen.
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, path
    page.goto(served_url + "/")
    assert drawn(page.screenshot(path=str(artifacts / "serve-phone.png"), full_page=True)) > 8
    assert tab.errors == [] and tab.elsewhere == []
    page.close()

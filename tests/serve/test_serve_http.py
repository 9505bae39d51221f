"""`bootscope serve` as a real process on loopback, asked over real HTTP: the API answers what the
CLI answers, the series' numbers are those of the stored boots, writes need the token, hostile text
stays text, bad requests get one line and a status, and readers keep reading while a run writes."""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import dashboard_store
from cli_here import run_in_process, run_json
from served import read_while_writing, serving

from bootscope.store import BootRecord, Store


@pytest.fixture(scope="module")
def store_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    db = str(tmp_path_factory.mktemp("serve") / "dash.db")
    dashboard_store.build(db)
    return db


@pytest.fixture(scope="module")
def token_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("token") / "token"
    path.write_text("s3cret-token-of-enough-length\n")
    return path


@pytest.fixture(scope="module")
def url(store_db: str, token_file: Path) -> Iterator[str]:
    with serving(store_db, "--token-file", str(token_file)) as address:
        yield address


def _get(url: str, path: str, **kwargs: Any) -> httpx.Response:
    return httpx.get(url + path, timeout=60, **kwargs)


def test_the_api_answers_what_the_cli_answers(
    url: str, store_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _get(url, "/api/alerts").json() == run_json(capsys, "alerts", "--db", store_db)
    assert _get(url, "/api/alerts/1").json() == run_json(capsys, "alert", "1", "--db", store_db)
    capsys.readouterr()
    assert run_in_process("runs", "--db", store_db, "--format", "json") == 0
    assert _get(url, "/api/runs").json() == json.loads(capsys.readouterr().out)
    fleet = _get(url, "/api/fleet?by=kernel_series").json()
    assert fleet["summary"] == run_json(capsys, "fleet", "summary", "--by", "kernel_series", "--db", store_db)
    assert fleet["outliers"] == run_json(
        capsys, "fleet", "outliers", "--by", "kernel_series", "--db", store_db
    )


def test_the_series_points_are_the_medians_of_the_stored_boots(url: str) -> None:
    overview = _get(url, "/api/overview").json()
    (alert,) = overview["open_alerts"]
    assert alert["kind"] == "regression" and alert["last_revision"] == dashboard_store.revision(
        dashboard_store.STEP_AT
    )
    key = alert["items"][0]["series"]
    series = _get(url, f"/api/series/{key}").json()
    assert [p["revision"] for p in series["points"]] == [
        dashboard_store.revision(n) for n in range(1, dashboard_store.REVISIONS + 1)
    ]
    for number, point in enumerate(series["points"], start=1):
        # The values the store was given, by the formula dashboard_store wrote them with.
        level = 1.0 + (dashboard_store.STEP_S if number >= dashboard_store.STEP_AT else 0.0)
        values = [level + 0.002 * ((number * 7 + k * 3) % 5 - 2) for k in range(6)]
        assert point["median"] == pytest.approx(statistics.median(values), abs=1e-12)
        assert point["boots"] == 6
        # With 6 boots the 95% distribution-free interval of the median is [min, max]: it covers
        # with probability 1 - 2 / 2**6 = 0.969, and [2nd, 5th] only 1 - 2 * 7 / 64 = 0.78.
        assert point["ci"] == pytest.approx([min(values), max(values)], abs=1e-12)
        assert len(point["runs"]) == 1
    assert [m["revision"] for m in series["alerts"]] == [dashboard_store.revision(dashboard_store.STEP_AT)]
    # The overview's sparkline is the same medians.
    line = next(s for g in overview["groups"] for s in g["series"] if s["key"] == key)
    assert line["spark"] == [p["median"] for p in series["points"]]
    assert line["alerts"] == [alert["id"]]
    # The page draws one dot per point, each a link to its run; the alert's step is marked.
    page = _get(url, f"/series/{key}").text
    assert page.count('<circle class="point"') == dashboard_store.REVISIONS
    assert page.count(f'<a href="/runs/{series["points"][0]["runs"][0]}">') >= 1
    assert f'<a href="/alerts/{alert["id"]}"><line class="alert regression"' in page


def test_triage_needs_the_token_and_is_kept_with_who_and_why(
    url: str, store_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    body = {"state": "acknowledged", "note": "<b>looking</b>", "who": "ana"}
    refused = [
        httpx.post(url + "/api/alerts/1/triage", json=body, timeout=60),
        httpx.post(
            url + "/api/alerts/1/triage", json=body, headers={"X-Bootscope-Token": "wrong"}, timeout=60
        ),
        # A cookie is never a credential.
        httpx.post(
            url + "/api/alerts/1/triage",
            json=body,
            cookies={"token": "s3cret-token-of-enough-length"},
            timeout=60,
        ),
    ]
    assert [r.status_code for r in refused] == [403, 403, 403]
    assert "X-Bootscope-Token" in refused[0].json()["error"]
    headers = {"X-Bootscope-Token": "s3cret-token-of-enough-length"}
    form = httpx.post(url + "/api/alerts/1/triage", data=body, headers=headers, timeout=60)
    assert form.status_code == 415
    bad = httpx.post(
        url + "/api/alerts/1/triage", json={"state": "gone", "who": "ana"}, headers=headers, timeout=60
    )
    assert bad.status_code == 400 and "state" in bad.json()["error"]
    done = httpx.post(url + "/api/alerts/1/triage", json=body, headers=headers, timeout=60)
    assert done.status_code == 200 and done.json()["state"] == "acknowledged"
    shown = run_json(capsys, "alert", "1", "--db", store_db)
    assert shown["state"] == "acknowledged"
    assert shown["events"][-1]["by"] == "ana" and shown["events"][-1]["note"] == "<b>looking</b>"
    page = _get(url, "/alerts/1").text
    assert "&lt;b&gt;looking&lt;/b&gt;" in page and "<b>looking" not in page
    assert "bootscope bisect-run --alert 1 --db " in page


def test_hostile_text_is_text_and_every_answer_carries_the_security_headers(url: str) -> None:
    for path in ("/", "/runs", "/runs/1", "/runs/1/boots/0"):
        answer = _get(url, path)
        assert answer.status_code == 200, path
        assert "<script>alert(1)" not in answer.text and "<img src=x" not in answer.text, path
        assert "&lt;script&gt;alert(1)" in answer.text or "\\u003cscript\\u003ealert(1)" in answer.text, path
        policy = answer.headers["content-security-policy"]
        assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
        assert answer.headers["x-content-type-options"] == "nosniff"
    # No inline script on a dashboard page: the policy would refuse it.
    assert "<script>" not in _get(url, "/").text


def test_bad_requests_get_one_line_and_a_status(url: str) -> None:
    cases = {
        "/alerts/99999999999999999999": 404,
        "/alerts/77": 404,
        "/runs/77": 404,
        "/runs/1/boots/999": 404,
        "/series/nope": 404,
        "/series/%3Cscript%3E": 404,
        "/no/such/page": 404,
        "/api/alerts/77": 404,
        "/api/series/nope": 404,
        "/?page=0": 400,
        "/?page=abc": 400,
        "/alerts?state=gone": 400,
        "/api/compare?a=1:smp1": 400,
        "/api/compare?a=1:smp1&b=1:nope": 400,
        "/api/fleet?by=nope": 400,
        "/?x=" + "a" * 5000: 414,
        "/" + "a" * 3000: 414,
    }
    for path, status in cases.items():
        answer = _get(url, path)
        assert answer.status_code == status, (path, answer.text[:200])
        assert "Traceback" not in answer.text and 'File "' not in answer.text, path
        if path.startswith("/api/"):
            assert set(answer.json()) == {"error"} and "\n" not in answer.json()["error"], path
    big = httpx.post(url + "/api/alerts/1/triage", content=b"x" * 100_000, timeout=60)
    assert big.status_code == 413
    assert httpx.delete(url + "/api/alerts/1", timeout=60).status_code == 405
    # A page from another site reaching this server by a name that resolves to loopback is refused.
    assert _get(url, "/", headers={"Host": "evil.example"}).status_code == 400


def test_a_read_only_server_refuses_writes(store_db: str) -> None:
    with serving(store_db) as address:
        answer = httpx.post(
            address + "/api/alerts/1/triage", json={"state": "invalid", "who": "x"}, timeout=60
        )
        assert answer.status_code == 403 and "read-only" in answer.json()["error"]


def test_serve_refuses_a_missing_store_a_taken_port_and_a_short_token(
    tmp_path: Path, store_db: str, url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_in_process("serve", "--db", str(tmp_path / "none.db"), "--port", "0") == 2
    assert "no store" in capsys.readouterr().err
    port = url.rsplit(":", 1)[1]
    assert run_in_process("serve", "--db", store_db, "--port", port) == 2
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{port}" in err and len(err.strip().splitlines()) == 1
    short = tmp_path / "short"
    short.write_text("abc\n")
    assert run_in_process("serve", "--db", store_db, "--port", "0", "--token-file", str(short)) == 2
    assert "at least 16 characters" in capsys.readouterr().err


def test_readers_keep_reading_while_a_run_writes(url: str, store_db: str) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "usecases" / "watch"))
    from stored_series import store_revision

    before = len(_get(url, "/api/runs").json())

    def write() -> None:
        with Store.open(store_db) as store:
            for number in range(8):
                store_revision(store, f"w{number}", [1.2, 1.21, 1.22], time_s=1.8e9 + number)

    errors, listed = read_while_writing(url, ("/api/runs", "/api/overview", "/"), 3, write)
    assert not errors, errors
    assert listed and all(before <= n <= before + 8 for n in listed)
    assert len(_get(url, "/api/runs").json()) == before + 8


def test_a_comparison_is_kept_until_one_of_its_runs_changes(url: str, store_db: str) -> None:
    path = "/compare?a=1:smp1&b=1:smp4"
    first = _get(url, path).text
    # 6 boots of each variant from the real logs (the failed one does not count).
    assert "kernel_init_s: 1:smp4 (6) vs 1:smp1 (6)" in first
    assert _get(url, "/api/compare?a=1:smp1&b=1:smp4").json()["variant"] == "1:smp4"
    assert _get(url, path).text == first
    with Store.open(store_db) as store:
        boots = store.boots(1)
        log = store.boot_log(1, next(b.index for b in boots if b.variant == "smp4" and b.outcome == "ok"))
        record = BootRecord(
            variant="smp4", index=max(b.index for b in boots) + 1, warmup=False, outcome="ok",
            metrics={"kernel_init_s": 3.0}, kernel_release="6.1.0-56-cloud-amd64",
        )  # fmt: skip
        store.record_boot(1, record, list(log))
    assert "kernel_init_s: 1:smp4 (7) vs 1:smp1 (6)" in _get(url, path).text


def test_the_runs_page_is_paged(url: str) -> None:
    page = _get(url, "/runs").text
    assert page.count('<a href="/runs/') >= dashboard_store.REVISIONS + 1
    assert _get(url, "/runs?page=2").status_code == 404


def test_the_overview_finds_series_by_their_words(url: str) -> None:
    every = _get(url, "/api/overview").json()
    (alert,) = every["open_alerts"]
    key = alert["items"][0]["series"]
    found = _get(url, "/api/overview?q=MACHINE=lab1+kernel_init_s").json()
    assert [s["key"] for g in found["groups"] for s in g["series"]] == [key]
    assert found["series_total"] == 1 < every["series_total"]
    none = _get(url, "/api/overview?q=no-such-machine").json()
    assert none["series_total"] == 0 and none["groups"] == []
    page = _get(url, "/?q=%3Cscript%3E").text
    assert 'value="&lt;script&gt;"' in page


def test_a_fleet_answer_is_kept_until_a_file_is_imported(url: str, store_db: str) -> None:
    from bootscope.usecases.fleet.importer import import_into

    before = _get(url, "/api/fleet?by=kernel_series").json()["summary"]
    assert _get(url, "/api/fleet?by=kernel_series").json()["summary"] == before
    # One more real log (dmesg -r of a 6.1 cloud boot): one more boot in the fleet.
    import_into(store_db, None, [str(dashboard_store.DATA / "debian-6.1-cloud-smp2-dmesg-r.log")], None, 1)
    after = _get(url, "/api/fleet?by=kernel_series").json()["summary"]
    assert sum(g["boots"] for g in after["groups"]) == sum(g["boots"] for g in before["groups"]) + 1

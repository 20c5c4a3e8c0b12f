"""What a new user hit (issue 32), in a real browser: unknown paths and bad ids as pages, every form error at
once, the diff page's wording, /matrix with a kind shown, tap targets marked, the targets list searched
without JavaScript, and a delete that asks first and says it happened."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from tests.app.browser import playwright_or_skip
from tests.app.helpers import make_target, wait_for_run

pytestmark = pytest.mark.browser

sync_api = playwright_or_skip()

URL = "ws://127.0.0.1:9"


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("/nope", "There is no page at /nope."),
        ("/targets/demo/runs/x", "There is no page at /targets/demo/runs/x."),
        ("/runs/abc", "There is no run 'abc'."),
        ("/runs/abc/diff", "There is no run 'abc'."),
    ],
)
def test_unknown_paths_and_bad_ids_are_the_404_page_in_a_browser(
    live_service: str, page: Any, path: str, says: str
) -> None:
    response = page.goto(live_service + path)
    assert response.status == 404
    assert response.headers["content-type"].startswith("text/html")
    assert page.locator("main li").inner_text() == says
    # The known 404s' page, with the navigation to go on from.
    assert page.locator("main h1").inner_text() == "Not Found" and page.locator("nav a[href='/runs']").count()
    # The API keeps answering JSON, whatever the client accepts.
    with httpx.Client(base_url=live_service, headers={"Accept": "text/html"}) as http:
        missing = http.get("/api/v1/nope")
        assert missing.status_code == 404 and missing.json() == {"detail": "Not Found"}
        bad = http.get("/api/v1/runs/abc")
        assert bad.status_code == 422 and bad.json()["detail"][0]["type"] == "int_parsing"
    assert httpx.get(live_service + path).headers["content-type"] == "application/json"  # no browser: JSON


def test_the_add_target_form_shows_every_fields_error_at_once(live_service: str, page: Any) -> None:
    """Bad JSON in an option used to hide a reserved name and a wrong URL scheme (values the browser lets through)."""
    expect = sync_api.expect
    page.goto(live_service + "/targets/new?kind=plugrl-server")
    page.fill("#name", "new")
    page.fill("#url", "http://127.0.0.1:9")
    page.fill("#opt-extra_headers", "{not json")
    page.get_by_role("button", name="Add target").click()
    expect(page.locator(".field.invalid")).to_have_count(3)
    for field, message in (
        ("name", "reserved"),
        ("url", "plugrl-server targets use ws://"),
        ("opt-extra_headers", "not valid JSON"),
    ):
        expect(page.locator(".field.invalid", has=page.locator(f"#{field}"))).to_contain_text(message)
    assert httpx.get(live_service + "/api/v1/targets").json() == []  # nothing was saved


def test_diff_matrix_tap_mark_search_and_delete_as_a_newcomer_meets_them(
    live_service: str, page: Any, fake_kind: str
) -> None:
    expect = sync_api.expect
    with httpx.Client(base_url=live_service, timeout=30) as http:
        make_target(http, "alpha", fake_kind, URL, description="the first trainer")
        make_target(http, "beta", fake_kind, URL)
        body = {"name": "watched", "kind": "plugrl", "upstream": URL, "tap": {}}
        assert http.post("/api/v1/taps", json=body).status_code == 201, body
        passing = http.post("/api/v1/targets/alpha/runs", json={}).json()["id"]
        wait_for_run(http, passing)
        failing = http.post("/api/v1/targets/alpha/runs", json={"options": {"fail": ["fake.1.greets"]}}).json()["id"]
        wait_for_run(http, failing)

    # The diff against the last passing run says so, as its button does, and shows no markup.
    page.goto(f"{live_service}/runs/{failing}")
    page.get_by_role("link", name=f"Diff vs last passing (#{passing})").click()
    expect(page.locator("h2", has_text="Last passing: run #")).to_be_visible()
    expect(page.locator("#against")).to_have_value(str(passing))
    assert "baseline" not in page.locator("main").inner_text().lower()
    page.goto(f"{live_service}/runs/{passing}/diff?against=baseline")
    expect(page.locator(".card.empty")).to_contain_text("no last passing run")
    page.goto(f"{live_service}/runs/{passing}/diff?against=nonsense")
    text = page.locator("main").inner_text()
    assert "`" not in text and "last passing" in text

    # /matrix shows the first kind's matrix at once.
    page.goto(live_service + "/matrix")
    expect(page.locator("h1 .tag")).to_have_text(fake_kind)
    expect(page.locator("table.cross th.target-col", has_text="alpha")).to_be_visible()

    # The overview marks the tap, and its search filters on the server (works without JavaScript).
    page.goto(live_service + "/")
    expect(page.locator("tr", has_text="watched").locator(".tap-mark")).to_have_text("tap")
    expect(page.locator("tr", has_text="alpha").locator(".tap-mark")).to_have_count(0)
    page.fill("#q", "FIRST trainer")
    page.get_by_role("button", name="Filter").click()
    expect(page).to_have_url(re.compile(r"/\?q=FIRST\+trainer&kind=$"))
    expect(page.locator("table.targets tbody tr")).to_have_count(1)
    expect(page.locator("#match-count")).to_have_text("1 of 3 targets")
    page.select_option("#kind-filter", "plugrl-server")
    page.fill("#q", "")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator("table.targets tbody tr")).to_have_count(1)
    expect(page.locator("table.targets tbody tr")).to_contain_text("watched")
    page.goto(live_service + "/?q=100%25_")  # LIKE's wildcards are searched as text
    expect(page.locator("#no-match")).to_contain_text("No target matches")

    # Delete is on the target's page; it asks first, then the list says it is gone.
    page.goto(live_service + "/targets/alpha")
    page.get_by_role("link", name="Delete…").click()
    expect(page.locator("h1")).to_have_text("Delete alpha?")
    expect(page.locator("#delete-what")).to_contain_text("its 2 runs")
    page.get_by_role("button", name="Delete alpha").click()
    expect(page).to_have_url(live_service + "/?deleted=alpha")
    expect(page.locator("#deleted-notice")).to_contain_text("Target alpha was deleted")
    expect(page.locator("table.targets tbody tr")).to_have_count(2)


def test_one_run_with_phases_and_options_picked_in_the_browser(live_service: str, page: Any, fake_kind: str) -> None:
    """The target page's "Run with options…": phases ticked and options set apply to that run only."""
    expect = sync_api.expect
    with httpx.Client(base_url=live_service, timeout=30) as http:
        make_target(http, "picky", fake_kind, URL, options={"delay": 0.01, "fail": ["fake.2.fast"]})
    page.goto(live_service + "/targets/picky")
    page.get_by_role("link", name="Run with options…").click()
    expect(page.locator("#phase-hello")).to_be_checked()
    expect(page.locator("#phase-stop")).not_to_be_checked()  # opt-in: ticked only by choice
    expect(page.locator("#opt-fail")).to_have_value("fake.2.fast")  # the target's values, to change

    # Nothing ticked: the form comes back saying so, with what was typed.
    for name in ("hello", "echo"):
        page.uncheck(f"#phase-{name}")
    page.fill("#opt-fail", "fake.1.greets")
    page.get_by_role("button", name="Run with these").click()
    expect(page.locator("#phases .field-error")).to_have_text("pick at least one phase")
    expect(page.locator("#opt-fail")).to_have_value("fake.1.greets")

    page.check("#phase-hello")
    page.check("#phase-stop")
    page.fill("#opt-delay", "")  # empty: the default, not the target's 0.01
    page.get_by_role("button", name="Run with these").click()
    expect(page).to_have_url(re.compile(r"/runs/\d+$"))
    run_id = int(page.url.rsplit("/", 1)[1])
    with httpx.Client(base_url=live_service, timeout=30) as http:
        run = wait_for_run(http, run_id)
        assert run["phases"] == ["hello", "stop"] and run["trigger"] == "browser"
        assert run["options"]["fail"] == ["fake.1.greets"] and run["options"]["delay"] == 0.0
        assert run["outcome"] == "fail"
        verdicts = {r["clause_id"]: r["verdict"] for r in http.get(f"/api/v1/runs/{run_id}/results").json()}
        assert verdicts["fake.1.greets"] == "fail" and verdicts["fake.3.stops"] == "pass"
        assert verdicts["fake.2.echoes"] == "skip"
        assert http.get("/api/v1/targets/picky").json()["options"] == {"delay": 0.01, "fail": ["fake.2.fast"]}

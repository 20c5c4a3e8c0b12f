"""What a new user hit (issue 32), in a real browser: unknown paths and bad ids as pages, every form error at
once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    pytest.skip("Debian's chromium is not installed", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-background-networking", "--disable-gpu", "--disable-dev-shm-usage"],
            headless=True,
        )
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(30_000)
    yield context.new_page()
    context.close()


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

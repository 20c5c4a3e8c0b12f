"""`/docs` loads only assets the service itself serves, so it works without internet; there is no `/redoc`
(ReDoc's bundle fetches its logo from a CDN)."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from fastapi.testclient import TestClient

from app.settings import Settings
from tests.app.helpers import service_settings

CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture
def settings(database_url: str) -> Settings:
    return service_settings(database_url)


def test_redoc_is_not_served(client: TestClient) -> None:
    assert client.get("/redoc").status_code == 404


@pytest.mark.parametrize("page", ["/docs"])
def test_docs_pages_reference_only_local_assets_that_are_served(client: TestClient, page: str) -> None:
    response = client.get(page)
    assert response.status_code == 200
    urls = re.findall(r"""(?:src|href|url)\s*[=:]\s*['"]([^'"]+)['"]""", response.text)
    assert len(urls) >= 2, response.text
    for url in urls:
        assert url.startswith("/") and not urlsplit(url).netloc, f"{page} loads {url}"
        assert client.get(url).status_code == 200, url
    assert "cdn" not in response.text.lower() and "fonts.googleapis" not in response.text


def _local(url: str) -> bool:
    return urlsplit(url).hostname == "127.0.0.1" or url.startswith(("data:", "blob:"))


@pytest.mark.browser
def test_swagger_ui_renders_the_api_with_the_network_cut_off(live_service: str) -> None:
    """Chromium with every host but the service's unresolvable, as on a host without internet."""
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--no-proxy-server"],
        )
        try:
            page = browser.new_page()
            outside: list[str] = []
            page.on("request", lambda request: None if _local(request.url) else outside.append(request.url))
            page.goto(f"{live_service}/docs")
            page.wait_for_selector(".opblock-summary-path[data-path='/api/v1/targets/{name}/runs']", timeout=20_000)
            assert page.locator(".swagger-ui .info .title").inner_text().startswith("rlconform")
            assert page.locator("text=Unable to render this definition").count() == 0
            assert outside == []
        finally:
            browser.close()

"""The can-i-deploy page and the compatibility matrix in a real browser with JavaScript off, at 1280 and 400 px:
the form asks, the answer names the failed clause, drift is marked, and nothing is wider than the window."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from app.db import make_engine
from app.settings import Settings
from tests.app.browser import new_context, playwright_or_skip, shoot
from tests.app.helpers import make_target
from tests.app.test_deploy_rules import add_run

playwright_or_skip()
SHOTS = Path("/tmp/rlconform-deploy")  # screenshots for a person to look at, never committed


@pytest.fixture
def page(browser: Any) -> Any:
    return new_context(browser, java_script_enabled=False).new_page()


def fits(page: Any, name: str) -> None:
    """At 1280 and 400 px wide the page scrolls only down, never sideways; a screenshot of each is kept."""
    for width, wide in shoot(page, SHOTS, name).items():
        assert wide <= width, f"{name} is {wide} px wide at {width} px"


def test_ask_in_the_form_and_read_the_matrix(live_service: str, settings: Settings, page: Any) -> None:
    with httpx.Client(base_url=live_service) as http:
        make_target(http, "policy-server-for-the-cluster", "plugrl-server", "ws://127.0.0.1:9")
        make_target(http, "trainer", "plugrl-client", "")
        engine = make_engine(settings.database_url)
        add_run(engine, "policy-server-for-the-cluster", "v1")
        add_run(engine, "policy-server-for-the-cluster", "2.0.0-rc.1+build.5f1c2a9e", "fail")
        add_run(engine, "trainer", "c1")
        for target, version, where in (("trainer", "c1", "staging"), ("policy-server-for-the-cluster", "v9", "canary")):
            body = {"target": target, "version": version, "environment": where}
            assert http.post("/api/v1/deployments", json=body).status_code == 201

    page.goto(f"{live_service}/can-i-deploy")
    page.select_option("#cid-target", "policy-server-for-the-cluster")
    page.fill("#cid-version", "2.0.0-rc.1+build.5f1c2a9e")
    page.fill("#cid-to", "staging")
    page.click("#can-i-deploy-form button[type=submit]")
    answer = page.locator("#answer")
    heading = " ".join(answer.locator("h2").inner_text().split())
    assert heading == "policy-server-for-the-cluster 2.0.0-rc.1+build.5f1c2a9e to staging: ✗ no"
    assert answer.locator("a.mono", has_text="plugrl.5.3.time-major").count() == 1
    assert answer.locator("tbody tr").count() == 2
    fits(page, "can-i-deploy")

    page.fill("#cid-version", "v 1")
    page.click("#can-i-deploy-form button[type=submit]")
    assert "a version is letters, digits" in page.locator("[role=alert]").inner_text()

    page.goto(f"{live_service}/compatibility")
    rows = page.locator("#kind-plugrl-server tbody tr")
    assert rows.count() == 3
    assert "deployed, never checked" in page.locator("#kind-plugrl-server tr.drift").inner_text()
    fits(page, "compatibility")

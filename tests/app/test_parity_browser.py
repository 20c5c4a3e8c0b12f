"""A parity run from the dashboard in a real browser: pick two targets of one kind, run, and see the
first divergence (path, both values, both byte strings) on load at 1280×800, without scrolling."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.app.browser import playwright_or_skip
from tests.app.conftest import QUICK_PLUGRL
from tests.app.helpers import make_target
from tests.checks.parity.test_scripts import nudged

pytestmark = pytest.mark.browser

sync_api = playwright_or_skip()
reference = pytest.importorskip("checks.plugrl.reference")

SCREENSHOTS = {1280: Path("/tmp/rlconform-parity-1280.png"), 400: Path("/tmp/rlconform-parity-400.png")}


@pytest.fixture
def nudged_pair(background_loop) -> Iterator[tuple[Any, Any]]:
    """Two reference servers; the second's policy answers one action value one float32 ulp off."""
    servers = [background_loop.run(reference.start_reference_server()) for _ in range(2)]
    servers[1].policy = nudged(servers[1].policy)
    try:
        yield servers[0], servers[1]
    finally:
        for server in servers:
            background_loop.run(server.close())


def test_pick_two_targets_run_and_see_the_first_divergence_on_load(
    live_service: str, nudged_pair: tuple[Any, Any], browser: Any
) -> None:
    expect = sync_api.expect
    old, new = nudged_pair
    with httpx.Client(base_url=live_service) as http:
        make_target(http, "trainer-old", "plugrl-server", old.url, options=QUICK_PLUGRL)
        make_target(http, "trainer-new", "plugrl-server", new.url, options=QUICK_PLUGRL)
        make_target(http, "trainer-far", "plugrl-server", new.url, options=QUICK_PLUGRL, worker_label="cluster-b")
        make_target(http, "chat", "openai-chat", "http://127.0.0.1:9/v1")
    page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    page.set_default_timeout(30_000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    page.goto(live_service + "/")
    page.get_by_role("link", name="Parity").click()
    expect(page).to_have_url(live_service + "/parity/new")
    page.select_option("#first", "trainer-old")
    # Only targets of the first one's kind are offered as the second side.
    assert page.locator("#second option[value='target:chat']").is_hidden()
    page.select_option("#second", "target:trainer-far")
    expect(page.locator("#label-warning")).to_contain_text("cluster-b")
    page.select_option("#second", "target:trainer-new")
    expect(page.locator("#label-warning")).to_be_hidden()
    page.get_by_role("button", name="Run parity").click()
    expect(page).to_have_url(re.compile(r"/parity/\d+$"))
    page.wait_for_selector("h1 .pv-divergent", timeout=60_000)  # the page refreshes until the comparison is done

    first = page.locator("#first-divergence")
    expect(first).to_be_visible()
    expect(first.locator(".pv-first-path")).to_have_text("actions[0][0,0,0]")
    values = first.locator(".pv-bytes")
    assert values.count() == 2 and values.nth(0).inner_text() != values.nth(1).inner_text()
    # Seen on load: at the top of the page, the whole card inside the 800 px viewport.
    assert page.evaluate("window.scrollY") == 0
    box = first.bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 800, box
    # The tree of paths has the branch of the first divergence open.
    expect(page.locator(".pv-tree details[open] .pv-path", has_text="actions[0][0,0,0]").first).to_be_visible()
    page.screenshot(path=str(SCREENSHOTS[1280]))
    page.set_viewport_size({"width": 400, "height": 800})
    expect(first).to_be_visible()
    page.screenshot(path=str(SCREENSHOTS[400]), full_page=True)

    # Save side A as a golden; it is listed with its download link.
    page.set_viewport_size({"width": 1280, "height": 800})
    page.fill("#golden-0", "old-build")
    page.get_by_role("button", name="Save A as golden").click()
    expect(page).to_have_url(re.compile(r"/parity/new#goldens$"))
    expect(page.locator("#goldens td", has_text="old-build")).to_be_visible()
    assert errors == []

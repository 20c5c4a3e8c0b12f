"""A client-kind run in a real browser: create a plugrl-client target, press Run, copy the command the
page shows, run it (the reference client) and watch the matrix fill in until the run passes."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.app.browser import add_target_in_the_form, new_context, playwright_or_skip, shoot

pytestmark = pytest.mark.browser

sync_api = playwright_or_skip()

ROOT = Path(__file__).resolve().parents[2]
VENV_HOME = Path(sys.executable).parents[2]  # where `.venv/bin/rlconform` resolves, as in a checkout
SHOTS = Path("/tmp/rlconform-shots")


@pytest.fixture
def browser_context(browser: Any) -> Any:
    return new_context(browser)


def test_run_a_client_kind_from_the_page_with_the_command_it_shows(live_service: str, browser_context: Any) -> None:
    expect = sync_api.expect
    browser_context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_service)
    page = browser_context.new_page()
    console_errors: list[str] = []
    page.on("pageerror", lambda error: console_errors.append(str(error)))

    # A client kind asks for no URL: the run listens and says where.
    def no_url_field() -> None:
        expect(page.locator("#url")).to_have_count(0)
        expect(page.locator("#listen-hint")).to_contain_text("There is no URL to enter")

    fields = {"#opt-steps": "6", "#opt-reconnect_window": "0.4", "#opt-timeout": "3", "#opt-connect_deadline": "90"}
    add_target_in_the_form(page, live_service, "plugrl-client", "env-client", fields, before_filling=no_url_field)

    # Run: the page waits for a client, with the address, a countdown and a ready command.
    page.get_by_role("button", name="Run now").click()
    expect(page).to_have_url(re.compile(r"/runs/\d+$"))
    heading = page.locator("#announcement-title")
    expect(heading).to_contain_text(re.compile(r"waiting for a client at ws://127\.0\.0\.1:\d+"))
    countdown = page.locator(".announcement .countdown")
    first = int(countdown.inner_text().split()[1])
    page.wait_for_function(
        f"() => Number(document.querySelector('.announcement .countdown').textContent.split(' ')[1]) < {first}"
    )
    page.locator("button.copy[data-copy=announce-command]").click()
    command = page.evaluate("() => navigator.clipboard.readText()")
    assert command == page.locator("#announce-command").inner_text()
    assert re.fullmatch(r"\.venv/bin/rlconform reference-client plugrl ws://127\.0\.0\.1:\d+", command)
    shoot(page, SHOTS, "listen-waiting")

    # Run the copied command; watch the matrix fill in while the run is live, then the run pass.
    client = subprocess.Popen(
        shlex.split(command),
        cwd=VENV_HOME,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        page.wait_for_function(
            "() => { const m = document.querySelector('#matrix .matrix');"
            " return m && m.dataset.live === '1' && m.querySelectorAll('a.v-pass').length > 0; }",
            timeout=60_000,
        )
        page.wait_for_selector("#run-status .s-finished", timeout=120_000)
        expect(page.locator("h1 .o-pass")).to_be_visible()
        expect(page.locator(".announcement")).to_have_count(0)
        shoot(page, SHOTS, "listen-finished")
        assert client.wait(timeout=30) == 0
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
    assert console_errors == []


@pytest.fixture
def settings(tmp_path: Path) -> Any:
    from tests.app.helpers import service_settings

    return service_settings(f"sqlite:///{tmp_path / 'one-slot.db'}", max_concurrent_runs=1)


def test_the_heading_follows_a_listen_run_from_queued_to_running(live_service: str, browser_context: Any) -> None:
    """With one run slot taken, a second client run is queued; when the slot frees, its heading says running."""
    import httpx

    expect = sync_api.expect
    options = {"steps": 6, "reconnect_window": 0.4, "timeout": 3, "connect_deadline": 120}
    with httpx.Client(base_url=live_service, timeout=30) as http:
        for name in ("first", "second"):
            body = {"name": name, "kind": "plugrl-client", "options": options}
            assert http.post("/api/v1/targets", json=body).status_code == 201
        holding = http.post("/api/v1/targets/first/runs", json={}).json()["id"]
        waiting = http.post("/api/v1/targets/second/runs", json={}).json()["id"]
        page = browser_context.new_page()
        page.goto(f"{live_service}/runs/{waiting}")
        expect(page.locator("#run-status")).to_contain_text("queued")
        assert http.post(f"/api/v1/runs/{holding}/cancel").status_code in (200, 202)
        expect(page.locator("#announcement-title")).to_contain_text("waiting for a client", timeout=30_000)
        expect(page.locator("#run-status")).to_contain_text("running")
        assert http.get(f"/api/v1/runs/{waiting}").json()["status"] == "running"
        assert http.post(f"/api/v1/runs/{waiting}/cancel").status_code in (200, 202)

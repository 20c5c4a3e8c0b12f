"""The dashboard in a real browser: Debian's chromium driven by Playwright against a live service.

Add a plugrl-server target through the form, pointing at a server that
misdeclares its action horizon; run it and watch results appear while it
runs; open a failing clause's evidence; fix the server, run again and open
the diff against the previous run.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.server import serve

from checks.plugrl.reference import REUSE_FEATURE, ReferenceServer
from tests.app.browser import add_target_in_the_form, playwright_or_skip, shoot
from tests.app.conftest import QUICK_PLUGRL as QUICK
from tests.zoo.plugrl_server.core import ZooServer

pytestmark = pytest.mark.browser

sync_api = playwright_or_skip()

HOSTILE = "<script>alert(1)</script>"
BROKEN_CLAUSE = "plugrl.5.1.declared-horizon"
SCREENSHOT = Path("/tmp/rlconform-run.png")


class MisdeclaredHorizon(ReferenceServer):
    """The reference server, except its metadata declares a horizon one longer than it sends, until fixed.

    Its name is a script tag, to prove the pages escape what targets send.
    """

    broken = True

    def metadata(self) -> dict[str, Any]:
        data = super().metadata()
        if self.broken:
            data.update(action_horizon=self.policy.horizon + 1, server=HOSTILE)
        return data


async def start_misdeclared(policy_delay: float) -> MisdeclaredHorizon:
    server = MisdeclaredHorizon(
        horizon=4, action_dim=3, batching=False, stop_after=None, features=(REUSE_FEATURE,), policy_delay=policy_delay
    )
    server.server = await serve(server.handle, "127.0.0.1", 0, compression=None, max_size=None)
    server.host, server.port = next(iter(server.server.sockets)).getsockname()[:2]
    return server


@pytest.fixture
def broken_server(background_loop) -> Iterator[MisdeclaredHorizon]:
    # A slow policy stretches the run over a few seconds, so progress is visible.
    server = background_loop.run(start_misdeclared(policy_delay=0.1))
    try:
        yield server
    finally:
        background_loop.run(server.close())


def wait_until_finished(page: Any) -> None:
    """The page reloads itself when the run ends; wait for the final header."""
    page.wait_for_selector("#run-status .s-finished", timeout=90_000)


def test_add_run_inspect_and_diff_in_a_real_browser(
    live_service: str, broken_server: MisdeclaredHorizon, page: Any
) -> None:
    expect = sync_api.expect
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    console_errors: list[str] = []  # a script error or a failed load (once: the favicon) would land here
    page.on("pageerror", lambda error: console_errors.append(str(error)))
    page.on("console", lambda message: message.type == "error" and console_errors.append(message.text))

    # Add the target through the generated form.
    fields = {"#url": broken_server.url, "#opt-timeout": "2", "#opt-patience": "0.5"}
    add_target_in_the_form(page, live_service, "plugrl-server", "broken-trainer", fields)

    # Run it and watch results arrive while the run is still live.
    page.get_by_role("button", name="Run now").click()
    expect(page).to_have_url(re.compile(r"/runs/\d+$"))
    first_run = page.url
    page.wait_for_function(
        "() => { const m = document.querySelector('#matrix .matrix');"
        " return m && m.dataset.live === '1' && m.querySelectorAll('a.v-pass').length > 0; }",
        timeout=60_000,
    )
    wait_until_finished(page)
    expect(page.locator("h1 .o-fail")).to_be_visible()
    page.screenshot(path=str(SCREENSHOT))

    # Filters live in the URL.
    page.check("input[name=verdict][value=fail]")
    page.get_by_role("button", name="Apply").click()
    expect(page).to_have_url(re.compile(r"\?verdict=fail"))
    rows = page.locator("#matrix table.results tbody tr")
    assert rows.count() >= 1
    for index in range(rows.count()):
        expect(rows.nth(index).locator(".v-word")).to_have_text("fail")

    # One click from a failing cell to its evidence.
    page.locator(f"tr:has(a.clause-id:text-is('{BROKEN_CLAUSE}')) a.v-fail").first.click()
    expect(page).to_have_url(re.compile(rf"/clauses/[^/]+/{re.escape(BROKEN_CLAUSE)}$"))
    expect(page.locator(".statement")).to_contain_text("action_horizon")
    expect(page.locator(".versus .actual pre")).not_to_be_empty()
    expect(page.locator("table.frames tbody tr").first).to_be_visible()
    expect(page.locator("body")).to_contain_text(HOSTILE)  # shown as text...
    assert dialogs == []  # ...never run

    # Fix the server, run again, and diff against the previous run.
    broken_server.broken = False
    page.goto(first_run)
    page.get_by_role("button", name="Run again").click()
    expect(page).not_to_have_url(first_run)
    wait_until_finished(page)
    expect(page.locator("h1 .o-pass")).to_be_visible()
    page.get_by_role("link", name=re.compile("Diff vs previous")).click()
    expect(page).to_have_url(re.compile(r"/diff\?against=\d+$"))
    expect(page.locator("#newly_passing")).to_contain_text(BROKEN_CLAUSE)
    expect(page.locator("#newly_failing")).to_contain_text("none")
    assert console_errors == []


SHOTS = Path("/tmp/rlconform-shots")


class ClosesOnFirstInfer(ZooServer):
    """Greets properly, then closes 1011 'broken server' on the first infer of every connection."""

    async def infer(self, connection, env_ids):
        await connection.ws.close(1011, "broken server")
        raise asyncio.CancelledError


@pytest.fixture
def dying_server(background_loop) -> Iterator[str]:
    server = background_loop.run(ClosesOnFirstInfer().start())
    try:
        yield server.url
    finally:
        background_loop.run(server.close())


def test_root_causes_rollup_config_history_runs_page_and_matrix_in_a_real_browser(
    live_service: str, dying_server: str, reference_server, page: Any
) -> None:
    expect = sync_api.expect
    api = httpx.Client(base_url=live_service)
    for name, url in (("dying", dying_server), ("healthy", reference_server())):
        created = api.post(
            "/api/v1/targets", json={"name": name, "kind": "plugrl-server", "url": url, "options": QUICK}
        )
        assert created.status_code == 201, created.text

    # A failing run: the banner names the failure first, then the cause; no pending row; one row per clause.
    page.goto(live_service + "/targets/dying")
    shoot(page, SHOTS, "target-empty")
    page.get_by_role("button", name="Run now").click()
    wait_until_finished(page)
    banner = page.locator(".banner")
    expect(banner).to_contain_text("not met")
    expect(banner.locator(".causes")).to_contain_text("closed it with code 1011")
    expect(banner.locator(".causes")).to_contain_text("in phase exchange")
    assert page.locator(".v-pending").count() == 0
    clauses = page.locator("tr.clause-row").evaluate_all("rows => rows.map(r => r.dataset.clause)")
    assert len(clauses) == len(set(clauses)) > 0
    page.locator("details.phases summary").first.click()
    expect(page.locator("details.phases[open] .phase-results li").first).to_be_visible()
    shoot(page, SHOTS, "run-failing")
    banner.locator("a.evidence-link").first.click()
    expect(page.locator("table.frames tbody tr").first).to_be_visible()
    shoot(page, SHOTS, "evidence")

    # Editing the URL is a configuration change: marked in the history grid, not a flake.
    assert api.patch("/api/v1/targets/dying", json={"url": dying_server.replace("127.0.0.1", "localhost")}).is_success
    page.goto(live_service + "/targets/dying")
    page.get_by_role("button", name="Run now").click()
    wait_until_finished(page)
    page.goto(live_service + "/targets/dying")
    expect(page.locator("th.run-col .config-mark")).to_have_count(1)
    expect(page.locator("th.run-col .config-mark")).to_have_attribute("title", "URL changed")
    expect(page.locator("#cmd-ci")).to_contain_text("rlconform ci --server")  # as this installation runs it
    shoot(page, SHOTS, "target-history")
    page.goto(live_service + "/runs/" + str(api.get("/api/v1/runs", params={"target": "dying"}).json()[0]["id"]))
    page.get_by_role("link", name=re.compile("Diff vs previous")).click()
    expect(page.locator(".config-changes")).to_contain_text("URL changed")
    shoot(page, SHOTS, "diff")

    # The healthy target, then the runs page and the cross-target matrix.
    page.goto(live_service + "/targets/healthy")
    page.get_by_role("button", name="Run now").click()
    wait_until_finished(page)
    page.goto(live_service + "/runs")
    expect(page.locator("table.ended-runs tbody tr")).to_have_count(3)
    page.select_option("#f-target", "healthy")
    page.get_by_role("button", name="Apply").click()
    expect(page.locator("table.ended-runs tbody tr")).to_have_count(1)
    page.goto(live_service + "/runs")
    shoot(page, SHOTS, "runs")
    page.get_by_role("link", name="Matrix").first.click()
    page.get_by_role("link", name="plugrl-server").click()
    expect(page.locator("th.target-col")).to_have_count(2)
    page.locator("table.cross a.v-fail").first.click()
    expect(page).to_have_url(re.compile(r"/runs/\d+/clauses/"))
    page.go_back()
    shoot(page, SHOTS, "matrix")
    page.goto(live_service + "/")
    shoot(page, SHOTS, "overview")
    page.goto(live_service + "/targets/new")
    shoot(page, SHOTS, "target-form")
    page.goto(live_service + "/spec")
    shoot(page, SHOTS, "spec")

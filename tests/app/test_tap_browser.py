"""The tap run page and the tap form in a real browser at 400 px and 1280 px, without JavaScript: nothing
scrolls sideways, every button is on screen, the live counters and the first violation's evidence show."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.settings import Settings
from checks.plugrl_client.reference import ReferenceClient
from tests.app.conftest import BackgroundLoop
from tests.app.helpers import service_settings, wait_until
from tests.app.test_browser_widths import OFF_SCREEN, SHOTS, WIDTHS

pytestmark = pytest.mark.browser


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return service_settings(f"sqlite:///{tmp_path / 'tap.db'}", tap_flush_seconds=0.2)


def watched_zoo_run(http: httpx.Client, loop: BackgroundLoop, port: int) -> int:
    """A tap run between the reference client and a zoo server, still watching, with a violation counted."""
    created = http.post(
        "/api/v1/taps",
        json={"name": "a-tap-target-with-a-rather-long-name", "kind": "plugrl", "upstream": f"ws://127.0.0.1:{port}"},
    )
    assert created.status_code == 201, created.text
    run_id = int(http.post("/api/v1/targets/a-tap-target-with-a-rather-long-name/runs", json={}).json()["id"])
    found: dict[str, Any] = {}

    def counted() -> bool:
        answer = http.get(f"/api/v1/runs/{run_id}/tap")
        found.update(answer.json() if answer.status_code == 200 else {})
        if found.get("listen_url") and not found.get("driven"):
            try:
                loop.run(ReferenceClient(found["listen_url"]).session(), timeout=20)
            except Exception:  # the conforming client gives up on the broken server
                pass
            found["driven"] = True
        return any(c["violated"] for c in found.get("ledger", {}).get("clauses", []))

    wait_until(counted, timeout=30, what="a violation counted")
    return run_id


def test_the_tap_pages_fit_400_px_and_1280_px_without_javascript(live_service: str, browser: Any) -> None:
    from tests.zoo.plugrl_server.faults_content import EnvMajor

    loop = BackgroundLoop()
    server = loop.run(EnvMajor(stop_after=12).start())
    try:
        with httpx.Client(base_url=live_service, timeout=30) as http:
            run_id = watched_zoo_run(http, loop, server.port)
            problems: dict[str, Any] = {}
            SHOTS.mkdir(exist_ok=True)
            for width in WIDTHS:
                context = browser.new_context(viewport={"width": width, "height": 900}, java_script_enabled=False)
                page = context.new_page()
                for path in (f"/runs/{run_id}/tap", "/targets/new-tap"):
                    page.goto(live_service + path)
                    page.wait_for_load_state("load")
                    name = re.sub(r"[^A-Za-z0-9]+", "_", path).strip("_")
                    page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)
                    seen = page.evaluate(OFF_SCREEN)
                    if seen["scroll"] > seen["width"] or seen["buttons"]:
                        problems[f"{path} at {width}px"] = seen
                    if path.endswith("/tap"):
                        text = page.inner_text("main")
                        assert "First violation" in text and "plugrl.5.3.time-major" in text, text[:2000]
                        assert page.is_visible("text=■ Stop tap") and page.is_visible("#tap-messages")
                context.close()
            assert http.post(f"/api/v1/runs/{run_id}/cancel").status_code == 200
    finally:
        loop.run(server.close())
        loop.close()
    assert problems == {}, problems

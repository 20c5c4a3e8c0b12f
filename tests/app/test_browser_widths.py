"""Every page at 400 px and at 1280 px in a real browser: nothing scrolls sideways, every button is on screen.

The service runs with its demo targets; the test gives it one run of every demo, a
parity run, a client-kind run waiting for its client and a cancelled one, then visits
every page (and the error page) at both widths. Screenshots go to SHOTS for a person
to look at; they are never committed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.settings import Settings
from tests.app.browser import playwright_or_skip
from tests.app.conftest import QUICK_PLUGRL
from tests.app.helpers import service_settings

pytestmark = pytest.mark.browser

playwright_or_skip()

SHOTS = Path("/tmp/rlconform-shots")
WIDTHS = (400, 1280)
# What lies past the viewport's edges: the page's own width and every button that is not fully on screen.
OFF_SCREEN = """() => {
  const width = document.documentElement.clientWidth;
  const buttons = [...document.querySelectorAll('button, a.button, input[type=submit], select')]
    .filter(b => b.offsetParent !== null && !b.closest('[hidden]'))
    .map(b => [b, b.getBoundingClientRect()])
    .filter(([b, r]) => r.width > 0 && (r.left < -0.5 || r.right > width + 0.5))
    .map(([b, r]) => {
      const label = (b.textContent || b.value || '').trim().slice(0, 30);
      return `${b.tagName.toLowerCase()} "${label}" at ${Math.round(r.left)}..${Math.round(r.right)}`;
    });
  // A select whose chosen text is wider than its box (less the arrow) shows that text cut off.
  const canvas = document.createElement('canvas').getContext('2d');
  const cut = [...document.querySelectorAll('select')].filter(s => s.offsetParent !== null).filter(s => {
    const style = getComputedStyle(s);
    canvas.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    const text = s.selectedIndex >= 0 ? s.options[s.selectedIndex].text : '';
    const room = s.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 20;
    return canvas.measureText(text).width > room;
  }).map(s => `select #${s.id}`);
  return {scroll: document.documentElement.scrollWidth, width, buttons: buttons.concat(cut)};
}"""


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return service_settings(f"sqlite:///{tmp_path / 'widths.db'}", demo=True, max_concurrent_runs=8)


def wait_ended(http: httpx.Client, run_id: int, timeout: float = 120) -> dict[str, Any]:
    import time

    deadline = time.monotonic() + timeout
    while True:
        run = http.get(f"/api/v1/runs/{run_id}").json()
        if run["status"] not in ("queued", "running"):
            return run
        assert time.monotonic() < deadline, run
        time.sleep(0.1)


def populate(http: httpx.Client) -> list[str]:
    """Runs of every kind of page; returns the paths of every page to look at."""
    targets = [t["name"] for t in http.get("/api/v1/targets").json()]
    quick = {"demo": {"options": QUICK_PLUGRL}}
    ran = {name: http.post(f"/api/v1/targets/{name}/runs", json=quick.get(name, {})).json()["id"] for name in targets}
    for run_id in ran.values():
        wait_ended(http, run_id)
    again = http.post("/api/v1/targets/demo/runs", json=quick["demo"]).json()["id"]
    wait_ended(http, again)
    parity = http.post("/api/v1/parity-runs", json={"first": "demo", "second": "demo"}).json()["id"]
    wait_ended(http, parity)
    client = {"name": "a-client-with-a-rather-long-name-for-narrow-screens", "kind": "plugrl-client"}
    assert http.post("/api/v1/targets", json={**client, "options": {"connect_deadline": 600}}).status_code == 201
    waiting = http.post(f"/api/v1/targets/{client['name']}/runs", json={}).json()["id"]
    results = http.get(f"/api/v1/runs/{ran['demo']}/results").json()
    first = results[0]
    paths = [
        "/",
        "/targets/new",
        "/targets/demo",
        "/targets/demo/edit",
        "/targets/demo/run-options",
        "/targets/demo/delete",
        "/?q=demo&kind=plugrl-server",
        f"/targets/{client['name']}",
        "/runs",
        f"/runs/{ran['demo']}",
        f"/runs/{again}/diff",
        f"/runs/{ran['demo']}/clauses/{first['phase']}/{first['clause_id']}",
        f"/runs/{waiting}",
        "/parity/new",
        f"/parity/{parity}",
        "/matrix",
        "/matrix/plugrl-server",
        "/workers",
        "/spec",
        "/runs/999999",
    ]
    paths += [f"/runs/{ran[name]}" for name in targets if name != "demo"]
    return paths


def test_every_page_fits_400_px_and_1280_px(live_service: str, browser: Any) -> None:
    with httpx.Client(base_url=live_service, timeout=30) as http:
        paths = populate(http)
    SHOTS.mkdir(exist_ok=True)
    problems: dict[str, Any] = {}
    for width in WIDTHS:
        page = browser.new_page(viewport={"width": width, "height": 900})
        for path in paths:
            page.goto(live_service + path)
            page.wait_for_load_state("load")
            name = re.sub(r"[^A-Za-z0-9]+", "_", path).strip("_") or "overview"
            page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)
            seen = page.evaluate(OFF_SCREEN)
            if seen["scroll"] > seen["width"] or seen["buttons"]:
                problems[f"{path} at {width}px"] = seen
        page.close()
    assert not problems, problems

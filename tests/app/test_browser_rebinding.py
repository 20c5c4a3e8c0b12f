"""DNS rebinding in a real browser: chromium resolves a foreign name to 127.0.0.1 and opens the service by it.

Such a page is same-origin with itself, so without a `Host` check it could read
the API and post to it (its `Origin` equals its `Host`). The service answers only
the names it is reached by (RLCONFORM_ALLOWED_HOSTS).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.settings import Settings
from tests.app.browser import chromium, new_context, playwright_or_skip
from tests.app.helpers import service_settings

pytestmark = pytest.mark.browser

sync_api = playwright_or_skip()

FOREIGN = "rebind.example"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    # The default allowed hosts of a service on 127.0.0.1 (the test helpers' list adds TestClient's name).
    return service_settings(f"sqlite:///{tmp_path / 'rlconform.db'}", allowed_hosts=[], host="127.0.0.1")


@pytest.fixture
def page() -> Iterator[Any]:
    with chromium(f"--host-resolver-rules=MAP {FOREIGN} 127.0.0.1") as browser:
        yield new_context(browser, timeout_ms=20_000).new_page()


CREATE_AND_READ = """async () => {
    const made = await fetch('/api/v1/targets', {method: 'POST', headers: {'Content-Type': 'application/json'},
        body: JSON.stringify({name: 'planted', kind: 'plugrl-server', url: 'ws://127.0.0.1:9'})});
    const read = await fetch('/api/v1/targets');
    return [made.status, read.status, await read.text()];
}"""


def test_a_foreign_name_resolving_to_loopback_gets_400_for_pages_and_api(live_service: str, page: Any) -> None:
    port = live_service.rsplit(":", 1)[1]
    response = page.goto(f"http://{FOREIGN}:{port}/")
    assert response is not None and response.status == 400
    assert "RLCONFORM_ALLOWED_HOSTS" in page.content()

    made, read, body = page.evaluate(CREATE_AND_READ)
    assert (made, read) == (400, 400), body
    assert "RLCONFORM_ALLOWED_HOSTS" in body
    assert httpx.get(f"{live_service}/api/v1/targets").json() == []  # nothing was planted

    # The names the service is reached by still work in the same browser.
    for name in ("127.0.0.1", "localhost"):
        assert page.goto(f"http://{name}:{port}/").status == 200
        made, read, _ = page.evaluate(CREATE_AND_READ.replace("planted", f"made-{name.replace('.', '-')}"))
        assert (made, read) == (201, 200)

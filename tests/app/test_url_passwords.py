"""A password in a target URL (`ws://user:pass@host`) is masked wherever a URL is shown or exported."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

import app.executor
from app.redaction import redact_url
from app.settings import Settings
from tests.app.helpers import make_target, service_settings, wait_for_run

PASSWORD = "s3cret-pw"
URL = f"ws://alice:{PASSWORD}@127.0.0.1:9/path"
SHOWN = "ws://alice:**********@127.0.0.1:9/path"


@pytest.fixture
def settings(database_url: str) -> Settings:
    return service_settings(database_url)


@pytest.fixture
def connected_to(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The URLs the runner handed to the suite."""
    urls: list[str] = []
    real = app.executor.run_suite

    async def recording(suite, url, *args, **kwargs):
        urls.append(url)
        return await real(suite, url, *args, **kwargs)

    monkeypatch.setattr(app.executor, "run_suite", recording)
    return urls


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (URL, SHOWN),
        ("ws://alice@127.0.0.1:9", "ws://alice@127.0.0.1:9"),
        ("ws://:p@[::1]:9/x?y=1", "ws://:**********@[::1]:9/x?y=1"),
        ("wss://a:b:c@host", "wss://a:**********@host"),
        ("127.0.0.1:50051", "127.0.0.1:50051"),
    ],
)
def test_redact_url(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_password_never_shown_but_used_to_connect(client: TestClient, fake_kind: str, connected_to) -> None:
    target = make_target(client, "locked", fake_kind, URL, options={"fail": ["fake.2.orders"]})
    assert target["url"] == SHOWN
    first = wait_for_run(client, client.post("/api/v1/targets/locked/runs", json={}).json()["id"])
    # An edit that sends back the shown URL keeps the password.
    assert client.patch("/api/v1/targets/locked", json={"url": SHOWN, "options": {}}).status_code == 200
    second = wait_for_run(client, client.post("/api/v1/targets/locked/runs", json={}).json()["id"])
    assert connected_to == [URL, URL]
    assert first["url"] == second["url"] == SHOWN
    pages = [
        "/",
        "/targets/locked",
        "/targets/locked/edit",
        f"/runs/{second['id']}",
        f"/runs/{second['id']}/diff",
        f"/runs/{first['id']}/clauses/echo/fake.2.orders",
        f"/runs/{first['id']}/clauses/echo/fake.2.orders/raw",
        "/api/v1/targets",
        "/api/v1/targets/locked",
        "/api/v1/targets/locked/history",
        "/api/v1/runs",
        f"/api/v1/runs/{first['id']}",
        f"/api/v1/runs/{first['id']}/results",
        f"/api/v1/runs/{first['id']}/transcripts/1",
        f"/api/v1/runs/{first['id']}/export.json",
        f"/api/v1/runs/{first['id']}/junit.xml",
        f"/api/v1/runs/{second['id']}/diff?against=previous",
        "/badge/locked.svg",
        "/metrics",
    ]
    for page in pages:
        response = client.get(page)
        assert response.status_code == 200, (page, response.status_code)
        assert PASSWORD not in response.text, page
    # The evidence the suite recorded (the fake suite names its URL in each transcript) is masked too.
    assert SHOWN in client.get(f"/api/v1/runs/{first['id']}/export.json").text

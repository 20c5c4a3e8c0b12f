"""A restart serves every demo target on the port it had, so its URL and configuration stay the same."""

from __future__ import annotations

import socket
from pathlib import Path

from fastapi.testclient import TestClient

from app.main import create_app
from tests.app.helpers import service_settings, wait_for_run


def demo_urls(client: TestClient) -> dict[str, str]:
    return {name: server.url for name, server in (client.app.state.demo or {}).items()}


def test_demo_targets_keep_their_urls_across_restarts_and_show_no_configuration_change(tmp_path: Path) -> None:
    settings = service_settings(f"sqlite:///{tmp_path / 'demo.db'}", demo=True)
    with TestClient(create_app(settings)) as client:
        first = demo_urls(client)
        before = client.post("/api/v1/targets/demo-openenv/runs", json={}).json()["id"]
        wait_for_run(client, before, timeout=60)
    assert len(first) >= 6
    with TestClient(create_app(settings)) as client:
        assert demo_urls(client) == first
        stored = {t["name"]: t["url"] for t in client.get("/api/v1/targets").json()}
        assert {name: stored[name] for name in first} == first
        after = client.post("/api/v1/targets/demo-openenv/runs", json={}).json()["id"]
        assert wait_for_run(client, after, timeout=60)["outcome"] == "pass"
        page = client.get("/targets/demo-openenv").text
        assert "configuration changed" not in page and "URL changed" not in page


def test_a_demo_whose_port_was_taken_meanwhile_moves_to_a_free_one(tmp_path: Path) -> None:
    settings = service_settings(f"sqlite:///{tmp_path / 'demo.db'}", demo=True)
    with TestClient(create_app(settings)) as client:
        first = demo_urls(client)["demo-openenv"]
    port = int(first.rsplit(":", 1)[1])
    squatter = socket.socket()
    squatter.bind(("127.0.0.1", port))
    squatter.listen()
    try:
        with TestClient(create_app(settings)) as client:
            moved = demo_urls(client)["demo-openenv"]
            assert moved != first
            assert client.get("/api/v1/targets/demo-openenv").json()["url"] == moved
    finally:
        squatter.close()

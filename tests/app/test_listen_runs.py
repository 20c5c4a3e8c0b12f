"""Client-kind runs in the service: they listen where the settings say, admit clients by the network
policy, store their announcement per attempt and show it (URL, command, countdown) until a client connects."""

from __future__ import annotations

import asyncio
import socket
import threading
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from app.listening import Announcing, current_announcement
from app.main import create_app
from app.models import Run
from app.netpolicy import source_allowed
from app.settings import Settings, parse_ports
from checks.plugrl_client.reference import main as reference_client
from tests.app.helpers import free_port, free_socket, service_settings, wait_for_run, wait_until

QUICK = {"steps": 6, "reconnect_window": 0.4, "timeout": 3.0, "connect_deadline": 20.0}


def client_target(client: TestClient, name: str = "env-client", **options: Any) -> None:
    response = client.post("/api/v1/targets", json={"name": name, "kind": "plugrl-client", "options": QUICK | options})
    assert response.status_code == 201, response.text


def start_run(client: TestClient, name: str = "env-client") -> int:
    response = client.post(f"/api/v1/targets/{name}/runs", json={})
    assert response.status_code == 202, response.text
    return int(response.json()["id"])


def announced(client: TestClient, run_id: int) -> dict[str, Any]:
    """The run's announcement once it has one (the run bound its port)."""
    found: dict[str, Any] = {}

    def has_one() -> bool:
        found.update(client.get(f"/api/v1/runs/{run_id}").json().get("announcement") or {})
        return bool(found)

    wait_until(has_one, timeout=15, what="the announcement")
    return found


def test_reference_client_passes_within_the_port_range_and_the_page_shows_where_to_connect(tmp_path: Path) -> None:
    held = free_socket()  # the range's first port is busy: the run must take the next one
    held.listen()
    first = held.getsockname()[1]
    settings = service_settings(f"sqlite:///{tmp_path / 'db.sqlite'}", listen_ports=f"{first}-{first + 2}")
    try:
        with TestClient(create_app(settings)) as client:
            client_target(client)
            run_id = start_run(client)
            announcement = announced(client, run_id)
            port = int(announcement["url"].rsplit(":", 1)[1])
            assert port in (first + 1, first + 2)
            assert announcement["message"] == f"waiting for a client at {announcement['url']}"
            assert announcement["waiting"] is True and announcement["attempt"] == 1

            page = client.get(f"/runs/{run_id}").text
            assert f"waiting for a client at {announcement['url']}" in page
            assert f".venv/bin/rlconform reference-client plugrl {announcement['url']}" in page
            assert 'class="countdown" data-remaining="' in page
            assert f'listens at <span class="mono">{announcement["url"]}</span>' in page  # not "listened" yet

            thread = threading.Thread(
                target=reference_client, args=([announcement["url"], "--restart-delay", "0.8"],), daemon=True
            )
            thread.start()
            run = wait_for_run(client, run_id, timeout=90)
            thread.join(timeout=30)
            assert run["outcome"] == "pass", run
            assert run["announcement"]["waiting"] is False  # the last (a restart request) was answered
            finished = client.get(f"/runs/{run_id}").text
            assert "waiting for a client" not in finished
            assert f'listened at <span class="mono">{announcement["url"]}</span>' in finished
    finally:
        held.close()


def test_no_client_within_the_deadline_is_an_error_no_client_connected(client: TestClient) -> None:
    client_target(client, connect_deadline=0.5)
    run = wait_for_run(client, start_run(client))
    assert run["outcome"] == "error"
    actuals = {result["actual"] for result in client.get(f"/api/v1/runs/{run['id']}/results").json()}
    assert actuals == {"not run: no client connected"}


def test_a_client_from_outside_the_allowed_networks_is_refused(tmp_path: Path) -> None:
    settings = service_settings(f"sqlite:///{tmp_path / 'db.sqlite'}", allowed_networks=["10.0.0.0/8"])
    with TestClient(create_app(settings)) as client:
        client_target(client, connect_deadline=3.0)
        run_id = start_run(client)
        url = announced(client, run_id)["url"]

        async def knock() -> int:
            with pytest.raises(InvalidStatus) as refused:
                async with connect(url, open_timeout=5):
                    pass
            return refused.value.response.status_code

        assert asyncio.run(knock()) == 403
        run = wait_for_run(client, run_id)
        assert run["outcome"] == "error"
        results = client.get(f"/api/v1/runs/{run_id}/results").json()
        assert {result["actual"] for result in results} == {"not run: no client connected"}


def test_a_listen_option_outside_the_listen_settings_is_refused(tmp_path: Path) -> None:
    settings = service_settings(f"sqlite:///{tmp_path / 'db.sqlite'}", listen_ports="9000-9001")
    with TestClient(create_app(settings)) as client:
        client_target(client, listen="127.0.0.1:0")
        run = wait_for_run(client, start_run(client))
        assert run["outcome"] == "error"
        assert "outside this worker's listen settings" in run["message"]
        assert run["announcement"] is None


def test_client_kinds_take_no_url(client: TestClient) -> None:
    response = client.post(
        "/api/v1/targets", json={"name": "with-url", "kind": "plugrl-client", "url": "127.0.0.1:9000"}
    )
    assert response.status_code == 422
    assert "leave the URL empty" in response.text
    form = client.get("/targets/new?kind=plugrl-client").text
    assert 'id="url"' not in form and 'id="listen-hint"' in form
    assert 'id="url"' in client.get("/targets/new?kind=plugrl-server").text


def test_only_the_executing_attempt_shows_its_announcement() -> None:
    announcement = {"url": "ws://old-worker:9000", "attempt": 1, "waiting": True}

    def run(attempts: int) -> Run:
        return Run(
            kind="plugrl-client",
            url="",
            harness_version="",
            spec_version="",
            target_id=1,
            attempts=attempts,
            announcement=announcement,
        )

    assert current_announcement(run(attempts=1)) == announcement
    assert current_announcement(run(attempts=2)) is None  # requeued: another attempt executes


@pytest.mark.parametrize(
    ("text", "ports"),
    [("", (0,)), ("9000", (9000,)), ("9000-9002", (9000, 9001, 9002)), ("9000-9001, 9005", (9000, 9001, 9005))],
)
def test_listen_ports_setting(text: str, ports: tuple[int, ...]) -> None:
    assert parse_ports(text) == ports
    assert Settings(listen_ports=text).listen_ports == ports


@pytest.mark.parametrize("text", ["9000-", "x", "9002-9000", "0-5", "70000"])
def test_listen_ports_setting_rejects_nonsense(text: str) -> None:
    with pytest.raises(ValueError):
        parse_ports(text)


@pytest.mark.parametrize(
    ("address", "allowed", "ok"),
    [
        ("127.0.0.1", [], True),
        ("127.0.0.1", ["10.0.0.0/8"], False),
        ("10.1.2.3", ["10.0.0.0/8"], True),
        ("::ffff:10.1.2.3", ["10.0.0.0/8"], True),
        ("10.1.2.3", ["trainer.internal"], False),  # a name cannot vouch for a source address
        ("", ["10.0.0.0/8"], False),
    ],
)
def test_source_address_policy(address: str, allowed: list[str], ok: bool) -> None:
    assert source_allowed(address, allowed) is ok


def test_listen_host_defaults_to_the_service_address() -> None:
    assert Settings(host="127.0.0.2").listen_address == "127.0.0.2"
    assert Settings(host="127.0.0.2", listen_host="0.0.0.0").listen_address == "0.0.0.0"


def test_a_wildcard_listen_address_is_announced_as_this_machine() -> None:
    stored = Announcing(1, "w", 5.0, "0.0.0.0").stored("ws://0.0.0.0:9000", "waiting for a client at ws://0.0.0.0:9000")
    here = socket.gethostname()
    assert stored["url"] == f"ws://{here}:9000"
    assert stored["message"] == f"waiting for a client at ws://{here}:9000"


# A client kind, its quick options, and how its first run ends: the RLlink client retries a refused connect for
# 10 s; the PlugRL client starts a new session 3 s after a run's last one ends.
LEFTOVER_CASES = [
    ("rllink-client", {"timeout": 5.0}, "cancel"),
    ("plugrl-client", QUICK, "finish"),
]


@pytest.mark.parametrize(("kind", "options", "ending"), LEFTOVER_CASES)
def test_a_reference_client_the_service_started_ends_with_its_run_and_grades_no_later_run(
    tmp_path: Path, kind: str, options: dict[str, Any], ending: str
) -> None:
    """The false pass of issue 32: the next run on the same port, with no client started, must not pass."""
    port = free_port()
    settings = service_settings(f"sqlite:///{tmp_path / 'db.sqlite'}")
    with TestClient(create_app(settings)) as client:
        body = {"name": "env-client", "kind": kind, "options": options | {"listen": f"127.0.0.1:{port}"}}
        assert client.post("/api/v1/targets", json=body).status_code == 201
        first = start_run(client)
        url = announced(client, first)["url"]
        assert client.post(f"/runs/{first}/reference-client", follow_redirects=False).status_code == 303
        clients = client.app.state.reference_clients  # type: ignore[attr-defined]
        started = clients.running[first]

        def connected() -> bool:
            return bool(client.get(f"/api/v1/runs/{first}").json()["announcement"].get("clients"))

        wait_until(connected, timeout=30, what="the started client connecting")
        if ending == "cancel":
            assert client.post(f"/api/v1/runs/{first}/cancel").status_code in (200, 202)
        ended = wait_for_run(client, first, timeout=120)
        assert ending == "cancel" or ended["outcome"] == "pass", ended
        assert ended["client_started_at"] is not None
        address = ended["announcement"]["clients"][0]
        assert address.startswith("127.0.0.1:") and address != f"127.0.0.1:{port}"
        page = client.get(f"/runs/{first}").text
        assert f'connected from <span class="mono">{address}' in page and "started by this service" in page

        # At once, a run on the same port that nobody connects to: the old client must be gone, not graded.
        second = client.post("/api/v1/targets/env-client/runs", json={"options": {"connect_deadline": 8.0}})
        assert second.status_code == 202, second.text
        run = wait_for_run(client, second.json()["id"], timeout=120)
        assert run["announcement"]["url"] == url
        assert run["outcome"] == "error", run
        assert {r["actual"] for r in client.get(f"/api/v1/runs/{run['id']}/results").json()} == {
            "not run: no client connected"
        }
        assert run["announcement"]["clients"] == [] and run["client_started_at"] is None
        assert started.returncode is not None and first not in clients.running
        assert "No client connected" in client.get(f"/runs/{run['id']}").text

"""`rlconform tap --post SERVICE_URL --target NAME`: the windows arrive as tap runs of the target; while the
service is down the tap keeps forwarding and keeps a bounded summary, sent once the service is up."""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi.testclient import TestClient

from app.cli.tap_post import WindowPoster
from app.main import create_app
from app.settings import Settings
from checks.plugrl.reference import start_reference_server
from checks.plugrl_client.reference import ReferenceClient
from tests.app.conftest import BackgroundLoop
from tests.app.helpers import free_socket, service_settings, wait_until
from tests.checks.tap.test_cli import start_tap

TOKEN = "tap-post-token-0123456789"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return service_settings(f"sqlite:///{tmp_path / 'rlconform.db'}", api_token=TOKEN)


@pytest.fixture
def loop() -> Iterator[BackgroundLoop]:
    background = BackgroundLoop()
    try:
        yield background
    finally:
        background.close()


class Service:
    """The service on a socket bound now but listening only once `up()` is called: until then it is down."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.sock = free_socket()
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.server: uvicorn.Server | None = None
        self.thread: threading.Thread | None = None

    def up(self) -> None:
        self.server = uvicorn.Server(uvicorn.Config(create_app(self.settings), log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)
        self.thread.start()
        wait_until(lambda: self.server is not None and self.server.started, timeout=20, what="the service up")

    def close(self) -> None:
        if self.server is not None and self.thread is not None:
            self.server.should_exit = True
            self.thread.join(timeout=20)
        self.sock.close()


def tap_runs(service: str, target: str) -> list[dict[str, Any]]:
    runs = httpx.get(f"{service}/api/v1/runs", params={"target": target}).json()
    return [run for run in runs if run["trigger"] == "tap"]


def test_windows_posted_while_the_service_is_down_arrive_once_it_is_up(
    settings: Settings, loop: BackgroundLoop
) -> None:
    server = loop.run(start_reference_server("127.0.0.1", 0, stop_after=30))
    with TestClient(create_app(settings)) as client:  # the target exists before the service goes down
        answer = client.post(
            "/api/v1/targets",
            json={"name": "policy-server", "kind": "plugrl-server", "url": server.url},
            headers={"Authorization": f"Bearer {TOKEN}"},
        )
        assert answer.status_code == 201, answer.text
    service = Service(settings)
    process = None
    try:
        process, url = loop.run(start_posting_tap(server.url, service.url))
        assert loop.run(ReferenceClient(url).session()) == "stop"  # forwarding went on with the service down
        time.sleep(1.0)  # several posts fail meanwhile
        service.up()
        wait_until(lambda: len(tap_runs(service.url, "policy-server")) >= 3, timeout=20, what="the windows arriving")
        process.send_signal(signal.SIGINT)
        out, err = loop.run(asyncio.wait_for(process.communicate(), 30))
        assert process.returncode == 0, (out, err)
        printed = out.decode().count("\nwindow ") + out.decode().startswith("window ")
        runs = tap_runs(service.url, "policy-server")
    finally:
        if process is not None and process.returncode is None:
            process.kill()
        service.close()
        loop.run(server.close())
    stderr = err.decode()
    assert "the service is unreachable" in stderr and "the service answers again" in stderr, stderr
    assert f"posted {len(runs)} windows" in stderr and "could not be sent" not in stderr, stderr
    assert TOKEN not in stderr + out.decode()  # the token is never printed
    assert len(runs) == printed >= 3, (len(runs), printed)  # every window once, none twice
    assert {(run["status"], run["outcome"]) for run in runs} == {("finished", "pass")}, runs


async def start_posting_tap(upstream: str, service: str) -> tuple[asyncio.subprocess.Process, str]:
    posting = ("--roll-messages", "10", "--post", service, "--target", "policy-server", "--post-every", "0.2")
    return await start_tap(upstream, *posting, env={"RLCONFORM_API_TOKEN": TOKEN})


def window(number: int) -> dict[str, Any]:
    return {"messages": number, "clauses": []}


async def test_while_the_service_is_unreachable_the_summary_stays_bounded_and_the_newest_windows_go_first() -> None:
    sock = free_socket()  # bound, never listening: connections are refused
    poster = WindowPoster(f"http://127.0.0.1:{sock.getsockname()[1]}", "t", "plugrl", "ws://u:1", "tok", max_pending=3)
    async with httpx.AsyncClient(timeout=2.0) as http:
        for number in range(1, 1001):
            poster.closed(number, window(number), 1.0)
            if number % 100 == 0:
                assert await poster.send(http) is False
            assert len(poster.pending) <= 3
        poster.open(1001, window(1001), 1.0)
    sock.close()
    assert poster.dropped == 997 and [item.number for item in poster.pending] == [998, 999, 1000]
    received: list[tuple[int, bool, str]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        body = httpx.Response(200, content=request.content).json()
        received.append((body["number"], body["closed"], request.headers["Authorization"]))
        return httpx.Response(200, json={})

    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as http:
        assert await poster.send(http) is True
    assert received == [
        (998, True, "Bearer tok"),
        (999, True, "Bearer tok"),
        (1000, True, "Bearer tok"),
        (1001, False, "Bearer tok"),
    ]
    assert not poster.pending and "997 older windows dropped" in poster.report()


def test_post_and_target_go_together() -> None:
    from app.cli import build_parser
    from app.cli.common import UsageError
    from app.cli.tap import cmd_tap

    base = ["tap", "plugrl", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:9"]
    for extra in (["--post", "http://127.0.0.1:9"], ["--target", "t"]):
        args = build_parser().parse_args(base + extra)
        with pytest.raises(UsageError, match="go together"):
            cmd_tap(args)

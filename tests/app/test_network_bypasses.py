"""Ways around RLCONFORM_ALLOWED_NETWORKS: host strings that are not plain names, other spellings of
a forbidden address, and a target that redirects its WebSocket handshake somewhere forbidden."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Iterator
from urllib.parse import urlsplit

import httpx
import pytest
from fastapi.testclient import TestClient

from app import webhooks
from app.main import create_app
from app.netpolicy import NetworkRefused, check_host
from checks.core import Transcript
from checks.http_client import HttpClient as HttpProbe
from checks.http_options import HttpOptions
from checks.openai.facts import ChatClient
from checks.pinning import pinned
from tests.app.conftest import QUICK_PLUGRL
from tests.app.helpers import make_target, service_settings, wait_for_run


@pytest.mark.parametrize(
    "host",
    [
        "ipv4:169.254.169.254:80,a.internal",  # a gRPC target list ending in an allowed name
        "unix:/run/metadata.sock:1.internal",
        "a.internal/x",
        "a.internal@169.254.169.254",
        "a,b.internal",
        "-a.internal",
    ],
)
def test_hosts_that_are_not_plain_names_are_refused_even_when_they_end_in_an_allowed_name(host: str) -> None:
    with pytest.raises(NetworkRefused, match="neither an IP address nor a plain host name"):
        check_host(host, 80, ["*.internal", "127.0.0.0/8"])


@pytest.mark.parametrize("host", ["trainer_1.svc.internal", "TRAINER.internal.", "127.0.0.1", "::ffff:127.0.0.1"])
def test_plain_names_and_addresses_still_pass_the_policy(host: str) -> None:
    check_host(host, 80, ["*.internal", "127.0.0.0/8"])


def test_an_rlmesh_target_list_is_refused_at_registration(database_url: str) -> None:
    settings = service_settings(database_url, allowed_networks=["*.internal"])
    with TestClient(create_app(settings)) as client:
        response = client.post(
            "/api/v1/targets",
            json={"name": "m", "kind": "rlmesh", "url": "ipv4:169.254.169.254:80,a.internal:50051"},
        )
    assert response.status_code == 422
    [error] = response.json()["detail"]
    assert error["loc"] == ["body", "url"] and "plain host name" in error["msg"]


@pytest.fixture
def redirecting_target(background_loop) -> Iterator[tuple[str, list[str]]]:
    """A 'PlugRL server' on 127.0.0.1 that answers every handshake with a redirect to 127.0.0.2,
    and a listener there that notes every connection it gets."""
    reached: list[str] = []

    async def start() -> tuple[asyncio.Server, asyncio.Server]:
        async def forbidden(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            reached.append("127.0.0.2")
            writer.close()

        elsewhere = await asyncio.start_server(forbidden, "127.0.0.2", 0)
        location = f"ws://127.0.0.2:{elsewhere.sockets[0].getsockname()[1]}/"

        async def redirect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
                writer.write(f"HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\n\r\n".encode())
                await writer.drain()
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ConnectionError):
                pass
            finally:
                writer.close()

        return await asyncio.start_server(redirect, "127.0.0.1", 0), elsewhere

    first, elsewhere = background_loop.run(start())

    async def stop() -> None:
        for server in (first, elsewhere):
            server.close()
            await server.wait_closed()

    try:
        yield f"ws://127.0.0.1:{first.sockets[0].getsockname()[1]}", reached
    finally:
        background_loop.run(stop())


def test_a_handshake_redirect_cannot_lead_a_run_outside_the_allowed_networks(tmp_path, redirecting_target) -> None:
    url, reached = redirecting_target
    settings = service_settings(f"sqlite:///{tmp_path / 'r.db'}", allowed_networks=["127.0.0.1/32"])
    with TestClient(create_app(settings)) as client:
        make_target(client, "redirector", "plugrl-server", url, options={"timeout": 1.0, "patience": 0.2})
        started = client.post("/api/v1/targets/redirector/runs", json={"phases": ["exchange"]}).json()
        run = wait_for_run(client, started["id"], timeout=60)
    assert run["status"] == "finished" and run["outcome"] in ("fail", "error")
    assert reached == []


@pytest.mark.parametrize(
    "host",
    [
        "2852039166",
        "0251.0376.0251.0376",
        "0xa9.0xfe.0xa9.0xfe",
        "169.254.43518",
        "::ffff:169.254.169.254",
        "::ffff:a9fe:a9fe",
        "::169.254.169.254",
    ],
)
def test_other_spellings_of_the_metadata_address_are_refused(host: str) -> None:
    with pytest.raises(NetworkRefused):
        check_host(host, 80, ["127.0.0.0/8", "10.0.0.0/8"])


class RebindingResolver:
    """`socket.getaddrinfo` for `name`: an allowed address on the first call, the metadata address after."""

    def __init__(self, name: str, real) -> None:
        self.name, self.real, self.calls = name, real, 0

    def __call__(self, host, port, *args, **kwargs):
        if host != self.name:
            return self.real(host, port, *args, **kwargs)
        self.calls += 1
        address = "127.0.0.1" if self.calls == 1 else "169.254.169.254"
        return self.real(address, port, *args, **kwargs)


@pytest.fixture
def rebinding(monkeypatch: pytest.MonkeyPatch) -> RebindingResolver:
    resolver = RebindingResolver("rebind.test", socket.getaddrinfo)
    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    return resolver


def test_a_run_resolves_once_and_every_phase_connects_to_the_checked_address(
    database_url: str, reference_server, rebinding: RebindingResolver
) -> None:
    port = urlsplit(reference_server()).port
    settings = service_settings(database_url, allowed_networks=["127.0.0.0/8"])
    with TestClient(create_app(settings)) as client:
        make_target(client, "rebind", "plugrl-server", f"ws://rebind.test:{port}", options=QUICK_PLUGRL)
        rebinding.calls = 0  # registration resolved it; the run starts afresh
        run = client.post("/api/v1/targets/rebind/runs", json={}).json()
        ended = wait_for_run(client, run["id"], timeout=60)
        assert (ended["status"], ended["outcome"]) == ("finished", "pass"), ended
        # Several phases connected, all to 127.0.0.1: the name was resolved once, by the policy check.
        assert rebinding.calls == 1
        transcripts = client.get(f"/api/v1/runs/{run['id']}/export.json").json()["transcripts"]
        assert len({t["phase"] for t in transcripts}) > 2


@contextlib.asynccontextmanager
async def hosts_asked(rest: bytes, status: bytes = b"200 OK") -> AsyncIterator[tuple[int, list[str]]]:
    """An HTTP server on 127.0.0.1 that answers every request `status` with headers and body `rest`, and
    collects the Host header each asked with: yields (its port, those hosts)."""
    seen: list[str] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        seen.extend(
            line.split(":", 1)[1].strip() for line in head.decode().splitlines() if line.lower().startswith("host:")
        )
        writer.write(b"HTTP/1.1 " + status + b"\r\n" + rest)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1], seen
    finally:
        server.close()


async def test_an_http_probe_connects_to_the_pinned_address_and_names_the_host(
    rebinding: RebindingResolver, monkeypatch: pytest.MonkeyPatch
) -> None:
    rebinding.calls = 1  # any lookup of the name now answers the metadata address
    async with hosts_asked(b"content-type: application/json\r\ncontent-length: 2\r\n\r\n{}") as (port, seen):
        with pinned("rebind.test", "127.0.0.1"):
            probe = HttpProbe(f"http://rebind.test:{port}", Transcript(1, "http", "probe"), timeout=5)
            reply = await probe.get("/health")
            await probe.client.aclose()
    assert reply.status == 200 and seen == [f"rebind.test:{port}"]
    assert rebinding.calls == 1


async def test_a_webhook_posts_to_the_address_the_policy_checked(rebinding: RebindingResolver) -> None:
    rebinding.calls = 0
    async with hosts_asked(b"content-length: 0\r\n\r\n", status=b"204 No Content") as (port, seen):
        async with httpx.AsyncClient(timeout=5, follow_redirects=False) as client:
            status, error = await webhooks._send(client, f"http://rebind.test:{port}/hook", {"x": 1}, ["127.0.0.0/8"])
    # The policy's lookup answered 127.0.0.1; a second lookup would have answered the metadata address.
    assert (status, error) == (204, "") and seen == [f"rebind.test:{port}"]
    assert rebinding.calls == 1


async def test_every_http_kinds_client_connects_to_the_pinned_address(rebinding: RebindingResolver) -> None:
    """The openai-chat and session-server clients share the pinned transport with the OpenEnv probe."""
    rebinding.calls = 1  # any lookup of the name now answers the metadata address
    async with hosts_asked(b'content-type: application/json\r\ncontent-length: 11\r\n\r\n{"data":[]}') as (port, seen):
        with pinned("rebind.test", "127.0.0.1"):
            chat = ChatClient(f"http://rebind.test:{port}/v1", HttpOptions(), 5, Transcript(1, "models", "probe"))
            reply = await chat.get("/models")
            await chat.client.aclose()
    assert reply.status == 200 and seen == [f"rebind.test:{port}"]
    assert rebinding.calls == 1

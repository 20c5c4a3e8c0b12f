"""`checks.identity` against live reference servers: what each protocol shows of the implementation and its
version, and nothing (None) where a protocol shows nothing or the target cannot be reached."""

from __future__ import annotations

import asyncio

from fastapi.testclient import TestClient

from checks.identity import Identity, identify
from checks.openai.options import OpenAIChatOptions
from checks.openai.reference import start_reference_server as start_openai
from checks.openenv.reference import start_reference_server as start_openenv
from tests.app.conftest import BackgroundLoop
from tests.app.helpers import free_port, make_target, wait_for_run


async def _identity_of(start, kind: str, options=None) -> Identity | None:  # type: ignore[no-untyped-def]
    server = await start()
    try:
        return await identify(kind, server.url, options, 5.0)
    finally:
        await server.close()


def test_openenv_names_its_environment_and_version_in_metadata() -> None:
    identity = asyncio.run(_identity_of(start_openenv, "openenv"))
    assert identity is not None
    assert (identity.implementation, identity.version) == ("rlconform quiz", "1.0.0")
    assert identity.evidence.startswith("GET /metadata")


def test_an_openai_engine_is_named_by_who_owns_its_models() -> None:
    async def keyed() -> Identity | None:
        server = await start_openai(api_key="sk-test")
        try:
            return await identify("openai-chat", server.url, OpenAIChatOptions(api_key="sk-test"), 5.0)
        finally:
            await server.close()

    identity = asyncio.run(keyed())
    assert identity is not None and identity.implementation == "rlconform"
    assert "owned_by 'rlconform'" in identity.evidence


def test_kinds_that_show_nothing_and_unreachable_targets_have_no_identity() -> None:
    assert asyncio.run(identify("plugrl-server", "ws://127.0.0.1:9", None, 1.0)) is None
    assert asyncio.run(identify("plugrl-client", "", None, 1.0)) is None
    assert asyncio.run(identify("openenv", f"http://127.0.0.1:{free_port()}", None, 1.0)) is None


def test_the_service_reads_a_run_s_identity_from_the_wire_once_its_suite_ends(
    client: TestClient, background_loop: BackgroundLoop
) -> None:
    server = background_loop.run(start_openenv())
    try:
        make_target(client, "quiz", "openenv", server.url, options={"timeout": 5.0})
        run_id = client.post("/api/v1/targets/quiz/runs", json={"phases": ["discover"]}).json()["id"]
        run = wait_for_run(client, run_id, timeout=60)
    finally:
        background_loop.run(server.close())
    assert run["status"] == "finished", run
    identity = client.get(f"/api/v1/runs/{run_id}/identity").json()
    assert (identity["implementation"], identity["version"], identity["source"]) == ("rlconform quiz", "1.0.0", "wire")
    page = client.get(f"/runs/{run_id}").text
    assert '<strong>rlconform quiz</strong> version <span class="mono">1.0.0</span>, read from the wire' in page

"""Conforming servers and clients of every kind, each run once in process with short timeouts.

tests/checks/test_every_clause_decidable.py reads the clauses these runs decide `pass`:
the pass side of "no clause that cannot fail, and none that cannot pass" (issue 19).
Each run is the one its kind's own tests make of its reference (their options, shortened).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from checks.core import Report, run_suite

Run = Callable[[], Awaitable[Report]]
RLMESH_OPTIONS: dict[str, Any] = {"timeout": 3.0, "latency_bound_ms": 1000}  # a bound, so step latency is judged


async def openai_reference() -> Report:
    from checks.openai.reference import ReferenceModel, make_app
    from tests.checks.openai.helpers import check, serving

    model = ReferenceModel()
    model.api_key = "sk-reference"
    with serving(make_app(model)) as url:
        return await check(url, {"context_window": 4096, "api_key": "sk-reference"})


async def session_reference() -> Report:
    from checks.session.reference import start_reference_server
    from checks.session.suite import SUITE

    running = await start_reference_server(tree="v2", backend_delay=0)
    try:
        return await run_suite(SUITE, running.url, {"timeout": 5})
    finally:
        await running.close()


async def ors_reference() -> Report:
    from checks.ors.reference import start_reference_server
    from checks.ors.suite import SUITE
    from tests.zoo.ors.catalogue import QUICK_OPTIONS

    running = await start_reference_server()
    try:
        return await run_suite(SUITE, running.url, QUICK_OPTIONS)
    finally:
        await running.close()


async def ors_reference_keepalive() -> Report:
    """The opt-in keep-alive phase on a reference server with a short idle expiry, so its clauses are decided."""
    from checks.ors.reference import OrsServer, serve_app
    from checks.ors.suite import SUITE
    from tests.zoo.ors.catalogue import KEEPALIVE_OPTIONS

    running = await serve_app(OrsServer(idle_expiry=1.2, ping_interval=0.2))
    try:
        return await run_suite(SUITE, running.url, {"timeout": 5, **KEEPALIVE_OPTIONS}, ["keepalive"])
    finally:
        await running.close()


async def plugrl_reference(phases: list[str] | None = None, **server: Any) -> Report:
    from checks.plugrl.reference import start_reference_server
    from checks.plugrl.suite import SUITE
    from tests.checks.plugrl.conftest import QUICK_OPTIONS

    options = {
        **QUICK_OPTIONS,
        **({"feedback_timeout": server["feedback_timeout"]} if "feedback_timeout" in server else {}),
    }
    running = await start_reference_server("127.0.0.1", 0, **server)
    try:
        return await run_suite(SUITE, running.url, options, phases, include_optional=phases is None)
    finally:
        await running.close()


async def plugrl_until_stop() -> Report:
    """Every phase, the optional stop included: the server stops after enough feedback rows."""
    return await plugrl_reference(stop_after=200)


async def plugrl_feedback_timeout() -> Report:
    return await plugrl_reference(["feedback-timeout"], feedback_timeout=1.0)


async def plugrl_without_features() -> Report:
    """No feature offered: a reuse sent anyway must be refused, which a server offering reuse cannot show."""
    return await plugrl_reference(["exchange", "reuse"], features=())


async def rlmesh_reference() -> Report:
    """The walk server with Shutdown allowed, stopped when it accepts one, as its command does."""
    from checks.rlmesh.reference import start_reference_server
    from checks.rlmesh.suite import SUITE

    running = await start_reference_server(allow_shutdown=True)
    stopper = asyncio.create_task(stop_when_asked(running.service.stopped, running.close))
    try:
        return await run_suite(SUITE, running.url, RLMESH_OPTIONS, include_optional=True)
    finally:
        stopper.cancel()
        await running.close()


async def rlmesh_declared_step_limit() -> Report:
    """The hand-written lane server declaring `max_episode_steps`, which the walk server does not."""
    from checks.rlmesh.suite import SUITE
    from tests.zoo.rlmesh import handmade

    server, service, address = await handmade.start(lanes=2, faults={"declares-step-limit"})
    try:
        return await run_suite(SUITE, address, RLMESH_OPTIONS, ["episodes"])
    finally:
        service.stopper.cancel()  # type: ignore[attr-defined]
        await server.stop(0)


async def stop_when_asked(stopped: asyncio.Event, close: Callable[[], Awaitable[None]]) -> None:
    await stopped.wait()
    await close()


def rllink_reference(dialect: str) -> Run:
    async def run() -> Report:
        from checks.rllink.reference import start_reference_server
        from checks.rllink.suite import SUITE
        from tests.checks.rllink.test_reference import FAST

        running = await start_reference_server("127.0.0.1", 0, dialect=dialect, fragment_length=32, recycle=0.1)
        try:
            return await run_suite(SUITE, running.url, FAST, include_optional=True)
        finally:
            await running.close()

    run.__name__ = f"rllink_reference_{dialect}"
    return run


async def plugrl_client_reference() -> Report:
    from checks.plugrl_client.reference import ReferenceClient
    from tests.checks.plugrl_client.conftest import grade

    return await grade(ReferenceClient)


def rllink_client_reference(dialect: str) -> Run:
    async def run() -> Report:
        from checks.rllink_client.reference import ReferenceClient
        from tests.checks.rllink_client.conftest import grade

        return await grade(ReferenceClient, dialect=dialect)

    run.__name__ = f"rllink_client_reference_{dialect}"
    return run


def openenv_reference(app: str, phases: list[str] | None = None, **overrides: Any) -> Run:
    """A conforming server of tests/checks/openenv/test_conforming.py: `app` names its factory in
    tests/checks/openenv/envs.py, or is "handmade" (the hand-made server, its quirks in `overrides["quirks"]`).
    It gets the options test_conforming gives it (ECHO_OPTIONS for the echo env, else QUIZ_OPTIONS), with
    the other `overrides` declaring what the tests there leave undeclared."""

    async def run() -> Report:
        from tests.checks.openenv import envs
        from tests.checks.openenv.helpers import check
        from tests.checks.openenv.serving import serve_in_thread
        from tests.zoo.openenv.handmade import Quirks, build_app

        options = {**overrides}
        quirks = options.pop("quirks", {})
        made = build_app(Quirks(**quirks)) if app == "handmade" else getattr(envs, app)()
        base = envs.ECHO_OPTIONS if app == "echo_app" else envs.QUIZ_OPTIONS
        with serve_in_thread(made) as url:
            return await check(url, {**base, **options}, phases)

    run.__name__ = f"openenv_reference_{app}"
    return run


# Conforming servers and clients run by the pass-side test, by kind.
REFERENCE_RUNS: dict[str, list[Run]] = {
    "openai-chat": [openai_reference],
    "session-server": [session_reference],
    "ors": [ors_reference, ors_reference_keepalive],
    "openenv": [
        openenv_reference("quiz_app", reward_range=[0.0, 1.0], latency_bound_ms=60_000),
        openenv_reference("echo_app", ["capacity"]),
        openenv_reference("production_quiz_app", ["production"]),
        openenv_reference("slow_quiz_app", ["overlap"]),
        # What only OpenEnv 0.10 shows (the test venv has openenv-core 0.3): the hand-made server showing it.
        openenv_reference(
            "handmade",
            ["session", "mcp", "attach", "tasks", "http"],
            quirks={"tasks": "consistent", "mcp": "jsonrpc", "attach": "attaches", "mirror_metadata": True},
        ),
    ],
    "plugrl-server": [plugrl_until_stop, plugrl_feedback_timeout, plugrl_without_features],
    "rlmesh": [rlmesh_reference, rlmesh_declared_step_limit],
    "rllink": [rllink_reference("msgpack"), rllink_reference("json")],
    "plugrl-client": [plugrl_client_reference],
    "rllink-client": [rllink_client_reference("msgpack"), rllink_client_reference("json")],
}

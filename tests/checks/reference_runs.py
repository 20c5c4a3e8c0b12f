"""Conforming servers and clients of every kind, each run once in process with short timeouts.

tests/checks/test_every_clause_decidable.py reads the clauses these runs decide `pass`:
the pass side of "no clause that cannot fail, and none that cannot pass" (issue 19).
Each kind's runs are what its record's `conforming` part declares (`checks/<kind>/conforming.py`),
driven here, plus `TEST_ONLY_RUNS`: runs on servers only the tests have.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from checks.conforming import ClientRun, ConformingRun, ServerRun
from checks.core import ListenPolicy, NullSink, Report, run_suite
from checks.registry import RECORDS, get_suite, load

Run = Callable[[], Awaitable[Report]]
CLIENT_RUN_DEADLINE = 90.0  # seconds a listening run may take, its client's sessions included


class NoConformingRuns(LookupError):
    """A kind whose record declares no conforming runs, so no clause of it can be shown to pass."""


def declared_runs(kind: str) -> tuple[ConformingRun, ...]:
    """The conforming runs `kind`'s record names; NoConformingRuns, saying what to add, when it names none."""
    reference = RECORDS[kind].conforming
    if not isinstance(reference, str):
        raise NoConformingRuns(
            f"{kind} declares no conforming runs ({reference.reason}): give its KindRecord "
            f'conforming="checks.<package>.conforming:RUNS", a tuple of checks.conforming.ServerRun or ClientRun'
        )
    runs = load(reference)
    if not isinstance(runs, tuple) or not runs or not all(isinstance(run, ServerRun | ClientRun) for run in runs):
        raise TypeError(f"{reference} is not a non-empty tuple of checks.conforming.ServerRun or ClientRun")
    return runs


async def run_on_server(kind: str, declared: ServerRun) -> Report:
    start: Any = load(declared.start)
    running = await start("127.0.0.1", 0, **declared.start_args)
    try:
        phases = list(declared.phases) if declared.phases is not None else None
        return await run_suite(
            get_suite(kind), running.url, dict(declared.options), phases, include_optional=declared.include_optional
        )
    finally:
        await running.close()


class Announcements(NullSink):
    def __init__(self) -> None:
        self.queue: asyncio.Queue[tuple[str, str]] = asyncio.Queue()

    def announce(self, url: str, message: str) -> None:
        self.queue.put_nowait((url, message))


async def run_with_client(kind: str, declared: ClientRun) -> Report:
    """The suite listening on a free 127.0.0.1 port and, once it announces its URL, the client driven against it."""
    drive: Any = load(declared.drive)
    sink = Announcements()
    phases = list(declared.phases) if declared.phases is not None else None
    listen = ListenPolicy("127.0.0.1", (0,))
    run = asyncio.create_task(run_suite(get_suite(kind), "", dict(declared.options), phases, sink, listen=listen))
    url, _ = await asyncio.wait_for(sink.queue.get(), timeout=5)
    client = asyncio.create_task(drive(url, **declared.drive_args))
    try:
        return await asyncio.wait_for(run, timeout=CLIENT_RUN_DEADLINE)
    finally:
        client.cancel()
        await asyncio.gather(client, return_exceptions=True)


def driven(kind: str, declared: ConformingRun) -> Run:
    async def run() -> Report:
        if isinstance(declared, ServerRun):
            return await run_on_server(kind, declared)
        return await run_with_client(kind, declared)

    run.__name__ = f"{kind}:{declared.name}"
    return run


async def rlmesh_declared_step_limit() -> Report:
    """The hand-written lane server declaring `max_episode_steps`, which the walk server does not."""
    from checks.rlmesh.conforming import QUICK_OPTIONS
    from checks.rlmesh.suite import SUITE
    from tests.zoo.rlmesh import handmade

    server, service, address = await handmade.start(lanes=2, faults={"declares-step-limit"})
    try:
        return await run_suite(SUITE, address, QUICK_OPTIONS, ["episodes"])
    finally:
        service.stopper.cancel()  # type: ignore[attr-defined]
        await server.stop(0)


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


# Runs on servers only the tests have (openenv-core's own apps, hand-made servers showing what the
# reference does not), beside the declared ones, by kind.
TEST_ONLY_RUNS: dict[str, list[Run]] = {
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
    "rlmesh": [rlmesh_declared_step_limit],
}


def reference_runs() -> dict[str, list[Run]]:
    """Every kind's runs: its record's declared ones, driven, then its test-only ones (NoConformingRuns:
    a kind declares none)."""
    return {
        kind: [driven(kind, declared) for declared in declared_runs(kind)] + TEST_ONLY_RUNS.get(kind, [])
        for kind in RECORDS
    }

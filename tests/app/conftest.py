"""Fixtures for service tests: settings on a temporary database, a TestClient, a live server, targets."""

from __future__ import annotations

import asyncio
import os
import threading
import time
import uuid
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings
from checks.asgi_server import listening_socket
from tests.app.browser import chromium, new_context
from tests.app.helpers import make_target, service_settings

POSTGRES_ENV = "RLCONFORM_TEST_POSTGRES_URL"
QUICK_PLUGRL = {"timeout": 2.0, "patience": 0.2}  # plugrl-server options that keep a run short


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh, empty PostgreSQL database on the server RLCONFORM_TEST_POSTGRES_URL names; dropped after."""
    base = os.environ.get(POSTGRES_ENV)
    if not base:
        pytest.skip(f"{POSTGRES_ENV} is not set")
    import psycopg
    from sqlalchemy.engine import make_url

    from app.db import make_engine

    server = make_url(base)
    name = f"rlconform_test_{uuid.uuid4().hex[:12]}"
    admin = server.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    url = server.set(drivername="postgresql+psycopg", database=name).render_as_string(hide_password=False)
    try:
        yield url
    finally:
        make_engine(url).dispose()
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh database on each backend: SQLite always, PostgreSQL when RLCONFORM_TEST_POSTGRES_URL is set.

    A test module that wants both backends overrides `settings` with `service_settings(database_url)`.
    """
    if request.param == "postgres":
        return request.getfixturevalue("postgres_url")
    return f"sqlite:///{tmp_path / 'rlconform.db'}"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """A temporary SQLite database, no demo, no token, any network, no scheduler ticks during tests."""
    return service_settings(f"sqlite:///{tmp_path / 'rlconform.db'}")


@pytest.fixture
def fake_kind(monkeypatch: pytest.MonkeyPatch) -> str:
    """Registers the `fake` kind (tests/app/fakesuite.py) for this test."""
    from checks.registry import RECORDS
    from tests.app.fakesuite import RECORD

    monkeypatch.setitem(RECORDS, "fake", RECORD)
    return "fake"


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    """A TestClient of create_app(settings) with the lifespan (runner, scheduler) running."""
    with TestClient(create_app(settings)) as test_client:
        yield test_client


@pytest.fixture
def live_service(settings: Settings) -> Iterator[str]:
    """uvicorn serving create_app(settings) in a background thread; yields its base URL."""
    sock = listening_socket()
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(settings), log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the live service did not start")
            time.sleep(0.02)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)
        sock.close()


class BackgroundLoop:
    """An event loop in a thread, for async servers that sync tests need."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coroutine: Coroutine[Any, Any, Any], timeout: float = 20) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()


@pytest.fixture
def browser() -> Iterator[Any]:
    """Debian's chromium, headless, for one test (tests/app/browser.py)."""
    with chromium() as launched:
        yield launched


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh 1280x900 page in `browser`, its context closed after the test."""
    context = new_context(browser)
    yield context.new_page()
    context.close()


@pytest.fixture
def background_loop() -> Iterator[BackgroundLoop]:
    loop = BackgroundLoop()
    try:
        yield loop
    finally:
        loop.close()


@pytest.fixture
def reference_server(background_loop: BackgroundLoop) -> Iterator[Callable[..., str]]:
    """Starts reference PlugRL servers (keyword arguments go to start_reference_server); returns their URLs."""
    reference = pytest.importorskip("checks.plugrl.reference")
    servers: list[Any] = []

    def start(**kwargs: Any) -> str:
        server = background_loop.run(reference.start_reference_server("127.0.0.1", 0, **kwargs))
        servers.append(server)
        return server.url

    try:
        yield start
    finally:
        for server in servers:
            background_loop.run(server.close())


@pytest.fixture
def reference_target(client: TestClient, reference_server: Callable[..., str]) -> Callable[..., dict[str, Any]]:
    """Registers a reference PlugRL server as a target: `reference_target(name, **server_kwargs)`."""

    def create(name: str = "reference", *, options: dict[str, Any] | None = None, **server_kwargs: Any):
        url = reference_server(**server_kwargs)
        return make_target(client, name, "plugrl-server", url, options=options or QUICK_PLUGRL)

    return create


@pytest.fixture
def cluster(postgres_url: str) -> Iterator[Any]:
    """Service and worker subprocesses on a fresh PostgreSQL database (`tests.app.cluster`), reaped after."""
    from contextlib import ExitStack

    from app.db import upgrade_database
    from tests.app.cluster import Cluster

    upgrade_database(postgres_url)
    with ExitStack() as stack:
        yield Cluster(postgres_url, stack)

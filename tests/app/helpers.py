"""Helpers for service tests: free ports, targets through the API, waiting for runs."""

from __future__ import annotations

import functools
import os
import socket
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from fastapi.testclient import TestClient

from app.db import make_engine, upgrade_database
from app.models import ENDED_STATUSES
from app.settings import Settings


def free_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


def free_port() -> int:
    with free_socket() as sock:
        return sock.getsockname()[1]


def make_target(client: TestClient | httpx.Client, name: str, kind: str, url: str, **fields: Any) -> dict[str, Any]:
    """Create a target through the API and return it; fails the test on anything but 201."""
    response = client.post("/api/v1/targets", json={"name": name, "kind": kind, "url": url, **fields})
    assert response.status_code == 201, response.text
    return response.json()


def wait_for_run(
    client: TestClient | httpx.Client, run_id: int, statuses: Any = ENDED_STATUSES, timeout: float = 30
) -> dict[str, Any]:
    """Poll GET /runs/{id} until its status is in `statuses`; fails after `timeout` seconds."""
    wanted = {str(s) for s in statuses}
    deadline = time.monotonic() + timeout
    while True:
        run = client.get(f"/api/v1/runs/{run_id}").json()
        if run["status"] in wanted:
            return run
        if time.monotonic() > deadline:
            raise AssertionError(f"run {run_id} still {run['status']} after {timeout}s: {run}")
        time.sleep(0.05)


@functools.cache
def _migrated_database() -> bytes:
    """An empty SQLite database at the newest revision, made once per test process."""
    with tempfile.TemporaryDirectory(prefix="rlconform-template-") as directory:
        url = f"sqlite:///{directory}/template.db"
        upgrade_database(url)
        engine = make_engine(url)
        with engine.connect() as connection:  # all of it in the file, none left in its WAL
            connection.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        engine.dispose()
        return (Path(directory) / "template.db").read_bytes()


def start_migrated(database_url: str) -> None:
    """A SQLite file not made yet starts as a copy of `_migrated_database`: the service's start then finds it
    at the newest revision, instead of every service test paying for Alembic's upgrade of a new file
    (a third of a page test's CPU). It holds what that upgrade would have: the schema and its revision."""
    path = Path(database_url.removeprefix("sqlite:///")) if database_url.startswith("sqlite:///") else None
    if path is not None and path.parent.is_dir() and not path.exists():
        path.write_bytes(_migrated_database())


def service_settings(database_url: str, **overrides: Any) -> Settings:
    """Test settings on `database_url` (a new SQLite file starts migrated): no demo, no token, any network,
    no scheduler ticks during tests."""
    start_migrated(database_url)
    values: dict[str, Any] = {
        "database_url": database_url,
        "demo": False,
        "api_token": None,
        "allowed_networks": [],
        "allowed_hosts": ["testserver", "localhost", "127.0.0.1", "[::1]"],  # TestClient sends Host: testserver
        "scheduler_interval": 3600,
        "max_concurrent_runs": 4,
        # Runs in the test's process, where its fake kind and monkeypatches live; RLCONFORM_TEST_RUN_PROCESSES=2
        # runs a module's tests with run processes instead (those of a kind the test process registered stay).
        "run_processes": int(os.environ.get("RLCONFORM_TEST_RUN_PROCESSES", "0")),
    }
    return Settings(**(values | overrides))


def wait_until(condition: Callable[[], bool], timeout: float = 10, what: str = "the condition") -> None:
    """Poll `condition` until it holds; fails after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not hold within {timeout}s")
        time.sleep(0.02)


def tap_listen_url(client: TestClient | httpx.Client, run_id: int, timeout: float = 15) -> str:
    """Where clients connect to a tap run, once it listens."""
    found: dict[str, Any] = {}

    def listening() -> bool:
        answer = client.get(f"/api/v1/runs/{run_id}/tap")
        found.update(answer.json() if answer.status_code == 200 else {})
        return bool(found.get("listen_url"))

    wait_until(listening, timeout=timeout, what="the tap listening")
    return str(found["listen_url"])

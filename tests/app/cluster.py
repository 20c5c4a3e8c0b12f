"""Workers mode in tests: service and worker subprocesses on one PostgreSQL database, with the fake suite
registered and leases, heartbeats and polls shortened; `cluster` (in conftest) reaps them all."""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx

from tests.app.helpers import free_port, wait_until

ROOT = Path(__file__).resolve().parents[2]
WITH_FAKE = (
    "import sys; from tests.app.fakesuite import register; register(); "
    "from app.cli import main; sys.exit(main(sys.argv[1:]))"
)
QUICK = {
    "RLCONFORM_LEASE_SECONDS": "2",
    "RLCONFORM_WORKER_HEARTBEAT": "0.5",
    "RLCONFORM_POLL_INTERVAL": "0.5",
    "RLCONFORM_SHUTDOWN_GRACE": "1",
    "RLCONFORM_OPS_TICK_CRON": "* * * * * *",
    "RLCONFORM_SCHEDULE_TICK_CRON": "* * * * * *",  # a 6th field counts seconds: every second, the default
    "RLCONFORM_WEBHOOK_BACKOFF": "0.5",
    "RLCONFORM_DEMO": "false",
    "RLCONFORM_SERVICE_LABELS": "",
}


def _env(database_url: str, **extra: str) -> dict[str, str]:
    env = os.environ | QUICK | {"RLCONFORM_DATABASE_URL": database_url} | extra
    env.pop("RLCONFORM_API_TOKEN", None)
    return env


class Cluster:
    """Service and worker subprocesses on one database; all reaped at the end."""

    def __init__(self, database_url: str, stack: ExitStack) -> None:
        self.database_url, self.stack = database_url, stack

    def _start(self, args: list[str], **extra: str) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            [sys.executable, "-c", WITH_FAKE, *args],
            cwd=ROOT,
            env=_env(self.database_url, **extra),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.stack.callback(_reap, process)
        return process

    def service(self, **extra: str) -> httpx.Client:
        port = free_port()
        process = self._start(["serve", "--host", "127.0.0.1", "--port", str(port)], **extra)
        client = self.stack.enter_context(httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10))

        def healthy() -> bool:
            assert process.poll() is None, "serve exited"
            try:
                return client.get("/healthz").status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(healthy, timeout=30, what="the service answering")
        return client

    def worker(self, *labels: str, concurrency: int = 2, **extra: str) -> subprocess.Popen[bytes]:
        args = ["worker", "--concurrency", str(concurrency)]
        for label in labels:
            args += ["--label", label]
        return self._start(args, **extra)


def _reap(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.kill()
    process.wait(timeout=10)


def fake_target(client: httpx.Client, name: str, label: str, **options: Any) -> None:
    body = {"name": name, "kind": "fake", "url": "ws://127.0.0.1:9", "worker_label": label, "options": options}
    assert client.post("/api/v1/targets", json=body).status_code == 201


def start_run(client: httpx.Client, name: str) -> int:
    response = client.post(f"/api/v1/targets/{name}/runs", json={})
    assert response.status_code == 202, response.text
    return int(response.json()["id"])


def live_workers(client: httpx.Client) -> list[dict[str, Any]]:
    return client.get("/api/v1/workers").json()["workers"]


def wait_workers(client: httpx.Client, count: int) -> None:
    wait_until(lambda: len(live_workers(client)) >= count, timeout=30, what=f"{count} live workers")

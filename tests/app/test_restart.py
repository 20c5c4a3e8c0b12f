"""`rlconform serve` killed with SIGKILL mid-run: after a restart the run is `interrupted`, its clauses kept."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.app.helpers import free_port, wait_for_run, wait_until
from tests.processes import stop

ROOT = Path(__file__).resolve().parents[2]
RLCONFORM = Path(sys.executable).with_name("rlconform")
# The same entry point, with the test-only `fake` kind registered first.
SERVE_WITH_FAKE = (
    "import sys; from tests.app.fakesuite import register; register(); "
    "from app.cli import main; sys.exit(main(sys.argv[1:]))"
)


@contextmanager
def serving(command: list[str], database_url: str) -> Iterator[tuple[httpx.Client, subprocess.Popen]]:
    """A `serve` subprocess on a free port; yields an API client and the process; always reaped."""
    port = free_port()
    env = os.environ | {"RLCONFORM_DATABASE_URL": database_url, "RLCONFORM_DEMO": "false"}
    env.pop("RLCONFORM_API_TOKEN", None)
    process = subprocess.Popen(
        [*command, "serve", "--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:

            def healthy() -> bool:
                if process.poll() is not None:
                    raise AssertionError(f"serve exited: {process.stderr.read().decode()[-2000:]}")
                try:
                    return client.get("/healthz").status_code == 200
                except httpx.HTTPError:
                    return False

            wait_until(healthy, timeout=30, what="the service answering /healthz")
            yield client, process
    finally:
        if process.poll() is None:
            stop(process, wait=15, after_kill=5)
        process.stderr.close()


def kill_mid_run_and_restart(command: list[str], database_url: str, target: dict, at_least: int) -> None:
    with serving(command, database_url) as (client, process):
        assert client.post("/api/v1/targets", json=target).status_code == 201
        run_id = client.post(f"/api/v1/targets/{target['name']}/runs", json={}).json()["id"]
        wait_until(
            lambda: client.get(f"/api/v1/runs/{run_id}").json()["decided_clauses"] >= at_least,
            timeout=60,
            what=f"{at_least} decided clauses",
        )
        before = client.get(f"/api/v1/runs/{run_id}/results").json()
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    assert len(before) >= at_least
    with serving(command, database_url) as (client, _):
        run = client.get(f"/api/v1/runs/{run_id}").json()
        assert run["status"] == "interrupted", run
        results = client.get(f"/api/v1/runs/{run_id}/results").json()
        after = {(r["phase"], r["clause_id"]): r["verdict"] for r in results}
        # Everything decided before the kill is still there, with the same verdicts.
        assert {(r["phase"], r["clause_id"]): r["verdict"] for r in before}.items() <= after.items()
        assert run["decided_clauses"] == len(after) < run["total_clauses"]
        # The service still works after the crash.
        again = client.post(f"/api/v1/targets/{target['name']}/runs", json={"phases": [run["phases"][0]]}).json()
        assert wait_for_run(client, again["id"], timeout=60)["status"] == "finished"


def test_sigkill_mid_run_with_the_fake_suite(tmp_path: Path) -> None:
    target = {"name": "slow", "kind": "fake", "url": "ws://127.0.0.1:9", "options": {"delay": 0.4}}
    kill_mid_run_and_restart([sys.executable, "-c", SERVE_WITH_FAKE], f"sqlite:///{tmp_path / 'a.db'}", target, 2)


def test_sigkill_mid_run_of_rlconform_serve_against_a_slow_reference_server(tmp_path: Path, reference_server) -> None:
    if not RLCONFORM.exists():
        pytest.skip("the rlconform entry point is not installed")
    url = reference_server(policy_delay=0.3)
    target = {"name": "ref", "kind": "plugrl-server", "url": url, "options": {"timeout": 3.0, "patience": 0.2}}
    kill_mid_run_and_restart([str(RLCONFORM)], f"sqlite:///{tmp_path / 'b.db'}", target, 2)

"""Every kind can be tried from the dashboard and passes: a server kind through its demo target, a client
kind through the run page's "Run the reference client" button against the listening run."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.demo import demo_name
from app.main import create_app
from checks.openenv.reference import DEMO_OPTIONS as OPENENV_QUIZ
from checks.registry import RECORDS, get_suite
from checks.suite import run_suite
from tests.app.helpers import free_socket, service_settings, wait_for_run, wait_until

ROOT = Path(__file__).resolve().parents[2]

# Quicker options for a client kind's target (a run waits out reconnect windows and restarts otherwise).
QUICK_CLIENT_OPTIONS: dict[str, dict[str, Any]] = {
    "plugrl-client": {"steps": 6, "reconnect_window": 0.4, "timeout": 3.0, "connect_deadline": 60.0},
    "rllink-client": {"timeout": 5.0, "connect_deadline": 60.0},
}


def start_client_run(client: TestClient, kind: str) -> int:
    """A target of client kind `kind`, a run of it, and the page's button pressed once it listens."""
    name = f"try-{kind}"
    options = QUICK_CLIENT_OPTIONS.get(kind, {})
    created = client.post("/api/v1/targets", json={"name": name, "kind": kind, "options": options})
    assert created.status_code == 201, created.text
    run_id = int(client.post(f"/api/v1/targets/{name}/runs", json={}).json()["id"])
    page: dict[str, str] = {}

    def offers_the_button() -> bool:
        page["html"] = client.get(f"/runs/{run_id}").text
        return 'id="run-reference-client"' in page["html"]

    wait_until(offers_the_button, timeout=30, what=f"the {kind} run page offering the reference client")
    button_form = r'<form method="post" action="([^"]+)"[^>]*>\s*<button[^>]*id="run-reference-client"'
    action = re.search(button_form, page["html"])
    assert action is not None and action.group(1) == f"/runs/{run_id}/reference-client"
    pressed = client.post(action.group(1), follow_redirects=False)
    assert pressed.status_code == 303
    assert 'id="reference-client-started"' in client.get(f"/runs/{run_id}").text
    # A second press while it runs starts no second client.
    assert client.post(action.group(1), follow_redirects=False).status_code == 303
    return run_id


def test_every_kind_can_be_tried_from_the_dashboard_and_passes(tmp_path: Path) -> None:
    settings = service_settings(f"sqlite:///{tmp_path / 'demo.db'}", demo=True)
    with TestClient(create_app(settings)) as client:
        demos = client.app.state.demo or {}
        started: dict[str, int] = {}
        for record in RECORDS.values():
            if record.has("demo_server"):
                name = demo_name(record.name)
                assert name in demos, f"{record.name} has a demo server but no demo target"
                started[record.name] = int(client.post(f"/api/v1/targets/{name}/runs", json={}).json()["id"])
            else:
                assert record.has("reference_client"), f"{record.name} can be tried neither by demo nor client"
                started[record.name] = start_client_run(client, record.name)
        ended = {kind: wait_for_run(client, run_id, timeout=240) for kind, run_id in started.items()}
    failing = {kind: (run["outcome"], run["message"]) for kind, run in ended.items() if run["outcome"] != "pass"}
    assert not failing, failing
    assert len(ended) == len(RECORDS) >= 8


@pytest.mark.parametrize(
    ("kind", "url_of", "options"),
    [
        ("openenv", lambda port: f"http://127.0.0.1:{port}", OPENENV_QUIZ),
        ("rlmesh", lambda port: f"127.0.0.1:{port}", {}),
    ],
)
def test_the_reference_server_command_serves_a_passing_target(kind: str, url_of: Any, options: dict[str, Any]) -> None:
    """`rlconform reference-server openenv|rlmesh`: a process that says where it listens and passes its suite."""
    sock = free_socket()
    port = sock.getsockname()[1]
    sock.close()
    command = [sys.executable, "-m", "app.cli", "reference-server", kind, "--port", str(port)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.rstrip().endswith(url_of(port)), line
        report = asyncio.run(run_suite(get_suite(kind), url_of(port), options))
        bad = {r.clause_id: r.actual for r in report.results.values() if r.verdict.value in ("fail", "error", "warn")}
        assert not bad, bad
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout:
            process.stdout.close()


def test_a_stuck_reference_client_is_killed_after_its_lifetime(monkeypatch: pytest.MonkeyPatch) -> None:
    from app.web import reference_client

    monkeypatch.setattr(reference_client, "CLIENT_LIFETIME", 0.3)

    async def scenario() -> tuple[int | None, bool]:
        clients = reference_client.ReferenceClients()
        stuck = await asyncio.create_subprocess_exec(sys.executable, "-c", "import time; time.sleep(60)")
        clients.running[7] = stuck
        await asyncio.wait_for(clients._watch(7, stuck), 10)
        return stuck.returncode, clients.started_for(7)

    returncode, still_listed = asyncio.run(scenario())
    assert returncode is not None and returncode < 0 and not still_listed  # killed by a signal, and forgotten

"""A tap target in workers mode, against a real PostgreSQL: the worker of its label hosts the tap beside the
cluster, a real client talks through it, the service's page reads the counters the worker writes, and a stop
from the service ends the run with the window's verdicts; a SIGTERM'd worker ends its tap the same way."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.app.cluster import ROOT, Cluster, start_run, wait_workers
from tests.app.helpers import tap_listen_url, wait_for_run, wait_until

pytestmark = pytest.mark.postgres


def _tap_target(client: httpx.Client, name: str, upstream: str, label: str) -> None:
    body = {"name": name, "kind": "plugrl", "upstream": upstream, "worker_label": label, "tap": {}}
    response = client.post("/api/v1/taps", json=body)
    assert response.status_code == 201, response.text


def _reference_client(url: str) -> int:
    """The PlugRL reference client through the tap until the server stops it; its exit code."""
    command = [sys.executable, "-m", "app.cli", "reference-client", "plugrl-client", url]
    return subprocess.run(command, cwd=ROOT, capture_output=True, timeout=60).returncode


def _judged(client: httpx.Client, run_id: int) -> Callable[[], bool]:
    def judged() -> bool:
        ledger = client.get(f"/api/v1/runs/{run_id}/tap").json()["ledger"]
        return bool(ledger) and ledger.get("judged_messages", 0) >= 30

    return judged


def test_a_worker_hosts_the_tap_its_counters_reach_the_service_and_a_stop_keeps_the_window(
    cluster: Cluster, background_loop: Any, reference_server: Callable[..., str]
) -> None:
    client = cluster.service()
    cluster.worker("edge", RLCONFORM_LISTEN_HOST="127.0.0.1", RLCONFORM_TAP_FLUSH_SECONDS="0.3")
    wait_workers(client, 1)
    _tap_target(client, "edge-tap", reference_server(stop_after=30), "edge")
    run_id = start_run(client, "edge-tap")
    url = tap_listen_url(client, run_id, timeout=30)
    assert _reference_client(url) == 0
    wait_until(_judged(client, run_id), timeout=20, what="the worker writing the counters")
    assert client.post("/api/v1/targets/edge-tap/runs", json={}).status_code == 409
    assert client.post(f"/api/v1/runs/{run_id}/cancel").status_code == 200
    ended = wait_for_run(client, run_id, timeout=30)
    assert (ended["status"], ended["outcome"]) == ("finished", "pass"), ended
    verdicts = {row["clause_id"]: row["verdict"] for row in client.get(f"/api/v1/runs/{run_id}/results").json()}
    assert verdicts.get("plugrl.5.3.action-array") == "pass" and "fail" not in verdicts.values(), verdicts


def test_a_worker_stopped_with_sigterm_ends_its_tap_with_the_window_it_watched(
    cluster: Cluster, background_loop: Any, reference_server: Callable[..., str]
) -> None:
    client = cluster.service()
    worker = cluster.worker("drain", RLCONFORM_LISTEN_HOST="127.0.0.1", RLCONFORM_TAP_FLUSH_SECONDS="0.3")
    wait_workers(client, 1)
    _tap_target(client, "drained-tap", reference_server(stop_after=30), "drain")
    run_id = start_run(client, "drained-tap")
    assert _reference_client(tap_listen_url(client, run_id, timeout=30)) == 0
    wait_until(_judged(client, run_id), timeout=20, what="the worker writing the counters")
    worker.send_signal(signal.SIGTERM)
    worker.wait(timeout=30)
    assert worker.returncode == 0
    ended = client.get(f"/api/v1/runs/{run_id}").json()  # the worker stored the window before it exited
    assert (ended["status"], ended["outcome"]) == ("finished", "pass"), ended
    window = client.get(f"/api/v1/runs/{run_id}/tap").json()
    assert window["closed"] and window["ledger"]["judged_messages"] >= 30

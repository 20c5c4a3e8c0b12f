"""Workers mode against a real PostgreSQL: routing by label, SIGKILL, SIGTERM drain, cancel, schedules, webhooks.

Every process here is a real one (`rlconform serve`, `rlconform worker`) with
the fake suite registered; leases, heartbeats and polls are shortened
through settings so the whole file stays within a couple of minutes.
"""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, timedelta
from typing import Any

import httpx
import pytest

from tests.app.cluster import Cluster, fake_target, start_run, wait_workers
from tests.app.helpers import wait_for_run, wait_until
from tests.app.http_stub import QuietHandler, serving

pytestmark = pytest.mark.postgres


def _results(client: httpx.Client, run_id: int) -> list[tuple[str, str, str]]:
    rows = client.get(f"/api/v1/runs/{run_id}/results").json()
    return sorted((r["phase"], r["clause_id"], r["verdict"]) for r in rows)


def _run_row(database_url: str, run_id: int) -> dict[str, Any]:
    import sqlalchemy as sa

    from app.db import make_engine

    with make_engine(database_url).connect() as connection:
        run = connection.execute(sa.text("SELECT * FROM run WHERE id = :id"), {"id": run_id}).mappings().one()
        attempts = connection.execute(
            sa.text("SELECT number, worker, ending FROM run_attempt WHERE run_id = :id ORDER BY number"), {"id": run_id}
        ).all()
        target = connection.execute(sa.text("SELECT name FROM target WHERE id = :id"), {"id": run["target_id"]}).one()
    return dict(run) | {"attempt_rows": [tuple(a) for a in attempts], "target": target[0]}


def test_runs_go_only_to_workers_of_their_label_and_the_dashboard_warns_on_an_unserved_one(cluster: Cluster) -> None:
    client = cluster.service()
    cluster.worker("alpha")
    cluster.worker("beta")
    wait_workers(client, 2)
    fake_target(client, "on-alpha", "alpha")
    fake_target(client, "on-beta", "beta")
    fake_target(client, "nowhere", "gamma")
    runs = {name: start_run(client, name) for name in ("on-alpha", "on-beta", "nowhere")}
    for name, label in (("on-alpha", "alpha"), ("on-beta", "beta")):
        assert wait_for_run(client, runs[name])["outcome"] == "pass"
        assert _run_row(cluster.database_url, runs[name])["worker"].endswith(f":worker:{label}")
    time.sleep(1)
    assert client.get(f"/api/v1/runs/{runs['nowhere']}").json()["status"] == "queued"
    status = client.get("/api/v1/workers").json()
    assert status["unserved_labels"] == {"gamma": ["nowhere"]}
    assert "No live worker serves the label" in client.get("/workers").text
    assert "gamma" in client.get("/targets/nowhere").text


def run_under_way(
    cluster: Cluster, label: str, name: str, delay: float, decided: int
) -> tuple[httpx.Client, subprocess.Popen[bytes], int]:
    """The service, its one worker of `label`, and a run of a slow fake target `name` on it that has decided
    `decided` clauses."""
    client = cluster.service()
    worker = cluster.worker(label)
    wait_workers(client, 1)
    fake_target(client, name, label, delay=delay)
    run_id = start_run(client, name)
    wait_until(lambda: client.get(f"/api/v1/runs/{run_id}").json()["decided_clauses"] >= decided, timeout=30)
    return client, worker, run_id


def test_a_worker_killed_mid_run_loses_nothing_another_worker_finishes_the_run(cluster: Cluster) -> None:
    # Kill once the first phase finished and the second is under way.
    client, first, run_id = run_under_way(cluster, "k", "slow", delay=0.5, decided=3)
    before = _results(client, run_id)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    cluster.worker("k")
    run = wait_for_run(client, run_id, timeout=60)
    assert run["status"] == "finished" and run["outcome"] == "pass", run
    after = _results(client, run_id)
    assert len(after) == len({(phase, clause) for phase, clause, _ in after}) == 6  # each clause once
    hello = [r for r in before if r[0] == "hello"]
    assert hello and set(hello) <= set(after)  # the finished phase was kept, not run again
    row = _run_row(cluster.database_url, run_id)
    assert row["attempts"] == 2 and row["finished_phases"][:2] == ["hello", "echo"]
    assert [a[2] for a in row["attempt_rows"]] == ["lease expired", "finished"]


def test_a_draining_worker_hands_its_run_back_and_another_resumes_it(cluster: Cluster) -> None:
    client, first, run_id = run_under_way(cluster, "d", "long", delay=0.8, decided=2)
    first.send_signal(signal.SIGTERM)
    assert first.wait(timeout=20) == 0  # drained: waited its grace, handed the run back, exited cleanly
    assert client.get(f"/api/v1/runs/{run_id}").json()["status"] == "queued"
    cluster.worker("d")
    run = wait_for_run(client, run_id, timeout=60)
    assert run["status"] == "finished", run
    row = _run_row(cluster.database_url, run_id)
    assert [a[2] for a in row["attempt_rows"]] == ["handed back", "finished"]
    assert len(_results(client, run_id)) == 6


def test_cancel_stops_a_running_run_within_a_second_and_keeps_its_clauses(cluster: Cluster) -> None:
    client = cluster.service()
    cluster.worker("c")
    wait_workers(client, 1)
    fake_target(client, "cancel-me", "c", delay=1.0)
    run_id = start_run(client, "cancel-me")
    wait_until(lambda: client.get(f"/api/v1/runs/{run_id}").json()["decided_clauses"] >= 1, timeout=30)
    began = time.monotonic()
    run = client.post(f"/api/v1/runs/{run_id}/cancel").json()
    assert time.monotonic() - began < 1.5
    assert run["status"] == "cancelled"
    assert run["decided_clauses"] >= 1 and len(_results(client, run_id)) == run["decided_clauses"]


def test_schedules_fire_once_per_slot_with_two_services_and_two_workers(cluster: Cluster) -> None:
    from app.scheduler import ANCHOR, spread_offset

    client = cluster.service()
    cluster.service()
    cluster.worker("s")
    cluster.worker("s")
    wait_workers(client, 2)
    fake_target(client, "ticking", "s")
    fake_target(client, "spread", "s")
    assert client.put("/api/v1/targets/ticking/schedule", json={"cron": "* * * * * */2"}).status_code == 200
    assert client.put("/api/v1/targets/spread/schedule", json={"interval_seconds": 3}).status_code == 200
    time.sleep(10)
    for name in ("ticking", "spread"):
        assert client.delete(f"/api/v1/targets/{name}/schedule").status_code == 204
    runs = [r for r in client.get("/api/v1/runs", params={"limit": 100}).json() if r["trigger"] == "schedule"]
    rows = [_run_row(cluster.database_url, r["id"]) for r in runs]
    for name, period in (("ticking", 2.0), ("spread", 3.0)):
        mine = sorted((r for r in rows if r["target"] == name), key=lambda r: r["scheduled_for"])
        slots = [r["scheduled_for"] for r in mine]
        assert len(slots) >= 2, slots
        assert len(set(slots)) == len(slots)  # never two runs for one slot
        gaps = {(b - a).total_seconds() for a, b in zip(slots, slots[1:], strict=False)}
        assert gaps == {period}, slots  # and none skipped: each run finished before the next slot
        # each started within a couple of seconds of its own due time (a tick a second, then a worker)
        assert max((r["started_at"] - r["scheduled_for"]).total_seconds() for r in mine) < 4, mine
    spread = [r for r in rows if r["target"] == "spread"]
    offset = spread_offset(spread[0]["target_id"], timedelta(seconds=3))
    assert all((r["scheduled_for"].replace(tzinfo=UTC) - ANCHOR) % timedelta(seconds=3) == offset for r in spread)


@contextmanager
def flaky_receiver(failures: int) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """An HTTP receiver answering 500 `failures` times, then 204; yields its URL and what it got."""
    import json

    received: list[dict[str, Any]] = []

    class Handler(QuietHandler):
        def do_POST(self) -> None:  # noqa: N802 (the http.server API)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            received.append(body)
            self.send_response(500 if len(received) <= failures else 204)
            self.end_headers()

    with serving(Handler) as url:
        yield f"{url}/hook", received


def test_a_webhook_failing_twice_is_retried_until_delivered(cluster: Cluster) -> None:
    client = cluster.service()
    cluster.worker("w", RLCONFORM_PUBLIC_URL="http://dash.example")  # the worker ending the run writes the body
    fake_target(client, "noisy", "w", fail=["fake.2.orders"])
    with flaky_receiver(failures=2) as (url, received):
        assert client.post("/api/v1/targets/noisy/webhooks", json={"url": url}).status_code == 201
        wait_for_run(client, start_run(client, "noisy"))
        deliveries = "/api/v1/targets/noisy/webhooks/deliveries"
        wait_until(lambda: client.get(deliveries).json()[0]["state"] == "delivered", timeout=30, what="delivery")
    [delivery] = client.get(deliveries).json()
    assert delivery["attempts"] == 3 and len(received) == 3
    body = received[-1]
    assert body["target"] == "noisy" and body["outcome"] == "fail"
    assert body["links"]["run"].startswith("http://dash.example/runs/")
    assert "delivered" in client.get("/targets/noisy").text

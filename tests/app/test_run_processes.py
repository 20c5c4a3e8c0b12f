"""Run processes beside the web process (RLCONFORM_RUN_PROCESSES): two runs' Python on two cores at once,
each run claimed once under a lease, a killed run process's run taken up again, none left after a stop."""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlmodel import Session, col, select

from app.cli.serve import settings_from_args
from app.db import make_engine
from app.main import create_app
from app.models import Run, RunAttempt
from app.settings import Settings
from tests.app.helpers import make_target, service_settings, wait_for_run, wait_until

SLOW = {"timeout": 3.0, "patience": 0.2}  # with a policy delay, a run lasts seconds


def processes_settings(tmp_path: Path, processes: int, **overrides: Any) -> Settings:
    return service_settings(f"sqlite:///{tmp_path / 'rlconform.db'}", run_processes=processes, **overrides)


@pytest.fixture
def serving(tmp_path: Path) -> Iterator[Callable[..., TestClient]]:
    """`serving(processes, **settings)`: a TestClient of the app with that many run processes, closed after."""
    clients: list[TestClient] = []

    def start(processes: int, **overrides: Any) -> TestClient:
        client = TestClient(create_app(processes_settings(tmp_path, processes, **overrides)))
        client.__enter__()
        clients.append(client)
        return client

    try:
        yield start
    finally:
        for client in clients:
            client.__exit__(None, None, None)


def run_row(client: TestClient, run_id: int) -> Run:
    with Session(make_engine(client.app.state.settings.database_url)) as session:  # type: ignore[attr-defined]
        run = session.get(Run, run_id)
        assert run is not None
        session.expunge(run)
        return run


def pid_of(worker: str | None) -> int:
    assert worker and worker.endswith(":run-process"), worker
    return int(worker.split(":")[-2])


def alive(pid: int) -> bool:
    """Whether `pid` is a live process (not gone, not a zombie waiting to be reaped)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_two_runs_execute_at_once_in_two_run_processes(serving, reference_server) -> None:
    client = serving(2)
    make_target(client, "slow", "plugrl-server", reference_server(policy_delay=0.3), options=SLOW)
    run_ids = [client.post("/api/v1/targets/slow/runs", json={}).json()["id"] for _ in range(2)]
    together: list[tuple[int, int]] = []

    def both_running() -> bool:
        runs = [run_row(client, run_id) for run_id in run_ids]
        if all(run.status == "running" and run.decided_clauses for run in runs):
            together.append((pid_of(runs[0].worker), pid_of(runs[1].worker)))
            return True
        return False

    wait_until(both_running, timeout=60, what="both runs deciding clauses at once")
    first, second = together[0]
    assert first != second and os.getpid() not in (first, second)
    assert alive(first) and alive(second)
    for run_id in run_ids:
        assert wait_for_run(client, run_id, timeout=90)["outcome"] == "pass"
        assert run_row(client, run_id).attempts == 1  # each claimed once
    # The run processes report their runs' ends to the web process, whose /metrics is the one scraped.
    ended = 'rlconform_runs_ended_total{status="finished",outcome="pass"} 2'
    wait_until(lambda: ended in client.get("/metrics").text, timeout=10, what="both ends counted in /metrics")


def test_a_kind_only_the_web_process_knows_runs_in_the_web_process(serving, fake_kind: str) -> None:
    client = serving(1)
    make_target(client, "fake", fake_kind, "ws://127.0.0.1:9", options={"delay": 0.0})
    run_id = client.post("/api/v1/targets/fake/runs", json={}).json()["id"]
    assert wait_for_run(client, run_id, timeout=60)["status"] == "finished"
    assert str(run_row(client, run_id).worker).endswith(f":{os.getpid()}:embedded")


def test_a_run_in_a_run_process_is_cancelled_with_its_decided_clauses_kept(serving, reference_server) -> None:
    client = serving(1)
    make_target(client, "slow", "plugrl-server", reference_server(policy_delay=0.3), options=SLOW)
    run_id = client.post("/api/v1/targets/slow/runs", json={}).json()["id"]
    wait_until(lambda: run_row(client, run_id).decided_clauses >= 1, timeout=60, what="a decided clause")
    assert client.post(f"/api/v1/runs/{run_id}/cancel").status_code == 200
    run = client.get(f"/api/v1/runs/{run_id}").json()
    assert run["status"] == "cancelled" and run["decided_clauses"] >= 1, run
    assert len(client.get(f"/api/v1/runs/{run_id}/results").json()) == run["decided_clauses"]


def test_the_workers_page_and_api_list_the_run_processes_and_the_runs_they_hold(serving, reference_server) -> None:
    client = serving(2)
    make_target(client, "slow", "plugrl-server", reference_server(policy_delay=0.3), options=SLOW)
    run_id = client.post("/api/v1/targets/slow/runs", json={}).json()["id"]
    wait_until(lambda: run_row(client, run_id).decided_clauses >= 1, timeout=60, what="a decided clause")
    status = client.get("/api/v1/workers").json()
    assert status["mode"] == "embedded" and len(status["run_processes"]) == 2, status
    holder = pid_of(run_row(client, run_id).worker)
    by_pid = {process["pid"]: process for process in status["run_processes"]}
    assert holder in by_pid and all(alive(pid) for pid in by_pid), status
    held = by_pid[holder]
    assert held["name"] == f"{held['host']}:{holder}:run-process" and held["current_runs"] == [run_id]
    assert held["last_renewal"] and held["started_at"] and held["ready"], held
    other = next(process for pid, process in by_pid.items() if pid != holder)
    assert other["current_runs"] == [] and other["last_renewal"] is None, other
    page = client.get("/workers").text  # server-rendered: what a browser without JavaScript shows
    assert f'href="/runs/{run_id}"' in page and all(str(pid) in page for pid in by_pid)
    assert "lease renewed</span> just now" in page and "idle" in page


def test_the_workers_page_says_the_web_process_executes_the_runs_without_run_processes(serving) -> None:
    client = serving(0)
    assert client.get("/api/v1/workers").json()["run_processes"] == []
    assert "executed inside this service's web process" in client.get("/workers").text


@pytest.mark.parametrize("max_attempts", [1, 3])
def test_a_killed_run_process_is_started_again_and_its_run_taken_up_or_ended_saying_why(
    serving, reference_server, max_attempts: int
) -> None:
    client = serving(1, max_attempts=max_attempts)
    make_target(client, "slow", "plugrl-server", reference_server(policy_delay=0.3), options=SLOW)
    run_id = client.post("/api/v1/targets/slow/runs", json={}).json()["id"]
    wait_until(lambda: run_row(client, run_id).decided_clauses >= 1, timeout=60, what="a decided clause")
    killed = pid_of(run_row(client, run_id).worker)
    os.kill(killed, signal.SIGKILL)
    run = wait_for_run(client, run_id, timeout=120)
    with Session(make_engine(client.app.state.settings.database_url)) as session:
        attempts = session.exec(select(RunAttempt).where(RunAttempt.run_id == run_id).order_by(col(RunAttempt.number)))
        endings = [(attempt.worker, attempt.ending) for attempt in attempts]
    assert endings[0] == (f"{endings[0][0]}", "lease expired") and pid_of(endings[0][0]) == killed
    if max_attempts == 1:
        assert (run["status"], len(endings)) == ("interrupted", 1), run
        assert "stopped renewing the lease 1 time" in run["message"]
    else:
        assert (run["status"], run["outcome"], len(endings)) == ("finished", "pass", 2), run
        assert pid_of(endings[1][0]) != killed  # the process started again
    # The slot is free again: a later run is executed too.
    again = client.post("/api/v1/targets/slow/runs", json={"phases": [run["phases"][0]]}).json()["id"]
    assert wait_for_run(client, again, timeout=60)["status"] == "finished"


def test_a_hung_run_process_loses_its_run_by_the_lease_and_is_killed_and_started_again(
    serving, reference_server
) -> None:
    client = serving(1, lease_seconds=3.0)
    make_target(client, "slow", "plugrl-server", reference_server(policy_delay=0.3), options=SLOW)
    run_id = client.post("/api/v1/targets/slow/runs", json={}).json()["id"]
    wait_until(lambda: run_row(client, run_id).decided_clauses >= 1, timeout=60, what="a decided clause")
    hung = pid_of(run_row(client, run_id).worker)
    os.kill(hung, signal.SIGSTOP)
    try:
        run = wait_for_run(client, run_id, timeout=120)
    finally:
        if alive(hung):
            os.kill(hung, signal.SIGKILL)
    assert (run["status"], run["outcome"]) == ("finished", "pass"), run
    assert not alive(hung)
    row = run_row(client, run_id)
    assert row.attempts == 2 and pid_of(row.worker) != hung


def test_demo_targets_are_reached_from_run_processes_whatever_the_network_policy(serving) -> None:
    client = serving(1, demo=True, allowed_networks=["10.0.0.0/8"])  # loopback is not allowed: the demo is own
    run_id = client.post("/api/v1/targets/demo/runs", json={}).json()["id"]
    run = wait_for_run(client, run_id, timeout=90)
    assert (run["status"], run["outcome"]) == ("finished", "pass"), run
    assert run_row(client, run_id).worker.endswith(":run-process")  # type: ignore[union-attr]


def test_a_listen_run_in_a_run_process_grades_the_client_that_connects(serving) -> None:
    from checks.plugrl_client.reference import main as reference_client
    from tests.app.test_listen_runs import announced, client_target, start_run

    client = serving(1)
    client_target(client)
    run_id = start_run(client)
    url = announced(client, run_id)["url"]
    thread = threading.Thread(target=reference_client, args=([url, "--restart-delay", "0.8"],), daemon=True)
    thread.start()
    run = wait_for_run(client, run_id, timeout=90)
    thread.join(timeout=30)
    assert run["outcome"] == "pass", run
    assert str(run_row(client, run_id).worker).endswith(":run-process")


def test_a_tap_run_in_a_run_process_judges_and_ends_when_stopped(serving, reference_server, background_loop) -> None:
    from tests.app.test_tap_service import drive, start_tap, stop, tap_target

    client = serving(1, tap_flush_seconds=0.2)
    tap_target(client, "tapped", reference_server(stop_after=12))
    run_id, url = start_tap(client, "tapped")
    assert str(run_row(client, run_id).worker).endswith(":run-process")
    assert drive(background_loop, url) == "stop"
    wait_until(lambda: client.get(f"/api/v1/runs/{run_id}/tap").json()["ledger"].get("judged_messages", 0) > 0)
    run = stop(client, run_id)
    assert (run["status"], run["outcome"]) == ("finished", "pass"), run
    assert client.get(f"/api/v1/runs/{run_id}/results").json()  # the window's verdicts, stored at the stop


def test_a_parity_run_in_a_run_process_compares_both_sides(serving, reference_server) -> None:
    from tests.app.test_parity_runs import run_parity

    client = serving(1)
    for name in ("a", "b"):
        make_target(client, name, "plugrl-server", reference_server(), options=SLOW)
    run = run_parity(client, first="a", second="b")
    assert (run["status"], run["outcome"], run["parity_status"]) == ("finished", "pass", "identical"), run
    assert str(run_row(client, run["id"]).worker).endswith(":run-process")


def test_the_run_processes_setting_and_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RLCONFORM_RUN_PROCESSES", raising=False)
    assert Settings().run_processes == min(2, os.cpu_count() or 1)
    assert settings_from_args(type("Args", (), {"run_processes": 0})()).run_processes == 0  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Settings(run_processes=-1)


# ---------------------------------------------------------------- `rlconform serve` as a process


def children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        found.update(int(child) for child in (task / "children").read_text().split())
    return found


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_serve_stopped_leaves_no_run_process(tmp_path: Path, reference_server, monkeypatch, how) -> None:
    from tests.app.test_restart import serving as serving_process

    monkeypatch.setenv("RLCONFORM_RUN_PROCESSES", "2")
    command = [sys.executable, "-m", "app.cli"]
    target = {"name": "slow", "kind": "plugrl-server", "url": reference_server(policy_delay=0.3), "options": SLOW}
    with serving_process(command, f"sqlite:///{tmp_path / 'a.db'}") as (client, process):
        wait_until(lambda: len(children(process.pid)) == 2, timeout=30, what="two run processes")
        started = children(process.pid)
        assert client.post("/api/v1/targets", json=target).status_code == 201
        run_id = client.post("/api/v1/targets/slow/runs", json={}).json()["id"]
        wait_until(lambda: client.get(f"/api/v1/runs/{run_id}").json()["decided_clauses"] >= 1, timeout=60)
        process.send_signal(how)
        code = process.wait(timeout=60)
        assert code == (0 if how == signal.SIGTERM else -signal.SIGKILL)
    wait_until(lambda: not any(alive(pid) for pid in started), timeout=30, what="no run process left")
    # Asked to stop, or finding its stdin closed, a run process ends its run as the web process would.
    with Session(make_engine(f"sqlite:///{tmp_path / 'a.db'}")) as session:
        run = session.get(Run, run_id)
        assert run is not None and run.status == "interrupted" and run.decided_clauses >= 1, run

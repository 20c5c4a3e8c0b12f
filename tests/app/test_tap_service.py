"""Tap targets in the service: created through the API, their runs host a tap between a real client and
the upstream, keep live per-clause counters in the database, show them on the run page and end, when
stopped, with the window's verdicts as clause results (rolled-over windows as runs of their own)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.settings import Settings
from checks.plugrl_client.reference import ReferenceClient
from checks.tap.kinds import tap_spec
from tests.app.conftest import BackgroundLoop
from tests.app.helpers import service_settings, tap_listen_url, wait_for_run, wait_until

FLUSH = 0.2  # seconds between a tap run's counter writes in these tests


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return service_settings(f"sqlite:///{tmp_path / 'rlconform.db'}", tap_flush_seconds=FLUSH)


def tap_target(client: TestClient, name: str, upstream: str, **tap: Any) -> dict[str, Any]:
    response = client.post("/api/v1/taps", json={"name": name, "kind": "plugrl", "upstream": upstream, "tap": tap})
    assert response.status_code == 201, response.text
    return dict(response.json())


def start_tap(client: TestClient, name: str) -> tuple[int, str]:
    """Start the target's tap run; (run id, the URL clients connect to) once it listens."""
    response = client.post(f"/api/v1/targets/{name}/runs", json={})
    assert response.status_code == 202, response.text
    run_id = int(response.json()["id"])
    return run_id, tap_listen_url(client, run_id)


def tallies(client: TestClient, run_id: int) -> dict[str, dict[str, Any]]:
    ledger = client.get(f"/api/v1/runs/{run_id}/tap").json()["ledger"]
    return {clause["clause_id"]: clause for clause in ledger.get("clauses", [])}


def drive(loop: BackgroundLoop, url: str) -> Any:
    try:
        return loop.run(ReferenceClient(url).session(), timeout=20)
    except Exception as exc:  # a conforming client may give up on a broken server
        return exc


def stop(client: TestClient, run_id: int) -> dict[str, Any]:
    assert client.post(f"/api/v1/runs/{run_id}/cancel").status_code == 200
    return wait_for_run(client, run_id, timeout=20)


def test_creating_a_tap_target_checks_its_kind_options_and_listen_address(client: TestClient) -> None:
    created = tap_target(client, "tapped", "ws://127.0.0.1:9", roll_messages=100)
    assert created["target"]["kind"] == "plugrl-server"  # the short name names the server kind: a tap's upstream
    assert created["tap"]["roll_messages"] == 100
    assert client.get("/api/v1/taps/tapped").json()["tap"]["roll_messages"] == 100
    refused = client.post("/api/v1/taps", json={"name": "x", "kind": "fake-kind", "upstream": "ws://127.0.0.1:9"})
    assert refused.status_code == 422 and "kind" in refused.text
    refused = client.post(
        "/api/v1/taps", json={"name": "y", "kind": "plugrl", "upstream": "ws://h:9", "tap": {"options": {"a": "b"}}}
    )
    assert refused.status_code == 422 and "takes no options" in refused.text
    refused = client.post(
        "/api/v1/taps", json={"name": "z", "kind": "plugrl", "upstream": "ws://h:9", "tap": {"listen": "x"}}
    )
    assert refused.status_code == 422
    assert client.get("/api/v1/taps/nosuch").status_code == 404


def test_the_reference_pair_through_a_service_tap_run_passes_with_live_counters_on_the_page(
    client: TestClient, background_loop: BackgroundLoop, reference_server: Any
) -> None:
    tap_target(client, "tapped", reference_server(stop_after=30))
    run_id, url = start_tap(client, "tapped")
    assert drive(background_loop, url) == "stop"  # the server's stop close reached the client through the tap

    def judged() -> bool:
        return tallies(client, run_id).get("plugrl.5.3.time-major", {}).get("judged", 0) >= 4

    wait_until(judged, timeout=10, what="the counters written")
    assert client.get(f"/api/v1/runs/{run_id}").json()["status"] == "running"  # watching until stopped
    live = client.get(f"/api/v1/runs/{run_id}/tap").json()
    assert live["ledger"]["connections"] == 1 and live["ledger"]["messages"] >= 20 and live["unjudged"] == 0
    # The tap's own read-to-forward time: measured on every chunk, shown as p50 and p99.
    assert 0 < live["added_latency_ms"] == live["ledger"]["forward_p50_ms"] <= live["ledger"]["forward_p99_ms"]
    page = client.get(f"/runs/{run_id}")
    assert "ms p50" in page.text and "ms p99" in page.text
    assert page.url.path == f"/runs/{run_id}/tap"
    assert 'http-equiv="refresh"' in page.text and url in page.text and "■ Stop tap" in page.text
    assert "plugrl.5.3.time-major" in page.text and "plugrl-client.4.2.alternation" in page.text
    assert "First violation" not in page.text

    run = stop(client, run_id)
    assert (run["status"], run["outcome"]) == ("finished", "pass"), run
    assert run["announcement"]["waiting"] is False  # nobody is told to connect to a stopped tap
    results = client.get(f"/api/v1/runs/{run_id}/results").json()
    decided = {r["clause_id"]: r for r in results if r["verdict"] != "skip"}
    assert {r["verdict"] for r in decided.values()} == {"pass"}, decided
    assert decided["plugrl.5.3.time-major"]["phase"] == "tap" and decided["plugrl.5.3.time-major"]["checks"] >= 4
    ended = client.get(f"/runs/{run_id}/tap").text
    assert 'http-equiv="refresh"' not in ended and "Stop tap" not in ended


def test_a_zoo_server_through_a_service_tap_run_is_flagged_with_its_first_violation(
    client: TestClient, background_loop: BackgroundLoop
) -> None:
    from tests.zoo.plugrl_server.faults_content import EnvMajor

    server = background_loop.run(EnvMajor(stop_after=12).start())
    try:
        tap_target(client, "env-major", f"ws://127.0.0.1:{server.port}")
        run_id, url = start_tap(client, "env-major")
        drive(background_loop, url)
        wait_until(
            lambda: tallies(client, run_id).get("plugrl.5.3.time-major", {}).get("violated", 0) > 0,
            timeout=10,
            what="the violation counted",
        )
        page = client.get(f"/runs/{run_id}/tap").text
        assert "First violation" in page and "plugrl.5.3.time-major" in page and "connection 1" in page
        run = stop(client, run_id)
    finally:
        background_loop.run(server.close())
    assert run["outcome"] == "fail", run
    results = {r["clause_id"]: r for r in client.get(f"/api/v1/runs/{run_id}/results").json()}
    assert results["plugrl.5.3.time-major"]["verdict"] == "fail"
    assert "first of" in results["plugrl.5.3.time-major"]["actual"]
    flagged = {c for c, r in results.items() if r["verdict"] in ("fail", "warn")}
    assert not {c for c in flagged if c.startswith("plugrl-client.")}, flagged  # the conforming client is not blamed


def test_windows_roll_over_by_message_count_into_runs_of_their_own(
    client: TestClient, background_loop: BackgroundLoop, reference_server: Any
) -> None:
    tap_target(client, "rolling", reference_server(stop_after=30), roll_messages=10)
    run_id, url = start_tap(client, "rolling")
    assert drive(background_loop, url) == "stop"

    def rolled() -> bool:
        runs = client.get("/api/v1/runs", params={"target": "rolling"}).json()
        return sum(1 for r in runs if r["status"] == "finished") >= 2

    wait_until(rolled, timeout=10, what="two windows closed")
    stop(client, run_id)
    history = client.get("/api/v1/targets/rolling/history").json()
    runs = history["runs"]
    assert len(runs) >= 3 and all(r["trigger"] in ("tap", "api") for r in runs)
    assert runs[-1]["id"] == run_id  # the hosting run holds the last window: history lists windows in order
    assert all(r["outcome"] == "pass" for r in runs), runs
    windows = client.get(f"/api/v1/runs/{runs[0]['id']}/tap").json()
    assert windows["closed"] and windows["number"] == 1
    assert "Windows of this tap" in client.get(f"/runs/{run_id}/tap").text
    target_page = client.get("/targets/rolling")
    assert target_page.status_code == 200 and "plugrl.5.3.time-major" in target_page.text  # the history grid


def test_the_tap_form_adds_a_tap_target_and_shows_what_is_wrong_beside_its_field(client: TestClient) -> None:
    form = client.get("/targets/new-tap")
    assert form.status_code == 200 and 'action="/targets/new-tap"' in form.text and "plugrl-server" in form.text
    assert 'href="/targets/new-tap"' in client.get("/targets/new").text
    fields = {"name": "from-form", "kind": "plugrl-server", "upstream": "ws://127.0.0.1:9", "listen": ""}
    bad = client.post("/targets/new-tap", data=fields | {"options": "preset=x"}, follow_redirects=False)
    assert bad.status_code == 422 and "takes no options" in bad.text and 'value="ws://127.0.0.1:9"' in bad.text
    bad = client.post("/targets/new-tap", data=fields | {"upstream": "ftp://x"}, follow_redirects=False)
    assert bad.status_code == 422 and 'id="err-upstream"' in bad.text, bad.text
    made = client.post(
        "/targets/new-tap", data=fields | {"roll_messages": "500", "options": ""}, follow_redirects=False
    )
    assert made.status_code == 303 and made.headers["location"] == "/targets/from-form"
    assert client.get("/api/v1/taps/from-form").json()["tap"]["roll_messages"] == 500


def test_a_tap_run_ended_by_another_path_stops_listening_and_writes_nothing_more(
    client: TestClient, settings: Settings, reference_server: Any
) -> None:
    import socket

    from sqlmodel import Session

    from app.db import make_engine
    from app.models import Run, RunStatus

    tap_target(client, "ended-elsewhere", reference_server())
    run_id, url = start_tap(client, "ended-elsewhere")
    port = int(url.rsplit(":", 1)[1])
    with Session(make_engine(settings.database_url)) as session:  # as a recovery on another process would
        run = session.get(Run, run_id)
        assert run is not None
        run.status, run.message = RunStatus.INTERRUPTED, "ended elsewhere"
        session.add(run)
        session.commit()

    def refused() -> bool:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            return True
        return False

    wait_until(refused, timeout=10, what="the tap closing its port")
    ended = client.get(f"/api/v1/runs/{run_id}").json()
    assert (ended["status"], ended["message"]) == ("interrupted", "ended elsewhere")
    assert client.get(f"/api/v1/runs/{run_id}/results").json() == []


def test_windows_that_closed_since_the_last_write_are_stored_when_the_tap_stops(
    tmp_path: Path, background_loop: BackgroundLoop, reference_server: Any
) -> None:
    from app.main import create_app

    slow = service_settings(f"sqlite:///{tmp_path / 'slow.db'}", tap_flush_seconds=600)  # no write before the stop
    with TestClient(create_app(slow)) as client:
        tap_target(client, "unwritten", reference_server(stop_after=30), roll_messages=10)
        run_id, url = start_tap(client, "unwritten")
        assert drive(background_loop, url) == "stop"
        time.sleep(0.5)  # the judging thread takes the last copies
        assert client.get(f"/api/v1/runs/{run_id}/tap").json()["ledger"] == {}  # nothing written yet
        stop(client, run_id)
        runs = client.get("/api/v1/targets/unwritten/history").json()["runs"]
        windows = [client.get(f"/api/v1/runs/{r['id']}/tap").json() for r in runs]
    assert len(runs) >= 4 and [w["number"] for w in windows] == list(range(1, len(runs) + 1)), windows
    assert sum(w["ledger"]["messages"] for w in windows) >= 30 and all(w["closed"] for w in windows)


@pytest.mark.parametrize("judging", ["process", "thread"])
def test_a_zoo_server_is_flagged_with_the_judges_in_a_spawned_process_or_in_a_thread(
    tmp_path: Path, background_loop: BackgroundLoop, judging: str
) -> None:
    import multiprocessing

    from app.main import create_app
    from tests.zoo.plugrl_server.faults_content import NoEnvIds

    chosen = service_settings(f"sqlite:///{tmp_path / 'tap.db'}", tap_flush_seconds=FLUSH, tap_judging=judging)
    server = background_loop.run(NoEnvIds(stop_after=12).start())
    try:
        with TestClient(create_app(chosen)) as client:
            tap_target(client, "no-env-ids", f"ws://127.0.0.1:{server.port}", roll_messages=5)
            run_id, url = start_tap(client, "no-env-ids")
            judges = [child for child in multiprocessing.active_children() if child.name == "tap-judges"]
            assert len(judges) == (1 if judging == "process" else 0)
            drive(background_loop, url)

            def rolled() -> list[dict[str, Any]]:
                runs = client.get("/api/v1/runs", params={"target": "no-env-ids"}).json()
                return [r for r in runs if r["status"] == "finished"]

            wait_until(lambda: len(rolled()) >= 2, timeout=10, what="windows closed by the judging process")
            stop(client, run_id)
            verdicts = [
                {r["clause_id"]: r["verdict"] for r in client.get(f"/api/v1/runs/{run['id']}/results").json()}
                for run in rolled()
            ]
    finally:
        background_loop.run(server.close())
    assert any(v.get("plugrl.4.3.env-ids-order") == "fail" for v in verdicts), verdicts


def test_a_tap_watches_once_at_a_time_and_its_fixed_address_is_free_again_after_a_stop(
    client: TestClient, reference_server: Any, background_loop: BackgroundLoop
) -> None:
    import socket

    with socket.socket() as probe:  # a free port for the tap target's fixed listen address
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    tap_target(client, "fixed", reference_server(stop_after=30), listen=f"127.0.0.1:{port}")
    first, url = start_tap(client, "fixed")
    assert url == f"ws://127.0.0.1:{port}"
    second = client.post("/api/v1/targets/fixed/runs", json={})
    assert second.status_code == 409, second.text
    assert f"run {first} is already watching it" in second.json()["detail"][0]["msg"]
    page = client.post("/targets/fixed/run", follow_redirects=False)
    assert page.status_code == 409 and "already watching" in page.text
    stop(client, first)
    again, url = start_tap(client, "fixed")  # the stopped tap let go of its address
    assert again != first and url == f"ws://127.0.0.1:{port}"
    assert drive(background_loop, url) == "stop"  # the reference pair talks through the new run
    ended = stop(client, again)
    assert (ended["status"], ended["outcome"]) == ("finished", "pass"), ended


def test_a_tap_run_records_no_phases_and_the_taps_options_and_refuses_a_runs_own(client: TestClient) -> None:
    options = {"reward_range": "[-1,1]"}
    tap = {"name": "judged", "kind": "openenv", "upstream": "http://127.0.0.1:9", "tap": {"options": options}}
    created = client.post("/api/v1/taps", json=tap)
    assert created.status_code == 201, created.text
    refused = client.post("/api/v1/targets/judged/runs", json={"phases": ["reset"], "options": {"timeout": 3}})
    assert refused.status_code == 422, refused.text
    assert {tuple(error["loc"][-1:]) for error in refused.json()["detail"]} == {("phases",), ("options",)}
    started = client.post("/api/v1/targets/judged/runs", json={})
    assert started.status_code == 202, started.text
    run = started.json()
    assert run["phases"] == [] and run["options"] == options, run
    assert run["total_clauses"] == len(tap_spec("openenv", options).catalogue)  # what the tap judges: all of it
    stop(client, int(run["id"]))


def test_a_tap_stopped_while_it_is_being_announced_leaves_no_judging_process(
    client: TestClient, reference_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import multiprocessing

    from app import tap_runs

    announce = tap_runs.open_hosted

    def slow_announce(*args: Any) -> bool:
        time.sleep(1.0)  # the stop below arrives while the run's listen URL is being written
        return announce(*args)

    monkeypatch.setattr(tap_runs, "open_hosted", slow_announce)
    earlier = {child.pid for child in multiprocessing.active_children()}
    tap_target(client, "stopped-at-once", reference_server())
    response = client.post("/api/v1/targets/stopped-at-once/runs", json={})
    assert response.status_code == 202, response.text

    def judging() -> list[Any]:
        children = multiprocessing.active_children()
        return [child for child in children if child.name == "tap-judges" and child.pid not in earlier]

    wait_until(lambda: bool(judging()), timeout=10, what="the tap's judging process started")
    stop(client, int(response.json()["id"]))
    wait_until(lambda: not judging(), timeout=10, what="the judging process gone with the stopped tap")

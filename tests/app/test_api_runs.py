"""Runs through the REST API: lifecycle, results, transcripts, JUnit, diff, history, cancel, deadlines."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from fastapi.testclient import TestClient

from app.settings import Settings
from tests.app.helpers import make_target, service_settings, wait_for_run, wait_until

URL = "ws://127.0.0.1:9"
ALL_DEFAULT = {"fake.1.greets", "fake.1.names-itself", "fake.2.echoes", "fake.2.fast", "fake.2.orders"}


@pytest.fixture
def settings(database_url: str) -> Settings:
    return service_settings(database_url)


def start(client: TestClient, name: str, **body) -> dict:
    response = client.post(f"/api/v1/targets/{name}/runs", json=body)
    assert response.status_code == 202, response.text
    return response.json()


def verdicts(client: TestClient, run_id: int) -> dict[str, str]:
    return {r["clause_id"]: r["verdict"] for r in client.get(f"/api/v1/runs/{run_id}/results").json()}


def test_queued_running_finished_with_live_results(client: TestClient, fake_kind: str) -> None:
    make_target(client, "slow", fake_kind, URL, options={"delay": 0.15})
    run = start(client, "slow")
    assert run["status"] == "queued" and run["total_clauses"] == 6 and run["phases"] == ["hello", "echo"]
    running = wait_for_run(client, run["id"], {"running"})
    # Results show up while the run is still going, each committed as it is decided.
    wait_until(lambda: client.get(f"/api/v1/runs/{run['id']}").json()["decided_clauses"] >= 2)
    partial = client.get(f"/api/v1/runs/{run['id']}")
    assert partial.json()["status"] == "running" and running["started_at"]
    ended = wait_for_run(client, run["id"])
    assert (ended["status"], ended["outcome"]) == ("finished", "pass")
    assert ended["decided_clauses"] == 6 and ended["counts"] == {"pass": 5, "skip": 1}
    assert verdicts(client, run["id"]) == dict.fromkeys(ALL_DEFAULT, "pass") | {"fake.3.stops": "skip"}


def test_failing_clause_gives_outcome_fail_and_junit_failure(client: TestClient, fake_kind: str) -> None:
    make_target(client, "bad", fake_kind, URL, options={"fail": ["fake.2.orders"]})
    ended = wait_for_run(client, start(client, "bad")["id"])
    assert ended["outcome"] == "fail" and "fake.2.orders" in ended["message"]
    junit = ET.fromstring(client.get(f"/api/v1/runs/{ended['id']}/junit.xml").content)
    failed = [case.get("name") for case in junit.iter("testcase") if case.find("failure") is not None]
    assert failed == ["fake.2.orders"]
    assert junit.get("tests") == "6"
    # The failure says what the stored result says (its texts are read with the row).
    stored = next(r for r in client.get(f"/api/v1/runs/{ended['id']}/results").json() if r["verdict"] == "fail")
    failure = next(case.find("failure") for case in junit.iter("testcase") if case.find("failure") is not None)
    assert stored["actual"] and stored["actual"] in (failure.get("message") or "")


def test_expected_failures_and_strict_gate(client: TestClient, fake_kind: str) -> None:
    failing = ["fake.2.orders"]
    make_target(client, "known", fake_kind, URL, options={"fail": failing}, expected_failures=failing)
    assert wait_for_run(client, start(client, "known")["id"])["outcome"] == "pass"
    make_target(client, "slowish", fake_kind, URL, options={"fail": ["fake.2.fast"]})  # a SHOULD: warn
    assert wait_for_run(client, start(client, "slowish")["id"])["outcome"] == "pass"
    client.patch("/api/v1/targets/slowish", json={"gate": "strict"})
    assert wait_for_run(client, start(client, "slowish")["id"])["outcome"] == "fail"


def test_expected_failures_sent_with_the_run_add_to_the_targets(client: TestClient, fake_kind: str) -> None:
    failing = ["fake.1.greets", "fake.2.orders"]
    make_target(client, "known", fake_kind, URL, options={"fail": failing}, expected_failures=["fake.1.greets"])
    assert wait_for_run(client, start(client, "known")["id"])["outcome"] == "fail"
    # An alias names the clause it now maps to; the run stores current ids, the target's list included.
    run = start(client, "known", expected_failures=["fake.2.in-order"])
    assert run["expected_failures"] == ["fake.1.greets", "fake.2.orders"]
    ended = wait_for_run(client, run["id"])
    assert (ended["outcome"], ended["message"]) == ("pass", "")
    junit = client.get(f"/api/v1/runs/{run['id']}/junit.xml").text
    assert junit.count("expected failure") == 2
    # For that run only.
    assert client.get("/api/v1/targets/known").json()["expected_failures"] == ["fake.1.greets"]


def test_unknown_expected_failures_are_422_naming_them(client: TestClient, fake_kind: str) -> None:
    make_target(client, "known", fake_kind, URL)
    response = client.post(
        "/api/v1/targets/known/runs", json={"expected_failures": ["fake.2.orders", "no.such", "fake.9.gone"]}
    )
    assert response.status_code == 422
    assert {tuple(e["loc"]): e["msg"] for e in response.json()["detail"]} == {
        ("body", "expected_failures", 1): "'no.such' is not a clause of fake",
        ("body", "expected_failures", 2): "'fake.9.gone' is not a clause of fake",
    }
    assert client.get("/api/v1/runs?target=known").json() == []
    # A target's own list accepts an alias too.
    assert client.patch("/api/v1/targets/known", json={"expected_failures": ["fake.2.in-order"]}).status_code == 200


def test_phase_selection_and_option_overrides(client: TestClient, fake_kind: str) -> None:
    make_target(client, "sel", fake_kind, URL)
    run = start(client, "sel", phases=["echo", "stop"], options={"fail": ["fake.3.stops"]})
    assert run["phases"] == ["echo", "stop"] and run["options"]["fail"] == ["fake.3.stops"]
    wait_for_run(client, run["id"])
    got = verdicts(client, run["id"])
    assert got["fake.1.greets"] == "skip" and got["fake.2.echoes"] == "pass" and got["fake.3.stops"] == "fail"
    # The override was for that run only.
    assert client.get("/api/v1/targets/sel").json()["options"] == {}


def test_bad_run_requests_are_422_with_field_paths(client: TestClient, fake_kind: str) -> None:
    make_target(client, "sel", fake_kind, URL)
    response = client.post("/api/v1/targets/sel/runs", json={"phases": ["warp"], "options": {"delay": -1}})
    assert response.status_code == 422
    paths = {tuple(e["loc"]) for e in response.json()["detail"]}
    assert paths == {("body", "phases"), ("body", "options", "delay")}
    assert client.post("/api/v1/targets/nobody/runs", json={}).status_code == 404
    assert client.get("/api/v1/runs?target=sel").json() == []


def test_cancel_keeps_partial_results(client: TestClient, fake_kind: str) -> None:
    make_target(client, "long", fake_kind, URL, options={"delay": 0.3})
    run = start(client, "long")
    wait_until(lambda: client.get(f"/api/v1/runs/{run['id']}").json()["decided_clauses"] >= 1)
    cancelled = client.post(f"/api/v1/runs/{run['id']}/cancel")
    assert cancelled.status_code == 200
    assert cancelled.json()["status"] == "cancelled" and cancelled.json()["outcome"] is None
    kept = verdicts(client, run["id"])
    assert 1 <= len(kept) < 6 and set(kept.values()) == {"pass"}
    assert cancelled.json()["decided_clauses"] == len(kept)
    # Cancelling an ended run changes nothing.
    assert client.post(f"/api/v1/runs/{run['id']}/cancel").json()["status"] == "cancelled"


def test_cancel_a_queued_run(database_url: str, fake_kind: str) -> None:
    from app.main import create_app

    with TestClient(create_app(service_settings(database_url, max_concurrent_runs=1))) as client:
        make_target(client, "one", fake_kind, URL, options={"delay": 0.2})
        first, second = start(client, "one"), start(client, "one")
        wait_for_run(client, first["id"], {"running"})
        assert client.get(f"/api/v1/runs/{second['id']}").json()["status"] == "queued"
        assert client.post(f"/api/v1/runs/{second['id']}/cancel").json()["status"] == "cancelled"
        assert wait_for_run(client, first["id"])["status"] == "finished"
        assert client.get(f"/api/v1/runs/{second['id']}/results").json() == []
        listed = client.get("/api/v1/runs", params={"target": "one", "status": "cancelled"}).json()
        assert [r["id"] for r in listed] == [second["id"]]


def test_a_hung_phase_costs_its_deadline_and_is_an_error(client: TestClient, fake_kind: str) -> None:
    make_target(client, "hang", fake_kind, URL, options={"hang_in": "echo", "timeout": 0.1})
    ended = wait_for_run(client, start(client, "hang")["id"])
    assert ended["outcome"] == "error"
    got = verdicts(client, ended["id"])
    assert got["fake.1.greets"] == "pass"
    assert {got["fake.2.echoes"], got["fake.2.fast"], got["fake.2.orders"]} == {"error"}
    results = client.get(f"/api/v1/runs/{ended['id']}/results", params={"verdict": "error"}).json()
    assert "deadline" in results[0]["actual"]


def test_results_polling_and_transcripts(client: TestClient, fake_kind: str) -> None:
    make_target(client, "poll", fake_kind, URL)
    run_id = wait_for_run(client, start(client, "poll")["id"])["id"]
    results = client.get(f"/api/v1/runs/{run_id}/results").json()
    assert len(results) == 6
    later = client.get(f"/api/v1/runs/{run_id}/results", params={"after_id": results[2]["id"]}).json()
    assert later == results[3:]
    assert {r["phase"] for r in client.get(f"/api/v1/runs/{run_id}/results?phase=hello").json()} == {"hello"}
    number = results[0]["transcript_ids"][0]
    transcript = client.get(f"/api/v1/runs/{run_id}/transcripts/{number}").json()
    assert transcript["phase"] == "hello" and transcript["closed_by"] == "checker"
    assert [f["direction"] for f in transcript["frames"]] == ["sent", "received", "received", "closed"]
    assert client.get(f"/api/v1/runs/{run_id}/transcripts/99").status_code == 404
    assert client.get("/api/v1/runs/9999").status_code == 404


def test_diff_against_a_run_and_the_baseline(client: TestClient, fake_kind: str) -> None:
    make_target(client, "dif", fake_kind, URL)
    good = wait_for_run(client, start(client, "dif")["id"])
    assert client.get(f"/api/v1/runs/{good['id']}/diff").status_code == 404  # nothing passed before it
    bad = wait_for_run(client, start(client, "dif", options={"fail": ["fake.1.greets"]})["id"])
    for against in (str(good["id"]), "baseline", "previous"):
        diff = client.get(f"/api/v1/runs/{bad['id']}/diff", params={"against": against})
        assert diff.status_code == 200, diff.text
        assert [e["clause_id"] for e in diff.json()["newly_failing"]] == ["fake.1.greets"]
    assert client.get(f"/api/v1/runs/{bad['id']}/diff", params={"against": "x"}).status_code == 422
    history = client.get("/api/v1/targets/dif/history").json()
    assert history  # the pages colleague's shape; here only that it is served
    assert client.get("/api/v1/targets/nobody/history").status_code == 404


def test_suites_health_metrics_and_badge(client: TestClient, fake_kind: str) -> None:
    suites = {s["kind"]: s for s in client.get("/api/v1/suites").json()}
    assert "delay" in suites["fake"]["options_schema"]["properties"]
    assert [p["name"] for p in suites["fake"]["phases"]] == ["hello", "echo", "stop"]
    assert client.get("/healthz").json()["status"] == "ok"

    make_target(client, "badged", fake_kind, URL)
    assert ">no runs<" in client.get("/badge/badged.svg").text
    wait_for_run(client, start(client, "badged")["id"])
    badge = client.get("/badge/badged.svg")
    assert badge.headers["content-type"].startswith("image/svg+xml") and ">pass<" in badge.text
    assert client.get("/badge/nobody.svg").status_code == 404

    metrics = client.get("/metrics").text
    assert 'rlconform_runs{status="finished"} 1' in metrics
    assert 'rlconform_clause_verdicts_total{verdict="pass"} 5' in metrics
    assert "rlconform_run_duration_seconds_count 1" in metrics
    assert "/api/v1/targets/{name}/runs" in client.get("/openapi.json").json()["paths"]


def test_retention_prunes_the_oldest_runs(database_url: str, fake_kind: str) -> None:
    from app.main import create_app

    with TestClient(create_app(service_settings(database_url, retention_runs=2))) as client:
        make_target(client, "kept", fake_kind, URL)
        ids = [wait_for_run(client, start(client, "kept")["id"])["id"] for _ in range(3)]
        assert [r["id"] for r in client.get("/api/v1/runs?target=kept").json()] == ids[:0:-1]
        assert client.get(f"/api/v1/runs/{ids[0]}/results").status_code == 404


def test_deleting_a_target_cancels_and_removes_its_runs(client: TestClient, fake_kind: str) -> None:
    make_target(client, "gone", fake_kind, URL, options={"delay": 0.5})
    run = start(client, "gone")
    wait_for_run(client, run["id"], {"running"})
    assert client.delete("/api/v1/targets/gone").status_code == 204
    assert client.get(f"/api/v1/runs/{run['id']}").status_code == 404
    assert client.get("/api/v1/runs").json() == []


def test_a_run_request_names_only_its_own_fields(client: TestClient, fake_kind: str) -> None:
    make_target(client, "strict-body", fake_kind, URL)
    for body in ({"trigger": "schedule"}, {"phase": ["quick"]}):
        response = client.post("/api/v1/targets/strict-body/runs", json=body)
        assert response.status_code == 422, body
    assert client.post("/api/v1/targets/strict-body/runs", json={"trigger": "ci"}).json()["trigger"] == "ci"

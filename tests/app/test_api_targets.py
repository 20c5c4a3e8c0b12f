"""Targets through the REST API: CRUD, validation with field paths, tokens, secrets, network policy."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlmodel import Session, select

from app.main import create_app
from app.models import Target
from app.settings import Settings
from tests.app.helpers import make_target, service_settings, wait_for_run

URL = "ws://127.0.0.1:9"


@pytest.fixture
def settings(database_url: str) -> Settings:
    return service_settings(database_url)


def errors_by_path(response) -> dict[tuple, str]:
    assert response.status_code == 422, response.text
    return {tuple(error["loc"]): error["msg"] for error in response.json()["detail"]}


def test_create_read_list_update_delete(client: TestClient, fake_kind: str) -> None:
    created = make_target(client, "alpha", fake_kind, URL, description="first", options={"delay": 0.01})
    assert created["options"] == {"delay": 0.01}
    assert client.get("/api/v1/targets/alpha").json()["description"] == "first"
    make_target(client, "beta", fake_kind, URL)
    assert [t["name"] for t in client.get("/api/v1/targets").json()] == ["alpha", "beta"]

    patched = client.patch("/api/v1/targets/alpha", json={"url": "ws://127.0.0.1:10", "gate": "strict"})
    assert patched.status_code == 200, patched.text
    assert (patched.json()["url"], patched.json()["gate"]) == ("ws://127.0.0.1:10", "strict")
    assert patched.json()["options"] == {"delay": 0.01}  # untouched fields stay

    assert client.delete("/api/v1/targets/alpha").status_code == 204
    assert client.get("/api/v1/targets/alpha").status_code == 404
    assert client.delete("/api/v1/targets/alpha").status_code == 404


def test_invalid_input_is_422_with_field_paths(client: TestClient, fake_kind: str) -> None:
    errors = errors_by_path(
        client.post(
            "/api/v1/targets",
            json={
                "name": "gamma",
                "kind": fake_kind,
                "url": URL,
                "gate": "lenient",
                "options": {"timeout": -1, "colour": "blue"},
                "expected_failures": ["fake.2.echoes", "no.such.clause"],
            },
        )
    )
    assert set(errors) == {
        ("body", "gate"),
        ("body", "options", "timeout"),
        ("body", "options", "colour"),
        ("body", "expected_failures", 1),
    }
    assert "greater than 0" in errors[("body", "options", "timeout")]
    assert client.get("/api/v1/targets/gamma").status_code == 404


def test_url_scheme_is_checked_against_the_kind(client: TestClient, fake_kind: str) -> None:
    errors = errors_by_path(client.post("/api/v1/targets", json={"name": "d", "kind": fake_kind, "url": "http://h:1"}))
    assert "ws://" in errors[("body", "url")]
    errors = errors_by_path(client.post("/api/v1/targets", json={"name": "d", "kind": "nope", "url": URL}))
    assert "unknown kind" in errors[("body", "kind")]


def test_names_are_unique_and_well_formed(client: TestClient, fake_kind: str) -> None:
    make_target(client, "delta", fake_kind, URL)
    errors = errors_by_path(client.post("/api/v1/targets", json={"name": "delta", "kind": fake_kind, "url": URL}))
    assert "already exists" in errors[("body", "name")]
    errors = errors_by_path(client.post("/api/v1/targets", json={"name": "no spaces", "kind": fake_kind, "url": URL}))
    assert ("body", "name") in errors
    errors = errors_by_path(client.post("/api/v1/targets", json={"name": "new", "kind": fake_kind, "url": URL}))
    assert "reserved" in errors[("body", "name")]


def test_patch_is_validated_like_create(client: TestClient, fake_kind: str) -> None:
    make_target(client, "eps", fake_kind, URL)
    errors = errors_by_path(client.patch("/api/v1/targets/eps", json={"name": "renamed"}))
    assert ("body", "name") in errors  # names are stable ids: not silently ignored, refused
    assert client.get("/api/v1/targets/eps").status_code == 200
    errors = errors_by_path(client.patch("/api/v1/targets/eps", json={"options": {"delay": "slow"}}))
    assert ("body", "options", "delay") in errors
    errors = errors_by_path(client.patch("/api/v1/targets/eps", json={"url": "tcp://x:1"}))
    assert ("body", "url") in errors
    assert client.get("/api/v1/targets/eps").json()["url"] == URL


def test_secrets_are_redacted_everywhere_but_still_used(client: TestClient, fake_kind: str) -> None:
    secret = "hunter2-secret"
    target = make_target(client, "zeta", fake_kind, URL, options={"token": secret})
    assert target["options"]["token"] == "**********"
    # Sending the mask back keeps the stored secret.
    client.patch("/api/v1/targets/zeta", json={"options": {"token": "**********", "delay": 0.0}})
    with Session(client.app.state.engine) as session:
        stored = session.exec(select(Target).where(Target.name == "zeta")).one()
        assert stored.options["token"] == secret

    run = client.post("/api/v1/targets/zeta/runs", json={}).json()
    assert run["options"]["token"] == "**********"
    wait_for_run(client, run["id"])
    exported = client.get(f"/api/v1/runs/{run['id']}/export.json")
    assert exported.status_code == 200
    assert secret not in exported.text
    # The fake suite echoes the token into its transcript: proof the run had it, scrubbed on the way in.
    assert "hello token=**********" in exported.text
    assert secret not in client.get("/api/v1/targets/zeta").text


def test_writes_need_the_token_when_one_is_set(database_url: str, fake_kind: str) -> None:
    settings = service_settings(database_url, api_token="t0ken-t0ken-t0ken")
    with TestClient(create_app(settings)) as client:
        body = {"name": "eta", "kind": fake_kind, "url": URL}
        assert client.post("/api/v1/targets", json=body).status_code == 401
        bad = {"Authorization": "Bearer wrong"}
        assert client.post("/api/v1/targets", json=body, headers=bad).status_code == 401
        good = {"Authorization": "Bearer t0ken-t0ken-t0ken"}
        assert client.post("/api/v1/targets", json=body, headers=good).status_code == 201
        assert client.get("/api/v1/targets/eta").status_code == 200  # reads stay open
        assert client.post("/api/v1/targets/eta/runs", json={}).status_code == 401
        assert client.patch("/api/v1/targets/eta", json={"description": "x"}).status_code == 401
        assert client.delete("/api/v1/targets/eta").status_code == 401
        run = client.post("/api/v1/targets/eta/runs", json={}, headers=good)
        assert run.status_code == 202
        assert client.post(f"/api/v1/runs/{run.json()['id']}/cancel").status_code == 401
        assert client.delete("/api/v1/targets/eta", headers=good).status_code == 204


def test_targets_outside_the_allowed_networks_are_refused(database_url: str, fake_kind: str) -> None:
    settings = service_settings(database_url, allowed_networks=["10.0.0.0/8", "localhost"])
    with TestClient(create_app(settings)) as client:
        errors = errors_by_path(
            client.post("/api/v1/targets", json={"name": "public", "kind": fake_kind, "url": "ws://192.0.2.1:80"})
        )
        assert "outside the allowed networks" in errors[("body", "url")]
        make_target(client, "inside", fake_kind, "ws://10.1.2.3:9000")
        make_target(client, "by-name", fake_kind, "ws://localhost:9000")


def test_a_run_is_refused_when_its_target_left_the_allowed_networks(database_url: str, fake_kind: str) -> None:
    with TestClient(create_app(service_settings(database_url))) as client:
        make_target(client, "loop", fake_kind, URL)
    # The same database, now served with a policy that excludes loopback.
    with TestClient(create_app(service_settings(database_url, allowed_networks=["10.0.0.0/8"]))) as client:
        run = client.post("/api/v1/targets/loop/runs", json={}).json()
        ended = wait_for_run(client, run["id"])
        assert (ended["status"], ended["outcome"]) == ("finished", "error")
        assert "network policy" in ended["message"] and "127.0.0.1" in ended["message"]
        assert client.get(f"/api/v1/runs/{run['id']}/results").json() == []


def test_a_deleted_targets_run_ids_are_never_given_to_new_runs(client: TestClient, fake_kind: str) -> None:
    """Links printed by CI and sent by webhooks name one run forever (SQLite once reused the largest id)."""
    make_target(client, "kept", fake_kind, URL)
    make_target(client, "gone", fake_kind, URL)
    first = client.post("/api/v1/targets/kept/runs", json={}).json()["id"]
    newest = [client.post("/api/v1/targets/gone/runs", json={}).json()["id"] for _ in range(2)]
    for run_id in (first, *newest):
        wait_for_run(client, run_id)
    assert client.delete("/api/v1/targets/gone").status_code == 204
    assert client.get(f"/api/v1/runs/{newest[-1]}").status_code == 404
    again = client.post("/api/v1/targets/kept/runs", json={}).json()["id"]
    assert again > max(newest), (again, newest)

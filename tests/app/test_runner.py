"""Runner, recovery, migrations, demo and network policy, inside one process."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from fastapi.testclient import TestClient
from sqlmodel import Session, SQLModel

from app import crud
from app.db import make_engine, ours, upgrade_database
from app.demo import demo_name
from app.main import create_app
from app.models import ClauseResultRow, Target, TargetCreate
from app.models_clause import message_id
from app.netpolicy import NetworkRefused, check_host
from checks.registry import demo_kinds
from tests.app.helpers import make_target, service_settings, wait_for_run, wait_until

URL = "ws://127.0.0.1:9"


def seed_target(url: str, **fields) -> Target:
    upgrade_database(url)
    with Session(make_engine(url)) as session:
        return crud.create_target(
            session, TargetCreate(name="seeded", kind="fake", url=URL, **fields), allowed_networks=()
        )


def test_migrations_build_exactly_the_models_and_rerun_harmlessly(database_url: str) -> None:
    upgrade_database(database_url)
    upgrade_database(database_url)
    with make_engine(database_url).connect() as connection:
        context = MigrationContext.configure(connection, opts={"include_name": ours})  # procrastinate's are not ours
        assert compare_metadata(context, SQLModel.metadata) == []


def test_restart_marks_running_runs_interrupted_and_keeps_their_clauses(database_url: str, fake_kind: str) -> None:
    target = seed_target(database_url)
    with Session(make_engine(database_url)) as session:
        run = crud.enqueue_run(session, target)
        run.status = "running"
        session.add(run)
        texts = message_id(session, "", "")
        decided = ClauseResultRow(
            run_id=run.id, phase="hello", clause_id="fake.1.greets", level="MUST", verdict="pass", message_id=texts
        )
        session.add(decided)
        session.commit()
        run_id = run.id
        queued_id = crud.enqueue_run(session, target).id
    with TestClient(create_app(service_settings(database_url))) as client:
        interrupted = client.get(f"/api/v1/runs/{run_id}").json()
        assert interrupted["status"] == "interrupted" and "stopped" in interrupted["message"]
        assert [r["clause_id"] for r in client.get(f"/api/v1/runs/{run_id}/results").json()] == ["fake.1.greets"]
        # A run still queued when the old process died is picked up.
        assert wait_for_run(client, queued_id)["outcome"] == "pass"


def test_shutdown_interrupts_running_runs_and_keeps_what_they_decided(settings, fake_kind: str) -> None:
    with TestClient(create_app(settings)) as client:
        make_target(client, "long", fake_kind, URL, options={"delay": 0.3})
        run_id = client.post("/api/v1/targets/long/runs", json={}).json()["id"]
        wait_for_run(client, run_id, {"running"})
        wait_until(lambda: client.get(f"/api/v1/runs/{run_id}").json()["decided_clauses"] >= 1)
    with TestClient(create_app(settings)) as client:
        run = client.get(f"/api/v1/runs/{run_id}").json()
        assert run["status"] == "interrupted"
        assert run["decided_clauses"] >= 1
        assert len(client.get(f"/api/v1/runs/{run_id}/results").json()) == run["decided_clauses"]


def test_demo_target_is_registered_then_repointed(tmp_path: Path) -> None:
    pytest.importorskip("checks.plugrl.reference")
    settings = service_settings(f"sqlite:///{tmp_path / 'demo.db'}", demo=True)
    with TestClient(create_app(settings)) as client:
        first = client.get("/api/v1/targets/demo").json()
        assert first["kind"] == "plugrl-server"
        started = client.post("/api/v1/targets/demo/runs", json={"options": {"patience": 0.2}}).json()
        run = wait_for_run(client, started["id"], timeout=60)
        assert (run["status"], run["outcome"]) == ("finished", "pass"), run
    with TestClient(create_app(settings)) as client:
        targets = {t["name"]: t for t in client.get("/api/v1/targets").json()}
        assert set(targets) == {demo_name(kind) for kind in demo_kinds()}
        for name, server in client.app.state.demo.items():
            assert targets[name]["url"] == server.url


def test_demo_runs_whatever_the_network_policy_allows(tmp_path: Path) -> None:
    """The README's own policy example: the demo servers are the service's own, on loopback."""
    pytest.importorskip("checks.plugrl.reference")
    settings = service_settings(f"sqlite:///{tmp_path / 'demo.db'}", demo=True, allowed_networks=["10.0.0.0/8"])
    with TestClient(create_app(settings)) as client:
        names = {target["name"] for target in client.get("/api/v1/targets").json()}
        assert names == {demo_name(kind) for kind in demo_kinds()}
        started = client.post("/api/v1/targets/demo/runs", json={"options": {"patience": 0.2}}).json()
        run = wait_for_run(client, started["id"], timeout=60)
        assert (run["status"], run["outcome"]) == ("finished", "pass"), run
        # Any other loopback address stays refused.
        other = {"name": "mine", "kind": "plugrl-server", "url": "ws://127.0.0.1:9"}
        assert "outside the allowed networks" in client.post("/api/v1/targets", json=other).text


def test_demo_never_clobbers_a_user_target_named_demo(tmp_path: Path, fake_kind: str) -> None:
    url = f"sqlite:///{tmp_path / 'mine.db'}"
    upgrade_database(url)
    with Session(make_engine(url)) as session:
        crud.create_target(session, TargetCreate(name="demo", kind="fake", url=URL), allowed_networks=())
    with TestClient(create_app(service_settings(url, demo=True))) as client:
        assert client.app.state.demo is None
        assert client.get("/api/v1/targets/demo").json()["url"] == URL


def test_no_demo_on_a_database_with_targets(tmp_path: Path, fake_kind: str) -> None:
    url = f"sqlite:///{tmp_path / 'busy.db'}"
    seed_target(url)
    with TestClient(create_app(service_settings(url, demo=True))) as client:
        assert client.get("/api/v1/targets/demo").status_code == 404


@pytest.mark.parametrize(
    ("host", "allowed", "ok"),
    [
        ("127.0.0.1", [], True),
        ("127.0.0.1", ["127.0.0.0/8"], True),
        ("169.254.169.254", ["10.0.0.0/8", "127.0.0.0/8"], False),
        ("::ffff:10.1.1.1", ["10.0.0.0/8"], True),
        ("::1", ["127.0.0.0/8"], False),
        ("trainer.internal", ["*.internal"], True),
        ("internal", ["*.internal"], False),
        ("localhost", ["127.0.0.0/8", "::1/128"], True),
        ("localhost", ["10.0.0.0/8"], False),
    ],
)
def test_network_policy(host: str, allowed: list[str], ok: bool) -> None:
    if ok:
        check_host(host, 80, allowed)
    else:
        with pytest.raises(NetworkRefused):
            check_host(host, 80, allowed)


def test_reference_server_target_passes(client: TestClient, reference_target) -> None:
    target = reference_target("ref")
    run = client.post(f"/api/v1/targets/{target['name']}/runs", json={}).json()
    ended = wait_for_run(client, run["id"], timeout=60)
    assert (ended["status"], ended["outcome"]) == ("finished", "pass"), ended
    results = client.get(f"/api/v1/runs/{run['id']}/results").json()
    assert results and not [r for r in results if r["verdict"] in ("fail", "error")]
    assert client.get(f"/api/v1/runs/{run['id']}/transcripts/1").status_code == 200

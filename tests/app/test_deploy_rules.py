"""The rules of "can I deploy?" on stored runs written directly: each reason of the closed set, which runs
decide, who is a counterpart, and a version given by CI winning over one read from the wire in either order."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.can_i_deploy import counterpart_kinds
from app.cli import deploy as deploy_cli
from app.deployments import give_version, record_wire_identity
from app.models import ClauseResultRow, ParityRun, Run, RunStatus, Target
from app.models_clause import message_id
from app.models_deploy import RunIdentity, VersionGiven
from app.settings import Settings
from checks.core import HARNESS_VERSION
from checks.identity import Identity
from checks.registry import find_suite
from tests.app.helpers import make_target, service_settings

SPEC = find_suite("plugrl-server").spec_version  # type: ignore[union-attr]


def add_run(
    where: TestClient | Engine,
    target: str,
    version: str | None,
    outcome: str = "pass",
    *,
    spec: str = SPEC,
    **fields: Any,
) -> int:
    """A finished run of `target` naming `version` (None: no identity); a failing one fails `plugrl.5.3.time-major`.

    `where` is the service's TestClient, or the engine of a database a live service uses."""
    engine = where if isinstance(where, Engine) else where.app.state.engine  # type: ignore[attr-defined]
    with Session(engine) as session:
        stored = session.exec(select(Target).where(Target.name == target)).one()
        run = Run(
            target_id=stored.id or 0,
            kind=stored.kind,
            url=stored.url,
            status=RunStatus.FINISHED,
            outcome=outcome,
            harness_version=fields.pop("harness", HARNESS_VERSION),
            spec_version=spec,
            **fields,
        )
        session.add(run)
        session.flush()
        if version is not None:
            session.add(RunIdentity(run_id=run.id or 0, version=version, source="given"))
        if outcome == "fail":
            message = message_id(session, "time-major actions", "env-major actions")
            session.add(
                ClauseResultRow(
                    run_id=run.id or 0,
                    phase="exchange",
                    clause_id="plugrl.5.3.time-major",
                    level="MUST",
                    verdict="fail",
                    message_id=message,
                )
            )
        session.commit()
        return run.id or 0


def ask(client: TestClient, target: str, version: str, to: str = "prod") -> dict[str, Any]:
    response = client.get("/api/v1/can-i-deploy", params={"target": target, "version": version, "to": to})
    assert response.status_code == 200, response.text
    return response.json()


def deploy(client: TestClient, target: str, version: str, to: str = "prod", released: bool = False) -> None:
    body = {"target": target, "version": version, "environment": to, "released": released}
    assert client.post("/api/v1/deployments", json=body).status_code == 201


@pytest.fixture
def settings(database_url: str) -> Settings:
    """SQLite, and PostgreSQL when RLCONFORM_TEST_POSTGRES_URL is set."""
    return service_settings(database_url)


@pytest.fixture
def pair(client: TestClient) -> TestClient:
    make_target(client, "server", "plugrl-server", "ws://127.0.0.1:9")
    make_target(client, "trainer", "plugrl-client", "")
    return client


def test_the_latest_deciding_run_at_the_version_decides(pair: TestClient) -> None:
    add_run(pair, "server", "v1", "fail")
    passing = add_run(pair, "server", "v1", "pass")
    add_run(pair, "server", "v1", "error")  # could not decide: passed over
    add_run(pair, "server", "v2", "fail")  # another version
    answer = ask(pair, "server", "v1")
    assert (answer["answer"], answer["rows"][0]["reason"], answer["rows"][0]["run_id"]) == ("yes", "passed", passing)
    assert answer["notes"] == ["nothing is recorded as deployed in prod: only server itself is checked"]
    failing = ask(pair, "server", "v2")["rows"][0]
    assert (failing["answer"], failing["reason"], failing["failing"]) == ("no", "failed", ["plugrl.5.3.time-major"])


def test_reasons_never_checked_version_unknown_and_older_spec(pair: TestClient) -> None:
    add_run(pair, "trainer", None)
    assert ask(pair, "trainer", "c1")["rows"][0]["reason"] == "version-unknown"
    add_run(pair, "trainer", "c0")
    row = ask(pair, "trainer", "c1")["rows"][0]
    assert (row["answer"], row["reason"]) == ("unknown", "never-checked")
    add_run(pair, "server", "v1", spec="0")
    row = ask(pair, "server", "v1")["rows"][0]
    assert (row["answer"], row["reason"]) == ("unknown", "older-spec") and "spec 0" in row["detail"]
    add_run(pair, "server", "v2", harness="0.0.1")
    assert ask(pair, "server", "v2")["rows"][0]["reason"] == "older-spec"


def test_a_parity_run_does_not_decide(pair: TestClient) -> None:
    parity = add_run(pair, "server", "v1", "pass")
    with Session(pair.app.state.engine) as session:  # type: ignore[attr-defined]
        session.add(ParityRun(run_id=parity, second_name="other"))
        session.commit()
    assert ask(pair, "server", "v1")["rows"][0]["reason"] == "never-checked"


def test_counterparts_are_the_other_side_of_the_protocol_current_and_released(pair: TestClient) -> None:
    make_target(pair, "other-server", "plugrl-server", "ws://127.0.0.1:8")
    make_target(pair, "env", "openenv", "http://127.0.0.1:7")
    add_run(pair, "server", "v1")
    add_run(pair, "trainer", "c1")
    for target, version in (("trainer", "c1"), ("other-server", "x"), ("env", "e1")):
        deploy(pair, target, version)
    deploy(pair, "trainer", "c0", released=True)  # an older client still running beside: never checked
    answer = ask(pair, "server", "v1")
    rows = [(r["target"], r["version"], r["released"], r["reason"]) for r in answer["rows"]]
    assert rows == [
        ("server", "v1", False, "passed"),
        ("trainer", "c1", False, "passed"),
        ("trainer", "c0", True, "never-checked"),
    ]
    assert answer["answer"] == "unknown"
    assert [r["target"] for r in ask(pair, "env", "e1")["rows"]] == ["env"]  # no OpenEnv client kind


def test_a_tap_of_the_protocol_is_a_counterpart(pair: TestClient) -> None:
    tap = {"name": "watch", "kind": "plugrl", "upstream": "ws://127.0.0.1:9"}
    assert pair.post("/api/v1/taps", json=tap).status_code == 201
    add_run(pair, "server", "v1")
    add_run(pair, "watch", "w1", "fail")
    deploy(pair, "watch", "w1")
    answer = ask(pair, "server", "v1")
    assert answer["answer"] == "no" and answer["rows"][1]["target"] == "watch"


def test_counterpart_kinds_come_from_the_kind_records() -> None:
    assert counterpart_kinds("plugrl-server") == {"plugrl-client"}
    assert counterpart_kinds("plugrl-client") == {"plugrl-server"}
    assert counterpart_kinds("rllink") == {"rllink-client"}
    assert counterpart_kinds("rllink-client") == {"rllink"}
    assert counterpart_kinds("openenv") == set()


@pytest.mark.parametrize("given_first", [True, False])
def test_a_version_given_by_ci_wins_over_the_wire_in_either_order(client: TestClient, given_first: bool) -> None:
    make_target(client, "env", "openenv", "http://127.0.0.1:7")
    run_id = add_run(client, "env", None)
    engine = client.app.state.engine  # type: ignore[attr-defined]
    seen = Identity("quiz", "1.0.0", "GET /metadata: name 'quiz', version '1.0.0'")
    with Session(engine) as session:
        if given_first:
            give_version(session, run_id, VersionGiven(version="abc123"))
            record_wire_identity(engine, run_id, seen)
        else:
            record_wire_identity(engine, run_id, seen)
            assert session.get(RunIdentity, run_id).version == "1.0.0"  # type: ignore[union-attr]
            give_version(session, run_id, VersionGiven(version="abc123"))
    identity = client.get(f"/api/v1/runs/{run_id}/identity").json()
    assert (identity["implementation"], identity["version"], identity["source"]) == ("quiz", "abc123", "given")
    page = client.get(f"/runs/{run_id}").text
    assert '<strong>quiz</strong> version <span class="mono">abc123</span>, given by CI' in page


def test_retry_while_unknown_asks_again_until_the_answer_is_known(monkeypatch: pytest.MonkeyPatch) -> None:
    answers = [{"answer": "unknown", "exit_code": 2}] * 2 + [{"answer": "yes", "exit_code": 0}]
    asked: list[int] = []

    def fake_ask(http: Any, args: Any) -> dict[str, Any]:
        asked.append(1)
        return {"target": "t", "version": "v", "environment": "e", "rows": [], **answers[len(asked) - 1]}

    monkeypatch.setattr(deploy_cli, "_ask", fake_ask)
    monkeypatch.setattr(deploy_cli.time, "sleep", lambda seconds: None)
    argv = ["can-i-deploy", "t", "--version", "v", "--to", "e", "--server", "http://127.0.0.1:9"]
    from app.cli import main

    assert main([*argv, "--retry-while-unknown", "3600", "--retry-interval", "1"]) == 0 and len(asked) == 3
    asked.clear()
    assert main(argv) == 2 and len(asked) == 1  # no retries asked for: the first answer stands


def test_what_the_wire_said_is_stored_and_shown_whatever_its_characters(client: TestClient) -> None:
    make_target(client, "env", "openenv", "http://127.0.0.1:7")
    run_id = add_run(client, "env", None)
    hostile = "<b>\ud800\x00</b>"
    record_wire_identity(client.app.state.engine, run_id, Identity(hostile, "1\x00", f"name {hostile!r}"))  # type: ignore[attr-defined]
    identity = client.get(f"/api/v1/runs/{run_id}/identity").json()
    assert identity["implementation"].startswith("<b>") and "\x00" not in identity["version"]
    page = client.get(f"/runs/{run_id}")
    assert page.status_code == 200 and "&lt;b&gt;" in page.text and "<b>\\" not in page.text

"""Can I deploy, end to end over HTTP: a PlugRL server target checked at two versions (the reference server as a
conforming v1, a zoo server that forgets the time-major transpose as a broken v2) and a PlugRL client target
deployed in an environment. `rlconform ci --version`, `record-deployment` and `can-i-deploy` talk to a live
service; the answer is yes (exit 0) for the conforming pair, no naming the failed clause (exit 1) for the
broken version, unknown (exit 2) for a version never checked."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from app.cli import main
from app.main import create_app
from checks.plugrl_client.reference import main as reference_client
from tests.app.conftest import QUICK_PLUGRL, BackgroundLoop
from tests.app.helpers import make_target, service_settings, wait_for_run, wait_until
from tests.app.http_stub import QuietHandler, serving
from tests.zoo.plugrl_server.faults_content import EnvMajor

CLIENT_OPTIONS = {"steps": 6, "reconnect_window": 0.4, "timeout": 3.0, "connect_deadline": 20.0}
BROKEN_CLAUSE = "plugrl.5.3.time-major"


@pytest.fixture
def broken_url(background_loop: BackgroundLoop) -> Iterator[str]:
    server = background_loop.run(EnvMajor().start())
    try:
        yield server.url
    finally:
        background_loop.run(server.close())


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def matrix(out: str) -> list[list[str]]:
    """The printed matrix's lines, split into cells (the header first)."""
    return [line.split() for line in out.splitlines() if line.startswith("  ") and not line.startswith("   ")]


def check_client(http: httpx.Client, name: str, version: str) -> int:
    """A run of the client target graded against the reference PlugRL client, its version given through the API."""
    run_id = int(http.post(f"/api/v1/targets/{name}/runs", json={"phases": ["basic"]}).json()["id"])
    given = http.put(f"/api/v1/runs/{run_id}/version", json={"version": version})
    assert given.status_code == 200, given.text
    assert given.json()["source"] == "given" and given.json()["version"] == version
    found: dict[str, Any] = {}

    def announced() -> bool:
        found.update(http.get(f"/api/v1/runs/{run_id}").json().get("announcement") or {})
        return bool(found.get("url"))

    wait_until(announced, timeout=15, what="the client run listening")
    thread = threading.Thread(target=reference_client, args=([found["url"], "--restart-delay", "0.5"],), daemon=True)
    thread.start()
    run = wait_for_run(http, run_id, timeout=90)
    thread.join(timeout=30)
    assert run["outcome"] == "pass", run
    return run_id


def test_can_i_deploy_answers_yes_no_and_unknown_from_the_runs_of_each_version(
    live_service: str,
    reference_server: Callable[..., str],
    broken_url: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = ("--server", live_service)
    http = httpx.Client(base_url=live_service, timeout=30)
    make_target(http, "policy", "plugrl-server", reference_server(), options=QUICK_PLUGRL)
    make_target(http, "trainer", "plugrl-client", "", options=CLIENT_OPTIONS)

    code, out, _ = cli(capsys, "ci", *server, "--target", "policy", "--phase", "exchange", "--version", "v1")
    assert code == 0, out
    assert http.patch("/api/v1/targets/policy", json={"url": broken_url}).status_code == 200
    code, out, _ = cli(capsys, "ci", *server, "--target", "policy", "--phase", "exchange", "--version", "v2")
    assert code == 1 and BROKEN_CLAUSE in out, out
    client_run = check_client(http, "trainer", "c1")
    assert cli(capsys, "record-deployment", "trainer", "--version", "c1", "--env", "staging", *server)[0] == 0

    code, out, _ = cli(capsys, "can-i-deploy", "policy", "--version", "v1", "--to", "staging", *server)
    assert code == 0, out
    assert out.startswith("can I deploy policy v1 to staging? yes")
    assert ["trainer", "plugrl-client", "c1", "yes", "passed", f"#{client_run}"] in matrix(out)

    code, out, _ = cli(capsys, "can-i-deploy", "policy", "--version", "v2", "--to", "staging", *server)
    assert code == 1 and "? no" in out.splitlines()[0], out
    assert f"failed: {BROKEN_CLAUSE}" in out

    code, out, _ = cli(capsys, "can-i-deploy", "policy", "--version", "v3", "--to", "staging", *server)
    assert code == 2 and "? unknown" in out.splitlines()[0] and "never-checked" in out, out

    # The other way round: the client may not join an environment running the broken server.
    assert cli(capsys, "record-deployment", "policy", "--version", "v2", "--env", "prod", *server)[0] == 0
    code, out, _ = cli(capsys, "can-i-deploy", "trainer", "--version", "c1", "--to", "prod", *server)
    assert code == 1 and ["policy", "plugrl-server", "v2", "no", "failed"] == matrix(out)[2][:5], out
    assert BROKEN_CLAUSE in out

    answer = http.get("/api/v1/can-i-deploy", params={"target": "policy", "version": "v2", "to": "staging"}).json()
    assert (answer["answer"], answer["exit_code"]) == ("no", 1)
    candidate, counterpart = answer["rows"]
    assert (candidate["role"], candidate["reason"], candidate["failing"]) == ("candidate", "failed", [BROKEN_CLAUSE])
    assert (counterpart["target"], counterpart["version"], counterpart["reason"]) == ("trainer", "c1", "passed")
    environments = {e["name"]: e["deployments"] for e in http.get("/api/v1/environments").json()}
    assert [(d["target"], d["version"]) for d in environments["staging"]] == [("trainer", "c1")]
    assert [(d["target"], d["version"]) for d in environments["prod"]] == [("policy", "v2")]

    page = http.get("/can-i-deploy", params={"target": "policy", "version": "v2", "to": "staging"})
    assert page.status_code == 200 and 'class="badge o-fail"' in page.text and BROKEN_CLAUSE in page.text
    run_page = http.get(f"/runs/{client_run}").text
    assert 'id="run-identity"' in run_page and '<span class="mono">c1</span>, given by CI' in run_page
    http.close()


def test_record_deployment_keeps_one_current_version_beside_released_ones(client: Any) -> None:
    make_target(client, "env-server", "openenv", "http://127.0.0.1:9")
    for version, released in (("1.0", False), ("1.1", True), ("2.0", False)):
        body = {"target": "env-server", "version": version, "environment": "prod", "released": released}
        response = client.post("/api/v1/deployments", json=body)
        assert response.status_code == 201, response.text
        assert response.json() | {"recorded_at": None} == {**body, "kind": "openenv", "recorded_at": None} | {
            "target": "env-server"
        }
    (prod,) = client.get("/api/v1/environments").json()
    assert [(d["version"], d["released"]) for d in prod["deployments"]] == [("2.0", False), ("1.1", True)]
    compatibility = client.get("/api/v1/compatibility").json()
    assert {(row["version"], row["drift"]) for row in compatibility} == {("2.0", True), ("1.1", True)}
    page = client.get("/compatibility")
    assert page.status_code == 200 and "drift" in page.text and "env-server" in page.text


@pytest.mark.parametrize(
    ("query", "status", "words"),
    [
        ({"target": "nobody", "version": "v1", "to": "prod"}, 404, "no target named 'nobody'"),
        ({"target": "env-server", "version": "", "to": "prod"}, 422, "version"),
        ({"target": "env-server", "version": "v 1", "to": "prod"}, 422, "version"),
        ({"target": "env-server", "version": "v1"}, 422, "to"),
    ],
)
def test_bad_questions_get_clear_errors(client: Any, query: dict[str, str], status: int, words: str) -> None:
    make_target(client, "env-server", "openenv", "http://127.0.0.1:9")
    response = client.get("/api/v1/can-i-deploy", params=query)
    assert response.status_code == status and words in response.text, response.text
    page = client.get("/can-i-deploy", params=query)
    assert page.status_code == status, page.text
    assert 'role="alert"' in page.text and 'id="can-i-deploy-form"' in page.text


def test_bad_deployments_and_versions_are_refused(client: Any) -> None:
    make_target(client, "env-server", "openenv", "http://127.0.0.1:9")
    unknown = client.post("/api/v1/deployments", json={"target": "nobody", "version": "1", "environment": "prod"})
    assert unknown.status_code == 404 and "no target named 'nobody'" in unknown.text
    for version in ("", "1\n", "a/b"):
        body = {"target": "env-server", "version": version, "environment": "prod"}
        assert client.post("/api/v1/deployments", json=body).status_code == 422
    assert client.put("/api/v1/runs/999/version", json={"version": "1"}).status_code == 404
    assert client.get("/api/v1/runs/999/identity").status_code == 404


def test_a_parity_run_takes_no_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "ci", "--server", "http://127.0.0.1:9", "--parity", "a", "b", "--version", "v1")
    assert code == 2 and "--parity takes no" in err and "--version" in err


@contextlib.contextmanager
def not_a_service() -> Iterator[str]:
    """An HTTP server answering 200 `hello` to every GET; its base URL."""

    class Hello(QuietHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-length", "5")
            self.end_headers()
            self.wfile.write(b"hello")

    with serving(Hello) as url:
        yield url


def test_the_cli_says_why_when_the_service_refuses(live_service: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "can-i-deploy", "nobody", "--version", "v1", "--to", "prod", "--server", live_service)
    assert code == 2 and "HTTP 404: no target named 'nobody'" in err
    code, _, err = cli(
        capsys, "record-deployment", "nobody", "--version", "v1", "--env", "prod", "--server", live_service
    )
    assert code == 2 and "HTTP 404" in err
    code, _, err = cli(capsys, "can-i-deploy", "x", "--version", "v1", "--to", "prod", "--server", "http://127.0.0.1:9")
    assert code == 2 and "cannot reach the service" in err
    with not_a_service() as other:
        code, _, err = cli(capsys, "can-i-deploy", "x", "--version", "v1", "--to", "prod", "--server", other)
    assert code == 2 and "not an rlconform service's answer" in err, err


def test_writes_need_the_api_token_when_one_is_set(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    token = "a-token-of-sixteen-chars"
    settings = service_settings(f"sqlite:///{tmp_path / 'token.db'}", api_token=token)
    with TestClient(create_app(settings)) as client:
        auth = {"Authorization": f"Bearer {token}"}
        assert (
            client.post(
                "/api/v1/targets", json={"name": "t", "kind": "openenv", "url": "http://127.0.0.1:9"}, headers=auth
            ).status_code
            == 201
        )
        body = {"target": "t", "version": "1", "environment": "prod"}
        assert client.post("/api/v1/deployments", json=body).status_code == 401
        assert client.post("/api/v1/deployments", json=body, headers=auth).status_code == 201
        assert client.put("/api/v1/runs/1/version", json={"version": "1"}).status_code == 401
        assert (
            client.get("/api/v1/can-i-deploy", params={"target": "t", "version": "1", "to": "prod"}).status_code == 200
        )


def test_record_undeployment_takes_a_version_or_the_whole_target_out(
    live_service: str, capsys: pytest.CaptureFixture[str]
) -> None:
    server = ("--server", live_service)
    with httpx.Client(base_url=live_service) as http:
        make_target(http, "env-server", "openenv", "http://127.0.0.1:9")
        for version, released in (("1.0", True), ("2.0", False)):
            body = {"target": "env-server", "version": version, "environment": "prod", "released": released}
            assert http.post("/api/v1/deployments", json=body).status_code == 201

        def versions() -> list[str]:
            return [d["version"] for e in http.get("/api/v1/environments").json() for d in e["deployments"]]

        assert versions() == ["2.0", "1.0"]
        code, out, _ = cli(capsys, "record-undeployment", "env-server", "--env", "prod", "--version", "1.0", *server)
        assert code == 0 and "env-server 1.0 recorded as gone from prod" in out and versions() == ["2.0"]
        code, _, err = cli(capsys, "record-undeployment", "env-server", "--env", "prod", "--version", "1.0", *server)
        assert code == 2 and "HTTP 404: env-server 1.0 is not recorded as deployed in prod" in err
        assert cli(capsys, "record-undeployment", "env-server", "--env", "prod", *server)[0] == 0
        assert versions() == []
        missing = http.delete("/api/v1/deployments", params={"target": "nobody", "environment": "prod"})
        assert missing.status_code == 404 and "no target named 'nobody'" in missing.text

"""Issue 21's findings that need no browser: allowed hosts, names, tokens, scrubbing, masking, start-up errors."""

from __future__ import annotations

import base64
import socket
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.hostcheck import AllowedHosts, default_hosts, host_of
from app.main import create_app
from app.netpolicy import NetworkRefused, check_host
from app.redaction import REDACTED, scrub, url_secrets
from tests.app.helpers import make_target, service_settings, wait_for_run


@pytest.mark.parametrize(
    ("header", "host"),
    [("localhost:8080", "localhost"), ("[::1]:80", "::1"), ("LocalHost.", "localhost"), ("[::1", ""), ("a:b", "")],
)
def test_host_of_reads_name_port_and_bracketed_v6(header: str, host: str) -> None:
    assert host_of(header) == host


def test_loopback_service_admits_only_loopback_names() -> None:
    hosts = AllowedHosts(default_hosts("127.0.0.1"))
    assert all(hosts.admits(h) for h in ("localhost:8080", "127.0.0.1:8080", "[::1]:8080", "127.0.0.1"))
    assert not any(hosts.admits(h) for h in ("rebind.example:8080", socket.gethostname(), "", None, "127.0.0.2"))


def test_a_service_on_every_interface_also_admits_the_machines_names() -> None:
    hosts = AllowedHosts(default_hosts("0.0.0.0"))
    assert hosts.admits(f"{socket.gethostname()}:8080") and hosts.admits("localhost")
    assert not hosts.admits("rebind.example")


def test_a_foreign_host_gets_400_naming_the_setting_for_pages_and_api(tmp_path: Path) -> None:
    settings = service_settings(f"sqlite:///{tmp_path / 'h.db'}", allowed_hosts=["dash.internal"])
    with TestClient(create_app(settings), base_url="http://dash.internal") as client:
        assert client.get("/api/v1/targets").status_code == 200
        for path in ("/", "/api/v1/targets", "/healthz"):
            response = client.get(path, headers={"Host": "rebind.example:8080"})
            assert response.status_code == 400
            assert "RLCONFORM_ALLOWED_HOSTS" in response.json()["detail"]
        posted = client.post("/api/v1/targets", json={}, headers={"Host": "rebind.example"})
        assert posted.status_code == 400


# ---------------------------------------------------------------- scrubbing (findings 4 and 7)


def test_a_one_letter_url_password_and_token_are_scrubbed_without_breaking_the_run(
    client: TestClient, fake_kind: str
) -> None:
    make_target(client, "short", fake_kind, "ws://u:p@127.0.0.1:9/x", options={"token": "q"})
    run = wait_for_run(client, client.post("/api/v1/targets/short/runs", json={}).json()["id"])
    assert run["status"] == "finished" and run["outcome"] == "pass", run
    results = client.get(f"/api/v1/runs/{run['id']}/results").json()
    decided = [r for r in results if r["verdict"] != "skip"]  # the stop phase is opt-in
    assert {r["verdict"] for r in decided} == {"pass"} and all(r["expected"] == "a proper reply" for r in decided)
    transcript = client.get(f"/api/v1/runs/{run['id']}/transcripts/1").json()
    assert transcript["label"].endswith("connection to ws://u:**********@127.0.0.1:9/x")
    assert transcript["frames"][0]["summary"] == "hello token=**********"


def test_basic_credentials_built_from_the_url_are_scrubbed_raw_and_in_base64() -> None:
    url = "http://alice:pa%40ss@127.0.0.1:9/"
    secrets = url_secrets(url)
    echoed = {
        "verdict": "pass",
        "actual": f"echoed Authorization: Basic {base64.b64encode(b'alice:pa@ss').decode()} and pa@ss, pa%40ss",
    }
    scrubbed = scrub(echoed, secrets)
    assert scrubbed == {
        "verdict": "pass",
        "actual": "echoed Authorization: Basic ********** and **********, **********",
    }


def test_scrubbing_matches_whole_secrets_and_leaves_structured_fields() -> None:
    data = [{"verdict": "pass", "clause_id": "p", "actual": "pass p, (p) pp"}, {"label": "xLongSecretValuex"}]
    assert scrub(data, ["p", "LongSecretValue"]) == [
        {"verdict": "pass", "clause_id": "p", "actual": f"pass {REDACTED}, ({REDACTED}) pp"},
        {"label": f"x{REDACTED}x"},
    ]


# ---------------------------------------------------------------- names (finding 8)


@pytest.mark.parametrize(
    ("field", "value"), [("name", "demo\n"), ("name", "abc\n"), ("worker_label", "abc\n"), ("name", "a\nb")]
)
def test_names_and_labels_must_match_whole(client: TestClient, fake_kind: str, field: str, value: str) -> None:
    body = {"name": "ok", "kind": fake_kind, "url": "ws://127.0.0.1:9", field: value}
    response = client.post("/api/v1/targets", json=body)
    assert response.status_code == 422, response.text
    assert [e["loc"][-1] for e in response.json()["detail"]] == [field]


def test_a_golden_name_with_a_trailing_newline_is_refused(client: TestClient) -> None:
    from sqlmodel import Session

    from app.parity_runs import _golden_name_error

    with Session(client.app.state.engine) as session:  # type: ignore[attr-defined]
        assert _golden_name_error(session, "last-week") is None
        assert _golden_name_error(session, "last-week\n") is not None


# ---------------------------------------------------------------- the API token (finding 9)

TOKEN = "correct-horse-battery"


@pytest.mark.parametrize(
    ("token", "why"), [("k3y", "at least 16"), (f" {TOKEN}", "whitespace"), (f"{TOKEN}\n", "whitespace")]
)
def test_a_short_or_padded_token_is_refused_at_start_up(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], token: str, why: str
) -> None:
    import app.cli.serve
    from app.cli import main

    monkeypatch.setattr(app.cli.serve.uvicorn, "run", lambda *args, **kwargs: None)  # never serve
    monkeypatch.setenv("RLCONFORM_API_TOKEN", token)
    assert main(["serve", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert "RLCONFORM_API_TOKEN" in err and why in err and token.strip() not in err


def test_wrong_bearer_tokens_and_logins_are_limited_per_client(tmp_path: Path, fake_kind: str) -> None:
    settings = service_settings(f"sqlite:///{tmp_path / 't.db'}", api_token=TOKEN)
    body = {"name": "t", "kind": fake_kind, "url": "ws://127.0.0.1:9"}
    with TestClient(create_app(settings)) as client:
        for _ in range(10):
            assert client.post("/api/v1/targets", json={}).status_code == 401  # no header: no guess, not counted
        for _ in range(10):
            assert (
                client.post("/api/v1/targets", json=body, headers={"Authorization": "Bearer guess"}).status_code == 401
            )
        limited = client.post("/api/v1/targets", json=body, headers={"Authorization": f"Bearer {TOKEN}"})
        assert limited.status_code == 429 and "Retry-After" in limited.headers
        assert client.post("/login", data={"token": TOKEN}).status_code == 429
    with TestClient(create_app(settings)) as client:  # a fresh service: the login form has its own count
        for _ in range(10):
            assert client.post("/login", data={"token": "guess"}).status_code == 400
        assert client.post("/login", data={"token": TOKEN}, follow_redirects=False).status_code == 429
    with TestClient(create_app(settings), client=("10.0.0.7", 5000)) as other:  # another client is not limited
        assert other.post("/login", data={"token": TOKEN}, follow_redirects=False).status_code == 303


# ---------------------------------------------------------------- default network policy (finding 6)

METADATA_SPELLINGS = [
    "169.254.169.254",
    "::ffff:169.254.169.254",  # IPv4-mapped
    "2852039166",  # the same address as one integer
    "0xa9fea9fe",
    "169.254.43518",
    "fe80::1",
    "fd00:ec2::254",
    "unix:/run/metadata.sock",
]


@pytest.mark.parametrize("host", METADATA_SPELLINGS)
def test_by_default_link_local_metadata_and_unix_sockets_are_refused(host: str) -> None:
    with pytest.raises(NetworkRefused):
        check_host(host, 80, [])
    with pytest.raises(NetworkRefused):
        check_host(host, 80, ["0.0.0.0/0", "::/0"])  # a broad entry does not list them


@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "10.1.2.3", "192.168.0.9", "172.16.0.1", "localhost"])
def test_by_default_loopback_and_private_addresses_are_allowed(host: str) -> None:
    check_host(host, 80, [])


def test_an_entry_inside_a_refused_range_lists_it() -> None:
    check_host("169.254.169.254", 80, ["169.254.169.254/32"])
    check_host("unix:/run/env.sock", None, ["unix:/run/env.sock"])
    with pytest.raises(NetworkRefused):
        check_host("unix:/run/other.sock", None, ["unix:/run/env.sock"])


def test_a_name_that_does_not_resolve_is_refused_when_a_run_connects() -> None:
    check_host("no-such-host.invalid", 80, [])  # registration: the run checks again
    with pytest.raises(NetworkRefused, match="cannot resolve"):
        check_host("no-such-host.invalid", 80, [], connecting=True)


def test_targets_and_webhooks_naming_metadata_are_refused_at_registration(client: TestClient, fake_kind: str) -> None:
    refused = client.post("/api/v1/targets", json={"name": "m", "kind": fake_kind, "url": "ws://169.254.169.254/"})
    assert refused.status_code == 422 and "RLCONFORM_ALLOWED_NETWORKS" in refused.text
    grpc = client.post("/api/v1/targets", json={"name": "g", "kind": "rlmesh", "url": "unix:/run/x.sock:1"})
    assert grpc.status_code == 422, grpc.text
    make_target(client, "ok", fake_kind, "ws://127.0.0.1:9")
    hook = client.post("/api/v1/targets/ok/webhooks", json={"url": "http://[fe80::1]:80/hook"})
    assert hook.status_code == 422 and "link-local" in hook.text

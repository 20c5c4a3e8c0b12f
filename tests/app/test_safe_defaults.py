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
from app.redaction import REDACTED, redact_url, scrub, url_secrets
from tests.app.conftest import QUICK_PLUGRL
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


@pytest.mark.parametrize("entry", ["a.internal\n", "10.0.0.0/8\n"])
def test_policy_host_names_match_whole(entry: str) -> None:
    with pytest.raises(NetworkRefused, match="plain host name"):
        check_host(entry, 80, ["*.internal"])


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


# ---------------------------------------------------------------- more secrets (finding 7)


def test_the_api_key_wins_over_user_info_in_the_url() -> None:
    import asyncio

    from checks.http_client import http_client
    from checks.http_options import HttpOptions

    seen: list[bytes] = []

    async def exchange() -> None:
        async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            head = await reader.readuntil(b"\r\n\r\n")
            seen.extend(line for line in head.split(b"\r\n") if line.lower().startswith(b"authorization"))
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(answer, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with server:
            async with http_client(HttpOptions(api_key="sk-the-key"), 5) as client:
                assert (await client.get(f"http://alice:pw@127.0.0.1:{port}/")).status_code == 200
            async with http_client(HttpOptions(), 5) as client:  # without a key the user info is used
                await client.get(f"http://alice:pw@127.0.0.1:{port}/")

    asyncio.run(exchange())
    assert seen == [b"Authorization: Bearer sk-the-key", b"Authorization: Basic " + base64.b64encode(b"alice:pw")]


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://h/v1?api_key=k1&model=m", f"https://h/v1?api_key={REDACTED}&model=m"),
        ("https://h/?Token=t&sig=s&x=1", f"https://h/?Token={REDACTED}&sig={REDACTED}&x=1"),
        ("https://h/?key=&q=1", "https://h/?key=&q=1"),
        ("ws://a:pw@h/?access_token=x", f"ws://a:{REDACTED}@h/?access_token={REDACTED}"),
    ],
)
def test_query_string_credentials_are_redacted(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_query_credentials_and_extra_headers_never_shown_but_used(client: TestClient, reference_server) -> None:
    url = reference_server() + "?token=qs-secret-1&mode=a"
    headers = {"X-Api-Key": "hdr-secret-2"}
    make_target(client, "hdr", "plugrl-server", url, options={**QUICK_PLUGRL, "extra_headers": headers})
    target = client.get("/api/v1/targets/hdr").json()
    assert target["options"]["extra_headers"] == REDACTED and "qs-secret-1" not in target["url"]
    run = wait_for_run(client, client.post("/api/v1/targets/hdr/runs", json={}).json()["id"])
    assert run["status"] == "finished", run
    pages = ["/targets/hdr", "/targets/hdr/edit", f"/runs/{run['id']}", f"/api/v1/runs/{run['id']}", "/api/v1/targets"]
    for page in [*pages, f"/api/v1/runs/{run['id']}/export.json"]:
        text = client.get(page).text
        assert "qs-secret-1" not in text and "hdr-secret-2" not in text, page
    # An edit sending the masked values back keeps them.
    assert client.patch("/api/v1/targets/hdr", json={"options": {"extra_headers": REDACTED}}).status_code == 200
    from sqlmodel import Session, select

    from app.models import Target

    with Session(client.app.state.engine) as session:  # type: ignore[attr-defined]
        stored = session.exec(select(Target).where(Target.name == "hdr")).one()
        assert stored.options["extra_headers"] == headers and stored.url == url


# ---------------------------------------------------------------- webhook URLs and logs (findings 2 and 3)

HOOK = "http://hookuser:hook-pw-9@127.0.0.1:9/services/T01/B02/hook-path-secret"


def test_webhook_urls_are_shown_as_scheme_and_host_only(client: TestClient, fake_kind: str) -> None:
    make_target(client, "notified", fake_kind, "ws://127.0.0.1:9")
    added = client.post("/api/v1/targets/notified/webhooks", json={"url": HOOK})
    assert added.status_code == 201 and added.json()["url"] == f"http://127.0.0.1:9/{REDACTED}"
    assert client.get("/api/v1/targets/notified/webhooks").json()[0]["url"] == f"http://127.0.0.1:9/{REDACTED}"
    wait_for_run(client, client.post("/api/v1/targets/notified/runs", json={}).json()["id"])
    page = client.get("/targets/notified").text
    assert f"http://127.0.0.1:9/{REDACTED}" in page  # the delivery row names where it goes
    for shown in (page, client.get("/api/v1/targets/notified/webhooks/deliveries").text):
        assert "hook-path-secret" not in shown and "hook-pw-9" not in shown


def test_logs_keep_third_party_requests_quiet_and_redact_every_url(caplog: pytest.LogCaptureFixture) -> None:
    import logging

    from app.logsafe import QUIET_LOGGERS, configure_logging

    factory = logging.getLogRecordFactory()
    levels = {name: logging.getLogger(name).level for name in QUIET_LOGGERS}
    try:
        configure_logging()
        assert not logging.getLogger("httpx").isEnabledFor(logging.INFO)
        with caplog.at_level(logging.INFO, logger="rlconform"):
            logging.getLogger("rlconform").info("posting to %s", "https://u:pw-77@h/x?api_key=k-88&y=1")
            logging.getLogger("rlconform").info('127.0.0.1 - "GET /api/v1/runs?token=t-99 HTTP/1.1" 200')
        assert "pw-77" not in caplog.text and "k-88" not in caplog.text and "t-99" not in caplog.text
        assert f"https://u:{REDACTED}@h/x?api_key={REDACTED}&y=1" in caplog.text
    finally:
        logging.setLogRecordFactory(factory)
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)


# ---------------------------------------------------------------- start-up errors (finding 10)


def _serve_without_serving(monkeypatch: pytest.MonkeyPatch, url: str) -> int:
    import app.cli.serve
    from app.cli import main

    monkeypatch.setattr(app.cli.serve.uvicorn, "run", lambda *args, **kwargs: None)  # never serve
    return main(["serve", "--no-demo", "--database-url", url])


def test_a_corrupt_database_is_one_line_naming_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "corrupt.db"
    path.write_bytes(b"not a database at all " * 200)
    assert _serve_without_serving(monkeypatch, f"sqlite:///{path}") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and "file is not a database" in err, err


def test_a_locked_database_is_one_line_naming_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import sqlite3

    import app.db

    path = tmp_path / "locked.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    monkeypatch.setattr(app.db, "STARTUP_LOCK_WAIT", 0.2)
    try:
        assert _serve_without_serving(monkeypatch, f"sqlite:///{path}") == 2
    finally:
        holder.close()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and "database is locked" in err, err


def test_a_worker_label_given_on_the_command_line_must_match_whole(capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli import main

    assert main(["worker", "--label", "gpu\n", "--database-url", "postgresql+psycopg://u@127.0.0.1:9/x"]) == 2
    assert "'gpu\\n' is not a worker label" in capsys.readouterr().err


@pytest.mark.parametrize("labels", ["gpu,bad label", "gpu,-leading", "x" * 65])
def test_service_labels_must_be_worker_labels(monkeypatch: pytest.MonkeyPatch, labels: str) -> None:
    import pydantic

    from app.settings import Settings

    monkeypatch.setenv("RLCONFORM_SERVICE_LABELS", labels)
    with pytest.raises(pydantic.ValidationError, match="is not a worker label"):
        Settings()

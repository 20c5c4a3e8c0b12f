"""Broken users and hostile targets: odd ids, NUL and lone surrogates, huge bodies, XML-breaking text, leaks.

Each case here once answered 500, lost a run's results, wrote invalid JUnit, dropped or leaked a
secret, or repointed a user's target.
Both database backends run them (PostgreSQL when RLCONFORM_TEST_POSTGRES_URL is set),
because PostgreSQL is the stricter one about integers and NUL.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from fastapi.testclient import TestClient
from sqlmodel import Session

from app.main import create_app
from app.models import Target
from app.request_guard import MAX_BODY_BYTES
from app.settings import Settings
from app.textsafe import storable, storable_json, xml_safe
from tests.app.helpers import make_target, service_settings, wait_for_run

URL = "ws://127.0.0.1:9"
TOO_BIG_FOR_ANY_ID = "99999999999999999999999"
OVER_INT32 = "3000000000"
UNSTORABLE_REPLY = [ord("a"), 0, 0xD800, 0x1B, 0x0B, ord("z")]  # NUL, a lone surrogate, two XML-forbidden controls


@pytest.fixture
def settings(database_url: str) -> Settings:
    return service_settings(database_url)


@pytest.fixture
def finished_run(client: TestClient, fake_kind: str) -> int:
    make_target(client, "plain", fake_kind, URL)
    run = client.post("/api/v1/targets/plain/runs", json={}).json()
    assert wait_for_run(client, run["id"])["outcome"] == "pass"
    return run["id"]


@pytest.mark.parametrize("number", [TOO_BIG_FOR_ANY_ID, OVER_INT32])
@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/runs/{n}",
        "/api/v1/runs/{n}/results",
        "/api/v1/runs/{n}/junit.xml",
        "/api/v1/runs/{n}/export.json",
        "/runs/{n}",
        "/runs/{n}/diff",
        "/runs/{n}/clauses/hello/fake.1.greets",
    ],
)
def test_ids_beyond_the_database_range_are_404(client: TestClient, path: str, number: str) -> None:
    response = client.get(path.format(n=number))
    assert response.status_code == 404, response.text


@pytest.mark.parametrize("number", [TOO_BIG_FOR_ANY_ID, OVER_INT32])
def test_numbers_beyond_the_database_range_in_a_runs_urls(client: TestClient, finished_run: int, number: str) -> None:
    run = f"/api/v1/runs/{finished_run}"
    assert client.get(f"{run}/transcripts/{number}").status_code == 404
    assert client.get(f"{run}/diff?against={number}").status_code == 404
    assert client.get(f"/runs/{finished_run}/diff?against={number}").status_code == 404
    assert client.get(f"{run}/results?after_id={number}").status_code == 422
    assert client.get(f"/api/v1/runs?before_id={number}").status_code == 422
    assert client.get(f"{run}/results?after_id=2147483647").json() == []
    assert client.get(f"{run}/transcripts/1").status_code == 200


def test_non_ascii_digits_are_not_a_run_id(client: TestClient, finished_run: int) -> None:
    response = client.get(f"/api/v1/runs/{finished_run}/diff", params={"against": "²"})
    assert response.status_code == 422 and "run id" in response.json()["detail"]
    assert client.get(f"/runs/{finished_run}/diff", params={"against": "١"}).status_code == 404


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/api/v1/targets/a%00b", 404),
        ("/targets/a%00b", 404),
        ("/badge/a%00b.svg", 404),
        ("/api/v1/runs?target=a%00b", 422),
        ("/api/v1/runs/1/results?phase=%00", 422),
    ],
)
def test_nul_in_a_url_is_refused_with_a_message(client: TestClient, path: str, status: int) -> None:
    response = client.get(path)
    assert response.status_code == status
    assert "NUL" in response.json()["detail"]


def errors_by_path(response) -> dict[tuple, str]:
    assert response.status_code == 422, response.text
    return {tuple(error["loc"]): error["msg"] for error in response.json()["detail"]}


def send_json(client: TestClient, method: str, path: str, body: object):
    """JSON as a client in any language may send it: `\\u0000` and lone `\\ud800` escapes included."""
    return client.request(method, path, content=json.dumps(body), headers={"content-type": "application/json"})


def test_unstorable_text_in_bodies_is_422_with_field_paths(client: TestClient, fake_kind: str) -> None:
    body = {"name": "t", "kind": fake_kind, "url": URL}
    errors = errors_by_path(send_json(client, "POST", "/api/v1/targets", {**body, "description": "a\x00b"}))
    assert "NUL" in errors[("body", "description")]
    errors = errors_by_path(send_json(client, "POST", "/api/v1/targets", {**body, "url": "ws://127.0.0.1:9/\x00"}))
    assert ("body", "url") in errors
    errors = errors_by_path(send_json(client, "POST", "/api/v1/targets", {**body, "options": {"hang_in": "\ud800"}}))
    assert ("body", "options", "hang_in") in errors
    errors = errors_by_path(send_json(client, "POST", "/api/v1/targets", {**body, "options": {"\ud800": 1}}))
    assert ("body", "options", "(key)") in errors
    make_target(client, "t", fake_kind, URL)
    errors = errors_by_path(send_json(client, "PATCH", "/api/v1/targets/t", {"expected_failures": ["\x00"]}))
    assert ("body", "expected_failures", 0) in errors
    errors = errors_by_path(send_json(client, "POST", "/api/v1/targets/t/runs", {"options": {"hang_in": "x\x00"}}))
    assert ("body", "options", "hang_in") in errors
    assert client.get("/api/v1/targets/t").json()["description"] == ""


def test_a_lone_surrogate_echoed_in_a_validation_error_is_still_json(client: TestClient, fake_kind: str) -> None:
    raw = '{"name": "s", "kind": "fake", "url": "ws://127.0.0.1:9", "description": "\\ud800"}'
    response = client.post("/api/v1/targets", content=raw, headers={"content-type": "application/json"})
    errors = errors_by_path(response)
    assert ("body", "description") in errors
    assert response.json()["detail"][0]["input"] == "\\ud800"


def test_a_body_over_the_limit_is_413_whether_announced_or_streamed(client: TestClient, fake_kind: str) -> None:
    huge = b'{"name": "h", "kind": "fake", "url": "ws://127.0.0.1:9", "description": "' + b"x" * MAX_BODY_BYTES + b'"}'
    headers = {"content-type": "application/json"}
    announced = client.post("/api/v1/targets", content=huge, headers=headers)
    assert announced.status_code == 413 and "over" in announced.json()["detail"]

    def chunks():
        for start in range(0, len(huge), 65536):
            yield huge[start : start + 65536]

    streamed = client.post("/api/v1/targets", content=chunks(), headers=headers)
    assert streamed.status_code == 413
    assert client.get("/api/v1/targets/h").status_code == 404
    # A normal body still gets through the guard, streamed or not.
    small = b'{"name": "h", "kind": "fake", "url": "ws://127.0.0.1:9"}'
    assert client.post("/api/v1/targets", content=iter([small[:10], small[10:]]), headers=headers).status_code == 201


def test_too_many_expected_failures_is_one_error_not_one_per_item(client: TestClient, fake_kind: str) -> None:
    response = client.post(
        "/api/v1/targets",
        json={"name": "e", "kind": fake_kind, "url": URL, "expected_failures": ["nope"] * 5000},
    )
    assert errors_by_path(response) == {("body", "expected_failures"): "at most 1000 clause ids"}


def test_a_target_sending_nul_surrogates_and_controls_keeps_every_result(client: TestClient, fake_kind: str) -> None:
    make_target(
        client, "hostile", fake_kind, URL, options={"reply_codepoints": UNSTORABLE_REPLY, "fail": ["fake.2.echoes"]}
    )
    started = client.post("/api/v1/targets/hostile/runs", json={}).json()
    run = wait_for_run(client, started["id"])
    assert (run["status"], run["outcome"]) == ("finished", "fail"), run["message"]
    results = client.get(f"/api/v1/runs/{run['id']}/results").json()
    assert len(results) == 6  # five decided, the opt-in stop phase skipped
    echoes = next(r for r in results if r["clause_id"] == "fake.2.echoes")
    assert echoes["actual"] == "a bad replya\\x00\\ud800\x1b\x0bz"  # visible escapes; other controls kept as sent
    transcript = client.get(f"/api/v1/runs/{run['id']}/transcripts/{echoes['transcript_ids'][0]}").json()
    assert transcript["close_reason"] == "byea\\x00\\ud800\x1b\x0bz"

    junit = client.get(f"/api/v1/runs/{run['id']}/junit.xml")
    root = ET.fromstring(junit.content)  # raises on XML-forbidden characters
    failure = root.find(".//testcase[@name='fake.2.echoes']/failure")
    assert failure is not None and "\\x1b" in failure.get("message")
    assert client.get(f"/api/v1/runs/{run['id']}/export.json").status_code == 200
    assert client.get(f"/runs/{run['id']}").status_code == 200
    assert client.get(f"/runs/{run['id']}/clauses/echo/fake.2.echoes").status_code == 200


def test_text_helpers_escape_only_what_they_must() -> None:
    assert storable({"k\x00": ["a\ud800", 1, None]}) == {"k\\x00": ["a\\ud800", 1, None]}
    assert storable("tab\tand é ✓ \x1b") == "tab\tand é ✓ \x1b"
    # Nested deep, as a transcript's frames are; clean data comes back as it is, unwalked.
    frames = [{"frames": [{"text": "é", "fields": {"names": ["ok", "lone \udc80"]}}]}]
    assert storable(frames) == [{"frames": [{"text": "é", "fields": {"names": ["ok", "lone \\udc80"]}}]}]
    clean = [{"frames": [{"text": "tab\t é ✓", 3: [1.5, None]}]}]
    assert storable(clean) is clean
    looks_escaped = {"text": "a backslash then u0000: \\u0000"}  # walked, and kept as it is
    assert storable(looks_escaped) == looks_escaped
    assert storable({"raw": [b"\x00"], "t": "\x00"}) == {"raw": [b"\x00"], "t": "\\x00"}  # not JSON: walked
    # A transcript's frames: the compact JSON text stored, of the storable frames.
    assert storable_json([{"t": "é ✓", "n": [1, None]}]) == '[{"t":"é ✓","n":[1,null]}]'
    assert json.loads(storable_json([{"t": "a\x00", "u\ud800": "\udc80"}])) == [{"t": "a\\x00", "u\\ud800": "\\udc80"}]
    assert xml_safe("a\x1b\x0b\ufffe\tb\n") == "a\\x1b\\x0b\\ufffe\tb\n"


def test_api_writes_from_another_sites_page_are_refused_even_without_a_token(
    client: TestClient, fake_kind: str
) -> None:
    make_target(client, "csrf", fake_kind, URL)
    evil = {"origin": "http://evil.example"}
    # A body-less POST needs no CORS preflight, so a hostile page could send it through a visitor's browser.
    assert client.post("/api/v1/targets/csrf/runs", headers=evil).status_code == 403
    assert client.get("/api/v1/runs").json() == []
    same_site = client.post("/api/v1/targets/csrf/runs", headers={"origin": "http://testserver"})
    assert same_site.status_code == 202
    assert client.post(f"/api/v1/runs/{same_site.json()['id']}/cancel", headers=evil).status_code == 403
    assert client.delete("/api/v1/targets/csrf", headers=evil).status_code == 403
    assert client.post("/api/v1/targets/csrf/runs").status_code == 202  # CI and curl send no Origin


def test_a_secret_override_for_one_run_is_refused_not_silently_dropped(client: TestClient, fake_kind: str) -> None:
    make_target(client, "sec", fake_kind, URL, options={"token": "stored-secret"})
    # Runs take secrets from their target, so an override would look applied (masked) yet never be used.
    errors = errors_by_path(client.post("/api/v1/targets/sec/runs", json={"options": {"token": "other-secret"}}))
    assert errors == {("body", "options", "token"): "a secret cannot be overridden for one run; set it on the target"}
    # Sending the mask back means "the stored one", as in an edit.
    run = client.post("/api/v1/targets/sec/runs", json={"options": {"token": "**********", "delay": 0.0}})
    assert run.status_code == 202, run.text
    ended = wait_for_run(client, run.json()["id"])
    frames = client.get(f"/api/v1/runs/{ended['id']}/transcripts/1").json()["frames"]
    assert frames[0]["summary"] == "hello token=**********"  # used, and scrubbed on the way in


def test_the_demo_never_repoints_a_users_own_plugrl_target_named_demo(tmp_path) -> None:
    pytest.importorskip("checks.plugrl.reference")
    url = f"sqlite:///{tmp_path / 'mine.db'}"
    mine = "ws://127.0.0.1:9/my-trainer"
    with TestClient(create_app(service_settings(url, demo=True))) as client:
        # The user replaces the demo with their own PlugRL server under the same name.
        assert client.delete("/api/v1/targets/demo").status_code == 204
        make_target(client, "demo", "plugrl-server", mine, description="our trainer")
    with TestClient(create_app(service_settings(url, demo=True))) as client:
        assert client.get("/api/v1/targets/demo").json()["url"] == mine
        assert "demo" not in (client.app.state.demo or {})


def test_a_harness_error_message_never_carries_the_targets_secret(
    client: TestClient, fake_kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def failing_suite(suite, url, options, *args, **kwargs):
        raise RuntimeError(f"could not authenticate with token={options.token.get_secret_value()}")

    monkeypatch.setattr("app.executor.run_suite", failing_suite)
    make_target(client, "leaky", fake_kind, URL, options={"token": "hunter2-secret"})
    run = wait_for_run(client, client.post("/api/v1/targets/leaky/runs", json={}).json()["id"])
    assert run["outcome"] == "error"
    assert run["message"] == "harness error: RuntimeError: could not authenticate with token=**********"
    assert "hunter2" not in client.get(f"/runs/{run['id']}").text


@pytest.mark.parametrize("path", ["/", "/targets/new", "/api/v1/targets", "/badge/x.svg", "/api/v1/targets/%00"])
def test_no_response_may_be_framed_by_another_site(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["x-content-type-options"] == "nosniff"


def test_options_of_a_kind_this_server_cannot_load_are_all_masked(
    client: TestClient, fake_kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from checks.registry import RECORDS
    from tests.app.fakesuite import suite_only_record

    # A kind whose package is missing here (or that an upgrade renamed): its secrets cannot be told apart.
    monkeypatch.setitem(RECORDS, "vanished", suite_only_record("vanished", "tests.app.no_such_module:SUITE"))
    engine = client.app.state.engine
    with Session(engine) as session:
        session.add(Target(name="old", kind="vanished", url=URL, options={"api_token": "hunter2-secret", "n": 3}))
        session.commit()
    assert client.get("/api/v1/targets/old").json()["options"] == {"api_token": "**********", "n": "**********"}
    for page in ("/", "/targets/old", "/targets/old/edit", "/api/v1/targets"):
        response = client.get(page)
        assert response.status_code == 200 and "hunter2" not in response.text, page

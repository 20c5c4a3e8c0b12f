"""`rlconform ci` against a live service: exit 0 pass, 1 conformance failure, 2 infrastructure trouble."""

from __future__ import annotations

import re
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.cli import main
from app.settings import Settings
from tests.app.helpers import free_port, service_settings, wait_until
from tests.app.http_stub import QuietHandler, serving

URL = "ws://127.0.0.1:9"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return service_settings(f"sqlite:///{tmp_path / 'ci.db'}", api_token="ci-token-ci-token")


@pytest.fixture
def api(live_service: str) -> httpx.Client:
    with httpx.Client(base_url=live_service, headers={"Authorization": "Bearer ci-token-ci-token"}) as client:
        yield client


def add(api: httpx.Client, name: str, kind: str, url: str, **fields) -> None:
    response = api.post("/api/v1/targets", json={"name": name, "kind": kind, "url": url, **fields})
    assert response.status_code == 201, response.text


def ci(live_service: str, *args: str) -> int:
    return main(["ci", "--server", live_service, "--token", "ci-token-ci-token", *args])


def test_passing_target_exits_0_and_writes_junit(live_service, api, fake_kind, tmp_path, capsys) -> None:
    add(api, "good", fake_kind, URL)
    junit = tmp_path / "out.xml"
    assert ci(live_service, "--target", "good", "--junit", str(junit)) == 0
    out, err = capsys.readouterr()
    assert "outcome: pass" in out and "queued" in err
    assert ET.parse(junit).getroot().get("tests") == "6"


def test_failing_target_exits_1_and_lists_the_clauses(live_service, api, fake_kind, tmp_path, capsys) -> None:
    add(api, "broken", fake_kind, URL, options={"fail": ["fake.2.orders", "fake.1.greets"]})
    assert ci(live_service, "--target", "broken") == 1
    out = capsys.readouterr().out
    assert "failing clauses (2): fake.1.greets, fake.2.orders" in out

    allowed = tmp_path / "known.txt"
    allowed.write_text("# known issues\nfake.2.orders\nfake.1.greets  # tracked elsewhere\n")
    junit = tmp_path / "out.xml"
    assert ci(live_service, "--target", "broken", "--expected-failures", str(allowed), "--junit", str(junit)) == 0
    assert "expected failure" in junit.read_text()


def test_phase_and_option_flags_reach_the_run(live_service, api, fake_kind, capsys) -> None:
    add(api, "flags", fake_kind, URL)
    assert ci(live_service, "--target", "flags", "--phase", "stop", "--option", 'fail=["fake.3.stops"]') == 1
    assert "fake.3.stops" in capsys.readouterr().out
    assert ci(live_service, "--target", "flags", "--phase", "hello") == 0


def test_undecidable_run_exits_2(live_service, api, fake_kind, capsys) -> None:
    add(api, "hung", fake_kind, URL, options={"hang_in": "hello", "timeout": 0.1})
    assert ci(live_service, "--target", "hung") == 2
    assert "undecided clauses" in capsys.readouterr().out


def test_unknown_target_and_missing_token_exit_2(live_service, api, capsys) -> None:
    assert ci(live_service, "--target", "nobody") == 2
    assert "no target named 'nobody'" in capsys.readouterr().err
    assert main(["ci", "--server", live_service, "--target", "nobody"]) == 2
    assert "API token" in capsys.readouterr().err


def test_unreachable_service_exits_2(capsys) -> None:
    assert main(["ci", "--server", f"http://127.0.0.1:{free_port()}", "--target", "any"]) == 2
    assert "cannot reach" in capsys.readouterr().err


def test_against_the_reference_server(live_service, api, reference_server, capsys) -> None:
    add(api, "ref", "plugrl-server", reference_server(), options={"timeout": 2.0, "patience": 0.2})
    assert ci(live_service, "--target", "ref") == 0
    assert "outcome: pass" in capsys.readouterr().out


def test_a_malformed_server_url_exits_2_with_a_message(capsys) -> None:
    assert main(["ci", "--server", "http://[::1", "--target", "any"]) == 2
    assert "not a usable URL" in capsys.readouterr().err


class _NotRlconform(QuietHandler):
    """A web server that is not rlconform: accepts any POST with 202 and a body that is not a run."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        body = b"accepted" if self.path.endswith("/text/runs") else b'{"queued": true}'
        self.send_response(202)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def not_rlconform() -> Iterator[str]:
    with serving(_NotRlconform) as url:
        yield url


@pytest.mark.parametrize("target", ["text", "json"])
def test_a_server_that_is_not_rlconform_exits_2_not_a_traceback(not_rlconform: str, target: str, capsys) -> None:
    assert main(["ci", "--server", not_rlconform, "--target", target]) == 2
    assert "not an rlconform service's answer" in capsys.readouterr().err


def test_a_run_whose_target_is_deleted_meanwhile_exits_2_at_once(live_service, api, fake_kind, capsys) -> None:
    add(api, "doomed", fake_kind, URL, options={"delay": 0.5})
    codes: list[int] = []
    follower = threading.Thread(target=lambda: codes.append(ci(live_service, "--target", "doomed")))
    follower.start()
    try:
        wait_until(lambda: bool(api.get("/api/v1/runs", params={"target": "doomed", "status": "running"}).json()))
        assert api.delete("/api/v1/targets/doomed").status_code == 204
    finally:
        follower.join(timeout=30)
    assert codes == [2]
    assert "no longer exists" in capsys.readouterr().err


def test_an_unwritable_junit_path_exits_2_before_any_run(live_service, api, fake_kind, tmp_path, capsys) -> None:
    add(api, "nowhere", fake_kind, URL)
    assert ci(live_service, "--target", "nowhere", "--junit", str(tmp_path / "missing-dir" / "out.xml")) == 2
    assert "missing-dir does not exist" in capsys.readouterr().err
    assert api.get("/api/v1/runs", params={"target": "nowhere"}).json() == []


def test_output_is_the_run_url_then_what_failed_then_the_outcome(live_service, api, fake_kind, capsys) -> None:
    add(api, "half", fake_kind, URL, options={"fail": ["fake.2.orders"]})
    assert ci(live_service, "--target", "half") == 1
    lines = capsys.readouterr().out.splitlines()
    assert re.fullmatch(re.escape(live_service) + r"/runs/\d+", lines[0])
    assert any("FAIL  fake.2.orders" in line for line in lines)
    assert not any("fake.1.greets" in line for line in lines)  # passing clauses only with --verbose
    assert lines[-1].endswith("outcome: fail")
    assert ci(live_service, "--target", "half", "--verbose") == 1
    assert "ok    fake.1.greets" in capsys.readouterr().out


def test_a_wrong_token_is_refused_by_name(live_service, api, fake_kind, capsys) -> None:
    add(api, "guarded", fake_kind, URL)
    assert main(["ci", "--server", live_service, "--token", "wrong", "--target", "guarded"]) == 2
    assert "token refused" in capsys.readouterr().err

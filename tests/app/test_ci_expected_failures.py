"""`rlconform ci --expected-failures`: sent with the run, judged by the service, unknown ids refused."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from app.cli import main
from app.settings import Settings
from tests.app.helpers import make_target, service_settings

URL = "ws://127.0.0.1:9"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return service_settings(f"sqlite:///{tmp_path / 'ci.db'}")


def ci(live_service: str, target: str, expected: Path) -> int:
    return main(["ci", "--server", live_service, "--target", target, "--expected-failures", str(expected)])


def last_run(live_service: str, target: str) -> dict:
    return httpx.get(f"{live_service}/api/v1/runs", params={"target": target, "limit": 1}).json()[0]


def test_exit_0_when_only_expected_failures_fail_and_the_dashboard_agrees(live_service, fake_kind, tmp_path) -> None:
    expected = tmp_path / "known.txt"
    expected.write_text("fake.2.in-order  # an alias of fake.2.orders\n")
    with httpx.Client(base_url=live_service) as api:
        make_target(api, "one", fake_kind, URL, options={"fail": ["fake.2.orders"]})
        make_target(api, "two", fake_kind, URL, options={"fail": ["fake.2.orders", "fake.1.greets"]})
    assert ci(live_service, "one", expected) == 0
    run = last_run(live_service, "one")
    assert (run["outcome"], run["expected_failures"], run["trigger"]) == ("pass", ["fake.2.orders"], "ci")
    assert ci(live_service, "two", expected) == 1
    assert last_run(live_service, "two")["outcome"] == "fail"


def test_unknown_ids_are_refused_with_exit_2_naming_them(live_service, fake_kind, tmp_path, capsys) -> None:
    expected = tmp_path / "known.txt"
    expected.write_text("fake.2.orders\nfake.2.order\n")
    with httpx.Client(base_url=live_service) as api:
        make_target(api, "one", fake_kind, URL)
    assert ci(live_service, "one", expected) == 2
    err = capsys.readouterr().err
    assert "HTTP 422" in err and "'fake.2.order' is not a clause of fake" in err
    assert httpx.get(f"{live_service}/api/v1/runs").json() == []

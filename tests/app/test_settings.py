"""Settings from RLCONFORM_* variables, and `rlconform serve` flags laid over them."""

from __future__ import annotations

import argparse

import pytest
from sqlalchemy.engine import make_url

from app.cli.serve import settings_from_args
from app.settings import Settings


def serve_args(**flags) -> argparse.Namespace:
    defaults = {"host": None, "port": None, "database_url": None, "max_concurrent_runs": None, "no_demo": False}
    return argparse.Namespace(**(defaults | flags))


def test_environment_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RLCONFORM_ALLOWED_NETWORKS", "10.0.0.0/8, trainer.internal ,")
    monkeypatch.setenv("RLCONFORM_API_TOKEN", "s3cret-s3cret-s3")
    monkeypatch.setenv("RLCONFORM_DEMO", "false")
    monkeypatch.setenv("RLCONFORM_PORT", "9001")
    settings = Settings()
    assert settings.allowed_networks == ["10.0.0.0/8", "trainer.internal"]
    assert settings.api_token is not None and settings.api_token.get_secret_value() == "s3cret-s3cret-s3"
    assert "s3cret" not in repr(settings)
    assert (settings.demo, settings.port) == (False, 9001)


def test_an_empty_token_means_no_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RLCONFORM_API_TOKEN", "")
    assert Settings().api_token is None


def test_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DATABASE_URL", "HOST", "PORT", "DEMO", "ALLOWED_NETWORKS", "API_TOKEN", "MAX_CONCURRENT_RUNS"):
        monkeypatch.delenv(f"RLCONFORM_{name}", raising=False)
    settings = Settings()
    assert settings.database_url == "sqlite:///./rlconform.db"
    assert (settings.host, settings.port, settings.max_concurrent_runs) == ("127.0.0.1", 8080, 4)
    assert settings.demo is True and settings.allowed_networks == [] and settings.api_token is None


def test_serve_flags_override_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RLCONFORM_PORT", "9001")
    monkeypatch.setenv("RLCONFORM_HOST", "0.0.0.0")
    monkeypatch.setenv("RLCONFORM_DEMO", "true")
    settings = settings_from_args(serve_args(port=1234, database_url="sqlite:///x.db", no_demo=True))
    assert (settings.port, settings.database_url, settings.demo) == (1234, "sqlite:///x.db", False)
    assert settings.host == "0.0.0.0"  # no flag given: the environment stands
    assert settings_from_args(serve_args()).port == 9001


@pytest.mark.parametrize("entry", ["10.0.0.0/33", "10.0.0.0/8/", "trainer internal", "*.", "http://trainer"])
def test_a_mistyped_allowed_network_is_refused_not_read_as_a_name(monkeypatch: pytest.MonkeyPatch, entry: str) -> None:
    monkeypatch.setenv("RLCONFORM_ALLOWED_NETWORKS", f"127.0.0.0/8,{entry}")
    with pytest.raises(ValueError, match="neither a CIDR"):
        Settings()


def test_serve_reports_a_bad_setting_in_one_line_and_exits_2(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    from app.cli import main

    monkeypatch.setenv("RLCONFORM_PORT", "eighty")
    assert main(["serve"]) == 2
    assert capsys.readouterr().err.startswith("rlconform: bad setting: RLCONFORM_PORT: ")


def test_database_password_is_escaped_into_the_url(monkeypatch: pytest.MonkeyPatch) -> None:
    password = "p@ss:w/rd%?#&"
    monkeypatch.setenv("RLCONFORM_DATABASE_URL", "postgresql+psycopg://rlconform@postgres:5432/rlconform")
    monkeypatch.setenv("RLCONFORM_DATABASE_PASSWORD", password)
    url = make_url(Settings().database_url)
    assert (url.username, url.password, url.host, url.port, url.database) == (
        "rlconform",
        password,
        "postgres",
        5432,
        "rlconform",
    )

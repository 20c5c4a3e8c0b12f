"""The Docker image's command, run outside Docker (no engine here), and the compose file's shape."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.app.helpers import free_port, wait_until

ROOT = Path(__file__).resolve().parents[2]


def dockerfile() -> dict[str, list[str]]:
    """Instruction -> list of argument strings, continuation lines joined, comments dropped."""
    instructions: dict[str, list[str]] = {}
    logical = ""
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        if line.lstrip().startswith("#") and not logical:
            continue
        logical += line.rstrip("\\").strip() + " " if line.endswith("\\") else line.strip()
        if line.endswith("\\"):
            continue
        if logical:
            keyword, _, rest = logical.partition(" ")
            instructions.setdefault(keyword.upper(), []).append(rest.strip())
        logical = ""
    return instructions


def image_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for arguments in dockerfile()["ENV"]:
        for pair in shlex.split(arguments):
            key, _, value = pair.partition("=")
            env[key] = value
    return env


def test_dockerfile_basics() -> None:
    parsed = dockerfile()
    assert parsed["FROM"] == ["python:3.11-slim"]
    assert parsed["USER"] and parsed["USER"][-1] not in ("root", "0")
    assert parsed["VOLUME"] == ["/data"]
    assert image_env()["RLCONFORM_DATABASE_URL"] == "sqlite:////data/rlconform.db"
    assert json.loads(parsed["CMD"][-1]) == ["rlconform", "serve", "--host", "0.0.0.0"]


def test_the_image_command_serves_and_its_healthcheck_passes(tmp_path: Path) -> None:
    command = json.loads(dockerfile()["CMD"][-1])
    healthcheck = json.loads(dockerfile()["HEALTHCHECK"][-1].split("CMD", 1)[1])
    executable = Path(sys.executable).with_name(command[0])
    if not executable.exists():
        pytest.skip(f"{command[0]} is not installed beside {sys.executable}")
    # Tests bind loopback only; everything else is the image's own command and environment.
    command = [str(executable), *("127.0.0.1" if arg == "0.0.0.0" else arg for arg in command[1:])]
    healthcheck = [sys.executable if healthcheck[0] == "python" else healthcheck[0], *healthcheck[1:]]
    port = free_port()
    env = (
        os.environ
        | image_env()
        | {
            "RLCONFORM_DATABASE_URL": f"sqlite:///{tmp_path / 'data' / 'rlconform.db'}",
            "RLCONFORM_PORT": str(port),
        }
    )
    env.pop("RLCONFORM_API_TOKEN", None)
    (tmp_path / "data").mkdir()
    process = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:

        def healthy() -> bool:
            assert process.poll() is None, process.stderr.read().decode()[-2000:]
            try:
                return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).json()["status"] == "ok"
            except httpx.HTTPError:
                return False

        wait_until(healthy, timeout=30, what="/healthz")
        assert subprocess.run(healthcheck, env=env, timeout=20).returncode == 0
        assert (tmp_path / "data" / "rlconform.db").exists()
    finally:
        process.terminate()
        process.wait(timeout=20)
        process.stderr.close()
    # With the service gone, the healthcheck must fail.
    assert subprocess.run(healthcheck, env=env, timeout=20, stderr=subprocess.DEVNULL).returncode != 0


def test_compose_file() -> None:
    yaml = pytest.importorskip("yaml")
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    assert any(volume.endswith(":/data") for volume in services["rlconform"]["volumes"])
    assert "profiles" not in services["rlconform"]
    assert services["postgres"]["image"] == "postgres:16" and services["postgres"]["profiles"] == ["postgres"]
    backed = services["rlconform-postgres"]
    assert backed["profiles"] == ["postgres"]
    assert backed["environment"]["RLCONFORM_DATABASE_URL"].startswith("postgresql+psycopg://")
    assert "@postgres:5432/" in backed["environment"]["RLCONFORM_DATABASE_URL"]
    assert backed["depends_on"]["postgres"]["condition"] == "service_healthy"

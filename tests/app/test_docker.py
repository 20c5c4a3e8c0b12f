"""The Docker image's command, run outside Docker (no engine here), and the compose file's shape."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import httpx
import pytest

from app.settings import Settings
from tests.app.helpers import free_port, wait_until

ROOT = Path(__file__).resolve().parents[2]


def instructions() -> list[tuple[str, str]]:
    """(instruction, arguments) in order, continuation lines joined as Docker joins them, comments dropped."""
    found: list[tuple[str, str]] = []
    logical = ""
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        if line.lstrip().startswith("#") and not logical:
            continue
        logical += line.removesuffix("\\").lstrip() if line.endswith("\\") else line.strip()
        if line.endswith("\\"):
            continue
        if logical:
            keyword, _, rest = logical.partition(" ")
            found.append((keyword.upper(), rest.strip()))
        logical = ""
    return found


def dockerfile() -> dict[str, list[str]]:
    """Instruction -> list of argument strings."""
    parsed: dict[str, list[str]] = {}
    for keyword, arguments in instructions():
        parsed.setdefault(keyword, []).append(arguments)
    return parsed


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


def test_dependencies_are_installed_before_the_code_is_copied(tmp_path: Path) -> None:
    steps = instructions()
    copy_code = steps.index(("COPY", ". ."))
    before, after = steps[:copy_code], steps[copy_code + 1 :]
    assert [arguments for keyword, arguments in before if keyword == "COPY"] == ["pyproject.toml ./"]
    installs = [arguments for keyword, arguments in before if keyword == "RUN" and "pip install" in arguments]
    assert len(installs) == 1
    later_installs = [arguments for keyword, arguments in after if keyword == "RUN" and "pip install" in arguments]
    assert all("--no-deps" in arguments for arguments in later_installs) and later_installs
    # The dependency step, run here on the project's pyproject.toml, installs every dependency.
    script = installs[0].split("> /tmp/requirements.txt")[0]
    (tmp_path / "pyproject.toml").write_bytes((ROOT / "pyproject.toml").read_bytes())
    listed = subprocess.run(
        ["sh", "-c", script.replace("python ", f"{shlex.quote(sys.executable)} ", 1)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    wanted = project["project"]["dependencies"] + project["project"]["optional-dependencies"]["postgres"]
    assert set(wanted) <= set(listed) and set(project["build-system"]["requires"]) <= set(listed)


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
    # One build, one image for both services.
    assert [name for name, service in services.items() if "build" in service] == ["rlconform"]
    assert backed["image"] == services["rlconform"]["image"] and backed["pull_policy"] == "never"
    # Settings from an env_file, for both.
    for service in (services["rlconform"], backed):
        assert service["env_file"] == [{"path": ".env", "required": False}]
    # The password is not spliced into the URL, where `@`, `:` or `/` would break it; the service escapes it.
    assert ":${" not in backed["environment"]["RLCONFORM_DATABASE_URL"]
    assert backed["environment"]["RLCONFORM_DATABASE_PASSWORD"] == "${RLCONFORM_POSTGRES_PASSWORD:-rlconform}"
    assert services["postgres"]["environment"]["POSTGRES_PASSWORD"] == "${RLCONFORM_POSTGRES_PASSWORD:-rlconform}"
    # Each dashboard answers the names it is reached by: the published port here, its service name inside.
    for name in ("rlconform", "rlconform-postgres"):
        hosts = services[name]["environment"]["RLCONFORM_ALLOWED_HOSTS"].removesuffix("}").split(":-", 1)[1]
        assert Settings(allowed_hosts=hosts).allowed_hosts == ["localhost", "127.0.0.1", "[::1]", name]


def test_secrets_stay_out_of_the_image_and_the_repository() -> None:
    ignored = (ROOT / ".dockerignore").read_text().splitlines()
    assert ".env" in ignored and "*.db" in ignored
    assert {".env", "*.db", "*.db-wal", "*.db-shm"} <= set((ROOT / ".gitignore").read_text().splitlines())

"""SQLite on a full filesystem (a 2 MB tmpfs): writes answer 503 `database full`, /healthz says so,
and a run whose results cannot be committed ends `interrupted` once space returns, without a restart."""

from __future__ import annotations

import errno
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import app.executor
from app.main import create_app
from tests.app.helpers import make_target, service_settings, wait_for_run


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MB tmpfs (needs root and mount); unmounted after."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True, check=False
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(directory: Path) -> Path:
    """Fill the filesystem of `directory` until it has no byte left; returns the filler file."""
    filler = directory / "filler"
    with filler.open("wb", buffering=0) as out:  # unbuffered: each write meets ENOSPC itself
        for size in (65536, 4096, 512, 1):
            for _ in range(4096):  # bounded: far more than the tmpfs holds
                try:
                    out.write(b"\0" * size)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
                    break
    return filler


def test_a_full_disk_answers_503_and_the_run_ends_interrupted_once_space_returns(
    small_disk: Path, fake_kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(app.executor, "FULL_RETRY_SECONDS", 0.1)
    settings = service_settings(f"sqlite:///{small_disk / 'rlconform.db'}")
    with TestClient(create_app(settings)) as client:
        assert client.get("/healthz").json()["database"] == "ok"
        make_target(client, "slow", fake_kind, "ws://127.0.0.1:9", options={"delay": 0.3})
        run_id = client.post("/api/v1/targets/slow/runs", json={}).json()["id"]
        wait_for_run(client, run_id, statuses=["running"])
        filler = fill(small_disk)

        answers = []
        for number in range(100):  # until the database's own free pages are used up too
            body = {"name": f"t{number}", "kind": fake_kind, "url": "ws://127.0.0.1:9", "description": "x" * 2000}
            answers.append(client.post("/api/v1/targets", json=body))
            if answers[-1].status_code != 201:
                break
        assert answers[-1].status_code == 503, answers[-1].text
        assert answers[-1].json()["detail"].startswith("database full: ")
        health = client.get("/healthz")
        assert health.status_code == 503 and health.json()["database"].startswith("database full: ")

        time.sleep(2.5)  # the run's phases end meanwhile; what it decided cannot be committed
        assert client.get(f"/api/v1/runs/{run_id}").json()["status"] == "running"
        os.unlink(filler)
        run = wait_for_run(client, run_id, timeout=15)
        assert run["status"] == "interrupted" and "database was full" in run["message"], run
        assert client.get("/healthz").status_code == 200

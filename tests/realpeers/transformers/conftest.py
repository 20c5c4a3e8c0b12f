"""`transformers serve` on a tiny model built here (tiny_model.py), bound to 127.0.0.1 on a free port, offline.

Shared by the suite's run against it and the tap's watch of the official `openai` client talking to it.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.app.helpers import free_port

PYTHON = os.environ.get("RLCONFORM_TRANSFORMERS_PYTHON")
NO_VENV = "no transformers venv: scripts/test builds one, or set RLCONFORM_TRANSFORMERS_PYTHON"
HERE = Path(__file__).resolve().parent
START_DEADLINE = 180.0


def offline_env(home: Path) -> dict[str, str]:
    (home / "hub").mkdir(parents=True, exist_ok=True)
    return {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_HOME": str(home),
        "HF_HUB_CACHE": str(home / "hub"),
    }


@pytest.fixture(scope="package")
def transformers_serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    assert PYTHON is not None
    root = tmp_path_factory.mktemp("transformers-serve")
    model, env = root / "tiny-llama", offline_env(root / "hf")
    subprocess.run([PYTHON, str(HERE / "tiny_model.py"), str(model)], env=env, check=True, timeout=300)
    port = free_port()
    command = [str(Path(PYTHON).parent / "transformers"), "serve", str(model), "--host", "127.0.0.1"]
    command += ["--port", str(port), "--device", "cpu", "--format", "quiet"]
    log = (root / "serve.log").open("w")
    process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + START_DEADLINE
        while True:
            assert process.poll() is None, (root / "serve.log").read_text()[-2000:]
            assert time.monotonic() < deadline, "transformers serve did not answer /health in time"
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        yield f"{url}/v1", str(model)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        log.close()

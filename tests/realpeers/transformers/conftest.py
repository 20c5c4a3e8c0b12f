"""`transformers serve` on a tiny model built here (tiny_model.py), bound to 127.0.0.1 on a free port, offline.

Shared by the suite's run against it and the tap's watch of the official `openai` client talking to it.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.app.helpers import free_port
from tests.realpeers.process import peer_process

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
    url = f"http://127.0.0.1:{port}"
    with peer_process(
        command, env, root / "serve.log", f"{url}/health", what="transformers serve", start_deadline=START_DEADLINE
    ):
        yield f"{url}/v1", str(model)

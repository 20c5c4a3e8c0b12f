"""The openai-chat suite against llama-cpp-python's OpenAI server (llama-cpp-python[server] 0.3.36) on a tiny GGUF.

The model is made here, with no download: tiny_gguf.py, run by the llama-cpp venv's python,
writes a two-layer randomly initialised Llama with a SentencePiece-style vocabulary and our own
chat template, all in one GGUF file. `python -m llama_cpp.server` serves it from its own venv
(`RLCONFORM_LLAMACPP_PYTHON`, built by scripts/test), bound to 127.0.0.1 on a free port, with an
API key, a context window of 1024 tokens and one thread. It is checked with `preset=llama-cpp`, the key and the
window; its verdicts are held to tests/realpeers/verdicts.py, and docs/real-peers.md says why each
non-pass is a true fault.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from checks.openai.suite import SUITE
from tests.realpeers.process import openai_peer
from tests.realpeers.verdicts import LLAMACPP_TINY, suite_differences

PYTHON = os.environ.get("RLCONFORM_LLAMACPP_PYTHON")
pytestmark = pytest.mark.skipif(
    not PYTHON, reason="no llama-cpp-python venv: scripts/test builds one, or set RLCONFORM_LLAMACPP_PYTHON"
)
TINY_GGUF = Path(__file__).resolve().parent / "tiny_gguf.py"
SERVED = "tiny-llama"
API_KEY = "sk-rlconform-llamacpp"
# Half the server's default n_ctx: a request without max_tokens (the invalid ones the errors phase
# sends) generates until the window is full, and the tool prompt (the tools listed) needs over 512.
CONTEXT = 1024
OPTIONS = {"preset": "llama-cpp", "model": SERVED, "api_key": API_KEY, "context_window": CONTEXT}
OPTIONS.update(timeout=60.0, concurrency=2, repeats=2, max_tokens_cap=16)
START_DEADLINE = 120.0


@pytest.fixture(scope="module")
def llamacpp_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    assert PYTHON is not None
    root = tmp_path_factory.mktemp("llamacpp")
    model = root / "tiny-llama.gguf"
    subprocess.run([PYTHON, str(TINY_GGUF), str(model)], check=True, timeout=120)
    command = [PYTHON, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", SERVED]
    command += ["--host", "127.0.0.1", "--api_key", API_KEY]
    command += ["--n_ctx", str(CONTEXT), "--seed", "0", "--n_threads", "1", "--n_threads_batch", "1"]
    # The server has no health route; its OpenAPI document answers once the model is loaded, without a key.
    with openai_peer(
        command,
        dict(os.environ),
        root / "serve.log",
        "/openapi.json",
        what="llama-cpp-python's server",
        start_deadline=START_DEADLINE,
    ) as url:
        yield url


async def test_llamacpp_server_gets_exactly_its_recorded_verdicts(llamacpp_server):
    assert await suite_differences(SUITE, llamacpp_server, OPTIONS, LLAMACPP_TINY) == {}

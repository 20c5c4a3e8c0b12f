"""The openai-chat suite against a real LiteLLM proxy (litellm[proxy] 1.74.0) serving a mock_response model.

The config is written here: one model whose `mock_response` answers every request with a fixed
text (no upstream is reached), and a master key, so auth is judged too. The proxy runs from its
own venv (`RLCONFORM_LITELLM_PYTHON`, built by scripts/test), bound to 127.0.0.1 on a free port,
with LiteLLM's local model cost map (no download at start). It is checked with `preset=litellm`
plus what a mock_response model offers (no logprobs, max_tokens or tool calls); its verdicts are
held to tests/realpeers/verdicts.py, and docs/real-peers.md says why each non-pass is a true fault.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from checks.openai.suite import SUITE
from tests.realpeers.process import openai_peer
from tests.realpeers.verdicts import LITELLM_MOCK, suite_differences

PYTHON = os.environ.get("RLCONFORM_LITELLM_PYTHON")
pytestmark = pytest.mark.skipif(
    not PYTHON, reason="no LiteLLM venv: scripts/test builds one, or set RLCONFORM_LITELLM_PYTHON"
)
MASTER_KEY = "sk-rlconform-litellm"
MODEL = "mock-chat"
# JSON is YAML: LiteLLM reads the file with a YAML loader.
CONFIG = {
    "model_list": [
        {
            "model_name": MODEL,
            "litellm_params": {"model": f"openai/{MODEL}", "api_key": "sk-unused", "mock_response": "A mocked reply."},
        }
    ],
    "general_settings": {"master_key": MASTER_KEY},
}
# What a mock_response model offers (litellm/main.py mock_completion): a fixed text for every request.
OPTIONS = {
    "preset": "litellm",
    "logprobs": "no",
    "max_tokens": "no",
    "tools": "no",
    "api_key": MASTER_KEY,
    "timeout": 30.0,
    "concurrency": 2,
    "repeats": 2,
}
START_DEADLINE = 180.0


@pytest.fixture(scope="module")
def litellm_proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    assert PYTHON is not None
    root = tmp_path_factory.mktemp("litellm")
    config = root / "config.yaml"
    config.write_text(json.dumps(CONFIG))
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_TELEMETRY": "False"}
    command = [str(Path(PYTHON).parent / "litellm"), "--config", str(config), "--host", "127.0.0.1"]
    with openai_peer(
        command, env, root / "proxy.log", "/health/liveliness", what="the LiteLLM proxy", start_deadline=START_DEADLINE
    ) as url:
        yield url


async def test_litellm_proxy_gets_exactly_its_recorded_verdicts(litellm_proxy):
    assert await suite_differences(SUITE, litellm_proxy, OPTIONS, LITELLM_MOCK) == {}

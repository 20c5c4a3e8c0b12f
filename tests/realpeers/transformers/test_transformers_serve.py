"""The openai-chat suite against a real `transformers serve` (transformers 5.23, CPU torch).

The model is built here, in a temporary directory, with no download: a two-layer
randomly-initialised Llama and a byte-level BPE tokenizer trained on a few lines
(tiny_model.py, run by the transformers venv). conftest.py forces the server onto that
path, bound to 127.0.0.1 on a free port, offline. Its verdicts are held to
tests/realpeers/verdicts.py; docs/real-peers.md says why each non-pass is a true fault.
"""

from __future__ import annotations

import pytest

from checks.core import run_suite
from checks.openai.suite import SUITE
from tests.realpeers.transformers.conftest import NO_VENV, PYTHON
from tests.realpeers.verdicts import TRANSFORMERS_SERVE, differences

pytestmark = pytest.mark.skipif(not PYTHON, reason=NO_VENV)
# What the target claims (see verdicts.py); small loads for two shared cores.
OPTIONS = {
    "timeout": 60.0,
    "logprobs": "no",
    "tools": "no",
    "parallel_tool_calls": "no",
    "concurrency": 2,
    "repeats": 2,
    "max_tokens_cap": 8,
}


async def test_transformers_serve_gets_exactly_its_recorded_verdicts(transformers_serve):
    url, model = transformers_serve
    # GET /v1/models lists only hub-cached models, never the forced path: the id is given.
    report = await run_suite(SUITE, url, {**OPTIONS, "model": model})
    clause_ids = {clause.id for clause in SUITE.catalogue}
    assert differences(report, TRANSFORMERS_SERVE, clause_ids) == {}

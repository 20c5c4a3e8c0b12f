"""The suite against its conforming peers: its own reference endpoint and a real llmock 0.2.2 server."""

from __future__ import annotations

import subprocess
import sys

import pytest

from checks.core import Verdict
from checks.openai.reference import ReferenceModel, make_app
from tests.checks.openai.helpers import check, serving, verdicts

llmock_testing = pytest.importorskip("llmock.testing")


async def test_reference_endpoint_passes_every_clause():
    with serving(make_app()) as url:
        report = await check(url, {"context_window": 4096})
    bad = verdicts(report, Verdict.FAIL, Verdict.WARN, Verdict.ERROR)
    assert bad == {} and report.outcome() == "pass"
    assert verdicts(report, Verdict.UNSUPPORTED).keys() == {"openai.auth.required"}


async def test_reference_endpoint_with_auth_checks_the_key():
    model = ReferenceModel()
    model.api_key = "sk-test"
    with serving(make_app(model)) as url:
        good = await check(url, {"api_key": "sk-test"}, phases=["errors"])
        wrong = await check(url, {"api_key": "sk-wrong"}, phases=["models"])
    assert good.results[("errors", "openai.auth.required")].verdict is Verdict.PASS
    assert wrong.outcome() == "fail"


@pytest.mark.parametrize("style", ["varied", "echo"])
async def test_llmock_passes_with_its_preset(style):
    from llmock.simulation import MockResponseSettings

    from checks.openai.suite import SUITE
    from tests.realpeers.verdicts import LLMOCK_ECHO, LLMOCK_VARIED, differences

    with llmock_testing.LLMockServer(responses=MockResponseSettings(response_style=style)) as server:
        report = await check(server.base_url("openai"), {"preset": "llmock"})
    assert verdicts(report, Verdict.FAIL, Verdict.ERROR) == {}
    assert report.outcome() == "pass"
    assert report.results[("logprobs", "openai.logprobs.content")].verdict is Verdict.UNSUPPORTED
    table = LLMOCK_ECHO if style == "echo" else LLMOCK_VARIED
    assert differences(report, table, {clause.id for clause in SUITE.catalogue}) == {}


async def test_llmock_fails_as_a_strict_openai_endpoint():
    with llmock_testing.LLMockServer() as server:
        report = await check(server.base_url("openai"), {"preset": "strict-openai"}, phases=["logprobs", "chat"])
    failed = verdicts(report, Verdict.FAIL)
    assert {"openai.logprobs.content", "openai.limits.max-tokens"} <= failed.keys()


def test_cli_exits_0_on_llmock_and_2_when_unreachable():
    with llmock_testing.LLMockServer() as server:
        ok = subprocess.run(
            [
                sys.executable,
                "-m",
                "app.cli",
                "check",
                "openai-chat",
                server.base_url("openai"),
                "--option",
                "preset=llmock",
                "--option",
                "concurrency=4",
                "--timeout",
                "15",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert ok.returncode == 0, ok.stdout[-2000:]
    gone = subprocess.run(
        [sys.executable, "-m", "app.cli", "check", "openai-chat", "http://127.0.0.1:9/v1", "--timeout", "2"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert gone.returncode == 2, gone.stdout[-2000:]


async def test_in_process_reference_server_is_the_demo_peer_and_passes():
    from checks.openai.reference import start_reference_server

    server = await start_reference_server()
    try:
        assert server.url.endswith("/v1")
        report = await check(server.url)
    finally:
        await server.close()
    assert report.outcome() == "pass", verdicts(report, Verdict.FAIL, Verdict.ERROR)


def test_reference_server_command_serves_the_endpoint():
    from tests.app.helpers import free_port

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "reference-server", "openai", "--port", str(port)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        assert f"127.0.0.1:{port}/v1" in server.stdout.readline()
        checked = subprocess.run(
            [sys.executable, "-m", "app.cli", "check", "openai-chat", f"http://127.0.0.1:{port}/v1", "--phase", "chat"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert checked.returncode == 0, checked.stdout[-2000:]
    finally:
        server.terminate()
        server.wait(timeout=10)


class SometimesEchoes(ReferenceModel):
    """Canned replies in turn, every other one repeating the prompt: it echoes by chance, not by rule."""

    def __init__(self) -> None:
        self.turn = 0

    def complete(self, body):
        completion = super().complete(body)
        self.turn += 1
        if completion.text is not None and self.turn % 2 == 0:
            completion.text = "A canned reply."
            completion.tokens = ["A", "canned", "reply."]
        return completion


async def test_a_target_that_echoes_only_by_chance_is_not_held_to_echoing():
    with serving(make_app(SometimesEchoes())) as url:
        report = await check(url, {"preset": "llmock"}, phases=["chat", "concurrency"])
    assert verdicts(report, Verdict.FAIL, Verdict.WARN, Verdict.ERROR) == {}

"""The reference server passes the plugrl-server suite; silent, refused and CLI cases behave."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from app.cli import main as cli_main
from checks.core import Outcome, Verdict
from checks.plugrl.suite import SUITE

from .conftest import free_port

DEFAULT_PHASES = [p.name for p in SUITE.phases if p.default]
REUSE_CLAUSES = [
    "plugrl.10.1.reuse-answered",
    "plugrl.10.1.reuse-all-rows",
    "plugrl.10.1.reuse-connection-scoped",
    "plugrl.10.1.reuse-unknown-env",
    "plugrl.10.1.reuse-after-terminal",
    "plugrl.10.1.reuse-malformed",
    "plugrl.10.1.reuse-integer-mask",
    "plugrl.10.1.reuse-rows",
]


def verdicts(report) -> dict[str, set[Verdict]]:
    seen: dict[str, set[Verdict]] = {}
    for result in report.results.values():
        seen.setdefault(result.clause_id, set()).add(result.verdict)
    return seen


def assert_no_fail(report) -> None:
    bad = [r.to_dict() for r in report.results.values() if r.verdict in (Verdict.FAIL, Verdict.ERROR, Verdict.WARN)]
    assert bad == []
    assert report.outcome() is Outcome.PASS


async def test_reference_server_passes_every_default_phase(reference, run_check):
    report = await run_check(reference.url)
    assert_no_fail(report)
    seen = verdicts(report)
    # A server listing reuse-feedback-obs cannot be asked about a reuse it does not offer;
    # how it takes an integer mask is recorded, not judged.
    recorded = {"plugrl.10.1.reuse-unoffered", "plugrl.10.1.reuse-integer-mask"}
    own = {c for phase in SUITE.phases if phase.default for c in phase.clauses} - recorded
    # Every clause of the default phases was exercised and passed, the row-by-row
    # content check included: the reference policy is deterministic.
    assert {clause for clause in own if seen.get(clause) != {Verdict.PASS}} == set()
    assert seen["plugrl.7.1.stop-close"] == {Verdict.SKIP}
    assert seen["plugrl.10.1.reuse-unoffered"] == {Verdict.UNSUPPORTED}
    assert seen["plugrl.10.1.reuse-integer-mask"] == {Verdict.INFO}


async def test_reference_server_ends_the_run_with_a_stop_close(reference_factory, run_check):
    server = await reference_factory(stop_after=200)
    report = await run_check(server.url, include_optional=True)
    assert_no_fail(report)
    assert report.results[("stop", "plugrl.7.1.stop-close")].verdict is Verdict.PASS
    assert server.stopped.is_set()
    assert server.feedback_rows >= 200


async def test_batching_reference_passes_without_hanging(reference_factory, run_check):
    server = await reference_factory(batching=True, stop_after=150, policy_delay=0.01)
    report = await asyncio.wait_for(run_check(server.url, include_optional=True), timeout=60)
    assert_no_fail(report)
    assert report.results[("stop", "plugrl.7.1.stop-close")].verdict is Verdict.PASS


async def test_without_features_reuse_is_unsupported_not_failed(reference_factory, run_check):
    server = await reference_factory(features=())
    report = await run_check(server.url)
    assert_no_fail(report)
    for clause in ["plugrl.10.1.reuse-offered", *REUSE_CLAUSES]:
        assert report.results[("reuse", clause)].verdict is Verdict.UNSUPPORTED
    assert report.results[("reuse", "plugrl.10.1.reuse-unoffered")].verdict is Verdict.PASS  # it refused the reuse


async def test_reference_with_other_shapes_passes(reference_factory, run_check):
    server = await reference_factory(horizon=1, action_dim=7)
    report = await run_check(server.url, phases=["exchange", "scoping"])
    assert_no_fail(report)


async def test_a_server_that_never_speaks_fails_5_1_within_the_timeout(ws_server_factory, run_check):
    async def silent(ws):
        await ws.wait_closed()

    url = await ws_server_factory(silent)
    timeout = 0.5
    phases = len(DEFAULT_PHASES)
    # Each phase stops at its first missed deadline: at most the timeout plus a second each.
    report = await asyncio.wait_for(run_check(url, timeout=timeout), timeout=phases * (timeout + 1))
    assert report.outcome() is Outcome.FAIL
    # The first phase and the one confirming the shared cause judge it; the rest are not run for that cause.
    for phase in DEFAULT_PHASES[:2]:
        result = report.results[(phase, "plugrl.5.1.speaks-first")]
        assert result.verdict is Verdict.FAIL
        assert result.duration <= timeout + 1
        assert "nothing arrived" in result.actual
    for phase in DEFAULT_PHASES[2:]:
        result = report.results.get((phase, "plugrl.5.1.speaks-first"))
        assert result is None or result.verdict is Verdict.ERROR, result
        clauses = [r for (name, _), r in report.results.items() if name == phase]
        assert clauses and all("the same cause as phase exchange" in r.actual for r in clauses)


async def test_a_refused_connection_is_an_error_not_a_failure(run_check):
    report = await run_check(f"ws://127.0.0.1:{free_port()}")
    assert report.outcome() is Outcome.ERROR
    assert not [r for r in report.results.values() if r.verdict is Verdict.FAIL]
    assert all(r.verdict in (Verdict.ERROR, Verdict.SKIP) for r in report.results.values())


def test_cli_exits_2_on_a_refused_port(capsys):
    code = cli_main(["check", "plugrl-server", f"ws://127.0.0.1:{free_port()}", "--timeout", "2", "--quiet"])
    assert code == 2
    assert "outcome: error" in capsys.readouterr().out


async def test_the_api_key_is_sent_in_the_handshake_and_redacted(ws_server_factory, run_check):
    seen: list[str | None] = []

    async def record(ws):
        seen.append(ws.request.headers.get("Authorization"))
        await ws.close()

    url = await ws_server_factory(record)
    report = await run_check(url, phases=["scoping"], api_key="s3cret")
    assert seen and set(seen) == {"Api-Key s3cret"}
    assert report.outcome() is Outcome.FAIL
    options = SUITE.parse_options({"api_key": "s3cret"})
    assert "s3cret" not in repr(options) and "s3cret" not in str(options.model_dump())


def test_options_are_validated():
    with pytest.raises(ValueError):
        SUITE.parse_options({"patience": 61})
    with pytest.raises(ValueError):
        SUITE.parse_options({"no_such_option": 1})
    assert SUITE.parse_options({}).patience == 5.0


RLCONFORM = [sys.executable, "-m", "app.cli"]
CLI_ENV = {**os.environ, "PYTHONUNBUFFERED": "1"}


@contextlib.contextmanager
def reference_server_process(*flags: str) -> Iterator[str]:
    """`rlconform reference-server plugrl` as a subprocess on a free port; yields its URL."""
    port = free_port()
    server = subprocess.Popen(
        [*RLCONFORM, "reference-server", "plugrl", "--port", str(port), *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=CLI_ENV,
    )
    try:
        assert server.stdout is not None
        assert "listening" in server.stdout.readline()
        yield f"ws://127.0.0.1:{port}"
        if "--stop-after" in flags:
            assert server.wait(timeout=10) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(timeout=10)
        if server.stdout is not None:
            server.stdout.close()


def rlconform_check(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    check = subprocess.run(
        [*RLCONFORM, "check", "plugrl-server", *args], capture_output=True, text=True, timeout=timeout, env=CLI_ENV
    )
    assert check.returncode == 0, check.stdout[-3000:] + check.stderr[-2000:]
    return check


def test_cli_until_stop_exits_0_against_the_reference_server_subprocess(tmp_path):
    with reference_server_process("--stop-after", "200") as url:
        check = rlconform_check(
            url,
            "--until-stop",
            "--timeout",
            "5",
            "--option",
            "patience=0.3",
            "--json",
            str(tmp_path / "report.json"),
            timeout=120,
        )
        assert "plugrl.7.1.stop-close" in check.stdout


def reference_cli_refuses(flag: str, value: str) -> None:
    """`rlconform reference-server plugrl FLAG VALUE` exits 2 naming the flag."""
    result = subprocess.run(
        [*RLCONFORM, "reference-server", "plugrl", flag, value], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2 and flag in result.stderr


def test_reference_cli_rejects_bad_flags():
    reference_cli_refuses("--horizon", "0")


# ---------------------------------------------------------------- the feedback timeout (SPEC 7.3)

FEEDBACK_TIMEOUT_CLAUSES = (
    "plugrl.7.3.feedback-wait",
    "plugrl.7.3.feedback-timeout-close",
    "plugrl.7.3.feedback-timeout-enforced",
)


async def test_reference_server_passes_the_feedback_timeout_phase(reference_factory, run_check):
    server = await reference_factory(feedback_timeout=1.0)
    report = await run_check(server.url, phases=["feedback-timeout"], feedback_timeout=1.0)
    assert_no_fail(report)
    for clause in FEEDBACK_TIMEOUT_CLAUSES:
        assert report.results[("feedback-timeout", clause)].verdict is Verdict.PASS, clause
    assert "1001" in report.results[("feedback-timeout", "plugrl.7.3.feedback-timeout-close")].actual


async def test_a_reference_server_waiting_longer_than_declared_is_warned_not_failed(reference_factory, run_check):
    server = await reference_factory(feedback_timeout=30.0)
    report = await run_check(server.url, phases=["feedback-timeout"], feedback_timeout=0.5, timeout=1.0)
    seen = {clause: report.results[("feedback-timeout", clause)].verdict for clause in FEEDBACK_TIMEOUT_CLAUSES}
    assert seen == {
        "plugrl.7.3.feedback-wait": Verdict.PASS,
        "plugrl.7.3.feedback-timeout-enforced": Verdict.WARN,
        "plugrl.7.3.feedback-timeout-close": Verdict.UNSUPPORTED,
    }
    assert report.outcome() is Outcome.PASS


def test_the_feedback_timeout_phase_runs_only_when_named():
    assert "feedback-timeout" not in [p.name for p in SUITE.select()]
    # --until-stop / include_optional adds the run-ending stop, not a minute-long wait.
    optional = [p.name for p in SUITE.select(include_optional=True)]
    assert "stop" in optional and "feedback-timeout" not in optional
    assert [p.name for p in SUITE.select(["feedback-timeout"])] == ["feedback-timeout"]


async def test_by_default_the_feedback_timeout_clauses_are_skipped(reference, run_check):
    report = await run_check(reference.url, phases=["scoping"], include_optional=True)
    for clause in FEEDBACK_TIMEOUT_CLAUSES:
        assert report.results[("feedback-timeout", clause)].verdict is Verdict.SKIP


def test_the_waiting_phases_get_their_waits_on_top_of_their_deadlines():
    assert SUITE.parse_options({}).feedback_timeout == 60.0
    for bad in ({"feedback_timeout": 0}, {"feedback_timeout": -1}, {"feedback_timeout": 3601}):
        with pytest.raises(ValueError):
            SUITE.parse_options(bad)
    # A short step timeout never forbids a long wait: the deadline grows with the wait.
    options = SUITE.parse_options({"feedback_timeout": 60, "patience": 30, "timeout": 0.1})
    feedback_phase, patience_phase = SUITE.phase("feedback-timeout"), SUITE.phase("patience")
    assert feedback_phase.deadline(options) >= options.feedback_timeout + 2 * options.timeout + 1
    assert patience_phase.deadline(options) >= options.patience + 2 * options.timeout + 1
    assert feedback_phase.deadline(options) < options.feedback_timeout + 10 * options.timeout + 2


def test_cli_checks_the_feedback_timeout_of_a_reference_server_subprocess():
    with reference_server_process("--feedback-timeout", "2") as url:
        check = rlconform_check(
            url, "--phase", "feedback-timeout", "--option", "feedback_timeout=2", "--timeout", "2", timeout=60
        )
    lines = check.stdout.splitlines()
    for clause in FEEDBACK_TIMEOUT_CLAUSES:
        assert any(line.split()[:2] == ["ok", clause] for line in lines), check.stdout


def test_reference_cli_rejects_a_bad_feedback_timeout():
    reference_cli_refuses("--feedback-timeout", "0")

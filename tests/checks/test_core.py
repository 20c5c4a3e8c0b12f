"""The engine on a toy suite: verdicts by level, worsening only, sinks, deadlines, unreachable targets."""

from __future__ import annotations

import asyncio
import socket

import pydantic
import pytest

from checks.core import (
    Catalogue,
    Gate,
    Outcome,
    Phase,
    PhaseContext,
    PhaseStopped,
    Report,
    Suite,
    SuiteOptions,
    TargetUnreachable,
    Verdict,
    outcome_of,
    roll_up,
    rolled_verdicts,
    root_causes,
    run_suite,
    summarize,
    truncate,
    verdict_counts,
    worst,
)

catalogue = Catalogue()
catalogue.must("toy.1.answers", "The toy answers.")
catalogue.should("toy.1.quick", "The toy answers quickly.")
catalogue.info("toy.1.latency", "How long the toy took.")
catalogue.must("toy.2.hangs", "A phase that never ends is cut at its deadline.")
catalogue.must("toy.3.opt", "An opt-in phase.")
catalogue.must("toy.4.first", "The first stateful phase.")
catalogue.must("toy.4.after-stop", "Decided only if the first phase goes on.")
catalogue.must("toy.4.second", "The second phase sees what the first one learned.")


class ToyOptions(SuiteOptions):
    answer: bool = True
    hang: bool = False
    unreachable: bool = False


async def phase_answer(ctx: PhaseContext) -> None:
    if ctx.options.unreachable:
        raise TargetUnreachable("connection refused")
    transcript = ctx.report.transcript("toy connection")
    transcript.sent("binary", 3, "hello")
    ctx.report.check(True, "toy.1.answers", expected="an answer", actual="an answer", evidence=transcript)
    ctx.report.check(ctx.options.answer, "toy.1.answers", expected="an answer", actual="silence", evidence=transcript)
    ctx.report.check(False, "toy.1.quick", expected="under 1 ms", actual="3 ms")
    ctx.report.info("toy.1.latency", actual="3 ms")


async def phase_hang(ctx: PhaseContext) -> None:
    if ctx.options.hang:
        await asyncio.sleep(3600)
    ctx.report.passed("toy.2.hangs")


async def phase_opt(ctx: PhaseContext) -> None:
    ctx.report.passed("toy.3.opt")


class ToyState:
    def __init__(self) -> None:
        self.phases_seen: list[str] = []


async def phase_first(ctx: PhaseContext[SuiteOptions, ToyState]) -> None:
    ctx.state.phases_seen.append("first")
    transcript = ctx.report.transcript("the connection that stopped")
    ctx.report.failed("toy.4.first", expected="an answer", actual="the connection closed", evidence=transcript)
    raise PhaseStopped("the connection closed", transcript)


async def phase_second(ctx: PhaseContext[SuiteOptions, ToyState]) -> None:
    ctx.state.phases_seen.append("second")
    ctx.report.check(
        ctx.state.phases_seen == ["first", "second"],
        "toy.4.second",
        expected="state kept",
        actual=str(ctx.state.phases_seen),
    )


TOY = Suite(
    kind="toy",
    title="Toy",
    url_schemes=("ws",),
    options_model=ToyOptions,
    phases=(
        Phase("answer", phase_answer, ("toy.1.answers", "toy.1.quick", "toy.1.latency")),
        Phase("hang", phase_hang, ("toy.2.hangs",), budget=1.0),
        Phase("opt", phase_opt, ("toy.3.opt",), default=False),
    ),
    catalogue=catalogue,
)


class ListSink:
    def __init__(self) -> None:
        self.events: list[tuple[str, object]] = []

    def result(self, result) -> None:
        self.events.append(("result", (result.phase, result.clause_id, result.verdict)))

    def transcript(self, transcript) -> None:
        self.events.append(("transcript", transcript.id))

    def phase(self, name: str, state: str) -> None:
        self.events.append(("phase", (name, state)))


def verdicts(report: Report) -> dict[str, Verdict]:
    return {clause_id: verdict for clause_id, verdict in report.verdicts()}


async def test_levels_decide_the_verdict_and_a_later_fail_replaces_a_pass():
    report = await run_suite(TOY, "ws://127.0.0.1:1", {"answer": False})
    got = verdicts(report)
    assert got["toy.1.answers"] is Verdict.FAIL
    assert got["toy.1.quick"] is Verdict.WARN
    assert got["toy.1.latency"] is Verdict.INFO
    assert got["toy.3.opt"] is Verdict.SKIP
    result = report.results[("answer", "toy.1.answers")]
    assert result.checks == 2 and result.actual == "silence" and result.transcript_ids == [1]
    assert report.outcome() is Outcome.FAIL


async def test_conforming_toy_passes_and_strict_gate_fails_on_warn():
    report = await run_suite(TOY, "ws://127.0.0.1:1", {})
    assert verdicts(report)["toy.1.answers"] is Verdict.PASS
    assert report.outcome() is Outcome.PASS
    assert report.outcome(Gate.STRICT) is Outcome.FAIL
    assert report.outcome(Gate.STRICT, expected_failures=["toy.1.quick"]) is Outcome.PASS


async def test_sink_sees_each_result_when_decided_and_again_at_phase_end():
    sink = ListSink()
    await run_suite(TOY, "ws://127.0.0.1:1", {"answer": False}, sink=sink)
    results = [payload for kind, payload in sink.events if kind == "result"]
    # pass first, then the worse fail at once, then the phase-end flush
    assert results[0] == ("answer", "toy.1.answers", Verdict.PASS)
    assert results[1] == ("answer", "toy.1.answers", Verdict.FAIL)
    assert ("phase", ("answer", "running")) in sink.events
    assert sink.events.index(("phase", ("answer", "running"))) < sink.events.index(("transcript", 1))


async def test_a_phase_that_overruns_its_deadline_errors_only_its_undecided_clauses():
    report = await run_suite(TOY, "ws://127.0.0.1:1", {"hang": True, "timeout": 0.2})
    got = verdicts(report)
    assert got["toy.2.hangs"] is Verdict.ERROR
    assert "deadline" in report.results[("hang", "toy.2.hangs")].actual
    assert got["toy.1.answers"] is Verdict.PASS
    assert report.outcome() is Outcome.ERROR


async def test_unreachable_target_errors_the_rest_of_the_run():
    report = await run_suite(TOY, "ws://127.0.0.1:1", {"unreachable": True})
    assert set(verdicts(report).values()) == {Verdict.ERROR, Verdict.SKIP}
    assert "not run" in report.results[("hang", "toy.2.hangs")].actual
    assert report.outcome() is Outcome.ERROR


async def test_selecting_phases_skips_the_others_and_rejects_unknown_names():
    report = await run_suite(TOY, "ws://127.0.0.1:1", {}, phases=["opt"])
    got = verdicts(report)
    assert got["toy.3.opt"] is Verdict.PASS and got["toy.1.answers"] is Verdict.SKIP
    with pytest.raises(ValueError, match="unknown phase nope"):
        await run_suite(TOY, "ws://127.0.0.1:1", {}, phases=["nope"])


def test_options_are_validated_by_the_suite_model():
    with pytest.raises(pydantic.ValidationError):
        TOY.parse_options({"nonsense": 1})
    with pytest.raises(pydantic.ValidationError):
        TOY.parse_options({"timeout": -1})


@pytest.mark.parametrize(
    ("url", "ok"),
    [("ws://127.0.0.1:8000", True), ("http://127.0.0.1:8000", False), ("ws://:80", False), ("127.0.0.1:80", False)],
)
def test_url_scheme_is_checked_against_the_kind(url, ok):
    if ok:
        assert TOY.validate_url(url) == url
    else:
        with pytest.raises(ValueError):
            TOY.validate_url(url)


def test_host_port_urls_for_kinds_without_a_scheme():
    bare = Suite("bare", "Bare", (), ToyOptions, (), catalogue)
    assert bare.validate_url("127.0.0.1:50051") == "127.0.0.1:50051"
    assert bare.host_port("127.0.0.1:50051") == ("127.0.0.1", 50051)
    for bad in ("grpc://127.0.0.1:1", "127.0.0.1", "127.0.0.1:99999"):
        with pytest.raises(ValueError):
            bare.validate_url(bad)


def test_outcome_ranks_a_conformance_failure_above_a_harness_error():
    assert outcome_of([("a", Verdict.ERROR), ("b", Verdict.FAIL)]) is Outcome.FAIL
    assert outcome_of([("a", Verdict.ERROR), ("b", Verdict.PASS)]) is Outcome.ERROR
    assert outcome_of([("a", Verdict.FAIL)], expected_failures=["a"]) is Outcome.PASS
    assert worst([Verdict.PASS, Verdict.ERROR, Verdict.FAIL]) is Verdict.ERROR


def test_summaries_and_truncation_stay_bounded_on_hostile_values():
    import numpy as np

    huge = {f"k{i}": "x" * 10_000 for i in range(1000)}
    text = summarize({"nested": [[[[[[[[huge]]]]]]]], "array": np.zeros((3, 4), np.float32)}, limit=300)
    assert len(text) <= 300
    assert truncate("y" * 5000, 10).startswith("yyyyyyyyyy…") and "5000 chars" in truncate("y" * 5000, 10)
    assert "ndarray <f4 [2, 2]" in summarize(np.zeros((2, 2), "<f4"))


async def test_wire_client_reports_a_refused_port_as_unreachable():
    from checks.wire import open_websocket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    report = Report(catalogue)
    with pytest.raises(TargetUnreachable):
        await open_websocket(f"ws://127.0.0.1:{port}", report.transcript("refused"), timeout=2)


async def test_wire_client_goes_through_the_environments_proxy_as_the_library_would(monkeypatch):
    from checks import wire

    asked: list[bytes] = []

    async def proxy(reader, writer):  # an HTTP proxy that refuses every CONNECT
        asked.append(await reader.readuntil(b"\r\n\r\n"))
        writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(proxy, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    target = "ws://192.0.2.1:9/"  # TEST-NET-1: reached only through the proxy
    try:
        for name in ("no_proxy", "NO_PROXY"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{port}")
        wire._proxy_for.cache_clear()
        with pytest.raises(Exception, match="403"):
            await wire.open_websocket(target, Report(catalogue).transcript("proxied"), timeout=2)
        assert asked and asked[0].startswith(b"CONNECT 192.0.2.1:9 ")
        monkeypatch.setenv("no_proxy", "192.0.2.1")
        wire._proxy_for.cache_clear()
        assert wire._proxy_for(target) is None  # bypassed as the library's own lookup would
    finally:
        wire._proxy_for.cache_clear()
        server.close()


async def test_wire_client_records_a_handshake_redirect_instead_of_following_it():
    from checks.errors import Refused
    from checks.wire import open_websocket

    followed: list[bytes] = []

    async def elsewhere(reader, writer):
        followed.append(await reader.read(100))
        writer.close()

    async def redirect(reader, writer):
        await reader.readuntil(b"\r\n\r\n")
        port = target_of_redirect.sockets[0].getsockname()[1]
        writer.write(f"HTTP/1.1 302 Found\r\nLocation: ws://127.0.0.1:{port}/\r\nContent-Length: 0\r\n\r\n".encode())
        await writer.drain()
        writer.close()

    target_of_redirect = await asyncio.start_server(elsewhere, "127.0.0.1", 0)
    redirector = await asyncio.start_server(redirect, "127.0.0.1", 0)
    try:
        port = redirector.sockets[0].getsockname()[1]
        report = Report(catalogue)
        transcript = report.transcript("redirected")
        with pytest.raises(Refused, match="302"):
            await open_websocket(f"ws://127.0.0.1:{port}", transcript, timeout=2)
        assert followed == []
        assert any("302" in frame.summary for frame in transcript.frames)
    finally:
        redirector.close()
        target_of_redirect.close()


STATEFUL = Suite(
    kind="stateful",
    title="Stateful toy",
    url_schemes=("ws",),
    options_model=SuiteOptions,
    phases=(
        Phase("first-phase", phase_first, ("toy.4.first", "toy.4.after-stop")),
        Phase("second-phase", phase_second, ("toy.4.second",)),
    ),
    catalogue=catalogue,
    new_state=ToyState,
)


async def test_phase_stopped_errors_the_undecided_clauses_with_its_reason_and_evidence():
    report = await run_suite(STATEFUL, "ws://127.0.0.1:1")
    first = report.results[("first-phase", "toy.4.first")]
    stopped = report.results[("first-phase", "toy.4.after-stop")]
    assert first.verdict is Verdict.FAIL
    assert stopped.verdict is Verdict.ERROR
    assert stopped.actual == "not exercised: the connection closed"
    assert stopped.transcript_ids == first.transcript_ids == [1]
    # a stopped phase does not stop the run, and the state outlives the phase
    assert report.results[("second-phase", "toy.4.second")].verdict is Verdict.PASS


async def test_each_run_gets_its_own_state():
    for _ in range(2):
        report = await run_suite(STATEFUL, "ws://127.0.0.1:1")
        assert report.results[("second-phase", "toy.4.second")].verdict is Verdict.PASS


def test_phase_names_accept_underscores_for_hyphens():
    assert [p.name for p in STATEFUL.select(["second_phase"])] == ["second-phase"]
    with pytest.raises(ValueError, match="unknown phase"):
        STATEFUL.select(["third_phase"])


def test_gate_failing_verdicts():
    assert Gate.DEFAULT.failing() == {Verdict.FAIL}
    assert Gate.STRICT.failing() == {Verdict.FAIL, Verdict.WARN}


def _rolled(*triples: tuple[str, str, str]) -> list:
    return roll_up(triples, lambda t: (t[1], t[2]))


def test_roll_up_keeps_the_worst_judged_verdict_and_every_phase():
    rolled = _rolled(("a", "x", "pass"), ("b", "x", "warn"), ("c", "x", "error"), ("a", "y", "skip"))
    x, y = rolled
    assert (x.clause_id, x.verdict, x.decisive) == ("x", Verdict.WARN, ("b", "x", "warn"))
    assert [r[0] for r in x.results] == ["a", "b", "c"]  # every phase, for the expandable row
    assert y.verdict is Verdict.SKIP
    assert _rolled(("a", "x", "pass"), ("b", "x", "fail"))[0].verdict is Verdict.FAIL


@pytest.mark.parametrize(
    ("verdicts", "rolled"),
    [
        (["error", "skip"], "error"),  # no phase decided it and one could not exercise it
        (["error", "pass"], "pass"),  # one phase decided it
        (["info", "unsupported", "skip"], "info"),
        (["unsupported", "skip"], "unsupported"),
        (["skip", "skip"], "skip"),
    ],
)
def test_a_clause_no_phase_judged_is_error_only_if_a_phase_could_not_exercise_it(verdicts, rolled):
    entry = _rolled(*[(f"p{i}", "x", v) for i, v in enumerate(verdicts)])[0]
    assert entry.verdict == rolled


def test_the_outcome_comes_from_rolled_up_verdicts():
    # A connection clause a later phase could not exercise does not make a passing run an error.
    rolled = _rolled(("a", "x", "pass"), ("b", "x", "error"), ("a", "y", "pass"))
    assert outcome_of(rolled_verdicts(rolled)) is Outcome.PASS
    assert verdict_counts(rolled)["pass"] == 2 and sum(verdict_counts(rolled).values()) == 2


def test_root_causes_group_undecided_clauses_under_the_event_biggest_first():
    rolled = _rolled(
        ("exchange", "a", "fail"),
        ("exchange", "b", "error", "not exercised: the server closed 1011"),
        ("exchange", "c", "error", "not exercised: the server closed 1011"),
        ("errors", "d", "error", "target unreachable: refused"),
        ("stop", "e", "error", "not run: target unreachable: refused"),
        ("stop", "f", "error", "not run: target unreachable: refused"),
        ("stop", "b", "skip", "phase not selected"),
    )
    causes = root_causes(rolled, lambda r: (r[0], r[3]))
    assert [(c.reason, c.phase, c.clause_ids) for c in causes] == [
        ("target unreachable: refused", "errors", ["d", "e", "f"]),
        ("the server closed 1011", "exchange", ["b", "c"]),
    ]


async def test_a_phase_that_returns_without_deciding_a_declared_clause_leaves_nothing_pending():
    report = await run_suite(TOY, "ws://127.0.0.1:1", phases=["hang"], options={"hang": False})
    assert report.results[("hang", "toy.2.hangs")].verdict is Verdict.PASS
    quiet = Suite(
        kind="toy",
        title="Toy",
        url_schemes=("ws",),
        options_model=SuiteOptions,
        phases=(Phase("answer", phase_opt, ("toy.3.opt", "toy.1.answers")),),
        catalogue=catalogue,
    )
    report = await run_suite(quiet, "ws://127.0.0.1:1")
    left = report.results[("answer", "toy.1.answers")]
    assert left.verdict is Verdict.INFO and left.actual == "not judged: answer did not reach it"


async def _fails_then_returns(ctx: PhaseContext) -> None:
    ctx.report.failed("toy.4.first", expected="an answer", actual="silence")


async def test_what_a_phase_leaves_after_a_failure_is_not_judged_rather_than_undecided():
    suite = Suite(
        kind="toy",
        title="Toy",
        url_schemes=("ws",),
        options_model=SuiteOptions,
        phases=(Phase("first", _fails_then_returns, ("toy.4.first", "toy.4.after-stop")),),
        catalogue=catalogue,
    )
    report = await run_suite(suite, "ws://127.0.0.1:1")
    left = report.results[("first", "toy.4.after-stop")]
    assert left.verdict is Verdict.INFO and left.actual == "not judged: toy.4.first failed earlier in this phase"


# ---------------------------------------------------------------- teardown


class HeldConnection:
    """Per-run state holding a connection its phases share, as rllink's does."""

    def __init__(self) -> None:
        self.transcript = None
        self.closed_with: list[object] = []
        self.close_started = asyncio.Event()


async def phase_open_shared(ctx: PhaseContext[SuiteOptions, HeldConnection]) -> None:
    ctx.state.transcript = ctx.report.transcript("shared connection")
    ctx.state.transcript.sent("binary", 3, "hello")
    ctx.report.passed("toy.4.first")
    if ctx.options.timeout > 50:  # the cancellation test: hold the run open until cancelled
        await asyncio.sleep(3600)


def teardown_suite(close_state) -> Suite:
    return Suite(
        kind="toy",
        title="Toy",
        url_schemes=("ws",),
        options_model=SuiteOptions,
        phases=(Phase("open", phase_open_shared, ("toy.4.first",), budget=100.0),),
        catalogue=catalogue,
        new_state=HeldConnection,
        close_state=close_state,
    )


async def close_held(state: HeldConnection) -> None:
    state.close_started.set()
    state.closed_with.append(state)
    if state.transcript is not None:
        state.transcript.closed(1000, "run over", "checker")


async def test_close_state_is_awaited_at_the_end_of_a_run_and_the_close_reaches_the_sink():
    sink = ListSink()
    report = await run_suite(teardown_suite(close_held), "ws://127.0.0.1:1", sink=sink)
    transcript = report.transcripts[1]
    assert transcript.closed_by == "checker" and transcript.close_code == 1000
    assert sink.events[-1] == ("transcript", 1)  # sent again after the phase ended, with the close
    assert verdicts(report) == {"toy.4.first": Verdict.PASS}


async def test_close_state_is_awaited_when_the_run_is_cancelled():
    states: list[HeldConnection] = []

    async def close(state: HeldConnection) -> None:
        states.append(state)
        await close_held(state)

    run = asyncio.ensure_future(run_suite(teardown_suite(close), "ws://127.0.0.1:1", {"timeout": 60}))
    await asyncio.sleep(0.05)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert len(states) == 1 and states[0].transcript is not None and states[0].transcript.closed_by == "checker"


async def test_close_state_is_awaited_when_the_run_fails_outside_a_phase():
    closed: list[HeldConnection] = []

    class BrokenSink(ListSink):
        def phase(self, name: str, state: str) -> None:
            if state == "done":
                raise RuntimeError("the sink broke")

    async def close(state: HeldConnection) -> None:
        closed.append(state)

    with pytest.raises(RuntimeError, match="the sink broke"):
        await run_suite(teardown_suite(close), "ws://127.0.0.1:1", sink=BrokenSink())
    assert len(closed) == 1


async def test_a_close_that_hangs_or_raises_is_bounded_and_keeps_the_report(monkeypatch):
    import checks.suite

    monkeypatch.setattr(checks.suite, "TEARDOWN_DEADLINE", 0.1)

    async def hang(state: HeldConnection) -> None:
        await asyncio.sleep(3600)

    async def fail(state: HeldConnection) -> None:
        raise OSError("already gone")

    for close in (hang, fail):
        report = await asyncio.wait_for(run_suite(teardown_suite(close), "ws://127.0.0.1:1"), timeout=5)
        assert verdicts(report) == {"toy.4.first": Verdict.PASS}


def test_a_run_that_does_not_listen_has_no_listener():
    ctx = PhaseContext("ws://127.0.0.1:1", SuiteOptions(), Report(catalogue), None)
    with pytest.raises(RuntimeError, match="does not listen"):
        ctx.listener  # noqa: B018


def test_a_function_for_actual_runs_only_when_a_result_is_built() -> None:
    report = Report(catalogue)
    report.begin_phase("p")
    made: list[str] = []

    def shown(text: str):
        return lambda: made.append(text) or text

    report.check(True, "toy.1.answers", expected="yes", actual=shown("first pass"))
    report.check(True, "toy.1.answers", expected="yes", actual=shown("second pass"))  # no worse: nothing built
    report.check(False, "toy.1.answers", expected="yes", actual=shown("the failure"))
    result = report.results[("p", "toy.1.answers")]
    assert made == ["first pass", "the failure"]
    assert (result.verdict, result.actual, result.checks) == (Verdict.FAIL, "the failure", 3)
